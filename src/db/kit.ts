/**
 * One data model on two databases.
 *
 * The pattern: every table is written once, in `schema.ts`, against a small "kit" of column
 * builders. There are two kits with the same names: `pgKit` (drizzle pg-core) and `sqliteKit`
 * (drizzle sqlite-core). `defineSchema(kit)` is called once per dialect. The TypeScript types of
 * the tables and of the database handle are the PostgreSQL ones; the SQLite kit is cast to them,
 * which is sound for the subset of Drizzle the repositories use (select/insert/update/delete,
 * returning, onConflict*, eq/and/or/lt/gt/inArray, count). Both dialects return Date for
 * timestamps, objects for JSON and booleans for flags. The whole test suite runs on both
 * databases, which is what catches a dialect-only call. Transactions go through `withTx`
 * (src/db/client.ts), never `db.transaction`, because bun:sqlite's Drizzle transactions do not
 * roll back.
 */
import * as pg from 'drizzle-orm/pg-core';
import * as sq from 'drizzle-orm/sqlite-core';

export const pgKit = {
  table: pg.pgTable,
  text: (name: string) => pg.text(name),
  int: (name: string) => pg.integer(name),
  /** 64-bit integers (money in cents, byte counts) that still fit a JS number */
  bigint: (name: string) => pg.bigint(name, { mode: 'number' }),
  real: (name: string) => pg.doublePrecision(name),
  bool: (name: string) => pg.boolean(name),
  ts: (name: string) => pg.timestamp(name, { withTimezone: true, mode: 'date' }),
  json: <T>(name: string) => pg.jsonb(name).$type<T>(),
  /**
   * A JSON document stored and read whole, never queried inside: PostgreSQL's `json` keeps the
   * text as sent (validated, not parsed into jsonb's binary form), the cheaper write
   */
  doc: <T>(name: string) => pg.json(name).$type<T>(),
  index: pg.index,
  uniqueIndex: pg.uniqueIndex,
};

export type Kit = typeof pgKit;

const sqliteJson = <T>(name: string) => sq.text(name, { mode: 'json' }).$type<T>();

export const sqliteKit = {
  table: sq.sqliteTable,
  text: (name: string) => sq.text(name),
  int: (name: string) => sq.integer(name),
  bigint: (name: string) => sq.integer(name),
  real: (name: string) => sq.real(name),
  bool: (name: string) => sq.integer(name, { mode: 'boolean' }),
  ts: (name: string) => sq.integer(name, { mode: 'timestamp_ms' }),
  json: sqliteJson,
  doc: sqliteJson, // SQLite stores JSON as text either way
  index: sq.index,
  uniqueIndex: sq.uniqueIndex,
} as unknown as Kit;
