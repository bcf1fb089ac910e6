/**
 * Keeps hot-path writes off the request: items are collected (coalesced by key) and written
 * in batches every interval, when the batch is full, and on shutdown (flush()).
 */
export class FlushBuffer<T> {
  private items = new Map<string, T>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    private readonly opts: { intervalMs: number; maxItems: number; onError: (err: unknown, items: T[]) => void },
  ) {}

  add(key: string, item: T) {
    this.items.set(key, item);
    if (this.items.size >= this.opts.maxItems) void this.flush();
  }

  get size() {
    return this.items.size;
  }

  start() {
    this.timer ??= setInterval(() => void this.flush(), this.opts.intervalMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  async stop() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /** writes everything buffered so far; concurrent calls are serialised */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (!this.items.size) return;
      const batch = [...this.items.values()];
      this.items = new Map();
      try {
        await this.write(batch);
      } catch (err) {
        // keep them for the next attempt rather than lose billing data
        for (const [i, item] of batch.entries()) this.items.set(`retry:${Date.now()}:${i}`, item);
        this.opts.onError(err, batch);
      }
    });
    return this.flushing;
  }
}
