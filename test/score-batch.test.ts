/**
 * POST /v1/score/batch (issue 23): a portfolio in one call — each item as POST /v1/score would
 * answer it, in order, errors in place; one transaction of results; one usage line per scored item;
 * idempotent; tenants apart; errors.
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
    expect(r.body.summary).toEqual({ total: 6, succeeded: 3, failed: 3, computed: 3 });
    // an item has no fields: its field problem is its message
    expect(r.body.data[4].error.message).toBe('nif: fails the NIF check digit.');
    // the same as the single call
    const single = await h.json('POST', '/v1/score', { key: t.api_key, body: { nif: '599000031' } });
    const { computed_at: _a, cache: _c, ...fromBatch } = r.body.data[1].result;
    const { computed_at: _b, cache: _d, ...fromSingle } = single.body;
    expect(fromBatch).toEqual(fromSingle);
    expect(single.body.cache).toBe('cached'); // the batch stored it
    expect(r.body.data[0].result.customer_reference).toBe('loan-1');
    const { db, t: tb } = h.ctx.database;
    expect((await db.select().from(tb.scoreResults).where(eq(tb.scoreResults.tenantId, t.tenant_id))).length).toBe(3);
    await h.ctx.usage.flush();
    const usage = await db.select().from(tb.usageRecords).where(and(eq(tb.usageRecords.tenantId, t.tenant_id), eq(tb.usageRecords.meter, 'score')));
    expect(usage.reduce((n, u) => n + u.quantity, 0)).toBe(3 + 1); // the batch's three, the single call's one
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
    expect(r.body.data[0].error.message).toBe('nif: must be exactly 9 digits (a Portuguese NIF/NIPC).');
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

  test('errors: empty, over 1,000 items, a NIF not a string; scope; a live key without the live tier', async () => {
    const t = await h.tenant();
    expectError(await batch(t.api_key, { items: [] }), 422, 'validation_failed');
    expectError(await batch(t.api_key, { items: Array.from({ length: 1001 }, () => ({ nif: '599000015' })) }), 422, 'validation_failed');
    expect(expectError(await batch(t.api_key, { items: [{ nif: 599000015 }] }), 422, 'validation_failed').fields[0].path).toBe('items.0.nif'); // not a string: the request's shape
    expect(expectError(await batch(t.api_key, { items: [{ nif: '9'.repeat(65) }] }), 422, 'validation_failed').fields[0].path).toBe('items.0.nif');
    expectError(await batch(t.api_key, { items: [{ nif: '599000015' }], refresh: 'always' }), 422, 'validation_failed');
    const narrow = await h.tenant({ scopes: ['esg'] });
    expectError(await batch(narrow.api_key, { items: [{ nif: '599000015' }] }), 403, 'insufficient_scope');
    const live = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'live', name: 'live' });
    expectError(await batch(live.api_key, { items: [{ nif: '599000015' }] }), 503, 'live_tier_not_available');
  });
});
