// Worker thread with its own SQLite connection, for the work that must not stall the service's
// event loop:
// - WAL checkpoints (and their fsyncs): the main connection runs with wal_autocheckpoint=0.
//   PASSIVE never blocks writers; when the WAL is fully copied, the next writer restarts it. Under
//   sustained writes it never is (new frames arrive during every pass), so past a size the main
//   thread holds its writes and asks for a RESTART checkpoint (client.ts). Past half that size the
//   passes run every 25 ms instead of every 500 ms (checkpointDue), so that the one the writes wait
//   for has little to copy and to fsync.
// - appends of buffered rows (usage records: one per second of calls alike), each batch in one
//   transaction. Their B-tree inserts cost ~6 µs a row, which the request thread no longer pays.
import { Database, type Statement } from 'bun:sqlite';
import { OwnCommits, WAL_BACKFILL_WORD, WAL_MAX_FRAME_WORD, walIndexAt } from './sqlite-change-signal';
import { checkpointDue } from './checkpoint-due';

export type BackgroundMessage =
  | { type: 'open'; file: string; checkpointEveryMs: number; /** past this many frames in the WAL, a pass every catchUpEveryMs (checkpointDue) */ catchUpFrames: number; catchUpEveryMs: number; busyTimeoutMs: number; /** OwnCommits' memory: where this worker's appends are declared */ ownCommits: SharedArrayBuffer; /** OwnCommits.writer's section, shared with the main connection's writer */ commitSection: SharedArrayBuffer; /** the main thread's mapping of the wal-index header (it owns the descriptor) */ walIndexAddress: number | null }
  | (BackgroundRequest & { id: number })
  | { type: 'stop' };
/** what the worker answers with one reply each (matched by id) */
export type BackgroundRequest =
  /** one transaction: every group's rows, or none of them */
  | { type: 'append'; groups: { sql: string; /** values per row */ width: number; /** JSON of the rows' values, one flat array */ values: string }[] }
  /** a checkpoint that copies the whole WAL (the main connection holds its writes meanwhile), so that the next write restarts it */
  | { type: 'restart' };
export type BackgroundReply =
  /** incomplete: a restart that could not copy the whole WAL (a reader elsewhere) */
  | { type: 'done'; of: BackgroundRequest['type']; id: number; error?: string; incomplete?: boolean }
  | { type: 'stopped' };

declare const self: Worker;
let db: Database | null = null;
let busyTimeoutMs = 5000;
// usage rows change nothing the service's read caches hold: each append is declared, so that its
// commit alone does not drop them (sqlite-change-signal.ts)
let own: ReturnType<typeof OwnCommits.writer> | null = null;
let timer: ReturnType<typeof setInterval> | null = null;
const statements = new Map<string, Statement>();
const reply = (m: BackgroundReply) => postMessage(m);

self.onmessage = (e: MessageEvent<BackgroundMessage>) => {
  const m = e.data;
  if (m.type === 'open') {
    db = new Database(m.file);
    busyTimeoutMs = m.busyTimeoutMs;
    db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    db.exec('PRAGMA synchronous = NORMAL');
    // checkpoints only from the timer below: one run by a COMMIT (past 1000 pages) would hold this
    // writer's OwnCommits section for its whole duration (fsyncs), after the write lock is released
    db.exec('PRAGMA wal_autocheckpoint = 0');
    db.exec('PRAGMA foreign_keys = ON');
    const header = m.walIndexAddress === null ? null : walIndexAt(m.walIndexAddress);
    own = OwnCommits.writer(header, m.ownCommits, m.commitSection, true);
    let last = performance.now();
    const o = { everyMs: m.checkpointEveryMs, catchUpFrames: m.catchUpFrames };
    timer = setInterval(
      () => {
        const wal = header && { frames: header[WAL_MAX_FRAME_WORD]!, backfilled: header[WAL_BACKFILL_WORD]! };
        if (!checkpointDue(wal, performance.now() - last, o)) return;
        last = performance.now();
        try {
          db!.exec('PRAGMA wal_checkpoint(PASSIVE)');
        } catch {
          // busy or locked: the next tick tries again
        }
      },
      header ? m.catchUpEveryMs : m.checkpointEveryMs,
    );
  } else if (m.type === 'append') {
    try {
      db!.transaction(() => {
        for (const g of m.groups) {
          let insert = statements.get(g.sql);
          if (!insert) statements.set(g.sql, (insert = db!.prepare(g.sql)));
          const values = JSON.parse(g.values) as (string | number)[];
          for (let i = 0; i < values.length; i += g.width) insert.run(...values.slice(i, i + g.width));
        }
        own!.beforeCommit(); // BEGIN IMMEDIATE: this connection holds the write lock
      }).immediate();
      own!.afterCommit();
      reply({ type: 'done', of: m.type, id: m.id });
    } catch (err) {
      own!.release();
      reply({ type: 'done', of: m.type, id: m.id, error: err instanceof Error ? err.message : String(err) });
    }
  } else if (m.type === 'restart') {
    try {
      // the main connection's writes wait meanwhile: another process's long read makes this give up
      // after 100 ms (the next one tries again), not hold them for the whole busy timeout
      db!.exec('PRAGMA busy_timeout = 100');
      let result: { busy: number; log: number; checkpointed: number } | null;
      try {
        result = db!.query('PRAGMA wal_checkpoint(RESTART)').get() as typeof result;
      } finally {
        db!.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
      }
      // busy: it could not finish; otherwise every frame of the log was copied
      reply({ type: 'done', of: m.type, id: m.id, incomplete: !result || result.busy !== 0 || result.checkpointed < result.log });
    } catch (err) {
      reply({ type: 'done', of: m.type, id: m.id, error: err instanceof Error ? err.message : String(err) });
    }
  } else {
    if (timer) clearInterval(timer);
    try {
      db?.exec('PRAGMA wal_checkpoint(PASSIVE)');
    } catch {}
    db?.close();
    reply({ type: 'stopped' });
  }
};
