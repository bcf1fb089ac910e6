import { describe, expect, test } from 'bun:test';
import {
  DEMO_SIZE_PRESETS,
  demoInvoices,
  demoTransactions,
  ptIbanCheck,
  type DemoDatasetOptions,
  type SyncedInvoice,
  type SyncedTransaction,
} from '../src/features/erp/demo-data';
import { isValidNif } from '../src/lib/nif';

const BASE: DemoDatasetOptions = { seed: 'tenant_0001:cust-42', invoices: 2000, startDate: '2026-01-05' };
const invoices: SyncedInvoice[] = [...demoInvoices(BASE)];
const transactions: SyncedTransaction[] = [...demoTransactions(BASE)];
const byNumber = new Map(invoices.map((i) => [i.number, i]));

function roundHalfUp(base: number, rate: number): number {
  return Math.floor((base * rate + 50) / 100);
}

function assertNonDecreasingWithDuplicates(values: string[]): void {
  let dup = 0;
  for (let k = 1; k < values.length; k++) {
    expect(values[k]! >= values[k - 1]!).toBe(true);
    if (values[k] === values[k - 1]) dup++;
  }
  expect(dup).toBeGreaterThan(0);
}

describe('demo data: determinism and counts', () => {
  test('same options give the identical sequence', () => {
    expect([...demoInvoices(BASE)]).toEqual(invoices);
    expect([...demoTransactions(BASE)]).toEqual(transactions);
  });

  test('a different seed gives different data', () => {
    const other = [...demoInvoices({ ...BASE, seed: 'tenant_0002:cust-42' })];
    expect(other.length).toBe(invoices.length);
    expect(JSON.stringify(other)).not.toBe(JSON.stringify(invoices));
    expect(other.map((i) => i.customer_nif)).not.toEqual(invoices.map((i) => i.customer_nif));
    const otherTx = [...demoTransactions({ ...BASE, seed: 'tenant_0002:cust-42' })];
    expect(JSON.stringify(otherTx)).not.toBe(JSON.stringify(transactions));
  });

  test('invoice counts are exact', () => {
    for (const n of [0, 1, 2, 3, 50, 777]) {
      let count = 0;
      for (const _ of demoInvoices({ ...BASE, invoices: n })) count++;
      expect(count).toBe(n);
    }
    expect(invoices.length).toBe(2000);
  });

  test('transactions are roughly 0.8 × invoices', () => {
    const ratio = transactions.length / invoices.length;
    expect(ratio).toBeGreaterThan(0.65);
    expect(ratio).toBeLessThan(0.95);
    expect([...demoTransactions({ ...BASE, invoices: 0 })]).toEqual([]);
    const small = [...demoTransactions({ ...BASE, invoices: DEMO_SIZE_PRESETS.small })];
    expect(small.length).toBeGreaterThan(0);
  });

  test('size presets', () => {
    expect(DEMO_SIZE_PRESETS).toEqual({ small: 50, medium: 2000, large: 100000 });
  });

  test('generators are lazy: the first item of a 10-million data set comes at once', () => {
    const huge = { ...BASE, invoices: 10_000_000 };
    const t0 = performance.now();
    const first = demoInvoices(huge).next();
    const firstTx = demoTransactions(huge).next();
    expect(first.done).toBe(false);
    expect(first.value!.provider_document_id).toBe('demo-inv-000001');
    expect(firstTx.done).toBe(false);
    expect(performance.now() - t0).toBeLessThan(5000);
  });

  test('invalid options are rejected', () => {
    expect(() => demoInvoices({ ...BASE, invoices: -1 }).next()).toThrow(RangeError);
    expect(() => demoInvoices({ ...BASE, invoices: 1.5 }).next()).toThrow(RangeError);
    expect(() => demoInvoices({ ...BASE, startDate: '2026-02-30' }).next()).toThrow(RangeError);
    expect(() => demoInvoices({ ...BASE, startDate: '05/01/2026' }).next()).toThrow(RangeError);
    expect(() => demoTransactions({ ...BASE, provider: '' }).next()).toThrow(RangeError);
  });
});

describe('demo data: invoices', () => {
  test('every customer NIF is valid; consumidor final only on FS (and notes correcting them)', () => {
    let consumer = 0;
    for (const inv of invoices) {
      expect(isValidNif(inv.customer_nif)).toBe(true);
      expect(inv.customer_name.length).toBeGreaterThan(3);
      if (inv.customer_nif === '999999990') {
        consumer++;
        if (inv.document_type !== 'FS') {
          expect(['NC', 'ND']).toContain(inv.document_type);
          expect(byNumber.get(inv.references[0]!)!.document_type).toBe('FS');
        }
      }
    }
    expect(consumer).toBeGreaterThan(0);
  });

  test('totals are consistent and VAT is exact per rate', () => {
    const rates = new Set<number>();
    for (const inv of invoices) {
      expect(inv.currency).toBe('EUR');
      expect(inv.vat_breakdown.length).toBeGreaterThan(0);
      let base = 0;
      let tax = 0;
      for (const b of inv.vat_breakdown) {
        expect([23, 13, 6]).toContain(b.rate);
        rates.add(b.rate);
        expect(Number.isInteger(b.base_cents) && b.base_cents > 0).toBe(true);
        expect(b.tax_cents).toBe(roundHalfUp(b.base_cents, b.rate));
        expect(b.tax_cents).toBe(Math.round((b.base_cents * b.rate) / 100));
        base += b.base_cents;
        tax += b.tax_cents;
      }
      expect(new Set(inv.vat_breakdown.map((b) => b.rate)).size).toBe(inv.vat_breakdown.length);
      expect(inv.net_total_cents).toBe(base);
      expect(inv.tax_total_cents).toBe(tax);
      expect(inv.gross_total_cents).toBe(inv.net_total_cents + inv.tax_total_cents);
      expect(inv.gross_total_cents).toBeGreaterThan(0);
    }
    expect([...rates].sort()).toEqual([13, 23, 6]);
    // A mix of rates inside single documents, too.
    expect(invoices.some((i) => i.vat_breakdown.length > 1)).toBe(true);
  });

  test('document types, statuses and dates', () => {
    const types = new Map<string, number>();
    for (const inv of invoices) types.set(inv.document_type, (types.get(inv.document_type) ?? 0) + 1);
    for (const t of ['FT', 'FS', 'FR', 'NC', 'ND']) expect(types.get(t) ?? 0).toBeGreaterThan(0);
    expect(invoices.some((i) => i.status === 'A')).toBe(true);
    expect(invoices.filter((i) => i.status === 'A').length).toBeLessThan(invoices.length * 0.05);

    expect(invoices[0]!.issue_date).toBe(BASE.startDate);
    let prev = '';
    for (const inv of invoices) {
      expect(inv.issue_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(inv.issue_date >= prev).toBe(true);
      expect(inv.issue_date < '2027-01-05').toBe(true);
      prev = inv.issue_date;
      if (inv.document_type === 'FS' || inv.document_type === 'FR') expect(inv.due_date).toBeNull();
      else expect(inv.due_date! >= inv.issue_date).toBe(true);
    }
    // Spread over the ~12 months after startDate.
    expect(invoices[invoices.length - 1]!.issue_date >= '2026-12-01').toBe(true);
  });

  test('numbers unique; ATCUD = validation code of the series + sequence; sequences follow issue dates', () => {
    expect(new Set(invoices.map((i) => i.number)).size).toBe(invoices.length);
    expect(new Set(invoices.map((i) => i.provider_document_id)).size).toBe(invoices.length);
    const lastSeq = new Map<string, number>();
    const codeOfSeries = new Map<string, string>();
    for (const inv of invoices) {
      const m = /^(FT|FS|FR|NC|ND) (\d{4})\/(\d+)$/.exec(inv.number);
      expect(m).not.toBeNull();
      expect(m![1]).toBe(inv.document_type);
      expect(m![2]).toBe(inv.issue_date.slice(0, 4));
      expect(inv.atcud).toMatch(/^[A-Z0-9]{8,}-\d+$/);
      const [code, seq] = inv.atcud.split('-');
      expect(seq).toBe(inv.number.split('/')[1]);
      const series = `${m![1]} ${m![2]}`;
      expect(Number(seq)).toBe((lastSeq.get(series) ?? 0) + 1);
      lastSeq.set(series, Number(seq));
      if (codeOfSeries.has(series)) expect(codeOfSeries.get(series)).toBe(code!);
      codeOfSeries.set(series, code!);
    }
    // The year change restarts the series (2026 → 2027) with a new validation code.
    expect(lastSeq.has('FT 2027')).toBe(true);
    expect(codeOfSeries.get('FT 2027')).not.toBe(codeOfSeries.get('FT 2026'));
  });

  test('NC and ND reference an existing earlier normal invoice of the same customer', () => {
    const seen = new Map<string, SyncedInvoice>();
    let notes = 0;
    for (const inv of invoices) {
      if (inv.document_type === 'NC' || inv.document_type === 'ND') {
        notes++;
        expect(inv.references.length).toBe(1);
        const ref = seen.get(inv.references[0]!);
        expect(ref).toBeDefined();
        expect(['FT', 'FR', 'FS']).toContain(ref!.document_type);
        expect(ref!.status).toBe('N');
        expect(ref!.customer_nif).toBe(inv.customer_nif);
        if (inv.document_type === 'NC') expect(inv.gross_total_cents).toBeLessThanOrEqual(ref!.gross_total_cents);
      } else {
        expect(inv.references).toEqual([]);
      }
      seen.set(inv.number, inv);
    }
    expect(notes).toBeGreaterThan(0);
  });

  test('updated_at is non-decreasing with shared timestamps, and not before the issue date', () => {
    assertNonDecreasingWithDuplicates(invoices.map((i) => i.updated_at));
    for (const inv of invoices) {
      expect(inv.updated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      expect(inv.updated_at.slice(0, 10) >= inv.issue_date).toBe(true);
    }
    // Also for the small preset (first group always has ≥ 2 documents).
    const small = [...demoInvoices({ ...BASE, invoices: DEMO_SIZE_PRESETS.small })];
    assertNonDecreasingWithDuplicates(small.map((i) => i.updated_at));
    // Ids increase in generation order, so (updated_at, id) is a strict total order.
    for (let k = 1; k < invoices.length; k++) {
      const a = invoices[k - 1]!;
      const b = invoices[k]!;
      expect(a.updated_at < b.updated_at || (a.updated_at === b.updated_at && a.provider_document_id < b.provider_document_id)).toBe(true);
    }
  });

  test('provider label appears in ids and nothing else changes', () => {
    expect(invoices.every((i) => /^demo-inv-\d{6}$/.test(i.provider_document_id))).toBe(true);
    expect(transactions.every((t) => /^demo-txn-\d{6}$/.test(t.provider_transaction_id))).toBe(true);
    const opts = { ...BASE, invoices: 300, provider: 'toconline' };
    const labelled = [...demoInvoices(opts)];
    const labelledTx = [...demoTransactions(opts)];
    expect(labelled[0]!.provider_document_id).toBe('toconline-inv-000001');
    expect(labelled.every((i) => i.provider_document_id.startsWith('toconline-inv-'))).toBe(true);
    expect(labelledTx.every((t) => t.provider_transaction_id.startsWith('toconline-txn-'))).toBe(true);
    const plain = [...demoInvoices({ ...opts, provider: undefined })];
    expect(labelled.map((i) => ({ ...i, provider_document_id: '' }))).toEqual(plain.map((i) => ({ ...i, provider_document_id: '' })));
  });
});

describe('demo data: transactions', () => {
  test('IBANs are valid PT IBANs', () => {
    let withIban = 0;
    for (const t of transactions) {
      if (t.counterparty_iban === null) continue;
      withIban++;
      expect(t.counterparty_iban).toMatch(/^PT50\d{21}$/);
      expect(ptIbanCheck(t.counterparty_iban)).toBe(true);
    }
    expect(withIban).toBeGreaterThan(transactions.length / 2);
  });

  test('ptIbanCheck', () => {
    expect(ptIbanCheck('PT50000201231234567890154')).toBe(true); // ISO 13616 registry example
    expect(ptIbanCheck('pt50 0002 0123 1234 5678 9015 4')).toBe(true);
    expect(ptIbanCheck('PT50000201231234567890155')).toBe(false);
    expect(ptIbanCheck('PT51000201231234567890154')).toBe(false);
    expect(ptIbanCheck('PT5000020123123456789015')).toBe(false);
    expect(ptIbanCheck('GB82WEST12345698765432')).toBe(true);
    expect(ptIbanCheck('')).toBe(false);
    expect(ptIbanCheck('PT50-0002')).toBe(false);
  });

  test('shape, booking order, amounts and updated_at', () => {
    let prevBooking = '';
    for (const t of transactions) {
      expect(t.currency).toBe('EUR');
      expect(Number.isInteger(t.amount_cents) && t.amount_cents !== 0).toBe(true);
      expect(t.description.length).toBeGreaterThan(0);
      expect(t.booking_date >= prevBooking).toBe(true);
      prevBooking = t.booking_date;
      expect(t.updated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      expect(t.updated_at.slice(0, 10) >= t.booking_date).toBe(true);
    }
    expect(new Set(transactions.map((t) => t.provider_transaction_id)).size).toBe(transactions.length);
    assertNonDecreasingWithDuplicates(transactions.map((t) => t.updated_at));
    expect(transactions.some((t) => t.amount_cents < 0 && t.matched_invoice_number === null)).toBe(true);
    expect(transactions.some((t) => t.amount_cents > 0 && t.matched_invoice_number === null)).toBe(true);
  });

  test('matched transactions pay existing invoices, exactly or partially, never more than the gross', () => {
    let matched = 0;
    let exact = 0;
    let partial = 0;
    const paid = new Map<string, number>();
    for (const t of transactions) {
      if (t.matched_invoice_number === null) continue;
      matched++;
      const inv = byNumber.get(t.matched_invoice_number);
      expect(inv).toBeDefined();
      expect(inv!.status).toBe('N');
      expect(t.booking_date >= inv!.issue_date).toBe(true);
      expect(Math.abs(t.amount_cents)).toBeLessThanOrEqual(inv!.gross_total_cents);
      if (inv!.document_type === 'NC') expect(t.amount_cents).toBeLessThan(0);
      else expect(t.amount_cents).toBeGreaterThan(0);
      if (Math.abs(t.amount_cents) === inv!.gross_total_cents) exact++;
      else partial++;
      paid.set(inv!.number, (paid.get(inv!.number) ?? 0) + Math.abs(t.amount_cents));
    }
    for (const [number, total] of paid) expect(total).toBeLessThanOrEqual(byNumber.get(number)!.gross_total_cents);
    expect(matched).toBeGreaterThan(transactions.length / 2);
    expect(exact).toBeGreaterThan(0);
    expect(partial).toBeGreaterThan(0);
    // Some invoices stay unpaid.
    const payable = invoices.filter((i) => i.document_type === 'FT' && i.status === 'N');
    expect(payable.some((i) => !paid.has(i.number))).toBe(true);
  });
});

describe('demo data: invariants over many seeds', () => {
  test('30 seeds × small data sets', () => {
    for (let k = 0; k < 30; k++) {
      const opts = { seed: `seed-${k}`, invoices: 40 + k * 7, startDate: k % 2 ? '2025-07-19' : '2026-03-01' };
      const invs = [...demoInvoices(opts)];
      expect(invs.length).toBe(opts.invoices);
      const seen = new Map<string, SyncedInvoice>();
      for (const inv of invs) {
        expect(isValidNif(inv.customer_nif)).toBe(true);
        expect(inv.gross_total_cents).toBe(inv.net_total_cents + inv.tax_total_cents);
        expect(inv.tax_total_cents).toBe(inv.vat_breakdown.reduce((s, b) => s + b.tax_cents, 0));
        for (const b of inv.vat_breakdown) expect(b.tax_cents).toBe(roundHalfUp(b.base_cents, b.rate));
        expect(inv.atcud.split('-')[1]).toBe(inv.number.split('/')[1]);
        for (const r of inv.references) expect(seen.has(r)).toBe(true);
        expect(seen.has(inv.number)).toBe(false);
        seen.set(inv.number, inv);
      }
      assertNonDecreasingWithDuplicates(invs.map((i) => i.updated_at));
      const txs = [...demoTransactions(opts)];
      assertNonDecreasingWithDuplicates(txs.map((t) => t.updated_at));
      for (const t of txs) {
        if (t.counterparty_iban !== null) expect(ptIbanCheck(t.counterparty_iban)).toBe(true);
        if (t.matched_invoice_number !== null) {
          const inv = seen.get(t.matched_invoice_number);
          expect(inv).toBeDefined();
          expect(Math.abs(t.amount_cents)).toBeLessThanOrEqual(inv!.gross_total_cents);
        }
      }
    }
  });
});

describe('demo data: scale', () => {
  test('100 000 invoices stream with flat memory (timing printed, not asserted)', () => {
    const opts = { seed: 'scale', invoices: DEMO_SIZE_PRESETS.large, startDate: '2026-01-01' };
    Bun.gc(true);
    const heap0 = process.memoryUsage().heapUsed;
    let t0 = performance.now();
    let n = 0;
    let gross = 0;
    for (const inv of demoInvoices(opts)) {
      n++;
      gross += inv.gross_total_cents;
    }
    const invMs = performance.now() - t0;
    expect(n).toBe(100_000);
    expect(gross).toBeGreaterThan(0);
    t0 = performance.now();
    let m = 0;
    for (const _ of demoTransactions(opts)) m++;
    const txMs = performance.now() - t0;
    Bun.gc(true);
    const heapDeltaMb = (process.memoryUsage().heapUsed - heap0) / 1e6;
    console.log(
      `[erp-demo-data] 100000 invoices in ${invMs.toFixed(0)} ms; ${m} transactions in ${txMs.toFixed(0)} ms; ` +
        `heap delta after GC ${heapDeltaMb.toFixed(1)} MB`,
    );
    expect(m).toBeGreaterThan(60_000);
  }, 120_000);
});
