/**
 * Factoring operations (issue 21): creation with a credit decision per debtor and integer-cent
 * pricing, automatic approval within limits, the lifecycle and its 409s, double assignment (CC art.
 * 584), the default sweep across replicas, events, the hash-chained audit trail, ERP-referenced
 * invoices, errors, scope, tenants and idempotency; the state machine property-tested.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { eq } from 'drizzle-orm';
import { OperationResponse } from '../src/features/factoring/model';
import { allowedActions, holdsInvoices, isTerminal, nextStatus, OPERATION_ACTIONS, OPERATION_STATUSES, type OperationStatus } from '../src/features/factoring/states';
import { daysBetween, discountCents, shareCents, sharesBps } from '../src/features/finance/money';
import { spreadForModality } from '../src/features/decision/policy';
import { expectError, suiteApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

// the test clock reads 2026-11-22
const inv = (number: string, debtor_nif: string, amount_cents: number, due_date = '2027-01-21', extra: Record<string, unknown> = {}) => ({ number, debtor_nif, issue_date: '2026-11-02', due_date, amount_cents, ...extra });
const TIER_A = '599000015';
const TIER_B = '599000023';
const TIER_E = '599000058';
const SELLER = '599000031';

const h = suiteApp();
const create = (body: unknown, k = h.key, headers: Record<string, string> = {}) => h.json('POST', '/v1/factoring/operation', { key: k, body, headers });
const act = (id: string, action: string, body: unknown = {}, k = h.key) => h.json('POST', `/v1/factoring/operation/${id}/${action}`, { key: k, body });

describe('POST /v1/factoring/operation', () => {
  test('two debtors within their limits: 201, approved at once, priced in integer cents from each debtor\u2019s decision', async () => {
    const r = await create({ seller_nif: SELLER, seller_name: 'Metalomecânica Exemplo, Lda', modality: 'recourse', contract_reference: 'CF-1', invoices: [inv('FT 1/1', TIER_A, 1_845_000, '2027-01-21', { atcud: 'JJ4F-1', debtor_name: 'Alfa, S.A.' }), inv('FT 1/2', TIER_B, 950_033, '2027-02-20')] });
    expect(r.status).toBe(201);
    expect(Value.Check(OperationResponse, r.body)).toBe(true);
    const op = r.body;
    expect(r.headers.get('location')).toBe(`/v1/factoring/operation/${op.operation_id}`);
    expect(op).toMatchObject({ status: 'approved', modality: 'recourse', currency: 'EUR', seller: { nif: SELLER, name: 'Metalomecânica Exemplo, Lda' }, contract_reference: 'CF-1', approval: { automatic: true, review_reasons: [] } });
    expect(op.allowed_actions).toEqual(['fund', 'cancel']);
    expect(op.debtors.map((d: any) => d.nif)).toEqual([TIER_A, TIER_B]);
    // the shares add up to the whole: 66.0076 % and 33.9924 % round to 6601 and 3399 (largest remainder)
    expect(op.debtors.map((d: any) => d.share_of_operation_bps)).toEqual([6601, 3399]);
    expect(sharesBps([1, 1, 1])).toEqual([3334, 3333, 3333]);
    // each debtor's decision is a real stored decision, and the price follows from its spread
    for (const d of op.debtors) {
      const dec = await h.json('GET', `/v1/decisions/${d.decision.decision_id}`, { key: h.key });
      expect(dec.status).toBe(200);
      expect(dec.body.context).toMatchObject({ operation_type: 'factoring', amount_eur: d.face_cents / 100 });
      // a recourse operation: the decision's spread where it recommends recourse, else the index's for recourse (lower)
      const expected = spreadForModality(dec.body.tier, dec.body.context.expected_term_days, 'recourse', { modality: dec.body.recommendation.modality, spreadBps: dec.body.recommendation.suggested_spread_bps });
      expect(d.decision.spread_bps).toBe(expected);
      if (dec.body.recommendation.modality !== 'recourse') expect(expected).toBeLessThan(dec.body.recommendation.suggested_spread_bps);
      expect(d.within_limit).toBe(true);
    }
    const p = op.pricing;
    expect(p.face_cents).toBe(1_845_000 + 950_033);
    expect(p.advance_rate_bps).toBe(9000);
    const base = Math.round(h.config.baseRate.valuePct * 100);
    let discount = 0;
    for (const i of op.invoices) {
      const spread = op.debtors.find((d: any) => d.nif === i.debtor_nif).decision.spread_bps;
      expect(i.days_to_due).toBe(daysBetween('2026-11-22', i.due_date));
      expect(i.advance_cents).toBe(shareCents(i.amount_cents, 9000));
      expect(i.discount_fee_cents).toBe(discountCents(i.advance_cents, base + spread, i.days_to_due));
      expect(Number.isInteger(i.discount_fee_cents)).toBe(true);
      discount += i.discount_fee_cents;
    }
    expect(p.discount_fee_cents).toBe(discount);
    expect(p.service_fee_cents).toBe(shareCents(p.face_cents, 50));
    expect(p.net_to_seller_cents).toBe(p.advance_cents - p.discount_fee_cents - p.service_fee_cents);
    expect(p.reserve_cents).toBe(p.face_cents - p.advance_cents);
    // the event, and the trail
    const events = await h.json('GET', '/v1/events?type=operation.approved', { key: h.key });
    expect(events.body.data.find((e: any) => e.data.operation_id === op.operation_id)).toMatchObject({ data: { automatic: true, face_cents: p.face_cents, net_to_seller_cents: p.net_to_seller_cents } });
    const trail = await h.json('GET', `/v1/audit/${op.operation_id}`, { key: h.key });
    expect(trail.body.verified).toBe(true);
    expect(trail.body.entries.map((e: any) => e.type)).toEqual(['operation.created', 'decision.recorded', 'decision.recorded', 'operation.approved']);
    expect(trail.body.entries[1].data).toMatchObject({ debtor_nif: TIER_A, decision_id: op.debtors[0].decision.decision_id, algorithm_version: expect.stringMatching(/^decision-/) });
  });

  test('a declined debtor leaves it submitted with the reason; the back office approves it; non-recourse prices its fee', async () => {
    const r = await create({ seller_nif: SELLER, modality: 'non_recourse', invoices: [inv('FT 2/1', TIER_E, 500_000)] });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ status: 'submitted', approval: { automatic: false, review_reasons: [expect.stringContaining(TIER_E)] } });
    expect(r.body.pricing).toMatchObject({ advance_rate_bps: 8000, service_fee_bps: 100 });
    const approved = await act(r.body.operation_id, 'approve');
    expect(approved.status).toBe(200);
    expect(approved.body.status).toBe('approved');
    const events = await h.json('GET', '/v1/events?type=operation.approved', { key: h.key });
    expect(events.body.data.find((e: any) => e.data.operation_id === r.body.operation_id).data.automatic).toBe(false);
  });

  test('the concentration limit counts the debtor\u2019s other live operations', async () => {
    const t = await h.tenant();
    const first = await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('C-1', TIER_B, 100_000)] }, t.api_key);
    const limit = first.body.debtors[0].decision.limit_cents;
    // a second operation that alone fits but with the first does not
    const second = await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('C-2', TIER_B, limit - 50_000)] }, t.api_key);
    expect(second.body.debtors[0]).toMatchObject({ other_exposure_cents: 100_000, within_limit: false });
    expect(second.body.status).toBe('submitted');
  });

  test('invoices from the tenant\u2019s ERP data by number; missing ERP fields given in the request', async () => {
    const t = await h.tenant();
    const { db, t: tables } = h.ctx.database;
    const now = h.ctx.clock.now();
    const row = (number: string, dueDate: string | null) => ({
      id: crypto.randomUUID(), tenantId: t.tenant_id, env: 'sandbox', provider: 'demo', customerReference: 'books', providerDocumentId: number, documentType: 'FT', number, atcud: `AB12-${number}`,
      issueDate: '2026-11-05', dueDate, customerNif: TIER_A, customerName: 'Alfa, S.A.', currency: 'EUR', netTotalCents: 100_000, taxTotalCents: 23_000, grossTotalCents: 123_000, status: 'N', data: {}, sourceUpdatedAt: now.toISOString(), syncedAt: now,
    });
    await db.insert(tables.invoices).values([row('E1', '2027-01-04'), row('E2', null)] as never);
    const r = await create({ seller_nif: SELLER, modality: 'recourse', invoices: [{ number: 'E1', erp: { provider: 'demo', customer_reference: 'books' } }, { number: 'E2', erp: { provider: 'demo', customer_reference: 'books' }, due_date: '2027-02-01' }] }, t.api_key);
    expect(r.status).toBe(201);
    expect(r.body.invoices).toEqual([
      expect.objectContaining({ number: 'E1', atcud: 'AB12-E1', debtor_nif: TIER_A, amount_cents: 123_000, due_date: '2027-01-04', source: 'erp:demo' }),
      expect.objectContaining({ number: 'E2', due_date: '2027-02-01', source: 'erp:demo' }),
    ]);
    expect(r.body.debtors[0].name).toBe('Alfa, S.A.');
    const missing = await create({ seller_nif: SELLER, modality: 'recourse', invoices: [{ number: 'E2', erp: { provider: 'demo', customer_reference: 'books' } }, { number: 'NOPE', erp: { provider: 'demo', customer_reference: 'books' } }] }, t.api_key);
    expect(expectError(missing, 422, 'validation_failed').fields).toEqual([
      { path: 'invoices.0.due_date', message: expect.stringContaining('not in the ERP data') },
      { path: 'invoices.1.number', message: expect.stringContaining('no invoice NOPE') },
    ]);
  });

  test('errors: every problem with its path, the seller\u2019s NIF, an unknown debtor, the body schema', async () => {
    expect(expectError(await create({ seller_nif: '599000032', modality: 'recourse', invoices: [inv('X', TIER_A, 1000)] }), 422, 'invalid_nif').fields[0].path).toBe('seller_nif');
    // an invisible character does not make a second invoice of the same number
    expect(expectError(await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('FT 2026/7', TIER_A, 1000), inv('FT 2026/7\u200b', TIER_A, 1000), inv('FT\u2060 2026/7', TIER_A, 1000)] }), 422, 'validation_failed').fields).toEqual([
      { path: 'invoices.1.number', message: 'repeats invoices.0' },
      { path: 'invoices.2.number', message: 'repeats invoices.0' },
    ]);
    // the seller's NIF failing with other problems: every one listed (it hid them)
    expect(expectError(await create({ seller_nif: '599000032', modality: 'recourse', invoices: [inv('X', TIER_A, 1000, '2026-11-10')] }), 422, 'validation_failed').fields).toEqual([
      { path: 'seller_nif', message: 'fails the NIF check digit' },
      { path: 'invoices.0.due_date', message: 'has passed: an overdue invoice cannot be assigned' },
    ]);
    // a debtor's NIF failing its check digit, alone: invalid_nif too, at its path
    expect(expectError(await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('X', TIER_A, 1000), inv('Y', '599000032', 1000)] }), 422, 'invalid_nif').fields).toEqual([{ path: 'invoices.1.debtor_nif', message: 'fails the NIF check digit' }]);
    const bad = await create({
      seller_nif: SELLER,
      modality: 'recourse',
      invoices: [inv('A', '599000032', 1000), inv('B', SELLER, 1000), { number: 'C', debtor_nif: TIER_A, issue_date: '2026-11-02', due_date: '2026-11-01', amount_cents: 10 }, inv('D', TIER_A, 10, '2026-11-20'), inv('A', TIER_A, 10), { number: 'F' }],
    });
    expect(expectError(bad, 422, 'validation_failed').fields.map((f: any) => f.path)).toEqual([
      'invoices.0.debtor_nif', 'invoices.1.debtor_nif', 'invoices.2.due_date', 'invoices.3.due_date', 'invoices.4.number',
      'invoices.5.debtor_nif', 'invoices.5.issue_date', 'invoices.5.due_date', 'invoices.5.amount_cents',
    ]);
    const unknown = await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('U1', TIER_A, 1000), inv('U2', '599000074', 1000)] });
    expect(expectError(unknown, 404, 'company_not_found').fields[0].path).toBe('invoices.1.debtor_nif');
    expectError(await create({ seller_nif: SELLER, modality: 'maybe', invoices: [inv('M', TIER_A, 1000)] }), 422, 'validation_failed');
    expectError(await create({ seller_nif: SELLER, modality: 'recourse', invoices: [] }), 422, 'validation_failed');
    expect(expectError(await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('Fl', TIER_A, 10.5)] }), 422, 'validation_failed').fields[0].path).toContain('amount_cents');
    // nothing of the refused calls was stored
    const { db, t } = h.ctx.database;
    expect((await db.select().from(t.assignedInvoices).where(eq(t.assignedInvoices.number, 'U1'))).length).toBe(0);
  });
});

describe('double assignment, lifecycle, events, audit', () => {
  test('an invoice in a live operation is 409 invoice_already_assigned naming it; once cancelled it can be assigned again', async () => {
    const first = await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('D 1/1', TIER_A, 10_000), inv('D 1/2', TIER_A, 20_000)] });
    const again = await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('D 1/9', TIER_A, 5_000), inv('D 1/2', TIER_A, 20_000)] });
    const err = expectError(again, 409, 'invoice_already_assigned');
    expect(err.fields).toEqual([{ path: 'invoices.1.number', message: expect.stringContaining(first.body.operation_id) }]);
    // the same number from another seller is another invoice
    expect((await create({ seller_nif: '599000040', modality: 'recourse', invoices: [inv('D 1/2', TIER_A, 20_000)] })).status).toBe(201);
    expectError(await act(first.body.operation_id, 'cancel'), 422, 'validation_failed');
    expect((await act(first.body.operation_id, 'cancel', { reason: 'seller withdrew' })).body).toMatchObject({ status: 'cancelled', reason: 'seller withdrew', allowed_actions: [] });
    expect((await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('D 1/2', TIER_A, 20_000)] })).status).toBe(201);
  });

  test('one invoice whatever its number\'s case and spacing; a defaulted operation still counts as the debtor\'s exposure', async () => {
    const t = await h.tenant();
    const first = await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('IK-2', TIER_A, 10_000)] }, t.api_key);
    expect(first.status).toBe(201);
    for (const number of [' IK-2', 'ik-2', 'IK-2\u00a0', 'IK-2 ']) expectError(await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv(number, TIER_A, 10_000)] }, t.api_key), 409, 'invoice_already_assigned');
    // twice in one request, spelt apart
    expect(expectError(await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('IK-7', TIER_A, 10_000), inv('ik-7', TIER_A, 10_000)] }, t.api_key), 422, 'validation_failed').fields).toEqual([{ path: 'invoices.1.number', message: 'repeats invoices.0' }]);
    // funded, then defaulted: the factor still holds the credit, and the debtor's exposure keeps it
    expect((await act(first.body.operation_id, 'fund', {}, t.api_key)).body.status).toBe('funded');
    expect((await act(first.body.operation_id, 'default', { reason: 'debtor insolvent' }, t.api_key)).body.status).toBe('defaulted');
    const next = await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('IK-3', TIER_A, 20_000)] }, t.api_key);
    expect(next.body.debtors[0].other_exposure_cents).toBe(10_000);
    // written off (with its reason): the loss is taken, the invoice and the exposure released
    expectError(await act(first.body.operation_id, 'write_off', {}, t.api_key), 422, 'validation_failed');
    const off = (await act(first.body.operation_id, 'write_off', { reason: 'insolvency closed, nothing to recover' }, t.api_key)).body;
    expect(off).toMatchObject({ status: 'written_off', allowed_actions: [] });
    const after = await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('IK-4', TIER_A, 20_000)] }, t.api_key);
    expect(after.body.debtors[0].other_exposure_cents).toBe(20_000); // IK-3 only
    // a defaulted operation whose debtor pays after all is settled (a recovery)
    const late = (await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('IK-5', TIER_A, 10_000)] }, t.api_key)).body;
    await act(late.operation_id, 'fund', {}, t.api_key);
    await act(late.operation_id, 'default', { reason: 'unpaid' }, t.api_key);
    const recovered = (await act(late.operation_id, 'settle', { collected_cents: 10_000 }, t.api_key)).body;
    expect(recovered).toMatchObject({ status: 'settled', settlement: { collected_cents: 10_000, shortfall_cents: 0 } });
    expect(recovered.history.map((x: any) => x.status)).toEqual(['submitted', 'approved', 'funded', 'defaulted', 'settled']);
  });

  test('ERP invoices: a credit note or an invoice-receipt is no receivable; the books\' company alone assigns them; the books\' dates and amounts stand', async () => {
    const t = await h.tenant();
    const { db, t: tables } = h.ctx.database;
    const now = h.ctx.clock.now();
    const row = (number: string, documentType: string, dueDate: string | null) => ({
      id: crypto.randomUUID(), tenantId: t.tenant_id, env: 'sandbox', provider: 'demo', customerReference: 'own-books', providerDocumentId: number, documentType, number, atcud: null,
      issueDate: '2026-11-05', dueDate, customerNif: TIER_A, customerName: 'Alfa, S.A.', currency: 'EUR', netTotalCents: 100_000, taxTotalCents: 23_000, grossTotalCents: 123_000, status: 'N', data: {}, sourceUpdatedAt: now.toISOString(), syncedAt: now,
    });
    await db.insert(tables.invoices).values([row('FT 2026/1', 'FT', '2027-01-04'), row('NC 2026/5', 'NC', null), row('FR 2026/3', 'FR', null), row('FT 2026/2', 'FT', '2026-11-12'), row('FT\u00a02026/9', 'FT', '2027-01-04')] as never);
    // the books are SELLER's (the connection says so)
    await db.insert(tables.erpConnections).values({ id: crypto.randomUUID(), tenantId: t.tenant_id, env: 'sandbox', provider: 'demo', customerReference: 'own-books', status: 'active', returnUrl: 'https://example.pt/done', companyNif: SELLER, createdAt: now, updatedAt: now } as never);
    const erp = { provider: 'demo', customer_reference: 'own-books' };
    const bad = await create({ seller_nif: SELLER, modality: 'recourse', invoices: [{ number: 'NC 2026/5', erp, due_date: '2027-01-10' }, { number: 'FR 2026/3', erp, due_date: '2027-01-10' }, { number: 'FT 2026/2', erp, due_date: '2027-03-01' }] }, t.api_key);
    const fields = expectError(bad, 422, 'validation_failed').fields;
    expect(fields).toContainEqual({ path: 'invoices.0.number', message: expect.stringContaining('a credit note') });
    expect(fields).toContainEqual({ path: 'invoices.1.number', message: expect.stringContaining('an invoice-receipt') });
    expect(fields).toContainEqual({ path: 'invoices.2.due_date', message: expect.stringContaining('differs from the ERP data (2026-11-12)') });
    // another seller cannot assign these books' invoices
    const other = expectError(await create({ seller_nif: '599000040', modality: 'recourse', invoices: [{ number: 'FT 2026/1', erp }] }, t.api_key), 422, 'validation_failed');
    expect(other.fields).toEqual([{ path: 'invoices.0.erp', message: expect.stringContaining(`company ${SELLER}'s`) }]);
    // the number as typed by a person: without case, runs of spaces as one; stored as the books print it
    const typed = await create({ seller_nif: SELLER, modality: 'recourse', invoices: [{ number: ' ft  2026/1', erp }] }, t.api_key);
    expect(typed.status).toBe(201);
    expect(typed.body.invoices[0]).toMatchObject({ number: 'FT 2026/1', source: 'erp:demo' });
    // and then held by that operation, however it is typed
    expect(expectError(await create({ seller_nif: SELLER, modality: 'recourse', invoices: [{ number: 'FT 2026/1', erp }] }, t.api_key), 409, 'invoice_already_assigned').status).toBe(409);
    expectError(await create({ seller_nif: SELLER, modality: 'recourse', invoices: [{ number: 'FT2026/1', erp }] }, t.api_key), 422, 'validation_failed');
    // books that print a no-break space in the number: found by the number typed with a space
    const nbsp = await create({ seller_nif: SELLER, modality: 'recourse', invoices: [{ number: 'FT 2026/9', erp }] }, t.api_key);
    expect(nbsp.status).toBe(201);
    expect(nbsp.body.invoices[0]).toMatchObject({ number: 'FT\u00a02026/9', source: 'erp:demo' });
  });

  test('priced for its own modality: without recourse on a debtor the decision would take with recourse costs more', async () => {
    const t = await h.tenant();
    const withRecourse = (await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('M-1', TIER_E, 10_000)] }, t.api_key)).body;
    const without = (await create({ seller_nif: SELLER, modality: 'non_recourse', invoices: [inv('M-2', TIER_E, 10_000)] }, t.api_key)).body;
    const dec = (await h.json('GET', `/v1/decisions/${without.debtors[0].decision.decision_id}`, { key: t.api_key })).body;
    expect(dec.recommendation.modality).toBe('recourse');
    expect(withRecourse.debtors[0].decision.spread_bps).toBe(dec.recommendation.suggested_spread_bps);
    expect(without.debtors[0].decision.spread_bps).toBeGreaterThan(withRecourse.debtors[0].decision.spread_bps);
    // an A debtor: the decision's modality is non_recourse already, and its spread stands; with
    // recourse (the seller answers too) the operation costs less
    const a = (await create({ seller_nif: SELLER, modality: 'non_recourse', invoices: [inv('M-3', TIER_A, 10_000)] }, t.api_key)).body;
    const decA = (await h.json('GET', `/v1/decisions/${a.debtors[0].decision.decision_id}`, { key: t.api_key })).body;
    expect(decA.recommendation.modality).toBe('non_recourse');
    expect(a.debtors[0].decision.spread_bps).toBe(decA.recommendation.suggested_spread_bps);
    const aRecourse = (await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('M-4', TIER_A, 10_000)] }, t.api_key)).body;
    expect(aRecourse.debtors[0].decision.spread_bps).toBeLessThan(a.debtors[0].decision.spread_bps);
  });

  test('a due date more than a year away (or a year after the invoice) is refused: factoring takes short-term receivables', async () => {
    const r = await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('Y-1', TIER_A, 10_000, '2029-12-31'), { ...inv('Y-2', TIER_A, 10_000, '2027-06-01'), issue_date: '2000-01-01' }, inv('Y-3', TIER_A, 10_000, '2027-11-22')] });
    expect(expectError(r, 422, 'validation_failed').fields).toEqual([
      { path: 'invoices.0.due_date', message: expect.stringContaining('more than 365 days after today') },
      { path: 'invoices.1.due_date', message: expect.stringContaining('more than 365 days after the issue date') },
      { path: 'invoices.2.due_date', message: expect.stringContaining('more than 365 days after') },
    ]);
  });

  test('concurrent submissions of one invoice: exactly one holds it', async () => {
    const t = await h.tenant();
    const results = await Promise.all(Array.from({ length: 4 }, () => create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('RACE-1', TIER_A, 10_000)] }, t.api_key)));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) expectError(r, 409, 'invoice_already_assigned');
  });

  test('fund reprices from its date; settle pays the reserve and emits settlement.completed; invalid transitions are 409 naming what applies', async () => {
    // a tenant of its own: its key is used at a later clock, which the rate limiter remembers
    const t = await h.tenant();
    const k = t.api_key;
    const op = (await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('L 1/1', TIER_A, 1_000_000, '2027-01-21')] }, k)).body;
    const conflict = expectError(await act(op.operation_id, 'settle', {}, k), 409, 'invalid_transition');
    expect(conflict.message).toContain('approved');
    expect(conflict.message).toContain('fund, cancel');
    h.clock.advance(10 * 86_400_000);
    try {
      const funded = (await act(op.operation_id, 'fund', {}, k)).body;
      expect(funded.status).toBe('funded');
      expect(funded.funding.pricing.priced_at).toBe('2026-12-02');
      expect(funded.funding.pricing.discount_fee_cents).toBeLessThan(op.pricing.discount_fee_cents);
      expectError(await act(op.operation_id, 'settle', { collected_cents: 1_000_001 }, k), 422, 'validation_failed');
      expectError(await act(op.operation_id, 'fund', { collected_cents: 5 }, k), 409, 'invalid_transition');
      const settled = (await act(op.operation_id, 'settle', { collected_cents: 950_000 }, k)).body;
      const fp = funded.funding.pricing;
      // the fees were taken at funding: the reserve is what was collected over the advance, and the
      // seller gets, in all, what was collected less the fees once
      expect(settled).toMatchObject({ status: 'settled', allowed_actions: [], settlement: { collected_cents: 950_000, shortfall_cents: 50_000, reserve_released_cents: 950_000 - fp.advance_cents } });
      expect(fp.net_to_seller_cents + settled.settlement.reserve_released_cents).toBe(950_000 - fp.discount_fee_cents - fp.service_fee_cents);
      expect(settled.history.map((x: any) => x.status)).toEqual(['submitted', 'approved', 'funded', 'settled']);
      expectError(await act(op.operation_id, 'default', { reason: 'x' }, k), 409, 'invalid_transition');
      const events = await h.json('GET', '/v1/events?type=settlement.completed', { key: k });
      expect(events.body.data.find((e: any) => e.data.operation_id === op.operation_id)).toMatchObject({ data: { kind: 'factoring', collected_cents: 950_000 } });
      // a settled operation released its invoice
      expect((await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('L 1/1', TIER_A, 1_000_000, '2027-01-21')] }, k)).status).toBe(201);
      const trail = (await h.json('GET', `/v1/audit/${op.operation_id}`, { key: k })).body;
      expect(trail.entries.map((e: any) => e.type).slice(-2)).toEqual(['operation.funded', 'operation.settled']);
      expect(trail.entries.at(-1).request_id).toMatch(/^req_/);
      expect(trail.verified).toBe(true);
    } finally {
      h.clock.advance(-10 * 86_400_000);
    }
  });

  test('an approved operation whose invoice has fallen due is not funded (no zero-discount advance): 409, and fund is no longer offered', async () => {
    const t = await h.tenant();
    const k = t.api_key;
    const op = (await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('O 1/1', TIER_A, 100_000, '2026-12-01'), inv('O 1/2', TIER_A, 100_000, '2027-01-21')] }, k)).body;
    expect(op.allowed_actions).toEqual(['fund', 'cancel']);
    // an invoice assigned before its due date is still fundable on it (a new one due today is not assigned)
    const tomorrow = (await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('O 2/1', TIER_A, 100_000, '2026-11-23')] }, k)).body;
    h.clock.advance(86_400_000); // 2026-11-23: O 2/1 falls due today
    expect((await act(tomorrow.operation_id, 'fund', {}, k)).body.status).toBe('funded');
    h.clock.advance(9 * 86_400_000); // 2026-12-02: O 1/1 fell due yesterday
    try {
      const refused = expectError(await act(op.operation_id, 'fund', {}, k), 409, 'invalid_transition');
      expect(refused.message).toContain('invoice O 1/1 fell due on 2026-12-01');
      expect(refused.message).not.toContain('O 1/2');
      const now = (await h.json('GET', `/v1/factoring/operation/${op.operation_id}`, { key: k })).body;
      expect(now).toMatchObject({ status: 'approved', allowed_actions: ['cancel'], funding: null });
      expect((await act(op.operation_id, 'cancel', { reason: 'overdue before funding' }, k)).body.status).toBe('cancelled');
    } finally {
      h.clock.advance(-10 * 86_400_000);
    }
  });

  test('the audit trail detects tampering; other tenants and wrong ids get 404', async () => {
    const op = (await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('T 1/1', TIER_A, 10_000)] })).body;
    const { db, t } = h.ctx.database;
    await db.update(t.auditEntries).set({ data: { seller_nif: SELLER, face_cents: 1 } }).where(eq(t.auditEntries.subjectId, op.operation_id)).returning();
    const trail = (await h.json('GET', `/v1/audit/${op.operation_id}`, { key: h.key })).body;
    expect(trail).toMatchObject({ verified: false, broken_at_seq: 1 });
    const other = await h.tenant();
    expectError(await h.json('GET', `/v1/audit/${op.operation_id}`, { key: other.api_key }), 404, 'resource_not_found');
    expectError(await h.json('GET', `/v1/factoring/operation/${op.operation_id}`, { key: other.api_key }), 404, 'resource_not_found');
    expectError(await act(op.operation_id, 'fund', {}, other.api_key), 404, 'resource_not_found');
    expectError(await h.json('GET', '/v1/audit/nope', { key: h.key }), 404, 'resource_not_found');
    expectError(await h.json('GET', '/v1/factoring/operation/fop_x', { key: h.key }), 404, 'resource_not_found');
    expectError(await act(op.operation_id, 'explode'), 422, 'validation_failed');
  });

  test('the default sweep: funded and unpaid 90 days after the last due date; two replicas at once flag it once', async () => {
    const t = await h.tenant();
    const op = (await create({ seller_nif: SELLER, modality: 'non_recourse', invoices: [inv('S 1/1', TIER_A, 10_000, '2026-12-01')] }, t.api_key)).body;
    await act(op.operation_id, 'fund', {}, t.api_key);
    const factoring = (await import('../src/features/factoring')).factoringService;
    const { decisionService } = await import('../src/features/decision');
    const { scoreService } = await import('../src/features/score');
    const { auditTrail } = await import('../src/features/audit');
    const replica = () => factoring(h.ctx, decisionService(h.ctx, scoreService(h.ctx)), auditTrail(h.ctx));
    expect(await replica().flagDefaults()).toBe(0); // not yet due
    h.clock.advance(100 * 86_400_000);
    try {
      await Promise.all([replica().flagDefaults(), replica().flagDefaults()]);
      const after = (await h.json('GET', `/v1/factoring/operation/${op.operation_id}`, { key: t.api_key })).body;
      expect(after).toMatchObject({ status: 'defaulted', default: { automatic: true, outstanding_cents: 10_000 } });
      const flagged = (await h.json('GET', '/v1/events?type=default.flagged', { key: t.api_key })).body.data;
      expect(flagged.length).toBe(1);
      expect(flagged[0].data).toMatchObject({ operation_id: op.operation_id, modality: 'non_recourse', debtors: [TIER_A] });
      // a defaulted operation keeps its invoices
      expectError(await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('S 1/1', TIER_A, 10_000, '2027-06-01')] }, t.api_key), 409, 'invoice_already_assigned');
    } finally {
      h.clock.advance(-100 * 86_400_000);
    }
  });

  test("an erased tenant's operations are kept as they are: the sweep does not default them, nor add an event or an audit entry", async () => {
    const t = await h.tenant();
    const op = (await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('E 1/1', TIER_A, 10_000, '2026-12-01')] }, t.api_key)).body;
    await act(op.operation_id, 'fund', {}, t.api_key);
    const live = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'live', name: 'live' });
    expect((await h.json('POST', '/v1/admin/gdpr/erase', { key: live.api_key, body: { confirmation: 'ERASE-MY-DATA' } })).status).toBe(200);
    const { db, t: tables } = h.ctx.database;
    const audit = async () => (await db.select().from(tables.auditEntries).where(eq(tables.auditEntries.tenantId, t.tenant_id))).length;
    const eventsOf = async () => (await db.select().from(tables.events).where(eq(tables.events.tenantId, t.tenant_id))).length;
    const [auditBefore, eventsBefore] = [await audit(), await eventsOf()];
    const factoring = (await import('../src/features/factoring')).factoringService;
    const { decisionService } = await import('../src/features/decision');
    const { scoreService } = await import('../src/features/score');
    const { auditTrail } = await import('../src/features/audit');
    h.clock.advance(100 * 86_400_000);
    try {
      await factoring(h.ctx, decisionService(h.ctx, scoreService(h.ctx)), auditTrail(h.ctx)).flagDefaults();
      const [row] = await db.select().from(tables.financeOperations).where(eq(tables.financeOperations.id, op.operation_id));
      expect(row!.status).toBe('funded');
      expect([await audit(), await eventsOf()]).toEqual([auditBefore, eventsBefore]);
    } finally {
      h.clock.advance(-100 * 86_400_000);
    }
  });
});

describe('reading, scope, tenants, idempotency', () => {
  test('list by status, seller and debtor, with cursor pages; two tenants apart', async () => {
    const t = await h.tenant();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv(`P-${i}`, i === 2 ? TIER_B : TIER_A, 10_000)] }, t.api_key)).body.operation_id);
    const page1 = await h.json('GET', '/v1/factoring/operations?limit=2', { key: t.api_key });
    expect(page1.body.data.map((o: any) => o.operation_id)).toEqual([ids[2], ids[1]]);
    const page2 = await h.json('GET', `/v1/factoring/operations?limit=2&cursor=${page1.body.next_cursor}`, { key: t.api_key });
    expect(page2.body).toMatchObject({ data: [expect.objectContaining({ operation_id: ids[0] })], next_cursor: null });
    expect((await h.json('GET', `/v1/factoring/operations?debtor_nif=${TIER_B}`, { key: t.api_key })).body.data.map((o: any) => o.operation_id)).toEqual([ids[2]]);
    expect((await h.json('GET', '/v1/factoring/operations?status=funded', { key: t.api_key })).body.data).toEqual([]);
    expect((await h.json('GET', `/v1/factoring/operations?seller_nif=${TIER_A}`, { key: t.api_key })).body.data).toEqual([]);
    const other = await h.tenant();
    expect((await h.json('GET', '/v1/factoring/operations', { key: other.api_key })).body.data).toEqual([]);
    // another tenant may hold the same invoice: assignments are per tenant (each factor its own book)
    expect((await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('P-0', TIER_A, 10_000)] }, other.api_key)).status).toBe(201);
  });

  test('scope finance; Idempotency-Key replays the same operation and assigns once', async () => {
    const narrow = await h.tenant({ scopes: ['score'] });
    expectError(await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('Q', TIER_A, 1000)] }, narrow.api_key), 403, 'insufficient_scope');
    expectError(await h.json('GET', '/v1/factoring/operations', { key: narrow.api_key }), 403, 'insufficient_scope');
    const body = { seller_nif: SELLER, modality: 'recourse', invoices: [inv('IDEM-1', TIER_A, 1000)] };
    const a = await create(body, h.key, { 'idempotency-key': 'fop-1' });
    const b = await create(body, h.key, { 'idempotency-key': 'fop-1' });
    expect(b.status).toBe(201);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.body.operation_id).toBe(a.body.operation_id);
    expect(b.headers.get('location')).toBe(`/v1/factoring/operation/${a.body.operation_id}`);
    expect(b.headers.get('location')).toBe(a.headers.get('location'));
  });
});

describe('the state machine', () => {
  test('random action sequences never leave the statuses; terminal statuses have no exits; invoices held exactly while live or defaulted', () => {
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let run = 0; run < 2000; run++) {
      let s: OperationStatus = 'submitted';
      const path: OperationStatus[] = [s];
      for (let step = 0; step < 8; step++) {
        const action = OPERATION_ACTIONS[rand(OPERATION_ACTIONS.length)]!;
        const next = nextStatus(s, action);
        if (next === null) {
          expect(allowedActions(s)).not.toContain(action);
          continue;
        }
        expect(OPERATION_STATUSES).toContain(next);
        expect(allowedActions(s)).toContain(action);
        s = next;
        path.push(s);
      }
      // funded is reached only through approved; defaulted only through funded; settled through
      // funded or defaulted (a recovery); written off only from defaulted
      for (let i = 1; i < path.length; i++) {
        if (path[i] === 'funded') expect(path[i - 1]).toBe('approved');
        if (path[i] === 'defaulted') expect(path[i - 1]).toBe('funded');
        if (path[i] === 'settled') expect(['funded', 'defaulted']).toContain(path[i - 1]);
        if (path[i] === 'written_off') expect(path[i - 1]).toBe('defaulted');
      }
    }
    for (const s of ['rejected', 'settled', 'written_off', 'cancelled'] as const) expect(isTerminal(s)).toBe(true);
    expect(allowedActions('defaulted')).toEqual(['settle', 'write_off']);
    expect(OPERATION_STATUSES.filter(holdsInvoices)).toEqual(['submitted', 'approved', 'funded', 'defaulted']);
  });
});
