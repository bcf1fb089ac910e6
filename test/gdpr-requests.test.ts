/**
 * Data-subject requests (issue 22): POST /v1/gdpr/request and its workflow — access builds a bundle of
 * everything about one person, erasure redacts what no law holds and lists what is kept and why,
 * rectification corrects, restriction is completed by the tenant; due one month after the request;
 * event gdpr.request.completed; errors, scope, tenants.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { eq } from 'drizzle-orm';
import { SubjectRequestView } from '../src/features/gdpr/model';
import { oneMonthAfter } from '../src/features/gdpr/subject-requests';
import { expectError, makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

const PERSON_NIF = '212345672';
const OTHER_NIF = '187654328';
let h: TestApp;
beforeAll(async () => {
  h = await makeApp();
});
afterAll(() => h.close());

/** A tenant whose data mentions Ana Rita Costa (and someone else), in the sandbox. */
async function tenantWithPerson() {
  const t = await h.tenant();
  const { db, t: tb } = h.ctx.database;
  const now = h.ctx.clock.now();
  const invoice = (n: string, nif: string, name: string, email: string) => ({
    id: crypto.randomUUID(), tenantId: t.tenant_id, env: 'sandbox', provider: 'demo', customerReference: 'books', providerDocumentId: n, documentType: 'FT', number: n, atcud: null,
    issueDate: '2026-10-01', dueDate: '2026-10-31', customerNif: nif, customerName: name, currency: 'EUR', netTotalCents: 1000, taxTotalCents: 230, grossTotalCents: 1230, status: 'N',
    data: { customer_email: email, lines: [{ product: 'consulta' }] }, sourceUpdatedAt: now.toISOString(), syncedAt: now,
  });
  await db.insert(tb.invoices).values([invoice('FT 1', PERSON_NIF, 'Ana Rita Costa', 'ana@example.pt'), invoice('FT 2', '999999990', 'ANA RITA COSTA', 'ana@example.pt'), invoice('FT 3', OTHER_NIF, 'Rui Sousa', 'rui@example.pt')] as never);
  const txn = (id: string, name: string) => ({ id: crypto.randomUUID(), tenantId: t.tenant_id, env: 'sandbox', provider: 'demo', customerReference: 'books', providerTransactionId: id, bookingDate: '2026-10-15', amountCents: 1230, currency: 'EUR', description: `TRF ${name}`, counterpartyName: name, counterpartyIban: 'PT50000201231234567890154', matchedInvoiceNumber: null, sourceUpdatedAt: now.toISOString(), syncedAt: now });
  await db.insert(tb.bankTransactions).values([txn('b1', 'Ana Rita Costa'), txn('b2', 'Rui Sousa')] as never);
  await db.insert(tb.amlScreenings).values({ id: `scr_${Bun.randomUUIDv7()}`, tenantId: t.tenant_id, env: 'sandbox', name: 'Ana Rita Costa', status: 'clear', topScore: 0, customerReference: null, monitor: false, response: JSON.stringify({ status: 'clear', name: 'Ana Rita Costa' }), createdAt: now });
  await db.insert(tb.kycVerifications).values({ id: `kyc_${Bun.randomUUIDv7()}`, tenantId: t.tenant_id, env: 'sandbox', nif: '599000015', outcome: 'pass', customerReference: null, response: JSON.stringify({ outcome: 'pass', checks: [{ check: 'representative_nif_valid', subject: 'Ana Rita Costa', result: 'pass', detail: `NIF ${PERSON_NIF}: holder type: individual` }] }), createdAt: now });
  // another person's verification, of another company: its text contains "an", "Costa" and "Rita"'s letters
  await db.insert(tb.kycVerifications).values({ id: `kyc_${Bun.randomUUIDv7()}`, tenantId: t.tenant_id, env: 'sandbox', nif: '599000023', outcome: 'pass', customerReference: null, response: JSON.stringify({ outcome: 'pass', checks: [{ check: 'sanctions_screening', subject: 'Sandbox Beta Costa', result: 'pass', detail: 'no match on un' }, { check: 'representative_nif_valid', subject: 'Joana Ritano', result: 'pass', detail: `NIF ${OTHER_NIF}: holder type: individual` }] }), createdAt: now });
  return t;
}

const post = (key: string, body: unknown) => h.json('POST', '/v1/gdpr/request', { key, body });
async function settled(key: string, id: string) {
  for (let i = 0; i < 200; i++) {
    const r = (await h.json('GET', `/v1/gdpr/requests/${id}`, { key })).body;
    if (r.status !== 'received') return r;
    await Bun.sleep(10);
  }
  throw new Error('the request was not processed');
}

describe('POST /v1/gdpr/request', () => {
  test('access: 202 received with the one-month deadline; the job finds the person by NIF, name and e-mail, and only them', async () => {
    const t = await tenantWithPerson();
    const r = await post(t.api_key, { type: 'access', subject: { nif: PERSON_NIF, name: 'ana rita côsta', email: 'ana@example.pt' }, requested_at: '2026-11-20T09:30:00Z' });
    expect(r.status).toBe(202);
    expect(Value.Check(SubjectRequestView, r.body)).toBe(true);
    expect(r.body).toMatchObject({ type: 'access', status: 'received', requested_at: '2026-11-20T09:30:00.000Z', due_at: '2026-12-20T09:30:00.000Z', overdue: false, bundle_url: null });
    expect(r.headers.get('location')).toBe(`/v1/gdpr/requests/${r.body.request_id}`);
    const done = await settled(t.api_key, r.body.request_id);
    expect(done).toMatchObject({ status: 'completed', found: { invoices: 2, bank_transactions: 1, aml_screenings: 1, kyc_verifications: 1 }, bundle_url: `/v1/gdpr/requests/${r.body.request_id}/bundle` });
    const bundle = (await h.json('GET', done.bundle_url, { key: t.api_key })).body;
    expect(bundle.categories.invoices.map((i: any) => i.number).sort()).toEqual(['FT 1', 'FT 2']);
    expect(bundle.categories.bank_transactions[0]).toMatchObject({ counterparty_name: 'Ana Rita Costa', counterparty_iban: 'PT50000201231234567890154' });
    expect(JSON.stringify(bundle)).not.toContain('Rui Sousa');
    expect(JSON.stringify(bundle)).not.toContain(t.tenant_id);
    const events = (await h.json('GET', '/v1/events?type=gdpr.request.completed', { key: t.api_key })).body.data;
    expect(events[0].data).toMatchObject({ request_id: r.body.request_id, type: 'access', status: 'completed', on_time: true });
    // another tenant's request finds nothing of this tenant's data
    const other = await h.tenant({ scopes: ['gdpr:manage'] });
    const theirs = await settled(other.api_key, (await post(other.api_key, { type: 'access', subject: { nif: PERSON_NIF } })).body.request_id);
    expect(theirs.found).toEqual({});
    expectError(await h.json('GET', `/v1/gdpr/requests/${r.body.request_id}`, { key: other.api_key }), 404, 'resource_not_found');
  });

  test("by NIF alone: the bank transactions of the names on the person's invoices, and the payments matched to those invoices", async () => {
    const t = await tenantWithPerson();
    const { db, t: tb } = h.ctx.database;
    const now = h.ctx.clock.now();
    // a payment with the bank's own spelling of the payer, matched to the person's invoice FT 1
    await db.insert(tb.bankTransactions).values({ id: crypto.randomUUID(), tenantId: t.tenant_id, env: 'sandbox', provider: 'demo', customerReference: 'books', providerTransactionId: 'b3', bookingDate: '2026-10-20', amountCents: 1230, currency: 'EUR', description: 'TRF FT 1', counterpartyName: 'A R COSTA', counterpartyIban: null, matchedInvoiceNumber: 'FT 1', sourceUpdatedAt: now.toISOString(), syncedAt: now } as never);
    const access = await settled(t.api_key, (await post(t.api_key, { type: 'access', subject: { nif: PERSON_NIF } })).body.request_id);
    expect(access.found).toMatchObject({ invoices: 1, bank_transactions: 2 });
    const bundle = (await h.json('GET', access.bundle_url, { key: t.api_key })).body;
    expect(bundle.categories.bank_transactions.map((x: any) => x.counterparty_name).sort()).toEqual(['A R COSTA', 'Ana Rita Costa']);
    expect(JSON.stringify(bundle)).not.toContain('Rui Sousa');
    const erased = await settled(t.api_key, (await post(t.api_key, { type: 'erasure', subject: { nif: PERSON_NIF } })).body.request_id);
    expect(erased.actions).toEqual(expect.arrayContaining([expect.objectContaining({ category: 'bank_transactions', count: 2 })]));
    const txns = await db.select().from(tb.bankTransactions).where(eq(tb.bankTransactions.tenantId, t.tenant_id));
    expect(txns.map((x) => x.counterpartyName ?? '').sort()).toEqual(['', '', 'Rui Sousa']);
  });

  test('KYC verifications: by a representative\'s NIF or whole name (accents aside), never by a piece of text', async () => {
    const t = await tenantWithPerson();
    const found = async (subject: Record<string, string>) => (await settled(t.api_key, (await post(t.api_key, { type: 'access', subject })).body.request_id)).found?.kyc_verifications ?? 0;
    expect(await found({ nif: PERSON_NIF })).toBe(1);
    expect(await found({ name: 'ANA RITA COSTA' })).toBe(1);
    expect(await found({ nif: OTHER_NIF })).toBe(1);
    for (const name of ['an', 'Costa', 'Rita', 'Ana Rita']) expect({ name, found: await found({ name }) }).toEqual({ name, found: 0 });
  });

  test('erasure deletes the earlier access bundles of the person (copies of what it removes); others stay', async () => {
    const t = await tenantWithPerson();
    const access = await settled(t.api_key, (await post(t.api_key, { type: 'access', subject: { nif: PERSON_NIF } })).body.request_id);
    const otherAccess = await settled(t.api_key, (await post(t.api_key, { type: 'access', subject: { nif: OTHER_NIF } })).body.request_id);
    expect((await h.json('GET', access.bundle_url, { key: t.api_key })).status).toBe(200);
    const erased = await settled(t.api_key, (await post(t.api_key, { type: 'erasure', subject: { name: 'ana rita costa' } })).body.request_id);
    expect(erased.actions).toContainEqual({ category: 'gdpr_access_bundles', action: 'earlier access bundles of the person deleted', count: 1 });
    const after = (await h.json('GET', `/v1/gdpr/requests/${access.request_id}`, { key: t.api_key })).body;
    expect(after).toMatchObject({ status: 'completed', bundle_url: null });
    const gone = expectError(await h.json('GET', `/v1/gdpr/requests/${access.request_id}/bundle`, { key: t.api_key }), 404, 'resource_not_found');
    expect(gone.message).toContain(erased.request_id);
    expect((await h.json('GET', otherAccess.bundle_url, { key: t.api_key })).status).toBe(200);
  });

  test("by e-mail alone: an invoice naming the person as a company's contact does not bring the company's payments", async () => {
    const t = await tenantWithPerson();
    const { db, t: tb } = h.ctx.database;
    const now = h.ctx.clock.now();
    // Rui Sousa's company invoice lists Ana's e-mail as its contact; its payment is the company's
    await db.insert(tb.invoices).values({ id: crypto.randomUUID(), tenantId: t.tenant_id, env: 'sandbox', provider: 'demo', customerReference: 'books', providerDocumentId: 'FT 4', documentType: 'FT', number: 'FT 4', atcud: null, issueDate: '2026-10-01', dueDate: '2026-10-31', customerNif: '599000031', customerName: 'Sousa & Filhos, Lda', currency: 'EUR', netTotalCents: 1000, taxTotalCents: 230, grossTotalCents: 1230, status: 'N', data: { customer_email: 'ana@example.pt' }, sourceUpdatedAt: now.toISOString(), syncedAt: now } as never);
    await db.insert(tb.bankTransactions).values({ id: crypto.randomUUID(), tenantId: t.tenant_id, env: 'sandbox', provider: 'demo', customerReference: 'books', providerTransactionId: 'b4', bookingDate: '2026-10-20', amountCents: 1230, currency: 'EUR', description: 'TRF FT 4', counterpartyName: 'SOUSA & FILHOS LDA', counterpartyIban: 'PT50000201231234567890154', matchedInvoiceNumber: 'FT 4', sourceUpdatedAt: now.toISOString(), syncedAt: now } as never);
    const access = await settled(t.api_key, (await post(t.api_key, { type: 'access', subject: { email: 'ana@example.pt' } })).body.request_id);
    const bundle = (await h.json('GET', access.bundle_url, { key: t.api_key })).body;
    expect(bundle.categories.invoices.map((i: any) => i.number).sort()).toEqual(['FT 1', 'FT 2', 'FT 4']);
    expect(JSON.stringify(bundle.categories.bank_transactions ?? [])).not.toContain('SOUSA');
  });

  test('erasure: what no law holds is redacted; AML records and tax records are kept and listed with why; partially completed', async () => {
    const t = await tenantWithPerson();
    const r = await post(t.api_key, { type: 'erasure', subject: { nif: PERSON_NIF, name: 'Ana Rita Costa' } });
    const done = await settled(t.api_key, r.body.request_id);
    expect(done.status).toBe('partially_completed');
    expect(done.actions).toEqual(expect.arrayContaining([expect.objectContaining({ category: 'invoices', count: 2 }), expect.objectContaining({ category: 'bank_transactions', count: 1 })]));
    expect(done.retained.map((x: any) => x.category).sort()).toEqual(['aml_screenings', 'invoices', 'kyc_verifications']);
    expect(done.retained.find((x: any) => x.category === 'aml_screenings')).toMatchObject({ reason: expect.stringContaining('83/2017'), retain_until: expect.stringMatching(/^2033-/) });
    const { db, t: tb } = h.ctx.database;
    const invoices = await db.select().from(tb.invoices).where(eq(tb.invoices.tenantId, t.tenant_id));
    const ana = invoices.filter((i) => i.number !== 'FT 3');
    expect(ana.map((i) => [i.customerName, JSON.stringify(i.data).includes('ana@')])).toEqual([[null, false], [null, false]]);
    expect(ana.map((i) => i.customerNif).sort()).toEqual([PERSON_NIF, '999999990']); // the tax record keeps the NIF
    expect(invoices.find((i) => i.number === 'FT 3')!.customerName).toBe('Rui Sousa');
    const txns = await db.select().from(tb.bankTransactions).where(eq(tb.bankTransactions.tenantId, t.tenant_id));
    expect(txns.map((x) => x.counterpartyName).sort()).toEqual([null, 'Rui Sousa'].sort() as never);
  });

  test("a sole trader's ESG assessment and VSME report: both in an access bundle; erasure deletes the report (it prints what was typed of the person) and keeps the assessment", async () => {
    const t = await h.tenant();
    const esg = await h.json('POST', '/v1/esg', { key: t.api_key, body: { nif: PERSON_NIF, sector: 'M', answers: { renewable_energy_pct: 10 } } });
    expect(esg.status).toBe(200);
    expect((await h.json('POST', '/v1/csrd/report', { key: t.api_key, body: { nif: PERSON_NIF, company: { name: 'Ana Rita Costa', address: 'Rua das Flores 1, Porto' } } })).status).toBe(201);
    const access = await settled(t.api_key, (await post(t.api_key, { type: 'access', subject: { nif: PERSON_NIF } })).body.request_id);
    expect(access.found).toMatchObject({ esg_assessments: 1, csrd_reports: 1 });
    const erased = await settled(t.api_key, (await post(t.api_key, { type: 'erasure', subject: { nif: PERSON_NIF } })).body.request_id);
    expect(erased.actions).toContainEqual(expect.objectContaining({ category: 'csrd_reports', count: 1 }));
    expect(erased.retained.map((x: any) => x.category)).toContain('esg_assessments');
    const { db, t: tb } = h.ctx.database;
    expect(await db.select().from(tb.csrdReports).where(eq(tb.csrdReports.tenantId, t.tenant_id))).toEqual([]);
    expect((await db.select().from(tb.esgAssessments).where(eq(tb.esgAssessments.tenantId, t.tenant_id))).length).toBe(1);
  });

  test("erasure ends the monitoring of the person's screenings tied to them by birth date (kept as evidence); a namesake's stays monitored", async () => {
    const t = await h.tenant();
    const { db, t: tb } = h.ctx.database;
    const now = h.ctx.clock.now();
    const screening = (name: string, birth: string | null) => ({ id: `scr_${Bun.randomUUIDv7()}`, tenantId: t.tenant_id, env: 'sandbox', name, status: 'clear', topScore: 0, customerReference: 'onb-1', monitor: true, response: JSON.stringify({ status: 'clear', name, query: { name, type: 'person', birth_date: birth, country: null, nif: null } }), createdAt: now });
    const mine = screening('Joana Maria Vasconcelos', '1980-05-02');
    const namesake = screening('Joana Maria Vasconcelos', null);
    const other = screening('Rui Sousa', '1980-05-02');
    await db.insert(tb.amlScreenings).values([mine, namesake, other]);
    const erased = await settled(t.api_key, (await post(t.api_key, { type: 'erasure', subject: { name: 'Joana Maria Vasconcelos', birth_date: '1980-05-02' } })).body.request_id);
    expect(erased.actions).toContainEqual({ category: 'aml_screenings', action: expect.stringContaining('monitoring ended'), count: 1 });
    const monitored = async () => Object.fromEntries((await db.select({ id: tb.amlScreenings.id, monitor: tb.amlScreenings.monitor }).from(tb.amlScreenings).where(eq(tb.amlScreenings.tenantId, t.tenant_id))).map((r) => [r.id, r.monitor]));
    expect(await monitored()).toEqual({ [mine.id]: false, [namesake.id]: true, [other.id]: true });
    // by a name alone: nothing ties a screening to the person, so none is ended (each may be a namesake's), and the answer says so
    const byName = await settled(t.api_key, (await post(t.api_key, { type: 'erasure', subject: { name: 'Rui Sousa' } })).body.request_id);
    expect(byName.actions).toContainEqual({ category: 'aml_screenings', action: expect.stringContaining('still monitored'), count: 1 });
    expect((await monitored())[other.id]).toBe(true);
  });

  test("erasure ends the monitoring of the person's screenings tied to them by NIF; namesakes with no NIF or another one stay monitored, and are counted", async () => {
    const t = await h.tenant();
    const { db, t: tb } = h.ctx.database;
    const now = h.ctx.clock.now();
    const screening = (name: string, nif: string | null, birth: string | null = null) => ({ id: `scr_${Bun.randomUUIDv7()}`, tenantId: t.tenant_id, env: 'sandbox', name, status: 'clear', topScore: 0, customerReference: 'onb-1', monitor: true, response: JSON.stringify({ status: 'clear', name, query: { name, type: 'person', birth_date: birth, country: null, nif } }), createdAt: now });
    const mine = screening('Joana Maria Vasconcelos', PERSON_NIF);
    const namesake = screening('Joana Maria Vasconcelos', null);
    const otherNif = screening('JOANA MARIA VASCONCELOS', OTHER_NIF);
    const other = screening('Rui Sousa', null);
    await db.insert(tb.amlScreenings).values([mine, namesake, otherNif, other]);
    const monitored = async () => Object.fromEntries((await db.select({ id: tb.amlScreenings.id, monitor: tb.amlScreenings.monitor }).from(tb.amlScreenings).where(eq(tb.amlScreenings.tenantId, t.tenant_id))).map((r) => [r.id, r.monitor]));
    const erased = await settled(t.api_key, (await post(t.api_key, { type: 'erasure', subject: { name: 'Joana Maria Vasconcelos', nif: PERSON_NIF } })).body.request_id);
    expect(erased.status).toBe('partially_completed');
    expect(erased.found.aml_screenings).toBe(3);
    expect(erased.actions.filter((a: { category: string }) => a.category === 'aml_screenings')).toEqual([
      { category: 'aml_screenings', action: 'monitoring ended (the screenings are kept as AML evidence, not screened again)', count: 1 },
      { category: 'aml_screenings', action: 'still monitored: screenings of the same name that no birth date or NIF ties to the person (give them to end it)', count: 2 },
    ]);
    expect(erased.retained).toContainEqual(expect.objectContaining({ category: 'aml_screenings', count: 3 }));
    expect(await monitored()).toEqual({ [mine.id]: false, [namesake.id]: true, [otherNif.id]: true, [other.id]: true });
    // the same erasure again: nothing left to end; the namesakes are still counted
    const again = await settled(t.api_key, (await post(t.api_key, { type: 'erasure', subject: { name: 'Joana Maria Vasconcelos', nif: PERSON_NIF } })).body.request_id);
    expect(again.actions.filter((a: { category: string }) => a.category === 'aml_screenings')).toEqual([{ category: 'aml_screenings', action: expect.stringContaining('still monitored'), count: 2 }]);
  });

  test('a birth date given beside the NIF does not hide a screening that recorded none: tied by its NIF, its monitoring ends', async () => {
    const t = await h.tenant();
    const { db, t: tb } = h.ctx.database;
    const now = h.ctx.clock.now();
    const screening = (nif: string | null, birth: string | null) => ({ id: `scr_${Bun.randomUUIDv7()}`, tenantId: t.tenant_id, env: 'sandbox', name: 'Joana Maria Vasconcelos', status: 'clear', topScore: 0, customerReference: 'onb-1', monitor: true, response: JSON.stringify({ status: 'clear', name: 'Joana Maria Vasconcelos', query: { name: 'Joana Maria Vasconcelos', type: 'person', birth_date: birth, country: null, nif } }), createdAt: now });
    const byNif = screening(PERSON_NIF, null);
    const byBirth = screening(null, '1980-05-02');
    const namesake = screening(null, null);
    const anotherBirth = screening(null, '1991-01-01'); // another person of that name: not theirs
    await db.insert(tb.amlScreenings).values([byNif, byBirth, namesake, anotherBirth]);
    const erased = await settled(t.api_key, (await post(t.api_key, { type: 'erasure', subject: { name: 'Joana Maria Vasconcelos', nif: PERSON_NIF, birth_date: '1980-05-02' } })).body.request_id);
    expect(erased.found.aml_screenings).toBe(3);
    expect(erased.actions.filter((a: { category: string }) => a.category === 'aml_screenings')).toEqual([
      { category: 'aml_screenings', action: expect.stringContaining('monitoring ended'), count: 2 },
      { category: 'aml_screenings', action: expect.stringContaining('still monitored'), count: 1 },
    ]);
    const rows = Object.fromEntries((await db.select({ id: tb.amlScreenings.id, monitor: tb.amlScreenings.monitor }).from(tb.amlScreenings).where(eq(tb.amlScreenings.tenantId, t.tenant_id))).map((r) => [r.id, r.monitor]));
    expect(rows).toEqual({ [byNif.id]: false, [byBirth.id]: false, [namesake.id]: true, [anotherBirth.id]: true });
  });

  test("a sole trader's cession notice (the person as debtor): in an access bundle; erasure keeps it, listed with why", async () => {
    const t = await h.tenant();
    const notice = await h.json('POST', '/v1/notice/cession', {
      key: t.api_key,
      body: {
        parties: { assignor: { name: 'Metalomecânica Exemplo, Lda', nif: '599000031' }, factor: { name: 'Factor Exemplo, S.A.', nif: '599000015' }, debtor: { name: 'Ana Rita Costa', nif: PERSON_NIF, address: 'Rua das Flores 1, Porto', sole_trader: true } },
        invoices: [{ number: 'FT 2026/118', issue_date: '2026-11-02', due_date: '2027-01-31', amount_cents: 1_845_000 }],
        payment: { iban: 'PT50000201231234567890154' },
      },
    });
    expect(notice.status).toBe(201);
    const access = await settled(t.api_key, (await post(t.api_key, { type: 'access', subject: { nif: PERSON_NIF } })).body.request_id);
    expect(access.found).toMatchObject({ cession_notices: 1 });
    // another person's NIF finds none of it
    expect((await settled(t.api_key, (await post(t.api_key, { type: 'access', subject: { nif: OTHER_NIF } })).body.request_id)).found.cession_notices).toBeUndefined();
    const erased = await settled(t.api_key, (await post(t.api_key, { type: 'erasure', subject: { nif: PERSON_NIF } })).body.request_id);
    expect(erased.retained).toContainEqual(expect.objectContaining({ category: 'cession_notices', count: 1, reason: expect.stringContaining('17(3)(e)') }));
  });

  test('rectification corrects the name where it is not evidence; restriction waits for the tenant; reject needs a reason; closed requests are 409', async () => {
    const t = await tenantWithPerson();
    const rect = await settled(t.api_key, (await post(t.api_key, { type: 'rectification', subject: { name: 'Ana Rita Costa' }, corrections: { name: 'Ana Rita Costa Pereira' } })).body.request_id);
    expect(rect.status).toBe('partially_completed');
    expect(rect.retained.map((x: any) => x.category).sort()).toEqual(['aml_screenings', 'kyc_verifications']);
    const { db, t: tb } = h.ctx.database;
    expect((await db.select().from(tb.invoices).where(eq(tb.invoices.tenantId, t.tenant_id))).map((i) => i.customerName).sort()).toEqual(['Ana Rita Costa Pereira', 'Ana Rita Costa Pereira', 'Rui Sousa']);
    // an e-mail correction where the records hold none of the person's: no action is reported
    const noMail = await settled(t.api_key, (await post(t.api_key, { type: 'rectification', subject: { nif: OTHER_NIF, email: 'nobody@example.pt' }, corrections: { email: 'new@example.pt' } })).body.request_id);
    expect(noMail.actions.filter((a: any) => a.action.includes('e-mail'))).toEqual([]);
    const mail = await settled(t.api_key, (await post(t.api_key, { type: 'rectification', subject: { email: 'rui@example.pt' }, corrections: { email: 'rui.sousa@example.pt' } })).body.request_id);
    expect(mail.actions).toContainEqual({ category: 'invoices', action: 'e-mail rectified in the provider documents', count: 1 });

    const restrict = await settled(t.api_key, (await post(t.api_key, { type: 'restriction', subject: { nif: PERSON_NIF } })).body.request_id);
    expect(restrict).toMatchObject({ status: 'in_progress', completed_at: null });
    const completed = await h.json('POST', `/v1/gdpr/requests/${restrict.request_id}/complete`, { key: t.api_key, body: {} });
    expect(completed.status).toBe(200);
    expect(completed.body).toMatchObject({ status: 'completed', actions: [{ category: 'processing', action: 'restricted by the tenant', count: 1 }] });
    expectError(await h.json('POST', `/v1/gdpr/requests/${restrict.request_id}/complete`, { key: t.api_key, body: {} }), 409, 'invalid_transition');
    expectError(await h.json('POST', `/v1/gdpr/requests/${rect.request_id}/reject`, { key: t.api_key, body: { reason: 'late' } }), 409, 'invalid_transition');
    expectError(await h.json('GET', `/v1/gdpr/requests/${rect.request_id}/bundle`, { key: t.api_key }), 409, 'invalid_transition');

    const open = await settled(t.api_key, (await post(t.api_key, { type: 'restriction', subject: { name: 'Ana Rita Costa' } })).body.request_id);
    expect(expectError(await h.json('POST', `/v1/gdpr/requests/${open.request_id}/reject`, { key: t.api_key, body: {} }), 422, 'validation_failed').fields[0].path).toBe('reason');
    const rejected = await h.json('POST', `/v1/gdpr/requests/${open.request_id}/reject`, { key: t.api_key, body: { reason: 'identity not verified' } });
    expect(rejected.body).toMatchObject({ status: 'rejected', reason: 'identity not verified' });
    // an erasure cannot be completed by hand: it completes itself
    const erasure = (await post(t.api_key, { type: 'erasure', subject: { nif: OTHER_NIF } })).body;
    await settled(t.api_key, erasure.request_id);
    expectError(await h.json('POST', `/v1/gdpr/requests/${erasure.request_id}/complete`, { key: t.api_key, body: {} }), 409, 'invalid_transition');
    // the list, by status and type, newest first
    const list = (await h.json('GET', '/v1/gdpr/requests?type=restriction', { key: t.api_key })).body.data;
    expect(list.map((x: any) => [x.request_id, x.status])).toEqual([[open.request_id, 'rejected'], [restrict.request_id, 'completed']]);
    expect((await h.json('GET', '/v1/gdpr/requests?status=rejected', { key: t.api_key })).body.data.length).toBe(1);
  });

  test('errors: a company’s NIF, a bad check digit, no identifier, corrections where they do not apply, a future date; scope', async () => {
    const t = await h.tenant();
    const k = t.api_key;
    expect(expectError(await post(k, { type: 'access', subject: { nif: '599000015' } }), 422, 'validation_failed').fields).toEqual([{ path: 'subject.nif', message: expect.stringContaining('natural person') }]);
    // a wrong check digit alone: invalid_nif, as on every route with a NIF
    expect(expectError(await post(k, { type: 'access', subject: { nif: '212345673' } }), 422, 'invalid_nif').fields).toEqual([{ path: 'subject.nif', message: 'fails the NIF check digit' }]);
    // with other problems: validation_failed, every one listed
    expect(expectError(await post(k, { type: 'access', subject: { nif: '212345673' }, corrections: { name: 'B' } }), 422, 'validation_failed').fields.map((f: any) => f.path)).toEqual(['subject.nif', 'corrections']);
    expect(expectError(await post(k, { type: 'access', subject: {} }), 422, 'validation_failed').fields[0].path).toBe('subject');
    expect(expectError(await post(k, { type: 'access', subject: { name: 'A' }, corrections: { name: 'B' } }), 422, 'validation_failed').fields[0].path).toBe('corrections');
    expect(expectError(await post(k, { type: 'rectification', subject: { name: 'A' } }), 422, 'validation_failed').fields[0].path).toBe('corrections');
    expect(expectError(await post(k, { type: 'access', subject: { name: 'A' }, requested_at: '2030-01-01T00:00:00Z' }), 422, 'validation_failed').fields[0].path).toBe('requested_at');
    expect(expectError(await post(k, { type: 'access', subject: { name: 'A' }, requested_at: '0001-01-01T00:00:00Z' }), 422, 'validation_failed').fields).toEqual([{ path: 'requested_at', message: expect.stringContaining('from 1900 to 2199') }]);
    expectError(await post(k, { type: 'portability', subject: { name: 'A' } }), 422, 'validation_failed');
    expectError(await h.json('GET', '/v1/gdpr/requests/dsr_x', { key: k }), 404, 'resource_not_found');
    const narrow = await h.tenant({ scopes: ['score'] });
    expectError(await post(narrow.api_key, { type: 'access', subject: { name: 'A' } }), 403, 'insufficient_scope');
    // nothing was stored by the refused calls
    expect((await h.json('GET', '/v1/gdpr/requests', { key: k })).body.data).toEqual([]);
  });

  test('the deadline is one calendar month (the last day of a shorter month)', () => {
    expect(oneMonthAfter(new Date('2026-01-31T10:00:00Z')).toISOString()).toBe('2026-02-28T10:00:00.000Z');
    expect(oneMonthAfter(new Date('2026-12-15T00:00:00Z')).toISOString()).toBe('2027-01-15T00:00:00.000Z');
  });
});
