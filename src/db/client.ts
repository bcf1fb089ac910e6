import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Database as SqliteDatabase } from 'bun:sqlite';
import { SQL } from 'bun';
import { drizzle as drizzleSqlite } from 'drizzle-orm/bun-sqlite';
import { migrate as migrateSqlite } from 'drizzle-orm/bun-sqlite/migrator';
import { drizzle as drizzlePg, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import { migrate as migratePg } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { getTableColumns, getTableName, sql, type Column, type Table } from 'drizzle-orm';
import { pgKit, sqliteKit } from './kit';
import { defineSchema, type Schema } from './schema';
import { migrationsFolder } from './migrations';
import { mapWalIndex, OwnCommits, WAL_BACKFILL_WORD, WAL_MAX_FRAME_WORD, walChangeSignal, type WalIndexMap } from './sqlite-change-signal';
import type { BackgroundMessage, BackgroundReply, BackgroundRequest } from './sqlite-background';
import { GroupCommit } from '../lib/group-commit';

export type Db = PostgresJsDatabase<Record<string, never>>;
export type Dialect = 'sqlite' | 'postgres';
/**
 * What a tenant's cached reads are about: its keys and tenant row (`access`), its latest scores
 * (`scores`), or what a computed score reads besides the request (`inputs`: its re-score counts
 * and whether its books or connections name the NIF). `inputs` is moved by the transactions that
 * change those: re-scores, a connection becoming or ceasing to be active, a finished ERP sync, a
 * SAF-T import, an erasure. A request's new score does not move it, so a tenant refreshing scores
 * keeps its inputs cached.
 */
export type CacheAspect = 'access' | 'scores' | 'inputs';
export const CACHE_ASPECTS: readonly CacheAspect[] = ['access', 'scores', 'inputs'];
export type TenantTouch = { tenantId: string; aspect: CacheAspect };

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
   * Runs one prepared single-statement write of rows no read cache holds (hot paths: Idempotency-Key
   * records), committed when it resolves. SQLite: grouped with the other such writes of the moment
   * in one transaction, each in its own savepoint, under the write mutex (never inside another
   * request's open transaction; inside the caller's own withTx, in it). PostgreSQL: as its own
   * autocommit statement. `fn` runs its statement and nothing else: no other I/O (the batch's
   * transaction stays open while it waits), no write to a table a read cache holds (the commit
   * drops none).
   */
  writeOne<R>(fn: () => Promise<R>): Promise<R>;
  /**
   * Appends rows in transactions of their own (PostgreSQL: one COPY; SQLite: 250 rows each), off
   * the request thread where the database allows it (SQLite file: on the background worker's
   * connection). Resolves once all are committed.
   * For buffered hot-path records (usage), whose writes would otherwise compete with requests.
   * Rows whose key already exists are skipped, so a batch retried after a failure is idempotent.
   * Inside a transaction (withTx) the rows join it instead: committed or rolled back with it.
   */
  appendRows(table: Table, rows: Record<string, unknown>[]): Promise<void>;
  /**
   * For the metrics: connections of this process's pool that are busy (running a statement or in a
   * transaction) and open. PostgreSQL: as the server sees them (pg_stat_activity, by the pool's own
   * application_name), asked on a connection of its own so that an exhausted pool can still be
   * observed; null if that fails. SQLite: its transactions in progress, on its one connection.
   */
  poolUsage(): Promise<{ busy: number; open: number } | null>;
  /**
   * Changes whenever anything was committed, by this process or any other (SQLite: the wal-index
   * header in shared memory, see sqlite-change-signal.ts). null where that cannot be known cheaply
   * (PostgreSQL): there, in-process read caches are off and every request reads the database.
   */
  changeEpoch(): number | null;
  /**
   * Marks a tenant's cached reads as changed by the current transaction: `access` (its keys or its
   * tenant row), `scores` (its latest scores) or `inputs` (a computed score's: CacheAspect). Once the outermost transaction commits,
   * `tenantsChanged` is awaited with the marks before withTx returns, so the write's caller answers
   * only after every process will see it (PostgreSQL + Redis: per-tenant cache generations, see
   * cache-generations.ts). Only inside withTx.
   */
  touchTenant(tenantId: string, aspect: CacheAspect): void;
  /**
   * Inserts rows by group commit (lib/group-commit.ts): the rows of concurrent callers are committed
   * together, one transaction per event-loop turn on SQLite, one INSERT statement per batch on
   * PostgreSQL, and their marks (as touchTenant's) are announced once per batch. Resolves once the
   * rows are committed and announced, so the caller may answer. `marks` must name every cached read
   * the rows change: on SQLite such a commit moves the named tenants' generations
   * (localGeneration) and `unmarkedEpoch` does not move. Inside withTx it joins the transaction.
   */
  commitRows(table: Table, rows: Record<string, unknown>[], marks: TenantTouch[]): Promise<void>;
  /**
   * SQLite: changeEpoch without the commits of commitRows, whose changes show instead in
   * localGeneration. A cached read may rely on it only together with a local generation that covers
   * what it read (ReadCache does this when given a generation). PostgreSQL: null.
   */
  unmarkedEpoch(): number | null;
  /**
   * SQLite: how many commitRows batches marked this tenant with this aspect in this process: the
   * local counterpart of the PostgreSQL + Redis cache generations. PostgreSQL: undefined (the
   * generations are in Redis).
   */
  localGeneration(aspect: CacheAspect, tenantId: string): number | undefined;
  tenantsChanged: ((touched: TenantTouch[]) => Promise<unknown>) | null;
  /** PostgreSQL only: the raw client (advisory locks, LISTEN) */
  pg?: postgres.Sql;
  /** PostgreSQL only: Bun's native client, on which group commits run their one statement a batch */
  pgCommits?: { unsafe(text: string, params: string[]): Promise<unknown> };
}

const pgSchema = defineSchema(pgKit);
const sqliteSchema = defineSchema(sqliteKit);
const MIGRATION_LOCK_ID = 72_431_001;

export async function openDatabase(opts: { databaseUrl: string | null; dataDir: string; poolSize?: number; sqliteBusyTimeoutMs?: number; sqliteWalRestartBytes?: number }): Promise<Database> {
  return opts.databaseUrl ? openPostgres(opts.databaseUrl, opts.poolSize ?? 10) : openSqlite(opts.dataDir, opts.sqliteBusyTimeoutMs ?? 5000, opts.sqliteWalRestartBytes ?? 256 * 1024 * 1024);
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
  // a name of this pool alone (several processes, even with the same pid in containers, share the database)
  const poolName = `pt-api-${crypto.randomUUID().slice(0, 13)}`;
  const client = postgres(url, { max: poolSize, onnotice: () => {}, idle_timeout: 30, connection: { application_name: poolName } });
  let observer: ReturnType<typeof postgres> | null = null;
  const db = drizzlePg(client) as Db;
  const txStore = new AsyncLocalStorage<{ tx: Db; touched: Touched }>();
  // Group commits (measured 2026-11-27, docs/decisions.md):
  // - a batch is one INSERT statement (insertInOneStatement), sent by Bun's native client on
  //   connections of its own (named apart from the pool, whose use the metrics report): it encodes,
  //   sends and parses in native code, for half the CPU a batch of postgres.js's;
  // - two batches at once: as fast as five at 50 connections, in larger batches, which cost
  //   PostgreSQL ~10 % less CPU a row (its commit, WAL flush and wake-ups are per batch);
  // - the announcement of a batch's commit happens out of its slot (afterWrite): the next batch is
  //   written meanwhile, and a process that does not acknowledge (waited out for up to
  //   ANNOUNCE_WAIT_MS) holds no slot.
  const commits = new SQL(url, { max: Math.min(2, poolSize), idleTimeout: 30, connection: { application_name: `${poolName}-commits` } });
  const grouped = new GroupCommit<RowsToCommit>(
    (members) => insertInOneStatement(rowsByTable(members), (text, params) => database.pgCommits!.unsafe(text, params)),
    { startAtTurnEnd: true, maxInFlight: Math.min(2, poolSize), maxBatch: 500, afterWrite: (members) => announce(database, marksOf(members)) },
  );
  const database: Database = {
    dialect: 'postgres',
    writeOne: (fn) => fn(),
    insertMany: pgInsertBatches,
    async appendRows(table, rows) {
      if (!rows.length) return;
      if (txStore.getStore()) await insertSkippingExisting(database, table, rows); // joins the caller's transaction
      else await copyAppending(database, new Map([[table, rows]]));
    },
    async poolUsage() {
      observer ??= postgres(url, { max: 1, onnotice: () => {}, idle_timeout: 60, connect_timeout: 2, connection: { application_name: `${poolName}-metrics` } });
      try {
        const [row] = await observer<{ busy: number; open: number }[]>`
          select count(*) filter (where state is distinct from 'idle')::int as busy, count(*)::int as open
          from pg_stat_activity where application_name = ${poolName}`;
        return row ?? null;
      } catch {
        return null;
      }
    },
    changeEpoch: () => null,
    db,
    t: pgSchema,
    pg: client,
    pgCommits: commits,
    async withTx(fn) {
      const outer = txStore.getStore();
      if (outer) return fn(outer.tx);
      const touched: Touched = new Map();
      const result = await db.transaction((tx) => txStore.run({ tx: tx as unknown as Db, touched }, () => fn(tx as unknown as Db)));
      await announce(database, touched);
      return result;
    },
    touchTenant(tenantId, aspect) {
      touchIn(txStore.getStore()?.touched, tenantId, aspect);
    },
    commitRows(table, rows, marks) {
      const outer = txStore.getStore();
      if (!outer) return grouped.add({ table, rows, marks });
      for (const m of marks) touchIn(outer.touched, m.tenantId, m.aspect);
      return pgInsertBatches(outer.tx, table, rows);
    },
    unmarkedEpoch: () => null,
    localGeneration: () => undefined,
    tenantsChanged: null,
    async ping() {
      await client`select 1`;
    },
    async close() {
      await Promise.all([client.end({ timeout: 5 }), commits.close({ timeout: 5 }), observer?.end({ timeout: 1 })]);
    },
  };
  return database;
}

/**
 * Appended rows (usage, thousands at a time) by COPY in one transaction: the cheapest way into
 * PostgreSQL for the server (a third of the CPU per row of an INSERT from a JSON parameter,
 * measured) and for this process (one text, no parameters); scalar columns only, as the SQLite
 * worker's appends. Rows whose key already exists are skipped: COPY has no ON CONFLICT, so a batch
 * refused for a duplicate key (written again after a commit whose answer was lost) goes again as
 * inserts that skip the rows already there.
 */
async function copyAppending(database: Database, byTable: Map<Table, Record<string, unknown>[]>) {
  try {
    await database.pg!.begin(async (tx) => {
      for (const [table, rows] of byTable)
        for (const g of rowShapes(table, rows)) await copyRows(tx, table, g.used, g.rows);
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    for (const [table, rows] of byTable) await insertSkippingExisting(database, table, rows);
  }
}

async function copyRows(tx: postgres.TransactionSql, table: Table, used: { key: string; column: Column }[], rows: Record<string, unknown>[]) {
  // the text is built 500 rows at a time, letting requests in between: a flush of thousands of
  // rows built in one go held the event loop for milliseconds
  async function* lines() {
    for (let i = 0; i < rows.length; i += 500) {
      if (i) await new Promise((r) => setImmediate(r));
      yield copyLines(used, rows.slice(i, i + 500));
    }
  }
  const copy = tx.unsafe(`copy "${getTableName(table)}" (${columnList(used)}) from stdin`);
  // the COPY's own query promise also rejects when the connection dies mid-stream: the
  // pipeline reports that error, and this promise must not go unhandled (it ended the process)
  copy.catch(() => {});
  await pipeline(lines, await copy.writable());
}

/**
 * A group commit's rows, of any tables, in one statement: one round trip, atomic without BEGIN
 * and COMMIT (a COPY in a transaction took four), each column sent as one text array (a JSON column:
 * its texts joined by a record separator) and cast to its type. Measured against that COPY on 2026-11-27, batches of 13 score rows: this process
 * ~17 µs a row + ~140 µs a batch, a third less; PostgreSQL the same.
 * - Few distinct statement texts, since each is prepared on each connection: tables in name
 *   order, every column without a default in every statement (an absent value is NULL, as an
 *   insert would make it); only columns with a default split the rows by whether they are given.
 * - A row whose primary key exists is skipped (ON CONFLICT on the key alone): a batch written
 *   again item by item after a failure that came after its commit (its answer lost with the
 *   connection) finds its rows there. Any other unique violation fails, and fails only its caller.
 */
async function insertInOneStatement(byTable: Map<Table, Record<string, unknown>[]>, run: (text: string, params: string[]) => Promise<unknown>) {
  const statements: string[] = [];
  const params: string[] = [];
  for (const [table, rows] of [...byTable].sort((a, b) => getTableName(a[0]).localeCompare(getTableName(b[0]))))
    for (const g of insertShapes(table, rows)) {
      const first = params.length;
      const json = g.used.map((f) => JSON_COLUMNS.has(f.column.columnType));
      for (let i = 0; i < g.used.length; i++) {
        const { key, column } = g.used[i]!;
        const direct = DIRECT_COLUMNS.has(column.columnType);
        const items: string[] = new Array(g.rows.length);
        for (let r = 0; r < g.rows.length; r++) {
          const value = g.rows[r]![key];
          if (json[i]) items[r] = value == null ? '' : pgText(column, direct, value);
          else items[r] = value == null ? 'NULL' : arrayElement(pgText(column, direct, value));
        }
        params.push(json[i] ? items.join(RECORD_SEPARATOR) : '{' + items.join(',') + '}');
      }
      const names = g.used.map((_, i) => `c${i}`);
      // a JSON column's texts go as they are, split on a character JSON text never holds (JSON
      // escapes every control character; an empty text is NULL): in a text array every quote
      // would be escaped (most of the cost of building a batch), and a JSON array would be parsed
      // by PostgreSQL twice (measured)
      const columns = g.used.map((_, i) => (json[i] ? `unnest(string_to_array($${first + i + 1}::text, chr(30), ''))` : `unnest($${first + i + 1}::text[])`)).join(', ');
      const value = (f: { column: Column }, i: number) => `u.${names[i]}::${castType(table, f.column)}`;
      const key = fieldsOf(table).filter((f) => f.column.primary);
      statements.push(
        `insert into "${getTableName(table)}" (${columnList(g.used)}) select ${g.used.map(value).join(', ')} ` +
          `from rows from (${columns}) as u(${names.join(', ')})` +
          (key.length ? ` on conflict (${columnList(key)}) do nothing` : ''),
      );
    }
  const text = statements.length === 1 ? statements[0]! : `with ${statements.map((x, i) => `w${i} as (${x})`).join(', ')} select 1`;
  await run(text, params);
}

/** Rows by the defaulted columns they give: every column without a default is in every group. */
const insertShapes = (table: Table, rows: Record<string, unknown>[]) => groupByShape(table, rows, (column) => column.hasDefault);

/** The type a text array element is cast to: only types whose SQL name is a valid cast (no serial, no enum needing quotes). */
export function castType(table: Table, column: Column) {
  if (!CASTABLE_COLUMNS.has(column.columnType)) throw new Error(`insertInOneStatement: ${getTableName(table)}.${column.name} (${column.columnType}) has no cast here`);
  return column.getSQLType();
}
const CASTABLE_COLUMNS = new Set(['PgText', 'PgVarchar', 'PgInteger', 'PgSmallInt', 'PgBigInt53', 'PgBigInt64', 'PgReal', 'PgDoublePrecision', 'PgNumeric', 'PgBoolean', 'PgTimestamp', 'PgDate', 'PgUUID', 'PgJson', 'PgJsonb']);

/** One transaction of plain inserts that skip rows whose key exists (the slow, general way to append). */
function insertSkippingExisting(database: Database, table: Table, rows: Record<string, unknown>[]) {
  return database.withTx(async (tx) => {
    for (let i = 0; i < rows.length; i += 500) await tx.insert(table as never).values(rows.slice(i, i + 500) as never).onConflictDoNothing();
  });
}

async function pgInsertBatches(tx: Db, table: Table, rows: Record<string, unknown>[]) {
  for (let i = 0; i < rows.length; i += 500) {
    await tx.insert(table as never).values(rows.slice(i, i + 500) as never);
  }
}

/**
 * The background worker of a SQLite file database (sqlite-background.ts): checkpoints, and
 * appends encoded here with Drizzle's own column mappings (dates, booleans) so the worker needs
 * no schema. Each append resolves when its transaction committed.
 */
type Append = (table: Table, rows: Record<string, unknown>[]) => Promise<void>;
type BackgroundDone = Extract<BackgroundReply, { type: 'done' }>;

function sqliteBackground(file: string, busyTimeoutMs: number, catchUpFrames: number, walIndex: WalIndexMap | null, ownCommits: OwnCommits, commitSection: SharedArrayBuffer, fallback: Append, log: (msg: string) => void) {
  // In a `bun build --compile` binary the worker is an extra entry point, found by its path from
  // the bundle's root (src/); from source, next to this file.
  const compiled = import.meta.url.includes('/$bunfs/');
  const worker = new Worker(compiled ? './db/sqlite-background.ts' : new URL('./sqlite-background.ts', import.meta.url).href);
  worker.postMessage({ type: 'open', file, checkpointEveryMs: 500, catchUpFrames, catchUpEveryMs: 25, busyTimeoutMs, ownCommits: ownCommits.shared, commitSection, walIndexAddress: walIndex?.address ?? null } satisfies BackgroundMessage);
  worker.unref();
  const pending = new Map<number, { resolve: (reply: BackgroundDone) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let stopped: (() => void) | null = null;
  let broken = false;
  // a worker that cannot start or dies: appends go through the main connection from then on
  worker.onerror = (e) => {
    if (broken) return;
    broken = true;
    log(`sqlite background worker failed (${e.message}); appends run on the main connection`);
    for (const p of pending.values()) p.reject(new Error('sqlite background worker failed'));
    pending.clear();
    stopped?.();
  };
  worker.onmessage = (e: MessageEvent<BackgroundReply>) => {
    const m = e.data;
    if (m.type === 'stopped') return stopped?.();
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (!pending.size) worker.unref();
    if (m.error) p?.reject(new Error(`background ${m.of} failed: ${m.error}`));
    else p?.resolve(m);
  };
  /** a message answered by one reply; the worker keeps the process alive until it has replied */
  const request = (message: BackgroundRequest) =>
    new Promise<BackgroundDone>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ ...message, id } satisfies BackgroundMessage);
    });
  return {
    append(table: Table, rows: Record<string, unknown>[]): Promise<void> {
      if (broken) return fallback(table, rows);
      let groups;
      try {
        groups = rowShapes(table, rows);
      } catch (err) {
        return Promise.reject(err);
      }
      const messageGroups = groups.map((g) => {
        const values: unknown[] = [];
        for (const row of g.rows) for (const f of g.used) values.push(f.column.mapToDriverValue(row[f.key]));
        const sql = `${insertSql(table, g.used)} on conflict do nothing`;
        // as JSON text: one string copies far faster than a structured clone of many small arrays
        return { sql, width: g.used.length, values: JSON.stringify(values) };
      });
      return request({ type: 'append', groups: messageGroups }).then(() => {});
    },
    /**
     * A checkpoint of the whole WAL (the caller holds the main connection's writes); resolves with
     * whether it copied everything (false: a reader kept it from finishing).
     */
    restart(): Promise<boolean> {
      if (broken) return Promise.resolve(true);
      return request({ type: 'restart' }).then((done) => !done.incomplete);
    },
    /** a last checkpoint, then the worker ends (bounded, so shutdown never hangs) */
    async stop() {
      if (broken) return;
      const done = new Promise<void>((r) => (stopped = r));
      worker.postMessage({ type: 'stop' } satisfies BackgroundMessage);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([done, new Promise((r) => (timer = setTimeout(r, 1000)))]);
      clearTimeout(timer);
      worker.terminate();
    },
  };
}

/** one caller's rows for commitRows */
type RowsToCommit = { table: Table; rows: Record<string, unknown>[]; marks: TenantTouch[] };

function rowsByTable(members: RowsToCommit[]) {
  const byTable = new Map<Table, Record<string, unknown>[]>();
  for (const m of members) {
    const rows = byTable.get(m.table);
    if (rows) rows.push(...m.rows);
    else byTable.set(m.table, [...m.rows]);
  }
  return byTable;
}

function marksOf(members: RowsToCommit[]): Touched {
  const touched: Touched = new Map();
  for (const m of members) for (const { tenantId, aspect } of m.marks) touchIn(touched, tenantId, aspect);
  return touched;
}

/** the marks of one transaction, deduplicated */
type Touched = Map<string, TenantTouch>;

const touchKey = (aspect: CacheAspect, tenantId: string) => `${aspect}:${tenantId}`;

function touchIn(touched: Touched | undefined, tenantId: string, aspect: CacheAspect) {
  if (!touched) throw new Error('touchTenant outside a transaction');
  touched.set(touchKey(aspect, tenantId), { tenantId, aspect });
}

/** after a commit: only a database without a change signal of its own (PostgreSQL) needs announcing */
async function announce(database: Database, touched: Touched) {
  if (touched.size && database.tenantsChanged && database.changeEpoch() === null) await database.tenantsChanged([...touched.values()]);
}

/**
 * Appended rows grouped by shape (which columns hold a value): each group is one statement that
 * leaves the other columns to their defaults. Scalar columns only (values travel as text).
 */
function rowShapes(table: Table, rows: Record<string, unknown>[]) {
  if (fieldsOf(table).some((f) => f.column.dataType === 'json')) throw new Error(`appendRows: ${getTableName(table)} has JSON columns`);
  return groupByShape(table, rows, () => true);
}

/**
 * Rows grouped by which of the columns `splitOn` picks hold a value (a bit mask); a group's `used`
 * columns are those of them present plus every column not split on.
 */
function groupByShape(table: Table, rows: Record<string, unknown>[], splitOn: (column: Column) => boolean) {
  const fields = fieldsOf(table);
  const split = fields.map((f) => splitOn(f.column));
  const shapes = new Map<number, { used: typeof fields; rows: Record<string, unknown>[] }>();
  for (const row of rows) {
    let shape = 0;
    for (let i = 0; i < fields.length; i++) if (split[i] && row[fields[i]!.key] != null) shape |= 1 << i;
    let group = shapes.get(shape);
    if (!group) shapes.set(shape, (group = { used: fields.filter((_, i) => !split[i] || shape & (1 << i)), rows: [] }));
    group.rows.push(row);
  }
  return [...shapes.entries()].sort((a, b) => a[0] - b[0]).map(([, g]) => g);
}

/** which columns of a table hold a value in this row, as a bit mask */
function rowShape(fields: { key: string }[], row: Record<string, unknown>) {
  let shape = 0;
  for (let i = 0; i < fields.length; i++) if (row[fields[i]!.key] != null) shape |= 1 << i;
  return shape;
}

const insertSql = (table: Table, used: { column: Column }[]) => `insert into "${getTableName(table)}" (${columnList(used)}) values (${used.map(() => '?').join(', ')})`;

const columnList = (fields: { column: Column }[]) => fields.map((f) => `"${f.column.name}"`).join(', ');

/** Rows of one shape in COPY's text format (never null here: a row shape holds only the values present). */
function copyLines(used: { key: string; column: Column }[], rows: Record<string, unknown>[]): string {
  const direct = used.map((f) => DIRECT_COLUMNS.has(f.column.columnType));
  const lines: string[] = new Array(rows.length);
  const fields: string[] = new Array(used.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    for (let i = 0; i < used.length; i++) {
      const { key, column } = used[i]!;
      fields[i] = copyEscape(pgText(column, direct[i]!, row[key]));
    }
    lines[r] = fields.join('\t');
  }
  return lines.join('\n') + '\n';
}
/**
 * A value as PostgreSQL's text input for its column, before COPY's or an array literal's escaping.
 * `direct`: a column whose driver mapping is the identity (or toISOString for a timestamp), written
 * without the per-value mapping call, which was most of the cost of building a batch.
 */
function pgText(column: Column, direct: boolean, value: unknown): string {
  if (!direct) return String(column.mapToDriverValue(value));
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (value instanceof Date) return value.toISOString();
  return String(value);
}
/** One element of a PostgreSQL array literal: always quoted (so never NULL), quotes and backslashes escaped. */
const arrayElement = (text: string) => '"' + (/["\\]/.test(text) ? text.replace(/["\\]/g, '\\$&') : text) + '"';
const JSON_COLUMNS = new Set(['PgJson', 'PgJsonb']);
const RECORD_SEPARATOR = '\x1e';
const DIRECT_COLUMNS = new Set(['PgText', 'PgInteger', 'PgReal', 'PgDoublePrecision', 'PgBoolean', 'PgTimestamp', 'PgBigInt53']);
const copyEscape = (text: string) => (/[\\\t\n\r]/.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]!) : text);
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** a table's columns with the property name under which each one's value sits in a row object */
const tableFields = new WeakMap<Table, { key: string; column: Column }[]>();
function fieldsOf(table: Table) {
  let fields = tableFields.get(table);
  if (!fields) {
    fields = Object.entries(getTableColumns(table)).map(([key, column]) => ({ key, column: column as Column }));
    if (fields.length > 32) throw new Error(`${getTableName(table)} has more columns than a row shape mask holds`);
    tableFields.set(table, fields);
  }
  return fields;
}

/**
 * busyTimeoutMs: how long a statement waits for another process's lock before failing (then 503).
 * walRestartBytes: the WAL size past which writes pause for a checkpoint that restarts it.
 */
function openSqlite(dataDir: string, busyTimeoutMs: number, walRestartBytes: number): Database {
  let file = ':memory:';
  if (dataDir !== ':memory:') {
    mkdirSync(dataDir, { recursive: true });
    file = join(resolve(dataDir), 'service.sqlite');
  }
  const raw = new SqliteDatabase(file, { create: true });
  raw.exec('PRAGMA journal_mode = WAL');
  raw.exec('PRAGMA synchronous = NORMAL');
  const busyTimeout = Math.max(0, Math.floor(busyTimeoutMs));
  raw.exec(`PRAGMA busy_timeout = ${busyTimeout}`);
  raw.exec('PRAGMA secure_delete = ON'); // erased data is overwritten, not left in free pages
  // Migrations that rebuild a parent table fail with foreign keys on: migrate, check, then enable.
  raw.exec('PRAGMA foreign_keys = OFF');
  const db = drizzleSqlite(raw) as unknown as Db;
  migrateSqlite(db as never, { migrationsFolder: migrationsFolder('sqlite') });
  const violations = raw.query('PRAGMA foreign_key_check').all();
  if (violations.length) throw new Error(`sqlite migration left ${violations.length} foreign key violations`);
  raw.exec('PRAGMA foreign_keys = ON');
  // WAL checkpoints (and their fsyncs) and buffered appends run on a worker thread, not on the
  // event loop; appends use the main connection in memory, or when the worker failed
  const appendHere: Append = (table, rows) => insertSkippingExisting(database, table, rows);
  const logError = (msg: string) => console.error(JSON.stringify({ time: new Date().toISOString(), level: 'error', msg }));
  let background: ReturnType<typeof sqliteBackground> | null = null;
  const ownCommits = new OwnCommits();
  const commitSection = new SharedArrayBuffer(4); // see OwnCommits.writer
  // mapped once for this process (the change signal and the background worker's commits): its
  // descriptor is closed only after every connection (see WalIndexMap)
  const walIndex = file === ':memory:' ? null : mapWalIndex(file);
  const pageSize = (raw.query('PRAGMA page_size').get() as { page_size: number }).page_size;
  if (file !== ':memory:') {
    raw.exec('PRAGMA wal_autocheckpoint = 0');
    raw.exec('PRAGMA journal_size_limit = 67108864'); // the WAL is truncated back to 64 MiB when it restarts
    // past half the restart size, the worker's checkpoints catch up every 25 ms
    background = sqliteBackground(file, busyTimeoutMs, Math.ceil(walRestartBytes / pageSize / 2), walIndex, ownCommits, commitSection, appendHere, logError);
  }

  // bun:sqlite is one connection: a transaction is BEGIN IMMEDIATE … COMMIT behind an in-process
  // mutex, so that another request's awaits cannot slip its statements into ours.
  let tail: Promise<void> = Promise.resolve();
  let inFlight = 0;
  async function exclusive<R>(fn: () => Promise<R>): Promise<R> {
    const previous = tail;
    let release!: () => void;
    tail = new Promise((r) => (release = r));
    await previous;
    inFlight++;
    try {
      return await fn();
    } finally {
      inFlight--;
      release();
    }
  }
  const inTx = new AsyncLocalStorage<Touched>();
  // commits of withTx on this connection, and of commitRows (counted apart: see unmarkedEpoch)
  let localCommits = 0;
  let markedCommits = 0;
  // file databases: any connection's commit shows in the shared wal-index header. Without it (in
  // memory, or no -shm to map): our own commits, and PRAGMA data_version for other connections'
  const dataVersion = raw.prepare('PRAGMA data_version');
  let lastDataVersion = -1;
  const foreignCommits = () => {
    const v = (dataVersion.values()[0] as number[])[0]!;
    if (v !== lastDataVersion) {
      lastDataVersion = v;
      localCommits++;
    }
  };
  // commitRows' commits, declared so that the unmarked signal can tell them from any other
  const markedOwn = new OwnCommits();
  const markedWriter = OwnCommits.writer(walIndex?.header ?? null, markedOwn.shared, commitSection);
  // rollbacks of this connection: other requests may have read (and cached) what the transaction
  // had written before it was undone, which no commit will ever announce
  let rollbacks = 0;
  const fullSignal =
    (walIndex ? walChangeSignal(walIndex.header, [ownCommits]) : null) ??
    (() => {
      foreignCommits();
      return localCommits + markedCommits;
    });
  const unmarkedSignal =
    (walIndex ? walChangeSignal(walIndex.header, [ownCommits, markedOwn]) : null) ??
    (() => {
      foreignCommits();
      return localCommits;
    });
  const changeEpoch = () => fullSignal() + rollbacks;
  const unmarkedEpoch = () => unmarkedSignal() + rollbacks;
  const rollback = () => {
    if (!raw.inTransaction) return;
    raw.exec('ROLLBACK');
    rollbacks++;
  };
  // by touchKey
  const generations = new Map<string, number>();
  // PASSIVE checkpoints never catch up with sustained writes (frames arrive during every pass), so
  // the WAL, and every read's search of its index, would grow without end: past a size, this
  // connection's writes wait (on the event loop) for one checkpoint that copies all of it
  let restartingWal = false;
  let restartNotBefore = 0;
  let restartBackoffMs = 250;
  const restartWalIfLarge = () => {
    if (!background || !walIndex || restartingWal || performance.now() < restartNotBefore) return;
    const frames = walIndex.header[WAL_MAX_FRAME_WORD]!;
    // when the background checkpoint has nearly caught up (at most 1/8 of the size or 8 MiB to copy:
    // the pause is then mostly its fsyncs), or the WAL is twice the size (it has not been catching up)
    const behind = frames - walIndex.header[WAL_BACKFILL_WORD]!;
    if (frames * pageSize < walRestartBytes || (behind * pageSize > Math.min(walRestartBytes / 8, 8 * 1024 * 1024) && frames * pageSize < 2 * walRestartBytes)) return;
    restartingWal = true;
    void exclusive(async () => {
      // a read kept it from copying everything: each try pauses the writes, so the next one waits,
      // longer each time (0.25 s doubling up to 5 s: a long read elsewhere, not a passing one). Told
      // by the checkpoint itself: the WAL's header can already show the worker's next append, which
      // restarts the WAL at once (read as "not all copied", that made the WAL grow for 0.25 s)
      if (!(await background!.restart())) {
        restartNotBefore = performance.now() + restartBackoffMs;
        restartBackoffMs = Math.min(5000, restartBackoffMs * 2);
      } else restartBackoffMs = 250;
    })
      .catch((err) => logError(`sqlite WAL checkpoint failed: ${err instanceof Error ? err.message : err}`))
      .finally(() => (restartingWal = false));
  };
  // BEGIN IMMEDIATE without SQLite's busy handler, which sleeps the whole thread (the event loop)
  // 1 ms and more at a time while the worker's usage append holds the write lock (~40 a second
  // under load: measured ~1 % of the thread, and as many 1 ms stalls): tried again from the event
  // loop instead, until the busy timeout, then its error as before. Any busy code is tried again,
  // as the busy handler would (a lock, a snapshot another commit overtook, a WAL being recovered).
  const noBusyWait = raw.prepare('PRAGMA busy_timeout = 0');
  const busyWait = raw.prepare(`PRAGMA busy_timeout = ${busyTimeout}`);
  const beginWrite = async () => {
    const deadline = performance.now() + busyTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      let refused: unknown = null;
      noBusyWait.run();
      try {
        raw.exec('BEGIN IMMEDIATE');
      } catch (err) {
        refused = err;
      }
      try {
        busyWait.run(); // before anything else runs on this connection: reads keep the configured wait
      } catch (err) {
        rollback();
        throw err;
      }
      if (refused === null) return;
      if (!String((refused as { code?: unknown }).code).startsWith('SQLITE_BUSY') || performance.now() >= deadline) throw refused;
      await (attempt < 16 ? new Promise((r) => setImmediate(r)) : Bun.sleep(1));
    }
  };
  // one transaction per event-loop turn for the rows of that turn's requests, and at most one a
  // millisecond: at half the maximum rate a turn held 1-2 requests, and each COMMIT's fixed cost
  // (the index pages it writes to the WAL again) made a request cost ~20 % more CPU (measured)
  /**
   * One transaction of the writes that commit together (commitRows', writeOne's), declared as a
   * marked commit (OwnCommits: it drops no read cache but those of the tenants it marks): `work`
   * writes, and returns the cache marks it touched.
   */
  const markedTransaction = (work: () => Promise<Iterable<string>>) =>
    exclusive(async () => {
      await beginWrite();
      let marks: Iterable<string>;
      try {
        marks = await work();
        markedWriter.beforeCommit();
        raw.exec('COMMIT');
      } catch (err) {
        markedWriter.release();
        rollback();
        throw err;
      }
      markedWriter.afterCommit();
      markedCommits++;
      for (const key of marks) generations.set(key, (generations.get(key) ?? 0) + 1);
      restartWalIfLarge();
    });
  const grouped = new GroupCommit<RowsToCommit>(
    (members) =>
      markedTransaction(async () => {
        for (const [table, rows] of rowsByTable(members)) await database.insertMany(db, table, rows);
        return marksOf(members).keys();
      }),
    { startAtTurnEnd: true, maxBatch: 1000, minIntervalMs: 1 },
  );
  // single-statement writes of rows no read cache holds (Idempotency-Key claims and answers): the
  // requests of an event-loop turn in one transaction, each in a savepoint of its own (one that
  // fails is undone alone and its caller gets its error), committed before any of them is answered.
  // Declared as marked commits, as commitRows' are: they drop no read cache. One transaction each
  // (withTx) had made an idempotent request two commits on the one connection and two drops of the
  // key cache: 2.2 k req/s for a cached score with an Idempotency-Key against 42 k without (measured)
  type OneWrite = { fn: () => Promise<unknown>; result?: unknown; failed?: { error: unknown } };
  const groupedWrites = new GroupCommit<OneWrite>(
    (items) =>
      markedTransaction(async () => {
        const touched: Touched = new Map();
        for (const item of items) {
          item.failed = undefined;
          raw.exec('SAVEPOINT one_write');
          try {
            item.result = await inTx.run(touched, item.fn);
            raw.exec('RELEASE one_write');
          } catch (error) {
            // an error that ended the whole transaction (disk full, I/O): the batch's, as it is
            if (!raw.inTransaction) throw error;
            raw.exec('ROLLBACK TO one_write');
            raw.exec('RELEASE one_write');
            rollbacks++; // (what it wrote may have been read meanwhile: see rollback)
            item.failed = { error };
          }
        }
        return touched.keys();
      }),
    { startAtTurnEnd: true, maxBatch: 1000 },
  );
  // one prepared insert per table and row shape (columns holding a value; nulls are left to the
  // default), run by bun:sqlite itself: Drizzle's prepared query maps every value through its
  // placeholders again (~5 % of a force-refreshed score's CPU, measured)
  const inserts = new WeakMap<Table, Map<number, { statement: ReturnType<typeof raw.prepare>; used: { key: string; column: Column }[] }>>();
  const database: Database = {
    dialect: 'sqlite',
    async writeOne<R>(fn: () => Promise<R>): Promise<R> {
      if (inTx.getStore()) return fn(); // inside the caller's transaction: in it
      const item: OneWrite = { fn };
      await groupedWrites.add(item);
      if (item.failed) throw item.failed.error;
      return item.result as R;
    },
    async insertMany(_tx, table, rows) {
      const fields = fieldsOf(table);
      let byShape = inserts.get(table);
      if (!byShape) inserts.set(table, (byShape = new Map()));
      for (const row of rows) {
        const shape = rowShape(fields, row);
        let insert = byShape.get(shape);
        if (!insert) {
          const used = fields.filter((_, i) => shape & (1 << i));
          byShape.set(shape, (insert = { statement: raw.prepare(insertSql(table, used)), used }));
        }
        const values = new Array(insert.used.length);
        for (let i = 0; i < values.length; i++) values[i] = insert.used[i]!.column.mapToDriverValue(row[insert.used[i]!.key]);
        insert.statement.run(...values);
      }
    },
    async appendRows(table, rows) {
      // 250 rows a transaction: the worker's write lock blocks the service's own writes meanwhile
      for (let i = 0; i < rows.length; i += 250) {
        const chunk = rows.slice(i, i + 250);
        // inside a transaction of this connection: in it (the worker would wait for its lock)
        await (background && !inTx.getStore() ? background.append(table, chunk) : appendHere(table, chunk));
      }
    },
    poolUsage: async () => ({ busy: inFlight, open: 1 }),
    changeEpoch,
    db,
    t: sqliteSchema as unknown as Schema,
    async withTx(fn) {
      if (inTx.getStore()) return fn(db);
      const touched: Touched = new Map();
      const result = await exclusive(async () => {
        await beginWrite();
        try {
          const r = await inTx.run(touched, () => fn(db));
          raw.exec('COMMIT');
          localCommits++;
          restartWalIfLarge();
          return r;
        } catch (err) {
          rollback();
          throw err;
        }
      });
      await announce(database, touched);
      return result;
    },
    touchTenant(tenantId, aspect) {
      touchIn(inTx.getStore(), tenantId, aspect);
    },
    commitRows(table, rows, marks) {
      const outer = inTx.getStore();
      if (!outer) return grouped.add({ table, rows, marks });
      for (const m of marks) touchIn(outer, m.tenantId, m.aspect);
      return database.insertMany(db, table, rows);
    },
    unmarkedEpoch,
    localGeneration: (aspect, tenantId) => generations.get(touchKey(aspect, tenantId)) ?? 0,
    tenantsChanged: null,
    async ping() {
      raw.query('select 1').get();
    },
    async close() {
      await tail;
      await background?.stop();
      raw.close();
      walIndex?.close();
    },
  };
  return database;
}

/** A unique-index violation on either dialect (PostgreSQL 23505, SQLite SQLITE_CONSTRAINT_UNIQUE), possibly wrapped by Drizzle. */
export function isUniqueViolation(err: unknown): boolean {
  for (let e = err as { code?: unknown; errno?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (e.code === '23505' || e.errno === '23505' || e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.errno === 2067) return true;
    if (typeof e.message === 'string' && e.message.includes('UNIQUE constraint failed')) return true;
  }
  return false;
}
