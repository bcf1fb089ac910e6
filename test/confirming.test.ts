/**
 * Confirming (issue 21): programmes priced from the anchor's decision, suppliers, payables with
 * offers in integer cents, the programme limit, double assignment across factoring and confirming,
 * the lifecycle and its 409s, events, audit, the default sweep, the embed link; errors, scope,
 * tenants, idempotency; the state machine property-tested.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { PayableView, ProgrammeView } from '../src/features/confirming/model';
import { offerFor } from '../src/features/confirming/service';
import { nextPayableStatus, PAYABLE_ACTIONS, PAYABLE_STATUSES, payableActions, type PayableStatus } from '../src/features/confirming/states';
import { discountCents } from '../src/features/finance/money';
import { expectError, makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

const ANCHOR = '599000015';
const SUPPLIER = '599000031';
const IBAN = 'PT50000201231234567890154';
let h: TestApp;
beforeAll(async () => {
  h = await makeApp({}, { workers: false });
});
afterAll(() => h.close());

async function programme(key: string, extra: Record<string, unknown> = {}) {
  const r = await h.json('POST', '/v1/confirming/anchor', { key, body: { anchor_nif: ANCHOR, anchor_name: 'Distribuidora Alfa, S.A.', limit_cents: 10_000_000, payment_terms_days: 90, ...extra } });
  expect(r.status).toBe(201);
  const s = await h.json('POST', `/v1/confirming/anchor/${r.body.programme_id}/suppliers`, { key, body: { supplier_nif: SUPPLIER, name: 'Metalomecânica Exemplo, Lda', iban: IBAN } });
  expect(s.status).toBe(201);
  return r.body;
}
const payable = (number: string, amount_cents: number, due_date = '2027-01-21') => ({ supplier_nif: SUPPLIER, number, issue_date: '2026-11-02', due_date, amount_cents });
const act = (key: string, id: string, action: string, body: unknown = {}) => h.json('POST', `/v1/confirming/payables/${id}/${action}`, { key, body });

describe('programmes, suppliers, payables', () => {
  test('a programme priced from the anchor\u2019s decision; offers = amount × (base + spread) × days / 360 in cents', async () => {
    const t = await h.tenant();
    const p = await programme(t.api_key);
    expect(Value.Check(ProgrammeView, p)).toBe(true);
    const dec = await h.json('GET', `/v1/decisions/${p.decision_id}`, { key: t.api_key });
    expect(dec.body.context).toMatchObject({ operation_type: 'confirming', amount_eur: 100_000, expected_term_days: 90 });
    expect(p.funding_spread_bps).toBe(dec.body.recommendation.suggested_spread_bps);
    expect(p).toMatchObject({ limit_cents: 10_000_000, used_cents: 0, available_cents: 10_000_000, base_rate_bps: Math.round(h.config.baseRate.valuePct * 100) });
    const up = await h.json('POST', `/v1/confirming/anchor/${p.programme_id}/payables`, { key: t.api_key, body: { payables: [payable('FT 9/1', 1_234_567), payable('FT 9/2', 800_000, '2027-02-20')] } });
    expect(up.status).toBe(201);
    for (const x of up.body.data) {
      expect(Value.Check(PayableView, x)).toBe(true);
      const rate = p.base_rate_bps + p.funding_spread_bps;
      const days = Math.round((Date.parse(x.due_date) - Date.parse('2026-11-22')) / 86_400_000);
      expect(x.offer).toEqual({ rate_bps: rate, days, discount_cents: discountCents(x.amount_cents, rate, days), net_cents: x.amount_cents - discountCents(x.amount_cents, rate, days), computed_on: '2026-11-22' });
    }
    expect((await h.json('GET', `/v1/confirming/anchor/${p.programme_id}`, { key: t.api_key })).body).toMatchObject({ used_cents: 2_034_567, available_cents: 10_000_000 - 2_034_567 });
    expect((await h.json('GET', `/v1/confirming/anchor/${p.programme_id}/suppliers`, { key: t.api_key })).body.data).toEqual([expect.objectContaining({ supplier_nif: SUPPLIER, iban: IBAN })]);
  });

  test('the limit, the anchor\u2019s decision, unknown suppliers, past due dates, double assignment (also against factoring): all or nothing', async () => {
    const t = await h.tenant();
    expect(expectError(await h.json('POST', '/v1/confirming/anchor', { key: t.api_key, body: { anchor_nif: '599000058', limit_cents: 10_000_000, payment_terms_days: 90 } }), 409, 'limit_exceeded').fields[0].path).toBe('limit_cents');
    expectError(await h.json('POST', '/v1/confirming/anchor', { key: t.api_key, body: { anchor_nif: ANCHOR, limit_cents: 10_000_000, payment_terms_days: 90, frame_ancestors: ['http://insecure.example'] } }), 422, 'validation_failed');
    const p = await programme(t.api_key, { limit_cents: 1_000_000 });
    const url = `/v1/confirming/anchor/${p.programme_id}/payables`;
    expectError(await h.json('POST', url, { key: t.api_key, body: { payables: [payable('L1', 600_000), payable('L2', 500_000)] } }), 409, 'limit_exceeded');
    const bad = await h.json('POST', url, { key: t.api_key, body: { payables: [{ ...payable('U1', 1), supplier_nif: '599000023' }, payable('U2', 1, '2026-11-20'), payable('U3', 1), payable('U3', 1)] } });
    expect(expectError(bad, 422, 'validation_failed').fields.map((f: any) => f.path)).toEqual(['payables.0.supplier_nif', 'payables.1.due_date', 'payables.3.number']);
    expect((await h.json('GET', url, { key: t.api_key })).body.data).toEqual([]);
    // an invoice held by a factoring operation of the same seller cannot be a payable, and back
    await h.json('POST', '/v1/factoring/operation', { key: t.api_key, body: { seller_nif: SUPPLIER, modality: 'recourse', invoices: [{ number: 'SHARED-1', debtor_nif: ANCHOR, issue_date: '2026-11-02', due_date: '2027-01-21', amount_cents: 10_000 }] } });
    const clash = await h.json('POST', url, { key: t.api_key, body: { payables: [payable('OK-1', 10_000), payable('SHARED-1', 10_000)] } });
    expect(expectError(clash, 409, 'invoice_already_assigned').fields).toEqual([{ path: 'payables.1.number', message: expect.stringContaining('fop_') }]);
    await h.json('POST', url, { key: t.api_key, body: { payables: [payable('CF-1', 10_000)] } });
    expectError(await h.json('POST', '/v1/factoring/operation', { key: t.api_key, body: { seller_nif: SUPPLIER, modality: 'recourse', invoices: [{ number: 'CF-1', debtor_nif: ANCHOR, issue_date: '2026-11-02', due_date: '2027-01-21', amount_cents: 10_000 }] } }), 409, 'invoice_already_assigned');
    expectError(await h.json('POST', `/v1/confirming/anchor/${p.programme_id}/suppliers`, { key: t.api_key, body: { supplier_nif: SUPPLIER, name: 'x', iban: IBAN } }), 409, 'already_exists');
    expectError(await h.json('POST', `/v1/confirming/anchor/${p.programme_id}/suppliers`, { key: t.api_key, body: { supplier_nif: '599000023', name: 'x', iban: 'PT50000201231234567890155' } }), 422, 'invalid_iban');
    // the anchor is not its own supplier; an e-mail says what it must be
    expect(expectError(await h.json('POST', `/v1/confirming/anchor/${p.programme_id}/suppliers`, { key: t.api_key, body: { supplier_nif: ANCHOR, name: 'x', iban: IBAN } }), 422, 'validation_failed').fields).toEqual([{ path: 'supplier_nif', message: expect.stringContaining("the programme's anchor") }]);
    expect(expectError(await h.json('POST', `/v1/confirming/anchor/${p.programme_id}/suppliers`, { key: t.api_key, body: { supplier_nif: '599000040', name: 'x', iban: IBAN, email: 'nope' } }), 422, 'validation_failed').fields).toEqual([{ path: 'email', message: 'must be an e-mail address' }]);
    // a NIF failing its check digit is listed with the payables' other problems; alone, invalid_nif
    const mixed = await h.json('POST', url, { key: t.api_key, body: { payables: [{ ...payable('N1', 1), supplier_nif: '599000030' }, payable('N2', 1, '2026-11-20')] } });
    expect(expectError(mixed, 422, 'validation_failed').fields.map((f: any) => f.path)).toEqual(['payables.0.supplier_nif', 'payables.1.due_date']);
    expectError(await h.json('POST', url, { key: t.api_key, body: { payables: [{ ...payable('N1', 1), supplier_nif: '599000030' }] } }), 422, 'invalid_nif');
  });

  test('accept fixes the day\u2019s offer; fund; settle emits settlement.completed; 409s name what applies; cancel releases the invoice', async () => {
    const t = await h.tenant();
    const k = t.api_key;
    const p = await programme(k);
    const [a, b] = (await h.json('POST', `/v1/confirming/anchor/${p.programme_id}/payables`, { key: k, body: { payables: [payable('S1', 500_000), payable('S2', 300_000)] } })).body.data;
    expect(expectError(await act(k, a.payable_id, 'fund'), 409, 'invalid_transition').message).toContain('accept, settle, cancel');
    const accepted = (await act(k, a.payable_id, 'accept')).body;
    expect(accepted).toMatchObject({ status: 'accepted', offer: null, accepted_offer: a.offer, funding: null });
    expect(a.funding).toBeNull();
    const funded = (await act(k, a.payable_id, 'fund')).body;
    expect(funded.status).toBe('funded');
    // what was paid to the supplier, and when: the accepted offer's net, at the funded step
    expect(funded.funding).toEqual({ funded_at: funded.history.at(-1).at, paid_cents: a.offer.net_cents, discount_cents: a.offer.discount_cents });
    expect(funded.funding.paid_cents + funded.funding.discount_cents).toBe(500_000);
    const settled = (await act(k, a.payable_id, 'settle')).body;
    expect(settled.funding).toEqual(funded.funding); // kept after settlement
    expect(settled.history.map((x: any) => x.status)).toEqual(['approved', 'accepted', 'funded', 'settled']);
    const ev = (await h.json('GET', '/v1/events?type=settlement.completed', { key: k })).body.data;
    expect(ev[0].data).toMatchObject({ payable_id: a.payable_id, kind: 'confirming', early_payment: true, amount_cents: 500_000 });
    expectError(await act(k, b.payable_id, 'cancel'), 422, 'validation_failed');
    expect((await act(k, b.payable_id, 'cancel', { reason: 'credit note' })).body.status).toBe('cancelled');
    // the cancelled payable released its invoice: it may be factored now; the programme keeps its record
    expect((await h.json('POST', '/v1/factoring/operation', { key: k, body: { seller_nif: SUPPLIER, modality: 'recourse', invoices: [{ number: 'S2', debtor_nif: ANCHOR, issue_date: '2026-11-02', due_date: '2027-01-21', amount_cents: 300_000 }] } })).status).toBe(201);
    expect(expectError(await h.json('POST', `/v1/confirming/anchor/${p.programme_id}/payables`, { key: k, body: { payables: [payable('S2', 300_000)] } }), 409, 'already_exists').fields[0].message).toContain('cancelled');
    // spelt in lower case with a space more, it is the same invoice
    expect(expectError(await h.json('POST', `/v1/confirming/anchor/${p.programme_id}/payables`, { key: k, body: { payables: [payable(' s2', 300_000)] } }), 409, 'already_exists').fields[0].message).toContain('cancelled');
    const trail = (await h.json('GET', `/v1/audit/${a.payable_id}`, { key: k })).body;
    expect(trail.verified).toBe(true);
    expect(trail.entries.map((e: any) => e.type)).toEqual(['payable.approved', 'payable.accepted', 'payable.funded', 'payable.settled']);
    expect((await h.json('GET', `/v1/audit/${p.programme_id}`, { key: k })).body.entries.map((e: any) => e.type)).toContain('payable.funded');
    expect((await h.json('GET', `/v1/confirming/anchor/${p.programme_id}/payables?status=cancelled`, { key: k })).body.data.length).toBe(1);
  });

  test('no early payment on or after the due date: the offer ends, accept is 409, an accepted one unfunded by then is not funded; the portal says so', async () => {
    const t = await h.tenant();
    const k = t.api_key;
    const p = await programme(k);
    const [soon, accepted, later] = (await h.json('POST', `/v1/confirming/anchor/${p.programme_id}/payables`, { key: k, body: { payables: [payable('M1', 100_000, '2026-11-25'), payable('M2', 100_000, '2026-11-25'), payable('M3', 100_000, '2027-01-21')] } })).body.data;
    expect(soon.allowed_actions).toEqual(['accept', 'settle', 'cancel']);
    expect((await act(k, accepted.payable_id, 'accept')).body.status).toBe('accepted');
    h.clock.advance(3 * 86_400_000); // 2026-11-25: the due date of M1 and M2
    try {
      const onDue = (await h.json('GET', `/v1/confirming/payables/${soon.payable_id}`, { key: k })).body;
      expect(onDue).toMatchObject({ status: 'approved', offer: null, allowed_actions: ['settle', 'cancel'] });
      expect(expectError(await act(k, soon.payable_id, 'accept'), 409, 'invalid_transition').message).toContain('only before the due date');
      // accepted, and funded on the due date at the latest
      expect((await h.json('GET', `/v1/confirming/payables/${accepted.payable_id}`, { key: k })).body.allowed_actions).toEqual(['fund', 'cancel']);
      h.clock.advance(86_400_000);
      expect((await h.json('GET', `/v1/confirming/payables/${accepted.payable_id}`, { key: k })).body.allowed_actions).toEqual(['cancel']);
      expect(expectError(await act(k, accepted.payable_id, 'fund'), 409, 'invalid_transition').message).toContain('fell due on 2026-11-25 unfunded');
      expect((await h.json('GET', `/v1/confirming/payables/${later.payable_id}`, { key: k })).body.offer.days).toBe(56);
      // the supplier's page: no accept button for M1, which is paid at maturity
      const link = (await h.json('GET', `/v1/supplier-portal/embed?programme_id=${p.programme_id}&supplier_nif=${SUPPLIER}`, { key: k })).body;
      const page = await (await h.call('GET', new URL(link.url).pathname + new URL(link.url).search)).text();
      const row = (number: string) => page.slice(page.indexOf(`>${number}</th>`), page.indexOf('</tr>', page.indexOf(`>${number}</th>`)));
      expect(row('M1')).toContain('A pagar no vencimento');
      expect(row('M1')).not.toContain('<form');
      expect(row('M3')).toContain('<form');
    } finally {
      h.clock.advance(-4 * 86_400_000);
    }
  });

  test('the default sweep: a funded payable unpaid 90 days after its due date, once across replicas; default.flagged', async () => {
    const t = await h.tenant();
    const k = t.api_key;
    const p = await programme(k);
    const [x] = (await h.json('POST', `/v1/confirming/anchor/${p.programme_id}/payables`, { key: k, body: { payables: [payable('D1', 100_000, '2026-12-01')] } })).body.data;
    await act(k, x.payable_id, 'accept');
    await act(k, x.payable_id, 'fund');
    const { confirmingService } = await import('../src/features/confirming');
    const { decisionService } = await import('../src/features/decision');
    const { scoreService } = await import('../src/features/score');
    const { auditTrail } = await import('../src/features/audit');
    const replica = () => confirmingService(h.ctx, decisionService(h.ctx, scoreService(h.ctx)), auditTrail(h.ctx));
    expect(await replica().flagDefaults()).toBe(0);
    h.clock.advance(100 * 86_400_000);
    try {
      const counts = await Promise.all([replica().flagDefaults(), replica().flagDefaults()]);
      expect(counts.reduce((a, b) => a + b, 0)).toBe(1);
      expect((await h.json('GET', `/v1/confirming/payables/${x.payable_id}`, { key: k })).body.status).toBe('defaulted');
      const ev = (await h.json('GET', '/v1/events?type=default.flagged', { key: k })).body.data;
      expect(ev.length).toBe(1);
      expect(ev[0].data).toMatchObject({ payable_id: x.payable_id, automatic: true, kind: 'confirming' });
      // the anchor still owes a defaulted payable: it keeps using the programme's limit, until
      // it is written off (or paid: settle)
      expect((await h.json('GET', `/v1/confirming/anchor/${p.programme_id}`, { key: k })).body).toMatchObject({ used_cents: 100_000 });
      expectError(await act(k, x.payable_id, 'write_off'), 422, 'validation_failed');
      expect((await act(k, x.payable_id, 'write_off', { reason: 'anchor insolvent' })).body).toMatchObject({ status: 'written_off', allowed_actions: [] });
      expect((await h.json('GET', `/v1/confirming/anchor/${p.programme_id}`, { key: k })).body).toMatchObject({ used_cents: 0 });
    } finally {
      h.clock.advance(-100 * 86_400_000);
    }
  });

  test("an erased tenant's funded payables are kept as they are: the sweep does not default them", async () => {
    const t = await h.tenant();
    const k = t.api_key;
    const p = await programme(k);
    const [x] = (await h.json('POST', `/v1/confirming/anchor/${p.programme_id}/payables`, { key: k, body: { payables: [payable('E1', 100_000, '2026-12-01')] } })).body.data;
    await act(k, x.payable_id, 'accept');
    await act(k, x.payable_id, 'fund');
    const live = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'live', name: 'live' });
    expect((await h.json('POST', '/v1/admin/gdpr/erase', { key: live.api_key, body: { confirmation: 'ERASE-MY-DATA' } })).status).toBe(200);
    const { confirmingService } = await import('../src/features/confirming');
    const { decisionService } = await import('../src/features/decision');
    const { scoreService } = await import('../src/features/score');
    const { auditTrail } = await import('../src/features/audit');
    const { eq } = await import('drizzle-orm');
    const { db, t: tables } = h.ctx.database;
    h.clock.advance(100 * 86_400_000);
    try {
      expect(await confirmingService(h.ctx, decisionService(h.ctx, scoreService(h.ctx)), auditTrail(h.ctx)).flagDefaults()).toBe(0);
      const rows = await db.select().from(tables.confirmingPayables).where(eq(tables.confirmingPayables.id, x.payable_id));
      expect(rows.map((r) => r.status)).toEqual(rows.length ? ['funded'] : []);
      expect((await db.select().from(tables.events).where(eq(tables.events.tenantId, t.tenant_id))).filter((e) => e.type === 'default.flagged')).toEqual([]);
    } finally {
      h.clock.advance(-100 * 86_400_000);
    }
  });

  test('one limit per anchor across products: a second programme gets what the first leaves; factoring on the anchor counts its programmes', async () => {
    const t = await h.tenant();
    const first = await programme(t.api_key); // 10 000 000
    const dec = (await h.json('GET', `/v1/decisions/${first.decision_id}`, { key: t.api_key })).body;
    const max = Math.round(dec.recommendation.limit_eur * 100);
    const left = max - 10_000_000;
    const tooMuch = await h.json('POST', '/v1/confirming/anchor', { key: t.api_key, body: { anchor_nif: ANCHOR, limit_cents: left + 100, payment_terms_days: 90 } });
    expect(expectError(tooMuch, 409, 'limit_exceeded').fields).toEqual([{ path: 'limit_cents', message: `at most ${left}` }]);
    expect(tooMuch.body.message).toContain('committed in other programmes');
    expect((await h.json('POST', '/v1/confirming/anchor', { key: t.api_key, body: { anchor_nif: ANCHOR, limit_cents: left, payment_terms_days: 90 } })).status).toBe(201);
    // the anchor as a factoring debtor: its programmes' limits are the tenant's exposure to it
    const op = await h.json('POST', '/v1/factoring/operation', { key: t.api_key, body: { seller_nif: SUPPLIER, modality: 'recourse', invoices: [{ number: 'X-1', debtor_nif: ANCHOR, issue_date: '2026-11-02', due_date: '2027-01-21', amount_cents: 10_000 }] } });
    const debtor = op.body.debtors[0];
    expect(debtor.other_exposure_cents).toBe(max);
    expect(debtor.within_limit).toBe(max + 10_000 <= debtor.decision.limit_cents);
  });

  test('a payable due beyond the programme\'s payment terms (and a month of grace) is refused, not priced at them', async () => {
    const t = await h.tenant();
    const p = await programme(t.api_key); // 90 days
    const url = `/v1/confirming/anchor/${p.programme_id}/payables`;
    // issued 2026-11-02: 120 days later is 2027-03-02
    const far = await h.json('POST', url, { key: t.api_key, body: { payables: [payable('T1', 10_000, '2027-03-03'), payable('T2', 10_000, '2028-12-31')] } });
    expect(expectError(far, 422, 'validation_failed').fields).toEqual([
      { path: 'payables.0.due_date', message: expect.stringContaining('payment terms (90 days') },
      { path: 'payables.1.due_date', message: expect.stringContaining('payment terms (90 days') },
    ]);
    // an invoice issued in the future (its terms would run from then): refused
    const future = await h.json('POST', url, { key: t.api_key, body: { payables: [{ ...payable('T4', 10_000, '2027-12-25'), issue_date: '2027-11-20' }] } });
    expect(expectError(future, 422, 'validation_failed').fields).toEqual([{ path: 'payables.0.issue_date', message: expect.stringContaining('in the future') }]);
    const ok = await h.json('POST', url, { key: t.api_key, body: { payables: [payable('T3', 10_000, '2027-03-02')] } });
    expect(ok.status).toBe(201);
    expect(ok.body.data[0].offer.net_cents).toBeGreaterThan(0);
  });

  test('scope, tenants, Idempotency-Key, the embed link', async () => {
    const t = await h.tenant();
    const p = await programme(t.api_key);
    const narrow = await h.tenant({ scopes: ['score'] });
    expectError(await h.json('POST', '/v1/confirming/anchor', { key: narrow.api_key, body: { anchor_nif: ANCHOR, limit_cents: 1_000_000, payment_terms_days: 30 } }), 403, 'insufficient_scope');
    const other = await h.tenant();
    expectError(await h.json('GET', `/v1/confirming/anchor/${p.programme_id}`, { key: other.api_key }), 404, 'resource_not_found');
    expectError(await h.json('POST', `/v1/confirming/anchor/${p.programme_id}/payables`, { key: other.api_key, body: { payables: [payable('X', 1)] } }), 404, 'resource_not_found');
    const body = { payables: [payable('I1', 1000)] };
    const a = await h.json('POST', `/v1/confirming/anchor/${p.programme_id}/payables`, { key: t.api_key, body, headers: { 'idempotency-key': 'up-1' } });
    const b = await h.json('POST', `/v1/confirming/anchor/${p.programme_id}/payables`, { key: t.api_key, body, headers: { 'idempotency-key': 'up-1' } });
    expect(b.body.data[0].payable_id).toBe(a.body.data[0].payable_id);
    const link = await h.json('GET', `/v1/supplier-portal/embed?programme_id=${p.programme_id}&supplier_nif=${SUPPLIER}`, { key: t.api_key });
    expect(link.body).toMatchObject({ url: expect.stringContaining('/portal/confirming?token='), expires_at: new Date(h.clock.now().getTime() + 15 * 60_000).toISOString() });
    expect(expectError(await h.json('GET', `/v1/supplier-portal/embed?programme_id=${p.programme_id}&supplier_nif=599000023`, { key: t.api_key }), 404, 'resource_not_found').fields[0].path).toBe('query.supplier_nif');
    expectError(await h.json('GET', `/v1/supplier-portal/embed?programme_id=${p.programme_id}&supplier_nif=${SUPPLIER}`, { key: other.api_key }), 404, 'resource_not_found');
  });
});

describe('the payable state machine', () => {
  test('random action sequences stay in the statuses; early payment only after acceptance; terminal statuses have no exits', () => {
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let run = 0; run < 2000; run++) {
      let s: PayableStatus = 'approved';
      const path: PayableStatus[] = [s];
      for (let i = 0; i < 8; i++) {
        const action = PAYABLE_ACTIONS[rand(PAYABLE_ACTIONS.length)]!;
        const next = nextPayableStatus(s, action);
        expect(next === null).toBe(!payableActions(s).includes(action));
        if (next) {
          expect(PAYABLE_STATUSES).toContain(next);
          path.push((s = next));
        }
      }
      for (let i = 1; i < path.length; i++) {
        if (path[i] === 'funded') expect(path[i - 1]).toBe('accepted');
        if (path[i] === 'defaulted') expect(path[i - 1]).toBe('funded');
        if (path[i] === 'written_off') expect(path[i - 1]).toBe('defaulted');
      }
    }
    for (const s of ['settled', 'written_off', 'cancelled'] as const) expect(payableActions(s)).toEqual([]);
    expect(payableActions('defaulted')).toEqual(['settle', 'write_off']);
    expect(offerFor(1_000_000, '2027-01-21', 300, '2027-01-21')).toMatchObject({ days: 0, discount_cents: 0, net_cents: 1_000_000 });
  });
});
