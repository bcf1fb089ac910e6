/**
 * Group commit: each caller adds a row and waits until it is committed; rows that arrive while a
 * write is in flight go together in the next transaction. A stored answer is durable before it is
 * returned (unlike FlushBuffer, which writes after answering), at the cost of one transaction per
 * batch rather than per request: under load the batch grows, so commits stop being the limit.
 */
export class GroupCommit<T> {
  private queue: { item: T; settle: (err?: unknown) => void }[] = [];
  private running = false;

  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    private readonly maxBatch = 500,
  ) {}

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ item, settle: (err) => (err === undefined ? resolve() : reject(err)) });
      if (!this.running) void this.drain();
    });
  }

  private async drain() {
    this.running = true;
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          await this.write(batch.map((b) => b.item));
          for (const b of batch) b.settle();
        } catch (err) {
          // every caller of a failed batch gets the error (and nothing of it is stored: one transaction)
          for (const b of batch) b.settle(err ?? new Error('group commit failed'));
        }
      }
    } finally {
      this.running = false;
    }
  }
}
