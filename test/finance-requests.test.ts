/**
 * Money requests judged whole (an outside review of receivables finance): a field a factoring or
 * confirming request does not have is refused, not dropped (a misspelt advance rate had advanced
 * 90 % instead of 50 %, a misspelt auto_approve approved at once), and every problem of a request
 * comes back in one 422, the schema's and the invoices' own together. Nothing is stored on refusal.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { expectError, makeApp, type TestApp } from './helpers';

// the test clock reads 2026-11-22
const inv = (number: string, extra: Record<string, unknown> = {}) => ({ number, debtor_nif: '599000015', issue_date: '2026-11-02', due_date: '2027-01-21', amount_cents: 500_000, ...extra });
const SELLER = '599000031';
const NOT_A_FIELD = 'is not a field of this request';

let h: TestApp;
let key: string;
beforeAll(async () => {
  h = await makeApp({}, { workers: false });
  key = (await h.tenant()).api_key;
});
afterAll(() => h.close());
const create = (body: unknown) => h.json('POST', '/v1/factoring/operation', { key, body });
const operations = async () => (await h.json('GET', '/v1/factoring/operations?limit=100', { key })).body.data.length;

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

  test('a request without problems is created as before', async () => {
    const r = await create({ seller_nif: SELLER, modality: 'recourse', advance_rate_bps: 5000, auto_approve: false, invoices: [inv('FT 9/7')] });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ status: 'submitted', pricing: { advance_rate_bps: 5000 } });
  });

  test('a transition with a field it does not have is refused, the operation unchanged', async () => {
    const op = (await create({ seller_nif: SELLER, modality: 'recourse', invoices: [inv('FT 9/8')] })).body;
    expect(op.status).toBe('approved');
    const b = expectError(await h.json('POST', `/v1/factoring/operation/${op.operation_id}/cancel`, { key, body: { reson: 'typo' } }), 422, 'validation_failed');
    expect(b.fields).toEqual([{ path: 'reson', message: NOT_A_FIELD }]);
    expect((await h.json('GET', `/v1/factoring/operation/${op.operation_id}`, { key })).body.status).toBe('approved');
    expect((await h.json('POST', `/v1/factoring/operation/${op.operation_id}/cancel`, { key, body: { reason: 'seller withdrew' } })).body.status).toBe('cancelled');
  });
});
