/**
 * Credit decisions, limits, the spreads index, sector risk and the credit policy, through HTTP:
 * happy paths, every error, tenant and environment isolation, the tenant's ERP books feeding them.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { eq } from 'drizzle-orm';
import { Value } from '@sinclair/typebox/value';
import { CreditLimitResponse, DecisionResponse, PolicyResponse, SectorRiskResponse, SpreadsResponse } from '../src/features/decision/model';
import { NOTCHES } from '../src/features/decision/policy';
import { connectSandboxErp, expectError, makeApp, REDIS_TEST_URL, TEST_DB, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

let h: TestApp;
let key: string;
let tenantId: string;
beforeAll(async () => {
  h = await makeApp();
  const t = await h.tenant();
  key = t.api_key;
  tenantId = t.tenant_id;
});
afterAll(() => h.close());

const ctx = (amount_eur = 50_000, operation_type = 'factoring', expected_term_days = 60) => ({ operation_type, amount_eur, expected_term_days });
const decide = (body: unknown, k = key, headers?: Record<string, string>, app = h) => app.json('POST', '/v1/decision', { key: k, body, headers });

/** Links the demo ERP through the sandbox consent form (as a customer would), then syncs it. */
async function syncDemo(k: string, customerReference: string, extra: { companyNif?: string }, h: TestApp) {
  await connectSandboxErp(h, k, 'demo', { customerReference, ...extra });
  const s = await h.json('POST', '/v1/erp-connector/sync', { key: k, body: { provider: 'demo', customer_reference: customerReference } });
  expect(s.status).toBe(202);
  for (let i = 0; i < 200; i++) {
    const r = await h.json('GET', `/v1/erp-connector/sync/${s.body.run_id}`, { key: k });
    if (r.body.status === 'succeeded') return r.body;
    if (r.body.status === 'failed') throw new Error(JSON.stringify(r.body));
    await Bun.sleep(25);
  }
  throw new Error('sync did not finish');
}

describe('POST /v1/decision — sandbox fixtures', () => {
  test('tier A fixture: approved for a modest amount, the full §4.4 shape, stored and readable', async () => {
    const r = await decide({ nif: '599000015', context: ctx(50_000), customer_reference: 'deal-1' });
    expect(r.status).toBe(200);
    expect(Value.Check(DecisionResponse, r.body)).toBe(true);
    const b = r.body;
    expect(b.decision_id).toMatch(/^dec_[0-9a-f-]{36}$/);
    expect(b.tier.startsWith('A')).toBe(true);
    expect(b.recommendation.approved).toBe(true);
    expect(b.recommendation.limit_eur).toBeGreaterThanOrEqual(50_000);
    expect(b.recommendation.modality).toBe('non_recourse');
    expect(b.score).toBeGreaterThanOrEqual(0);
    expect(b.score).toBeLessThanOrEqual(100);
    expect(b.breakdown.esg).toBeNull();
    expect(b.breakdown.financial).toBeGreaterThan(50); // a strong balance sheet
    expect(b.esg).toBeNull();
    expect(b.erp_source).toBeNull();
    expect(b.synthetic).toBe(true);
    expect(b.customer_reference).toBe('deal-1');
    expect(b.signals.length).toBeGreaterThan(0);
    for (const s of b.signals) expect(['+', '-']).toContain(s.weight);
    const strengths = b.signals.map((s: any) => s.strength);
    expect([...strengths].sort((x, y) => y - x)).toEqual(strengths);
    const got = await h.json('GET', `/v1/decisions/${b.decision_id}`, { key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(b);
  });

  test('tier E fixture is declined with limit 0; the amount above the limit declines an acceptable tier', async () => {
    const e = await decide({ nif: '599000058', context: ctx(1_000) });
    expect(e.status).toBe(200);
    expect(e.body.tier.startsWith('E')).toBe(true);
    expect(e.body.recommendation).toMatchObject({ approved: false, limit_eur: 0 });
    const big = await decide({ nif: '599000015', context: ctx(50_000_000) });
    expect(big.body.recommendation.approved).toBe(false);
    expect(big.body.recommendation.limit_eur).toBeGreaterThan(0);
  });

  test('same NIF, same answer as the score: tier within the score tier, score = score/10', async () => {
    for (const nif of ['599000023', '599000031', '599000040', '599000090']) {
      const s = await h.json('POST', '/v1/score', { key, body: { nif } });
      const d = await decide({ nif, context: ctx() });
      expect(d.body.tier[0]).toBe(s.body.tier);
      expect(d.body.score).toBe(Math.round(s.body.score / 10));
    }
  });

  test('a worse tier or a longer term never gets a lower spread', async () => {
    const spreads = [];
    for (const nif of ['599000015', '599000023', '599000031', '599000040']) spreads.push((await decide({ nif, context: ctx(1000, 'credit_line', 90) })).body);
    spreads.sort((a, b) => NOTCHES.indexOf(a.tier) - NOTCHES.indexOf(b.tier));
    for (let i = 1; i < spreads.length; i++) expect(spreads[i].recommendation.suggested_spread_bps).toBeGreaterThanOrEqual(spreads[i - 1].recommendation.suggested_spread_bps);
    const short = await decide({ nif: '599000023', context: ctx(1000, 'factoring', 30) });
    const long = await decide({ nif: '599000023', context: ctx(1000, 'factoring', 360) });
    expect(long.body.recommendation.suggested_spread_bps).toBeGreaterThanOrEqual(short.body.recommendation.suggested_spread_bps);
    expect(long.body.recommendation.limit_eur).toBeLessThanOrEqual(short.body.recommendation.limit_eur);
  });

  test('breakdown parts are null without their inputs (599000104: no data), not the neutral 50', async () => {
    const none = (await decide({ nif: '599000104', context: ctx(1000) })).body;
    expect(Value.Check(DecisionResponse, none)).toBe(true);
    expect(none.breakdown).toEqual({ financial: null, behavioral: null, esg: null });
  });

  test('the ESG assessment of the NIF fills breakdown.esg and esg', async () => {
    const t = await h.tenant();
    const q = await h.json('GET', '/v1/esg/questionnaire', { key: t.api_key });
    const example = q.body.examples?.[0] ?? null;
    const body = example ? { ...example, nif: '599000023' } : { nif: '599000023', sector: 'C', answers: {} };
    const esg = await h.json('POST', '/v1/esg', { key: t.api_key, body });
    expect(esg.status).toBe(200);
    const d = await decide({ nif: '599000023', context: ctx() }, t.api_key);
    expect(d.body.breakdown.esg).toBe(esg.body.overall);
    expect(d.body.esg).toEqual({ e: esg.body.environmental, s: esg.body.social, g: esg.body.governance });
  });

  test('errors: invalid NIF, the invalid and not-found fixtures, another country, bad context, bad types', async () => {
    expectError(await decide({ nif: '599000011', context: ctx() }), 422, 'invalid_nif');
    expectError(await decide({ nif: '599000066', context: ctx() }), 422, 'invalid_nif');
    expectError(await decide({ nif: '599000074', context: ctx() }), 404, 'company_not_found');
    const es = expectError(await decide({ nif: '599000015', country: 'ES', context: ctx() }), 422, 'unsupported_country');
    expect(es.fields).toEqual([{ path: 'country', message: 'must be PT' }]);
    // Portugal in either case; what is no country code is a validation problem, not another country
    expect((await decide({ nif: '599000015', country: 'pt', context: ctx() })).status).toBe(200);
    for (const country of ['XX', 'Portugal', 'PRT']) expect(expectError(await decide({ nif: '599000015', country, context: ctx() }), 422, 'validation_failed').fields).toEqual([{ path: 'country', message: expect.stringContaining('ISO 3166-1') }]);
    // euros in whole cents
    expect((await decide({ nif: '599000015', context: { ...ctx(), amount_eur: 1234.07 } })).status).toBe(200);
    expect(expectError(await decide({ nif: '599000015', context: { ...ctx(), amount_eur: 12345.678 } }), 422, 'validation_failed').fields).toEqual([{ path: 'context.amount_eur', message: 'must be whole cents (at most two decimals)' }]);
    for (const amount_eur of [500000.001, 1234567.891, 999999999.333]) expectError(await decide({ nif: '599000015', context: { ...ctx(), amount_eur } }), 422, 'validation_failed');
    expect((await decide({ nif: '599000015', context: { ...ctx(), amount_eur: 999999.99 } })).status).toBe(200);
    const cases: [unknown, string][] = [
      [{ nif: '599000015', context: { ...ctx(), amount_eur: 1e-300 } }, 'context.amount_eur'],
      [{ nif: '599000015' }, 'context'],
      [{ nif: '599000015', context: { ...ctx(), amount_eur: 0 } }, 'context.amount_eur'],
      [{ nif: '599000015', context: { ...ctx(), amount_eur: -5 } }, 'context.amount_eur'],
      [{ nif: '599000015', context: { ...ctx(), expected_term_days: 0 } }, 'context.expected_term_days'],
      [{ nif: '599000015', context: { ...ctx(), expected_term_days: 721 } }, 'context.expected_term_days'],
      [{ nif: '599000015', context: { ...ctx(), expected_term_days: 30.5 } }, 'context.expected_term_days'],
      [{ nif: '599000015', context: { ...ctx(), operation_type: 'leasing' } }, 'context.operation_type'],
      [{ nif: '599000015', context: ctx(), customer_reference: 'x'.repeat(129) }, 'customer_reference'],
      [{ nif: '59900001', context: ctx() }, 'nif'],
    ];
    for (const [body, path] of cases) {
      const e = expectError(await decide(body), 422, 'validation_failed');
      expect(e.fields.map((f: any) => f.path)).toContain(path);
    }
  });

  test('Accept-Language: pt-PT gives the signals\' labels in Portuguese (the score\'s reasons), stored as answered; English by default', async () => {
    const t = await h.tenant();
    const en = await decide({ nif: '599000023', context: ctx(150_001, 'factoring', 90) }, t.api_key);
    const pt = await decide({ nif: '599000023', context: ctx(150_001, 'factoring', 90) }, t.api_key, { 'accept-language': 'pt-PT' });
    expect([en.headers.get('content-language'), pt.headers.get('content-language')]).toEqual(['en', 'pt-PT']);
    expect(pt.body.signals.map((x: any) => x.factor)).toEqual(en.body.signals.map((x: any) => x.factor));
    expect(en.body.signals.map((x: any) => x.label)).toContain('High dependence on a single customer');
    expect(pt.body.signals.map((x: any) => x.label)).toContain('Elevada dependência de um único cliente');
    // the numbers are the same decision's; its basis lines in the language asked
    const { basis: enBasis, ...enNumbers } = en.body.recommendation;
    const { basis: ptBasis, ...ptNumbers } = pt.body.recommendation;
    expect(ptNumbers).toEqual(enNumbers);
    expect(enBasis[0]).toMatch(/^notch B \(PD \d+\.\d{2} %\)$/);
    expect(ptBasis[0]).toMatch(/^nível B \(PD \d+,\d{2} %\)$/);
    expect(ptBasis.length).toBe(enBasis.length);
    // every step, one money format (the notice's and the portal's): €1,234.56 / 1 234,56 €
    expect(enBasis.slice(1)).toEqual([
      'base 30 % of equity €1,350,000.00: €405,000.00', '× 0.7 for notch B', '× 0.8165 for a 90-day term', '= €231,476.78',
      'rounded down to the thousand: €231,000.00', 'spread: index B, 90 days, non_recourse: 135 bps',
    ]);
    expect(ptBasis.slice(1)).toEqual([
      'base: 30 % dos capitais próprios de 1 350 000,00 €: 405 000,00 €', '× 0,7 pelo nível B', '× 0,8165 por um prazo de 90 dias', '= 231 476,78 €',
      'arredondado por defeito ao milhar: 231 000,00 €', 'spread: índice B, 90 dias, non_recourse: 135 pb',
    ]);
    const storedPt = await h.json('GET', `/v1/decisions/${pt.body.decision_id}`, { key: t.api_key });
    const stored = storedPt.body;
    expect(stored.signals).toEqual(pt.body.signals);
    expect(stored.recommendation.basis).toEqual(ptBasis);
    // each stored decision tells its language, whatever the reader's
    expect([en.body.language, pt.body.language, stored.language]).toEqual(['en', 'pt-PT', 'pt-PT']);
    expect(storedPt.headers.get('content-language')).toBe('pt-PT');
    const listed = (await h.json('GET', '/v1/decisions?nif=599000023', { key: t.api_key })).body.data;
    expect(Object.fromEntries(listed.map((d: any) => [d.decision_id, d.language]))).toEqual({ [en.body.decision_id]: 'en', [pt.body.decision_id]: 'pt-PT' });
    // the credit limit too
    const limitPt = await h.call('GET', '/v1/credit-limit/599000023', { key: t.api_key, headers: { 'accept-language': 'pt-PT' } });
    expect(limitPt.headers.get('content-language')).toBe('pt-PT');
    expect(((await limitPt.json()) as { basis: string[] }).basis[0]).toMatch(/^nível B/);
    expect((await h.json('GET', '/v1/credit-limit/599000023', { key: t.api_key })).body.basis[0]).toMatch(/^notch B/);
  });

  test('scope, auth and live keys', async () => {
    expectError(await h.json('POST', '/v1/decision', { body: { nif: '599000015', context: ctx() } }), 401, 'missing_api_key');
    const t = await h.tenant({ scopes: ['esg'] });
    expectError(await decide({ nif: '599000015', context: ctx() }, t.api_key), 403, 'insufficient_scope');
    const live = await h.tenant({ env: 'live' });
    const r = expectError(await decide({ nif: '599000015', context: ctx() }, live.api_key), 503, 'live_tier_not_available');
    expect(r.roadmap_url).toMatch(/\/roadmap$/);
    expectError(await h.json('GET', '/v1/credit-limit/599000015', { key: live.api_key }), 503, 'live_tier_not_available');
  });

  test('Idempotency-Key replays the same decision and stores it once; usage meter decision', async () => {
    const t = await h.tenant();
    const headers = { 'idempotency-key': 'dec-once-1' };
    const a = await decide({ nif: '599000023', context: ctx() }, t.api_key, headers);
    const b = await decide({ nif: '599000023', context: ctx() }, t.api_key, headers);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.body.decision_id).toBe(a.body.decision_id);
    const list = await h.json('GET', '/v1/decisions', { key: t.api_key });
    expect(list.body.data.length).toBe(1);
    await h.ctx.usage.flush?.();
    const usage = await h.json('GET', '/v1/usage?group_by=meter', { key: t.api_key });
    const meters = (usage.body.data ?? usage.body.usage ?? []).map((u: any) => u.meter);
    if (usage.status === 200) expect(meters).toContain('decision');
  });
});

describe('POST /v1/decision: unknown fields', () => {
  let h: TestApp;
  beforeAll(async () => {
    h = await makeApp();
  });
  afterAll(() => h.close());
  test('an unknown field of context is 422 at its path (a misspelt insurance id must not be dropped); top-level ones listed beside it, ignored otherwise', async () => {
    const t = await h.tenant();
    const r = await h.json('POST', '/v1/decision', { key: t.api_key, body: { nif: '599000023', foo: 1, context: { operation_type: 'factoring', amount_eur: 1000, expected_term_days: 30, insurance_submision_id: 'ins_x' } } });
    const body = expectError(r, 422, 'validation_failed');
    expect(body.fields).toEqual([
      { path: 'context.insurance_submision_id', message: 'is not a field of context (operation_type, amount_eur, expected_term_days, insurance_submission_id): a misspelt one would change the decision without a word' },
      { path: 'foo', message: 'is not a field of this request (ignored)' },
    ]);
    // nothing decided, nothing stored
    expect((await h.json('GET', '/v1/decisions', { key: t.api_key })).body.data).toEqual([]);
    // a field of context sent beside it: 422 saying where it belongs (the cover would have been dropped)
    const misplaced = await h.json('POST', '/v1/decision', { key: t.api_key, body: { nif: '599000023', insurance_submission_id: `ins_${crypto.randomUUID()}`, context: { operation_type: 'factoring', amount_eur: 1000, expected_term_days: 30 } } });
    expect(expectError(misplaced, 422, 'validation_failed').fields).toEqual([{ path: 'insurance_submission_id', message: 'belongs inside context (context.insurance_submission_id)' }]);
    // a top-level unknown alone stays ignored, as on every route
    const ok = await h.json('POST', '/v1/decision', { key: t.api_key, body: { nif: '599000023', foo: 1, context: { operation_type: 'factoring', amount_eur: 1000, expected_term_days: 30 } } });
    expect(ok.status).toBe(200);
  });
});

describe('GET /v1/decisions', () => {
  test('newest first, filtered by NIF, paginated by cursor; a bad cursor is 422; unknown id 404', async () => {
    const t = await h.tenant();
    const ids: string[] = [];
    // (each a request of its own: the same request again is the same decision)
    for (const [i, nif] of ['599000015', '599000023', '599000015', '599000031', '599000015'].entries()) ids.push((await decide({ nif, context: ctx(1000 + i) }, t.api_key)).body.decision_id);
    const p1 = await h.json('GET', '/v1/decisions?nif=599000015&limit=2', { key: t.api_key });
    expect(p1.body.data.map((d: any) => d.decision_id)).toEqual([ids[4], ids[2]]);
    const p2 = await h.json('GET', `/v1/decisions?nif=599000015&limit=2&cursor=${p1.body.next_cursor}`, { key: t.api_key });
    expect(p2.body.data.map((d: any) => d.decision_id)).toEqual([ids[0]]);
    expect(p2.body.next_cursor).toBeNull();
    expect((await h.json('GET', '/v1/decisions', { key: t.api_key })).body.data.length).toBe(5);
    expectError(await h.json('GET', '/v1/decisions?cursor=nope', { key: t.api_key }), 422, 'validation_failed');
    expectError(await h.json('GET', '/v1/decisions?limit=0', { key: t.api_key }), 422, 'validation_failed');
    expectError(await h.json('GET', `/v1/decisions/dec_${'0'.repeat(8)}-0000-7000-8000-${'0'.repeat(12)}`, { key: t.api_key }), 404, 'resource_not_found');
  });

  test('tenant isolation: another tenant neither lists nor reads them', async () => {
    const a = await h.tenant();
    const b = await h.tenant();
    const d = (await decide({ nif: '599000015', context: ctx() }, a.api_key)).body;
    expect((await h.json('GET', '/v1/decisions', { key: b.api_key })).body.data).toEqual([]);
    expectError(await h.json('GET', `/v1/decisions/${d.decision_id}`, { key: b.api_key }), 404, 'resource_not_found');
    const liveKey = await h.ctx.tenants.createKey({ tenantId: a.tenant_id, env: 'live' });
    expectError(await h.json('GET', `/v1/decisions/${d.decision_id}`, { key: liveKey.api_key }), 404, 'resource_not_found');
  });

  test('an answer failing its own schema (a stored row gone bad) is our 500 with the request id, not a 422 naming the answer\'s fields', async () => {
    const a = await h.tenant();
    const d = (await decide({ nif: '599000015', context: ctx() }, a.api_key)).body;
    const t = h.ctx.database.t.creditDecisions;
    await h.ctx.database.db.update(t).set({ response: JSON.stringify({ ...d, score: 'NaN' }) }).where(eq(t.id, d.decision_id));
    const r = await h.json('GET', `/v1/decisions/${d.decision_id}`, { key: a.api_key });
    expect(expectError(r, 500, 'internal_error')).not.toHaveProperty('fields');
    expect(r.body.requestId).toBe(r.headers.get('x-request-id'));
  });
});

describe('the tenant\'s ERP books feed decisions', () => {
  // a larger demo data set than the default 50 documents, so every fixture buyer has a history whatever the seed
  let erp: TestApp;
  beforeAll(async () => {
    erp = await makeApp({ ERP_DEMO_INVOICES: '600' });
  });
  afterAll(() => erp.close());
  test('a score cached before a sync is not served after it: POST /v1/score and its batch recompute with the books, as decisions do', async () => {
    const t = await erp.tenant();
    const first = (await erp.json('POST', '/v1/score', { key: t.api_key, body: { nif: '599000040' } })).body;
    expect(first).toMatchObject({ cache: 'fresh', tier: 'D' });
    expect(first.data_sources).not.toContain('erp:demo');
    expect((await erp.json('POST', '/v1/score', { key: t.api_key, body: { nif: '599000040' } })).body.cache).toBe('cached');
    const batchBefore = (await erp.json('POST', '/v1/score/batch', { key: t.api_key, body: { items: [{ nif: '599000023' }] } })).body;
    erp.clock.advance(1000);
    await syncDemo(t.api_key, 'books-cache', {}, erp);
    erp.clock.advance(1000);
    // many at once (the in-process cache held the score from before the sync): none answers it
    const burst = await Promise.all(Array.from({ length: 12 }, () => erp.json('POST', '/v1/score', { key: t.api_key, body: { nif: '599000040' } })));
    for (const b of burst) expect(b.body.data_sources).toContain('erp:demo');
    const after = burst[0]!.body;
    expect(after.score).not.toBe(first.score);
    // then cached, and a sync that wrote nothing new (an incremental one right after) keeps it so
    erp.clock.advance(1000);
    const rerun = await erp.json('POST', '/v1/erp-connector/sync', { key: t.api_key, body: { provider: 'demo', customer_reference: 'books-cache' } });
    let status = '';
    for (let i = 0; i < 200 && status !== 'succeeded'; i++) {
      const r = (await erp.json('GET', `/v1/erp-connector/sync/${rerun.body.run_id}`, { key: t.api_key })).body;
      status = r.status;
      if (status === 'succeeded') expect(r.invoices_count + r.transactions_count).toBe(0);
      else await Bun.sleep(25);
    }
    expect(status).toBe('succeeded');
    erp.clock.advance(1000);
    const again = (await erp.json('POST', '/v1/score', { key: t.api_key, body: { nif: '599000040' } })).body;
    expect(again).toMatchObject({ cache: 'cached', score: after.score });
    const batchAfter = (await erp.json('POST', '/v1/score/batch', { key: t.api_key, body: { items: [{ nif: '599000023' }] } })).body;
    expect(batchAfter.data[0].result.cache).toBe('fresh');
    expect(batchAfter.data[0].result.data_sources).toContain('erp:demo');
    expect(batchAfter.data[0].result.computed_at).not.toBe(batchBefore.data[0].result.computed_at);
  });

  test('after a demo sync, decisions on the fixture buyers name the provider, use the observed behaviour, and the score lists erp:demo', async () => {
    const t = await erp.tenant();
    const before = (await decide({ nif: '599000040', context: ctx(5000, 'trade_credit') }, t.api_key, undefined, erp)).body;
    expect(before.erp_source).toBeNull();
    erp.clock.advance(1000);
    await syncDemo(t.api_key, 'books-1', {}, erp);
    erp.clock.advance(1000);
    // a sync after the cached score makes the next decision recompute it
    const after = (await decide({ nif: '599000040', context: ctx(5000, 'trade_credit') }, t.api_key, undefined, erp)).body;
    expect(after.erp_source).toBe('demo');
    // the weighed driver (the score's payment reason the books set) names the books as its source;
    // the books' details beside it are observations, not drivers: no signal of strength 0
    const erpSignals = after.signals.filter((s: any) => s.source === 'erp:demo');
    expect(erpSignals.map((s: any) => s.factor)).toContain('slow_payer');
    for (const s of after.signals) expect(s.strength).toBeGreaterThan(0);
    expect(after.signals.map((s: any) => s.factor)).not.toContain('erp_pays_late');
    expect(after.observations.map((s: any) => s.factor)).toContain('erp_pays_late');
    for (const o of after.observations) expect(Object.keys(o).sort()).toEqual(['factor', 'label', 'source']);
    // the books' observations in Portuguese too, with the same numbers
    const afterPt = (await decide({ nif: '599000040', context: ctx(5000, 'trade_credit') }, t.api_key, { 'accept-language': 'pt' }, erp)).body;
    const late = (b: any) => b.observations.find((s: any) => s.factor === 'erp_pays_late').label;
    expect(late(afterPt)).toStartWith('Paga as suas faturas');
    expect(late(afterPt).match(/\d+/g)).toEqual(late(after).match(/\d+/g));
    expect(after.breakdown.behavioral).toBeLessThan(before.breakdown.behavioral);
    expect(Date.parse(after.data_freshness)).toBeLessThanOrEqual(Date.parse(after.computed_at));
    const prompt = (await decide({ nif: '599000015', context: ctx(5000, 'trade_credit') }, t.api_key, undefined, erp)).body;
    expect(prompt.observations.map((s: any) => s.factor)).toContain('erp_pays_on_time');
    const score = await erp.json('POST', '/v1/score', { key: t.api_key, body: { nif: '599000040' } });
    expect(score.body.data_sources).toContain('erp:demo');
    expect(score.body.algorithm_version).toBe('score-1.1.0');
    const limit = await erp.json('GET', '/v1/credit-limit/599000040?term_days=30', { key: t.api_key });
    expect(limit.body.erp_source).toBe('demo');
    // another tenant's books do not leak into its decisions
    const other = await erp.tenant();
    expect((await decide({ nif: '599000040', context: ctx(5000, 'trade_credit') }, other.api_key, undefined, erp)).body.erp_source).toBeNull();
  });

  test('a buyer is judged as far as the books\' bank data reaches: days passing after the last sync do not age its record; books without bank data are judged as of today', async () => {
    const startedAt = erp.clock.ms;
    try {
      const judge = async (k: string) => {
        const d = (await decide({ nif: '599000040', refresh: 'force_refresh', context: ctx(5000, 'trade_credit') }, k, undefined, erp)).body;
        return { score: d.score, pd: d.pd_estimate, erp: d.signals.filter((s: any) => s.source === 'erp:demo').map((s: any) => s.label) };
      };
      const withBank = await erp.tenant();
      await syncDemo(withBank.api_key, 'books-reach', {}, erp);
      // the same books without their bank data (as from a provider that has none): their sync cursor
      // still names a transactions position, which must not pass for a reach
      const noBank = await erp.tenant();
      await syncDemo(noBank.api_key, 'books-reach', {}, erp);
      const b = erp.ctx.database.t.bankTransactions;
      await erp.ctx.database.withTx((tx) => tx.delete(b).where(eq(b.tenantId, noBank.tenant_id)));

      // the demo books' bank data (the last documents' payments) ends within 100 days of the test
      // clock; from then on, with no sync meanwhile, nothing is known about the days that pass
      erp.clock.advance(100 * 86_400_000);
      const then = await judge(withBank.api_key);
      const thenNoBank = await judge(noBank.api_key);
      expect(then.erp.length).toBeGreaterThan(0);
      erp.clock.advance(60 * 86_400_000);
      expect(await judge(withBank.api_key)).toEqual(then);
      expect((await judge(noBank.api_key)).pd).toBeGreaterThan(thenNoBank.pd); // unpaid documents keep ageing to today
    } finally {
      erp.clock.ms = startedAt;
    }
  });

  test('the connected company\'s own books (company_nif at initiate) feed decisions on it; a bad company_nif is 422', async () => {
    const t = await erp.tenant();
    const bad = await erp.json('POST', '/v1/erp-connector/oauth/initiate', { key: t.api_key, body: { provider: 'demo', customer_reference: 'own', return_url: 'https://example.com/', company_nif: '599000011' } });
    expect(expectError(bad, 422, 'invalid_nif').fields[0].path).toBe('company_nif');
    await syncDemo(t.api_key, 'own-books', { companyNif: '599000090' }, erp);
    const conns = await erp.json('GET', '/v1/erp-connector/connections', { key: t.api_key });
    expect(conns.body.data.find((c: any) => c.customer_reference === 'own-books').company_nif).toBe('599000090');
    const d = (await decide({ nif: '599000090', context: ctx(1000, 'credit_line') }, t.api_key, undefined, erp)).body;
    expect(d.erp_source).toBe('demo');
    const score = await erp.json('POST', '/v1/score', { key: t.api_key, body: { nif: '599000090' } });
    expect(score.body.data_sources).toContain('erp:demo');
  });
});

describe('GET /v1/credit-limit/{buyer_nif}', () => {
  test('the documented shape; a longer term gives no more; errors as /v1/score', async () => {
    const r = await h.json('GET', '/v1/credit-limit/599000023', { key });
    expect(r.status).toBe(200);
    expect(Value.Check(CreditLimitResponse, r.body)).toBe(true);
    expect(r.body).toMatchObject({ buyer_nif: '599000023', currency: 'EUR', term_days: 60, tier: 'B' });
    expect(r.body.basis.length).toBeGreaterThan(1);
    const long = await h.json('GET', '/v1/credit-limit/599000023?term_days=360', { key });
    expect(long.body.limit_eur).toBeLessThan(r.body.limit_eur);
    expectError(await h.json('GET', '/v1/credit-limit/599000011', { key }), 422, 'invalid_nif');
    expectError(await h.json('GET', '/v1/credit-limit/599000074', { key }), 404, 'company_not_found');
    expectError(await h.json('GET', '/v1/credit-limit/12345', { key }), 422, 'validation_failed');
    expectError(await h.json('GET', '/v1/credit-limit/599000023?term_days=0', { key }), 422, 'validation_failed');
    // an integer is written in digits: 1e2, 0x10 or 5.0 are not read as 100, 16 and 5
    for (const v of ['1e2', '0x10', '60.0', '%2060'])
      expect(expectError(await h.json('GET', `/v1/credit-limit/599000023?term_days=${v}`, { key }), 422, 'validation_failed').fields).toEqual([{ path: 'query.term_days', message: 'must be an integer written in digits (e.g. 50)' }]);
    expectError(await h.json('GET', '/v1/decisions?limit=1e1', { key }), 422, 'validation_failed');
    expect((await h.json('GET', '/v1/credit-limit/599000058', { key })).body.limit_eur).toBe(0);
  });
});

describe('GET /v1/index/spreads', () => {
  test('every tier × bucket × modality, monotone, filters; bad filters are 422', async () => {
    const r = await h.json('GET', '/v1/index/spreads', { key });
    expect(r.status).toBe(200);
    expect(Value.Check(SpreadsResponse, r.body)).toBe(true);
    expect(r.body.spreads.length).toBe(15 * 5 * 5);
    expect(r.body.base_rate).toEqual({ name: 'EURIBOR 3M', value_pct: 2.05, as_of: '2026-11-02' });
    const at = (tier: string, term: number, m: string) => r.body.spreads.find((s: any) => s.tier === tier && s.term_days === term && s.modality === m).spread_bps;
    for (const m of ['non_recourse', 'with_insurance'])
      for (let i = 1; i < NOTCHES.length; i++) for (const term of [30, 60, 90, 180, 360]) expect(at(NOTCHES[i]!, term, m)).toBeGreaterThanOrEqual(at(NOTCHES[i - 1]!, term, m));
    const f = await h.json('GET', '/v1/index/spreads?tier=B%2B&term_days=90&modality=recourse', { key });
    expect(f.body.spreads).toEqual([expect.objectContaining({ tier: 'B+', term_days: 90, modality: 'recourse' })]);
    const plus = await h.json('GET', '/v1/index/spreads?tier=B+&term_days=90&modality=recourse', { key });
    expect(plus.body.spreads).toEqual(f.body.spreads);
    for (const q of ['tier=F', 'term_days=45', 'modality=cash']) expectError(await h.json('GET', `/v1/index/spreads?${q}`, { key }), 422, 'validation_failed');
    // the term's message names its values whether the value is out of range or between them
    for (const q of ['term_days=0', 'term_days=45', 'term_days=999']) expect(expectError(await h.json('GET', `/v1/index/spreads?${q}`, { key }), 422, 'validation_failed').fields).toEqual([{ path: 'query.term_days', message: 'must be one of: 30, 60, 90, 180, 360' }]);
  });
});

describe('GET /v1/sector-risk/{naics}', () => {
  test('sector, subsector and a 6-digit industry inheriting its subsector; companies_scored counts this tenant\'s scored companies', async () => {
    const t = await h.tenant();
    const zero = await h.json('GET', '/v1/sector-risk/332', { key: t.api_key });
    expect(zero.status).toBe(200);
    expect(Value.Check(SectorRiskResponse, zero.body)).toBe(true);
    expect(zero.body).toMatchObject({ naics: '332', level: 'subsector', nace: { section: 'C', division: '25' }, companies_scored: 0 });
    await h.json('POST', '/v1/score', { key: t.api_key, body: { nif: '599000023' } }); // sector C
    await h.json('POST', '/v1/score', { key: t.api_key, body: { nif: '599000112' } }); // sector C
    await h.json('POST', '/v1/score', { key: t.api_key, body: { nif: '599000015' } }); // sector G
    expect((await h.json('GET', '/v1/sector-risk/332', { key: t.api_key })).body.companies_scored).toBe(2);
    expect((await h.json('GET', '/v1/sector-risk/42', { key: t.api_key })).body).toMatchObject({ level: 'sector', companies_scored: 1 });
    const six = await h.json('GET', '/v1/sector-risk/722511', { key: t.api_key });
    expect(six.body).toMatchObject({ naics: '722511', matched_naics: '722', risk_level: 'high' });
    // another tenant's scores are not counted
    expect((await h.json('GET', '/v1/sector-risk/332', { key })).body.companies_scored).toBeGreaterThanOrEqual(0);
    const other = await h.tenant();
    expect((await h.json('GET', '/v1/sector-risk/332', { key: other.api_key })).body.companies_scored).toBe(0);
  });
  test('malformed → 422 validation_failed; unknown → 404 sector_not_found', async () => {
    for (const c of ['1', '1234567', 'ab', '33a']) expectError(await h.json('GET', `/v1/sector-risk/${c}`, { key }), 422, 'validation_failed');
    expectError(await h.json('GET', '/v1/sector-risk/99', { key }), 404, 'sector_not_found');
    expectError(await h.json('GET', '/v1/sector-risk/999999', { key }), 404, 'sector_not_found');
  });
});

describe('credit policy', () => {
  test('defaults; PATCH changes appetite, LGD and margin for that environment only; decisions and the index follow; audited', async () => {
    const t = await h.tenant();
    const g = await h.json('GET', '/v1/admin/credit-policy', { key: t.api_key });
    expect(g.status).toBe(200);
    expect(Value.Check(PolicyResponse, g.body)).toBe(true);
    expect(g.body).toMatchObject({ min_tier: 'D-', max_amount_eur: 1_000_000, margin_bps: 50, is_default: true, updated_at: null });
    const before = (await decide({ nif: '599000031', context: ctx(1000) }, t.api_key)).body;
    expect(before.recommendation.approved).toBe(true);
    const spreadBefore = (await h.json('GET', '/v1/index/spreads?tier=A&term_days=30&modality=non_recourse', { key: t.api_key })).body.spreads[0].spread_bps;
    const p = await h.json('PATCH', '/v1/admin/credit-policy', { key: t.api_key, body: { min_tier: 'B-', margin_bps: 150, lgd: { non_recourse: 0.6 } } });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ min_tier: 'B-', margin_bps: 150, is_default: false, lgd: { non_recourse: 0.6, recourse: 0.3 } });
    const after = (await decide({ nif: '599000031', context: ctx(1000) }, t.api_key)).body;
    expect(after.recommendation).toMatchObject({ approved: false, limit_eur: 0 });
    const spreadAfter = (await h.json('GET', '/v1/index/spreads?tier=A&term_days=30&modality=non_recourse', { key: t.api_key })).body.spreads[0].spread_bps;
    expect(spreadAfter).toBeGreaterThan(spreadBefore + 99);
    // a maximum summed by the client in binary floating point is stored and shown as the cents it is
    const summed = await h.json('PATCH', '/v1/admin/credit-policy', { key: t.api_key, body: { max_amount_eur: 1000.1 + 0.2 } });
    expect(summed.body.max_amount_eur).toBe(1000.3);
    expect((await h.json('GET', '/v1/admin/credit-policy', { key: t.api_key })).body.max_amount_eur).toBe(1000.3);
    // another tenant keeps the defaults
    expect((await h.json('GET', '/v1/admin/credit-policy', { key })).body.is_default).toBe(true);
    const audit = await h.json('GET', '/v1/admin/audit-log', { key: t.api_key });
    if (audit.status === 200) expect(JSON.stringify(audit.body)).toContain('credit_policy.updated');
  });
  test('errors: empty or unknown fields, out-of-range values, scope', async () => {
    const t = await h.tenant();
    for (const body of [{}, { min_tier: 'Z' }, { max_amount_eur: 10 }, { lgd: { non_recourse: 1.5 } }, { lgd: { cash: 0.1 } }, { margin_bps: -1 }, { margin_bps: 1.5 }])
      expectError(await h.json('PATCH', '/v1/admin/credit-policy', { key: t.api_key, body }), 422, 'validation_failed');
    const narrow = await h.tenant({ scopes: ['score'] });
    expectError(await h.json('GET', '/v1/admin/credit-policy', { key: narrow.api_key }), 403, 'insufficient_scope');
    expectError(await h.json('PATCH', '/v1/admin/credit-policy', { key: narrow.api_key, body: { margin_bps: 1 } }), 403, 'insufficient_scope');
  });
});

describe('live keys', () => {
  test('the index and sector risk answer live keys too (they need no live data tier); the policy is per environment', async () => {
    const t = await h.tenant();
    const live = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'live' });
    expect((await h.json('GET', '/v1/index/spreads?tier=A', { key: live.api_key })).status).toBe(200);
    expect((await h.json('GET', '/v1/sector-risk/23', { key: live.api_key })).body).toMatchObject({ risk_level: 'elevated', companies_scored: 0 });
    await h.json('PATCH', '/v1/admin/credit-policy', { key: t.api_key, body: { margin_bps: 300 } });
    expect((await h.json('GET', '/v1/admin/credit-policy', { key: live.api_key })).body).toMatchObject({ margin_bps: 50, is_default: true });
    expect((await h.json('GET', '/v1/admin/credit-policy', { key: t.api_key })).body).toMatchObject({ margin_bps: 300, is_default: false });
  });
  test('the documented response example is a valid decision', () => {
    for (const ex of (DecisionResponse as any).examples) expect(Value.Check(DecisionResponse, ex)).toBe(true);
  });
});

describe('policy documentation', () => {
  test('/docs/credit-policy and /docs/sector-risk serve the pages the answers link to', async () => {
    const spreads = await h.json('GET', '/v1/index/spreads?tier=A', { key });
    expect(new URL(spreads.body.methodology_url).pathname).toBe('/docs/credit-policy');
    // the Markdown source for whoever asks for it
    const page = await h.call('GET', '/docs/credit-policy', { headers: { accept: 'text/markdown' } });
    expect(page.status).toBe(200);
    expect([page.headers.get('content-type'), page.headers.get('vary')]).toEqual(['text/markdown; charset=utf-8', 'Accept']);
    const text = await page.text();
    expect(text).toContain('## 9. Worked example');
    expect(text).toContain('limit €231 000');
    // a page for a browser or curl's */*: HTML, its headings and tables rendered (seen in Chromium: test/portal.test.ts)
    for (const accept of [undefined, '*/*', 'text/html,application/xhtml+xml,*/*;q=0.8']) {
      const shown = await h.call('GET', '/docs/sector-risk', { headers: accept ? { accept } : {} });
      expect([shown.headers.get('content-type'), shown.headers.get('vary')]).toEqual(['text/html; charset=utf-8', 'Accept']);
      const body = await shown.text();
      expect(body).toContain('<table>');
      expect(body).toContain('assumptions');
      expect(body).not.toContain('\n## ');
    }
    expectError(await h.json('GET', '/docs/nothing-here'), 404, 'not_found');
  });
  test('the worked example holds through HTTP (599000023, factoring €150 000 over 90 days)', async () => {
    const t = await h.tenant();
    const d = (await decide({ nif: '599000023', context: ctx(150_000, 'factoring', 90) }, t.api_key)).body;
    expect(d).toMatchObject({ tier: 'B', score: 66, recommendation: { approved: true, limit_eur: 231_000, suggested_spread_bps: 135, modality: 'non_recourse' } });
  });
});

describe('a repeated decision while nothing behind it changed', () => {
  // with Redis, PostgreSQL has the tenant generations the in-process caches need (SQLite has its own signal)
  let c: TestApp;
  beforeAll(async () => {
    c = await makeApp({ REDIS_URL: REDIS_TEST_URL });
  });
  afterAll(() => c.close());
  const same = { nif: '599000031', context: ctx(10_000, 'trade_credit', 60), customer_reference: 'po-1' };

  test('is the same decision (cache: cached, same id, stored once, billed each time); a change of input, policy or ESG, or force_refresh, decides anew', async () => {
    const t = await c.tenant();
    const k = t.api_key;
    await c.json('POST', '/v1/score', { key: k, body: { nif: '599000031' } }); // the score exists: the first decision is computed on it
    // (SQLite: a WAL checkpoint between two calls may restart the log, which any in-process cache
    // takes as a change; the same request then decides once more, and the next one is cached)
    let first = await c.json('POST', '/v1/decision', { key: k, body: same });
    expect(first.body.cache).toBe('fresh');
    let again = await c.json('POST', '/v1/decision', { key: k, body: same });
    for (let i = 0; i < 3 && again.body.cache !== 'cached'; i++) [first, again] = [again, await c.json('POST', '/v1/decision', { key: k, body: same })];
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...first.body, cache: 'cached' });
    expect(Value.Check(DecisionResponse, again.body)).toBe(true);
    const listed = (await c.json('GET', '/v1/decisions', { key: k })).body.data.map((d: any) => d.decision_id);
    expect(listed.filter((id: string) => id === first.body.decision_id)).toEqual([first.body.decision_id]); // stored once
    // another reference, another amount: other decisions
    const otherRef = await c.json('POST', '/v1/decision', { key: k, body: { ...same, customer_reference: 'po-2' } });
    expect(otherRef.body.decision_id).not.toBe(first.body.decision_id);
    const otherAmount = await c.json('POST', '/v1/decision', { key: k, body: { ...same, context: { ...same.context, amount_eur: 10_001 } } });
    expect(otherAmount.body.decision_id).not.toBe(first.body.decision_id);
    // force_refresh
    const forced = await c.json('POST', '/v1/decision', { key: k, body: { ...same, refresh: 'force_refresh' } });
    expect(forced.body.cache).toBe('fresh');
    expect(forced.body.decision_id).not.toBe(first.body.decision_id);
    const afterForced = await c.json('POST', '/v1/decision', { key: k, body: same });
    expect(afterForced.body.decision_id).not.toBe(first.body.decision_id); // the forced re-score is a new input
    // the policy changes: decided anew under it
    let cachedNow = await c.json('POST', '/v1/decision', { key: k, body: same });
    for (let i = 0; i < 3 && cachedNow.body.cache !== 'cached'; i++) cachedNow = await c.json('POST', '/v1/decision', { key: k, body: same });
    expect(cachedNow.body.cache).toBe('cached');
    expect((await c.json('PATCH', '/v1/admin/credit-policy', { key: k, body: { margin_bps: 400 } })).status).toBe(200);
    const underPolicy = await c.json('POST', '/v1/decision', { key: k, body: same });
    expect(underPolicy.body.cache).toBe('fresh');
    expect(underPolicy.body.recommendation.suggested_spread_bps).toBeGreaterThan(cachedNow.body.recommendation.suggested_spread_bps);
    // an ESG assessment of the NIF: decided anew with it
    const esg = await c.json('POST', '/v1/esg', { key: k, body: { nif: '599000031', sector: 'F41', answers: { renewable_energy_pct: 40, min_wage_compliance: true } } });
    expect(esg.status).toBe(200);
    const withEsg = await c.json('POST', '/v1/decision', { key: k, body: same });
    expect(withEsg.body.cache).toBe('fresh');
    expect(withEsg.body.breakdown.esg).toBe(esg.body.overall);
    // after the score's cache window: a new score, a new decision
    c.clock.advance(25 * 3600_000);
    const nextDay = await c.json('POST', '/v1/decision', { key: k, body: same });
    if (nextDay.status !== 200) throw new Error(JSON.stringify(nextDay.body));
    expect(nextDay.body.cache).toBe('fresh');
    expect(nextDay.body.decision_id).not.toBe(withEsg.body.decision_id);
    // every call is billed
    await c.ctx.usage.flush();
    const { db, t: tables } = c.ctx.database;
    const { eq, and } = await import('drizzle-orm');
    const rows = await db.select().from(tables.usageRecords).where(and(eq(tables.usageRecords.tenantId, t.tenant_id), eq(tables.usageRecords.meter, 'decision')));
    expect(rows.reduce((n, r) => n + r.quantity, 0)).toBeGreaterThanOrEqual(10); // every call billed (a retried one too)
  });

  test('activity of the tenant on other NIFs (a forced score, a batch, an ESG assessment) leaves the same request the same decision; concurrent identical requests make one', async () => {
    const t = await c.tenant();
    const k = t.api_key;
    const first = await c.json('POST', '/v1/decision', { key: k, body: same });
    expect(first.body.cache).toBe('fresh');
    expect((await c.json('POST', '/v1/score', { key: k, body: { nif: '599000015', refresh: 'force_refresh' } })).status).toBe(200);
    expect((await c.json('POST', '/v1/score/batch', { key: k, body: { items: [{ nif: '599000023' }], refresh: 'force_refresh' } })).status).toBe(200);
    expect((await c.json('POST', '/v1/esg', { key: k, body: { nif: '599000015', sector: 'F41', answers: { renewable_energy_pct: 40, min_wage_compliance: true } } })).status).toBe(200);
    const again = await c.json('POST', '/v1/decision', { key: k, body: same });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...first.body, cache: 'cached' });
    const listed = (await c.json('GET', `/v1/decisions?nif=${same.nif}`, { key: k })).body.data.map((d: any) => d.decision_id);
    expect(listed).toEqual([first.body.decision_id]);
    // 20 at once, a request not decided before: one decision, the others answered it
    const body = { ...same, customer_reference: 'concurrent-1' };
    const answers = await Promise.all(Array.from({ length: 20 }, () => c.json('POST', '/v1/decision', { key: k, body })));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((a) => a.body.decision_id)).size).toBe(1);
    expect(answers.filter((a) => a.body.cache === 'fresh').length).toBe(1);
    const stored = (await c.json('GET', `/v1/decisions?nif=${same.nif}`, { key: k })).body.data.filter((d: any) => d.customer_reference === 'concurrent-1');
    expect(stored.length).toBe(1);
    // every one of them billed
    await c.ctx.usage.flush();
    const { db, t: tables } = c.ctx.database;
    const { eq, and } = await import('drizzle-orm');
    const rows = await db.select().from(tables.usageRecords).where(and(eq(tables.usageRecords.tenantId, t.tenant_id), eq(tables.usageRecords.meter, 'decision')));
    expect(rows.reduce((n, r) => n + r.quantity, 0)).toBe(22);
  });

  test('on a NIF not scored yet (the decision computes its score): the same request next is the same decision, listed once', async () => {
    // two tenants, each deciding twice: a change between the two calls (SQLite: a WAL restart by a
    // checkpoint, which any in-process cache takes as one) could make one of them decide again, never both
    const outcomes = [];
    for (const nif of ['599000031', '599000058']) {
      const t = await c.tenant();
      const body = { ...same, nif };
      const first = await c.json('POST', '/v1/decision', { key: t.api_key, body });
      const second = await c.json('POST', '/v1/decision', { key: t.api_key, body });
      expect([first.status, first.body.cache, second.status]).toEqual([200, 'fresh', 200]);
      const listed = (await c.json('GET', `/v1/decisions?nif=${nif}`, { key: t.api_key })).body.data.map((d: any) => d.decision_id);
      outcomes.push({ cached: second.body.cache === 'cached' && second.body.decision_id === first.body.decision_id, listed: listed.length });
    }
    expect(outcomes.some((o) => o.cached && o.listed === 1)).toBe(true);
  });

  test.skipIf(TEST_DB !== 'postgres')('PostgreSQL, its generation feed not current: a first decision on a NIF not scored yet is not cached under the state before its score; the same request next is decided anew on that score, and found the same decision', async () => {
    const feed = c.ctx.generations!;
    const current = feed.current.bind(feed);
    feed.current = () => undefined; // as while its subscription is down or its heartbeats late
    try {
      const t = await c.tenant();
      const body = { ...same, nif: '599000058' };
      const first = await c.json('POST', '/v1/decision', { key: t.api_key, body });
      const second = await c.json('POST', '/v1/decision', { key: t.api_key, body });
      // decided again on the score the first computed, read back: the same content, so the same decision (stored once)
      expect([first.status, first.body.cache, second.status, second.body.cache]).toEqual([200, 'fresh', 200, 'cached']);
      expect(second.body).toEqual({ ...first.body, cache: 'cached' });
      const listed = (await c.json('GET', '/v1/decisions?nif=599000058', { key: t.api_key })).body.data.map((d: any) => d.decision_id);
      expect(listed).toEqual([first.body.decision_id]);
    } finally {
      feed.current = current;
    }
  });

  test('tenants do not share answers', async () => {
    const a = await c.tenant();
    const b = await c.tenant();
    await c.json('POST', '/v1/score', { key: a.api_key, body: { nif: '599000031' } });
    const da = await c.json('POST', '/v1/decision', { key: a.api_key, body: same });
    await c.json('POST', '/v1/decision', { key: a.api_key, body: same });
    const db_ = await c.json('POST', '/v1/decision', { key: b.api_key, body: same });
    expect(db_.body.decision_id).not.toBe(da.body.decision_id);
    expectError(await c.json('GET', `/v1/decisions/${da.body.decision_id}`, { key: b.api_key }), 404, 'resource_not_found');
  });
});
