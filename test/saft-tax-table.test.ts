/**
 * SAF-T: each line's Tax against the file's own MasterFiles/TaxTable (tax_unknown, tax_table_rate:
 * errors, as a reference to a customer or a product not in MasterFiles is), judged at the end for
 * lines read before the table; a line's TaxExemptionCode against the XSD's pattern (an error) and
 * the AT's table of exemption reasons (a warning, once a code). Through POST /v1/saft/parse, as an
 * integrator gets them: status, checks with their code, severity and path, and no import of a file
 * with errors.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { SaftParseResponse } from '../src/features/saft';
import { makeApp, ROOT, type TestApp } from './helpers';
setDefaultTimeout(30_000);

const DEMO = join(ROOT, 'fixtures/saft/saft_idemo599999999.xml');
let demoText = '';
let demoBytes = new Uint8Array(0);
/** a copy of the demo file with one change, re-declared as UTF-8 */
const variant = (change: (xml: string) => string) => new TextEncoder().encode(change(demoText).replace('encoding="Windows-1252"', 'encoding="UTF-8"'));
/** a change within one invoice only */
const inInvoice = (no: string, change: (invoice: string) => string) => (xml: string) => {
  const at = xml.indexOf(`<InvoiceNo>${no}</InvoiceNo>`);
  const end = xml.indexOf('</Invoice>', at);
  return xml.slice(0, at) + change(xml.slice(at, end)) + xml.slice(end);
};
/** the demo's TaxTable element, whole */
const taxTable = (xml: string) => xml.slice(xml.indexOf('<TaxTable>'), xml.indexOf('</TaxTable>') + '</TaxTable>'.length);

let h: TestApp;
let key: string;
beforeAll(async () => {
  demoBytes = await Bun.file(DEMO).bytes();
  demoText = new TextDecoder('windows-1252').decode(demoBytes);
  h = await makeApp();
  key = (await h.tenant()).api_key;
});
afterAll(() => h.close());
const post = (bytes: Uint8Array, url = '/v1/saft/parse') => h.json('POST', url, { key, rawBody: bytes as never, headers: { 'content-type': 'application/xml' } });
type Check = { code: string; severity: string; message: string; path: string | null; line: number | null };
const errorsOf = (body: { checks: Check[] }): Check[] => body.checks.filter((c) => c.severity === 'error');

describe("a line's tax against the file's TaxTable", () => {
  test('the demo file: every line has its entry (no new check); its TaxTable is read', async () => {
    const r = await post(demoBytes);
    expect(r.status).toBe(200);
    expect(Value.Check(SaftParseResponse, r.body)).toBe(true);
    expect(r.body.valid).toBe(true);
    expect(r.body.checks.map((c: { code: string }) => c.code)).toEqual(['customer_nif_invalid', 'tax_rate', 'tax_rate']);
    expect(r.body.counts.tax_table_entries).toBe(14);
  });

  test("a line's tax with no entry (IVA PT-AC NOR) is an error on the line's Tax; a file with it is not imported", async () => {
    // 1T 1/1: one line, IVA PT NOR 20 % (the demo's table has PT-AC only for NS)
    const azores = inInvoice('1T 1/1', (x) => x.replace('<TaxCountryRegion>PT</TaxCountryRegion>', '<TaxCountryRegion>PT-AC</TaxCountryRegion>'));
    const r = await post(variant(azores), '/v1/saft/parse?import=true&customer_reference=tax-unknown');
    expect(r.status).toBe(200);
    expect(Value.Check(SaftParseResponse, r.body)).toBe(true);
    expect(r.body.valid).toBe(false);
    expect(errorsOf(r.body)).toEqual([
      { code: 'tax_unknown', severity: 'error', message: expect.stringContaining('Invoice 1T 1/1: Line 1 Tax IVA PT-AC NOR has no TaxTableEntry in MasterFiles/TaxTable'), path: 'Invoice 1T 1/1/Line 1/Tax', line: expect.any(Number) },
    ]);
    expect(r.body.import).toMatchObject({ imported: false, invoices: 0 });
    // its line is the file's line of the Tax's TaxType (an accountant lands on the Tax, not on </Line>)
    const lines = new TextDecoder().decode(variant(azores)).split('\n');
    expect(lines[errorsOf(r.body)[0]!.line! - 1]).toContain('<TaxType>IVA</TaxType>');
    expect((await h.json('GET', '/v1/erp/saft/invoices?customer_reference=tax-unknown', { key })).body.data).toEqual([]);
    // a TaxCode the table does not have (IVA PT INT), in another section too (a working document's line)
    const intermediate = (xml: string) => xml.replace(/(<DocumentNumber>CGF C1\/1<\/DocumentNumber>[\s\S]*?<TaxCode>)\w+(<\/TaxCode>)/, '$1INT$2');
    const wd = await post(variant(intermediate));
    expect(errorsOf(wd.body).map((c) => `${c.code}@${c.path}`)).toEqual(['tax_unknown@WorkDocument CGF C1/1/Line 1/Tax']);
  });

  test("a line's TaxPercentage that is none of its entry's rates is an error on the TaxPercentage (23 where IVA PT NOR is 16 or 20)", async () => {
    // 23 % of 23.3938 is 5.38: the document's own totals agree, only the table does not
    const at23 = inInvoice('1T 1/1', (x) => x.replace('<TaxPercentage>20</TaxPercentage>', '<TaxPercentage>23</TaxPercentage>').replace('<TaxPayable>4.68</TaxPayable>', '<TaxPayable>5.38</TaxPayable>').replace('<GrossTotal>28.07</GrossTotal>', '<GrossTotal>28.77</GrossTotal>'));
    const r = await post(variant(at23));
    expect(r.status).toBe(200);
    expect(r.body.valid).toBe(false);
    expect(errorsOf(r.body)).toEqual([
      { code: 'tax_table_rate', severity: 'error', message: expect.stringContaining("Line 1 TaxPercentage 23 differs from its TaxTableEntry's (IVA PT NOR: 16 % or 20 %)"), path: 'Invoice 1T 1/1/Line 1/Tax/TaxPercentage', line: expect.any(Number) },
    ]);
    expect(new TextDecoder().decode(variant(at23)).split('\n')[errorsOf(r.body)[0]!.line! - 1]).toContain('<TaxPercentage>23</TaxPercentage>');
    // the same rate written otherwise is the same rate; given its entry, the file is valid again
    expect((await post(variant(inInvoice('1T 1/1', (x) => x.replace('<TaxPercentage>20</TaxPercentage>', '<TaxPercentage>20.00</TaxPercentage>'))))).body.valid).toBe(true);
    const entry23 = (xml: string) => xml.replace('</TaxTable>', '<TaxTableEntry><TaxType>IVA</TaxType><TaxCountryRegion>PT</TaxCountryRegion><TaxCode>NOR</TaxCode><Description>Normal</Description><TaxPercentage>23</TaxPercentage></TaxTableEntry></TaxTable>');
    const withEntry = await post(variant((x) => at23(entry23(x))));
    expect(errorsOf(withEntry.body)).toEqual([]);
    // an entry with a fixed TaxAmount beside its rate is named in the message too (IS PT 23.1: 0.5 % or 1.00)
    const stamp = (xml: string) => {
      const docs = xml.indexOf('</MasterFiles>');
      return xml.slice(0, docs) + xml.slice(docs).replace(/<TaxCode>1\.1<\/TaxCode>(\s*<TaxPercentage>0\.8<\/TaxPercentage>)/, '<TaxCode>23.1</TaxCode>$1');
    };
    const stamped = errorsOf((await post(variant(stamp))).body).filter((c) => c.code === 'tax_table_rate');
    expect(stamped.map((c) => c.message)).toEqual([expect.stringContaining("TaxPercentage 0.8 differs from its TaxTableEntry's (IS PT 23.1: 0.5 %, or a fixed TaxAmount)")]);
    // a line's fixed TaxAmount is the line's own tax: its entry is looked for, not its amount
    const fixed = await post(variant(inInvoice('1T 1/1', (x) => x.replace('<TaxPercentage>20</TaxPercentage>', '<TaxAmount>4.68</TaxAmount>'))));
    expect(errorsOf(fixed.body)).toEqual([]);
  });

  test('a TaxTable after the documents (not the XSD order: an error of its own): the lines are judged at the end, the same', async () => {
    // the table moved into a MasterFiles after SourceDocuments: nothing of it known while the lines are read
    const late = (xml: string) => {
      const table = taxTable(xml);
      return xml.replace(table, '').replace('</SourceDocuments>', `</SourceDocuments><MasterFiles>${table}</MasterFiles>`);
    };
    const ok = await post(variant(late));
    expect(ok.status).toBe(200);
    const order = { code: 'structure_order', severity: 'error', message: "MasterFiles comes after SourceDocuments: the XSD's order is Header, MasterFiles, GeneralLedgerEntries, SourceDocuments", path: 'MasterFiles', line: expect.any(Number) };
    expect(errorsOf(ok.body)).toEqual([order]);
    expect(ok.body.counts.tax_table_entries).toBe(14);
    const azores = inInvoice('1T 1/1', (x) => x.replace('<TaxCountryRegion>PT</TaxCountryRegion>', '<TaxCountryRegion>PT-AC</TaxCountryRegion>'));
    const bad = await post(variant((x) => late(azores(x))));
    expect(bad.body.valid).toBe(false);
    expect(errorsOf(bad.body)).toEqual([
      order,
      { code: 'tax_unknown', severity: 'error', message: expect.stringContaining('Invoice 1T 1/1: Line 1 Tax IVA PT-AC NOR has no TaxTableEntry'), path: 'Invoice 1T 1/1/Line 1/Tax', line: expect.any(Number) },
    ]);
    // the line is the invoice line's, as when the table comes first
    const first = await post(variant(azores));
    expect(bad.body.checks.find((c: { code: string }) => c.code === 'tax_unknown').line).toBe(first.body.checks.find((c: { code: string }) => c.code === 'tax_unknown').line - (taxTable(demoText).split('\n').length - 1));
  });

  test('lines kept to judge at the end are bounded (as many as the checks kept): the last one kept names how many more', async () => {
    const { parseSaft } = await import('../src/features/saft/parser');
    // a TaxTable of one unrelated entry, after the documents: every taxed line kept to judge at the end
    const oneEntry = '<MasterFiles><TaxTable><TaxTableEntry><TaxType>IS</TaxType><TaxCountryRegion>PT</TaxCountryRegion><TaxCode>ISE</TaxCode><Description>x</Description><TaxPercentage>0</TaxPercentage></TaxTableEntry></TaxTable></MasterFiles>';
    const bytes = variant((x) => x.replace(taxTable(x), '').replace('</AuditFile>', `${oneEntry}</AuditFile>`));
    const r = await parseSaft((async function* () {
      yield bytes;
    })(), { maxChecks: 8 });
    expect(r.valid).toBe(false);
    // 3 warnings and the order's error, then the first lines of IVA PT NOR (of 28), the last of them naming the others
    expect(r.checks.filter((c) => c.code === 'tax_unknown').map((c) => c.path)).toEqual(['Invoice 1T 1/1/Line 1/Tax', 'Invoice 1T 1/2/Line 1/Tax', 'Invoice 1T 1/2/Line 2/Tax', 'Invoice 1T 1/3/Line 4/Tax']);
    // the last one the answer has room for names the others (it had been cut off when the list filled first)
    expect(r.checks.at(-1)!.message).toContain('IVA PT NOR has no TaxTableEntry in MasterFiles/TaxTable (TaxType, TaxCountryRegion, TaxCode); and 24 more lines with this tax, not listed');
  });

  test('a file without a TaxTable: one error for the file, counting its taxed lines (not one a line)', async () => {
    const none = await post(variant((x) => x.replace(taxTable(x), '')));
    expect(none.status).toBe(200);
    expect(none.body.valid).toBe(false);
    expect(none.body.counts.tax_table_entries).toBe(0);
    const missing = none.body.checks.filter((c: { code: string }) => c.code === 'tax_table_missing');
    expect(missing).toEqual([{ code: 'tax_table_missing', severity: 'error', message: expect.stringMatching(/^MasterFiles has no TaxTable: the taxes of \d+ lines have no TaxTableEntry/), path: 'MasterFiles/TaxTable', line: null }]);
    expect(Number(/of (\d+) lines/.exec(missing[0].message)![1])).toBeGreaterThan(40); // every taxed line of every section
    expect(none.body.checks.filter((c: { code: string }) => c.code === 'tax_unknown' || c.code === 'tax_table_rate' || c.code === 'tax_table_unchecked')).toEqual([]);
  });
});

describe("a line's TaxExemptionCode", () => {
  test("one outside the XSD's pattern (M and two digits) is an error on its field", async () => {
    const r = await post(variant((x) => x.replace('<TaxExemptionCode>M11</TaxExemptionCode>', '<TaxExemptionCode>X11</TaxExemptionCode>')));
    expect(r.status).toBe(200);
    expect(Value.Check(SaftParseResponse, r.body)).toBe(true);
    expect(r.body.valid).toBe(false);
    expect(errorsOf(r.body)).toEqual([
      { code: 'tax_exemption_code', severity: 'error', message: expect.stringContaining('Line 2 TaxExemptionCode "X11" is not the XSD\'s'), path: 'Invoice 1R RE1/1/Line 2/TaxExemptionCode', line: expect.any(Number) },
    ]);
    // an empty one is not the XSD's either (its reason still says why: no tax_exemption_missing)
    const empty = await post(variant((x) => x.replace('<TaxExemptionCode>M11</TaxExemptionCode>', '<TaxExemptionCode></TaxExemptionCode>')));
    expect(errorsOf(empty.body).map((c) => `${c.code}@${c.path}`)).toEqual(['tax_exemption_code@Invoice 1R RE1/1/Line 2/TaxExemptionCode']);
    // spaces around a code: the XSD's pattern is on the text as written (xs:string keeps them)
    for (const padded of [' M11', 'M11 ']) {
      const sp = await post(variant((x) => x.replace('<TaxExemptionCode>M11</TaxExemptionCode>', `<TaxExemptionCode>${padded}</TaxExemptionCode>`)));
      expect(errorsOf(sp.body).map((c) => [c.code, c.path, c.message.includes('has spaces around it')])).toEqual([['tax_exemption_code', 'Invoice 1R RE1/1/Line 2/TaxExemptionCode', true]]);
    }
  });

  test("a well-formed code not in the AT's table is a warning on its field, once a code; a repealed one says so", async () => {
    const m77 = (x: string) => x.replaceAll('<TaxExemptionCode>M11</TaxExemptionCode>', '<TaxExemptionCode>M77</TaxExemptionCode>');
    const r = await post(variant(m77));
    expect(r.status).toBe(200);
    expect(r.body.valid).toBe(true);
    // the demo carries M11 twice: reported once
    expect(r.body.checks.filter((c: { code: string }) => c.code.startsWith('tax_exemption'))).toEqual([
      { code: 'tax_exemption_code_unknown', severity: 'warning', message: expect.stringContaining("TaxExemptionCode M77 is not in the AT's table of exemption reasons"), path: 'Invoice 1R RE1/1/Line 2/TaxExemptionCode', line: expect.any(Number) },
    ]);
    const m08 = await post(variant((x) => x.replace('<TaxExemptionCode>M11</TaxExemptionCode>', '<TaxExemptionCode>M08</TaxExemptionCode>')));
    expect(m08.body.checks.filter((c: { code: string }) => c.code === 'tax_exemption_code_unknown')).toEqual([expect.objectContaining({ severity: 'warning', message: expect.stringContaining('M08 is a repealed code') })]);
    // the codes of the AT's table pass: M26 (2023), M44, M99
    for (const code of ['M26', 'M44', 'M99']) {
      const ok = await post(variant((x) => x.replace('<TaxExemptionCode>M11</TaxExemptionCode>', `<TaxExemptionCode>${code}</TaxExemptionCode>`)));
      expect(ok.body.checks.filter((c: { code: string }) => c.code.startsWith('tax_exemption'))).toEqual([]);
    }
  });
});

/**
 * A file of the demo's Header and MasterFiles (customers, products) with one invoice (1T 1/1's
 * head) whose lines are given as [TaxCode, TaxPercentage] of IS PT (stamp duty: no VAT rate
 * warnings), each of amount 0 (the document's totals stay 0), and a TaxTable of IS PT entries
 * [TaxCode, TaxPercentage]. `late`: MasterFiles after SourceDocuments, so that every line is read
 * before the TaxTable (and kept to judge at the end).
 */
function stampDutyFile(lines: [code: string, pct: string][], entries: [code: string, pct: string][], late = true) {
  const head = demoText.slice(0, demoText.indexOf('<MasterFiles>'));
  const master = demoText.slice(demoText.indexOf('<MasterFiles>'), demoText.indexOf('</MasterFiles>') + '</MasterFiles>'.length);
  const invoice = demoText.slice(demoText.indexOf('<Invoice>'), demoText.indexOf('<Line>', demoText.indexOf('<Invoice>')));
  const line = ([code, pct]: [string, string], i: number) =>
    `<Line><LineNumber>${i + 1}</LineNumber><Quantity>1</Quantity><UnitPrice>0</UnitPrice><CreditAmount>0</CreditAmount><Tax><TaxType>IS</TaxType><TaxCountryRegion>PT</TaxCountryRegion><TaxCode>${code}</TaxCode><TaxPercentage>${pct}</TaxPercentage></Tax></Line>\n`;
  const entry = ([code, pct]: [string, string]) => `<TaxTableEntry><TaxType>IS</TaxType><TaxCountryRegion>PT</TaxCountryRegion><TaxCode>${code}</TaxCode><Description>x</Description><TaxPercentage>${pct}</TaxPercentage></TaxTableEntry>\n`;
  const documents = `<SourceDocuments><SalesInvoices><NumberOfEntries>1</NumberOfEntries><TotalDebit>0</TotalDebit><TotalCredit>0</TotalCredit>${invoice}${lines.map(line).join('')}<DocumentTotals><TaxPayable>0.00</TaxPayable><NetTotal>0.00</NetTotal><GrossTotal>0.00</GrossTotal></DocumentTotals></Invoice></SalesInvoices></SourceDocuments>`;
  const masterFiles = master.replace(taxTable(master), `<TaxTable>${entries.map(entry).join('')}</TaxTable>`);
  const xml = head + (late ? documents + masterFiles : masterFiles + documents) + '</AuditFile>';
  return new TextEncoder().encode(xml.replace('encoding="Windows-1252"', 'encoding="UTF-8"'));
}
/** n distinct rates of IS PT X: 0.001, 0.002, … */
const rates = (n: number, from = 1): [string, string][] => Array.from({ length: n }, (_, i) => ['X', ((from + i) / 1000).toFixed(3)]);
const ORDER = { code: 'structure_order', severity: 'error', message: "MasterFiles comes after SourceDocuments: the XSD's order is Header, MasterFiles, GeneralLedgerEntries, SourceDocuments", path: 'MasterFiles', line: expect.any(Number) };
const PP = { code: 'customer_nif_invalid', severity: 'warning', message: 'customer PP: NIF 129999998 fails the check digit', path: 'Customer PP', line: expect.any(Number) };

describe('taxes not judged against the TaxTable, and taxes judged but not listed', () => {
  test('the file of one invoice of stamp-duty lines is valid with its TaxTable first; with it last, only the order is an error', async () => {
    const first = await post(stampDutyFile(rates(3), rates(3), false));
    expect(first.status).toBe(200);
    expect(Value.Check(SaftParseResponse, first.body)).toBe(true);
    expect(first.body.valid).toBe(true);
    expect(first.body.checks).toEqual([PP]);
    expect((await post(stampDutyFile(rates(3), rates(3)))).body.checks).toEqual([ORDER, PP]);
  });

  test(`more than 1000 distinct taxes read before the TaxTable: the lines of the ones beyond are not judged, and tax_table_unchecked (a warning) counts them`, async () => {
    // Z (no entry) first, then 999 rates of X that the table has: 1000 distinct taxes kept to judge
    const kept: [string, string][] = [['Z', '5'], ...rates(999)];
    // three lines of taxes beyond those (none in the table): not judged, counted
    const r = await post(stampDutyFile([...kept, ['Y', '7'], ['Y', '7'], ['X', '99']], rates(999)));
    expect(r.status).toBe(200);
    expect(Value.Check(SaftParseResponse, r.body)).toBe(true);
    expect(r.body.valid).toBe(false); // (the order's error and Z's)
    expect(r.body.checks).toEqual([
      ORDER,
      PP,
      { code: 'tax_unknown', severity: 'error', message: 'Invoice 1T 1/1: Line 1 Tax IS PT Z has no TaxTableEntry in MasterFiles/TaxTable (TaxType, TaxCountryRegion, TaxCode)', path: 'Invoice 1T 1/1/Line 1/Tax', line: expect.any(Number) },
      { code: 'tax_table_unchecked', severity: 'warning', message: '3 lines read before MasterFiles/TaxTable were not checked against it (more than 1000 distinct taxes)', path: 'MasterFiles/TaxTable', line: null },
    ]);
    // at 1000 distinct taxes every line is judged: X at 99 % (line 1000) is reported, and nothing is left unchecked
    const at1000 = await post(stampDutyFile([...rates(999), ['X', '99']], rates(999)));
    expect(at1000.body.checks.map((c: Check) => `${c.code}@${c.path}`)).toEqual(['structure_order@MasterFiles', 'customer_nif_invalid@Customer PP', 'tax_table_rate@MasterFiles/TaxTable']);
  });

  test('a TaxTable of more than 10000 distinct taxes (TaxType, TaxCountryRegion, TaxCode): lines are not judged against it, and tax_table_unchecked says so', async () => {
    const keys = new Set([...taxTable(demoText).matchAll(/<TaxType>([^<]*)<\/TaxType>\s*<TaxCountryRegion>([^<]*)<\/TaxCountryRegion>\s*<TaxCode>([^<]*)<\/TaxCode>/g)].map((m) => `${m[1]} ${m[2]} ${m[3]}`));
    expect(keys.size).toBe(12); // the demo's 14 entries: NOR of PT twice (16 and 20 %), …
    const grown = (extra: number) => (xml: string) =>
      xml.replace('</TaxTable>', `${Array.from({ length: extra }, (_, i) => `<TaxTableEntry><TaxType>IS</TaxType><TaxCountryRegion>PT</TaxCountryRegion><TaxCode>K${i}</TaxCode><Description>x</Description><TaxPercentage>1</TaxPercentage></TaxTableEntry>`).join('')}</TaxTable>`);
    // 1T 1/1's line with IVA PT-AC NOR: no entry
    const azores = inInvoice('1T 1/1', (x) => x.replace('<TaxCountryRegion>PT</TaxCountryRegion>', '<TaxCountryRegion>PT-AC</TaxCountryRegion>'));
    const unchecked = { code: 'tax_table_unchecked', severity: 'warning', message: 'MasterFiles/TaxTable has more than 10000 distinct taxes: lines were not checked against it', path: 'MasterFiles/TaxTable', line: null };
    // 10000 distinct taxes: still judged
    const at = await post(variant((x) => azores(grown(10_000 - keys.size)(x))));
    expect(at.status).toBe(200);
    expect(at.body.valid).toBe(false);
    expect(at.body.counts.tax_table_entries).toBe(14 + 10_000 - keys.size);
    expect(errorsOf(at.body).map((c) => `${c.code}@${c.path}`)).toEqual(['tax_unknown@Invoice 1T 1/1/Line 1/Tax']);
    expect(at.body.checks.filter((c: Check) => c.code === 'tax_table_unchecked')).toEqual([]);
    // one more: not judged (the file is valid: a warning), and said so once, for the file
    const beyond = await post(variant((x) => azores(grown(10_001 - keys.size)(x))));
    expect(beyond.status).toBe(200);
    expect(Value.Check(SaftParseResponse, beyond.body)).toBe(true);
    expect(beyond.body.valid).toBe(true);
    expect(errorsOf(beyond.body)).toEqual([]);
    expect(beyond.body.checks.filter((c: Check) => c.code.startsWith('tax_table') || c.code === 'tax_unknown')).toEqual([unchecked]);
    expect(beyond.body.checks.at(-1)).toEqual(unchecked);
  });

  test('a tax judged at the end whose lines were read after the places kept were used up: one error for its lines, "(not listed)", on MasterFiles/TaxTable', async () => {
    // 500 lines (as many as the checks an answer keeps) of a tax the table has: every place kept
    // is theirs; then two lines of a tax with no entry, and one of a rate its entry has not
    const r = await post(stampDutyFile([...Array.from({ length: 500 }, (): [string, string] => ['X', '0.001']), ['Z', '5'], ['Z', '5'], ['X', '7']], rates(1)));
    expect(r.status).toBe(200);
    expect(Value.Check(SaftParseResponse, r.body)).toBe(true);
    expect(r.body.valid).toBe(false);
    expect(r.body.checks).toEqual([
      ORDER,
      PP,
      { code: 'tax_unknown', severity: 'error', message: '2 lines with Tax IS PT Z 5 % are not in MasterFiles/TaxTable (not listed)', path: 'MasterFiles/TaxTable', line: null },
      { code: 'tax_table_rate', severity: 'error', message: '1 line with Tax IS PT X 7 % is not in MasterFiles/TaxTable (not listed)', path: 'MasterFiles/TaxTable', line: null },
    ]);
    // with one line fewer of the known tax, the first line of each is listed where it is (and names the other)
    const listed = await post(stampDutyFile([...Array.from({ length: 499 }, (): [string, string] => ['X', '0.001']), ['Z', '5'], ['Z', '5'], ['X', '7']], rates(1)));
    expect(errorsOf(listed.body).map((c) => [c.code, c.path, c.message.endsWith('; and 1 more line with this tax, not listed')])).toEqual([
      ['structure_order', 'MasterFiles', false],
      ['tax_unknown', 'Invoice 1T 1/1/Line 500/Tax', true],
      ['tax_table_rate', 'MasterFiles/TaxTable', false],
    ]);
  });
});
