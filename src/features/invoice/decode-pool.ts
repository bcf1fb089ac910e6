/**
 * The invoice QR reader off the event loop: a small pool of Worker threads (decode-worker.ts), each
 * running findAtQr on one file at a time. Decoding an image at the pixel limit, or rendering a PDF
 * page at the budget, takes up to ~1 s of CPU: on the event loop it stalled every other request of
 * the process (cached scores answer in ~1 ms) for that long.
 *
 * - The cheap checks stay on the event loop, before a file is queued (the route calls
 *   assertDecodable): an image too large is refused from its header at once.
 * - Workers start on the first file (an app that reads none starts none), then the pool is kept at
 *   its size: a worker that crashes, runs a job past `timeoutMs` (ended, its request answered 503
 *   service_busy) or fails to start is replaced. After `maxStartFailures` failed starts in a row
 *   files are read in process, as before the pool (logged once).
 * - Bounded: past `queueLimit` files waiting for a worker, 503 service_busy with Retry-After; a
 *   file that waited `timeoutMs` for a worker is answered so too. A request never hangs.
 * - The file's bytes are transferred to the worker (a copy only when they are a view into a larger
 *   buffer); only the payload found comes back.
 * - close() (the app context's closer) ends the workers and answers the files still waiting.
 */
import { availableParallelism } from 'node:os';
import type { AppContext } from '../../context';
import { ApiError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { findAtQr } from './extract';
import type { DecodeReply, DecodeRequest } from './decode-worker';

export type QrKind = 'image' | 'pdf';
export type QrFound = { payload: string; page: number | null };

export interface DecodePoolOptions {
  /** worker threads (0: files are read in process, on the event loop) */
  size: number;
  /** a file read for longer ends its worker (replaced) and answers 503; a file waiting longer for a worker answers 503 */
  timeoutMs: number;
  /** files waiting for a worker, beyond those being read; one more answers 503 at once */
  queueLimit: number;
  /** a worker that has not loaded within this is a failed start */
  startTimeoutMs: number;
  /** failed starts in a row after which files are read in process (retried after 0.1 s, 0.2 s, …) */
  maxStartFailures: number;
  /** the worker's entry point (tests point it elsewhere) */
  workerUrl: string;
  /** makes a worker thread running `workerUrl` (tests wrap it to watch or end the workers the pool makes) */
  createWorker: (url: string) => Worker;
}

/** In a `bun build --compile` binary the worker is an extra entry point, found by its path from the bundle's root (src/); from source, next to this file. */
const WORKER_URL = import.meta.url.includes('/$bunfs/') ? './features/invoice/decode-worker.ts' : new URL('./decode-worker.ts', import.meta.url).href;

export const DECODE_POOL_DEFAULTS: DecodePoolOptions = {
  // one core is the event loop's: 1 worker on 2 cores, 2 from 3 cores
  size: Math.min(2, Math.max(1, availableParallelism() - 1)),
  // ten times the slowest file within the limits (~1 s)
  timeoutMs: 10_000,
  // ~8 × 10 MiB of uploads held at most; at ~0.3–1 s a file, a few seconds of waiting
  queueLimit: 8,
  startTimeoutMs: 10_000,
  maxStartFailures: 3,
  workerUrl: WORKER_URL,
  createWorker: (url) => new Worker(url),
};

interface Job {
  id: number;
  kind: QrKind;
  bytes: Uint8Array | null;
  resolve(found: QrFound): void;
  reject(err: Error): void;
  /** waiting: the wait's limit; running: the run's */
  timer: ReturnType<typeof setTimeout> | null;
  startedAt: number;
}
interface Slot {
  worker: Worker;
  ready: boolean;
  job: Job | null;
  /** ended (by the pool or by itself): its events are ignored from then on */
  gone: boolean;
  startTimer: ReturnType<typeof setTimeout> | null;
  closed: Promise<void>;
}

/** the bytes to transfer: the caller's own when they are the whole of a plain buffer, else a copy (a Buffer from a pool slab shares it) */
function transferable(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const whole = bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  return whole ? (bytes as Uint8Array<ArrayBuffer>) : bytes.slice();
}

export class DecodePool {
  readonly options: DecodePoolOptions;
  private slots: Slot[] = [];
  private queue: Job[] = [];
  private nextId = 1;
  /** the first file was sent: from then on the pool is kept at its size */
  private started = false;
  private startFailures = 0;
  /** after a failed start, the next is not before this (performance.now()) */
  private respawnAt = 0;
  private respawnTimer: ReturnType<typeof setTimeout> | null = null;
  /** workers cannot start: files are read in process */
  private inProcess = false;
  private closed = false;
  /** a file's reading time, averaged (for Retry-After) */
  private averageMs = 500;
  private crashes = 0;
  private timeouts = 0;

  constructor(
    private readonly log: Logger,
    options: Partial<DecodePoolOptions> = {},
  ) {
    this.options = { ...DECODE_POOL_DEFAULTS, ...options };
  }

  /** The AT QR payload in a file (findAtQr), read by a worker; its bytes are detached when they are transferred. */
  read(bytes: Uint8Array, kind: QrKind): Promise<QrFound> {
    if (this.closed) return Promise.reject(this.busy('The service is stopping; the file was not read.'));
    if (this.inProcess || this.options.size < 1) return findAtQr(bytes, kind);
    this.started = true;
    this.pump(); // starts the workers on the first file
    if (this.inProcess) return findAtQr(bytes, kind);
    // a worker without a job (idle, or starting) takes the next file; past those, the queue
    const free = this.slots.filter((s) => !s.job).length;
    if (this.queue.length >= this.options.queueLimit + free) {
      const running = this.slots.length - free;
      return Promise.reject(this.busy(`Every image and PDF reader is busy (${running} reading, ${this.queue.length} waiting); the file was not read.`));
    }
    return new Promise<QrFound>((resolve, reject) => {
      const job: Job = { id: this.nextId++, kind, bytes, resolve, reject, timer: null, startedAt: 0 };
      job.timer = setTimeout(() => {
        const i = this.queue.indexOf(job);
        if (i < 0) return;
        this.queue.splice(i, 1);
        reject(this.busy(`The file waited more than ${this.options.timeoutMs / 1000} s for a reader; it was not read.`));
      }, this.options.timeoutMs);
      this.queue.push(job);
      this.pump();
    });
  }

  /** Ends the workers; files waiting or being read answer 503. */
  async close() {
    if (this.closed) return;
    this.closed = true;
    for (const job of this.queue.splice(0)) {
      clearTimeout(job.timer!);
      job.reject(this.busy('The service is stopping; the file was not read.'));
    }
    clearTimeout(this.respawnTimer!);
    const ending = this.slots.map((slot) => slot.closed);
    for (const slot of [...this.slots]) this.end(slot, null);
    // bounded: shutdown never waits on a worker for long
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.all(ending), new Promise((r) => (timer = setTimeout(r, 1000)))]);
    clearTimeout(timer);
  }

  stats() {
    const busy = this.slots.filter((s) => s.job).length;
    const ready = this.slots.filter((s) => s.ready).length;
    return { workers: this.slots.length, ready, busy, queued: this.queue.length, inProcess: this.inProcess, crashes: this.crashes, timeouts: this.timeouts, closed: this.closed };
  }

  private busy(message: string) {
    const running = this.slots.filter((s) => s.job).length;
    const seconds = Math.min(30, Math.max(1, Math.ceil(((this.queue.length + running) * this.averageMs) / Math.max(1, this.options.size) / 1000)));
    return new ApiError('service_busy', `${message} Retry after ${seconds} s.`, { headers: { 'retry-after': String(seconds) } });
  }

  /** starts workers up to the size, hands waiting files to free workers */
  private pump(): void {
    if (this.closed) return;
    if (this.inProcess) {
      // workers still starting are not waited for (one reading a file finishes it, then ends)
      for (const slot of this.slots.filter((s) => !s.job)) this.end(slot, null);
      for (const job of this.queue.splice(0)) {
        clearTimeout(job.timer!);
        findAtQr(job.bytes!, job.kind).then(job.resolve, job.reject);
      }
      return;
    }
    if (this.started && !this.respawnTimer) {
      while (this.slots.length < this.options.size && !this.inProcess && performance.now() >= this.respawnAt) this.spawn();
      // after a failed start, the next one a little later
      if (this.slots.length < this.options.size && !this.inProcess) {
        this.respawnTimer = setTimeout(() => ((this.respawnTimer = null), this.pump()), Math.max(0, this.respawnAt - performance.now()));
        this.respawnTimer.unref?.();
      }
    }
    if (this.inProcess) return this.pump();
    // a smaller size set meanwhile: idle workers beyond it end
    for (const slot of this.slots.filter((s) => s.ready && !s.job).slice(0, Math.max(0, this.slots.length - this.options.size))) this.end(slot, null);
    for (const slot of this.slots) {
      if (!this.queue.length) break;
      if (slot.ready && !slot.job) this.assign(slot, this.queue.shift()!);
    }
  }

  private spawn() {
    let worker: Worker;
    try {
      worker = this.options.createWorker(this.options.workerUrl);
    } catch (err) {
      this.startFailed(err instanceof Error ? err.message : String(err));
      return;
    }
    let closed!: () => void;
    const slot: Slot = { worker, ready: false, job: null, gone: false, startTimer: null, closed: new Promise<void>((r) => (closed = r)) };
    this.slots.push(slot);
    slot.startTimer = setTimeout(() => this.lost(slot, `it did not start within ${this.options.startTimeoutMs / 1000} s`), this.options.startTimeoutMs);
    slot.startTimer.unref?.();
    worker.onmessage = (e: MessageEvent<DecodeReply>) => this.answer(slot, e.data);
    // (in Bun an uncaught error ends the worker: its close event follows)
    worker.onerror = (e) => {
      e.preventDefault?.();
      this.lost(slot, e.message || 'an uncaught error');
    };
    worker.addEventListener('close', (e) => {
      closed();
      this.lost(slot, `it exited (code ${(e as Event & { code?: number }).code ?? '?'})`);
    });
    // an idle worker does not keep the process alive; one reading a file does
    worker.unref();
  }

  private assign(slot: Slot, job: Job) {
    clearTimeout(job.timer!);
    slot.job = job;
    job.startedAt = performance.now();
    job.timer = setTimeout(() => this.timedOut(slot, job), this.options.timeoutMs);
    const bytes = transferable(job.bytes!);
    job.bytes = null;
    slot.worker.ref();
    try {
      slot.worker.postMessage({ id: job.id, kind: job.kind, bytes } satisfies DecodeRequest, [bytes.buffer]);
    } catch (err) {
      clearTimeout(job.timer);
      slot.job = null;
      slot.worker.unref();
      job.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private answer(slot: Slot, m: DecodeReply) {
    if (slot.gone) return;
    if (m.type === 'ready') {
      slot.ready = true;
      clearTimeout(slot.startTimer!);
      this.startFailures = 0;
      return this.pump();
    }
    const job = slot.job;
    if (!job || job.id !== m.id) return;
    slot.job = null;
    clearTimeout(job.timer!);
    slot.worker.unref();
    this.averageMs = 0.8 * this.averageMs + 0.2 * (performance.now() - job.startedAt);
    if (m.type === 'found') job.resolve({ payload: m.payload, page: m.page });
    else if (m.type === 'refused') job.reject(new ApiError(m.code, m.message, m.extra));
    else job.reject(new Error(m.message));
    this.pump();
  }

  private timedOut(slot: Slot, job: Job) {
    if (slot.job !== job) return;
    this.timeouts++;
    this.log.warn('invoice QR reader: a file ran past its time limit; its worker was ended and replaced', { kind: job.kind, timeout_ms: this.options.timeoutMs });
    slot.job = null;
    job.reject(this.busy(`Reading the file did not finish within ${this.options.timeoutMs / 1000} s; nothing was billed.`));
    this.end(slot, null);
    this.pump();
  }

  /** a worker that ended by itself, failed or never started: its file answers 503, a new one replaces it */
  private lost(slot: Slot, why: string) {
    if (slot.gone) return;
    const job = slot.job;
    const wasReady = slot.ready;
    this.end(slot, job ? this.busy('The reader of the file stopped before it finished; nothing was billed.') : null);
    if (this.closed) return;
    if (!wasReady) this.startFailed(why);
    else {
      this.crashes++;
      this.log.warn('invoice QR reader: a worker stopped; it is replaced', { error: why, during_job: !!job });
    }
    this.pump();
  }

  private startFailed(why: string) {
    this.respawnAt = performance.now() + 100 * 2 ** Math.min(this.startFailures, 6);
    if (++this.startFailures < this.options.maxStartFailures || this.inProcess) return;
    this.inProcess = true;
    this.log.error('invoice QR reader: workers cannot start; images and PDFs are read on the event loop', { error: why, attempts: this.startFailures });
  }

  /** ends a worker; its job, if any, fails with `error` */
  private end(slot: Slot, error: Error | null) {
    slot.gone = true;
    clearTimeout(slot.startTimer!);
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    const job = slot.job;
    slot.job = null;
    if (job) {
      clearTimeout(job.timer!);
      job.reject(error ?? this.busy('The service is stopping; the file was not read.'));
    }
    try {
      slot.worker.terminate();
    } catch {}
  }
}

const pools = new WeakMap<AppContext, DecodePool>();

/** The app's pool (made on first call, ended when the context closes). */
export function decodePool(ctx: AppContext): DecodePool {
  let pool = pools.get(ctx);
  if (!pool) {
    const made = (pool = new DecodePool(ctx.log, ctx.config.invoiceDecodeWorkers === null ? {} : { size: ctx.config.invoiceDecodeWorkers }));
    pools.set(ctx, made);
    ctx.onClose(() => made.close());
  }
  return pool;
}
