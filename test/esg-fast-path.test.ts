/**
 * POST /v1/esg through plugins/fast-path.ts: the plain case answered without Elysia's lifecycle,
 * exactly as the Elysia route answers it; anything else handed to the route before any charge.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { esgFastPath, esgService } from '../src/features/esg';
import { ESG_EXAMPLES } from '../src/features/esg/examples';
import { expectError, jsonPost, makeApp, seenAnswer, throughBothPaths, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

let h: TestApp;
let fast: ReturnType<typeof esgFastPath>;
beforeAll(async () => {
  h = await makeApp();
  fast = esgFastPath(h.ctx, esgService(h.ctx), '/v1/esg');
});
afterAll(() => h.close());

const example = ESG_EXAMPLES.developing_manufacturer;
const request = (key: string, body: unknown, headers: Record<string, string> = {}, path = '/v1/esg') => jsonPost(path, key, body, headers);
/** assessment ids and times differ between any two assessments */
const seen = (res: Response) => seenAnswer(res, ['assessment_id', 'computed_at']);

describe('POST /v1/esg fast path', () => {
  test('answers the plain case itself, exactly as the Elysia route does (en, pt-PT, customer_reference), and stores it', async () => {
    const cases: [unknown, Record<string, string>][] = [
      [example, {}],
      [{ ...example, customer_reference: 'supplier-42' }, { 'accept-language': 'pt-PT' }],
      [ESG_EXAMPLES[Object.keys(ESG_EXAMPLES)[0] as keyof typeof ESG_EXAMPLES], { 'content-type': 'application/json; charset=utf-8' }],
    ];
    for (const [body, headers] of cases) {
      const { viaFast, viaElysia, tenant } = await throughBothPaths(h, fast, (key) => request(key, body, headers));
      const f = await seen(viaFast.clone() as Response);
      expect(f).toEqual(await seen(viaElysia));
      expect(f.status).toBe(200);
      // stored before it was answered
      const { assessment_id } = (await viaFast.json()) as { assessment_id: string };
      const csrd = await h.json('POST', '/v1/csrd/report', { key: tenant.api_key, body: { assessment_id } });
      expect(csrd.status).toBe(201);
    }
  });

  test('the catalog alias POST /v1/esg-score answers through the same path', async () => {
    const t = await h.tenant();
    const alias = esgFastPath(h.ctx, esgService(h.ctx), '/v1/esg-score');
    const res = await alias(request(t.api_key, example, {}, '/v1/esg-score'));
    expect(res!.status).toBe(200);
  });

  test('hands everything else to the Elysia route, before charging anything; the route reports every bad field', async () => {
    const t = await h.tenant({ rateLimitPerMinute: 1000 });
    const scoreOnly = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', scopes: ['score'] });
    const handedOver: Request[] = [
      request(t.api_key, example, { 'idempotency-key': 'k-1' }),
      request(t.api_key, '{"nif":'),
      request(t.api_key, '[1]'),
      request(t.api_key, { ...example, nif: '123456788' }), // fails the check digit
      request(t.api_key, { ...example, sector: 'Z9' }),
      request(t.api_key, { ...example, answers: { ...example.answers, no_such_indicator: 1 } }),
      request(t.api_key, { ...example, extra: true }),
      request(t.api_key, example, { 'content-type': 'text/plain' }),
      request(scoreOnly.api_key, example),
    ];
    for (const req of handedOver) expect(await fast(req)).toBeNull();
    const r = await h.json('POST', '/v1/esg', { key: t.api_key, body: example });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-ratelimit-remaining')).toBe('999');
    // through the dispatcher: handed over after the body was read, answered in full by the route
    const bad = expectError(await h.json('POST', '/v1/esg', { key: t.api_key, body: { ...example, sector: 'Z9', answers: { ...example.answers, no_such_indicator: 1 } } }), 422, 'validation_failed');
    expect(bad.fields.map((f: { path: string }) => f.path).sort()).toEqual(['answers.no_such_indicator', 'sector']);
    expectError(await h.json('POST', '/v1/esg', { key: t.api_key, body: { ...example, nif: '123456788' } }), 422, 'invalid_nif');
    expectError(await h.json('POST', '/v1/esg', { key: scoreOnly.api_key, body: example }), 403, 'insufficient_scope');
  });

  test('an unexpected failure, or an answer that breaks its schema, is 500 internal_error with the §2.8 body and nothing leaked', async () => {
    const t = await h.tenant();
    const throwing = esgFastPath(h.ctx, { assess: async () => { throw new Error('secret detail'); } } as never, '/v1/esg');
    const malformed = esgFastPath(h.ctx, { assess: async () => ({ overall: 'high' }) } as never, '/v1/esg');
    for (const path of [throwing, malformed]) {
      const res = await path(request(t.api_key, example));
      const body = await res!.json();
      expectError({ status: res!.status, body, headers: res!.headers }, 500, 'internal_error');
      expect(JSON.stringify(body)).not.toContain('secret detail');
    }
  });

  test('tenants never see each other: an assessment made through the fast path is not reachable with another tenant\u2019s key', async () => {
    const a = await h.tenant();
    const b = await h.tenant();
    const res = await fast(request(a.api_key, example));
    const { assessment_id } = (await res!.json()) as { assessment_id: string };
    expect((await h.json('POST', '/v1/csrd/report', { key: b.api_key, body: { assessment_id } })).status).toBe(404);
  });
});
