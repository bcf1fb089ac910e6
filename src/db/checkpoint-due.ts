/**
 * Whether a checkpoint pass is due at a tick of the catch-up timer: a WAL past catchUpFrames at
 * every tick while it holds frames not yet copied, any other every everyMs. Without the wal-index
 * header (wal null), only the latter.
 */
export function checkpointDue(wal: { frames: number; backfilled: number } | null, sinceLastMs: number, o: { everyMs: number; catchUpFrames: number }): boolean {
  if (wal && wal.frames >= o.catchUpFrames) return wal.backfilled < wal.frames;
  return sinceLastMs >= o.everyMs;
}
