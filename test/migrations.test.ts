import { afterAll, describe, expect, test } from 'bun:test';
import { Database as Sqlite } from 'bun:sqlite';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { and, eq } from 'drizzle-orm';
import { drizzle as drizzleSqlite } from 'drizzle-orm/bun-sqlite';
import { migrate as migrateSqlite } from 'drizzle-orm/bun-sqlite/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/postgres-js';
import { migrate as migratePg } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { migrationsFolder } from '../src/db/migrations';
import { freshDatabase, makeApp, TEST_DB } from './helpers';

// The first migration of 2026-11-27's write-path changes on each dialect: the sector folded into
// the score lookup index (both), and documents stored as json (PostgreSQL).
const FIRST_NEW = { pg: '0017_score_lookup_covers_sector', sqlite: '0016_score_lookup_covers_sector' } as const;
const dialect = TEST_DB === 'postgres' ? 'pg' : 'sqlite';

/** A copy of the migrations folder whose journal ends just before `tag`. */
function migrationsBefore(tag: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'migrations-before-'));
  cpSync(migrationsFolder(dialect), dir, { recursive: true });
  const journalFile = join(dir, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { tag: string }[] };
  const at = journal.entries.findIndex((e) => e.tag === tag);
  if (at < 0) throw new Error(`no migration ${tag}`);
  journal.entries = journal.entries.slice(0, at);
  writeFileSync(journalFile, JSON.stringify(journal));
  return dir;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe(`migrations on ${TEST_DB}: rows written before the write-path migrations of 2026-11-27`, () => {
  test('survive them: JSON documents read back as written, and a score is found by NIF and by sector', async () => {
    const fresh = await freshDatabase();
    cleanups.push(fresh.drop);
    const folder = migrationsBefore(FIRST_NEW[dialect]);
    cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
    const tenantId = crypto.randomUUID();
    const [scoreId, esgId] = [Bun.randomUUIDv7(), Bun.randomUUIDv7()];
    const result = { score: 700, reasons: [{ code: 'X', impact: 'negative', weight: 0.25 }], text: 'é " \\ \u001e 🙂', nothing: null, amount: 1.5 };
    const facts = { name: 'Empresa "Teste", Lda.', sector: 'G', erp: null };
    const answers = { B3: { scope1: 12.5 }, list: [1, 'two', null] };
    const at = Date.UTC(2026, 10, 20);
    if (dialect === 'pg') {
      const sql = postgres(fresh.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
      try {
        await migratePg(drizzlePg(sql), { migrationsFolder: folder });
        expect((await sql`select data_type from information_schema.columns where table_name = 'score_results' and column_name = 'result'`)[0]!.data_type).toBe('jsonb');
        const when = new Date(at).toISOString();
        await sql`insert into tenants (id, name, plan, status, daily_quota, created_at) values (${tenantId}, 'm', 'enterprise', 'active', 1000, ${when})`;
        await sql`insert into score_results (id, tenant_id, env, nif, score, tier, pd, result, algorithm_version, synthetic, trigger, computed_at, facts, sector)
          values (${scoreId}, ${tenantId}, 'sandbox', '599000015', 700, 'B', 0.01, ${JSON.stringify(result)}::jsonb, 'score-1.1.0', true, 'request', ${when}, ${JSON.stringify(facts)}::jsonb, 'G')`;
        await sql`insert into esg_assessments (id, tenant_id, env, nif, sector, answers, result, algorithm_version, synthetic, computed_at)
          values (${esgId}, ${tenantId}, 'sandbox', '599000015', 'C', ${JSON.stringify(answers)}::jsonb, ${JSON.stringify(result)}::jsonb, 'esg-1.0.0', true, ${when})`;
      } finally {
        await sql.end();
      }
    } else {
      const raw = new Sqlite(join(resolve(fresh.env.DATA_DIR!), 'service.sqlite'), { create: true });
      try {
        raw.exec('PRAGMA journal_mode = WAL');
        migrateSqlite(drizzleSqlite(raw), { migrationsFolder: folder });
        raw.query(`insert into tenants (id, name, plan, status, daily_quota, created_at) values (?, 'm', 'enterprise', 'active', 1000, ?)`).run(tenantId, at);
        raw
          .query(`insert into score_results (id, tenant_id, env, nif, score, tier, pd, result, algorithm_version, synthetic, trigger, computed_at, facts, sector) values (?, ?, 'sandbox', '599000015', 700, 'B', 0.01, ?, 'score-1.1.0', 1, 'request', ?, ?, 'G')`)
          .run(scoreId, tenantId, JSON.stringify(result), at, JSON.stringify(facts));
        raw
          .query(`insert into esg_assessments (id, tenant_id, env, nif, sector, answers, result, algorithm_version, synthetic, computed_at) values (?, ?, 'sandbox', '599000015', 'C', ?, ?, 'esg-1.0.0', 1, ?)`)
          .run(esgId, tenantId, JSON.stringify(answers), JSON.stringify(result), at);
      } finally {
        raw.close();
      }
    }

    // the service opens it: the remaining migrations run
    const h = await makeApp(fresh.env, { workers: false });
    cleanups.push(() => h.close());
    const { db, t } = h.ctx.database;
    const [score] = await db.select().from(t.scoreResults).where(eq(t.scoreResults.id, scoreId));
    expect(score!.result).toEqual(result);
    expect(score!.facts).toEqual(facts);
    expect(score!.computedAt.getTime()).toBe(at);
    const [esg] = await db.select().from(t.esgAssessments).where(eq(t.esgAssessments.id, esgId));
    expect(esg!.answers).toEqual(answers);
    expect(esg!.result).toEqual(result);
    // found by the lookup index's two uses: the latest by NIF, and the NIFs scored in a sector
    const s = t.scoreResults;
    expect((await db.select({ id: s.id }).from(s).where(and(eq(s.tenantId, tenantId), eq(s.env, 'sandbox'), eq(s.nif, '599000015'))))[0]!.id).toBe(scoreId);
    expect(await db.selectDistinct({ nif: s.nif }).from(s).where(and(eq(s.tenantId, tenantId), eq(s.env, 'sandbox'), eq(s.sector, 'G')))).toEqual([{ nif: '599000015' }]);
    if (h.ctx.database.pg) {
      const types = await h.ctx.database.pg`select table_name, column_name, data_type from information_schema.columns where table_name in ('score_results', 'esg_assessments') and column_name in ('result', 'facts', 'answers') order by 1, 2`;
      expect(types.map((r) => `${r.table_name}.${r.column_name} ${r.data_type}`)).toEqual(['esg_assessments.answers json', 'esg_assessments.result json', 'score_results.facts json', 'score_results.result json']);
      // compressed with lz4 from now on (this server has it), pglz otherwise; a row stored before keeps pglz
      const compression = await h.ctx.database.pg`select attrelid::regclass::text as t, attname, attcompression from pg_attribute where attrelid in ('score_results'::regclass, 'esg_assessments'::regclass) and attname in ('result', 'facts', 'answers') order by 1, 2`;
      expect(compression.map((r) => `${r.t}.${r.attname} ${r.attcompression}`)).toEqual(['esg_assessments.answers l', 'esg_assessments.result l', 'score_results.facts l', 'score_results.result l']);
      const indexes = await h.ctx.database.pg`select indexname from pg_indexes where tablename = 'score_results' order by 1`;
      expect(indexes.map((r) => r.indexname)).toEqual(['score_lookup_idx', 'score_rescores_idx', 'score_results_pkey']);
    } else {
      const raw = new Sqlite(join(resolve(fresh.env.DATA_DIR!), 'service.sqlite'), { readonly: true });
      try {
        const indexes = raw.query(`select name from sqlite_master where type = 'index' and tbl_name = 'score_results' order by 1`).all() as { name: string }[];
        expect(indexes.map((r) => r.name)).toEqual(['score_lookup_idx', 'score_rescores_idx', 'sqlite_autoindex_score_results_1']);
        const columns = raw.query(`select name from pragma_index_info('score_lookup_idx') order by seqno`).all() as { name: string }[];
        expect(columns.map((c) => c.name)).toEqual(['tenant_id', 'env', 'nif', 'computed_at', 'sector']);
      } finally {
        raw.close();
      }
    }
  });
});
