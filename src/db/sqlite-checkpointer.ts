// Worker thread: checkpoints the SQLite WAL on its own connection, so the fsyncs of a checkpoint
// never stall the service's event loop (the main connection runs with wal_autocheckpoint=0).
// PASSIVE never blocks writers; when the WAL is fully copied, the next writer restarts it.
import { Database } from 'bun:sqlite';

declare const self: Worker;
let db: Database | null = null;
let timer: ReturnType<typeof setInterval> | null = null;

self.onmessage = (e: MessageEvent<{ file: string; everyMs: number } | 'stop'>) => {
  if (e.data === 'stop') {
    if (timer) clearInterval(timer);
    try {
      db?.exec('PRAGMA wal_checkpoint(PASSIVE)');
    } catch {}
    db?.close();
    postMessage('stopped');
    return;
  }
  db = new Database(e.data.file);
  db.exec('PRAGMA busy_timeout = 5000');
  timer = setInterval(() => {
    try {
      db!.exec('PRAGMA wal_checkpoint(PASSIVE)');
    } catch {
      // busy or locked: the next tick tries again
    }
  }, e.data.everyMs);
};
