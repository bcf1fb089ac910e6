/**
 * GET /v1/nif/{nif} (issue 19): the validator, the holder type by prefix, the VAT number, the
 * sandbox registry (fixtures and the tenant's synced demo books), natural persons never returning
 * personal data, live keys without adapters 503, scope and tenant isolation.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { eq } from 'drizzle-orm';
import { loadConfiguredLists } from '../src/features/aml';
import { NifResponse } from '../src/features/nif/model';
import { entityTypeOf } from '../src/features/nif/entity-types';
import { legalFormOf } from '../src/lib/company-form';
import { nifCheckDigit } from '../src/lib/nif';
import { connectSandboxErp, expectError, makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

let h: TestApp;
let key: string;
beforeAll(async () => {
  h = await makeApp({ ERP_DEMO_INVOICES: '1500' });
  key = (await h.tenant()).api_key;
});
afterAll(() => h.close());

const withCheck = (first8: string) => first8 + nifCheckDigit(first8);
const lookup = (nif: string, k = key) => h.json('GET', `/v1/nif/${nif}`, { key: k });

describe('holder types and legal forms', () => {
  test('prefix table (REFERENCE §1)', () => {
    const cases: [string, string][] = [
      ['123456789', 'individual'], ['212345678', 'individual'], ['312345678', 'individual'], ['451234567', 'non_resident_individual'],
      ['501234567', 'legal_person'], ['600000001', 'public_administration'], ['701234567', 'undivided_inheritance'], ['741234567', 'undivided_inheritance'],
      ['751234567', 'undivided_inheritance'], ['711234567', 'non_resident_legal_person'], ['721234567', 'investment_fund'], ['771234567', 'ex_officio'],
      ['781234567', 'non_resident_vat_refund'], ['791234567', 'expo98'], ['812345678', 'sole_trader'], ['901234567', 'condominium_or_irregular'],
      ['911234567', 'condominium_or_irregular'], ['981234567', 'non_resident_no_permanent_establishment'], ['991234567', 'civil_partnership'],
      ['412345678', 'unassigned'], ['012345678', 'unassigned'], ['761234567', 'unassigned'], ['951234567', 'unassigned'],
      ['999999990', 'final_consumer'], // AT's placeholder for an anonymous final consumer, not a civil partnership
    ];
    for (const [nif, code] of cases) expect({ nif, code: entityTypeOf(nif).code }).toEqual({ nif, code });
  });
  test('legal forms from the name', () => {
    expect(legalFormOf('Sandbox Beta, S.A.')).toBe('Sociedade anónima');
    expect(legalFormOf('Sandbox Alfa, Lda.')).toBe('Sociedade por quotas');
    expect(legalFormOf('Sandbox Epsilon, Unipessoal Lda.')).toBe('Sociedade unipessoal por quotas');
    expect(legalFormOf('Município de Leiria')).toBe('Pessoa coletiva pública');
    expect(legalFormOf('João Silva')).toBeNull();
  });
});

describe('GET /v1/nif/{nif}', () => {
  test('a sandbox fixture: valid, legal person, its registry record', async () => {
    const r = await lookup('599000023');
    expect(r.status).toBe(200);
    expect(Value.Check(NifResponse, r.body)).toBe(true);
    expect(r.body).toMatchObject({
      nif: '599000023', valid: true, check_digit_ok: true, vat_number: 'PT599000023', synthetic: true,
      entity_type: { code: 'legal_person', label_pt: 'Pessoa coletiva' },
      company: { name: 'Sandbox Beta, S.A.', legal_form: 'Sociedade anónima', cae: '25110', nace: { section: 'C', division: '25' }, status: 'active', incorporation_date: '2011-06-15', source: 'sandbox_registry' },
    });
    expect((await lookup('599000112')).body.company.status).toBe('insolvent');
  });

  test('a bad check digit is 200 with valid: false and no record; not 9 digits is 422', async () => {
    const bad = await lookup('599000011');
    expect(bad.status).toBe(200);
    expect(bad.body).toMatchObject({ valid: false, check_digit_ok: false, company: null, vat_number: null });
    for (const nif of ['12345678', '1234567890', '59900001a', '%20599000015']) {
      const e = expectError(await lookup(nif), 422, 'validation_failed');
      expect(e.fields[0].path).toBe('path.nif');
    }
  });

  test('the fixture the tax authority does not recognise, an unassigned prefix, an unknown company', async () => {
    expect((await lookup('599000066')).body).toMatchObject({ valid: false, check_digit_ok: true, company: null });
    const unassigned = withCheck('41234567');
    expect((await lookup(unassigned)).body).toMatchObject({ valid: false, check_digit_ok: true, entity_type: { code: 'unassigned' }, company: null });
    const unknown = withCheck('51111111');
    expect((await lookup(unknown)).body).toMatchObject({ valid: true, entity_type: { code: 'legal_person' }, company: null });
  });

  test('a natural person: holder type only, never personal data, even when the tenant\'s books name them', async () => {
    const t = await h.tenant();
    await connectSandboxErp(h, t.api_key, 'demo', { customerReference: 'books' });
    const run = await h.json('POST', '/v1/erp-connector/sync', { key: t.api_key, body: { provider: 'demo', customer_reference: 'books' } });
    for (let i = 0; i < 200; i++) {
      if ((await h.json('GET', `/v1/erp-connector/sync/${run.body.run_id}`, { key: t.api_key })).body.status === 'succeeded') break;
      await Bun.sleep(25);
    }
    const { db, t: tables } = h.ctx.database;
    const customers = await db.selectDistinct({ nif: tables.invoices.customerNif, name: tables.invoices.customerName }).from(tables.invoices);
    const person = customers.find((c) => c.nif && /^[123]/.test(c.nif) && c.nif !== '999999990');
    const company = customers.find((c) => c.nif && /^5/.test(c.nif) && !c.nif.startsWith('5990000'));
    expect(person).toBeDefined();
    const p = await lookup(person!.nif!, t.api_key);
    expect(p.body).toMatchObject({ valid: true, entity_type: { code: 'individual' }, company: null });
    expect(JSON.stringify(p.body)).not.toContain(person!.name!);
    // a company in the books is in this tenant's registry, from its books; not in another tenant's
    const c = await lookup(company!.nif!, t.api_key);
    // (the books confirm no registration nor activity: status unknown, and KYC asks for a review)
    expect(c.body.company).toMatchObject({ name: company!.name, source: 'erp:demo', status: null });
    expect((await lookup(company!.nif!)).body.company).toBeNull();
    // the anonymous final consumer's placeholder is on the books' invoices, but no one holds it
    expect(customers.some((x) => x.nif === '999999990')).toBe(true);
    expect((await lookup('999999990', t.api_key)).body).toMatchObject({ valid: true, entity_type: { code: 'final_consumer' }, company: null });
    await loadConfiguredLists(h.ctx);
    const kyc = await h.json('POST', '/v1/kyc/verify', { key: t.api_key, body: { nif: company!.nif, representatives: [{ name: 'Ana Rita Costa', birth_date: '1975-04-12', role: 'manager' }] } });
    expect(kyc.status).toBe(200);
    expect(kyc.body.checks.find((x: any) => x.check === 'company_found_active')).toMatchObject({ result: 'review', detail: expect.stringContaining('not from a registry') });
  });

  test('a record\'s legal form by its name\'s written shape: "Rui Sá" (a sole trader in the books) is no sociedade anónima', async () => {
    const t = await h.tenant();
    const { db, t: tables } = h.ctx.database;
    const soleTrader = withCheck('81234567');
    const soleTraderCaps = withCheck('81234568');
    const holding = withCheck('51234567');
    const quotas = withCheck('51234568');
    const inheritance = withCheck('90123456');
    const book = (nif: string, name: string) => ({
      id: crypto.randomUUID(), tenantId: t.tenant_id, env: 'sandbox', provider: 'demo', customerReference: 'books', providerDocumentId: nif, documentType: 'FT', number: `FT 2026/${nif}`, atcud: null,
      issueDate: '2026-06-01', dueDate: '2026-07-01', customerNif: nif, customerName: name, currency: 'EUR', netTotalCents: 100_00, taxTotalCents: 23_00, grossTotalCents: 123_00, status: 'N', data: {}, sourceUpdatedAt: '2026-06-01T00:00:00Z', syncedAt: h.clock.now(),
    });
    await db.insert(tables.invoices).values([book(soleTrader, 'Rui Sá'), book(soleTraderCaps, 'RUI SA'), book(holding, 'EDP SA'), book(quotas, 'Sá & Filhos, Lda'), book(inheritance, 'HERANCA DE RUI SA')] as never);
    const formOf = async (nif: string) => {
      const r = await lookup(nif, t.api_key);
      expect(r.status).toBe(200);
      return { name: r.body.company.name, legal_form: r.body.company.legal_form };
    };
    // the surname Sá, with or without its accent, states no company form
    expect(await formOf(soleTrader)).toEqual({ name: 'Rui Sá', legal_form: null });
    expect(await formOf(soleTraderCaps)).toEqual({ name: 'RUI SA', legal_form: null });
    // a company's NIF (prefix 5): its name in capitals states its form
    expect(await formOf(holding)).toEqual({ name: 'EDP SA', legal_form: 'Sociedade anónima' });
    expect(await formOf(quotas)).toEqual({ name: 'Sá & Filhos, Lda', legal_form: 'Sociedade por quotas' });
    // a holder that may be a person's (prefix 90: a sole trader's inheritance among others): no form by capitals
    expect(await formOf(inheritance)).toEqual({ name: 'HERANCA DE RUI SA', legal_form: null });
  });

  test('live keys: validation and holder type without adapters; a company record needs them (503)', async () => {
    const live = await h.tenant({ env: 'live' });
    expect((await lookup('123456789', live.api_key)).body).toMatchObject({ valid: true, entity_type: { code: 'individual' }, company: null, synthetic: false });
    expect((await lookup('599000011', live.api_key)).body).toMatchObject({ valid: false });
    const e = expectError(await lookup('599000023', live.api_key), 503, 'live_tier_not_available');
    expect(e.roadmap_url).toMatch(/\/roadmap$/);
  });

  test('HEAD: the GET\'s status and headers without a body, rate limited like it, and never billed (no usage line)', async () => {
    const usageOf = async (tenantId: string) => {
      await h.ctx.usage.flush();
      const u = h.ctx.database.t.usageRecords;
      return h.ctx.database.db.select().from(u).where(eq(u.tenantId, tenantId));
    };
    // two tenants with the same budget (the test clock stands still): their rate-limit headers match
    const a = await h.tenant({ rateLimitPerMinute: 1000 });
    const b = await h.tenant({ rateLimitPerMinute: 1000 });
    const seen = (r: Response) => Object.fromEntries([...r.headers].filter(([k]) => !['x-request-id', 'date', 'content-length'].includes(k)));
    for (const nif of ['599000023', '599000011', withCheck('51111111'), '12345678']) {
      const get = await h.call('GET', `/v1/nif/${nif}`, { key: a.api_key });
      const head = await h.call('HEAD', `/v1/nif/${nif}`, { key: b.api_key });
      const body = await get.text();
      expect({ nif, status: head.status }).toEqual({ nif, status: get.status });
      expect(seen(head)).toEqual(seen(get));
      expect(await head.text()).toBe('');
      if (head.headers.has('content-length')) expect(Number(head.headers.get('content-length'))).toBe(Buffer.byteLength(body));
    }
    // a HEAD is rate limited as a GET is (each one takes a request of the minute's and the day's budget)
    const remaining = async () => Number((await h.call('HEAD', '/v1/nif/599000023', { key: b.api_key })).headers.get('x-ratelimit-remaining'));
    const before = await remaining();
    expect(await remaining()).toBe(before - 1);
    // the GETs of valid NIFs were billed as lookups (the 422 was not); none of the HEADs were
    // (summed: a flush between two calls of one second writes them as two rows of the ledger)
    const perMeter = (rows: { meter: string; quantity: number }[]) => rows.reduce<Record<string, number>>((m, r) => ({ ...m, [r.meter]: (m[r.meter] ?? 0) + r.quantity }), {});
    expect(perMeter(await usageOf(a.tenant_id))).toEqual({ nif_lookup: 3 });
    expect(await usageOf(b.tenant_id)).toEqual([]);
    // and a HEAD needs the scope and a key as the GET does
    const narrow = await h.tenant({ scopes: ['score'] });
    expect((await h.call('HEAD', '/v1/nif/599000023', { key: narrow.api_key })).status).toBe(403);
    expect((await h.call('HEAD', '/v1/nif/599000023')).status).toBe(401);
  });

  test('scope compliance; no key', async () => {
    const narrow = await h.tenant({ scopes: ['score'] });
    expectError(await lookup('599000023', narrow.api_key), 403, 'insufficient_scope');
    expectError(await h.json('GET', '/v1/nif/599000023'), 401, 'missing_api_key');
  });
});
