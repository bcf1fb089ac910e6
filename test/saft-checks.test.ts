/**
 * SAF-T checks added after an outside review: a document's VAT against its lines, Portuguese VAT
 * rates and exemptions, negative amounts, documents outside the file's period, nested Header
 * elements, UTF-16 and byte-order-mark encodings, and what an import stores of payments. Each
 * defect is injected into a copy of the tax authority's demo file; a file with an error is reported
 * with its code and path, and ?import=true stores nothing of it.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { parseSaft } from '../src/features/saft/parser';
import { SaftParseResponse } from '../src/features/saft';
import { makeApp, ROOT, type TestApp } from './helpers';
setDefaultTimeout(30_000);

const DEMO = join(ROOT, 'fixtures/saft/saft_idemo599999999.xml');
let demoText = '';
let demoBytes = new Uint8Array(0);
beforeAll(async () => {
  demoBytes = await Bun.file(DEMO).bytes();
  demoText = new TextDecoder('windows-1252').decode(demoBytes);
});
/** a copy of the demo file with one change, re-declared as UTF-8 */
const variant = (change: (xml: string) => string) => new TextEncoder().encode(change(demoText).replace('encoding="Windows-1252"', 'encoding="UTF-8"'));
/** a change within one invoice only */
const inInvoice = (no: string, change: (invoice: string) => string) => (xml: string) => {
  const at = xml.indexOf(`<InvoiceNo>${no}</InvoiceNo>`);
  const end = xml.indexOf('</Invoice>', at);
  return xml.slice(0, at) + change(xml.slice(at, end)) + xml.slice(end);
};
const parse = (bytes: Uint8Array) =>
  parseSaft((async function* () {
    for (let i = 0; i < bytes.length; i += 4096) yield bytes.subarray(i, i + 4096);
  })(), { publicKeyPem: null });
const checksOf = async (change: (xml: string) => string) => (await parse(variant(change))).checks;

// 1T 1/1: one line of 23.3938 at 20 % (4.68 of VAT), NetTotal 23.39, GrossTotal 28.07
const forgedVat = inInvoice('1T 1/1', (x) => x.replace('<TaxPayable>4.68</TaxPayable>', '<TaxPayable>10.00</TaxPayable>').replace('<GrossTotal>28.07</GrossTotal>', '<GrossTotal>33.39</GrossTotal>'));
const negativeLine = (x: string) => inInvoice('1T 1/1', (i) => i.replace('<CreditAmount>23.3938</CreditAmount>', '<CreditAmount>-23.3938</CreditAmount>'))(x).replace('<TotalCredit>14918.709</TotalCredit>', '<TotalCredit>14871.9214</TotalCredit>');
const outsidePeriod = inInvoice('1T 1/1', (x) => x.replace('<InvoiceDate>2017-03-10</InvoiceDate>', '<InvoiceDate>2019-03-10</InvoiceDate>'));

describe('a document against its lines and the XSD', () => {
  test("TaxPayable is its lines' tax (amount × TaxPercentage / 100), within half a cent a line and a cent", async () => {
    const forged = (await checksOf(forgedVat)).filter((c) => c.severity === 'error');
    expect(forged).toEqual([{ code: 'document_totals', severity: 'error', message: expect.stringContaining("TaxPayable 10, its lines' tax (amount × TaxPercentage / 100, or TaxAmount) sums to 4.6788"), path: 'Invoice 1T 1/1', line: expect.any(Number) }]);
    // rounding: 4.69 is within 1.5 cents of 4.6788; 4.70 is not
    const by = (tax: string, gross: string) => inInvoice('1T 1/1', (x) => x.replace('<TaxPayable>4.68</TaxPayable>', `<TaxPayable>${tax}</TaxPayable>`).replace('<GrossTotal>28.07</GrossTotal>', `<GrossTotal>${gross}</GrossTotal>`));
    expect((await checksOf(by('4.69', '28.08'))).filter((c) => c.severity === 'error')).toEqual([]);
    expect((await checksOf(by('4.70', '28.09'))).map((c) => `${c.code}@${c.path}`)).toContain('document_totals@Invoice 1T 1/1');
    // a line whose tax is a fixed TaxAmount counts that amount
    const fixed = inInvoice('1T 1/1', (x) => x.replace('<TaxPercentage>20</TaxPercentage>', '<TaxAmount>4.68</TaxAmount>'));
    expect((await checksOf(fixed)).filter((c) => c.severity === 'error')).toEqual([]);
    const fixedWrong = inInvoice('1T 1/1', (x) => x.replace('<TaxPercentage>20</TaxPercentage>', '<TaxAmount>1.00</TaxAmount>'));
    expect((await checksOf(fixedWrong)).map((c) => `${c.code}@${c.path}`)).toContain('document_totals@Invoice 1T 1/1');
  });

  test("a line's VAT rate not Portugal's for its region is a warning (once a rate); a 0 % line without its exemption is an error", async () => {
    // the demo's own 20 % and 5 % (2017: mainland 6, 13, 23): its TaxTable says its rates are examples
    const demo = await parse(demoBytes);
    expect(demo.valid).toBe(true);
    expect(demo.checks.filter((c) => c.code === 'tax_rate').map((c) => [c.severity, c.path, c.message])).toEqual([
      ['warning', 'Invoice 1T 1/1/Line 1/Tax/TaxPercentage', expect.stringContaining('TaxPercentage 20 is not a VAT rate of PT on 2017-03-10 (0, 6, 13, 23 %)')],
      ['warning', 'Invoice 1T 1/3/Line 1/Tax/TaxPercentage', expect.stringContaining('TaxPercentage 5 is not a VAT rate of PT')],
    ]);
    // Madeira at 22 % is a rate of its own (the tax adjusted: 5.15); at 7 % it is none (the file's
    // TaxTable given the line's tax, which it must carry: tax_unknown otherwise, test/saft-tax-table.test.ts)
    const region = (pct: string, tax: string, gross: string) => (xml: string) =>
      inInvoice('1T 1/1', (x) => x.replace('<TaxCountryRegion>PT</TaxCountryRegion>', '<TaxCountryRegion>PT-MA</TaxCountryRegion>').replace('<TaxPercentage>20</TaxPercentage>', `<TaxPercentage>${pct}</TaxPercentage>`).replace('<TaxPayable>4.68</TaxPayable>', `<TaxPayable>${tax}</TaxPayable>`).replace('<GrossTotal>28.07</GrossTotal>', `<GrossTotal>${gross}</GrossTotal>`))(
        xml.replace('</TaxTable>', `<TaxTableEntry><TaxType>IVA</TaxType><TaxCountryRegion>PT-MA</TaxCountryRegion><TaxCode>NOR</TaxCode><Description>Madeira</Description><TaxPercentage>${pct}</TaxPercentage></TaxTableEntry></TaxTable>`),
      );
    const madeira = await parse(variant(region('22', '5.15', '28.54')));
    expect(madeira.valid).toBe(true);
    expect(madeira.checks.filter((c) => c.code === 'tax_rate' && !!c.path?.startsWith('Invoice 1T 1/1/'))).toEqual([]);
    const odd = await parse(variant(region('7', '1.64', '25.03')));
    expect(odd.valid).toBe(true);
    expect(odd.checks.filter((c) => c.code === 'tax_rate' && !!c.path?.startsWith('Invoice 1T 1/1/')).map((c) => [c.severity, c.message])).toEqual([['warning', expect.stringContaining('TaxPercentage 7 is not a VAT rate of PT-MA')]]);
    // a 0 % line says why (the XSD's assert: TaxExemptionReason and TaxExemptionCode)
    const unexplained = await checksOf((x) => x.replace(/<TaxExemptionReason>[^<]*<\/TaxExemptionReason>\s*<TaxExemptionCode>[^<]*<\/TaxExemptionCode>/, ''));
    expect(unexplained.filter((c) => c.code === 'tax_exemption_missing')).toEqual([expect.objectContaining({ severity: 'error', message: expect.stringContaining('has no tax (TaxPercentage 0)') })]);
  });

  test('a negative amount, line or total, is an error at its document (NetTotal against |credits − debits| had let it through)', async () => {
    const r = await parse(variant(negativeLine));
    expect(r.valid).toBe(false);
    expect(r.checks.filter((c) => c.severity === 'error').map((c) => [c.code, c.path, c.message])).toEqual([['amount_negative', 'Invoice 1T 1/1', expect.stringContaining('Line 1 CreditAmount -23.3938 is negative')]]);
    const totals = await checksOf((x) => negativeLine(x).replace('<TotalCredit>14871.9214</TotalCredit>', '<TotalCredit>-14871.9214</TotalCredit>'));
    expect(totals.map((c) => `${c.code}@${c.path}`)).toContain('amount_negative@SalesInvoices/TotalCredit');
    const net = await checksOf(inInvoice('1T 1/1', (x) => x.replace('<NetTotal>23.39</NetTotal>', '<NetTotal>-23.39</NetTotal>')));
    expect(net.map((c) => `${c.code}@${c.path}`)).toContain('amount_negative@Invoice 1T 1/1');
    const qty = await checksOf(inInvoice('1T 1/1', (x) => x.replace('<Quantity>5</Quantity>', '<Quantity>-5</Quantity>')));
    expect(qty.filter((c) => c.code === 'amount_negative').map((c) => c.message)).toEqual([expect.stringContaining('Line 1 Quantity -5 is negative')]);
  });

  test("a document dated outside the Header's StartDate..EndDate is an error", async () => {
    const r = await checksOf(outsidePeriod);
    expect(r.filter((c) => c.severity === 'error').map((c) => [c.code, c.path, c.message])).toEqual([['date_outside_period', 'Invoice 1T 1/1', expect.stringContaining("InvoiceDate 2019-03-10 is outside the file's period 2017-02-01..2018-01-31")]]);
    const payment = await checksOf((x) => x.replace(/(<PaymentRefNo>PGT 1T1\/1<\/PaymentRefNo>[\s\S]*?<TransactionDate>)[^<]*/, '$12017-01-31'));
    expect(payment.map((c) => `${c.code}@${c.path}`)).toContain('date_outside_period@Payment PGT 1T1/1');
  });

  test('nested Header elements come back as Parent.Child', async () => {
    const r = await parse(demoBytes);
    expect(r.header).toMatchObject({ 'CompanyAddress.AddressDetail': "Av. Duque D' Ávila, 71", 'CompanyAddress.City': 'Lisboa', 'CompanyAddress.PostalCode': '1000-000', 'CompanyAddress.Country': 'PT', CompanyName: 'Entidade comercial - Demonstração' });
    expect('CompanyAddress' in r.header).toBe(false);
  });

  test('encodings: UTF-16 is refused as such; a UTF-8 byte order mark contradicting the declaration is an encoding error', async () => {
    const utf16 = (le: boolean) => {
      const text = demoText.replace('encoding="Windows-1252"', 'encoding="UTF-16"');
      const out = new Uint8Array(2 + text.length * 2);
      out.set(le ? [0xff, 0xfe] : [0xfe, 0xff]);
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        out[2 + 2 * i + (le ? 0 : 1)] = c & 0xff;
        out[2 + 2 * i + (le ? 1 : 0)] = c >> 8;
      }
      return out;
    };
    for (const le of [true, false]) {
      const r = await parse(utf16(le));
      expect(r.checks.map((c) => [c.code, c.message])).toEqual([['encoding', expect.stringContaining('UTF-16: not supported (SAF-T files are Windows-1252 or UTF-8)')]]);
      expect(r.valid).toBe(false);
    }
    // a BOM before UTF-8 bytes declared Windows-1252: one encoding error, the rest read (as UTF-8)
    const bomUtf8 = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(demoText)]);
    const r = await parse(bomUtf8);
    expect(r.checks.filter((c) => c.severity === 'error').map((c) => [c.code, c.message])).toEqual([['encoding', expect.stringContaining('UTF-8 byte order mark before an XML declaration of Windows-1252')]]);
    expect(r.header.CompanyName).toBe('Entidade comercial - Demonstração');
    expect(r.counts.invoices).toBe(24);
    // a BOM before a file declared UTF-8 is that file's own: valid
    const bomOk = await parse(new Uint8Array([0xef, 0xbb, 0xbf, ...variant((x) => x)]));
    expect(bomOk.valid).toBe(true);
  });

  /** the text as UTF-16 code units, without a byte order mark */
  const utf16NoBom = (text: string, le: boolean) => {
    const out = new Uint8Array(text.length * 2);
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      out[2 * i + (le ? 0 : 1)] = c & 0xff;
      out[2 * i + (le ? 1 : 0)] = c >> 8;
    }
    return out;
  };
  const inPieces = (bytes: Uint8Array, size: number) =>
    parseSaft((async function* () {
      for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
    })(), { publicKeyPem: null });

  test('UTF-16 without a byte order mark ("<?" in 16-bit units): the same encoding error, at line 1, and nothing else read; in whatever pieces it arrives', async () => {
    const text = demoText.replace('encoding="Windows-1252"', 'encoding="UTF-16"');
    for (const le of [true, false])
      for (const size of [4096, 3, 1]) {
        const r = await inPieces(utf16NoBom(text, le), size);
        expect([le, size, r.checks]).toEqual([le, size, [{ code: 'encoding', severity: 'error', message: 'the file is UTF-16: not supported (SAF-T files are Windows-1252 or UTF-8); the rest is not read', path: null, line: 1 }]]);
        expect(r).toMatchObject({ valid: false, hash_chain: 'not_verified', bytes: text.length * 2 });
        expect(r.header).toEqual({});
        expect(r.counts.invoices).toBe(0);
      }
  });

  test('UTF-16 without a byte order mark nor an XML declaration (\"<A\", or a space first, in 16-bit units): the same encoding error, nothing else read', async () => {
    const text = demoText.slice(demoText.indexOf('<AuditFile'));
    for (const le of [true, false])
      for (const body of [text, `  ${text}`]) {
        const r = await parse(utf16NoBom(body, le));
        expect(r.valid).toBe(false);
        expect(r.checks.map((c) => [c.code, c.severity, c.line, c.message])).toEqual([['encoding', 'error', 1, 'the file is UTF-16: not supported (SAF-T files are Windows-1252 or UTF-8); the rest is not read']]);
        expect(r.counts.invoices).toBe(0);
      }
  });
});

describe('?import=true', () => {
  let h: TestApp;
  beforeAll(async () => {
    h = await makeApp();
  });
  afterAll(() => h.close());
  const importAs = (key: string, ref: string, bytes: Uint8Array) => h.json('POST', `/v1/saft/parse?import=true&customer_reference=${ref}`, { key, rawBody: bytes as never, headers: { 'content-type': 'application/xml' } });

  test.each([
    ['a forged TaxPayable', forgedVat, 'document_totals', 'Invoice 1T 1/1'],
    ['a negative line amount (TotalCredit adjusted)', negativeLine, 'amount_negative', 'Invoice 1T 1/1'],
    ['a document outside the period', outsidePeriod, 'date_outside_period', 'Invoice 1T 1/1'],
  ] as const)('%s: reported, nothing stored', async (_, change, code, path) => {
    const t = await h.tenant();
    const r = await importAs(t.api_key, 'bad', variant(change));
    expect(r.status).toBe(200);
    expect(Value.Check(SaftParseResponse, r.body)).toBe(true);
    expect(r.body.valid).toBe(false);
    expect(r.body.checks).toContainEqual(expect.objectContaining({ code, path, severity: 'error' }));
    expect(r.body.import).toMatchObject({ imported: false, invoices: 0, payments: 0 });
    expect((await h.json('GET', '/v1/erp/saft/invoices?customer_reference=bad', { key: t.api_key })).body.data).toEqual([]);
    expect((await h.json('GET', '/v1/erp/saft/transactions?customer_reference=bad', { key: t.api_key })).body.data).toEqual([]);
  });

  test('a UTF-16 file without a byte order mark: 200 with its one encoding error, nothing stored', async () => {
    const t = await h.tenant();
    const text = demoText.replace('encoding="Windows-1252"', 'encoding="UTF-16"');
    const bytes = new Uint8Array(text.length * 2);
    for (let i = 0; i < text.length; i++) (bytes[2 * i] = text.charCodeAt(i) & 0xff), (bytes[2 * i + 1] = text.charCodeAt(i) >> 8);
    const r = await importAs(t.api_key, 'utf16', bytes);
    expect(r.status).toBe(200);
    expect(Value.Check(SaftParseResponse, r.body)).toBe(true);
    expect(r.body).toMatchObject({ valid: false, hash_chain: 'not_verified', bytes: bytes.length, import: { imported: false, invoices: 0, payments: 0 } });
    expect(r.body.checks).toEqual([{ code: 'encoding', severity: 'error', message: 'the file is UTF-16: not supported (SAF-T files are Windows-1252 or UTF-8); the rest is not read', path: null, line: 1 }]);
    expect((await h.json('GET', '/v1/erp/saft/invoices?customer_reference=utf16', { key: t.api_key })).body.data).toEqual([]);
  });

  test('payments: a cancelled receipt is not stored (and one stored before it was cancelled is removed); each invoice named once; its means named', async () => {
    const t = await h.tenant();
    const r = await importAs(t.api_key, 'demo', demoBytes);
    expect(Value.Check(SaftParseResponse, r.body)).toBe(true);
    expect(r.body.header.fields).toMatchObject({ 'CompanyAddress.City': 'Lisboa' });
    expect(r.body.import).toEqual({ imported: true, provider: 'saft', customer_reference: 'demo', invoices: 24, payments: 2, payments_cancelled: 1, reason: null });
    const tx = (await h.json('GET', '/v1/erp/saft/transactions?customer_reference=demo', { key: t.api_key })).body.data;
    expect(tx).toHaveLength(1);
    expect(tx[0]).toMatchObject({ amount_cents: 700_000, description: 'RECIBO PGT 1T1/1 1T 1/6 (TB, CC)', matched_invoice_number: '1T 1/6' });
    // the same file with PGT 1T1/2 not (yet) cancelled: stored; then the file as it is: removed
    const live = variant((x) => x.replace(/(<PaymentRefNo>PGT 1T1\/2<\/PaymentRefNo>[\s\S]*?<PaymentStatus>)A/, '$1N').replace('<TotalCredit>6000.00</TotalCredit>', '<TotalCredit>6900.00</TotalCredit>'));
    const t2 = await h.tenant();
    expect((await importAs(t2.api_key, 'demo', live)).body.import).toMatchObject({ imported: true, payments: 2, payments_cancelled: 0 });
    expect((await h.json('GET', '/v1/erp/saft/transactions?customer_reference=demo', { key: t2.api_key })).body.data).toHaveLength(2);
    expect((await importAs(t2.api_key, 'demo', demoBytes)).body.import).toMatchObject({ imported: true, payments: 2, payments_cancelled: 1 });
    const after = (await h.json('GET', '/v1/erp/saft/transactions?customer_reference=demo', { key: t2.api_key })).body.data;
    expect(after.map((x: { description: string }) => x.description)).toEqual(['RECIBO PGT 1T1/1 1T 1/6 (TB, CC)']);
  });
});

describe('lines of tax only, and exemptions (a review of the checks)', () => {
  test("a tax-only line's TaxBase is a unit value: times its quantity (2 × 100000 at 0.8 % is 1600.00)", async () => {
    const doubled = inInvoice('1IECTR EC/4', (x) => x.replace('<Quantity>1</Quantity>', '<Quantity>2</Quantity>').replace('<TaxPayable>800.00</TaxPayable>', '<TaxPayable>1600.00</TaxPayable>').replace('<GrossTotal>800.00</GrossTotal>', '<GrossTotal>1600.00</GrossTotal>'));
    const codes = (await checksOf(doubled)).filter((c) => c.severity === 'error').map((c) => `${c.code}@${c.path}`);
    expect(codes.filter((c) => c.includes('1IECTR EC/4'))).toEqual([]);
    const wrong = inInvoice('1IECTR EC/4', (x) => x.replace('<Quantity>1</Quantity>', '<Quantity>2</Quantity>'));
    expect((await checksOf(wrong)).some((c) => c.code === 'document_totals' && String(c.path).includes('1IECTR EC/4'))).toBe(true);
  });

  test('an empty TaxExemptionCode after a reason does not take the reason back', async () => {
    const emptyCode = (x: string) => x.replace('<TaxExemptionCode>M11</TaxExemptionCode>', '<TaxExemptionCode></TaxExemptionCode>');
    expect((await checksOf(emptyCode)).filter((c) => c.code === 'tax_exemption_missing')).toEqual([]);
  });

  // 1R RE1/1's line 2: IVA PT ISE at 0 %, with its reason and code (M11); the only exempt line of the demo
  const withoutExemption = (tax: (line: string) => string) =>
    inInvoice('1R RE1/1', (x) => tax(x.replace(/<TaxExemptionReason>[^<]*<\/TaxExemptionReason>\s*<TaxExemptionCode>[^<]*<\/TaxExemptionCode>/, '')));
  const missing = async (bytes: Uint8Array) => (await parse(bytes)).checks.filter((c) => c.code === 'tax_exemption_missing');

  test("tax_exemption_missing is an error on the line (its path), at the line's end (its line), naming the line and its 0 %", async () => {
    const bytes = variant(withoutExemption((x) => x));
    const r = await parse(bytes);
    expect(r.valid).toBe(false);
    expect(r.checks.filter((c) => c.severity === 'error')).toEqual([
      { code: 'tax_exemption_missing', severity: 'error', message: 'Invoice 1R RE1/1: Line 2 has no tax (TaxPercentage 0) and no TaxExemptionReason / TaxExemptionCode', path: 'Invoice 1R RE1/1/Line 2', line: expect.any(Number) },
    ]);
    const lines = new TextDecoder().decode(bytes).split('\n');
    const at = r.checks.find((c) => c.code === 'tax_exemption_missing')!.line!;
    expect(lines[at - 1]!.trim()).toBe('</Line>');
    expect(lines.slice(at - 8, at).join('\n')).toContain('<TaxPercentage>0</TaxPercentage>');
    // 0 written otherwise is 0 %
    expect((await missing(variant(withoutExemption((x) => x.replace('<TaxPercentage>0</TaxPercentage>', '<TaxPercentage>0.00</TaxPercentage>'))))).map((c) => c.message)).toEqual([
      'Invoice 1R RE1/1: Line 2 has no tax (TaxPercentage 0.00) and no TaxExemptionReason / TaxExemptionCode',
    ]);
    // either the reason or the code alone says why
    for (const why of ['<TaxExemptionReason>Artigo 9.º do CIVA</TaxExemptionReason>', '<TaxExemptionCode>M07</TaxExemptionCode>'])
      expect(await missing(variant(withoutExemption((x) => x.replace(/(<TaxCode>ISE<\/TaxCode>\s*<TaxPercentage>0<\/TaxPercentage>\s*<\/Tax>)/, `$1${why}`))))).toEqual([]);
  });

  test('a line whose tax is a TaxAmount of 0 needs its exemption too (the branch of TaxAmount); a TaxAmount above 0 does not', async () => {
    const amount = (value: string) => withoutExemption((x) => x.replace('<TaxPercentage>0</TaxPercentage>', `<TaxAmount>${value}</TaxAmount>`));
    const r = await parse(variant(amount('0')));
    expect(r.valid).toBe(false);
    expect(r.checks.filter((c) => c.severity === 'error')).toEqual([
      { code: 'tax_exemption_missing', severity: 'error', message: 'Invoice 1R RE1/1: Line 2 has no tax (TaxAmount 0) and no TaxExemptionReason / TaxExemptionCode', path: 'Invoice 1R RE1/1/Line 2', line: expect.any(Number) },
    ]);
    expect((await missing(variant(amount('0.00')))).map((c) => c.message)).toEqual(['Invoice 1R RE1/1: Line 2 has no tax (TaxAmount 0.00) and no TaxExemptionReason / TaxExemptionCode']);
    // with its reason and code kept: no error
    expect(await missing(variant(inInvoice('1R RE1/1', (x) => x.replace('<TaxPercentage>0</TaxPercentage>', '<TaxAmount>0</TaxAmount>'))))).toEqual([]);
    // a TaxAmount above 0 is a tax (the document's TaxPayable and GrossTotal given it): nothing to explain
    const taxed = (xml: string) => amount('100.00')(xml).replace(/(<InvoiceNo>1R RE1\/1<\/InvoiceNo>[\s\S]*?)<TaxPayable>1000<\/TaxPayable>([\s\S]*?)<GrossTotal>7000.00<\/GrossTotal>/, '$1<TaxPayable>1100.00</TaxPayable>$2<GrossTotal>7100.00</GrossTotal>');
    const ok = await parse(variant(taxed));
    expect(ok.checks.filter((c) => c.severity === 'error')).toEqual([]);
  });
});
