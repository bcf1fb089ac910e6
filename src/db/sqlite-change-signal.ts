import { closeSync, fstatSync, openSync } from 'node:fs';
import { dlopen, FFIType, toArrayBuffer, type Pointer } from 'bun:ffi';

/**
 * A cheap, exact "has anything been committed?" signal for a SQLite database in WAL mode, from any
 * connection of any process: the wal-index header at the start of the `-shm` file
 * (https://sqlite.org/walformat.html#the_wal_index_file_format). Every commit, and every restart
 * of the WAL, rewrites that 48-byte header (change counter, last frame, salts, checksum), which is
 * how SQLite itself decides whether its page cache is still valid.
 *
 * Reading it through a shared memory map costs nanoseconds; `PRAGMA data_version` answers the same
 * question with a read transaction and file-lock system calls (3 µs idle, ~12 µs under load here).
 * A torn read while a writer is mid-commit can only look "changed" (a spurious cache drop) or
 * "unchanged" when the commit is not yet visible to anyone — never "unchanged" after a commit.
 *
 * Commits that change nothing the caches hold (the background worker's usage appends) can be
 * declared in an `OwnCommits` record: a header change that is exactly one of those is not counted.
 */

/**
 * The `-shm` file's first page, mapped read-only and shared. SQLite holds POSIX (fcntl) locks on
 * that file, and POSIX drops every lock a process holds on a file as soon as the process closes
 * *any* descriptor of it: mapping it with Bun.mmap (open, map, close) silently released SQLite's
 * "dead man switch" lock, so the next process to open the database (the CLI, the sqlite3 shell)
 * believed it was alone, truncated and rebuilt the `-shm` under the service, and the service died
 * of SIGBUS. So the descriptor opened here stays open until `close()`, which the owner calls only
 * once every SQLite connection of this process to that file is closed. The mapping itself is never
 * unmapped (a page per database opened): a late read after close sees a stale header, not freed memory.
 * null where it cannot be mapped (no -shm file, no libc): callers fall back to PRAGMA data_version.
 */
export interface WalIndexMap {
  /** the two copies of the wal-index header, 12 words each */
  header: Uint32Array;
  /** the mapping's address, for a worker thread of this process (walIndexAt) */
  address: number;
  close(): void;
}

const PAGE = 4096;
let libc: { mmap(addr: null, len: number, prot: number, flags: number, fd: number, off: number): Pointer | null } | null | undefined;
function mmapOf() {
  if (libc === undefined) {
    try {
      libc = dlopen(process.platform === 'darwin' ? 'libc.dylib' : 'libc.so.6', {
        mmap: { args: [FFIType.ptr, FFIType.u64, FFIType.i32, FFIType.i32, FFIType.i32, FFIType.i64], returns: FFIType.ptr },
      }).symbols as never;
    } catch {
      libc = null;
    }
  }
  return libc;
}

export function mapWalIndex(dbFile: string): WalIndexMap | null {
  const c = mmapOf();
  if (!c) return null;
  let fd: number;
  try {
    fd = openSync(`${dbFile}-shm`, 'r');
  } catch {
    return null;
  }
  if (fstatSync(fd).size < 2 * HEADER_WORDS * 4) {
    closeSync(fd);
    return null;
  }
  const PROT_READ = 1;
  const MAP_SHARED = 1;
  const address = c.mmap(null, PAGE, PROT_READ, MAP_SHARED, fd, 0) as number | null;
  // MAP_FAILED is (void *)-1, which comes back as a bigint
  if (typeof address !== 'number' || address <= 0) {
    closeSync(fd);
    return null;
  }
  let open = true;
  return {
    header: walIndexAt(address),
    address,
    close() {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

/** The header of a mapping made by mapWalIndex in this process (worker threads share its memory). */
export const walIndexAt = (address: number) => new Uint32Array(toArrayBuffer(address as Pointer, 0, WAL_INDEX_WORDS * 4));

/** the two header copies, then the checkpoint information (its first word: nBackfill, the frames copied into the database) */
const WAL_INDEX_WORDS = 2 * 12 + 10;
/** word of nBackfill in the mapping */
export const WAL_BACKFILL_WORD = 24;
/** word of mxFrame (the WAL's last valid frame) in the header */
export const WAL_MAX_FRAME_WORD = 4;

/** exempt: records of commits not to count (one per connection; their commits may interleave) */
export function walChangeSignal(live: Uint32Array, exempt: OwnCommits[] = []): () => number {
  const seen = new Uint32Array(HEADER_WORDS);
  seen.set(live.subarray(0, HEADER_WORDS));
  let version = 0;
  const now = new Uint32Array(HEADER_WORDS);
  return () => {
    for (let i = 0; i < HEADER_WORDS; i++) {
      if (live[i] !== seen[i]) {
        // compared and kept as one snapshot: a commit landing meanwhile shows at the next call
        now.set(live.subarray(0, HEADER_WORDS));
        // a writer between the two copies (SQLite writes the second, then the first): its commit is
        // not visible yet (SQLite's own readers wait for the copies to agree); the next call sees it
        for (let j = 0; j < HEADER_WORDS; j++) if (now[j] !== live[HEADER_WORDS + j]) return version;
        // a WAL restart (the first write after a complete checkpoint) rewrites the header before
        // the commit that follows: same change counter, no frames, nothing new to read. Not taken
        // as the last header seen, so that the declared step of that commit (from the header
        // before the restart) still explains it: counted, it dropped every cache once a restart
        if (now[CHANGE_COUNTER] === seen[CHANGE_COUNTER] && now[WAL_MAX_FRAME_WORD] === 0) return version;
        if (!explainedBy(exempt, seen, now)) {
          // the one commit after the header seen, by a writer still between its COMMIT and the
          // declaring of it (a worker thread preempted there): looked at again once it is declared
          if (pendingFrom(exempt, seen, now)) return version;
          version++;
        }
        seen.set(now);
        return version;
      }
    }
    return version;
  };
}

const HEADER_WORDS = 12; // the first copy of the wal-index header: 48 bytes
const CHANGE_COUNTER = 2; // iChange, at byte 8: +1 on every commit, never moved by anything else

/**
 * The latest commits of one connection whose changes no cache depends on, in memory shared between
 * the thread that commits (the writer) and the one that reads the signal: one step per commit,
 * from the header just before it to the header just after it (nothing else committed between).
 * The reader may have looked at any header: it ignores a change from one header to another if
 * declared steps lead from the one to the other (explainedBy), through the steps of several
 * connections if they committed in turns.
 * Layout (Int32): [0] a sequence number, odd while being written; [1] the number of steps; then
 * the steps, two headers of HEADER_WORDS each; then the commit in progress: a flag and the header
 * its writer read while holding the write lock (see pendingFrom).
 */
export class OwnCommits {
  constructor(readonly shared = new SharedArrayBuffer(4 * (2 + STEPS * 2 * HEADER_WORDS + 1 + HEADER_WORDS))) {}

  /**
   * Writer side, around each transaction: `beforeCommit` reads the header while the transaction
   * holds the write lock (no other connection can commit then); `afterCommit` records the step
   * only if the change counter moved by exactly one (nothing else was committed in between).
   *
   * `section`: shared by the writers of one process (the main connection and the background
   * worker's). From beforeCommit to afterCommit a writer holds it, so that the other writer cannot
   * commit between this one's COMMIT and its reading of the header after it (which then would show
   * two commits: the step is lost, and every cache dropped). Never held for long: a writer takes it
   * while it holds SQLite's write lock, so the other can only be finishing its afterCommit.
   * `release` ends it whatever happened (call it in a finally).
   */
  static writer(header: Uint32Array | null, shared: SharedArrayBuffer, section?: SharedArrayBuffer, waitForSection = false) {
    const words = new Int32Array(shared);
    const held = section ? new Int32Array(section) : null;
    let holding = false;
    let undeclared = false;
    const before = new Uint32Array(HEADER_WORDS);
    let steps: [Uint32Array, Uint32Array][] = [];
    /** the steps (when given) and the commit in progress, if any */
    const publish = (pending: Uint32Array | null, withSteps: boolean) => {
      Atomics.add(words, 0, 1); // odd: being written
      if (withSteps) {
        Atomics.store(words, 1, steps.length);
        steps.forEach((pair, k) => pair.forEach((h, j) => h.forEach((w, i) => Atomics.store(words, 2 + (2 * k + j) * HEADER_WORDS + i, w | 0))));
      }
      Atomics.store(words, PENDING, pending ? 1 : 0);
      if (pending) pending.forEach((w, i) => Atomics.store(words, PENDING + 1 + i, w | 0));
      Atomics.add(words, 0, 1); // even: complete
    };
    let pendingShown = false;
    return {
      /** call inside the transaction, after its first write (the write lock is held) */
      beforeCommit() {
        if (held && !holding) {
          // the other writer is between its COMMIT and its afterCommit: microseconds, unless its
          // thread was preempted there (or this one got SQLite's lock the moment it was released).
          // A worker waits (asleep) until released; the main thread waits at most 0.2 ms, then its
          // commit goes undeclared (the caches drop once), as any other would
          const waits = waitForSection ? 1000 : 1; // the worker: ~1 s, then the other side is gone
          let acquired = false;
          for (let tries = 0; !(acquired = Atomics.compareExchange(held, 0, 0, 1) === 0) && tries < waits; tries++) Atomics.wait(held, 0, 1, waitForSection ? 1 : 0.2);
          if (acquired || waitForSection) holding = true;
          else {
            undeclared = true;
            return;
          }
        }
        if (header) {
          before.set(header.subarray(0, HEADER_WORDS));
          publish(before, false);
          pendingShown = true;
        }
      },
      /** call once it committed */
      afterCommit() {
        if (header && !undeclared) {
          const after = consistentHeader(header);
          if (after && after[CHANGE_COUNTER] === ((before[CHANGE_COUNTER]! + 1) >>> 0)) {
            steps = [...steps.slice(1 - STEPS), [before.slice(), after]];
            publish(null, true);
            pendingShown = false;
          }
        }
        this.release();
      },
      release() {
        if (pendingShown) publish(null, false);
        pendingShown = false;
        if (held && holding) {
          Atomics.store(held, 0, 0);
          Atomics.notify(held, 0);
        }
        holding = false;
        undeclared = false;
      },
    };
  }

  /** reader side: the header a writer read before the commit it is making, if it is making one */
  pending(): Uint32Array | null {
    return this.read((words) => {
      if (Atomics.load(words, PENDING) !== 1) return null;
      const h = new Uint32Array(HEADER_WORDS);
      for (let i = 0; i < HEADER_WORDS; i++) h[i] = Atomics.load(words, PENDING + 1 + i) >>> 0;
      return h;
    }, null);
  }

  /** reader side: the steps as published */
  steps(): [Uint32Array, Uint32Array][] {
    return this.read((words) => {
      const length = Atomics.load(words, 1);
      const steps: [Uint32Array, Uint32Array][] = [];
      for (let k = 0; k < length; k++) {
        const pair = [0, 1].map((j) => {
          const h = new Uint32Array(HEADER_WORDS);
          for (let i = 0; i < HEADER_WORDS; i++) h[i] = Atomics.load(words, 2 + (2 * k + j) * HEADER_WORDS + i) >>> 0;
          return h;
        });
        steps.push(pair as [Uint32Array, Uint32Array]);
      }
      return steps;
    }, []);
  }

  /** a consistent read (the writer rewrites in microseconds: tried again a few times), or `none` */
  private read<R>(fn: (words: Int32Array) => R, none: R): R {
    const words = new Int32Array(this.shared);
    for (let attempt = 0; attempt < 100; attempt++) {
      const seq = Atomics.load(words, 0);
      if (seq === 0) return none;
      if (seq & 1) continue;
      const value = fn(words);
      if (Atomics.load(words, 0) === seq) return value;
    }
    return none; // still being written: nothing is explained
  }
}

/** Is the change from `from` to `to` only commits declared by these records (steps leading from one to the other)? */
export function explainedBy(records: OwnCommits[], from: Uint32Array, to: Uint32Array): boolean {
  const steps = records.flatMap((r) => r.steps());
  let at = from;
  // each header has at most one declared step out of it (the next commit): follow them
  for (let n = 0; n <= steps.length; n++) {
    if (sameHeader(at, to)) return true;
    const next = steps.find(([a]) => sameHeader(a, at));
    if (!next) return false;
    at = next[1];
  }
  return false;
}

/**
 * Is the change from `from` to `to` one commit by a writer that read `from` while holding the write
 * lock and has not declared it yet? No other connection can commit while that lock is held, so the
 * next commit after `from` is that writer's. Only ever a reason to look again (the writer declares
 * it within microseconds, or clears it if its COMMIT failed), never to take `to` as seen.
 */
export function pendingFrom(records: OwnCommits[], from: Uint32Array, to: Uint32Array): boolean {
  return records.some((r) => {
    const p = r.pending();
    return p !== null && sameHeader(p, from) && to[CHANGE_COUNTER] === ((p[CHANGE_COUNTER]! + 1) >>> 0);
  });
}

/** steps kept per connection: a look at the signal between more commits than this drops the caches */
const STEPS = 16;
/** word of the commit in progress (its flag, then its header) */
const PENDING = 2 + STEPS * 2 * HEADER_WORDS;

const sameHeader = (a: Uint32Array, b: Uint32Array) => a.every((w, i) => w === b[i]);

/** the header when both of its copies agree (SQLite writes the second copy, then the first) */
function consistentHeader(header: Uint32Array): Uint32Array | null {
  for (let attempt = 0; attempt < 100; attempt++) {
    const first = header.slice(0, HEADER_WORDS);
    const second = header.slice(HEADER_WORDS, 2 * HEADER_WORDS);
    if (sameHeader(first, second)) return first;
  }
  return null;
}
