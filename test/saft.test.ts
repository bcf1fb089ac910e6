/**
 * POST /v1/saft/parse (issue 20): the tax authority's demo file (Windows-1252) parses with no error,
 * the right counts and totals, and its hash chain verifies with the demo public key; each defect
 * injected into a copy is reported with its code and the document it concerns; gzip; errors.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { parseSaft } from '../src/features/saft/parser';
import { SaftParseResponse } from '../src/features/saft';
import { expectError, makeApp, ROOT, type TestApp, multipart } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

const DEMO = join(ROOT, 'fixtures/saft/saft_idemo599999999.xml');
const KEY = join(ROOT, 'fixtures/saft/saft_demo_public_key.pem');
let demoText = '';
let pem = '';
beforeAll(async () => {
  demoText = new TextDecoder('windows-1252').decode(await Bun.file(DEMO).bytes());
  pem = await Bun.file(KEY).text();
});
/** a copy of the demo file with one change, re-declared as UTF-8 */
const variant = (change: (xml: string) => string) => new TextEncoder().encode(change(demoText).replace('encoding="Windows-1252"', 'encoding="UTF-8"'));
const parse = (bytes: Uint8Array, key: string | null = pem) =>
  parseSaft((async function* () {
    for (let i = 0; i < bytes.length; i += 4096) yield bytes.subarray(i, i + 4096);
  })(), { publicKeyPem: key });
const codesOf = async (change: (xml: string) => string) => (await parse(variant(change))).checks.map((c) => `${c.code}@${c.path}`);

describe('the demo SAF-T file', () => {
  test('no error, the right counts and totals, the hash chain verified with the demo key', async () => {
    const r = await parse(await Bun.file(DEMO).bytes());
    expect(r.valid).toBe(true);
    expect(r.checks.filter((c) => c.severity === 'error')).toEqual([]);
    // warnings: the file's own customer PP, and its example VAT rates (20 %, 5 % in 2017: test/saft-checks.test.ts)
    expect(r.checks.map((c) => c.code)).toEqual(['customer_nif_invalid', 'tax_rate', 'tax_rate']);
    expect(r.hash_chain).toBe('verified');
    expect(r.header).toMatchObject({ TaxRegistrationNumber: '599999993', CompanyName: 'Entidade comercial - Demonstração', FiscalYear: '2017', AuditFileVersion: '1.04_01' });
    expect(r.counts).toMatchObject({ customers: 11, suppliers: 3, products: 12, tax_table_entries: 14, invoices: 24, invoices_FT: 16, invoices_FR: 2, invoices_NC: 5, invoices_ND: 1, payments: 2, movements_of_goods: 7, working_documents: 4 });
    expect(r.totals.SalesInvoices).toEqual({ declared: { NumberOfEntries: 24, TotalDebit: 2201.7838, TotalCredit: 14918.709 }, computed: { NumberOfEntries: 24, TotalDebit: 2201.7838, TotalCredit: 14918.709 } });
    expect(r.totals.MovementOfGoods!.computed).toEqual({ NumberOfMovementLines: 13, TotalQuantityIssued: 3295.922 });
    expect((await parse(await Bun.file(DEMO).bytes(), null)).hash_chain).toBe('not_verified');
  });

  test('each injected defect is reported with its code and the document', async () => {
    expect(await codesOf((x) => x.replace('<GrossTotal>235.15</GrossTotal>', '<GrossTotal>253.15</GrossTotal>'))).toContain('hash_chain@Invoice 1T 1/2');
    expect(await codesOf((x) => x.replace('<InvoiceNo>1T 1/3</InvoiceNo>', '<InvoiceNo>1T 1/2</InvoiceNo>'))).toContain('document_number_duplicate@Invoice 1T 1/2');
    expect(await codesOf((x) => x.replace('<InvoiceNo>1T 1/3</InvoiceNo>', '<InvoiceNo>1T 1/5</InvoiceNo>'))).toContain('document_number_gap@Invoice 1T 1/5');
    const unknownCustomer = await codesOf((x) => x.replace(/(<InvoiceNo>1T 1\/2<\/InvoiceNo>[\s\S]*?<CustomerID>)[^<]+(<\/CustomerID>)/, '$1NOBODY$2'));
    expect(unknownCustomer).toContain('customer_unknown@Invoice 1T 1/2');
    const unknownProduct = await codesOf((x) => x.replace(/(<InvoiceNo>1T 1\/4<\/InvoiceNo>[\s\S]*?<ProductCode>)[^<]+(<\/ProductCode>)/, '$1NO-SUCH-PRODUCT$2'));
    expect(unknownProduct).toContain('product_unknown@Invoice 1T 1/4');
    expect(await codesOf((x) => x.replace('<TaxRegistrationNumber>599999993</TaxRegistrationNumber>', '<TaxRegistrationNumber>599999994</TaxRegistrationNumber>'))).toContain('company_nif_invalid@Header/TaxRegistrationNumber');
    expect(await codesOf((x) => x.replace('<TotalCredit>14918.709</TotalCredit>', '<TotalCredit>14000.00</TotalCredit>'))).toContain('total_amount@SalesInvoices/TotalCredit');
    expect(await codesOf((x) => x.replace('<NumberOfEntries>24</NumberOfEntries>', '<NumberOfEntries>25</NumberOfEntries>'))).toContain('total_entries@SalesInvoices/NumberOfEntries');
    expect(await codesOf((x) => x.replace(/(<InvoiceNo>1T 1\/2<\/InvoiceNo>\s*<ATCUD>)0(<\/ATCUD>)/, '$1ABC-2$2'))).toContain('atcud_format@Invoice 1T 1/2');
    expect(await codesOf((x) => x.replace(/<ProductID>[^<]*<\/ProductID>/, ''))).toContain('header_field_missing@Header/ProductID');
    // required elements of a document and of the header (SAFTPT_1_04_01.xsd): refused, never imported as 0 or nothing
    expect(await codesOf((x) => x.replace(/(<InvoiceNo>1T 1\/1<\/InvoiceNo>[\s\S]*?)<InvoiceDate>[^<]*<\/InvoiceDate>/, '$1'))).toContain('document_field_missing@Invoice 1T 1/1');
    expect(await codesOf((x) => x.replace(/(<InvoiceNo>1T 1\/1<\/InvoiceNo>[\s\S]*?)<GrossTotal>[^<]*<\/GrossTotal>/, '$1'))).toContain('document_field_missing@Invoice 1T 1/1');
    expect(await codesOf((x) => x.replace(/(<InvoiceNo>1T 1\/1<\/InvoiceNo>[\s\S]*?)<CustomerID>[^<]*<\/CustomerID>/, '$1'))).toContain('document_field_missing@Invoice 1T 1/1');
    expect(await codesOf((x) => x.replace(/(<InvoiceNo>1T 1\/1<\/InvoiceNo>\s*)<ATCUD>[^<]*<\/ATCUD>/, '$1'))).toContain('document_field_missing@Invoice 1T 1/1');
    expect(await codesOf((x) => x.replace(/<CompanyAddress>[\s\S]*?<\/CompanyAddress>/, ''))).toContain('header_field_missing@Header/CompanyAddress');
    // values the XSD does not allow, and dates the calendar does not have
    expect(await codesOf((x) => x.replace(/(<InvoiceNo>1T 1\/1<\/InvoiceNo>[\s\S]*?<InvoiceType>)[^<]*(<\/InvoiceType>)/, '$1XX$2'))).toContain('document_type@Invoice 1T 1/1');
    expect(await codesOf((x) => x.replace(/(<InvoiceNo>1T 1\/1<\/InvoiceNo>[\s\S]*?<InvoiceStatus>)[^<]*(<\/InvoiceStatus>)/, '$1Q$2'))).toContain('document_status@Invoice 1T 1/1');
    expect(await codesOf((x) => x.replace(/(<InvoiceNo>1T 1\/1<\/InvoiceNo>[\s\S]*?<InvoiceDate>)[^<]*(<\/InvoiceDate>)/, '$12017-02-31$2'))).toContain('date_invalid@Invoice 1T 1/1');
    expect(await codesOf((x) => x.replace(/<TaxAccountingBasis>[^<]*<\/TaxAccountingBasis>/, '<TaxAccountingBasis>Z</TaxAccountingBasis>'))).toContain('header_value_invalid@Header/TaxAccountingBasis');
    expect(await codesOf((x) => x.replace(/<StartDate>[^<]*<\/StartDate>/, '<StartDate>2017-02-31</StartDate>'))).toContain('header_value_invalid@Header/StartDate');
    // a month 13 is a value the calendar has not, not malformed XML: the rest of the file is still checked
    const month13 = await codesOf((x) => x.replace(/<EndDate>[^<]*<\/EndDate>/, '<EndDate>2017-13-01</EndDate>').replace(/(<InvoiceNo>1T 1\/1<\/InvoiceNo>[\s\S]*?<InvoiceDate>)[^<]*(<\/InvoiceDate>)/, '$12017-13-40$2'));
    expect(month13).toContain('header_value_invalid@Header/EndDate');
    expect(month13).toContain('date_invalid@Invoice 1T 1/1');
    expect(month13.some((c) => c.startsWith('xml_malformed'))).toBe(false);
    // an error after the list of checks is full (of warnings) still makes the file invalid
    const capped = await parseSaft((async function* () {
      yield variant((x) => x.replace(/<TaxAccountingBasis>[^<]*<\/TaxAccountingBasis>/, '<TaxAccountingBasis>Z</TaxAccountingBasis>'));
    })(), { publicKeyPem: null, maxChecks: 1 });
    expect(capped.checks).toHaveLength(1);
    expect(capped.checks[0]!.severity).toBe('warning'); // the demo's own customer_nif_invalid comes first
    expect(capped.valid).toBe(false);
    // ATCUD 0 is the demo's (2017); on a document of 2023 or later it is a warning
    const lateZero = await parse(variant((x) => x.replace(/(<InvoiceNo>1T 1\/1<\/InvoiceNo>[\s\S]*?<InvoiceDate>)[^<]*(<\/InvoiceDate>)/, '$12024-03-10$2')), null);
    expect(lateZero.checks.filter((c) => c.code === 'atcud_missing').map((c) => [c.severity, c.path])).toEqual([['warning', 'Invoice 1T 1/1']]);
    // the demo's own Windows-1252 bytes declared UTF-8: reported once, not read silently as garbled names
    const demoBytes = await Bun.file(DEMO).bytes();
    const from = new TextEncoder().encode('encoding="Windows-1252"');
    const at = new TextDecoder('latin1').decode(demoBytes.subarray(0, 300)).indexOf('encoding="Windows-1252"');
    expect(at).toBeGreaterThan(0);
    const mislabelled = new Uint8Array([...demoBytes.subarray(0, at), ...new TextEncoder().encode('encoding="UTF-8"'), ...demoBytes.subarray(at + from.length)]);
    const fromMislabelled = await parse(mislabelled);
    expect(fromMislabelled.checks.filter((c) => c.code === 'encoding')).toHaveLength(1);
    expect(fromMislabelled.valid).toBe(false);
    expect(await codesOf((x) => x.replace('urn:OECD:StandardAuditFile-Tax:PT_1.04_01"', 'urn:example"'))).toContain('not_saft@null');
    expect(await codesOf((x) => x.replace('</Header>', '</Heder>'))).toContain('xml_malformed@null');
    // elements nested deeper than any SAF-T file (each cost its depth: 100,000 of them held the event loop ~20 s)
    const deep = `<?xml version="1.0"?><AuditFile xmlns="urn:OECD:StandardAuditFile-Tax:PT_1.04_01">${'<a>'.repeat(100_000)}${'</a>'.repeat(100_000)}</AuditFile>`;
    const tooDeep = await parse(new TextEncoder().encode(deep), null);
    expect(tooDeep.checks.map((c) => c.code)).toEqual(['xml_too_deep']);
    expect(tooDeep.valid).toBe(false);
  });

  test("a document's own totals: GrossTotal = NetTotal + TaxPayable, NetTotal = its lines, amounts that are numbers", async () => {
    const totalsOf = async (change: (xml: string) => string) => (await parse(variant(change), null)).checks.filter((c) => c.code === 'document_totals');
    // a forged GrossTotal (no key given: the hash chain cannot tell)
    const forged = await totalsOf((x) => x.replace('<GrossTotal>235.15</GrossTotal>', '<GrossTotal>2351.50</GrossTotal>'));
    expect(forged).toEqual([{ code: 'document_totals', severity: 'error', message: expect.stringContaining('GrossTotal 2351.5 is not NetTotal 195.96 + TaxPayable 39.19'), path: 'Invoice 1T 1/2', line: expect.any(Number) }]);
    // NetTotal and TaxPayable moved together: the gross still adds up, the lines do not
    const net = await totalsOf((x) => x.replace(/(<InvoiceNo>1T 1\/2<\/InvoiceNo>[\s\S]*?)<TaxPayable>39.19<\/TaxPayable>\s*<NetTotal>195.96<\/NetTotal>/, '$1<TaxPayable>29.19</TaxPayable><NetTotal>205.96</NetTotal>'));
    expect(net.map((c) => [c.path, c.message])).toEqual([
      ['Invoice 1T 1/2', expect.stringContaining("NetTotal 205.96, its lines' amounts sum to 195.96")],
      ['Invoice 1T 1/2', expect.stringContaining("TaxPayable 29.19, its lines' tax (amount × TaxPercentage / 100, or TaxAmount) sums to 39.192")],
    ]);
    expect((await totalsOf((x) => x.replace('<GrossTotal>235.15</GrossTotal>', '<GrossTotal>2.3515e2</GrossTotal>'))).map((c) => c.message)).toEqual([expect.stringContaining('GrossTotal 2.3515e2 is not a decimal amount')]);
    // a cent of rounding is allowed
    expect(await totalsOf((x) => x.replace('<GrossTotal>235.15</GrossTotal>', '<GrossTotal>235.16</GrossTotal>'))).toEqual([]);
    // a line amount with a decimal comma: reported at its document, never summed as NaN (it was a 500)
    const comma = await parse(variant((x) => x.replace('<CreditAmount>180.00</CreditAmount>', '<CreditAmount>180,00</CreditAmount>')), null);
    expect(comma.valid).toBe(false);
    expect(comma.checks.filter((c) => c.code === 'document_totals').map((c) => c.message)).toContainEqual(expect.stringContaining('Line CreditAmount 180,00 is not a decimal amount'));
    expect(Number.isFinite(comma.totals.SalesInvoices!.computed.TotalCredit)).toBe(true);
    const price = await parse(variant((x) => x.replace(/<UnitPrice>([0-9]+)\.([0-9]+)<\/UnitPrice>/, '<UnitPrice>$1,$2</UnitPrice>')), null);
    expect(price.checks.filter((c) => c.code === 'document_totals').map((c) => c.message)).toContainEqual(expect.stringMatching(/Line UnitPrice \d+,\d+ is not a decimal amount/));
    // a declared total in the European style: reported, declared as null
    const declared = await parse(variant((x) => x.replace('<TotalCredit>14918.709</TotalCredit>', '<TotalCredit>14.918,71</TotalCredit>')), null);
    expect(declared.checks.find((c) => c.code === 'total_amount')).toMatchObject({ path: 'SalesInvoices/TotalCredit', message: expect.stringContaining('is not a decimal number') });
    expect(declared.totals.SalesInvoices!.declared.TotalCredit).toBeNull();
    // declared totals the XSD requires, absent: nothing checked the documents against them
    expect(await codesOf((x) => x.replace(/<NumberOfEntries>24<\/NumberOfEntries>\s*<TotalDebit>2201.7838<\/TotalDebit>\s*<TotalCredit>14918.709<\/TotalCredit>/, ''))).toEqual(expect.arrayContaining(['total_entries@SalesInvoices/NumberOfEntries', 'total_amount@SalesInvoices/TotalDebit', 'total_amount@SalesInvoices/TotalCredit']));
  });

  test('references: a movement of goods\' customer and supplier are in MasterFiles; an element of 60 000+ characters is refused, not held', async () => {
    expect(await codesOf((x) => x.replace('<CustomerID>CB23</CustomerID>', '<CustomerID>GHOST</CustomerID>'))).toContain('customer_unknown@StockMovement 1G 5A/1');
    expect(await codesOf((x) => x.replace(/(<DocumentNumber>1G 5A\/1<\/DocumentNumber>[\s\S]*?)<CustomerID>CB23<\/CustomerID>/, '$1<SupplierID>NOPE99</SupplierID>'))).toContain('supplier_unknown@StockMovement 1G 5A/1');
    const long = await parse(variant((x) => x.replace(/<HeaderComment>[^<]*<\/HeaderComment>|<\/TaxEntity>/, (m) => (m.startsWith('<HeaderComment>') ? `<HeaderComment>${'x'.repeat(200_000)}</HeaderComment>` : `${m}<HeaderComment>${'x'.repeat(200_000)}</HeaderComment>`))), null);
    expect(long.checks.find((c) => c.code === 'field_too_long')).toMatchObject({ path: 'Header/HeaderComment' });
    expect(JSON.stringify(long).length).toBeLessThan(150_000);
  });

  test('checks of the header and of section totals carry their element\'s line; the hash chain is verified only over a whole file', async () => {
    const lines = demoText.split('\n');
    const lineOf = (needle: string) => lines.findIndex((l) => l.includes(needle)) + 1;
    const total = (await parse(variant((x) => x.replace('<TotalCredit>14918.709</TotalCredit>', '<TotalCredit>14919.709</TotalCredit>')), null)).checks.find((c) => c.code === 'total_amount')!;
    expect(total.line).toBe(lineOf('<TotalCredit>14918.709</TotalCredit>'));
    const nif = (await parse(variant((x) => x.replace('<TaxRegistrationNumber>599999993</TaxRegistrationNumber>', '<TaxRegistrationNumber>599999994</TaxRegistrationNumber>')), null)).checks.find((c) => c.code === 'company_nif_invalid')!;
    expect(nif.line).toBe(lineOf('<TaxRegistrationNumber>599999993</TaxRegistrationNumber>'));
    // a missing element has no line of its own
    expect((await parse(variant((x) => x.replace(/<ProductID>[^<]*<\/ProductID>/, '')), null)).checks.find((c) => c.code === 'header_field_missing')!.line).toBeNull();
    // a truncated file, or one outside the SAF-T namespace, with a key: not verified, whatever was checked
    const whole = await Bun.file(DEMO).bytes();
    const truncated = await parse(whole.subarray(0, Math.floor(whole.length * 0.6)));
    expect(truncated.checks.map((c) => c.code)).toContain('xml_malformed');
    expect(truncated.hash_chain).toBe('not_verified');
    expect((await parse(variant((x) => x.replace('urn:OECD:StandardAuditFile-Tax:PT_1.04_01"', 'urn:example"')))).hash_chain).toBe('not_verified');
    // a document without its date: the signed text shows the date as empty, not "undefined"
    const noDate = await parse(variant((x) => x.replace(/(<InvoiceNo>1T 1\/2<\/InvoiceNo>[\s\S]*?)<InvoiceDate>[^<]*<\/InvoiceDate>/, '$1')));
    const chain = noDate.checks.find((c) => c.code === 'hash_chain')!;
    expect(chain.message).toContain('"\;2017-');
    expect(noDate.checks.some((c) => c.message.includes('undefined'))).toBe(false);
  });
});

describe('POST /v1/saft/parse', () => {
  let h: TestApp;
  let key: string;
  beforeAll(async () => {
    h = await makeApp();
    key = (await h.tenant()).api_key;
  });
  afterAll(() => h.close());
  const post = (body: Uint8Array | string, headers: Record<string, string>, k = key) => h.json('POST', '/v1/saft/parse', { key: k, rawBody: body as never, headers });
  const keyHeader = () => pem.replace(/\n/g, '');

  test('the demo file as sent: the response shape, the hash chain verified with X-Public-Key, gzip too', async () => {
    const bytes = await Bun.file(DEMO).bytes();
    const r = await post(bytes, { 'content-type': 'application/xml', 'x-public-key': keyHeader() });
    expect(r.status).toBe(200);
    expect(Value.Check(SaftParseResponse, r.body)).toBe(true);
    expect(r.body).toMatchObject({ valid: true, hash_chain: 'verified', bytes: bytes.length, header: { company_nif: '599999993', fiscal_year: '2017', software_certificate: '9999', audit_file_version: '1.04_01' } });
    expect(r.body.parse_id).toMatch(/^saft_/);
    const gz = await post(gzipSync(bytes), { 'content-type': 'application/xml', 'content-encoding': 'gzip' });
    expect(gz.body).toMatchObject({ valid: true, hash_chain: 'not_verified', counts: r.body.counts });
  });

  test('a parse answered at once is a succeeded run: its parse_id is fetched as a 202 run\'s is, by its tenant only', async () => {
    const bytes = await Bun.file(DEMO).bytes();
    const gz = gzipSync(bytes);
    const r = await post(gz, { 'content-type': 'application/xml', 'content-encoding': 'gzip' });
    expect(r.status).toBe(200);
    const run = await h.json('GET', `/v1/saft/parse/${r.body.parse_id}`, { key });
    expect(run.status).toBe(200);
    expect(run.body).toEqual({ parse_id: r.body.parse_id, status: 'succeeded', bytes: gz.length, error: null, result: r.body });
    // a file that is not SAF-T is parsed (valid: false) and kept too
    const notSaft = await post('<?xml version="1.0"?><Other/>', { 'content-type': 'application/xml' });
    expect(notSaft.body.valid).toBe(false);
    expect((await h.json('GET', `/v1/saft/parse/${notSaft.body.parse_id}`, { key })).body).toMatchObject({ status: 'succeeded', result: { valid: false } });
    const other = await h.tenant();
    expectError(await h.json('GET', `/v1/saft/parse/${r.body.parse_id}`, { key: other.api_key }), 404, 'resource_not_found');
    // a refused file (an error answer) leaves no run behind
    const { db, t } = h.ctx.database;
    const before = (await db.select().from(t.saftRuns)).length;
    expectError(await post(new Uint8Array([0x1f, 0x8b, 1, 2, 3]), { 'content-type': 'application/xml', 'content-encoding': 'gzip' }), 422, 'validation_failed');
    expect((await db.select().from(t.saftRuns)).length).toBe(before);
  });

  test('import: the invoices and payments of a valid file land in the ERP store once; a file with errors stores nothing', async () => {
    const t = await h.tenant();
    const bytes = await Bun.file(DEMO).bytes();
    const url = '/v1/saft/parse?import=true&customer_reference=acme-2017';
    const first = await h.json('POST', url, { key: t.api_key, rawBody: bytes as never, headers: { 'content-type': 'application/xml' } });
    expect(first.body.import).toEqual({ imported: true, provider: 'saft', customer_reference: 'acme-2017', invoices: 24, payments: 2, payments_cancelled: 1, reason: null });
    const firstAt = h.clock.now().getTime();
    h.clock.advance(60_000);
    const again = await h.json('POST', url, { key: t.api_key, rawBody: bytes as never, headers: { 'content-type': 'application/xml' } });
    expect(again.body.import.imported).toBe(true);
    // imported again as they were: no change in the feed (synced_at kept)
    expect((await h.json('GET', `/v1/erp/saft/invoices?customer_reference=acme-2017&synced_since=${new Date(firstAt + 1).toISOString()}`, { key: t.api_key })).body.data).toEqual([]);
    const invoices = await h.json('GET', '/v1/erp/saft/invoices?customer_reference=acme-2017&limit=100', { key: t.api_key });
    expect(invoices.status).toBe(200);
    expect(invoices.body.data.length).toBe(24); // not 48: upserted
    const ft = invoices.body.data.find((i: any) => i.number === '1T 1/2');
    expect(ft).toMatchObject({ provider: 'saft', document_type: 'FT', issue_date: '2017-09-16', gross_total_cents: 23515, status: 'N' });
    const payments = await h.json('GET', '/v1/erp/saft/transactions?customer_reference=acme-2017', { key: t.api_key });
    expect(payments.body.data.length).toBe(1); // PGT 1T1/2 is cancelled: not a transaction
    // the file's company (599999993) owns these books: another seller cannot factor their invoices
    const other = await h.json('POST', '/v1/factoring/operation', { key: t.api_key, body: { seller_nif: '599000031', modality: 'recourse', invoices: [{ number: '1T 1/2', erp: { provider: 'saft', customer_reference: 'acme-2017' } }] } });
    expect(expectError(other, 422, 'validation_failed').fields).toContainEqual({ path: 'invoices.0.erp', message: expect.stringContaining('company 599999993') });
    // a file with an error: nothing stored
    const bad = variant((x) => x.replace('<InvoiceNo>1T 1/3</InvoiceNo>', '<InvoiceNo>1T 1/2</InvoiceNo>'));
    const refused = await h.json('POST', '/v1/saft/parse?import=true&customer_reference=broken', { key: t.api_key, rawBody: bad as never, headers: { 'content-type': 'application/xml' } });
    expect(refused.body.import).toMatchObject({ imported: false, invoices: 0, payments: 0 });
    expect((await h.json('GET', '/v1/erp/saft/invoices?customer_reference=broken', { key: t.api_key })).body.data).toEqual([]);
    // another tenant sees none of it
    expect((await h.json('GET', '/v1/erp/saft/invoices', { key })).body.data).toEqual([]);
  });

  test.each([
    ['1.234,56', 'is not a decimal amount'],
    ['100000000000000000000000000000.00', 'is beyond any document'],
  ])('a total the database could not hold (%s) makes the file invalid: 200, nothing imported (not a 500)', async (total, message) => {
    const t = await h.tenant();
    const bad = variant((x) => x.replace('<GrossTotal>235.15</GrossTotal>', `<GrossTotal>${total}</GrossTotal>`));
    const r = await h.json('POST', '/v1/saft/parse?import=true&customer_reference=huge', { key: t.api_key, rawBody: bad as never, headers: { 'content-type': 'application/xml' } });
    expect(r.status).toBe(200);
    expect(r.body.valid).toBe(false);
    expect(r.body.checks).toContainEqual(expect.objectContaining({ code: 'document_totals', message: expect.stringContaining(message) }));
    expect(r.body.import).toMatchObject({ imported: false, invoices: 0 });
    expect((await h.json('GET', '/v1/erp/saft/invoices?customer_reference=huge', { key: t.api_key })).body.data).toEqual([]);
  });

  test("an import and its run are kept together: when its run cannot be kept, none of its rows are, and the database's error is not called the body's", async () => {
    const { runParse } = await import('../src/features/saft');
    const t = await h.tenant();
    const caller = { tenantId: t.tenant_id, env: 'sandbox', keyId: null, requestId: null };
    const parseId = `saft_${Bun.randomUUIDv7()}`;
    const failure = new Error('the run could not be written');
    const attempt = runParse(h.ctx, caller as never, Bun.file(DEMO).stream(), { contentEncoding: null, publicKeyPem: null, importAs: 'atomic', parseId, keep: async () => Promise.reject(failure) });
    expect(attempt).rejects.toBe(failure);
    await attempt.catch(() => {});
    expect((await h.json('GET', '/v1/erp/saft/invoices?customer_reference=atomic', { key: t.api_key })).body.data).toEqual([]);
    expect((await h.json('GET', `/v1/saft/parse/${parseId}`, { key: t.api_key })).status).toBe(404);
    // kept: the rows and the run, in one transaction
    const kept = await runParse(h.ctx, caller as never, Bun.file(DEMO).stream(), {
      contentEncoding: null,
      publicKeyPem: null,
      importAs: 'atomic',
      parseId,
      keep: async (tx, answer) => {
        await tx.insert(h.ctx.database.t.saftRuns).values({ id: parseId, tenantId: t.tenant_id, env: 'sandbox', status: 'succeeded', bytes: answer.bytes, result: JSON.stringify(answer), createdAt: h.clock.now(), finishedAt: h.clock.now() });
      },
    });
    expect(kept.import).toMatchObject({ imported: true, invoices: 24 });
    expect((await h.json('GET', '/v1/erp/saft/invoices?customer_reference=atomic&limit=100', { key: t.api_key })).body.data.length).toBe(24);
    expect((await h.json('GET', `/v1/saft/parse/${parseId}`, { key: t.api_key })).body).toMatchObject({ status: 'succeeded', result: { import: { imported: true } } });
  });

  test('a customer_reference without a visible character, or a NUL in a form field, is 422 on the field (nothing stored)', async () => {
    const bytes = await Bun.file(DEMO).bytes();
    expect(expectError(await h.json('POST', '/v1/saft/parse?import=true&customer_reference=%20', { key, rawBody: bytes as never, headers: { 'content-type': 'application/xml' } }), 422, 'validation_failed').fields.map((f: { path: string }) => f.path)).toEqual(['query.customer_reference']);
    const form = new FormData();
    form.append('import', 'true');
    form.append('customer_reference', 'a\u0000b');
    form.append('file', new Blob([bytes], { type: 'application/xml' }), 'saft.xml');
    const res = await h.call('POST', '/v1/saft/parse', { key, rawBody: form as never });
    const body = expectError({ status: res.status, body: await res.json(), headers: res.headers }, 422, 'validation_failed');
    expect(body.fields).toEqual([{ path: 'customer_reference', message: 'must not contain NUL characters' }]);
    // a field's name holding a NUL, and a value whose bytes are not UTF-8 (what a JSON body's would be refused for)
    const raw = (name: Uint8Array, value: Uint8Array) => {
      const enc = new TextEncoder();
      return Buffer.concat([enc.encode('--b1\r\nContent-Disposition: form-data; name="'), name, enc.encode('"\r\n\r\n'), value, enc.encode('\r\n--b1\r\nContent-Disposition: form-data; name="file"; filename="s.xml"\r\nContent-Type: application/xml\r\n\r\n'), bytes, enc.encode('\r\n--b1--\r\n')]);
    };
    const send = async (b: Uint8Array) => {
      const r = await h.call('POST', '/v1/saft/parse', { key, rawBody: b as never, headers: { 'content-type': 'multipart/form-data; boundary=b1' } });
      return expectError({ status: r.status, body: await r.json(), headers: r.headers }, 422, 'validation_failed').fields;
    };
    expect(await send(raw(new TextEncoder().encode('cust\u0000omer_reference'), new TextEncoder().encode('x')))).toEqual([{ path: 'cust\\0omer_reference', message: 'must not contain NUL characters' }]);
    expect(await send(raw(new TextEncoder().encode('customer_reference'), new Uint8Array([0x61, 0xff, 0x62])))).toEqual([{ path: 'customer_reference', message: 'must be valid UTF-8' }]);
  });

  test('errors: JSON or another type, an unknown encoding, damaged gzip, a bad X-Public-Key; scope', async () => {
    expectError(await h.json('POST', '/v1/saft/parse', { key, body: { file: 'x' } }), 415, 'unsupported_media_type');
    expect(expectError(await post('<x/>', { 'content-type': 'text/plain' }), 415, 'unsupported_media_type').message).toContain('application/xml, text/xml or multipart/form-data');
    expectError(await post('<x/>', { 'content-type': 'application/xml', 'content-encoding': 'br' }), 415, 'unsupported_media_type');
    const maybe = await h.json('POST', '/v1/saft/parse?import=maybe', { key, rawBody: '<x/>' as never, headers: { 'content-type': 'application/xml' } });
    expect(expectError(maybe, 422, 'validation_failed').fields).toEqual([{ path: 'query.import', message: 'must be true or false' }]);
    expect(expectError(await post('not gzip', { 'content-type': 'application/xml', 'content-encoding': 'gzip' }), 422, 'validation_failed').fields[0].path).toBe('(body)');
    expect(expectError(await post('<x/>', { 'content-type': 'application/xml', 'x-public-key': 'not a key!' }), 422, 'validation_failed').fields[0].path).toBe('header.X-Public-Key');
    // a key that loads but is not RSA (SAF-T hashes are RSA-SHA1): refused, not a file of altered documents
    const { generateKeyPairSync } = await import('node:crypto');
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(expectError(await post('<x/>', { 'content-type': 'application/xml', 'x-public-key': ec.replace(/\n/g, '') }), 422, 'validation_failed').fields).toEqual([{ path: 'header.X-Public-Key', message: 'not an RSA public key' }]);
    // the document names the header and both XML types
    const op = (await h.json('GET', '/openapi.json')).body.paths['/v1/saft/parse'].post;
    expect(op.parameters.map((p: any) => `${p.in}:${p.name}`)).toContain('header:X-Public-Key');
    expect(Object.keys(op.requestBody.content)).toEqual(['application/xml', 'text/xml', 'multipart/form-data']);
    // base64 that is not a key: the request's fault, not the file's (a good file was reported invalid)
    expect(expectError(await post('<x/>', { 'content-type': 'application/xml', 'x-public-key': 'MIIBIjANBgkq' }), 422, 'validation_failed').fields).toEqual([{ path: 'header.X-Public-Key', message: 'not a PEM public key' }]);
    const notSaft = await post('<?xml version="1.0"?><x/>', { 'content-type': 'application/xml' });
    expect(notSaft.body).toMatchObject({ valid: false, checks: [expect.objectContaining({ code: 'not_saft' })] });
    const narrow = await h.tenant({ scopes: ['score'] });
    expectError(await post('<x/>', { 'content-type': 'application/xml' }, narrow.api_key), 403, 'insufficient_scope');
  });
});

describe('large files: 202 and a run to poll', () => {
  let h: TestApp;
  let key: string;
  beforeAll(async () => {
    h = await makeApp({ SAFT_SYNC_MAX_BYTES: '1000' }); // the demo file (145 kB) counts as large here
    key = (await h.tenant()).api_key;
  });
  afterAll(() => h.close());

  test('202 with Location; the job parses the stored file (gzip and import too); the upload is removed; other tenants see nothing', async () => {
    const bytes = await Bun.file(DEMO).bytes();
    const gz = gzipSync(bytes);
    // (a client sends Content-Length; a Request built in the test has to say it)
    const posted = await h.json('POST', '/v1/saft/parse?import=true&customer_reference=big', { key, rawBody: gz as never, headers: { 'content-type': 'application/xml', 'content-encoding': 'gzip', 'content-length': String(gz.length), 'x-public-key': pem.replace(/\n/g, '') } });
    expect(posted.status).toBe(202);
    expect(posted.body).toMatchObject({ status: 'queued', result: null, error: null });
    expect(posted.headers.get('location')).toBe(`/v1/saft/parse/${posted.body.parse_id}`);
    let run: any;
    for (let i = 0; i < 200; i++) {
      run = (await h.json('GET', `/v1/saft/parse/${posted.body.parse_id}`, { key })).body;
      if (run.status === 'succeeded' || run.status === 'failed') break;
      await Bun.sleep(25);
    }
    expect(run.status).toBe('succeeded');
    expect(run.result).toMatchObject({ parse_id: posted.body.parse_id, valid: true, hash_chain: 'verified', counts: { invoices: 24 }, import: { imported: true, invoices: 24, payments: 2 } });
    expect((await h.json('GET', '/v1/erp/saft/invoices?customer_reference=big&limit=100', { key })).body.data.length).toBe(24);
    const { db, t } = h.ctx.database;
    // the stored file is dropped once its run is kept (a few rows a transaction, right after)
    let left = await db.select().from(t.saftChunks);
    for (let i = 0; i < 200 && left.length; i++) {
      await Bun.sleep(25);
      left = await db.select().from(t.saftChunks);
    }
    expect(left).toEqual([]);
    const other = await h.tenant();
    expectError(await h.json('GET', `/v1/saft/parse/${posted.body.parse_id}`, { key: other.api_key }), 404, 'resource_not_found');
    expectError(await h.json('GET', '/v1/saft/parse/nope', { key }), 404, 'resource_not_found');
  });

  test('a large file that is not SAF-T: the run succeeds with valid: false', async () => {
    const text = `<?xml version="1.0"?><x>${'y'.repeat(5000)}</x>`;
    const posted = await h.json('POST', '/v1/saft/parse', { key, rawBody: text as never, headers: { 'content-type': 'application/xml', 'content-length': String(text.length) } });
    expect(posted.status).toBe(202);
    let run: any;
    for (let i = 0; i < 200; i++) {
      run = (await h.json('GET', `/v1/saft/parse/${posted.body.parse_id}`, { key })).body;
      if (run.status === 'succeeded' || run.status === 'failed') break;
      await Bun.sleep(25);
    }
    expect(run).toMatchObject({ status: 'succeeded', result: { valid: false, checks: [expect.objectContaining({ code: 'not_saft' })] } });
  });
});


describe('multipart uploads', () => {
  let h: TestApp;
  let key: string;
  beforeAll(async () => {
    h = await makeApp({ SAFT_MAX_BYTES: '200000' });
    key = (await h.tenant()).api_key;
  });
  afterAll(() => h.close());
  const send = (m: { bytes: Uint8Array; contentType: string }, path = '/v1/saft/parse', k = key) =>
    h.json('POST', path, { key: k, rawBody: m.bytes as never, headers: { 'content-type': m.contentType } });

  test('the file part with the key and import as fields: verified and imported; a .gz file is gunzipped', async () => {
    const bytes = await Bun.file(DEMO).bytes();
    const r = await send(await multipart([['public_key', pem], ['import', 'true'], ['customer_reference', 'form'], ['file', new Blob([bytes], { type: 'application/xml' }), 'demo.xml']]));
    expect(r.status).toBe(200);
    expect(Value.Check(SaftParseResponse, r.body)).toBe(true);
    expect(r.body).toMatchObject({ valid: true, hash_chain: 'verified', bytes: bytes.length, import: { imported: true, customer_reference: 'form', invoices: 24 } });
    // an octet-stream part named .gz (what `curl -F file=@x.xml.gz` sends)
    const gz = await send(await multipart([['file', new Blob([gzipSync(bytes)], { type: 'application/octet-stream' }), 'demo.xml.gz']]));
    expect(gz.body).toMatchObject({ valid: true, hash_chain: 'not_verified', counts: r.body.counts });
  });

  test('errors: no file part, an unknown or bad field, a bad key field, a file above SAFT_MAX_BYTES, no boundary', async () => {
    const noFile = await send(await multipart([['public_key', pem]]));
    expect(expectError(noFile, 422, 'validation_failed').fields).toEqual([{ path: 'file', message: expect.stringContaining('file part') }]);
    // a file part without a byte is empty, as an empty body is (it was parsed: 200, xml_malformed)
    const emptyPart = await send(await multipart([['import', 'true'], ['file', new Blob([], { type: 'application/xml' }), 'empty.xml']]));
    expect(expectError(emptyPart, 422, 'validation_failed').fields).toEqual([{ path: 'file', message: expect.stringContaining('is empty') }]);
    const xml = new Blob(['<x/>'], { type: 'application/xml' });
    expect(expectError(await send(await multipart([['colour', 'red'], ['file', xml, 'x.xml']])), 422, 'validation_failed').fields[0].path).toBe('colour');
    expect(expectError(await send(await multipart([['import', 'yes'], ['file', xml, 'x.xml']])), 422, 'validation_failed').fields[0].path).toBe('import');
    expect(expectError(await send(await multipart([['public_key', 'not a key!'], ['file', xml, 'x.xml']])), 422, 'validation_failed').fields[0].path).toBe('public_key');
    const big = new Blob([`<?xml version="1.0"?><x>${'y'.repeat(250_000)}</x>`], { type: 'application/xml' });
    expectError(await send(await multipart([['file', big, 'big.xml']])), 413, 'payload_too_large');
    expect(expectError(await h.json('POST', '/v1/saft/parse', { key, rawBody: 'x' as never, headers: { 'content-type': 'multipart/form-data' } }), 422, 'validation_failed').fields[0].path).toBe('(body)');
    // the refused calls stored nothing: only the first test's import is there
    expect((await h.json('GET', '/v1/erp/saft/invoices?limit=100', { key })).body.data.length).toBe(24);
  });

  test('a file above SAFT_MAX_BYTES sent chunked (no Content-Length) is refused with 413 as it streams', async () => {
    const chunk = new TextEncoder().encode(`<y>${'z'.repeat(8192)}</y>`);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('<?xml version="1.0"?><x>'));
      },
      pull(c) {
        if (sent > 400_000) return c.close();
        sent += chunk.length;
        c.enqueue(chunk);
      },
    });
    const res = await h.app.handle(new Request('http://localhost/v1/saft/parse', { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/xml' }, body }));
    const r = { status: res.status, body: await res.json(), headers: res.headers };
    expectError(r, 413, 'payload_too_large');
    expect(sent).toBeLessThan(400_000); // the rest was not read
  });

  test('a chunked body (no Content-Length) that ends without a byte is empty: 422 on (body)', async () => {
    const body = new ReadableStream<Uint8Array>({ start: (c) => (c.enqueue(new Uint8Array(0)), c.close()) });
    const res = await h.app.handle(new Request('http://localhost/v1/saft/parse', { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/xml' }, body }));
    const r = { status: res.status, body: await res.json(), headers: res.headers };
    expect(expectError(r, 422, 'validation_failed').fields).toEqual([{ path: '(body)', message: expect.stringContaining('is empty') }]);
  });
});

describe('a background run whose worker died', () => {
  let h: TestApp;
  let key: string;
  beforeAll(async () => {
    h = await makeApp({ SAFT_SYNC_MAX_BYTES: '1000', SAFT_STALL_MS: '1000' }, { workers: false });
    key = (await h.tenant()).api_key;
  });
  afterAll(() => h.close());

  test('is retried from the start of its file by the recovery sweep; the dead worker cannot write over it; three deaths fail it', async () => {
    const { processSaftRun, recoverSaftRuns } = await import('../src/features/saft');
    const { db, t } = h.ctx.database;
    const { eq } = await import('drizzle-orm');
    const bytes = await Bun.file(DEMO).bytes();
    const posted = await h.json('POST', '/v1/saft/parse?import=true&customer_reference=resumed', { key, rawBody: bytes as never, headers: { 'content-type': 'application/xml', 'content-length': String(bytes.length) } });
    expect(posted.status).toBe(202);
    const id = posted.body.parse_id;
    // a worker claimed it and died: running, a heartbeat from long ago
    await db.update(t.saftRuns).set({ status: 'running', attempts: 1, heartbeatAt: new Date(h.ctx.clock.now().getTime() - 5_000) }).where(eq(t.saftRuns.id, id));
    expect((await h.json('GET', `/v1/saft/parse/${id}`, { key })).body.status).toBe('running');
    const queued: string[] = [];
    const enqueue = h.ctx.jobs.enqueue.bind(h.ctx.jobs);
    h.ctx.jobs.enqueue = (async (name: string, data: any, o?: any) => {
      queued.push(`${name}:${data.runId}:${o?.jobId}`);
    }) as never;
    try {
      expect(await recoverSaftRuns(h.ctx)).toEqual({ requeued: 1, failed: 0 });
    } finally {
      h.ctx.jobs.enqueue = enqueue;
    }
    expect(queued).toEqual([`saft.parse:${id}:${id}_a1`]);
    await processSaftRun(h.ctx, id);
    const run = (await h.json('GET', `/v1/saft/parse/${id}`, { key })).body;
    expect(run).toMatchObject({ status: 'succeeded', result: { valid: true, import: { imported: true, invoices: 24 } } });
    expect((await db.select().from(t.saftRuns).where(eq(t.saftRuns.id, id)))[0]!.attempts).toBe(2);
    expect((await h.json('GET', '/v1/erp/saft/invoices?customer_reference=resumed&limit=100', { key })).body.data.length).toBe(24);
    expect(await db.select().from(t.saftChunks).where(eq(t.saftChunks.runId, id))).toEqual([]);
    // a run that is not stalled is not taken over
    const other = await h.json('POST', '/v1/saft/parse', { key, rawBody: bytes as never, headers: { 'content-type': 'application/xml', 'content-length': String(bytes.length) } });
    await db.update(t.saftRuns).set({ status: 'running', attempts: 1, heartbeatAt: h.ctx.clock.now() }).where(eq(t.saftRuns.id, other.body.parse_id));
    await processSaftRun(h.ctx, other.body.parse_id);
    expect((await h.json('GET', `/v1/saft/parse/${other.body.parse_id}`, { key })).body.status).toBe('running');
    // the third death: failed with a message, the upload removed
    await db.update(t.saftRuns).set({ attempts: 3, heartbeatAt: new Date(h.ctx.clock.now().getTime() - 5_000) }).where(eq(t.saftRuns.id, other.body.parse_id));
    expect(await recoverSaftRuns(h.ctx)).toEqual({ requeued: 0, failed: 1 });
    const failed = (await h.json('GET', `/v1/saft/parse/${other.body.parse_id}`, { key })).body;
    expect(failed).toMatchObject({ status: 'failed', result: null, error: expect.stringContaining('send the file again') });
    expect(await db.select().from(t.saftChunks).where(eq(t.saftChunks.runId, other.body.parse_id))).toEqual([]);
  });

  test("a finished run's file is dropped a few rows at a time; rows left by a process that stopped meanwhile go at the next sweep", async () => {
    const { processSaftRun, recoverSaftRuns } = await import('../src/features/saft');
    const { db, t } = h.ctx.database;
    const { eq } = await import('drizzle-orm');
    const bytes = await Bun.file(DEMO).bytes();
    const posted = await h.json('POST', '/v1/saft/parse', { key, rawBody: bytes as never, headers: { 'content-type': 'application/xml', 'content-length': String(bytes.length) } });
    const id = posted.body.parse_id;
    // rows as a file of several MiB leaves them (more than one transaction's worth), the first one real
    const [first] = await db.select().from(t.saftChunks).where(eq(t.saftChunks.runId, id));
    for (let seq = 1; seq <= 9; seq++) await db.insert(t.saftChunks).values({ id: `${id}:x${seq}`, runId: id, seq: 1000 + seq, data: first!.data.slice(0, 4) });
    await processSaftRun(h.ctx, id);
    expect((await h.json('GET', `/v1/saft/parse/${id}`, { key })).body.status).toBe('succeeded');
    expect(await db.select().from(t.saftChunks).where(eq(t.saftChunks.runId, id))).toEqual([]);
    // a finished run whose rows remain (its process stopped while dropping them): the sweep drops them
    await db.insert(t.saftChunks).values({ id: `${id}:left`, runId: id, seq: 5000, data: 'AAAA' });
    expect(await recoverSaftRuns(h.ctx)).toEqual({ requeued: 0, failed: 0 });
    expect(await db.select().from(t.saftChunks).where(eq(t.saftChunks.runId, id))).toEqual([]);
  });
});

describe('the background path stores and reads its rows without making garbage of them', () => {
  test("a series' numbers, kept as a run: duplicates and gaps as a Set of every number seen tells them", async () => {
    const { SeriesNumbers } = await import('../src/features/saft/parser');
    // what it replaced: every number seen, and the last
    const reference = () => {
      const seen = new Map<string, { last: number; all: Set<number> }>();
      return (key: string, n: number) => {
        const s = seen.get(key) ?? { last: 0, all: new Set<number>() };
        seen.set(key, s);
        const verdict = s.all.has(n) ? 'duplicate' : s.last && n !== s.last + 1 ? 'gap' : 'ok';
        s.all.add(n);
        s.last = n;
        return verdict;
      };
    };
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let round = 0; round < 300; round++) {
      const series = new SeriesNumbers();
      const expected = reference();
      const next = new Map<string, number>();
      for (let step = 0; step < 60; step++) {
        const key = `SalesInvoices|FT ${Math.floor(random() * 3)}`;
        const last = next.get(key) ?? Math.floor(random() * 3); // some series start at 0 or 2
        const r = random();
        // mostly the next number; else a duplicate, a gap, a step back, or a number past 2^53
        const n = r < 0.75 ? last : r < 0.83 ? Math.max(0, last - 1) : r < 0.9 ? last + 1 + Math.floor(random() * 4) : r < 0.97 ? Math.floor(random() * last) : 2 ** 53 + Math.floor(random() * 4);
        next.set(key, n + 1);
        const i = series.index(key);
        const verdict = series.seen(i, n) ? 'duplicate' : series.last(i) && n !== series.last(i) + 1 ? 'gap' : 'ok';
        series.add(i, n);
        expect(`${round}/${step} ${key} ${n}: ${verdict}`).toBe(`${round}/${step} ${key} ${n}: ${expected(key, n)}`);
      }
    }
  });

  test("a row's base64 text written as bytes is Buffer's", async () => {
    const { base64Into } = await import('../src/features/saft');
    const bytes = new Uint8Array(3000).map((_, i) => (i * 7919) % 251);
    const out = new Uint8Array(4004);
    for (const length of [0, 1, 2, 3, 4, 5, 6, 299, 1000, 1001, 1002, 3000]) {
      const n = base64Into(bytes.subarray(0, length), out);
      expect(Buffer.from(out.subarray(0, n)).toString('latin1')).toBe(Buffer.from(bytes.subarray(0, length)).toString('base64'));
    }
  });

  let h: TestApp;
  let key: string;
  beforeAll(async () => {
    h = await makeApp({ SAFT_SYNC_MAX_BYTES: '1000' }, { workers: false });
    key = (await h.tenant()).api_key;
  });
  afterAll(() => h.close());
  /** the demo file with a comment of ~2.5 MB after the root's opening, its characters of 1 and 2 bytes (some cut between two rows) */
  const padded = () => variant((xml) => xml.replace(/(<AuditFile[^>]*>)/, `$1<!-- ${'ação '.repeat(420_000)} -->`));
  const upload = async (bytes: Uint8Array) => {
    const posted = await h.json('POST', '/v1/saft/parse', { key, rawBody: bytes as never, headers: { 'content-type': 'application/xml', 'content-length': String(bytes.length), 'x-public-key': pem.replace(/\n/g, '') } });
    expect(posted.status).toBe(202);
    return posted.body.parse_id as string;
  };
  const result = async (id: string) => (await h.json('GET', `/v1/saft/parse/${id}`, { key })).body;

  test('rows of 1 MiB, each the base64 text of its bytes (SQLite: TEXT, as before), read back into one buffer: the file parses whole', async () => {
    const { processSaftRun } = await import('../src/features/saft');
    const { eq, sql } = await import('drizzle-orm');
    const bytes = padded();
    const id = await upload(bytes);
    const { db, t, dialect } = h.ctx.database;
    const c = t.saftChunks;
    const rows = await db.select({ seq: c.seq, data: c.data, type: sql<string>`${dialect === 'sqlite' ? sql`typeof(${c.data})` : sql`'text'`}` }).from(c).where(eq(c.runId, id)).orderBy(c.seq);
    expect(rows.length).toBe(Math.ceil(bytes.length / 2 ** 20));
    for (const row of rows) expect(row).toEqual({ seq: row.seq, data: Buffer.from(bytes.subarray(row.seq * 2 ** 20, (row.seq + 1) * 2 ** 20)).toString('base64'), type: 'text' });
    await processSaftRun(h.ctx, id);
    expect(await result(id)).toMatchObject({ status: 'succeeded', result: { valid: true, hash_chain: 'verified', bytes: bytes.length, counts: { invoices: 24 } } });
  });

  test('a row larger than 1 MiB (an upload stored before rows were) is read as well', async () => {
    const { processSaftRun } = await import('../src/features/saft');
    const { eq } = await import('drizzle-orm');
    const bytes = padded();
    const id = await upload(bytes);
    const { t, withTx } = h.ctx.database;
    await withTx(async (tx) => {
      await tx.delete(t.saftChunks).where(eq(t.saftChunks.runId, id));
      await tx.insert(t.saftChunks).values({ id: `${id}:0`, runId: id, seq: 0, data: Buffer.from(bytes).toString('base64') });
    });
    await processSaftRun(h.ctx, id);
    expect(await result(id)).toMatchObject({ status: 'succeeded', result: { valid: true, hash_chain: 'verified', bytes: bytes.length, counts: { invoices: 24 } } });
  });
});
