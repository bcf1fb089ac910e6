import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Database as SqliteDatabase } from 'bun:sqlite';
import { drizzle as drizzleSqlite } from 'drizzle-orm/bun-sqlite';
import { migrate as migrateSqlite } from 'drizzle-orm/bun-sqlite/migrator';
import { drizzle as drizzlePg, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import { migrate as migratePg } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { getTableName, sql, type Table } from 'drizzle-orm';
import { pgKit, sqliteKit } from './kit';
import { defineSchema, type Schema } from './schema';
import { migrationsFolder } from './migrations';

export type Db = PostgresJsDatabase<Record<string, never>>;
export type Dialect = 'sqlite' | 'postgres';

export interface Database {
  dialect: Dialect;
  /** for reads; writes go through withTx */
  db: Db;
  t: Schema;
  /** Runs fn in one transaction (nested calls join the outer one). Every write uses it. */
  withTx<R>(fn: (tx: Db) => Promise<R>): Promise<R>;
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * Appends many rows inside the caller's transaction, the cheap way for each database: one
   * prepared single-row insert per row on SQLite (no round trips; Drizzle's multi-row builder costs
   * ~5x more per row there), multi-row inserts of 500 on PostgreSQL (round trips dominate).
   */
  insertMany(tx: Db, table: Table, rows: Record<string, unknown>[]): Promise<void>;
  /**
   * Runs one prepared single-statement write (hot paths). SQLite: under the write mutex, so it never
   * lands inside another request's open transaction. PostgreSQL: as its own autocommit statement.
   */
  writeOne<R>(fn: () => Promise<R>): Promise<R>;
  /** transactions in progress (metrics) */
  inFlight(): number;
  /**
   * Changes whenever anything was committed, by this process or any other (SQLite: a local commit
   * counter plus PRAGMA data_version). null where that cannot be known cheaply (PostgreSQL): there,
   * in-process read caches are off and every request reads the database.
   */
  changeEpoch(): string | null;
  /** PostgreSQL only: the raw client (advisory locks, LISTEN) */
  pg?: postgres.Sql;
}

const pgSchema = defineSchema(pgKit);
const sqliteSchema = defineSchema(sqliteKit);
const MIGRATION_LOCK_ID = 72_431_001;

export async function openDatabase(opts: { databaseUrl: string | null; dataDir: string; poolSize?: number }): Promise<Database> {
  return opts.databaseUrl ? openPostgres(opts.databaseUrl, opts.poolSize ?? 10) : openSqlite(opts.dataDir);
}

async function openPostgres(url: string, poolSize: number): Promise<Database> {
  // Migrate on one dedicated connection under an advisory lock: several processes may start at once.
  const lockConn = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await lockConn`select pg_advisory_lock(${MIGRATION_LOCK_ID})`;
    await migratePg(drizzlePg(lockConn), { migrationsFolder: migrationsFolder('pg') });
    await lockConn`select pg_advisory_unlock(${MIGRATION_LOCK_ID})`;
  } finally {
    await lockConn.end({ timeout: 5 });
  }
  const client = postgres(url, { max: poolSize, onnotice: () => {}, idle_timeout: 30 });
  const db = drizzlePg(client) as Db;
  const txStore = new AsyncLocalStorage<Db>();
  let inFlight = 0;
  return {
    dialect: 'postgres',
    writeOne: (fn) => fn(),
    async insertMany(tx, table, rows) {
      for (let i = 0; i < rows.length; i += 500) await tx.insert(table as never).values(rows.slice(i, i + 500) as never);
    },
    inFlight: () => inFlight,
    changeEpoch: () => null,
    db,
    t: pgSchema,
    pg: client,
    withTx(fn) {
      const outer = txStore.getStore();
      if (outer) return fn(outer);
      inFlight++;
      return db.transaction((tx) => txStore.run(tx as unknown as Db, () => fn(tx as unknown as Db))).finally(() => inFlight--);
    },
    async ping() {
      await client`select 1`;
    },
    async close() {
      await client.end({ timeout: 5 });
    },
  };
}

function openSqlite(dataDir: string): Database {
  let file = ':memory:';
  if (dataDir !== ':memory:') {
    mkdirSync(dataDir, { recursive: true });
    file = join(resolve(dataDir), 'service.sqlite');
  }
  const raw = new SqliteDatabase(file, { create: true });
  raw.exec('PRAGMA journal_mode = WAL');
  raw.exec('PRAGMA synchronous = NORMAL');
  raw.exec('PRAGMA busy_timeout = 5000');
  raw.exec('PRAGMA secure_delete = ON'); // erased data is overwritten, not left in free pages
  // Migrations that rebuild a parent table fail with foreign keys on: migrate, check, then enable.
  raw.exec('PRAGMA foreign_keys = OFF');
  const db = drizzleSqlite(raw) as unknown as Db;
  migrateSqlite(db as never, { migrationsFolder: migrationsFolder('sqlite') });
  const violations = raw.query('PRAGMA foreign_key_check').all();
  if (violations.length) throw new Error(`sqlite migration left ${violations.length} foreign key violations`);
  raw.exec('PRAGMA foreign_keys = ON');
  // WAL checkpoints (and their fsyncs) run on a worker thread, not on the event loop
  let checkpointer: Worker | null = null;
  if (file !== ':memory:') {
    raw.exec('PRAGMA wal_autocheckpoint = 0');
    raw.exec('PRAGMA journal_size_limit = 67108864'); // the WAL is truncated back to 64 MiB when it restarts
    checkpointer = new Worker(new URL('./sqlite-checkpointer.ts', import.meta.url).href);
    checkpointer.postMessage({ file, everyMs: 500 });
    checkpointer.unref();
  }

  // bun:sqlite is one connection: a transaction is BEGIN IMMEDIATE … COMMIT behind an in-process
  // mutex, so that another request's awaits cannot slip its statements into ours.
  let tail: Promise<void> = Promise.resolve();
  const inTx = new AsyncLocalStorage<true>();
  let inFlight = 0;
  let localCommits = 0;
  const dataVersion = raw.prepare('PRAGMA data_version');
  // one prepared insert per table and row shape (columns holding a value; nulls are left to the default)
  const inserts = new Map<string, { execute(p: Record<string, unknown>): Promise<unknown> }>();
  const database: Database = {
    dialect: 'sqlite',
    writeOne: (fn) => database.withTx(() => fn()),
    async insertMany(_tx, table, rows) {
      for (const row of rows) {
        const keys = Object.keys(row).filter((k) => row[k] !== null && row[k] !== undefined);
        const id = `${getTableName(table)}:${keys.join(',')}`;
        let stmt = inserts.get(id);
        if (!stmt) {
          stmt = (db.insert(table as never).values(Object.fromEntries(keys.map((k) => [k, sql.placeholder(k)])) as never) as unknown as { prepare(n: string): typeof stmt }).prepare(id)!;
          inserts.set(id, stmt);
        }
        await stmt.execute(row);
      }
    },
    inFlight: () => inFlight,
    changeEpoch: () => `${localCommits}:${(dataVersion.values()[0] as number[])[0]}`,
    db,
    t: sqliteSchema as unknown as Schema,
    async withTx(fn) {
      if (inTx.getStore()) return fn(db);
      const previous = tail;
      let release!: () => void;
      tail = new Promise((r) => (release = r));
      await previous;
      inFlight++;
      try {
        raw.exec('BEGIN IMMEDIATE');
        try {
          const result = await inTx.run(true, () => fn(db));
          raw.exec('COMMIT');
          localCommits++;
          return result;
        } catch (err) {
          raw.exec('ROLLBACK');
          throw err;
        }
      } finally {
        inFlight--;
        release();
      }
    },
    async ping() {
      raw.query('select 1').get();
    },
    async close() {
      await tail;
      if (checkpointer) {
        // a last checkpoint on the worker, then stop it (bounded, so shutdown never hangs)
        const w = checkpointer;
        const stopped = new Promise((r) => w.addEventListener('message', r, { once: true }));
        w.postMessage('stop');
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([stopped, new Promise((r) => (timer = setTimeout(r, 1000)))]);
        clearTimeout(timer);
        w.terminate();
      }
      raw.close();
    },
  };
  return database;
}
