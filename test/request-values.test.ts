/**
 * Values a schema's types accept but a demanding caller expects refused, each at its field's path:
 * fractions of a cent, an invoice due before it was issued, a NIF failing its check digit, repeated
 * ids and list names (found by an outside review of every route's input).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { expectError, makeApp, type TestApp } from './helpers';
import { loadConfiguredLists } from '../src/features/aml';

let h: TestApp;
let key: string;
beforeAll(async () => {
  h = await makeApp({}, { workers: false });
  key = (await h.tenant()).api_key;
  await loadConfiguredLists(h.ctx); // the UN list shipped with the service
});
afterAll(() => h.close());
const post = (path: string, body: unknown) => h.json('POST', path, { key, body });

const tx = (extra: Record<string, unknown> = {}) => ({ id: 't1', date: '2026-03-02', amount: 123, description: 'TRF FT 2026/17', ...extra });
const invoice = (extra: Record<string, unknown> = {}) => ({ id: 'i1', number: 'FT 2026/17', customer_name: 'X', issue_date: '2026-02-01', due_date: '2026-03-01', amount_open: 123, ...extra });

describe('POST /v1/reconcile', () => {
  test('amounts in fractions of a cent are 422 on each, not rounded and matched', async () => {
    const b = expectError(await post('/v1/reconcile', { transactions: [tx({ amount: 123.004 })], invoices: [invoice({ amount_open: 123.001 })] }), 422, 'validation_failed');
    expect(b.fields).toEqual([
      { path: 'transactions.0.amount', message: 'must be whole cents (at most two decimals)' },
      { path: 'invoices.0.amount_open', message: 'must be whole cents (at most two decimals)' },
    ]);
    expect(expectError(await post('/v1/reconcile', { transactions: [tx()], invoices: [invoice()], fee_tolerance: 1.005 }), 422, 'validation_failed').fields).toEqual([{ path: 'fee_tolerance', message: 'must be whole cents (at most two decimals)' }]);
    // beside a structural refusal, and with an item's problem: both at once
    expect(expectError(await post('/v1/reconcile', { transactions: [], fee_tolerance: 0.001 }), 422, 'validation_failed').fields.map((f: { path: string }) => f.path)).toEqual(['invoices', 'fee_tolerance']);
    expect(expectError(await post('/v1/reconcile', { transactions: [tx({ amount: 1.001 })], invoices: [invoice()], fee_tolerance: 1.005 }), 422, 'validation_failed').fields.map((f: { path: string }) => f.path)).toEqual(['transactions.0.amount', 'fee_tolerance']);
    // whole cents of binary floating point are whole cents
    expect((await post('/v1/reconcile', { transactions: [tx({ amount: 0.07 })], invoices: [invoice({ amount_open: 0.07 })] })).status).toBe(200);
  });

  test('an invoice due before its issue date, and a customer NIF failing its check digit, are 422 on their paths', async () => {
    const b = expectError(await post('/v1/reconcile', { transactions: [tx()], invoices: [invoice({ issue_date: '2026-04-01', due_date: '2026-03-01', customer_nif: '599000016' })] }), 422, 'validation_failed');
    expect(b.fields).toEqual([
      { path: 'invoices.0.due_date', message: 'is before the issue date (2026-04-01)' },
      { path: 'invoices.0.customer_nif', message: expect.stringContaining('check digit') },
    ]);
    // the NIF alone: invalid_nif, as on every route
    const nif = expectError(await post('/v1/reconcile', { transactions: [tx()], invoices: [invoice({ customer_nif: '599000016' })] }), 422, 'invalid_nif');
    expect(nif.fields.map((f: { path: string }) => f.path)).toEqual(['invoices.0.customer_nif']);
    expect((await post('/v1/reconcile', { transactions: [tx()], invoices: [invoice({ customer_nif: '599000015', due_date: null })] })).status).toBe(200);
  });
});

describe('PATCH /v1/admin/credit-policy', () => {
  test('a maximum in fractions of a cent is 422, and the policy is unchanged', async () => {
    const before = (await h.json('GET', '/v1/admin/credit-policy', { key })).body;
    const b = expectError(await h.json('PATCH', '/v1/admin/credit-policy', { key, body: { max_amount_eur: 1000.005 } }), 422, 'validation_failed');
    expect(b.fields).toEqual([{ path: 'max_amount_eur', message: 'must be whole cents (at most two decimals)' }]);
    expect((await h.json('GET', '/v1/admin/credit-policy', { key })).body).toEqual(before);
    expect((await h.json('PATCH', '/v1/admin/credit-policy', { key, body: { max_amount_eur: 1000.05 } })).body.max_amount_eur).toBe(1000.05);
  });
});

describe('POST /v1/aml/screen', () => {
  test('a NIF failing its check digit is 422 invalid_nif, not recorded; a list named twice is 422 on lists', async () => {
    const nif = expectError(await post('/v1/aml/screen', { name: 'Maria Silva', nif: '599000016' }), 422, 'invalid_nif');
    expect(nif.fields.map((f: { path: string }) => f.path)).toEqual(['nif']);
    expect((await h.json('GET', '/v1/aml/screenings', { key })).body.data ?? []).toEqual([]);
    const lists = expectError(await post('/v1/aml/screen', { name: 'Maria Silva', lists: ['un', 'un'] }), 422, 'validation_failed');
    expect(lists.fields.map((f: { path: string }) => f.path)).toEqual(['lists']);
    expect((await post('/v1/aml/screen', { name: 'Maria Silva', nif: '599000015', lists: ['un'] })).status).toBe(200);
  });
});

describe('POST /v1/basel/capital', () => {
  test('two lines under one id are 422 on the second (the answer echoes ids to tell lines apart)', async () => {
    const b = expectError(await post('/v1/basel/capital', { exposures: [{ id: 'a', pd: 0.01, ead_eur: 1000 }, { id: 'b', pd: 0.01, ead_eur: 1000 }, { id: 'a', pd: 0.02, ead_eur: 500 }] }), 422, 'validation_failed');
    expect(b.fields).toEqual([{ path: 'exposures.2.id', message: 'repeats exposures.0' }]);
    // lines without ids are not compared
    expect((await post('/v1/basel/capital', { exposures: [{ pd: 0.01, ead_eur: 1000 }, { pd: 0.01, ead_eur: 1000 }] })).status).toBe(200);
  });
});

describe('list queries', () => {
  test('every problem at once, a number beside others included; enumerations worded by their values', async () => {
    const b = expectError(await h.json('GET', '/v1/factoring/operations?status=zzz&limit=0', { key }), 422, 'validation_failed');
    expect(b.fields).toEqual([
      { path: 'query.status', message: expect.stringContaining('must be one of: "submitted"') },
      { path: 'query.limit', message: 'must be an integer from 1 to 200' },
    ]);
    const p = expectError(await h.json('GET', '/v1/confirming/anchor/cfp_00000000-0000-7000-8000-000000000000/payables?status=zzz&supplier_nif=599000016&limit=2.5', { key }), 422, 'validation_failed');
    expect(p.fields.map((f: { path: string }) => f.path)).toEqual(['query.status', 'query.supplier_nif', 'query.limit']);
    expect(p.fields[0].message).toBe('must be one of: "approved", "accepted", "funded", "settled", "defaulted", "written_off", "cancelled"');
    // a term not among the buckets beside another problem: both named
    const spreads = expectError(await h.json('GET', '/v1/index/spreads?tier=Z&term_days=45', { key }), 422, 'validation_failed');
    expect(spreads.fields.map((f: { path: string }) => f.path).sort()).toEqual(['query.term_days', 'query.tier']);
    // a limit out of range after a valid text parameter, or beside a NIF (nine digits, "out of range" of 1–200 too), is named as itself
    expect(expectError(await h.json('GET', '/v1/factoring/operations?status=approved&limit=0', { key }), 422, 'validation_failed').fields).toEqual([{ path: 'query.limit', message: 'must be an integer from 1 to 200' }]);
    for (const limit of ['0', '201'])
      expect(expectError(await h.json('GET', `/v1/esg/assessments?nif=500100144&limit=${limit}`, { key }), 422, 'validation_failed').fields).toEqual([{ path: 'query.limit', message: 'must be an integer from 1 to 200' }]);
  });
});
