/**
 * POST /v1/insurance/submit (issue 21): the sandbox insurer's outcomes from the scoring fixtures,
 * the live HTTP adapter against a fake insurer (and its outages), 503 insurer_not_configured,
 * storage, audit, decisions with_insurance, errors, scope, tenants, idempotency.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { Submission } from '../src/features/insurance/model';
import { expectError, makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

let h: TestApp;
let key: string;
beforeAll(async () => {
  h = await makeApp({}, { workers: false });
  key = (await h.tenant()).api_key;
});
afterAll(() => h.close());
const submit = (body: unknown, k = key, headers: Record<string, string> = {}) => h.json('POST', '/v1/insurance/submit', { key: k, body, headers });

describe('the sandbox insurer', () => {
  test('full within a good buyer\u2019s limit, partial above it or for a middling buyer, refused for a weak one; stored and audited', async () => {
    const full = await submit({ buyer_nif: '599000015', requested_limit_cents: 15_000_000, terms: { payment_terms_days: 60 }, customer_reference: 'ins-1' });
    expect(full.status).toBe(201);
    expect(Value.Check(Submission, full.body)).toBe(true);
    expect(full.body).toMatchObject({ status: 'full', granted_limit_cents: 15_000_000, insurer: 'sandbox', synthetic: true, customer_reference: 'ins-1', valid_until: expect.stringMatching(/^2027-/) });
    const big = await submit({ buyer_nif: '599000015', requested_limit_cents: 500_000_000, terms: { payment_terms_days: 60 } });
    expect(big.body.status).toBe('partial');
    // each submission its own reference (they shared one within the same minute)
    expect(full.body.insurer_reference).toMatch(/^SBX-[0-9A-F]{32}$/);
    expect(big.body.insurer_reference).not.toBe(full.body.insurer_reference);
    expect(big.body.granted_limit_cents % 100_000).toBe(0);
    expect(big.body.granted_limit_cents).toBeLessThan(500_000_000);
    const middling = await submit({ buyer_nif: '599000031', requested_limit_cents: 4_000_000, terms: { payment_terms_days: 90, operation_type: 'factoring' } });
    expect(middling.body).toMatchObject({ status: 'partial', reasons: [expect.stringContaining('half')] });
    expect(middling.body.granted_limit_cents).toBeLessThanOrEqual(2_000_000);
    const weak = await submit({ buyer_nif: '599000058', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } });
    expect(weak.body).toMatchObject({ status: 'refused', granted_limit_cents: 0, reasons: [expect.stringContaining('tier')] });
    expect((await h.json('GET', `/v1/insurance/submissions/${full.body.submission_id}`, { key })).body).toEqual(full.body);
    const trail = (await h.json('GET', `/v1/audit/${full.body.submission_id}`, { key })).body;
    expect(trail).toMatchObject({ verified: true, entries: [expect.objectContaining({ type: 'insurance.submitted' }), expect.objectContaining({ type: 'insurance.decided', data: expect.objectContaining({ status: 'full' }) })] });
    const list = (await h.json('GET', '/v1/insurance/submissions?buyer_nif=599000015', { key })).body.data;
    expect(list.map((x: any) => x.submission_id)).toEqual([big.body.submission_id, full.body.submission_id]);
    expect((await h.json('GET', '/v1/insurance/submissions?status=refused', { key })).body.data.length).toBe(1);
  });

  test('a decision with_insurance: the modality, the limit at least the insured amount, the basis; the submission must be on that NIF', async () => {
    const ins = await submit({ buyer_nif: '599000031', requested_limit_cents: 4_000_000, terms: { payment_terms_days: 90 } });
    const plain = await h.json('POST', '/v1/decision', { key, body: { nif: '599000031', context: { operation_type: 'factoring', amount_eur: 15_000, expected_term_days: 90 } } });
    const insured = await h.json('POST', '/v1/decision', { key, body: { nif: '599000031', context: { operation_type: 'factoring', amount_eur: 15_000, expected_term_days: 90, insurance_submission_id: ins.body.submission_id } } });
    expect(insured.status).toBe(200);
    expect(insured.body.recommendation.modality).toBe('with_insurance');
    expect(insured.body.recommendation.limit_eur).toBeGreaterThanOrEqual(Math.max(plain.body.recommendation.limit_eur, ins.body.granted_limit_cents / 100));
    expect(insured.body.recommendation.basis.at(-1)).toContain(ins.body.submission_id);
    const other = await submit({ buyer_nif: '599000015', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } });
    const wrong = await h.json('POST', '/v1/decision', { key, body: { nif: '599000031', context: { operation_type: 'factoring', amount_eur: 15_000, expected_term_days: 90, insurance_submission_id: other.body.submission_id } } });
    expect(expectError(wrong, 422, 'validation_failed').fields[0].path).toBe('context.insurance_submission_id');
    const refused = await submit({ buyer_nif: '599000058', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } });
    const noCover = await h.json('POST', '/v1/decision', { key, body: { nif: '599000058', context: { operation_type: 'factoring', amount_eur: 5_000, expected_term_days: 30, insurance_submission_id: refused.body.submission_id } } });
    expect(noCover.body.recommendation.modality).not.toBe('with_insurance');
    expect(noCover.body.recommendation.basis.at(-1)).toContain('no cover');
  });

  test('errors: a bad NIF, an unknown company, amounts, currency, terms; scope; other tenants; Idempotency-Key', async () => {
    expect(expectError(await submit({ buyer_nif: '599000016', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } }), 422, 'invalid_nif').fields).toEqual([{ path: 'buyer_nif', message: 'fails the NIF check digit' }]);
    expect(expectError(await submit({ buyer_nif: '599000015', seller_nif: '599000016', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } }), 422, 'invalid_nif').fields).toEqual([{ path: 'seller_nif', message: 'fails the NIF check digit' }]);
    expectError(await submit({ buyer_nif: '599000074', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } }), 404, 'company_not_found');
    expectError(await submit({ buyer_nif: '599000015', requested_limit_cents: 50, terms: { payment_terms_days: 30 } }), 422, 'validation_failed');
    expect(expectError(await submit({ buyer_nif: '599000015', requested_limit_cents: 1_000_000, currency: 'USD', terms: { payment_terms_days: 30 } }), 422, 'validation_failed').fields).toEqual([{ path: 'currency', message: 'must be "EUR"' }]);
    expectError(await submit({ buyer_nif: '599000015', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 400 } }), 422, 'validation_failed');
    const narrow = await h.tenant({ scopes: ['score'] });
    expectError(await submit({ buyer_nif: '599000015', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } }, narrow.api_key), 403, 'insufficient_scope');
    const mine = await submit({ buyer_nif: '599000015', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } }, key, { 'idempotency-key': 'ins-once' });
    const again = await submit({ buyer_nif: '599000015', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } }, key, { 'idempotency-key': 'ins-once' });
    expect(again.body.submission_id).toBe(mine.body.submission_id);
    const other = await h.tenant();
    expectError(await h.json('GET', `/v1/insurance/submissions/${mine.body.submission_id}`, { key: other.api_key }), 404, 'resource_not_found');
    expect((await h.json('GET', '/v1/insurance/submissions', { key: other.api_key })).body.data).toEqual([]);
  });
});

describe('live: the configured insurer over HTTP', () => {
  let insurer: ReturnType<typeof Bun.serve>;
  let mode: 'ok' | 'down' | 'slow' = 'ok';
  const seen: any[] = [];
  let live: TestApp;
  beforeAll(async () => {
    insurer = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(req) {
        if (mode === 'down') return new Response('oops', { status: 502 });
        if (mode === 'slow') await Bun.sleep(500);
        seen.push({ auth: req.headers.get('authorization'), body: await req.json() });
        return Response.json({ status: 'partial', granted_limit_cents: 2_000_000, reference: 'COF-778', reasons: ['sector cap'], valid_until: '2027-06-30' });
      },
    });
    live = await makeApp({ INSURER_URL: `http://127.0.0.1:${insurer.port}`, INSURER_API_KEY: 'secret-token', INSURER_NAME: 'Cosec', INSURER_TIMEOUT_MS: '200' }, { workers: false });
  });
  afterAll(async () => {
    insurer.stop(true);
    await live.close();
  });

  test('the request reaches the insurer with its token; the answer is stored; outages are 503 upstream_unavailable; unconfigured is 503 insurer_not_configured', async () => {
    const t = await live.tenant();
    const k = await live.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'live', name: 'live' });
    const r = await live.json('POST', '/v1/insurance/submit', { key: k.api_key, body: { buyer_nif: '599000015', requested_limit_cents: 5_000_000, terms: { payment_terms_days: 60 } } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ status: 'partial', granted_limit_cents: 2_000_000, insurer: 'Cosec', insurer_reference: 'COF-778', synthetic: false, reasons: ['sector cap'] });
    expect(seen[0]).toMatchObject({ auth: 'Bearer secret-token', body: { buyer_nif: '599000015', requested_limit_cents: 5_000_000, payment_terms_days: 60, submission_id: r.body.submission_id } });
    mode = 'down';
    const down = await live.json('POST', '/v1/insurance/submit', { key: k.api_key, body: { buyer_nif: '599000015', requested_limit_cents: 5_000_000, terms: { payment_terms_days: 60 } } });
    expectError(down, 503, 'upstream_unavailable');
    expect(down.headers.get('retry-after')).toBe('30');
    mode = 'slow';
    expectError(await live.json('POST', '/v1/insurance/submit', { key: k.api_key, body: { buyer_nif: '599000015', requested_limit_cents: 5_000_000, terms: { payment_terms_days: 60 } } }), 503, 'upstream_unavailable');
    expect((await live.json('GET', '/v1/insurance/submissions', { key: k.api_key })).body.data.length).toBe(1); // nothing stored for the failures
    // the main test app has no insurer: a live key there is 503 insurer_not_configured
    const t2 = await h.tenant();
    const k2 = await h.ctx.tenants.createKey({ tenantId: t2.tenant_id, env: 'live', name: 'live' });
    expectError(await h.json('POST', '/v1/insurance/submit', { key: k2.api_key, body: { buyer_nif: '599000015', requested_limit_cents: 5_000_000, terms: { payment_terms_days: 60 } } }), 503, 'insurer_not_configured');
  });
});
