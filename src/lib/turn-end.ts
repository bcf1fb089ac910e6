/**
 * Answers held to the end of the event-loop turn and handed to the HTTP server together.
 *
 * Measured on Bun 1.4.5 under load (docs/benchmarks.md): an answer handed back while the server
 * is still dispatching the requests it read in this turn costs the process (and the client, on
 * the same host) far more CPU than the same answer handed back after them: the bare Elysia POST
 * goes from ~31 to ~17–20 µs of main-thread CPU a request, with the same system calls per request
 * (one recv, one send), i.e. the difference is in wake-ups and scheduling, not in work done.
 * The delay is the rest of the turn: microseconds when idle, at most the turn's dispatching under
 * load. One timer per turn, however many answers wait.
 */
let waiting: (() => void)[] = [];

function releaseAll() {
  const released = waiting;
  waiting = [];
  for (const resume of released) resume();
}

/** Resolves once the current event-loop turn has dispatched everything it read. */
export function turnEnd(): Promise<void> {
  return new Promise((resolve) => {
    if (waiting.length === 0) setImmediate(releaseAll);
    waiting.push(resolve);
  });
}
