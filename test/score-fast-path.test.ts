import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { scoreFastPath } from '../src/features/score/fast-path';
import { SANDBOX_FIXTURES } from '../src/features/score/fixtures';
import { dispatch } from '../src/app';
import { expectError, jsonPost, makeApp, seenAnswer, throughBothPaths, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

const nifOf = (outcome: string) => SANDBOX_FIXTURES.find((f) => f.outcome === outcome)!.nif;

let h: TestApp;
let fast: ReturnType<typeof scoreFastPath>;
beforeAll(async () => {
  h = await makeApp();
  fast = scoreFastPath(h.ctx, h.ctx.services!.scores);
});
afterAll(() => h.close());

const request = (key: string, body: unknown, headers: Record<string, string> = {}) => jsonPost('/v1/score', key, body, headers);
const seen = (res: Response) => seenAnswer(res);

describe('POST /v1/score fast path', () => {
  test('answers the plain case itself, exactly as the Elysia route does (fresh, cached, pt-PT, customer_reference)', async () => {
    const cases: [unknown, Record<string, string>][] = [
      [{ nif: nifOf('tier_a_low_pd') }, {}],
      [{ nif: nifOf('tier_a_low_pd') }, {}],
      [{ nif: nifOf('tier_b_concentration'), customer_reference: 'loan-7' }, { 'accept-language': 'pt-PT' }],
      [{ nif: nifOf('tier_b_concentration'), refresh: 'force_refresh' }, { 'content-type': 'application/json; charset=utf-8' }],
    ];
    for (const [body, headers] of cases) {
      const { viaFast, viaElysia } = await throughBothPaths(h, fast, (key) => request(key, body, headers));
      expect(await seen(viaFast)).toEqual(await seen(viaElysia));
      expect(viaFast.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    }
  });

  test('errors after the guard (invalid_nif of the tax authority, company_not_found, live_tier_not_available, rate_limited) match the Elysia route', async () => {
    // a NIF failing its check digit fails the route's schema (its format): handed over, before any charge
    const wrongDigit = await h.tenant();
    expect(await fast(request(wrongDigit.api_key, { nif: '123456788' }))).toBeNull();
    const refused = await h.app.handle(request(wrongDigit.api_key, { nif: '123456788' }));
    expect([refused.status, ((await refused.json()) as { code: string }).code]).toEqual([422, 'invalid_nif']);
    const cases: [{ env?: 'live'; rateLimitPerMinute?: number }, unknown, number, string][] = [
      [{}, { nif: nifOf('invalid_nif_422') }, 422, 'invalid_nif'],
      [{}, { nif: nifOf('not_found_404') }, 404, 'company_not_found'],
      [{ env: 'live' }, { nif: nifOf('tier_a_low_pd') }, 503, 'live_tier_not_available'],
    ];
    for (const [tenant, body, status, code] of cases) {
      const a = await h.tenant(tenant);
      const b = await h.tenant(tenant);
      const viaFast = await fast(request(a.api_key, body));
      const viaElysia = await h.app.handle(request(b.api_key, body));
      const [f, e] = [await seen(viaFast!), await seen(viaElysia)];
      expect(f).toEqual(e);
      expect([f.status, f.body.code, f.body.status]).toEqual([status, code, status]);
    }
    const a = await h.tenant({ rateLimitPerMinute: 1 });
    const b = await h.tenant({ rateLimitPerMinute: 1 });
    const body = { nif: nifOf('tier_a_low_pd') };
    expect((await fast(request(a.api_key, body)))!.status).toBe(200);
    expect((await h.app.handle(request(b.api_key, body))).status).toBe(200);
    const [f, e] = [await fast(request(a.api_key, body)), await h.app.handle(request(b.api_key, body))];
    expect(f!.headers.get('retry-after')).toBe(e.headers.get('retry-after'));
    const fs = await seen(f!);
    expect(fs).toEqual(await seen(e));
    expect([fs.status, fs.body.code]).toEqual([429, 'rate_limited']);
  });

  test('hands everything else to the Elysia route, before charging anything', async () => {
    const t = await h.tenant({ rateLimitPerMinute: 1000 });
    const suspended = await h.tenant();
    await h.ctx.tenants.setStatus(suspended.tenant_id, 'suspended');
    const esgOnly = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', scopes: ['esg'] });
    const nif = nifOf('tier_a_low_pd');
    const handedOver: Request[] = [
      request(t.api_key, { nif }, { 'idempotency-key': 'k-1' }),
      request(t.api_key, '{"nif":', {}),
      request(t.api_key, '[1]', {}),
      request(t.api_key, { nif: '12345' }),
      request(t.api_key, { nif, refresh: 'sometimes' }),
      request(t.api_key, { nif, unknown_field: 1 }),
      request(t.api_key, { nif }, { 'content-type': 'text/plain' }),
      request('sk_test_' + '0'.repeat(28), { nif }),
      request(esgOnly.api_key, { nif }),
      request(suspended.api_key, { nif }),
      new Request('http://localhost/v1/score', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ nif }) }),
    ];
    for (const req of handedOver) expect(await fast(req)).toBeNull();
    // nothing was charged: the whole budget is still there
    const r = await h.json('POST', '/v1/score', { key: t.api_key, body: { nif } });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-ratelimit-remaining')).toBe('999');
  });

  test('an unexpected failure, or an answer that breaks its schema, is 500 internal_error with the §2.8 body and nothing leaked', async () => {
    const t = await h.tenant();
    const throwing = scoreFastPath(h.ctx, { score: async () => { throw new Error('secret detail'); } } as never);
    const malformed = scoreFastPath(h.ctx, { score: () => ({ score: 'high' }) } as never);
    for (const path of [throwing, malformed]) {
      const res = await path(request(t.api_key, { nif: nifOf('tier_a_low_pd') }));
      const body = await res!.json();
      expectError({ status: res!.status, body, headers: res!.headers }, 500, 'internal_error');
      expect(JSON.stringify(body)).not.toContain('secret detail');
      expect(res!.headers.get('x-ratelimit-limit')).not.toBeNull();
    }
  });

  test('bodies over the limit are handed over and answered 413 payload_too_large, declared or streamed', async () => {
    const t = await h.tenant();
    const big = JSON.stringify({ nif: nifOf('tier_a_low_pd'), customer_reference: 'x'.repeat(h.config.bodyLimitBytes) });
    expectError(await h.json('POST', '/v1/score', { key: t.api_key, rawBody: big, headers: { 'content-type': 'application/json', 'content-length': String(big.length) } }), 413, 'payload_too_large');
    const bytes = new TextEncoder().encode(big);
    const stream = new ReadableStream({ start(c) { for (let i = 0; i < bytes.length; i += 4096) c.enqueue(bytes.slice(i, i + 4096)); c.close(); } });
    const streamed = await dispatch(h.app, new Request('http://localhost/v1/score', { method: 'POST', body: stream, headers: { authorization: `Bearer ${t.api_key}`, 'content-type': 'application/json' } }));
    expectError({ status: streamed.status, body: await streamed.json(), headers: streamed.headers }, 413, 'payload_too_large');
  });

  test('a request handed over after its body was read is answered in full by the Elysia route', async () => {
    const t = await h.tenant();
    // through the server's dispatcher: the fast path reads the body, finds it invalid, hands over
    const bad = await h.json('POST', '/v1/score', { key: t.api_key, body: { nif: '12345' } });
    const e = expectError(bad, 422, 'validation_failed');
    expect(e.fields.map((f: { path: string }) => f.path)).toEqual(['nif']);
    expectError(await h.json('POST', '/v1/score', { key: t.api_key, rawBody: '{"nif":', headers: { 'content-type': 'application/json' } }), 400, 'invalid_json');
    expectError(await h.json('POST', '/v1/score', { key: t.api_key, rawBody: '"599000015"', headers: { 'content-type': 'application/json' } }), 422, 'validation_failed');
  });
});
