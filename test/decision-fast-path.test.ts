/**
 * POST /v1/decision through plugins/fast-path.ts: the plain case (fresh, repeated, forced) answered
 * without Elysia's lifecycle exactly as the Elysia route answers it; anything else handed to the
 * route before any charge, which reports every problem.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { decisionService } from '../src/features/decision';
import { decisionFastPath } from '../src/features/decision/fast-path';
import { expectError, jsonPost, makeApp, seenAnswer, throughBothPaths, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

let h: TestApp;
let fast: ReturnType<typeof decisionFastPath>;
beforeAll(async () => {
  h = await makeApp();
  fast = decisionFastPath(h.ctx, decisionService(h.ctx, h.ctx.services!.scores));
});
afterAll(() => h.close());

const plain = { nif: '599000023', context: { operation_type: 'factoring', amount_eur: 150000, expected_term_days: 90 } };
const request = (key: string, body: unknown, headers: Record<string, string> = {}, path = '/v1/decision') => jsonPost(path, key, body, headers);
/** decision ids, times and latencies differ between any two decisions */
const seen = (res: Response) => seenAnswer(res, ['decision_id', 'computed_at', 'latency_ms']);

describe('POST /v1/decision fast path', () => {
  test('answers the plain case itself, exactly as the Elysia route does (fresh, then repeated from memory; en, pt-PT, customer_reference, force_refresh)', async () => {
    const cases: [unknown, Record<string, string>][] = [
      [plain, {}],
      [{ ...plain, customer_reference: 'deal-7', country: 'pt' }, { 'accept-language': 'pt-PT' }],
      [{ ...plain, context: { ...plain.context, operation_type: 'credit_line', amount_eur: 20000.5 }, refresh: 'cached_ok' }, { 'content-type': 'application/json; charset=utf-8' }],
      [{ ...plain, refresh: 'force_refresh' }, {}],
    ];
    for (const [body, headers] of cases) {
      const { viaFast, viaElysia, tenant } = await throughBothPaths(h, fast, (key) => request(key, body, headers));
      const f = await seen(viaFast.clone() as Response);
      expect(f.status).toBe(200);
      expect(f).toEqual(await seen(viaElysia));
      const first = (await viaFast.json()) as { decision_id: string; cache: string };
      expect(first.cache).toBe('fresh');
      // stored before it was answered, for this tenant
      expect((await h.json('GET', `/v1/decisions/${first.decision_id}`, { key: tenant.api_key })).status).toBe(200);
      // the same request again: the same decision from memory (force_refresh: always a new one)
      let again = (await (await fast(request(tenant.api_key, body, headers)))!.json()) as { decision_id: string; cache: string };
      // (SQLite: a WAL checkpoint between two calls may be taken as a change; the next one is cached)
      if ((body as { refresh?: string }).refresh !== 'force_refresh' && again.cache !== 'cached') again = (await (await fast(request(tenant.api_key, body, headers)))!.json()) as typeof again;
      if ((body as { refresh?: string }).refresh === 'force_refresh') expect(again.decision_id).not.toBe(first.decision_id);
      else expect(again).toMatchObject({ cache: 'cached' });
    }
  });

  test('a repeated decision is billed each time and counted against the key\u2019s budget', async () => {
    const t = await h.tenant({ rateLimitPerMinute: 1000 });
    for (let i = 0; i < 4; i++) expect((await fast(request(t.api_key, plain)))!.status).toBe(200);
    const last = await fast(request(t.api_key, plain));
    expect(last!.headers.get('x-ratelimit-remaining')).toBe('995');
    await h.ctx.usage.flush();
    const { db, t: tables } = h.ctx.database;
    const { eq, and } = await import('drizzle-orm');
    const rows = await db.select().from(tables.usageRecords).where(and(eq(tables.usageRecords.tenantId, t.tenant_id), eq(tables.usageRecords.meter, 'decision')));
    expect(rows.reduce((n, r) => n + r.quantity, 0)).toBe(5);
  });

  test('hands everything else to the Elysia route, before charging anything; the route reports every problem', async () => {
    const t = await h.tenant({ rateLimitPerMinute: 1000 });
    const esgOnly = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', scopes: ['esg'] });
    const handedOver: Request[] = [
      request(t.api_key, plain, { 'idempotency-key': 'k-1' }),
      request(t.api_key, '{"nif":'),
      request(t.api_key, '[1]'),
      request(t.api_key, { ...plain, nif: '123456788' }), // fails the check digit
      request(t.api_key, { ...plain, context: { ...plain.context, amount_eur: 100.001 } }), // not whole cents
      request(t.api_key, { ...plain, context: { ...plain.context, ammount: 1 } }), // a misspelt context field
      request(t.api_key, { ...plain, amount_eur: 1 }), // a context field beside it
      request(t.api_key, { ...plain, extra: true }), // an unknown top-level field (the route strips it)
      request(t.api_key, { ...plain, country: 'ES' }),
      request(t.api_key, { ...plain, refresh: 'always' }),
      request(t.api_key, { nif: '599000023' }),
      request(t.api_key, plain, { 'content-type': 'text/plain' }),
      request(t.api_key, plain, {}, '/v1/decision?x=1'),
      request(esgOnly.api_key, plain),
      request('sk_test_not_a_key', plain),
    ];
    for (const req of handedOver) expect(await fast(req)).toBeNull();
    const r = await h.json('POST', '/v1/decision', { key: t.api_key, body: plain });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-ratelimit-remaining')).toBe('999');
    // through the dispatcher: handed over after the body was read, answered in full by the route
    const bad = expectError(await h.json('POST', '/v1/decision', { key: t.api_key, body: { ...plain, amount_eur: 1, context: { ...plain.context, ammount: 1 } } }), 422, 'validation_failed');
    expect(bad.fields.map((f: { path: string }) => f.path).sort()).toEqual(['amount_eur', 'context.ammount']);
    expectError(await h.json('POST', '/v1/decision', { key: t.api_key, body: { ...plain, context: { ...plain.context, amount_eur: 100.001 } } }), 422, 'validation_failed');
    expectError(await h.json('POST', '/v1/decision', { key: t.api_key, body: { ...plain, nif: '123456788' } }), 422, 'invalid_nif');
    expectError(await h.json('POST', '/v1/decision', { key: t.api_key, body: { ...plain, country: 'ES' } }), 422, 'unsupported_country');
    expectError(await h.json('POST', '/v1/decision', { key: esgOnly.api_key, body: plain }), 403, 'insufficient_scope');
    const stripped = await h.json('POST', '/v1/decision', { key: t.api_key, body: { ...plain, extra: true } });
    expect(stripped.status).toBe(200);
    expect(stripped.body.extra).toBeUndefined();
  });

  test('an error of the service (a company not found) is answered by the fast path with the §2.8 body the route gives', async () => {
    const body = { ...plain, nif: '599999900' }; // valid check digit, no such sandbox company
    const { viaFast, viaElysia } = await throughBothPaths(h, fast, (key) => request(key, body));
    expect(await seen(viaFast)).toEqual(await seen(viaElysia));
    expect(viaFast.status).toBe(404);
  });

  test('an unexpected failure is 500 internal_error with the §2.8 body and nothing leaked', async () => {
    const t = await h.tenant();
    const throwing = decisionFastPath(h.ctx, { decide: async () => { throw new Error('secret detail'); } } as never);
    const res = await throwing(request(t.api_key, plain));
    const body = await res!.json();
    expectError({ status: res!.status, body, headers: res!.headers }, 500, 'internal_error');
    expect(JSON.stringify(body)).not.toContain('secret detail');
  });

  test('tenants never see each other: a decision made or repeated through the fast path is one tenant\u2019s only', async () => {
    const a = await h.tenant();
    const b = await h.tenant();
    const made = (await (await fast(request(a.api_key, plain)))!.json()) as { decision_id: string };
    expect((await h.json('GET', `/v1/decisions/${made.decision_id}`, { key: b.api_key })).status).toBe(404);
    // b's same request is b's own decision, not a's answered from memory
    const theirs = (await (await fast(request(b.api_key, plain)))!.json()) as { decision_id: string; cache: string };
    expect(theirs.decision_id).not.toBe(made.decision_id);
    expect(theirs.cache).toBe('fresh');
    expect((await h.json('GET', '/v1/decisions', { key: b.api_key })).body.data.map((d: { decision_id: string }) => d.decision_id)).toEqual([theirs.decision_id]);
  });
});
