/**
 * Nothing is billed for a failed call (docs/decisions.md, Usage and billing): usage lines of the
 * factoring, confirming, KYC and capital calls are recorded only once the call succeeds. Each
 * failed call below records no line (by tenant, and by its request id), its successful twin exactly
 * the documented ones. Sandbox, then live with three fake data sources (a bureau that counts its
 * lookups, a credit register that fails for chosen NIFs).
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { eq } from 'drizzle-orm';
import { loadConfiguredLists } from '../src/features/aml';
import { nifCheckDigit } from '../src/lib/nif';
import { bureauCompany, expectError, makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

const nif = (first8: string) => first8 + nifCheckDigit(first8);
// the test clock reads 2026-11-22
const inv = (number: string, debtor_nif: string, amount_cents: number) => ({ number, debtor_nif, issue_date: '2026-11-02', due_date: '2027-01-21', amount_cents });

/** a tenant's usage: quantity per meter, and every request id its rows name */
async function usageOf(h: TestApp, tenantId: string) {
  await h.ctx.usage.flush();
  const u = h.ctx.database.t.usageRecords;
  const rows = await h.ctx.database.db.select().from(u).where(eq(u.tenantId, tenantId));
  const meters: Record<string, number> = {};
  for (const r of rows) meters[r.meter] = (meters[r.meter] ?? 0) + r.quantity;
  return { meters, requestIds: new Set(rows.flatMap((r) => r.requestIds?.split(' ') ?? [])) };
}

/** asserts the error, and that the call left no usage line: the tenant's usage is what it was before */
async function failsUnbilled(h: TestApp, tenantId: string, call: () => Promise<{ status: number; body: any; headers: Headers }>, status: number, code: string) {
  const before = (await usageOf(h, tenantId)).meters;
  const r = await call();
  expectError(r, status, code);
  const after = await usageOf(h, tenantId);
  expect(after.meters).toEqual(before);
  expect(after.requestIds.has(r.headers.get('x-request-id')!)).toBe(false);
  return r;
}

describe('UsageMeter.hold and settle', () => {
  let h: TestApp;
  beforeAll(async () => {
    h = await makeApp({}, { workers: false });
  });
  afterAll(() => h.close());

  test('a held request’s lines are recorded when it succeeds and dropped when it fails; other requests’ lines as ever; a HEAD keeps only pass-through costs', async () => {
    const t = await h.tenant();
    const line = (meter: string, requestId: string, costCents?: number) => h.ctx.usage.record({ tenantId: t.tenant_id, apiKeyId: null, env: 'sandbox', meter, requestId, costCents });
    h.ctx.usage.hold('r-ok', false);
    h.ctx.usage.hold('r-failed', false);
    h.ctx.usage.hold('r-head', true);
    line('score', 'r-ok');
    line('score', 'r-failed');
    line('decision', 'r-failed');
    line('nif_lookup', 'r-head');
    line('bureau_passthrough', 'r-head', 37);
    line('esg', 'r-outside'); // another request's, not held
    expect((await usageOf(h, t.tenant_id)).meters).toEqual({ esg: 1 });
    h.ctx.usage.settle('r-ok', true);
    h.ctx.usage.settle('r-failed', false);
    h.ctx.usage.settle('r-head', true);
    h.ctx.usage.settle('r-ok', true); // once only
    const after = await usageOf(h, t.tenant_id);
    expect(after.meters).toEqual({ esg: 1, score: 1, bureau_passthrough: 1 });
    expect([...after.requestIds].sort()).toEqual(['r-head', 'r-ok', 'r-outside']);
    line('forecast', 'r-ok'); // after its answer (a job's line with the request's id): recorded
    expect((await usageOf(h, t.tenant_id)).meters).toEqual({ esg: 1, score: 1, bureau_passthrough: 1, forecast: 1 });
  });
});

describe('an answer that fails after its handler', () => {
  let h: TestApp;
  beforeAll(async () => {
    h = await makeApp({}, { workers: false });
  });
  afterAll(() => h.close());

  test('an answer failing its response schema (500) is billed nothing; the same route answering is billed', async () => {
    const t = await h.tenant();
    const { DecisionService } = await import('../src/features/decision/service');
    const original = DecisionService.prototype.sectorRisk;
    DecisionService.prototype.sectorRisk = async function (this: unknown, ...args: Parameters<typeof original>) {
      return { ...(await original.apply(this as never, args)), risk_level: 'bogus' } as never;
    };
    try {
      await failsUnbilled(h, t.tenant_id, () => h.json('GET', '/v1/sector-risk/332', { key: t.api_key }), 500, 'internal_error');
    } finally {
      DecisionService.prototype.sectorRisk = original;
    }
    expect((await h.json('GET', '/v1/sector-risk/332', { key: t.api_key })).status).toBe(200);
    expect((await usageOf(h, t.tenant_id)).meters).toEqual({ sector_risk: 1 });
  });

  test('an Idempotency-Key record that cannot be stored (500) bills nothing', async () => {
    const t = await h.tenant();
    const complete = h.ctx.idempotency.complete.bind(h.ctx.idempotency);
    h.ctx.idempotency.complete = async (...args: Parameters<typeof complete>) => {
      if (args[1] < 500) throw new Error('the database went away');
      return complete(...args);
    };
    try {
      await failsUnbilled(h, t.tenant_id, () => h.json('POST', '/v1/esg', { key: t.api_key, body: { nif: '518072460', sector: 'M73', answers: { renewable_energy_pct: 10 } }, headers: { 'idempotency-key': 'esg-1' } }), 500, 'internal_error');
    } finally {
      h.ctx.idempotency.complete = complete;
    }
  });
});

describe('sandbox', () => {
  let h: TestApp;
  beforeAll(async () => {
    h = await makeApp({}, { workers: false });
  });
  afterAll(() => h.close());
  const create = (key: string, body: unknown) => h.json('POST', '/v1/factoring/operation', { key, body });

  test('factoring: a debtor not found after another was decided → 404, no decision billed; the twin bills decision ×2 and factoring_operation', async () => {
    const t = await h.tenant();
    await failsUnbilled(h, t.tenant_id, () => create(t.api_key, { seller_nif: '599000031', modality: 'recourse', invoices: [inv('FT 1/1', '599000015', 100_000), inv('FT 1/2', '599000074', 100_000)] }), 404, 'company_not_found');
    expect((await usageOf(h, t.tenant_id)).meters).toEqual({});
    const ok = await create(t.api_key, { seller_nif: '599000031', modality: 'recourse', invoices: [inv('FT 1/1', '599000015', 100_000), inv('FT 1/2', '599000023', 100_000)] });
    expect(ok.status).toBe(201);
    const after = await usageOf(h, t.tenant_id);
    expect(after.meters).toEqual({ decision: 2, factoring_operation: 1 });
    expect(after.requestIds.has(ok.headers.get('x-request-id')!)).toBe(true);
  });

  test('factoring: an invoice already assigned → 409, its debtor\u2019s (cached) decision not billed', async () => {
    const t = await h.tenant();
    const body = { seller_nif: '599000031', modality: 'recourse', invoices: [inv('FT 2/1', '599000015', 100_000)] };
    expect((await create(t.api_key, body)).status).toBe(201);
    expect((await usageOf(h, t.tenant_id)).meters).toEqual({ decision: 1, factoring_operation: 1 });
    await failsUnbilled(h, t.tenant_id, () => create(t.api_key, body), 409, 'invoice_already_assigned');
  });

  test('confirming: a programme over the anchor\u2019s limit → 409 limit_exceeded, no decision billed; the twin bills decision ×1', async () => {
    const t = await h.tenant();
    const anchor = (limit_cents: number) => h.json('POST', '/v1/confirming/anchor', { key: t.api_key, body: { anchor_nif: '599000015', limit_cents, payment_terms_days: 90 } });
    await failsUnbilled(h, t.tenant_id, () => anchor(900_000_000_000), 409, 'limit_exceeded');
    expect((await usageOf(h, t.tenant_id)).meters).toEqual({});
    expect((await anchor(10_000_000)).status).toBe(201);
    expect((await usageOf(h, t.tenant_id)).meters).toEqual({ decision: 1 });
  });
});

describe('live, with fake data sources', () => {
  let h: TestApp;
  const servers: ReturnType<typeof Bun.serve>[] = [];
  /** bureau lookups per NIF */
  const bureauCalls = new Map<string, number>();
  /** NIFs whose credit register answers 502 */
  const crcFails = new Set<string>();
  const A = nif('51000001');
  const B = nif('51000002');
  const UNKNOWN = nif('51000003');
  const C = nif('51000004');
  const D = nif('51000005');
  /** not registered at the tax authority */
  const CEASED = nif('51000007');
  /** insolvency proceedings at the bureau */
  const INSOLVENT = nif('51000008');
  beforeAll(async () => {
    const nifOf = (req: Request) => new URL(req.url).pathname.split('/').at(-1)!;
    const bureau = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch(req) {
        const n = nifOf(req);
        bureauCalls.set(n, (bureauCalls.get(n) ?? 0) + 1);
        if (n === UNKNOWN) return new Response('{}', { status: 404 });
        return Response.json({ ...bureauCompany(`Empresa ${n}, S.A.`), ...(n === INSOLVENT ? { events: { insolvency_proceedings: true } } : {}) });
      },
    });
    const crc = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch(req) {
        if (crcFails.has(nifOf(req))) return new Response('oops', { status: 502 });
        return Response.json({ total_exposure_eur: 1e6, overdue_eur: 0, institutions_count: 2, default_in_last_12m: false, written_off_eur: 0, litigation_eur: 0 });
      },
    });
    const tax = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (req) => (nifOf(req) === CEASED ? new Response('{}', { status: 404 }) : Response.json({ status: 'regular', vat_registered: true })) });
    servers.push(bureau, crc, tax);
    h = await makeApp(
      {
        BUREAU_URL: `http://127.0.0.1:${bureau.port}`,
        BUREAU_API_KEY: 'k',
        CRC_URL: `http://127.0.0.1:${crc.port}`,
        CRC_API_KEY: 'k',
        TAX_URL: `http://127.0.0.1:${tax.port}`,
        TAX_API_KEY: 'k',
      },
      { workers: false },
    );
    await loadConfiguredLists(h.ctx);
  });
  afterAll(async () => {
    for (const s of servers) s.stop(true);
    await h.close();
  });

  test('KYC of a company not yet scored: one bureau lookup, one bureau_passthrough line (and kyc_verify)', async () => {
    const t = await h.tenant({ env: 'live' });
    const before = bureauCalls.get(A) ?? 0;
    const r = await h.json('POST', '/v1/kyc/verify', { key: t.api_key, body: { nif: A, representatives: [] } });
    expect(r.status).toBe(200);
    expect(r.body.company.company).toMatchObject({ name: `Empresa ${A}, S.A.`, status: 'active', source: 'credit_bureau', nace: { section: 'C' } });
    expect(r.body.checks.find((c: any) => c.check === 'legal_events').result).toBe('pass');
    // no representative nor beneficial owner given: to review, and billed as any verification
    expect(r.body.checks.filter((c: any) => c.result !== 'pass').map((c: any) => c.check).sort()).toEqual(['beneficial_owners_identified', 'legal_representatives_identified']);
    expect(r.body.outcome).toBe('review');
    expect((bureauCalls.get(A) ?? 0) - before).toBe(1);
    expect((await usageOf(h, t.tenant_id)).meters).toEqual({ bureau_passthrough: 1, kyc_verify: 1 });
    // scored now, the next verification reads the score's cache: its registry lookup alone asks the bureau, billed once
    const again = await h.json('POST', '/v1/kyc/verify', { key: t.api_key, body: { nif: A, representatives: [] } });
    expect(again.status).toBe(200);
    expect(again.body.company.company).toEqual(r.body.company.company);
    expect((bureauCalls.get(A) ?? 0) - before).toBe(2);
    expect((await usageOf(h, t.tenant_id)).meters).toEqual({ bureau_passthrough: 2, kyc_verify: 2 });
  });

  test('KYC: the record made of the score’s lookup is the one the registry lookup gives (ceased, insolvent)', async () => {
    for (const [n, status] of [[CEASED, 'ceased'], [INSOLVENT, 'insolvent']] as const) {
      const t = await h.tenant({ env: 'live' });
      const first = await h.json('POST', '/v1/kyc/verify', { key: t.api_key, body: { nif: n, representatives: [] } }); // the score computed now
      const again = await h.json('POST', '/v1/kyc/verify', { key: t.api_key, body: { nif: n, representatives: [] } }); // the score cached: looked up
      expect([first.status, again.status]).toEqual([200, 200]);
      expect(first.body.company.company.status).toBe(status);
      expect(first.body.company).toEqual(again.body.company);
      expect(first.body.checks).toEqual(again.body.checks);
      expect(bureauCalls.get(n)).toBe(2);
    }
  });

  test('KYC of a company the bureau does not know: no lookup billed, the company not found', async () => {
    const t = await h.tenant({ env: 'live' });
    const before = bureauCalls.get(UNKNOWN) ?? 0;
    const r = await h.json('POST', '/v1/kyc/verify', { key: t.api_key, body: { nif: UNKNOWN, representatives: [] } });
    expect(r.status).toBe(200);
    expect(r.body.company.company).toBeNull();
    expect(r.body.checks.find((c: any) => c.check === 'legal_events').result).toBe('not_available');
    expect((bureauCalls.get(UNKNOWN) ?? 0) - before).toBe(1);
    expect((await usageOf(h, t.tenant_id)).meters).toEqual({ kyc_verify: 1 });
  });

  test('KYC whose credit register fails after the bureau answered → 503, nothing billed', async () => {
    const t = await h.tenant({ env: 'live' });
    crcFails.add(B);
    try {
      await failsUnbilled(h, t.tenant_id, () => h.json('POST', '/v1/kyc/verify', { key: t.api_key, body: { nif: B, representatives: [] } }), 503, 'upstream_unavailable');
    } finally {
      crcFails.delete(B);
    }
  });

  test('capital: the second NIF\u2019s credit register fails → 503, the first NIF\u2019s bureau lookup not billed; the twin bills both lookups and the lines', async () => {
    const t = await h.tenant({ env: 'live' });
    const capital = () => h.json('POST', '/v1/basel/capital', { key: t.api_key, body: { exposures: [{ nif: C, ead_eur: 1000 }, { nif: D, ead_eur: 2000 }] } });
    crcFails.add(D);
    try {
      await failsUnbilled(h, t.tenant_id, capital, 503, 'upstream_unavailable');
    } finally {
      crcFails.delete(D);
    }
    expect((await usageOf(h, t.tenant_id)).meters).toEqual({});
    const other = await h.tenant({ env: 'live' });
    const ok = await h.json('POST', '/v1/basel/capital', { key: other.api_key, body: { exposures: [{ nif: C, ead_eur: 1000 }, { nif: D, ead_eur: 2000 }] } });
    expect(ok.status).toBe(200);
    expect((await usageOf(h, other.tenant_id)).meters).toEqual({ bureau_passthrough: 2, basel_capital: 2 });
  });

  test('factoring: a debtor unknown at the bureau after another was decided → 404, neither its decision nor its bureau lookup billed', async () => {
    const t = await h.tenant({ env: 'live' });
    const create = (debtor2: string) => h.json('POST', '/v1/factoring/operation', { key: t.api_key, body: { seller_nif: nif('51000006'), modality: 'recourse', invoices: [inv('FT 3/1', A, 100_000), inv('FT 3/2', debtor2, 100_000)] } });
    await failsUnbilled(h, t.tenant_id, () => create(UNKNOWN), 404, 'company_not_found');
    expect((await usageOf(h, t.tenant_id)).meters).toEqual({});
    // A's score was stored by the failed call (a score is not rolled back): the twin computes B's only
    expect((await create(B)).status).toBe(201);
    expect((await usageOf(h, t.tenant_id)).meters).toEqual({ bureau_passthrough: 1, decision: 2, factoring_operation: 1 });
  });
});
