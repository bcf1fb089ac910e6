import { Queue, Worker, type ConnectionOptions } from 'bullmq';
import type { Logger } from './log';

/**
 * Background work behind one interface: BullMQ on Redis when REDIS_URL is set, otherwise an
 * in-process runner. The queue only transports work: the durable state lives in the database
 * (sync_runs, webhook_deliveries, events), and each feature's recovery sweep re-enqueues what is
 * due, so nothing is lost when a process dies with the in-process runner. Delivery is at least
 * once; handlers claim their row with a conditional update so a duplicate run is harmless.
 */
export type JobHandler<T> = (data: T) => Promise<void>;

export interface JobQueue {
  readonly kind: 'memory' | 'bullmq';
  register<T>(name: string, handler: JobHandler<T>, opts?: { concurrency?: number }): void;
  enqueue<T>(name: string, data: T, opts?: { jobId?: string; delayMs?: number }): Promise<void>;
  /** starts the workers (processes with role all or worker) */
  start(): Promise<void>;
  /** stops taking jobs and waits for running ones (bounded by timeoutMs) */
  stop(timeoutMs?: number): Promise<void>;
  /** jobs waiting or delayed, per queue name (metrics) */
  depth(): Promise<Record<string, number>>;
  /** resolves when no job is queued or running (tests) */
  idle?(): Promise<void>;
  /** called after each job (metrics) */
  onOutcome?: (queue: string, outcome: 'completed' | 'failed') => void;
}

export class MemoryJobQueue implements JobQueue {
  readonly kind = 'memory' as const;
  onOutcome?: (queue: string, outcome: 'completed' | 'failed') => void;
  private handlers = new Map<string, { fn: JobHandler<unknown>; concurrency: number; running: number; waiting: { id?: string; data: unknown }[] }>();
  private timers = new Set<ReturnType<typeof setTimeout>>();
  private inFlight = new Set<string>();
  private running = new Set<Promise<void>>();
  private started = false;
  private stopped = false;

  constructor(private readonly log: Logger) {}

  register<T>(name: string, handler: JobHandler<T>, opts: { concurrency?: number } = {}) {
    this.handlers.set(name, { fn: handler as JobHandler<unknown>, concurrency: opts.concurrency ?? 4, running: 0, waiting: [] });
  }

  async enqueue<T>(name: string, data: T, opts: { jobId?: string; delayMs?: number } = {}) {
    if (this.stopped) return;
    const key = opts.jobId ? `${name}:${opts.jobId}` : undefined;
    if (key && this.inFlight.has(key)) return;
    if (key) this.inFlight.add(key);
    const push = () => {
      const h = this.handlers.get(name);
      if (!h) return this.log.warn('job for an unregistered queue dropped', { queue: name });
      h.waiting.push({ id: key, data });
      this.pump(name);
    };
    if (opts.delayMs && opts.delayMs > 0) {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        push();
      }, opts.delayMs);
      this.timers.add(timer);
    } else push();
  }

  private pump(name: string) {
    const h = this.handlers.get(name);
    if (!h || !this.started || this.stopped) return;
    while (h.running < h.concurrency && h.waiting.length) {
      const job = h.waiting.shift()!;
      h.running++;
      let p!: Promise<void>;
      p = (async () => {
        try {
          await h.fn(job.data);
          this.onOutcome?.(name, 'completed');
        } catch (err) {
          this.onOutcome?.(name, 'failed');
          this.log.error('job failed', { queue: name, error: (err as Error).message });
        } finally {
          h.running--;
          if (job.id) this.inFlight.delete(job.id);
          this.running.delete(p);
          this.pump(name);
        }
      })();
      this.running.add(p);
    }
  }

  async start() {
    this.started = true;
    for (const name of this.handlers.keys()) this.pump(name);
  }

  async stop(timeoutMs = 10_000) {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.allSettled([...this.running]), new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer); // a pending timer would keep a CLI or bench process alive
  }

  async depth() {
    return Object.fromEntries([...this.handlers.entries()].map(([n, h]) => [n, h.waiting.length + h.running]));
  }

  async idle() {
    while (this.running.size || [...this.handlers.values()].some((h) => h.waiting.length)) await Promise.allSettled([...this.running]).then(() => Bun.sleep(1));
  }
}

export class BullJobQueue implements JobQueue {
  readonly kind = 'bullmq' as const;
  onOutcome?: (queue: string, outcome: 'completed' | 'failed') => void;
  private queues = new Map<string, Queue>();
  private workers: Worker[] = [];
  private handlers = new Map<string, { fn: JobHandler<unknown>; concurrency: number }>();

  constructor(
    private readonly connection: ConnectionOptions,
    private readonly log: Logger,
    private readonly prefix = 'svc',
  ) {}

  private queue(name: string) {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: this.connection, prefix: this.prefix });
      q.on('error', (err) => this.log.throttled(`bull-${name}`, 60_000, 'error', 'queue error', { queue: name, error: err.message }));
      this.queues.set(name, q);
    }
    return q;
  }

  register<T>(name: string, handler: JobHandler<T>, opts: { concurrency?: number } = {}) {
    this.handlers.set(name, { fn: handler as JobHandler<unknown>, concurrency: opts.concurrency ?? 4 });
  }

  /**
   * Never blocks a request on Redis: the add is given 2 s and a failure is only logged, because the
   * work is durable in the database and the recovery sweeps enqueue it again.
   */
  async enqueue<T>(name: string, data: T, opts: { jobId?: string; delayMs?: number } = {}) {
    const added = this.queue(name).add(name, data, {
      jobId: opts.jobId?.replaceAll(':', '_'),
      delay: opts.delayMs,
      removeOnComplete: true,
      removeOnFail: 1000,
      // the domain decides retries (webhook schedule, sync attempts); BullMQ re-runs stalled jobs
      attempts: 1,
    });
    const ok = await Promise.race([added.then(() => true).catch(() => false), Bun.sleep(2000).then(() => false)]);
    if (!ok) this.log.throttled(`bull-enqueue-${name}`, 60_000, 'error', 'could not enqueue (Redis down?); the recovery sweep will retry', { queue: name });
  }

  /** A repeatable job that runs once per tick across every process (BullMQ job scheduler). */
  async schedule(name: string, pattern: string, tz: string) {
    await this.queue(name).upsertJobScheduler(name, { pattern, tz }, { name, data: {} });
  }

  async start() {
    for (const [name, h] of this.handlers) {
      const w = new Worker(name, (job) => h.fn(job.data), {
        connection: this.connection,
        prefix: this.prefix,
        concurrency: h.concurrency,
        stalledInterval: 15_000,
        maxStalledCount: 2,
        // short long-poll so that shutdown does not wait 5 s for an idle worker
        drainDelay: 1,
      });
      w.on('error', (err) => this.log.throttled(`bullw-${name}`, 60_000, 'error', 'worker error', { queue: name, error: err.message }));
      w.on('completed', () => this.onOutcome?.(name, 'completed'));
      w.on('failed', (job, err) => {
        this.onOutcome?.(name, 'failed');
        this.log.error('job failed', { queue: name, jobId: job?.id, error: err.message });
      });
      this.workers.push(w);
    }
  }

  async stop(timeoutMs = 10_000) {
    await Promise.race([Promise.allSettled(this.workers.map((w) => w.close())), Bun.sleep(timeoutMs)]);
    await Promise.race([Promise.allSettled([...this.queues.values()].map((q) => q.close())), Bun.sleep(Math.min(timeoutMs, 2000))]);
    // whatever could not close cleanly (Redis gone) is cut off, so shutdown never hangs
    await Promise.race([
      Promise.allSettled([...this.workers.map((w) => w.disconnect()), ...[...this.queues.values()].map((q) => q.disconnect())]),
      Bun.sleep(500),
    ]);
  }

  async depth() {
    const out: Record<string, number> = {};
    for (const name of new Set([...this.handlers.keys(), ...this.queues.keys()])) {
      const c = await this.queue(name).getJobCounts('waiting', 'delayed', 'active');
      out[name] = (c.waiting ?? 0) + (c.delayed ?? 0) + (c.active ?? 0);
    }
    return out;
  }
}
