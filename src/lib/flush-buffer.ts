import { inCreatorContext } from './creator-context';

/**
 * Keeps hot-path writes off the request: items are collected (coalesced by key) and written
 * in batches every interval, when the batch is full, and on shutdown (flush()).
 */
export class FlushBuffer<T> {
  private items = new Map<string, T>();
  /** items never coalesced by key: pushed ones, and those of a failed write (kept for the next attempt) */
  private pushed: T[] = [];
  /** counts the batches taken: an item pushed under an earlier epoch is no longer the caller's to update */
  epoch = 0;
  private timer: ReturnType<typeof setInterval> | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private readonly detached = inCreatorContext();

  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    private readonly opts: { intervalMs: number; maxItems: number; onError: (err: unknown, items: T[]) => void },
  ) {}

  add(key: string, item: T) {
    this.items.set(key, item);
    if (this.size >= this.opts.maxItems) void this.flush();
  }

  /** one item that is never coalesced by key (the caller may update it until the next flush) */
  push(item: T) {
    this.pushed.push(item);
    if (this.size >= this.opts.maxItems) void this.flush();
  }

  get size() {
    return this.items.size + this.pushed.length;
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
      if (!this.size) return;
      const batch = this.items.size ? [...this.pushed, ...this.items.values()] : this.pushed;
      this.items = new Map();
      this.pushed = [];
      this.epoch++;
      try {
        await this.detached(() => this.write(batch));
      } catch (err) {
        // keep them for the next attempt rather than lose billing data (first, as they were:
        // their epoch is over, so nothing adds to them; keyed ones are not coalesced again)
        this.pushed = batch.concat(this.pushed);
        this.opts.onError(err, batch);
      }
    });
    return this.flushing;
  }
}
