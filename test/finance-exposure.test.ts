/**
 * A company's credit limit across receivables finance under concurrency: factoring operations and
 * confirming programmes sent at the same moment cannot each fit one limit alone (the exposure is
 * read and committed under the company's lock, in one transaction).
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { expectError, makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000);

// the test clock reads 2026-11-22
const SELLER = '518072460';
const inv = (number: string, debtor_nif: string, amount_cents: number) => ({ number, debtor_nif, issue_date: '2026-11-02', due_date: '2027-01-15', amount_cents });

let h: TestApp;
beforeAll(async () => {
  h = await makeApp({}, { workers: false });
});
afterAll(() => h.close());

const limitOf = async (key: string, nif: string, amountEur: number, type: 'factoring' | 'confirming', term = 74) =>
  Math.round((await h.json('POST', '/v1/decision', { key, body: { nif, context: { operation_type: type, amount_eur: amountEur, expected_term_days: term } } })).body.recommendation.limit_eur * 100);

describe("a debtor's limit, factoring operations sent at once", () => {
  test('one is approved within the limit; the others wait for review with the first one counted', async () => {
    const { api_key: key } = await h.tenant();
    const debtor = '599000031';
    const each = 5_000_000;
    const limit = await limitOf(key, debtor, each / 100, 'factoring');
    expect(limit).toBeGreaterThanOrEqual(each);
    expect(limit).toBeLessThan(2 * each); // one fits, two do not
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => h.json('POST', '/v1/factoring/operation', { key, body: { seller_nif: SELLER, modality: 'recourse', invoices: [inv(`FT R/${i}`, debtor, each)] } })));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 201));
    const approved = answers.filter((a) => a.body.status === 'approved');
    expect(approved.length).toBe(1);
    expect(approved[0]!.body.debtors[0]).toMatchObject({ other_exposure_cents: 0, within_limit: true });
    for (const a of answers.filter((x) => x.body.status !== 'approved')) {
      expect(a.body.status).toBe('submitted');
      expect(a.body.debtors[0].within_limit).toBe(false);
      expect(a.body.debtors[0].other_exposure_cents).toBeGreaterThanOrEqual(each);
      expect(a.body.approval.review_reasons[0]).toContain(`debtor ${debtor}`);
    }
  });
});

describe("an anchor's limit, confirming programmes sent at once", () => {
  test('as many as fit are created; the rest are 409 limit_exceeded', async () => {
    const { api_key: key } = await h.tenant();
    const anchor = '599000015';
    const each = 60_000_000;
    const limit = await limitOf(key, anchor, each / 100, 'confirming', 90);
    const fit = Math.floor(limit / each);
    expect(fit).toBeGreaterThanOrEqual(1);
    const answers = await Promise.all(Array.from({ length: 8 }, () => h.json('POST', '/v1/confirming/anchor', { key, body: { anchor_nif: anchor, anchor_name: 'Anchor', limit_cents: each, payment_terms_days: 90 } })));
    expect(answers.filter((a) => a.status === 201).length).toBe(fit);
    for (const a of answers.filter((x) => x.status !== 201)) expectError(a, 409, 'limit_exceeded');
  });

  test('a factoring operation and a programme on one company at the same moment: only one fits the limit', async () => {
    const { api_key: key } = await h.tenant();
    const company = '599000023';
    const each = 20_000_000;
    const limit = await limitOf(key, company, each / 100, 'factoring');
    expect(limit).toBeGreaterThanOrEqual(each);
    expect(limit).toBeLessThan(2 * each);
    const [op, programme] = await Promise.all([
      h.json('POST', '/v1/factoring/operation', { key, body: { seller_nif: SELLER, modality: 'recourse', invoices: [inv('FT X/1', company, each)] } }),
      h.json('POST', '/v1/confirming/anchor', { key, body: { anchor_nif: company, limit_cents: each, payment_terms_days: 60 } }),
    ]);
    expect(op.status).toBe(201);
    const opWithin = op.body.status === 'approved';
    const programmeCreated = programme.status === 201;
    // exactly one of the two commits the limit
    expect(opWithin !== programmeCreated).toBe(true);
    if (!programmeCreated) expectError(programme, 409, 'limit_exceeded');
    else expect(op.body.debtors[0]).toMatchObject({ within_limit: false, other_exposure_cents: each });
  });
});
