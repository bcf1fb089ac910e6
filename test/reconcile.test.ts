/**
 * POST /v1/reconcile (issue 20): the rules on hand-made cases, precision and recall on a labelled
 * set built from the demo ERP data with noise added (fees, compacted numbers, references dropped),
 * determinism, and the route: inline data, the tenant's stored data, errors, scope, isolation.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { demoInvoices, demoTransactions } from '../src/features/erp/demo-data';
import { reconcile, samePayer, type BankTransaction, type OpenInvoice } from '../src/features/reconcile/engine';
import { mulberry32 } from '../src/lib/prng';
import { connectSandboxErp, expectError, makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

const inv = (id: string, number: string, amount: number, name = 'Metalúrgica do Vouga, Lda.', issue = '2026-02-01', due = '2026-03-03', atcud: string | null = null): OpenInvoice => ({
  id, number, atcud, customer_name: name, issue_date: issue, due_date: due, amount_open_cents: amount,
});
const tx = (id: string, amount: number, description: string, counterparty: string | null = 'METALURGICA DO VOUGA', date = '2026-03-02'): BankTransaction => ({ id, date, amount_cents: amount, description, counterparty });

describe('rules', () => {
  test('reference (spaced, compact, ATCUD), partial and split payments, several invoices in one payment', () => {
    const r = reconcile(
      [
        tx('t1', 12300, 'TRF FT 2026/17 METALURGICA DO VOUGA'),
        tx('t2', 5000, 'PAGAMENTO FT2026/18'),
        tx('t3', 7300, 'TRF FT 2026/18 2/2 METALURGICA'),
        tx('t4', 4000, 'TRF ABCD1234-19 METALURGICA'),
        tx('t5', 30000, 'TRF FT 2026/20 FT 2026/21'),
      ],
      [inv('i17', 'FT 2026/17', 12300), inv('i18', 'FT 2026/18', 12300), inv('i19', 'FT 2026/19', 4000, undefined, undefined, undefined, 'ABCD1234-19'), inv('i20', 'FT 2026/20', 10000), inv('i21', 'FT 2026/21', 20000)],
    );
    const by = (t: string) => r.matches.find((m) => m.transaction_ids.includes(t))!;
    expect(by('t1')).toMatchObject({ invoice_ids: ['i17'], rule: 'reference', confidence: 0.99 });
    expect(by('t2')).toMatchObject({ invoice_ids: ['i18'], rule: 'partial' });
    expect(by('t3')).toMatchObject({ invoice_ids: ['i18'], rule: 'reference' });
    expect(by('t4')).toMatchObject({ invoice_ids: ['i19'], rule: 'reference' });
    expect(by('t5')).toMatchObject({ invoice_ids: ['i20', 'i21'], rule: 'combination' });
    expect(r.unmatched_invoices).toEqual([]);
    expect(r.partially_paid_invoices).toEqual([]); // i18 was paid in two parts: settled
    expect(r.summary).toMatchObject({ transactions: 5, matched_transactions: 5, match_rate: 1 });
  });

  test("numbers of any SAF-T type code (the producer's own: 1T, 11T, 1TR) as printed, CODE SERIES/N; a partial payment's rest is reported", () => {
    const r = reconcile(
      [tx('t1', 10000, 'RECIBO 1T 1/6'), tx('t2', 5000, 'PAG 11T 2024/0003 VOUGA'), tx('t3', 4000, 'TRF FT A/9'), tx('t4', 2500, 'REF:1TR B / 4')],
      [inv('a', '1T 1/6', 10000), inv('b', '1T 1/7', 10000), inv('c', '11T 2024/3', 5000), inv('d', 'FT A/9', 10000), inv('e', '1TR B/4', 2500)],
    );
    const by = (t: string) => r.matches.find((m) => m.transaction_ids.includes(t))!;
    expect(by('t1')).toMatchObject({ invoice_ids: ['a'], rule: 'reference', confidence: 0.99 });
    expect(by('t2')).toMatchObject({ invoice_ids: ['c'], rule: 'reference' });
    expect(by('t3')).toMatchObject({ invoice_ids: ['d'], rule: 'partial' });
    expect(by('t4')).toMatchObject({ invoice_ids: ['e'], rule: 'reference' });
    expect(r.unmatched_invoices).toEqual(['b']);
    expect(r.partially_paid_invoices).toEqual([{ invoice_id: 'd', paid_cents: 4000, remaining_cents: 6000 }]);
    // a prefix glued by - or . to the number, and two numbers joined by -
    const glued = reconcile(
      [tx('g1', 12300, 'PAG-FT 2026/123'), tx('g2', 12400, 'TRF.FT2026/124'), tx('g3', 20000, 'FT A/12-FT A/13')],
      [inv('x', 'FT 2026/123', 12300), inv('y', 'FT 2026/124', 12400), inv('p', 'FT A/12', 10000), inv('q', 'FT A/13', 10000)],
    );
    expect(glued.matches.map((m) => [m.transaction_ids[0], m.invoice_ids, m.rule])).toEqual([
      ['g1', ['x'], 'reference'],
      ['g2', ['y'], 'reference'],
      ['g3', ['p', 'q'], 'combination'],
    ]);
    // a receipt's own number printed before the invoice's ("PGT 1T1/1") is not invoice 1T 1/1
    const receipt = reconcile([tx('r1', 700_000, 'RECIBO PGT 1T1/1 1T 1/6')], [inv('a1', '1T 1/1', 2807), inv('b6', '1T 1/6', 700_000)]);
    expect(receipt.matches).toEqual([expect.objectContaining({ invoice_ids: ['b6'], rule: 'reference' })]);
    expect(receipt.unmatched_invoices).toEqual(['a1']);
    expect(receipt.partially_paid_invoices).toEqual([]);
  });

  test('sequence only, amount and date, combination without reference; fees within tolerance; ambiguity left unmatched', () => {
    const r = reconcile(
      [
        tx('seq', 9900, 'TRF METALURGICA DO VOUGA FACT 31'),
        tx('fee', 20000 - 150, 'TRF SEPA METALURGICA DO VOUGA'),
        tx('combo', 7000, 'TRF SEPA SANDBOX BETA SA', 'SANDBOX BETA SA'),
        tx('twin', 5000, 'TRF SEPA SANDBOX GAMA', 'SANDBOX GAMA LDA'),
        tx('stranger', 20000 - 150, 'TRF SEPA OUTRA EMPRESA', 'OUTRA EMPRESA LDA'),
      ],
      [
        inv('i31', 'FT 2026/31', 9900),
        inv('i40', 'FT 2026/40', 20000),
        inv('b1', 'FT 2026/50', 3000, 'Sandbox Beta, S.A.'),
        inv('b2', 'FT 2026/51', 4000, 'Sandbox Beta, S.A.'),
        inv('g1', 'FT 2026/60', 5000, 'Sandbox Gama, Lda.'),
        inv('g2', 'FT 2026/61', 5000, 'Sandbox Gama, Lda.'),
      ],
    );
    const by = (t: string) => r.matches.find((m) => m.transaction_ids.includes(t));
    expect(by('seq')).toMatchObject({ invoice_ids: ['i31'], rule: 'sequence' });
    expect(by('fee')).toMatchObject({ invoice_ids: ['i40'], rule: 'amount_date' });
    expect(by('combo')).toMatchObject({ invoice_ids: ['b1', 'b2'], rule: 'combination' });
    expect(by('twin')).toBeUndefined(); // two identical open invoices of the payer: not guessed
    expect(by('stranger')).toBeUndefined(); // the right amount from somebody else
    expect(r.unmatched_invoices.sort()).toEqual(['g1', 'g2']);
  });

  test('the bank\'s truncated, unaccented payer name', () => {
    expect(samePayer('DISTRIBUICAO DO MONDEG', 'Distribuição do Mondego, S.A.')).toBe(true);
    expect(samePayer('SANDBOX ALFA LDA', 'Sandbox Alfa, Lda.')).toBe(true);
    expect(samePayer('SANDBOX ALFA LDA', 'Sandbox Beta, S.A.')).toBe(false);
    expect(samePayer(null, 'Sandbox Alfa, Lda.')).toBe(false);
  });
});

describe('labelled set from the demo ERP data', () => {
  test('precision ≥ 0.97 and recall ≥ 0.90 with noise; the same answer whatever the input order', () => {
    const opts = { seed: 'reconcile-labelled', invoices: 3000, startDate: '2025-11-01' };
    const invoices = [...demoInvoices(opts)].filter((i) => i.status === 'N' && ['FT', 'FR', 'FS', 'ND'].includes(i.document_type));
    const rand = mulberry32(7);
    const noisy = [...demoTransactions(opts)].map((t) => {
      let description = t.description;
      let amount = t.amount_cents;
      if (t.matched_invoice_number && t.amount_cents > 0) {
        const roll = rand();
        if (roll < 0.1) amount -= 50 + Math.floor(rand() * 150); // a bank fee taken from the transfer
        else if (roll < 0.2) description = description.replace(/(FT|FR|FS|ND) (\d{4})\//, '$1$2/'); // compacted number
        else if (roll < 0.25) description = `TRF ${(t.counterparty_name ?? '').normalize('NFD').replace(/\p{M}/gu, '').toUpperCase().slice(0, 22)}`; // reference dropped
      }
      return { ...t, description, amount_cents: amount };
    });
    expect(noisy.length).toBeGreaterThanOrEqual(1000);
    const byNumber = new Map(invoices.map((i) => [i.number, i.provider_document_id]));
    const txns = noisy.map((t) => ({ id: t.provider_transaction_id, date: t.booking_date, amount_cents: t.amount_cents, description: t.description, counterparty: t.counterparty_name }));
    const opens = invoices.map((i) => ({ id: i.provider_document_id, number: i.number, atcud: i.atcud, customer_nif: i.customer_nif, customer_name: i.customer_name, issue_date: i.issue_date, due_date: i.due_date, amount_open_cents: i.gross_total_cents }));
    const r = reconcile(txns, opens);
    const truth = new Map(noisy.map((t) => [t.provider_transaction_id, t.matched_invoice_number ? byNumber.get(t.matched_invoice_number) : undefined]));
    let correct = 0;
    let wrong = 0;
    for (const m of r.matches) for (const id of m.transaction_ids) (m.invoice_ids.includes(truth.get(id)!) ? correct++ : wrong++);
    const positives = noisy.filter((t) => t.matched_invoice_number && t.amount_cents > 0 && byNumber.has(t.matched_invoice_number)).length;
    const precision = correct / (correct + wrong);
    const recall = correct / positives;
    console.log(`[reconcile labelled set] ${noisy.length} transactions (${positives} payments of known invoices), ${invoices.length} invoices: precision ${precision.toFixed(4)}, recall ${recall.toFixed(4)}`);
    expect(precision).toBeGreaterThanOrEqual(0.97);
    expect(recall).toBeGreaterThanOrEqual(0.9);
    // deterministic: shuffled input, same matches
    const shuffled = reconcile([...txns].reverse(), [...opens].reverse());
    expect(shuffled.matches).toEqual(r.matches);
  });
});

describe('POST /v1/reconcile', () => {
  let h: TestApp;
  let key: string;
  beforeAll(async () => {
    h = await makeApp();
    key = (await h.tenant()).api_key;
  });
  afterAll(() => h.close());
  const post = (body: unknown, k = key) => h.json('POST', '/v1/reconcile', { key: k, body });

  test('inline data: euros in, matches out', async () => {
    const r = await post({
      transactions: [{ id: 't1', date: '2026-03-02', amount: 123, description: 'TRF FT 2026/17 METALURGICA', counterparty: 'METALURGICA DO VOUGA' }, { id: 't2', date: '2026-03-03', amount: -50, description: 'COMISSAO' }],
      invoices: [{ id: 'i1', number: 'FT 2026/17', customer_name: 'Metalúrgica do Vouga, Lda.', issue_date: '2026-02-01', due_date: '2026-03-03', amount_open: 123 }],
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ source: 'body', matches: [{ transaction_ids: ['t1'], invoice_ids: ['i1'], amount: 123, rule: 'reference' }], unmatched_transactions: ['t2'], unmatched_invoices: [] });
    expect(r.body.summary).toEqual({ transactions: 2, invoices: 1, matched_transactions: 1, matched_invoices: 1, amount_matched: 123, match_rate: 1 });
    expect(r.body.partially_paid_invoices).toEqual([]);
    // a partial payment: the invoice is matched, not unmatched, and what stays open is said
    const part = await post({
      transactions: [{ id: 't1', date: '2026-03-10', amount: 400, description: 'PAG FT A/1' }],
      invoices: [{ id: 'a', number: 'FT A/1', issue_date: '2026-02-01', due_date: '2026-03-01', amount_open: 1000 }],
    });
    expect(part.body).toMatchObject({ matches: [{ invoice_ids: ['a'], rule: 'partial', amount: 400 }], unmatched_invoices: [], partially_paid_invoices: [{ invoice_id: 'a', paid: 400, remaining: 600 }] });
  });

  test('the tenant\'s synced data; another tenant\'s reference finds nothing', async () => {
    const t = await h.tenant();
    await connectSandboxErp(h, t.api_key, 'demo', { customerReference: 'books' });
    const run = await h.json('POST', '/v1/erp-connector/sync', { key: t.api_key, body: { provider: 'demo', customer_reference: 'books' } });
    for (let i = 0; i < 200; i++) {
      if ((await h.json('GET', `/v1/erp-connector/sync/${run.body.run_id}`, { key: t.api_key })).body.status === 'succeeded') break;
      await Bun.sleep(25);
    }
    const r = await post({ source: { provider: 'demo', customer_reference: 'books' } }, t.api_key);
    expect(r.status).toBe(200);
    expect(r.body.source).toBe('demo/books');
    expect(r.body.summary.transactions).toBeGreaterThan(10);
    expect(r.body.summary.matched_transactions).toBeGreaterThan(5);
    // dates with nothing in them: an empty answer; no books at all under the source (another
    // tenant's, or a reference never synced): 404, as POST /v1/forecast answers
    const empty = await post({ source: { provider: 'demo', customer_reference: 'books', from: '1990-01-01', to: '1990-01-31' } }, t.api_key);
    expect([empty.status, empty.body.summary?.transactions, empty.body.summary?.invoices]).toEqual([200, 0, 0]);
    // a range the wrong way round is the caller's mistake, not "nothing matched"
    expect(expectError(await post({ source: { provider: 'demo', customer_reference: 'books', from: '2026-12-01', to: '2026-01-01' } }, t.api_key), 422, 'validation_failed').fields).toEqual([{ path: 'source.from', message: 'is after source.to (2026-01-01)' }]);
    const other = await post({ source: { provider: 'demo', customer_reference: 'books' } });
    expect(expectError(other, 404, 'resource_not_found').fields).toEqual([{ path: 'source', message: 'no invoices or bank movements' }]);
    expectError(await post({ source: { provider: 'demo', customer_reference: 'never-synced' } }, t.api_key), 404, 'resource_not_found');
    expect(expectError(await post({ source: { provider: 'nope', customer_reference: 'books' } }, t.api_key), 422, 'validation_failed').fields[0].path).toBe('source.provider');
  });

  test('errors: both or neither, one without the other, bad dates and amounts; scope', async () => {
    const cases: [unknown, string][] = [
      [{}, '(body)'],
      [{ transactions: [], invoices: [], source: { provider: 'demo', customer_reference: 'x' } }, 'source'],
      [{ transactions: [] }, 'invoices'],
      [{ transactions: [{ id: 't', date: '02/03/2026', amount: 1, description: '' }], invoices: [] }, 'transactions.0.date'],
      [{ transactions: [{ id: 't', date: '2026-03-02', amount: '1', description: '' }], invoices: [] }, 'transactions.0.amount'],
      [{ transactions: [], invoices: [{ id: 'i', number: 'FT 1/1', issue_date: '2026-01-01', amount_open: -1 }] }, 'invoices.0.amount_open'],
      [{ transactions: [], invoices: [], fee_tolerance: 1000 }, 'fee_tolerance'],
    ];
    for (const [body, path] of cases) expect(expectError(await post(body), 422, 'validation_failed').fields.map((f: any) => f.path)).toContain(path);
    // neither given: the message does not speak of both
    expect(expectError(await post({}), 422, 'validation_failed').fields).toEqual([{ path: '(body)', message: 'give transactions and invoices, or source' }]);
    // ids name the items in the answer: a repeated one is refused, naming the first
    const tx = (id: string) => ({ id, date: '2026-03-02', amount: 1, description: '' });
    const inv = (id: string) => ({ id, number: `FT 1/${id}`, issue_date: '2026-01-01', amount_open: 1 });
    expect(expectError(await post({ transactions: [tx('t1'), tx('t2'), tx('t1')], invoices: [inv('i1'), inv('i1')] }), 422, 'validation_failed').fields).toEqual([
      { path: 'transactions.2.id', message: 'repeats transactions.0' },
      { path: 'invoices.1.id', message: 'repeats invoices.0' },
    ]);
    const narrow = await h.tenant({ scopes: ['score'] });
    expectError(await post({ transactions: [], invoices: [] }, narrow.api_key), 403, 'insufficient_scope');
  });

  test('the largest request the schema allows: 20 000 transactions and 20 000 ordinary invoices (~6 MB) are read, past the 1 MiB of other JSON routes', async () => {
    const t = await h.tenant();
    const transactions = Array.from({ length: 20_000 }, (_, i) => ({ id: `t${i}`, date: '2026-03-02', amount: 123.45, description: `TRF FT 2026/${i} CLIENTE ${i}`, counterparty: `CLIENTE ${i}` }));
    const invoices = Array.from({ length: 20_000 }, (_, i) => ({ id: `i${i}`, number: `FT 2026/${i}`, customer_name: `CLIENTE ${i}`, issue_date: '2026-02-01', due_date: '2026-03-01', amount_open: 123.45 }));
    const body = JSON.stringify({ transactions, invoices });
    expect(body.length).toBeGreaterThan(4 * 1024 * 1024);
    const r = await h.json('POST', '/v1/reconcile', { key: t.api_key, rawBody: body, headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(200);
    expect(r.body.summary).toMatchObject({ transactions: 20_000, invoices: 20_000 });
    // a key that does not verify gets no more than any route's limit: 401, the body left unread
    const forged = await h.json('POST', '/v1/reconcile', { key: `sk_test_${'0'.repeat(28)}`, rawBody: body, headers: { 'content-type': 'application/json' } });
    expectError(forged, 401, 'invalid_api_key');
  }, 60_000);
});
