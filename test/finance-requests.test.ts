/**
 * Money requests judged whole (an outside review of receivables finance): a field a factoring or
 * confirming request does not have is refused, not dropped (a misspelt advance rate had advanced
 * 90 % instead of 50 %, a misspelt auto_approve approved at once), and every problem of a request
 * comes back in one 422, the schema's and the invoices' own together. Nothing is stored on refusal.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { expectError, suiteApp } from './helpers';

// the test clock reads 2026-11-22
const inv = (number: string, extra: Record<string, unknown> = {}) => ({ number, debtor_nif: '599000015', issue_date: '2026-11-02', due_date: '2027-01-21', amount_cents: 500_000, ...extra });
const SELLER = '599000031';
const NOT_A_FIELD = 'is not a field of this request';

const h = suiteApp();
const create = (body: unknown) => h.json('POST', '/v1/factoring/operation', { key: h.key, body });
const operations = async () => (await h.json('GET', '/v1/factoring/operations?limit=100', { key: h.key })).body.data.length;

describe('POST /v1/factoring/operation', () => {
  test.each([
    [{ advance_rate: 5000 }, 'advance_rate'],
    [{ auto_aprove: false }, 'auto_aprove'],
    [{ currency: 'USD' }, 'currency'],
    [{ constructor: 1 }, 'constructor'],
  ])('a field it does not have (%j) is 422 on its path; nothing is created', async (extra, path) => {
    const before = await operations();
    const b = expectError(await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('FT 9/1')], ...extra }), 422, 'validation_failed');
    expect(b.fields).toEqual([{ path, message: NOT_A_FIELD }]);
    expect(await operations()).toBe(before);
  });

  test("an invoice's or its erp reference's unknown field is refused at its path", async () => {
    const b = expectError(await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('FT 9/2', { discount: 10 }), { number: 'FT 9/3', erp: { provider: 'saft', customer_reference: 'x', company: 'y' } }] }), 422, 'validation_failed');
    expect(b.fields).toEqual([
      { path: 'invoices.0.discount', message: NOT_A_FIELD },
      { path: 'invoices.1.erp.company', message: NOT_A_FIELD },
    ]);
  });

  test("every problem at once: the schema's and the invoices' own, each at its path", async () => {
    const before = await operations();
    const b = expectError(
      await create({
        seller_nif: SELLER,
        modality: 'recourse',
        invoices: [inv('FT 9/4', { amount_cents: -1, due_date: '2026-11-10' }), inv('FT 9/5', { issue_date: 'x' }), inv('FT 9/6', { debtor_nif: SELLER, issue_date: '2026-12-01' }), inv('FT 9/4')],
      }),
      422,
      'validation_failed',
    );
    expect(b.fields).toEqual([
      { path: 'invoices.0.amount_cents', message: expect.stringContaining('at least 1') },
      { path: 'invoices.1.issue_date', message: expect.stringContaining('YYYY-MM-DD') },
      { path: 'invoices.0.due_date', message: 'has passed: an overdue invoice cannot be assigned' },
      { path: 'invoices.1.issue_date', message: expect.anything() }, // (one message per path: the schema's)
      { path: 'invoices.2.debtor_nif', message: 'is the seller: a company cannot be its own debtor' },
      { path: 'invoices.2.issue_date', message: 'is in the future' },
      { path: 'invoices.3.number', message: 'repeats invoices.0' },
    ].filter((f, i, all) => all.findIndex((g) => g.path === f.path) === i));
    expect(await operations()).toBe(before);
  });

  test('past the cap of listed schema problems, a later invoice with wrongly typed fields is still judged by its types (422, not a 500)', async () => {
    const filler = Array.from({ length: 130 }, () => ({ number: 1, debtor_nif: 1 }));
    for (const odd of [{ number: 'FT 1', erp: { provider: ['a'], customer_reference: {} } }, { number: 'FT 1', erp: 'x' }, { number: ['x'], debtor_nif: '599000015' }, { number: 'FT 1', amount_cents: 'many', issue_date: 7 }]) {
      const r = await create({ seller_nif: SELLER, modality: 'recourse', invoices: [...filler, ...Array.from({ length: 20 }, () => odd)] });
      expect(r.status).toBe(422);
      expect(r.body.code).toBe('validation_failed');
    }
  });

  test('an invoice due today is refused as confirming refuses one (nothing to advance), with its own message', async () => {
    const b = expectError(await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('FT 9/9', { due_date: '2026-11-22' })] }), 422, 'validation_failed');
    expect(b.fields).toEqual([{ path: 'invoices.0.due_date', message: 'is today: there is nothing to advance on an invoice due today' }]);
  });

  test('a request without problems is created as before', async () => {
    const r = await create({ seller_nif: SELLER, modality: 'recourse', advance_rate_bps: 5000, auto_approve: false, invoices: [inv('FT 9/7')] });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ status: 'submitted', pricing: { advance_rate_bps: 5000 } });
  });

  test('a transition with a field it does not have is refused, the operation unchanged', async () => {
    const op = (await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('FT 9/8')] })).body;
    expect(op.status).toBe('approved');
    const b = expectError(await h.json('POST', `/v1/factoring/operation/${op.operation_id}/cancel`, { key: h.key, body: { reson: 'typo' } }), 422, 'validation_failed');
    expect(b.fields).toEqual([{ path: 'reson', message: NOT_A_FIELD }]);
    expect((await h.json('GET', `/v1/factoring/operation/${op.operation_id}`, { key: h.key })).body.status).toBe('approved');
    expect((await h.json('POST', `/v1/factoring/operation/${op.operation_id}/cancel`, { key: h.key, body: { reason: 'seller withdrew' } })).body.status).toBe('cancelled');
  });
});

describe('confirming', () => {
  const ANCHOR = '599000015';
  const SUPPLIER = '599000031';
  const IBAN = 'PT50000201231234567890154';
  const payable = (number: string, extra: Record<string, unknown> = {}) => ({ supplier_nif: SUPPLIER, number, issue_date: '2026-11-02', due_date: '2027-01-21', amount_cents: 100_000, ...extra });
  let programmeId = '';
  beforeAll(async () => {
    const p = await h.json('POST', '/v1/confirming/anchor', { key: h.key, body: { anchor_nif: ANCHOR, limit_cents: 10_000_000, payment_terms_days: 90 } });
    programmeId = p.body.programme_id;
    expect((await h.json('POST', `/v1/confirming/anchor/${programmeId}/suppliers`, { key: h.key, body: { supplier_nif: SUPPLIER, name: 'Metalomecânica Exemplo, Lda', iban: IBAN } })).status).toBe(201);
  });
  const payables = async () => (await h.json('GET', `/v1/confirming/anchor/${programmeId}/payables?limit=100`, { key: h.key })).body.data.length;

  test('a programme, supplier or payable field the request does not have is 422 on its path; nothing made', async () => {
    const programmes = async () => (await h.json('GET', '/v1/confirming/anchors?limit=100', { key: h.key })).body.data.length;
    const before = await programmes();
    expect(expectError(await h.json('POST', '/v1/confirming/anchor', { key: h.key, body: { anchor_nif: ANCHOR, limit_cents: 1_000_000, payment_terms_days: 90, funding_spread_bps: 10 } }), 422, 'validation_failed').fields).toEqual([{ path: 'funding_spread_bps', message: NOT_A_FIELD }]);
    expect(await programmes()).toBe(before);
    expect(expectError(await h.json('POST', `/v1/confirming/anchor/${programmeId}/suppliers`, { key: h.key, body: { supplier_nif: '599000023', name: 'X', iban: IBAN, iban_holder: 'Y' } }), 422, 'validation_failed').fields).toEqual([{ path: 'iban_holder', message: NOT_A_FIELD }]);
    const b = expectError(await h.json('POST', `/v1/confirming/anchor/${programmeId}/payables`, { key: h.key, body: { payables: [payable('P 1', { discount_bps: 0 })] } }), 422, 'validation_failed');
    expect(b.fields).toEqual([{ path: 'payables.0.discount_bps', message: NOT_A_FIELD }]);
    expect(await payables()).toBe(0);
  });

  test("every problem of an upload at once: the schema's and the payables' own", async () => {
    const b = expectError(
      await h.json('POST', `/v1/confirming/anchor/${programmeId}/payables`, { key: h.key, body: { payables: [payable('P 2', { due_date: '2026-11-22' }), payable('P 3', { supplier_nif: '599000023' }), payable('P 4', { amount_cents: 0 })] } }),
      422,
      'validation_failed',
    );
    expect(b.fields).toEqual([
      { path: 'payables.2.amount_cents', message: 'must be at least 1' },
      { path: 'payables.0.due_date', message: 'has passed or is today: nothing to pay early' },
      { path: 'payables.1.supplier_nif', message: 'is not a supplier of this programme (POST …/suppliers first)' },
    ]);
    expect(await payables()).toBe(0);
  });

  test('past the cap of listed schema problems, a later payable with wrongly typed fields is still judged by its types (422, not a 500)', async () => {
    const filler = Array.from({ length: 52 }, () => ({}));
    for (const odd of [{ supplier_nif: SUPPLIER, number: ['x'], issue_date: '2026-11-02', due_date: '2027-01-21', amount_cents: 1 }, { supplier_nif: 599000031, number: 7, issue_date: {}, due_date: null, amount_cents: 1 }]) {
      const r = await h.json('POST', `/v1/confirming/anchor/${programmeId}/payables`, { key: h.key, body: { payables: [...filler, odd] } });
      expect(r.status).toBe(422);
      expect(r.body.code).toBe('validation_failed');
    }
    expect(await payables()).toBe(0);
  });

  test("a malformed programme id with a bad body: the programme is not read under it; 404 as for any id that cannot exist", async () => {
    const r = await h.json('POST', '/v1/confirming/anchor/not-an-id/payables', { key: h.key, body: { payables: [{}] } });
    expect([404, 422]).toContain(r.status);
    expect(r.status).not.toBe(500);
  });

  test('a payable transition with a field it does not have is refused, the payable unchanged', async () => {
    const [p] = (await h.json('POST', `/v1/confirming/anchor/${programmeId}/payables`, { key: h.key, body: { payables: [payable('P 5')] } })).body.data;
    expect(expectError(await h.json('POST', `/v1/confirming/payables/${p.payable_id}/cancel`, { key: h.key, body: { reson: 'typo' } }), 422, 'validation_failed').fields).toEqual([{ path: 'reson', message: NOT_A_FIELD }]);
    expect((await h.json('GET', `/v1/confirming/payables/${p.payable_id}`, { key: h.key })).body.status).toBe('approved');
  });
});

describe('the published document says so', () => {
  test('the money requests are closed at every depth in /openapi.json (additionalProperties: false)', async () => {
    const d = (await h.json('GET', '/openapi.json')).body;
    const resolve = (s: any): any => (s.$ref ? resolve(d.components.schemas[s.$ref.split('/').pop()]) : s);
    const body = (path: string) => resolve(d.paths[path].post.requestBody.content['application/json'].schema);
    const op = body('/v1/factoring/operation');
    expect([op.additionalProperties, op.properties.invoices.items.additionalProperties, op.properties.invoices.items.properties.erp.additionalProperties]).toEqual([false, false, false]);
    const cover = body('/v1/insurance/submit');
    expect([cover.additionalProperties, cover.properties.terms.additionalProperties]).toEqual([false, false]);
    expect(body('/v1/confirming/anchor/{id}/payables').properties.payables.items.additionalProperties).toBe(false);
  });
});
