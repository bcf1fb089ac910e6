/**
 * Work held to the end of the event-loop turn, i.e. until the server has dispatched every request
 * it read in this turn, then done for all of them together. Two users:
 * - answers handed to the HTTP server together (`turnEnd`). Measured on Bun 1.4.5 under load
 *   (docs/benchmarks.md): an answer handed back while the server is still dispatching the turn's
 *   requests costs the process (and the client, on the same host) far more CPU than the same
 *   answer handed back after them: the bare Elysia POST goes from ~31 to ~17–20 µs of main-thread
 *   CPU a request, with the same system calls per request (one recv, one send), i.e. the
 *   difference is in wake-ups and scheduling, not in work done;
 * - the Redis rate limiter, which decides a turn's requests in one script call.
 * The delay is the rest of the turn: microseconds when idle, at most the turn's dispatching under
 * load. One timer per turn, however many items wait.
 */
export class TurnQueue<T> {
  private items: T[] = [];

  constructor(private readonly run: (items: T[]) => void) {}

  push(item: T) {
    if (this.items.length === 0) setImmediate(this.release);
    this.items.push(item);
  }

  private readonly release = () => {
    const items = this.items;
    this.items = [];
    this.run(items);
  };
}

const answers = new TurnQueue<() => void>((resumes) => {
  for (const resume of resumes) resume();
});

/** Resolves once the current event-loop turn has dispatched everything it read. */
export function turnEnd(): Promise<void> {
  return new Promise((resolve) => answers.push(resolve));
}
