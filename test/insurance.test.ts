/**
 * POST /v1/insurance/submit (issue 21): the sandbox insurer's outcomes from the scoring fixtures,
 * the live HTTP adapter against a fake insurer (and its outages), 503 insurer_not_configured,
 * storage, audit, decisions with_insurance, errors, scope, tenants, idempotency.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { eq } from 'drizzle-orm';
import { Value } from '@sinclair/typebox/value';
import { Submission } from '../src/features/insurance/model';
import { expectError, makeApp, suiteApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

const h = suiteApp();
const submit = (body: unknown, k = h.key, headers: Record<string, string> = {}) => h.json('POST', '/v1/insurance/submit', { key: k, body, headers });

describe('the sandbox insurer', () => {
  test("a middling buyer's half of a small request rounds down to nothing: refused, saying why (not as a full book)", async () => {
    const r = await submit({ buyer_nif: '599000031', requested_limit_cents: 150_000, terms: { payment_terms_days: 60 } }, (await h.tenant()).api_key);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ status: 'refused', granted_limit_cents: 0 });
    expect(r.body.reasons).toEqual([expect.stringMatching(/^tier C.?: half of the amount \(€750\.00\), rounded down to whole thousands of euros, is nothing to cover$/)]);
  });

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
    expect((await h.json('GET', `/v1/insurance/submissions/${full.body.submission_id}`, { key: h.key })).body).toEqual(full.body);
    const trail = (await h.json('GET', `/v1/audit/${full.body.submission_id}`, { key: h.key })).body;
    expect(trail).toMatchObject({ verified: true, entries: [expect.objectContaining({ type: 'insurance.submitted' }), expect.objectContaining({ type: 'insurance.decided', data: expect.objectContaining({ status: 'full' }) })] });
    const list = (await h.json('GET', '/v1/insurance/submissions?buyer_nif=599000015', { key: h.key })).body.data;
    expect(list.map((x: any) => x.submission_id)).toEqual([big.body.submission_id, full.body.submission_id]);
    expect((await h.json('GET', '/v1/insurance/submissions?status=refused', { key: h.key })).body.data.length).toBe(1);
  });

  test('a decision with_insurance: the modality, the limit at least the insured amount, the basis; the submission must be on that NIF', async () => {
    const ins = await submit({ buyer_nif: '599000031', requested_limit_cents: 4_000_000, terms: { payment_terms_days: 90 } });
    const plain = await h.json('POST', '/v1/decision', { key: h.key, body: { nif: '599000031', context: { operation_type: 'factoring', amount_eur: 15_000, expected_term_days: 90 } } });
    const insured = await h.json('POST', '/v1/decision', { key: h.key, body: { nif: '599000031', context: { operation_type: 'factoring', amount_eur: 15_000, expected_term_days: 90, insurance_submission_id: ins.body.submission_id } } });
    expect(insured.status).toBe(200);
    expect(insured.body.recommendation.modality).toBe('with_insurance');
    expect(insured.body.recommendation.limit_eur).toBeGreaterThanOrEqual(Math.max(plain.body.recommendation.limit_eur, ins.body.granted_limit_cents / 100));
    expect(insured.body.recommendation.basis.at(-1)).toContain(ins.body.submission_id);
    const other = await submit({ buyer_nif: '599000015', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } });
    const wrong = await h.json('POST', '/v1/decision', { key: h.key, body: { nif: '599000031', context: { operation_type: 'factoring', amount_eur: 15_000, expected_term_days: 90, insurance_submission_id: other.body.submission_id } } });
    expect(expectError(wrong, 422, 'validation_failed').fields[0].path).toBe('context.insurance_submission_id');
    const refused = await submit({ buyer_nif: '599000058', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } });
    const noCover = await h.json('POST', '/v1/decision', { key: h.key, body: { nif: '599000058', context: { operation_type: 'factoring', amount_eur: 5_000, expected_term_days: 30, insurance_submission_id: refused.body.submission_id } } });
    expect(noCover.body.recommendation.modality).not.toBe('with_insurance');
    expect(noCover.body.recommendation.basis.at(-1)).toContain('no cover');
  });

  test('partial cover below the amount: the insured part priced at the insured LGD, the rest at the uninsured modality\'s, blended by amount (pt-PT: "parcial")', async () => {
    const t = await h.tenant();
    const k = t.api_key;
    const ins = await submit({ buyer_nif: '599000031', requested_limit_cents: 5_000_000, terms: { payment_terms_days: 90, operation_type: 'factoring' } }, k);
    expect(ins.body.status).toBe('partial');
    const granted = ins.body.granted_limit_cents / 100;
    const amount = granted + 17_000;
    const context = (extra: Record<string, unknown> = {}) => ({ operation_type: 'factoring', amount_eur: amount, expected_term_days: 60, ...extra });
    const plain = (await h.json('POST', '/v1/decision', { key: k, body: { nif: '599000031', context: context() } })).body.recommendation;
    const within = (await h.json('POST', '/v1/decision', { key: k, body: { nif: '599000031', context: { ...context({ insurance_submission_id: ins.body.submission_id }), amount_eur: granted } } })).body.recommendation;
    const above = (await h.json('POST', '/v1/decision', { key: k, body: { nif: '599000031', context: context({ insurance_submission_id: ins.body.submission_id }) } })).body.recommendation;
    expect(within.modality).toBe('with_insurance');
    expect(above.modality).toBe('with_insurance');
    const share = granted / amount;
    expect(above.suggested_spread_bps).toBe(Math.round(share * within.suggested_spread_bps + (1 - share) * plain.suggested_spread_bps));
    expect(above.suggested_spread_bps).toBeGreaterThan(within.suggested_spread_bps);
    expect(above.suggested_spread_bps).toBeLessThan(plain.suggested_spread_bps);
    expect(above.basis.at(-1)).toBe(`€${granted.toLocaleString('en', { minimumFractionDigits: 2 })} insured at ${within.suggested_spread_bps} bps, the uninsured €17,000.00 at ${plain.modality}'s ${plain.suggested_spread_bps} bps: ${above.suggested_spread_bps} bps by amount`);
    const pt = (await h.json('POST', '/v1/decision', { key: k, headers: { 'accept-language': 'pt-PT' }, body: { nif: '599000031', context: context({ insurance_submission_id: ins.body.submission_id }) } })).body.recommendation;
    expect(pt.basis.at(-2)).toContain('cobertura parcial de');
    expect(pt.basis.at(-1)).toContain('sem seguro');
    expect(pt.suggested_spread_bps).toBe(above.suggested_spread_bps);
  });

  test('trade credit below B-, whose modality is with_insurance already: the insured amount at the with_insurance index of its notch, not the uninsured floor', async () => {
    const t = await h.tenant();
    const k = t.api_key;
    const ins = await submit({ buyer_nif: '599000031', requested_limit_cents: 4_000_000, terms: { payment_terms_days: 90 } }, k);
    const granted = ins.body.granted_limit_cents / 100;
    const decideOn = async (operation_type: string, insured: boolean) =>
      (await h.json('POST', '/v1/decision', { key: k, body: { nif: '599000031', context: { operation_type, amount_eur: granted, expected_term_days: 90, ...(insured ? { insurance_submission_id: ins.body.submission_id } : {}) } } })).body;
    const plain = await decideOn('trade_credit', false);
    const insured = await decideOn('trade_credit', true);
    const factoring = await decideOn('factoring', true);
    const tier = encodeURIComponent(insured.tier);
    const index = (await h.json('GET', `/v1/index/spreads?tier=${tier}&term_days=90&modality=with_insurance`, { key: k })).body;
    expect(index.spreads).toHaveLength(1);
    expect(insured.recommendation.suggested_spread_bps).toBe(index.spreads[0].spread_bps);
    expect(insured.recommendation.suggested_spread_bps).toBe(factoring.recommendation.suggested_spread_bps);
    expect(insured.recommendation.suggested_spread_bps).toBeLessThan(plain.recommendation.suggested_spread_bps);
  });

  test('cover is priced as insured, and only where it reaches: not lapsed, terms as long as the operation\'s, the notch within the tenant\'s minimum tier', async () => {
    const t = await h.tenant();
    const k = t.api_key;
    const ins = await submit({ buyer_nif: '599000031', requested_limit_cents: 4_000_000, terms: { payment_terms_days: 90 } }, k);
    const decideWith = (submission: string, term = 90) => h.json('POST', '/v1/decision', { key: k, body: { nif: '599000031', context: { operation_type: 'factoring', amount_eur: 15_000, expected_term_days: term, insurance_submission_id: submission } } });
    const plain = (await h.json('POST', '/v1/decision', { key: k, body: { nif: '599000031', context: { operation_type: 'factoring', amount_eur: 15_000, expected_term_days: 90 } } })).body;
    const insured = (await decideWith(ins.body.submission_id)).body;
    expect(insured.recommendation.modality).toBe('with_insurance');
    // the insured LGD (10 %) prices below the uninsured modality's
    expect(insured.recommendation.suggested_spread_bps).toBeLessThan(plain.recommendation.suggested_spread_bps);
    // a credit line is a loan, not trade receivables: no cover
    const line = (await h.json('POST', '/v1/decision', { key: k, body: { nif: '599000031', context: { operation_type: 'credit_line', amount_eur: 15_000, expected_term_days: 90, insurance_submission_id: ins.body.submission_id } } })).body;
    expect(line.recommendation.modality).not.toBe('with_insurance');
    expect(line.recommendation.basis.at(-1)).toContain('covers trade receivables, not a credit line');
    // a cover reaches the operations of its kind: confirming cover is not factoring cover, and the reverse
    const confirmingCover = await submit({ buyer_nif: '599000031', requested_limit_cents: 4_000_000, terms: { payment_terms_days: 90, operation_type: 'confirming' } }, k);
    const factoringCover = await submit({ buyer_nif: '599000031', requested_limit_cents: 4_000_000, terms: { payment_terms_days: 90, operation_type: 'factoring' } }, k);
    const decideOp = async (operation_type: string, submission: string, lang?: string) =>
      (await h.json('POST', '/v1/decision', { key: k, headers: lang ? { 'accept-language': lang } : {}, body: { nif: '599000031', context: { operation_type, amount_eur: 15_000, expected_term_days: 90, insurance_submission_id: submission } } })).body;
    const factoringOnConfirming = await decideOp('factoring', confirmingCover.body.submission_id);
    expect(factoringOnConfirming.recommendation.modality).not.toBe('with_insurance');
    expect(factoringOnConfirming.recommendation.basis.at(-1)).toContain('underwritten for confirming, which does not reach factoring');
    expect((await decideOp('factoring', confirmingCover.body.submission_id, 'pt-PT')).recommendation.basis.at(-1)).toContain('subscrito para confirming, que não abrange factoring');
    expect((await decideOp('confirming', confirmingCover.body.submission_id)).recommendation.modality).toBe('with_insurance');
    expect((await decideOp('confirming', factoringCover.body.submission_id)).recommendation.basis.at(-1)).toContain('underwritten for factoring, which does not reach confirming');
    expect((await decideOp('invoice_discounting', factoringCover.body.submission_id)).recommendation.modality).toBe('with_insurance');
    expect((await decideOp('trade_credit', factoringCover.body.submission_id)).recommendation.basis.at(-1)).toContain('underwritten for factoring, which does not reach trade_credit'); // (trade credit's own modality may be with_insurance: the basis tells)
    // trade-credit cover (the default kind) reaches the receivables financed: factoring above, and discounting
    expect((await decideOp('invoice_discounting', ins.body.submission_id)).recommendation.modality).toBe('with_insurance');
    expect((await decideOp('confirming', ins.body.submission_id)).recommendation.basis.at(-1)).toContain('underwritten for trade_credit, which does not reach confirming');
    // an operation longer than the cover's payment terms is not covered
    const longer = (await decideWith(ins.body.submission_id, 120)).body;
    expect(longer.recommendation.modality).not.toBe('with_insurance');
    expect(longer.recommendation.basis.at(-1)).toContain('covers payment terms up to 90 days');
    // a lapsed cover is no cover
    const s = h.ctx.database.t.insuranceSubmissions;
    const [row] = await h.ctx.database.db.select().from(s).where(eq(s.id, ins.body.submission_id));
    await h.ctx.database.db.update(s).set({ data: { ...(row!.data as object), valid_until: '2026-01-01' } }).where(eq(s.id, ins.body.submission_id));
    const lapsed = (await decideWith(ins.body.submission_id)).body;
    expect(lapsed.recommendation.modality).not.toBe('with_insurance');
    expect(lapsed.recommendation.basis.at(-1)).toContain('lapsed on 2026-01-01');
    // the tenant's minimum tier stands: insurance lowers the loss, not the appetite
    const fresh = await submit({ buyer_nif: '599000031', requested_limit_cents: 4_000_000, terms: { payment_terms_days: 90 } }, k);
    expect((await h.json('PATCH', '/v1/admin/credit-policy', { key: k, body: { min_tier: 'A-' } })).status).toBe(200);
    const below = (await decideWith(fresh.body.submission_id)).body;
    expect(below.recommendation).toMatchObject({ approved: false, limit_eur: 0 });
    expect(below.recommendation.basis.at(-1)).toContain('below the minimum tier; declined');
    // and the sandbox insurer does not share the bank's appetite: the same buyer, the same answer
    const again = await submit({ buyer_nif: '599000031', requested_limit_cents: 4_000_000, terms: { payment_terms_days: 90 } }, k);
    expect({ status: again.body.status, granted: again.body.granted_limit_cents }).toEqual({ status: fresh.body.status, granted: fresh.body.granted_limit_cents });
  });

  test('errors: a bad NIF, an unknown company, amounts, currency, terms; scope; other tenants; Idempotency-Key', async () => {
    expect(expectError(await submit({ buyer_nif: '599000016', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } }), 422, 'invalid_nif').fields).toEqual([{ path: 'buyer_nif', message: 'fails the NIF check digit' }]);
    expect(expectError(await submit({ buyer_nif: '599000015', seller_nif: '599000016', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } }), 422, 'invalid_nif').fields).toEqual([{ path: 'seller_nif', message: 'fails the NIF check digit' }]);
    expectError(await submit({ buyer_nif: '599000074', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } }), 404, 'company_not_found');
    // the sandbox's NIF unknown to the tax authority, named by the request's field
    expect(expectError(await submit({ buyer_nif: '599000066', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } }), 422, 'invalid_nif').fields).toEqual([{ path: 'buyer_nif', message: expect.any(String) }]);
    expect(expectError(await submit({ buyer_nif: '599000015', seller_nif: '599000015', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } }), 422, 'validation_failed').fields).toEqual([{ path: 'seller_nif', message: expect.stringContaining('is the buyer') }]);
    expectError(await submit({ buyer_nif: '599000015', requested_limit_cents: 50, terms: { payment_terms_days: 30 } }), 422, 'validation_failed');
    expect(expectError(await submit({ buyer_nif: '599000015', requested_limit_cents: 1_000_000, currency: 'USD', terms: { payment_terms_days: 30 } }), 422, 'validation_failed').fields).toEqual([{ path: 'currency', message: 'must be "EUR"' }]);
    expectError(await submit({ buyer_nif: '599000015', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 400 } }), 422, 'validation_failed');
    const narrow = await h.tenant({ scopes: ['score'] });
    expectError(await submit({ buyer_nif: '599000015', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } }, narrow.api_key), 403, 'insufficient_scope');
    const mine = await submit({ buyer_nif: '599000015', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } }, h.key, { 'idempotency-key': 'ins-once' });
    const again = await submit({ buyer_nif: '599000015', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } }, h.key, { 'idempotency-key': 'ins-once' });
    expect(again.body.submission_id).toBe(mine.body.submission_id);
    const other = await h.tenant();
    expectError(await h.json('GET', `/v1/insurance/submissions/${mine.body.submission_id}`, { key: other.api_key }), 404, 'resource_not_found');
    expect((await h.json('GET', '/v1/insurance/submissions', { key: other.api_key })).body.data).toEqual([]);
  });
});

describe('every problem of a submission in one 422, nothing stored', () => {
  const stored = async (tenantId: string) => (await h.ctx.database.db.select({ id: h.ctx.database.t.insuranceSubmissions.id }).from(h.ctx.database.t.insuranceSubmissions).where(eq(h.ctx.database.t.insuranceSubmissions.tenantId, tenantId))).length;

  test('the seller being the buyer beside schema problems: all listed, each at its path', async () => {
    const t = await h.tenant();
    const r = await submit({ buyer_nif: '599000015', seller_nif: '599000015', requested_limit_cents: 50, terms: { operation_type: 'leasing' }, limit: 5 }, t.api_key);
    expect(expectError(r, 422, 'validation_failed').fields).toEqual([
      { path: 'limit', message: 'is not a field of this request' },
      { path: 'requested_limit_cents', message: 'must be at least 100000' },
      { path: 'terms.payment_terms_days', message: 'is required' },
      { path: 'terms.operation_type', message: 'must be one of: "factoring", "confirming", "trade_credit"' },
      { path: 'seller_nif', message: 'is the buyer: a company does not insure its credit on itself' },
    ]);
    // a NIF failing its check digit beside another problem: listed with it, under validation_failed
    const digit = await submit({ buyer_nif: '599000016', seller_nif: '599000016', requested_limit_cents: 1_000_000 }, t.api_key);
    expect(expectError(digit, 422, 'validation_failed').fields).toEqual([
      { path: 'terms', message: 'is required' },
      { path: 'buyer_nif', message: 'fails the NIF check digit' },
      { path: 'seller_nif', message: 'fails the NIF check digit' },
    ]);
    // NIFs failing their check digit and nothing else: invalid_nif, one message per path (not also "is the buyer")
    const nifsOnly = await submit({ buyer_nif: '599000016', seller_nif: '599000016', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } }, t.api_key);
    expect(expectError(nifsOnly, 422, 'invalid_nif').fields).toEqual([
      { path: 'buyer_nif', message: 'fails the NIF check digit' },
      { path: 'seller_nif', message: 'fails the NIF check digit' },
    ]);
    const notObject = await h.json('POST', '/v1/insurance/submit', { key: t.api_key, body: 'x' });
    expect(expectError(notObject, 422, 'validation_failed').fields).toEqual([{ path: '(body)', message: 'must be a JSON object' }]);
    expect(await stored(t.tenant_id)).toBe(0);
    // a field the request does not have is refused even beside a valid body (a misspelt one would
    // have asked the cover without it), at any depth
    expect(expectError(await submit({ buyer_nif: '599000015', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 }, limit: 5 }, t.api_key), 422, 'validation_failed').fields).toEqual([{ path: 'limit', message: 'is not a field of this request' }]);
    expect(expectError(await submit({ buyer_nif: '599000015', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30, payment_term_days: 60 } }, t.api_key), 422, 'validation_failed').fields).toEqual([{ path: 'terms.payment_term_days', message: 'is not a field of this request' }]);
    expect(await stored(t.tenant_id)).toBe(0);
    expect((await submit({ buyer_nif: '599000015', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } }, t.api_key)).status).toBe(201);
    expect(await stored(t.tenant_id)).toBe(1);
  });

  test('live without an insurer: a bad request is still 422 first, listing everything', async () => {
    const live = await h.tenant({ env: 'live' });
    const r = await submit({ buyer_nif: '599000015', seller_nif: '599000015', requested_limit_cents: '1000000', terms: { payment_terms_days: 30 } }, live.api_key);
    expect(expectError(r, 422, 'validation_failed').fields.map((f: any) => f.path)).toEqual(['requested_limit_cents', 'seller_nif']);
    expectError(await submit({ buyer_nif: '599000015', requested_limit_cents: 1_000_000, terms: { payment_terms_days: 30 } }, live.api_key), 503, 'insurer_not_configured');
  });
});

describe('live: the configured insurer over HTTP', () => {
  let insurer: ReturnType<typeof Bun.serve>;
  let mode: 'ok' | 'down' | 'slow' = 'ok';
  let answer: Record<string, unknown> | null = null;
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
        return Response.json(answer ?? { status: 'partial', granted_limit_cents: 2_000_000, reference: 'COF-778', reasons: ['sector cap'], valid_until: '2027-06-30' });
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

  test('an answer that cannot be taken as cover (more than asked, negative, full for less, lapsed, no date, no reference) is 503 and nothing is stored', async () => {
    mode = 'ok';
    const t = await live.tenant();
    const k = await live.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'live', name: 'live' });
    const base = { reference: 'COF-1', reasons: [], valid_until: '2027-06-30' };
    const bad: Record<string, unknown>[] = [
      { ...base, status: 'full', granted_limit_cents: 50_000_000 },
      { ...base, status: 'partial', granted_limit_cents: -500 },
      { ...base, status: 'partial', granted_limit_cents: 12.5 },
      { ...base, status: 'full', granted_limit_cents: 1_000_000 },
      { ...base, status: 'partial', granted_limit_cents: 6_000_000 },
      { ...base, status: 'full', granted_limit_cents: 5_000_000, valid_until: '2020-01-01' },
      { ...base, status: 'partial', granted_limit_cents: 2_000_000, valid_until: 'not a date' },
      { ...base, status: 'full', granted_limit_cents: 5_000_000, valid_until: null },
      { ...base, status: 'full', granted_limit_cents: 5_000_000, reference: '' },
      { ...base, status: 'refused', granted_limit_cents: 5_000_000 },
      { ...base, status: 'maybe', granted_limit_cents: 0 },
    ];
    for (const a of bad) {
      answer = a;
      const r = await live.json('POST', '/v1/insurance/submit', { key: k.api_key, body: { buyer_nif: '599000015', requested_limit_cents: 5_000_000, terms: { payment_terms_days: 60 } } });
      expect({ a, status: r.status, code: r.body.code }).toEqual({ a, status: 503, code: 'upstream_unavailable' });
    }
    answer = { ...base, status: 'refused', granted_limit_cents: null, reasons: ['no appetite'] };
    expect((await live.json('POST', '/v1/insurance/submit', { key: k.api_key, body: { buyer_nif: '599000015', requested_limit_cents: 5_000_000, terms: { payment_terms_days: 60 } } })).body).toMatchObject({ status: 'refused', granted_limit_cents: 0 });
    // what an insurer may well send: a numeric reference, a date-time, reasons as objects, a refusal without a reference
    answer = { status: 'partial', granted_limit_cents: 2_000_000, reference: 778899, valid_until: '2027-06-30T23:59:59Z', reasons: [{ code: 'S1', text: 'sector cap' }] };
    expect((await live.json('POST', '/v1/insurance/submit', { key: k.api_key, body: { buyer_nif: '599000015', requested_limit_cents: 5_000_000, terms: { payment_terms_days: 60 } } })).body).toMatchObject({ status: 'partial', insurer_reference: '778899', valid_until: '2027-06-30', reasons: ['sector cap'] });
    answer = { status: 'refused' };
    expect((await live.json('POST', '/v1/insurance/submit', { key: k.api_key, body: { buyer_nif: '599000015', requested_limit_cents: 5_000_000, terms: { payment_terms_days: 60 } } })).body).toMatchObject({ status: 'refused', insurer_reference: '' });
    answer = null;
    expect((await live.json('GET', '/v1/insurance/submissions', { key: k.api_key })).body.data.length).toBe(3);
  });
});
