/**
 * Migration 0020 (PostgreSQL) / 0017 (SQLite): the assignment index's keys of invoices still held,
 * written before numbers were compared without case and spacing, are rewritten the way
 * src/features/finance/assignment-key.ts builds them; two held invoices that are now one keep
 * apart (the older gets the key), nothing breaks the unique index, released rows are left alone.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { assignmentKey } from '../src/features/finance/assignment-key';
import { makeApp, ROOT, type TestApp } from './helpers';

let h: TestApp;
beforeAll(async () => {
  h = await makeApp({}, { workers: false });
});
afterAll(() => h.close());

describe('the assignment keys migration', () => {
  test('legacy keys normalised; a collision keeps the older one; released rows untouched; the index of factoring sees them', async () => {
    const t = await h.tenant();
    const { db, t: tables, dialect } = h.ctx.database;
    const a = tables.assignedInvoices;
    const at = (s: number) => new Date(Date.UTC(2026, 10, 1, 0, 0, s));
    const row = (id: string, number: string, key: string | null, s: number) => ({ id, tenantId: t.tenant_id, env: 'sandbox', holderId: 'fop_x', issuerNif: '599000031', debtorNif: '599000023', number, assignmentKey: key, createdAt: at(s) });
    // keys as they were written before: issuer|number as given
    await db.insert(a).values([
      row('k1', 'ft a/1', '599000031|ft a/1', 1),
      row('k2', 'FT\u00a0 A/2 ', '599000031|FT\u00a0 A/2 ', 2),
      row('k3', 'ft a/3', '599000031|ft a/3', 3), // older
      row('k4', 'FT A/3 ', '599000031|FT A/3 ', 4), // the same invoice under the new rule
      row('k5', 'ft a/5', null, 5), // released (settled): no key
    ] as never);
    const file = dialect === 'postgres' ? 'db/pg/0020_assignment_keys_normalised.sql' : 'db/sqlite/0017_assignment_keys_normalised.sql';
    const text = await Bun.file(join(ROOT, file)).text();
    if (dialect === 'postgres') await (db as any).execute(sql.raw(text));
    else await (db as any).run(sql.raw(text));
    const keys = Object.fromEntries((await db.select({ id: a.id, key: a.assignmentKey }).from(a).where(eq(a.tenantId, t.tenant_id))).map((r) => [r.id, r.key]));
    expect(keys).toEqual({
      k1: assignmentKey('599000031', 'ft a/1'),
      k2: assignmentKey('599000031', 'FT\u00a0 A/2 '),
      k3: assignmentKey('599000031', 'ft a/3'),
      k4: '599000031|FT A/3 ',
      k5: null,
    });
    expect(keys.k1).toBe('599000031|FT A/1');
    expect(keys.k2).toBe('599000031|FT A/2');
    // run again: nothing changes
    if (dialect === 'postgres') await (db as any).execute(sql.raw(text));
    else await (db as any).run(sql.raw(text));
    expect(Object.fromEntries((await db.select({ id: a.id, key: a.assignmentKey }).from(a).where(eq(a.tenantId, t.tenant_id))).map((r) => [r.id, r.key]))).toEqual(keys);
  });
});
