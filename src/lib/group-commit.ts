import { inCreatorContext } from './creator-context';
import { dependencyDown } from './dependency-down';

/**
 * Group commit: each caller adds an item and waits until it is committed; the items of many
 * concurrent callers go to the database together (one transaction, or one multi-row statement, per
 * batch), so a commit's fixed cost is shared. A stored answer is durable before it is returned
 * (unlike FlushBuffer, which writes after answering).
 *
 * - `startAtTurnEnd`: a batch starts once the current event-loop turn is over (setImmediate), so
 *   it holds every request of that turn; otherwise at once.
 * - `minIntervalMs`: a batch starts no sooner than this after the previous one started, so that
 *   under moderate load a commit holds the requests of several turns (its fixed cost shared by
 *   more); a batch after a quiet spell still starts at once.
 * - `maxInFlight`: batches written at the same time (PostgreSQL: several connections); items that
 *   arrive meanwhile wait for the next batch, which is how batches grow under load.
 * - A batch that fails is written again one item at a time, so one bad item fails only its caller;
 *   unless the failure is not about an item (the database is down or busy: lib/dependency-down.ts):
 *   then every caller gets it at once, rather than one after another, each after its own timeout.
 * - `afterWrite`: what must happen between a batch's commit and its callers' answers but needs no
 *   database connection (PostgreSQL: announcing the commit to the other processes). It runs once
 *   the batch has left its slot, so the next batch is written meanwhile.
 */
export class GroupCommit<T> {
  private queue: { item: T; settle: (err?: unknown) => void }[] = [];
  private inFlight = 0;
  private scheduled = false;
  private lastStart = -Infinity;
  private readonly detached = inCreatorContext();

  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    private readonly opts: { maxBatch?: number; maxInFlight?: number; startAtTurnEnd?: boolean; minIntervalMs?: number; afterWrite?: (items: T[]) => Promise<unknown> } = {},
  ) {}

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ item, settle: (err) => (err === undefined ? resolve() : reject(err)) });
      this.schedule();
    });
  }

  private schedule() {
    if (this.scheduled || this.inFlight >= (this.opts.maxInFlight ?? 1) || !this.queue.length) return;
    this.scheduled = true;
    const wait = this.opts.minIntervalMs ? this.lastStart + this.opts.minIntervalMs - performance.now() : 0;
    if (wait > 0) setTimeout(() => this.detached(() => this.run()), wait);
    else if (this.opts.startAtTurnEnd) setImmediate(() => this.detached(() => this.run()));
    else queueMicrotask(() => this.detached(() => this.run()));
  }

  private async run() {
    this.scheduled = false;
    if (!this.queue.length) return;
    const batch = this.queue.splice(0, this.opts.maxBatch ?? 500);
    this.lastStart = performance.now();
    this.inFlight++;
    this.schedule(); // what is left over a full batch goes alongside if a slot is free (after minIntervalMs, if set)
    let written: typeof batch = [];
    try {
      await this.write(batch.map((b) => b.item));
      written = batch;
    } catch (err) {
      if (batch.length === 1 || dependencyDown(err)) for (const b of batch) b.settle(err ?? new Error('group commit failed'));
      else
        for (const b of batch)
          await this.write([b.item]).then(
            () => written.push(b),
            (e) => b.settle(e ?? new Error('group commit failed')),
          );
    } finally {
      this.inFlight--;
      this.schedule();
    }
    if (!written.length) return;
    let failure: unknown;
    if (this.opts.afterWrite) await this.opts.afterWrite(written.map((b) => b.item)).catch((err) => (failure = err ?? new Error('group commit: after its write failed')));
    for (const b of written) b.settle(failure);
  }
}
