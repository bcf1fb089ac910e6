import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { eq } from 'drizzle-orm';
import { ESG_EXAMPLES } from '../src/features/esg/examples';
import { makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

// The ledger counts calls alike (tenant, key, environment, meter, unit price) within one UTC
// second in one row (UsageMeter); these tests pin what that row holds and what it never does.
let h: TestApp;
beforeAll(async () => {
  h = await makeApp();
});
afterAll(() => h.close());

const score = (key: string) => h.call('POST', '/v1/score', { key, body: { nif: '599000015' } });
const esg = (key: string) => h.call('POST', '/v1/esg', { key, body: ESG_EXAMPLES.leader });
async function rowsOf(tenantId: string) {
  await h.ctx.usage.flush();
  const u = h.ctx.database.t.usageRecords;
  return h.ctx.database.db.select().from(u).where(eq(u.tenantId, tenantId));
}
type Append = TestApp['ctx']['database']['appendRows'];
/**
 * runs `fn` at the start of a fresh second, with the database's appends going through `wrap`, and
 * with the buffer's 25 ms timer stopped: only the test's own flushes write (a timer flush between
 * two calls took the injected failure in CI now and then)
 */
async function withAppend(wrap: (append: Append, ...args: Parameters<Append>) => Promise<void>, fn: () => Promise<void>) {
  h.clock.ms = Math.ceil(h.clock.ms / 1000) * 1000;
  await h.ctx.usage.stop();
  const database = h.ctx.database;
  const append = database.appendRows;
  database.appendRows = (table, rows) => wrap((tb, r) => append.call(database, tb, r), table, rows);
  try {
    await fn();
  } finally {
    database.appendRows = append;
    h.ctx.usage.start();
  }
}
const idsOf = (rows: { requestIds: string | null }[]) => rows.flatMap((r) => r.requestIds?.split(' ') ?? []).sort();

describe('usage ledger', () => {
  test('calls alike in one second: one row with their count, the second and every request id', async () => {
    const t = await h.tenant();
    h.clock.ms = Math.ceil(h.clock.ms / 1000) * 1000 + 250; // a quarter into a second
    const second = new Date(Math.floor(h.clock.ms / 1000) * 1000);
    const ids: string[] = [];
    await h.ctx.usage.stop(); // no timed flush in between: it would close the row early (a second row, same second)
    try {
      for (let i = 0; i < 5; i++) {
        const r = await score(t.api_key);
        expect(r.status).toBe(200);
        ids.push(r.headers.get('x-request-id')!);
        h.clock.advance(100);
      }
    } finally {
      h.ctx.usage.start();
    }
    const rows = await rowsOf(t.tenant_id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ meter: 'score', quantity: 5, env: 'sandbox', apiKeyId: t.api_key_id, billable: false, amountCents: 0, unitAmountCents: 50, createdAt: second });
    expect(idsOf(rows)).toEqual(ids.sort());
  });

  test('another second, another key, another meter, another tenant: separate rows; totals exact', async () => {
    const a = await h.tenant();
    const b = await h.tenant();
    const a2 = await h.ctx.tenants.createKey({ tenantId: a.tenant_id, env: 'sandbox', name: 'second' });
    h.clock.ms = Math.ceil(h.clock.ms / 1000) * 1000;
    for (const key of [a.api_key, a.api_key, a2.api_key, b.api_key]) expect((await score(key)).status).toBe(200);
    expect((await esg(a.api_key)).status).toBe(200);
    h.clock.advance(1000);
    expect((await score(a.api_key)).status).toBe(200);
    const rows = await rowsOf(a.tenant_id);
    // quantities per second, key and meter (a flush between two calls of one second may write them
    // as two rows of the append-only ledger: the totals are what must be exact)
    const per = new Map<string, number>();
    for (const r of rows) {
      const k = `${r.createdAt.toISOString().slice(17)} ${r.apiKeyId === a.api_key_id ? 'k1' : 'k2'} ${r.meter}`;
      per.set(k, (per.get(k) ?? 0) + Number(r.quantity));
    }
    const shape = [...per].map(([k, q]) => `${k} ${q}`).sort();
    const s0 = new Date(h.clock.ms - 1000).toISOString().slice(17);
    const s1 = new Date(h.clock.ms).toISOString().slice(17);
    expect(shape).toEqual([`${s0} k1 esg 1`, `${s0} k1 score 2`, `${s0} k2 score 1`, `${s1} k1 score 1`].sort());
    expect(await rowsOf(b.tenant_id)).toMatchObject([{ quantity: 1, apiKeyId: b.api_key_id }]);
    const usage = await h.json('GET', '/v1/admin/usage', { key: a.api_key });
    expect(usage.body.totals).toEqual([
      { meter: 'esg', quantity: 1, billable_quantity: 0, amount_cents: 0 },
      { meter: 'score', quantity: 4, billable_quantity: 0, amount_cents: 0 },
    ]);
    // per key: each key's lines, another tenant's never
    const byKey = await h.json('GET', '/v1/admin/usage?group_by=key', { key: a.api_key });
    expect(byKey.body.group_by).toBe('key');
    expect(byKey.body.totals).toEqual(
      [
        { api_key_id: a.api_key_id, meter: 'esg', quantity: 1, billable_quantity: 0, amount_cents: 0, client_id: null },
        { api_key_id: a.api_key_id, meter: 'score', quantity: 3, billable_quantity: 0, amount_cents: 0, client_id: null },
        { api_key_id: a2.api_key_id, meter: 'score', quantity: 1, billable_quantity: 0, amount_cents: 0, client_id: null },
      ].sort((x, y) => x.api_key_id.localeCompare(y.api_key_id) || x.meter.localeCompare(y.meter)),
    );
  });

  test('GET /v1/admin/usage: a call counts at the start of its second (bounds inside a second)', async () => {
    const t = await h.tenant();
    const second = Math.ceil(h.clock.ms / 1000) * 1000;
    h.clock.ms = second + 700;
    expect((await score(t.api_key)).status).toBe(200);
    const usage = async (from: number, to: number) =>
      (await h.json('GET', `/v1/admin/usage?from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`, { key: t.api_key })).body.totals;
    expect(await usage(second, second + 1000)).toEqual([{ meter: 'score', quantity: 1, billable_quantity: 0, amount_cents: 0 }]);
    expect(await usage(second, second + 500)).toEqual([{ meter: 'score', quantity: 1, billable_quantity: 0, amount_cents: 0 }]); // made at .700, counted at .000
    expect(await usage(second + 500, second + 2000)).toEqual([]);
    expect(await usage(second + 1000, second + 2000)).toEqual([]);
  });

  test('GET /v1/admin/usage: from and to are RFC 3339 date-times from 1900 to 2199 (a date alone would leave its time zone to guess)', async () => {
    const t = await h.tenant();
    for (const [query, path] of [['from=2026-11-01', 'query.from'], ['to=2026-11-01T10:00:00', 'query.to'], ['to=9999-12-31T00:00:00Z', 'query.to'], ['from=1899-12-31T23:59:59Z', 'query.from']] as const) {
      const r = await h.json('GET', `/v1/admin/usage?${query}`, { key: t.api_key });
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ code: 'validation_failed', status: 422, fields: [{ path, message: 'must be a date-time with its time zone (RFC 3339), e.g. 2026-11-01T00:00:00Z, from 1900 to 2199' }] });
    }
    expect((await h.json('GET', '/v1/admin/usage?from=2026-11-01T00:00:00%2B01:00', { key: t.api_key })).status).toBe(200);
  });

  test('live calls: billable, the amount is unit × quantity', async () => {
    const t = await h.tenant({ env: 'live' });
    h.clock.ms = Math.ceil(h.clock.ms / 1000) * 1000;
    for (let i = 0; i < 3; i++) expect((await esg(t.api_key)).status).toBe(200);
    // one row, or more if a flush (every 25 ms) fell between the calls: each row is unit × its quantity
    const rows = await rowsOf(t.tenant_id);
    for (const r of rows) expect(r).toMatchObject({ meter: 'esg', env: 'live', billable: true, unitAmountCents: 30, amountCents: 30 * r.quantity });
    expect(rows.reduce((n, r) => n + r.quantity, 0)).toBe(3);
    const usage = await h.json('GET', '/v1/admin/usage', { key: t.api_key });
    expect(usage.body.totals).toEqual([{ meter: 'esg', quantity: 3, billable_quantity: 3, amount_cents: 90 }]);
  });

  test('a failed flush is retried whole and counted once; calls made meanwhile get their own row', async () => {
    const t = await h.tenant();
    let failures = 0;
    await withAppend(async (append, table, rows) => {
      if (failures++ === 0) throw new Error('database down');
      return append(table, rows);
    }, async () => {
      for (let i = 0; i < 3; i++) expect((await score(t.api_key)).status).toBe(200);
      await h.ctx.usage.flush(); // fails: the three calls are kept
      expect((await score(t.api_key)).status).toBe(200); // same second, but the failed row is not reopened
      const rows = await rowsOf(t.tenant_id);
      expect(rows.map((r) => r.quantity).sort()).toEqual([1, 3]);
      expect(idsOf(rows)).toHaveLength(4);
      expect(new Set(idsOf(rows)).size).toBe(4);
      await h.ctx.usage.flush();
      expect((await rowsOf(t.tenant_id)).reduce((n, r) => n + r.quantity, 0)).toBe(4);
    });
  });

  test('a row written twice (a retry after a commit whose answer was lost) is stored once', async () => {
    const t = await h.tenant();
    let calls = 0;
    await withAppend(async (append, table, rows) => {
      await append(table, rows);
      if (calls++ === 0) throw new Error('connection lost after commit');
    }, async () => {
      for (let i = 0; i < 2; i++) expect((await score(t.api_key)).status).toBe(200);
      await h.ctx.usage.flush(); // committed, reported as failed: kept for a retry
      await h.ctx.usage.flush(); // the retry: the same row, skipped
      const rows = await rowsOf(t.tenant_id);
      expect(rows.map((r) => r.quantity)).toEqual([2]);
    });
  });
});
