import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { and, eq } from 'drizzle-orm';
import { Value } from '@sinclair/typebox/value';
import { ScoreResponse } from '../src/features/score/model';
import { SANDBOX_FIXTURES } from '../src/features/score/fixtures';
import { REASON_CATALOGUE } from '../src/features/score/engine';
import { bureauCompany, expectError, makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

const nifOf = (outcome: string) => SANDBOX_FIXTURES.find((f) => f.outcome === outcome)!.nif;

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

const score = (body: unknown, o: { key?: string; headers?: Record<string, string> } = {}) => h.json('POST', '/v1/score', { key: o.key ?? key, body, headers: o.headers });

describe('POST /v1/score — sandbox', () => {
  test('tier A fixture: full §2.2 response, synthetic, fresh', async () => {
    const r = await score({ nif: nifOf('tier_a_low_pd'), customer_reference: 'loan-42' });
    expect(r.status).toBe(200);
    expect(Value.Check(ScoreResponse, r.body)).toBe(true);
    expect(r.body.tier).toBe('A');
    expect(r.body.pd_estimate).toBeLessThan(0.004);
    expect(r.body.synthetic).toBe(true);
    expect(r.body.cache).toBe('fresh');
    expect(r.body.customer_reference).toBe('loan-42');
    expect(r.body.algorithm_version).toMatch(/^score-\d+\.\d+\.\d+$/);
    const weights = r.body.reasons.map((x: any) => x.weight);
    expect([...weights].sort((a, b) => b - a)).toEqual(weights);
  });

  test.each([
    ['tier_b_concentration', 'B', 'HIGH_CONCENTRATION'],
    ['tier_d_recent_default', 'D', 'RECENT_DEFAULT'],
    ['tier_c_average', 'C', null],
    ['tier_e_distressed', 'E', null],
  ])('%s → tier %s', async (outcome, tier, reason) => {
    const r = await score({ nif: nifOf(outcome) });
    expect(r.status).toBe(200);
    expect(r.body.tier).toBe(tier);
    if (reason) expect(r.body.reasons.map((x: any) => x.code)).toContain(reason);
  });

  test('cache: cached_ok within 24 h returns the original computed_at; force_refresh recomputes; after 24 h fresh again', async () => {
    const t = await h.tenant();
    const nif = nifOf('tier_c_average');
    const first = await score({ nif }, { key: t.api_key });
    h.clock.advance(3600_000);
    const second = await score({ nif, refresh: 'cached_ok' }, { key: t.api_key });
    expect(second.body.cache).toBe('cached');
    expect(second.body.computed_at).toBe(first.body.computed_at);
    const forced = await score({ nif, refresh: 'force_refresh' }, { key: t.api_key });
    expect(forced.body.cache).toBe('fresh');
    expect(forced.body.computed_at).not.toBe(first.body.computed_at);
    h.clock.advance(24 * 3600_000 + 1);
    const later = await score({ nif }, { key: t.api_key });
    expect(later.body.cache).toBe('fresh');
    // history: every computed result is kept
    const s = h.ctx.database.t.scoreResults;
    const rows = await h.ctx.database.db.select().from(s).where(and(eq(s.tenantId, t.tenant_id), eq(s.nif, nif)));
    expect(rows.length).toBe(3);
  });

  test('the cache is per tenant and environment', async () => {
    const a = await h.tenant();
    const b = await h.tenant();
    const nif = nifOf('tier_a_low_pd');
    await score({ nif }, { key: a.api_key });
    expect((await score({ nif }, { key: a.api_key })).body.cache).toBe('cached');
    expect((await score({ nif }, { key: b.api_key })).body.cache).toBe('fresh');
  });

  test('labels in Portuguese with Accept-Language: pt-PT, also for cached results', async () => {
    const nif = nifOf('tier_b_concentration');
    const en = await score({ nif });
    const pt = await score({ nif }, { headers: { 'accept-language': 'pt-PT,pt;q=0.9' } });
    expect(pt.body.cache).toBe('cached');
    const enLabel = en.body.reasons.find((x: any) => x.code === 'HIGH_CONCENTRATION').label;
    const ptLabel = pt.body.reasons.find((x: any) => x.code === 'HIGH_CONCENTRATION').label;
    expect(ptLabel).not.toBe(enLabel);
    expect(ptLabel).toMatch(/cliente/i);
  });

  test('a result is stored without its reasons\' labels; fresh and cached answers render them alike, also from rows stored with labels', async () => {
    const t = await h.tenant();
    const s = h.ctx.database.t.scoreResults;
    const nif = nifOf('tier_d_recent_default');
    const fresh = await score({ nif, refresh: 'force_refresh' }, { key: t.api_key });
    const cached = await score({ nif }, { key: t.api_key });
    expect(cached.body.cache).toBe('cached');
    expect(JSON.stringify(cached.body.reasons)).toBe(JSON.stringify(fresh.body.reasons));
    for (const r of fresh.body.reasons) expect(Object.keys(r)).toEqual(['code', 'label', 'impact', 'weight']);
    const [row] = await h.ctx.database.db.select().from(s).where(and(eq(s.tenantId, t.tenant_id), eq(s.nif, nif)));
    const stored = (row!.result as { reasons: Record<string, unknown>[] }).reasons;
    expect(stored.length).toBe(fresh.body.reasons.length);
    for (const r of stored) expect(Object.keys(r)).toEqual(['code', 'impact', 'weight']);
    // a row stored before, with English labels (for a NIF this tenant never scored, so that no cache holds it)
    const other = nifOf('tier_b_concentration');
    const withLabels = { ...row!.result, reasons: fresh.body.reasons };
    await h.ctx.database.db.insert(s).values({ ...row!, id: crypto.randomUUID(), nif: other, result: withLabels });
    for (const [header, lang] of [['en', 'en'], ['pt-PT', 'pt']] as const) {
      const before = await score({ nif: other }, { key: t.api_key, headers: { 'accept-language': header } });
      expect(before.body.cache).toBe('cached');
      expect(before.body.tier).toBe(fresh.body.tier); // the row inserted above, not a new score of that NIF
      expect(before.body.reasons.map((r: { code: string }) => r.code)).toEqual(fresh.body.reasons.map((r: { code: string }) => r.code));
      for (const r of before.body.reasons) {
        expect(Object.keys(r)).toEqual(['code', 'label', 'impact', 'weight']);
        expect(r.label).toBe(REASON_CATALOGUE[r.code]![lang]);
      }
    }
  });

  test('a stored reason whose code the catalogue no longer has keeps its stored label, or shows its code when it has none', async () => {
    const t = await h.tenant();
    const s = h.ctx.database.t.scoreResults;
    const nif = nifOf('tier_a_low_pd');
    await score({ nif, refresh: 'force_refresh' }, { key: t.api_key });
    const [row] = await h.ctx.database.db.select().from(s).where(and(eq(s.tenantId, t.tenant_id), eq(s.nif, nif)));
    const retired = [
      { code: 'RETIRED_WITH_LABEL', label: 'A reason of an older catalogue', impact: 'negative', weight: 0.2 },
      { code: 'RETIRED_BARE', impact: 'positive', weight: 0.1 },
    ];
    const other = nifOf('tier_b_concentration');
    await h.ctx.database.db.insert(s).values({ ...row!, id: crypto.randomUUID(), nif: other, result: { ...row!.result, reasons: retired } });
    for (const header of ['en', 'pt-PT']) {
      const answer = await score({ nif: other }, { key: t.api_key, headers: { 'accept-language': header } });
      expect(answer.status).toBe(200);
      expect(answer.body.cache).toBe('cached');
      expect(answer.body.reasons).toEqual([
        { code: 'RETIRED_WITH_LABEL', label: 'A reason of an older catalogue', impact: 'negative', weight: 0.2 },
        { code: 'RETIRED_BARE', label: 'RETIRED_BARE', impact: 'positive', weight: 0.1 },
      ]);
    }
    // a credit decision explains itself with the same labels
    const decision = await h.json('POST', '/v1/decision', { key: t.api_key, body: { nif: other, context: { operation_type: 'factoring', amount_eur: 10_000, expected_term_days: 60 } } });
    expect(decision.status).toBe(200);
    const signals = decision.body.signals as { factor: string; label: string }[];
    expect(signals.find((x) => x.factor === 'retired_with_label')?.label).toBe('A reason of an older catalogue');
    expect(signals.find((x) => x.factor === 'retired_bare')?.label).toBe('RETIRED_BARE');
  });

  test('NIF not 9 digits → 422 validation_failed on nif; bad check digit → 422 invalid_nif', async () => {
    for (const nif of ['12345678', '1234567890', 'abcdefghi', '']) {
      const b = expectError(await score({ nif }), 422, 'validation_failed');
      expect(b.fields.map((f: any) => f.path)).toEqual(['nif']);
    }
    expectError(await score({ nif: '123456788' }), 422, 'invalid_nif');
    expectError(await score({}), 422, 'validation_failed');
  });

  test('the invalid_nif fixture has a valid check digit yet always gives 422 invalid_nif', async () => {
    const b = expectError(await score({ nif: nifOf('invalid_nif_422') }), 422, 'invalid_nif');
    expect(b.fields[0].path).toBe('nif');
  });

  test('not-found fixture and any other well-formed NIF → 404 company_not_found pointing to the fixtures', async () => {
    expectError(await score({ nif: nifOf('not_found_404') }), 404, 'company_not_found');
    const b = expectError(await score({ nif: '123456789' }), 404, 'company_not_found');
    expect(b.message).toContain('/v1/sandbox/fixtures');
  });

  test('an error asked for in Portuguese says its language is English (its message is), on the fast path and the route', async () => {
    for (const body of [{ nif: '123456789' }, { nif: '123456789', unknown_field: 1 }]) {
      const r = await score(body, { headers: { 'accept-language': 'pt-PT' } });
      expectError(r, 404, 'company_not_found');
      expect(r.headers.get('content-language')).toBe('en');
    }
  });

  test('customer_reference over 128 characters and a bad refresh value → 422 with both paths', async () => {
    const b = expectError(await score({ nif: nifOf('tier_a_low_pd'), customer_reference: 'x'.repeat(129), refresh: 'sometimes' }), 422, 'validation_failed');
    expect(b.fields.map((f: any) => f.path).sort()).toEqual(['customer_reference', 'refresh']);
  });

  test('a key without the score scope → 403 insufficient_scope; no key → 401', async () => {
    const t = await h.tenant({ scopes: ['esg'] });
    expectError(await score({ nif: nifOf('tier_a_low_pd') }, { key: t.api_key }), 403, 'insufficient_scope');
    expectError(await h.json('POST', '/v1/score', { body: { nif: '123456789' } }), 401, 'missing_api_key');
  });

  test('suspended tenant → 403 tenant_suspended', async () => {
    const t = await h.tenant();
    await h.ctx.tenants.setStatus(t.tenant_id, 'suspended');
    expectError(await score({ nif: nifOf('tier_a_low_pd') }, { key: t.api_key }), 403, 'tenant_suspended');
  });

  test("an idempotent replay is the first answer with its language (Content-Language, Vary), whatever the replay's Accept-Language", async () => {
    const t = await h.tenant();
    const headers = { 'idempotency-key': 'score-once-pt' };
    const body = { nif: nifOf('tier_b_concentration'), refresh: 'force_refresh' };
    const first = await h.call('POST', '/v1/score', { key: t.api_key, body, headers: { ...headers, 'accept-language': 'pt-PT' } });
    const again = await h.call('POST', '/v1/score', { key: t.api_key, body, headers: { ...headers, 'accept-language': 'en' } });
    expect(first.headers.get('content-language')).toBe('pt-PT');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-language')).toBe('pt-PT');
    expect(again.headers.get('vary')).toBe('Accept-Language');
    expect(await again.text()).toBe(await first.text());
  });

  test('usage: one score row per billable call, sandbox not billable; an idempotent replay bills and computes nothing', async () => {
    const t = await h.tenant();
    const headers = { 'idempotency-key': 'score-once' };
    const body = { nif: nifOf('tier_a_low_pd'), refresh: 'force_refresh' };
    const first = await h.call('POST', '/v1/score', { key: t.api_key, body, headers });
    const firstText = await first.text();
    const again = await h.call('POST', '/v1/score', { key: t.api_key, body, headers });
    expect(await again.text()).toBe(firstText);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('content-language')).toBe('en');
    expect(again.headers.get('content-language')).toBe('en');
    expect(again.headers.get('vary')).toBe('Accept-Language');
    expect(again.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id')); // the replaying request's own
    await h.ctx.usage.flush();
    const u = h.ctx.database.t.usageRecords;
    const rows = await h.ctx.database.db.select().from(u).where(eq(u.tenantId, t.tenant_id));
    expect(rows.length).toBe(1);
    expect(rows[0]).toMatchObject({ meter: 'score', quantity: 1, billable: false, env: 'sandbox', apiKeyId: t.api_key_id, amountCents: 0 });
    const s = h.ctx.database.t.scoreResults;
    expect((await h.ctx.database.db.select().from(s).where(eq(s.tenantId, t.tenant_id))).length).toBe(1);
    const usage = await h.json('GET', '/v1/admin/usage', { key: t.api_key });
    expect(usage.body.totals).toEqual([{ meter: 'score', quantity: 1, billable_quantity: 0, amount_cents: 0 }]);
  });
});

describe('GET /v1/sandbox/fixtures', () => {
  test('lists fixtures with stable outcomes; live keys → 403 sandbox_only', async () => {
    const r = await h.json('GET', '/v1/sandbox/fixtures', { key });
    const outcomes = r.body.fixtures.map((f: any) => f.outcome);
    for (const o of ['tier_a_low_pd', 'tier_b_concentration', 'tier_d_recent_default', 'invalid_nif_422', 'not_found_404', 'tier_c_average', 'tier_e_distressed', 'deteriorating_on_rescore'])
      expect(outcomes).toContain(o);
    const live = await h.tenant({ env: 'live' });
    expectError(await h.json('GET', '/v1/sandbox/fixtures', { key: live.api_key }), 403, 'sandbox_only');
  });
});

describe('POST /v1/score — live tier', () => {
  test('not configured → 503 live_tier_not_available with roadmap_url', async () => {
    const live = await h.tenant({ env: 'live' });
    const r = await score({ nif: '123456789' }, { key: live.api_key });
    const b = expectError(r, 503, 'live_tier_not_available');
    expect(b.roadmap_url).toMatch(/^https?:\/\/.+\/roadmap$/);
  });

  describe('with the three adapters as fake HTTP servers on 127.0.0.1', () => {
    let lh: TestApp;
    let liveKey: string;
    let liveTenant: string;
    let crcMode: 'ok' | 'fail' | 'slow' = 'ok';
    /** applied to the bureau's answer: an answer the service cannot read */
    let bureauMutation: ((b: any) => void) | null = null;
    const servers: ReturnType<typeof Bun.serve>[] = [];
    const known = '500000000';
    beforeAll(async () => {
      const auth = (req: Request) => req.headers.get('authorization') === 'Bearer test-secret';
      const bureau = Bun.serve({
        port: 0,
        hostname: '127.0.0.1',
        fetch(req) {
          if (!auth(req)) return new Response('no', { status: 401 });
          if (!new URL(req.url).pathname.endsWith(`/companies/${known}`)) return new Response('{}', { status: 404 });
          const answer: Record<string, unknown> = bureauCompany('Empresa Viva, S.A.');
          bureauMutation?.(answer);
          return Response.json(answer);
        },
      });
      const crc = Bun.serve({
        port: 0,
        hostname: '127.0.0.1',
        async fetch() {
          if (crcMode === 'fail') return new Response('oops', { status: 502 });
          if (crcMode === 'slow') await Bun.sleep(1500);
          return Response.json({ total_exposure_eur: 1e6, overdue_eur: 0, institutions_count: 2, default_in_last_12m: false, written_off_eur: 0, litigation_eur: 0 });
        },
      });
      const tax = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json({ status: 'regular', vat_registered: true }) });
      servers.push(bureau, crc, tax);
      lh = await makeApp({
        BUREAU_URL: `http://127.0.0.1:${bureau.port}`,
        BUREAU_API_KEY: 'test-secret',
        CRC_URL: `http://127.0.0.1:${crc.port}`,
        CRC_API_KEY: 'test-secret',
        TAX_URL: `http://127.0.0.1:${tax.port}`,
        TAX_API_KEY: 'test-secret',
        ADAPTER_TIMEOUT_MS: '400',
      });
      const t = await lh.tenant({ env: 'live' });
      liveKey = t.api_key;
      liveTenant = t.tenant_id;
    });
    afterAll(async () => {
      for (const s of servers) s.stop(true);
      await lh.close();
    });
    const usageRows = async () => {
      await lh.ctx.usage.flush();
      const u = lh.ctx.database.t.usageRecords;
      return lh.ctx.database.db.select().from(u).where(eq(u.tenantId, liveTenant));
    };

    test('composes the three sources, not synthetic, bills score and bureau_passthrough at cost × 1.15', async () => {
      const r = await lh.json('POST', '/v1/score', { key: liveKey, body: { nif: known } });
      expect(r.status).toBe(200);
      expect(Value.Check(ScoreResponse, r.body)).toBe(true);
      expect(r.body.synthetic).toBe(false);
      expect(r.body.data_sources).toEqual(expect.arrayContaining(['financial_statements', 'credit_register', 'tax_authority']));
      const rows = await usageRows();
      const bureau = rows.find((x) => x.meter === 'bureau_passthrough')!;
      expect(bureau.billable).toBe(true);
      expect(bureau.amountCents).toBeCloseTo(230, 6);
      expect(rows.find((x) => x.meter === 'score')!.billable).toBe(true);
    });

    test('a nightly re-score of a live company bills its bureau lookup too; only the tenant\'s own scores keep a company in the 90-day window', async () => {
      const t = await lh.tenant({ env: 'live' });
      const bureauLines = async () => {
        await lh.ctx.usage.flush();
        const u = lh.ctx.database.t.usageRecords;
        return (await lh.ctx.database.db.select().from(u).where(and(eq(u.tenantId, t.tenant_id), eq(u.meter, 'bureau_passthrough')))).reduce((n, x) => n + x.quantity, 0);
      };
      expect((await lh.json('POST', '/v1/score', { key: t.api_key, body: { nif: known } })).status).toBe(200);
      expect(await bureauLines()).toBe(1);
      const rescore = lh.ctx.services!.rescore;
      expect((await rescore.rescoreTenant(t.tenant_id, 'live')).rescored).toBe(1);
      expect(await bureauLines()).toBe(2);
      // the tenant's own score falls out of the window; the job's re-score of yesterday does not keep it in
      const s = lh.ctx.database.t.scoreResults;
      const days = (n: number) => new Date(Date.now() - n * 86_400_000);
      await lh.ctx.database.db.update(s).set({ computedAt: days(100) }).where(and(eq(s.tenantId, t.tenant_id), eq(s.trigger, 'request')));
      await lh.ctx.database.db.update(s).set({ computedAt: days(1) }).where(and(eq(s.tenantId, t.tenant_id), eq(s.trigger, 'rescore')));
      expect((await rescore.rescoreTenant(t.tenant_id, 'live')).rescored).toBe(0);
      expect(await bureauLines()).toBe(2);
    });

    test('unknown at the bureau → 404 company_not_found', async () => {
      expectError(await lh.json('POST', '/v1/score', { key: liveKey, body: { nif: '123456789' } }), 404, 'company_not_found');
    });

    test('an adapter failing or timing out → 503 upstream_unavailable with Retry-After; nothing cached or billed', async () => {
      const billed = async () => (await usageRows()).reduce((n, x) => n + x.quantity, 0);
      const before = await billed();
      for (const mode of ['fail', 'slow'] as const) {
        crcMode = mode;
        const r = await lh.json('POST', '/v1/score', { key: liveKey, body: { nif: known, refresh: 'force_refresh' } });
        expectError(r, 503, 'upstream_unavailable');
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      crcMode = 'ok';
      expect(await billed()).toBe(before);
    });

    test('an answer that cannot be read (not a number, out of range, no NACE section, a negative or absurd cost) → 503; nothing scored or billed', async () => {
      const billed = async () => (await usageRows()).reduce((n, x) => n + x.quantity, 0);
      const before = await billed();
      const fresh = (await lh.tenant({ env: 'live' })).api_key; // no cached score of the company
      const bad: [string, (b: any) => void][] = [
        ['revenue "NaN"', (b) => (b.financials.revenue = 'NaN')],
        ['equity -1e300', (b) => (b.financials.equity = -1e300)],
        ['sector ZZ', (b) => (b.sector = 'ZZ')],
        ['age -5', (b) => (b.age_years = -5)],
        ['cost -7', (b) => (b.cost_cents = -7)],
        ['cost 1e30', (b) => (b.cost_cents = 1e30)],
        ['no name', (b) => delete b.name],
        ['share 1.5', (b) => (b.payment_behaviour.share_of_receivables_from_top_customer = 1.5)],
      ];
      for (const [what, mutate] of bad) {
        bureauMutation = mutate;
        const r = await lh.json('POST', '/v1/score', { key: liveKey, body: { nif: known, refresh: 'force_refresh' } });
        expect({ what, code: r.body.code, status: r.status }).toEqual({ what, code: 'upstream_unavailable', status: 503 });
        // and where a NIF's score feeds another answer: the same 503, not a broken answer
        const c = await lh.json('POST', '/v1/basel/capital', { key: fresh, body: { exposures: [{ nif: known, ead_eur: 1000 }] } });
        expect({ what, code: c.body.code, status: c.status }).toEqual({ what, code: 'upstream_unavailable', status: 503 });
        expect(Number(c.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      // what a bureau may well send for a company without filed accounts or events: scored without them
      const readable: [string, (b: any) => void][] = [
        ['financials null', (b) => (b.financials = null)],
        ['payment_behaviour null', (b) => (b.payment_behaviour = null)],
        ['events {}', (b) => (b.events = {})],
        ['fiscal_year null', (b) => (b.financials.fiscal_year = null)],
        ['interest as a negative expense', (b) => (b.financials.interest_expense = -5e4)],
      ];
      for (const [what, mutate] of readable) {
        bureauMutation = mutate;
        const r = await lh.json('POST', '/v1/score', { key: fresh, body: { nif: known, refresh: 'force_refresh' } });
        expect({ what, status: r.status }).toEqual({ what, status: 200 });
      }
      bureauMutation = null;
      expect(await billed()).toBe(before);
      expect((await lh.json('POST', '/v1/score', { key: liveKey, body: { nif: known, refresh: 'force_refresh' } })).status).toBe(200);
    });
  });
});
