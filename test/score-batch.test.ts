/**
 * POST /v1/score/batch (issue 23): a portfolio in one call — each item as POST /v1/score would
 * answer it, in order, errors in place (the §2.8 body, paths in the whole request); each distinct
 * NIF computed once; one transaction of results; one usage line per scored item; idempotent;
 * tenants apart; errors. Its weight against rate limits and quotas: score-batch-limits.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { and, eq } from 'drizzle-orm';
import { ScoreBatchResponse } from '../src/features/score/model';
import { expectError, makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

let h: TestApp;
beforeAll(async () => {
  h = await makeApp({}, { workers: false });
});
afterAll(() => h.close());
const batch = (key: string, body: unknown, headers: Record<string, string> = {}) => h.json('POST', '/v1/score/batch', { key, body, headers });

describe('POST /v1/score/batch', () => {
  test('every item in order: results as POST /v1/score gives them, errors in place, stored, billed per scored item', async () => {
    const t = await h.tenant();
    const items = [{ nif: '599000015', customer_reference: 'loan-1' }, { nif: '599000031' }, { nif: '599000066' }, { nif: '599000074' }, { nif: '599000016' }, { nif: '599000015' }];
    const r = await batch(t.api_key, { items, refresh: 'force_refresh' });
    expect(r.status).toBe(200);
    expect(Value.Check(ScoreBatchResponse, r.body)).toBe(true);
    expect(r.body.data.map((d: any) => [d.index, d.nif, d.status, d.error?.code ?? null])).toEqual([
      [0, '599000015', 200, null],
      [1, '599000031', 200, null],
      [2, '599000066', 422, 'invalid_nif'],
      [3, '599000074', 404, 'company_not_found'],
      [4, '599000016', 422, 'invalid_nif'],
      [5, '599000015', 200, null],
    ]);
    // 599000015 met again: answered from item 0's computation (force_refresh too), not recomputed
    expect(r.body.summary).toEqual({ total: 6, succeeded: 3, failed: 3, computed: 2 });
    expect(r.body.data[5].duplicate_of).toBe(0);
    expect(r.body.data[5].result.cache).toBe('cached');
    expect(r.body.data[0].result.cache).toBe('fresh');
    expect(r.body.data[0].duplicate_of).toBeUndefined();
    // an item's error is the §2.8 body the single call gives, its field paths in the whole request
    expect(r.body.data[4].error).toEqual({
      code: 'invalid_nif',
      message: 'The NIF fails the mod-11 check digit; see fields.',
      status: 422,
      requestId: r.headers.get('x-request-id'),
      docsUrl: expect.stringContaining('/docs/errors#invalid_nif'),
      fields: [{ path: 'items.4.nif', message: 'fails the NIF check digit' }],
    });
    expect(r.body.data[2].error).toMatchObject({ code: 'invalid_nif', status: 422, fields: [{ path: 'items.2.nif', message: 'not recognised by the tax authority' }] });
    expect(r.body.data[3].error).toMatchObject({ code: 'company_not_found', status: 404, requestId: r.headers.get('x-request-id') });
    expect(r.body.data[3].error.fields).toBeUndefined();
    // the same as the single call
    const single = await h.json('POST', '/v1/score', { key: t.api_key, body: { nif: '599000031' } });
    const { computed_at: _a, cache: _c, ...fromBatch } = r.body.data[1].result;
    const { computed_at: _b, cache: _d, ...fromSingle } = single.body;
    expect(fromBatch).toEqual(fromSingle);
    expect(single.body.cache).toBe('cached'); // the batch stored it
    expect(r.body.data[0].result.customer_reference).toBe('loan-1');
    const { db, t: tb } = h.ctx.database;
    expect((await db.select().from(tb.scoreResults).where(eq(tb.scoreResults.tenantId, t.tenant_id))).length).toBe(2); // stored once per NIF
    await h.ctx.usage.flush();
    const usage = await db.select().from(tb.usageRecords).where(and(eq(tb.usageRecords.tenantId, t.tenant_id), eq(tb.usageRecords.meter, 'score')));
    expect(usage.reduce((n, u) => n + u.quantity, 0)).toBe(3 + 1); // the batch's three answered (the repeat too), the single call's one
    // cached_ok: nothing recomputed; Portuguese labels on request
    const again = await h.json('POST', '/v1/score/batch', { key: t.api_key, body: { items: items.slice(0, 2) }, headers: { 'accept-language': 'pt-PT' } });
    expect(again.body.summary).toMatchObject({ computed: 0, succeeded: 2 });
    expect(again.body.data[0].result.cache).toBe('cached');
    expect(again.headers.get('content-language')).toBe('pt-PT');
  });

  test('a malformed NIF is its item\'s 422, the rest scored; a NIF met again with cached_ok is answered from its first item (computed and stored once)', async () => {
    const t = await h.tenant();
    const r = await batch(t.api_key, { items: [{ nif: '12345678' }, { nif: '599000015' }, { nif: ' 599000015' }, { nif: '599000015', customer_reference: 'again' }, { nif: '' }] });
    expect(r.status).toBe(200);
    expect(Value.Check(ScoreBatchResponse, r.body)).toBe(true);
    expect(r.body.data.map((d: any) => [d.index, d.status, d.error?.code ?? null, d.result?.cache ?? null])).toEqual([
      [0, 422, 'validation_failed', null],
      [1, 200, null, 'fresh'],
      [2, 422, 'validation_failed', null],
      [3, 200, null, 'cached'],
      [4, 422, 'validation_failed', null],
    ]);
    expect(r.body.data[0].error).toMatchObject({ code: 'validation_failed', status: 422, fields: [{ path: 'items.0.nif', message: 'must be exactly 9 digits (a Portuguese NIF/NIPC)' }] });
    expect(r.body.data[4].error.fields).toEqual([{ path: 'items.4.nif', message: 'must be exactly 9 digits (a Portuguese NIF/NIPC)' }]);
    expect(r.body.data[3].duplicate_of).toBe(1);
    // the single call's answer for the same NIF
    expectError(await h.json('POST', '/v1/score', { key: t.api_key, body: { nif: '12345678' } }), 422, 'validation_failed');
    const { cache: _a, customer_reference: ref, ...again } = r.body.data[3].result;
    const { cache: _b, ...first } = r.body.data[1].result;
    expect(again).toEqual(first);
    expect(ref).toBe('again');
    expect(r.body.summary).toEqual({ total: 5, succeeded: 2, failed: 3, computed: 1 });
    const { db, t: tb } = h.ctx.database;
    expect((await db.select().from(tb.scoreResults).where(eq(tb.scoreResults.tenantId, t.tenant_id))).length).toBe(1);
    await h.ctx.usage.flush();
    const usage = await db.select().from(tb.usageRecords).where(and(eq(tb.usageRecords.tenantId, t.tenant_id), eq(tb.usageRecords.meter, 'score')));
    expect(usage.reduce((n, u) => n + u.quantity, 0)).toBe(2); // the two answered, not the refused
  });

  test('Idempotency-Key replays the same answer without storing or billing again; another tenant shares nothing', async () => {
    const t = await h.tenant();
    const body = { items: [{ nif: '599000015' }, { nif: '599000023' }], refresh: 'force_refresh' };
    const a = await batch(t.api_key, body, { 'idempotency-key': 'batch-1' });
    const b = await batch(t.api_key, body, { 'idempotency-key': 'batch-1' });
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.body).toEqual(a.body);
    const { db, t: tb } = h.ctx.database;
    expect((await db.select().from(tb.scoreResults).where(eq(tb.scoreResults.tenantId, t.tenant_id))).length).toBe(2);
    const other = await h.tenant();
    const theirs = await batch(other.api_key, { items: [{ nif: '599000015' }] });
    expect(theirs.body.summary.computed).toBe(1); // not served from the first tenant's results
  });

  test('force_refresh: 1,000 copies of one NIF are computed and stored once, answered 1,000 times, billed one line per item', async () => {
    const t = await h.tenant();
    const r = await batch(t.api_key, { items: Array.from({ length: 1000 }, (_, i) => ({ nif: '599000015', customer_reference: `r${i}` })), refresh: 'force_refresh' });
    expect(r.status).toBe(200);
    expect(Value.Check(ScoreBatchResponse, r.body)).toBe(true);
    expect(r.body.summary).toEqual({ total: 1000, succeeded: 1000, failed: 0, computed: 1 });
    expect(r.body.data[0]).toMatchObject({ index: 0, status: 200, result: { cache: 'fresh', customer_reference: 'r0' } });
    expect(r.body.data.slice(1).every((d: any, i: number) => d.duplicate_of === 0 && d.result.cache === 'cached' && d.result.customer_reference === `r${i + 1}` && d.result.score === r.body.data[0].result.score && d.result.computed_at === r.body.data[0].result.computed_at)).toBe(true);
    const { db, t: tb } = h.ctx.database;
    expect((await db.select().from(tb.scoreResults).where(eq(tb.scoreResults.tenantId, t.tenant_id))).length).toBe(1);
    await h.ctx.usage.flush();
    const usage = await db.select().from(tb.usageRecords).where(and(eq(tb.usageRecords.tenantId, t.tenant_id), eq(tb.usageRecords.meter, 'score')));
    expect(usage.reduce((n, u) => n + u.quantity, 0)).toBe(1000);
    // a repeated NIF whose first item fails shares its error, named at its own path
    const bad = await batch(t.api_key, { items: [{ nif: '599000066' }, { nif: '599000074' }, { nif: '599000066' }], refresh: 'force_refresh' });
    expect(bad.body.data.map((d: any) => [d.status, d.error.code, d.duplicate_of ?? null, d.error.fields?.[0]?.path ?? null])).toEqual([
      [422, 'invalid_nif', null, 'items.0.nif'],
      [404, 'company_not_found', null, null],
      [422, 'invalid_nif', 0, 'items.2.nif'],
    ]);
    // an item refused for its own fields is no NIF's first item: the next valid one is
    const ref = await batch(t.api_key, { items: [{ nif: '599000023', customer_reference: 'x'.repeat(129) }, { nif: '599000023' }, { nif: '599000023' }] });
    expect(ref.body.data.map((d: any) => [d.status, d.duplicate_of ?? null])).toEqual([[422, null], [200, null], [200, 1]]);
  });

  test('every problem inside an item is that item\'s 422 (validation_failed, paths in the request), the others scored', async () => {
    const t = await h.tenant();
    const items = [
      { nif: 599000015 },
      {},
      { nif: '599000015', customer_reference: 'x'.repeat(129) },
      { nif: '9'.repeat(65) },
      { nif: '599000031', note: 'ignored' },
      { nif: '12345', note: 'listed beside' },
      { nif: '599000016', customer_reference: 5 },
      { nif: '599000015' },
    ];
    const r = await batch(t.api_key, { items, refresh: 'force_refresh' });
    expect(r.status).toBe(200);
    expect(Value.Check(ScoreBatchResponse, r.body)).toBe(true);
    const requestId = r.headers.get('x-request-id');
    expect(r.body.data.map((d: any) => [d.index, d.nif, d.status, d.error?.code ?? null, d.error?.fields ?? null])).toEqual([
      [0, '', 422, 'validation_failed', [{ path: 'items.0.nif', message: 'must be a string' }]],
      [1, '', 422, 'validation_failed', [{ path: 'items.1.nif', message: 'is required' }]],
      [2, '599000015', 422, 'validation_failed', [{ path: 'items.2.customer_reference', message: 'must be at most 128 characters' }]],
      [3, `${'9'.repeat(64)}\u2026`, 422, 'validation_failed', [{ path: 'items.3.nif', message: 'must be exactly 9 digits (a Portuguese NIF/NIPC)' }]],
      [4, '599000031', 200, null, null],
      [5, '12345', 422, 'validation_failed', [{ path: 'items.5.nif', message: 'must be exactly 9 digits (a Portuguese NIF/NIPC)' }, { path: 'items.5.note', message: 'is not a field of this request (ignored)' }]],
      [6, '599000016', 422, 'validation_failed', [{ path: 'items.6.nif', message: 'fails the NIF check digit' }, { path: 'items.6.customer_reference', message: 'must be a string' }]],
      [7, '599000015', 200, null, null],
    ]);
    for (const d of r.body.data.filter((d: any) => d.error)) {
      // the §2.8 body, its status where the item's own status is too
      expect(d.error).toEqual({ code: d.error.code, message: 'The item is invalid; see fields.', status: d.status, requestId, docsUrl: expect.stringContaining(`/docs/errors#${d.error.code}`), fields: expect.any(Array) });
      expect(d.result).toBeNull();
    }
    expect(r.body.summary).toEqual({ total: 8, succeeded: 2, failed: 6, computed: 2 });
    await h.ctx.usage.flush();
    const { db, t: tb } = h.ctx.database;
    const usage = await db.select().from(tb.usageRecords).where(and(eq(tb.usageRecords.tenantId, t.tenant_id), eq(tb.usageRecords.meter, 'score')));
    expect(usage.reduce((n, u) => n + u.quantity, 0)).toBe(2);
  });

  test('the whole call is 422 only for its envelope: items missing, not an array, empty, over 1,000, an item not an object, refresh unknown', async () => {
    const t = await h.tenant();
    const whole = async (body: unknown, fields: { path: string; message: string }[]) => expect(expectError(await batch(t.api_key, body), 422, 'validation_failed').fields).toEqual(fields);
    await whole({}, [{ path: 'items', message: 'is required' }]);
    await whole({ items: { nif: '599000015' } }, [{ path: 'items', message: 'must be an array' }]);
    await whole({ items: [] }, [{ path: 'items', message: 'must have at least 1 item' }]);
    expect(expectError(await batch(t.api_key, { items: Array.from({ length: 1001 }, () => ({ nif: '599000015' })) }), 422, 'validation_failed').fields[0].path).toBe('items');
    await whole({ items: ['599000015', { nif: '599000015' }] }, [{ path: 'items.0', message: 'must be an object' }]);
    await whole({ items: [{ nif: '599000015' }, null, [1]] }, [{ path: 'items.1', message: 'must be an object' }, { path: 'items.2', message: 'must be an object' }]);
    await whole({ items: [{ nif: '599000015' }], refresh: 'always' }, [{ path: 'refresh', message: 'must be one of: "cached_ok", "force_refresh"' }]);
    // an unknown top-level field: ignored when the rest is valid, listed beside a real problem
    await whole({ items: [], colour: 'red' }, [{ path: 'items', message: 'must have at least 1 item' }, { path: 'colour', message: 'is not a field of this request (ignored)' }]);
    expect((await batch(t.api_key, { items: [{ nif: '599000015' }], colour: 'red' })).status).toBe(200);
    // nothing was scored by the refused calls
    const { db, t: tb } = h.ctx.database;
    expect((await db.select().from(tb.scoreResults).where(eq(tb.scoreResults.tenantId, t.tenant_id))).length).toBe(1);
  });

  test('errors: scope; a live key without the live tier', async () => {
    const t = await h.tenant();
    const narrow = await h.tenant({ scopes: ['esg'] });
    expectError(await batch(narrow.api_key, { items: [{ nif: '599000015' }] }), 403, 'insufficient_scope');
    const live = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'live', name: 'live' });
    expectError(await batch(live.api_key, { items: [{ nif: '599000015' }] }), 503, 'live_tier_not_available');
    expectError(await batch(live.api_key, { items: [{ nif: '12345' }] }), 503, 'live_tier_not_available'); // whatever its items
    // a batch of many items: 503 before it is charged for them (not 429, and the quota not spent)
    const small = await h.tenant({ rateLimitPerMinute: 5, dailyQuota: 50 });
    const smallLive = await h.ctx.tenants.createKey({ tenantId: small.tenant_id, env: 'live', name: 'live' });
    const big = await batch(smallLive.api_key, { items: Array.from({ length: 4 }, () => ({ nif: '599000015' })) });
    expectError(big, 503, 'live_tier_not_available');
    expect(big.headers.get('x-ratelimit-remaining')).toBe('4'); // the call's one request only
  });

  test('an Idempotency-Key is fingerprinted on the items as sent: a batch with another invalid item, or a valid one in its place, is not its replay', async () => {
    const t = await h.tenant();
    const first = await batch(t.api_key, { items: [{ nif: '12' }] }, { 'idempotency-key': 'fp-1' });
    expect(first.status).toBe(200);
    expect(first.body.data[0]).toMatchObject({ nif: '12', status: 422 });
    // the same key with other items (an invalid item was validated as a stand-in NIF): refused as a reuse, not replayed
    for (const items of [[{ nif: '599000015' }], [{ nif: '13' }], [{ nif: '1', customer_reference: 'x'.repeat(200) }]])
      expectError(await batch(t.api_key, { items }, { 'idempotency-key': 'fp-1' }), 422, 'idempotency_key_reused');
    // the very same body: replayed
    const again = await batch(t.api_key, { items: [{ nif: '12' }] }, { 'idempotency-key': 'fp-1' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });
});
