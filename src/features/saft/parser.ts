/**
 * SAF-T (PT) 1.04_01 in one streaming pass (saxes): header, counts, declared against computed
 * totals, and the checks of REFERENCE §2 — including the hash chain when the producer's public key
 * is given. Memory holds the header, the master-file keys (and TaxTable) and one open document, never the file.
 */
import { ATCUD_REQUIRED_FROM } from '../invoice/qr';
import { createPublicKey, createVerify, type KeyObject } from 'node:crypto';
import { SaxesParser, type SaxesTagNS } from 'saxes';
import { isValidNif } from '../../lib/nif';
import { FORMAT_PATTERNS } from '../../lib/schemas';

export const SAFT_NAMESPACE = 'urn:OECD:StandardAuditFile-Tax:PT_1.04_01';
const REQUIRED_HEADER = ['AuditFileVersion', 'CompanyID', 'TaxRegistrationNumber', 'TaxAccountingBasis', 'CompanyName', 'FiscalYear', 'StartDate', 'EndDate', 'CurrencyCode', 'DateCreated', 'TaxEntity', 'ProductCompanyTaxID', 'SoftwareCertificateNumber', 'ProductID', 'ProductVersion'];

export interface SaftCheck {
  code: string;
  severity: 'error' | 'warning';
  message: string;
  path: string | null;
  line: number | null;
}

/** the document sections: element of a document, its number, date, status and line amounts */
const SECTIONS = {
  SalesInvoices: { doc: 'Invoice', number: 'InvoiceNo', date: 'InvoiceDate', status: 'InvoiceStatus', type: 'InvoiceType', party: 'CustomerID', hashed: true, partyRequired: true },
  // a movement names its customer or its supplier (the XSD's choice): neither is required alone
  MovementOfGoods: { doc: 'StockMovement', number: 'DocumentNumber', date: 'MovementDate', status: 'MovementStatus', type: 'MovementType', party: 'CustomerID', hashed: true, partyRequired: false },
  WorkingDocuments: { doc: 'WorkDocument', number: 'DocumentNumber', date: 'WorkDate', status: 'WorkStatus', type: 'WorkType', party: 'CustomerID', hashed: true, partyRequired: true },
  Payments: { doc: 'Payment', number: 'PaymentRefNo', date: 'TransactionDate', status: 'PaymentStatus', type: 'PaymentType', party: 'CustomerID', hashed: false, partyRequired: true },
} as const;
/** the values SAFTPT_1_04_01.xsd allows for each section's type and status */
const ALLOWED: Record<SectionName, { type: Set<string>; status: Set<string> }> = {
  SalesInvoices: { type: new Set('FT FS FR ND NC VD TV TD AA DA RP RE CS LD RA'.split(' ')), status: new Set('N S A R F'.split(' ')) },
  MovementOfGoods: { type: new Set('GR GT GA GC GD'.split(' ')), status: new Set('N T A F R'.split(' ')) },
  WorkingDocuments: { type: new Set('CM CC FC FO NE OU OR PF DC RP RE CS LD RA'.split(' ')), status: new Set('N A F'.split(' ')) },
  Payments: { type: new Set(['RC', 'RG']), status: new Set(['N', 'A']) },
};
const TAX_ACCOUNTING_BASIS = new Set('C E F I P R S T'.split(' '));
/** YYYY-MM-DD and a day the calendar has */
const isCalendarDate = (v: string) => FORMAT_PATTERNS.date.test(v); // (a Date of month 13 threw, and the parse stopped as malformed XML)
/** what every document of every section must carry (SAFTPT_1_04_01.xsd), besides its number, date, status, type and party */
const REQUIRED_DOCUMENT_FIELDS = ['ATCUD', 'SystemEntryDate', 'TaxPayable', 'NetTotal', 'GrossTotal'] as const;
type SectionName = keyof typeof SECTIONS;
/**
 * The XSD's SAFmonetaryType and SAFdecimalType (minInclusive 0.00): amounts, totals, quantities,
 * prices and rates are never negative (a credit note carries DebitAmount, not a negative credit).
 */
const NON_NEGATIVE = new Set(['CreditAmount', 'DebitAmount', 'GrossTotal', 'NetTotal', 'TaxPayable', 'TaxAmount', 'TaxBase', 'TaxPercentage', 'UnitPrice', 'Quantity', 'SettlementAmount', 'PaymentAmount', 'WithholdingTaxAmount', 'CurrencyAmount', 'ExchangeRate', 'TotalDebit', 'TotalCredit', 'TotalQuantityIssued', 'IECAmount', 'ClosingCreditBalance', 'ClosingDebitBalance', 'OpeningCreditBalance', 'OpeningDebitBalance']);
/**
 * Portuguese VAT rates (IVA) by TaxCountryRegion, each from the day it applied (newest first; a
 * document dated before the oldest period is not checked). A TaxPercentage outside its period's
 * rates is a warning (`tax_rate`), not an error: AT's own demo file uses 20 % and 5 % in 2017 (its
 * TaxTable says its rates are examples), and the dates below are secondary-source facts [verify].
 * PT-MA's reduced rate 4 % from 2024-10 is accepted alongside 5 % (not confirmed).
 */
const VAT_RATES: Record<string, [from: string, rates: number[]][]> = {
  PT: [['2011-01-01', [0, 6, 13, 23]], ['2010-07-01', [0, 6, 13, 21]], ['2008-07-01', [0, 5, 12, 20]]],
  'PT-AC': [['2021-07-01', [0, 4, 9, 16]], ['2015-01-01', [0, 4, 9, 18]]],
  'PT-MA': [['2024-10-01', [0, 4, 5, 12, 22]], ['2012-04-01', [0, 5, 12, 22]]],
};
/**
 * TaxExemptionCode: the XSD's pattern (`(M[0-9]{2})+`, an error when not followed), and the codes of
 * the AT's table of exemption reasons (Tabela de Códigos de Motivo de Isenção; secondary sources
 * [verify]: the table changes, M26 and M44–M46 came later): a well-formed code not in it is a
 * warning, once per code. M03 and M08 were in earlier tables (repealed): warned as such.
 */
const EXEMPTION_CODE = /^(M[0-9]{2})+$/;
const AT_EXEMPTION_CODES = new Set('M01 M02 M04 M05 M06 M07 M09 M10 M11 M12 M13 M14 M15 M16 M19 M20 M21 M22 M23 M24 M25 M26 M30 M31 M32 M33 M34 M40 M41 M42 M43 M44 M45 M46 M99'.split(' '));
const REPEALED_EXEMPTION_CODES = new Set(['M03', 'M08']);
/** a TaxTableEntry's rates (TaxPercentage) and whether one gives a fixed TaxAmount, by TaxType → TaxCountryRegion → TaxCode */
interface TaxEntry {
  pcts: number[];
  amount: boolean;
}
/** the most TaxTableEntry keys kept (a table has tens): beyond, lines are not judged against it */
const MAX_TAX_TABLE_KEYS = 10_000;
/** a line's tax read before MasterFiles/TaxTable (not a valid file's order): the distinct taxes kept to judge at the end */
const MAX_PENDING_TAXES = 1_000;
/** a document's lines carry their own tax: its TaxPayable is theirs (payments are not checked: a settlement discount carries VAT there) */
const TAX_CHECKED = new Set<SectionName>(['SalesInvoices', 'WorkingDocuments', 'MovementOfGoods']);
/** the most Header elements kept (nested ones as `Parent.Child`): a Header has ~25 */
const MAX_HEADER_KEYS = 200;

/** the open line of a document, as read so far (one object a document, reset at each Line) */
interface LineState {
  number: string;
  credit: number | null;
  debit: number | null;
  pct: string | null;
  taxAmount: string | null;
  region: string | null;
  taxType: string | null;
  taxCode: string | null;
  /** TaxBase: the unit taxable value of a line of tax only (its base not the seller's revenue: CreditAmount 0) */
  taxBase: number | null;
  quantity: number | null;
  hasTax: boolean;
  exempt: boolean;
  /** where its Tax's TaxType and TaxPercentage are (the file's lines): a check of them points there, not at </Line> */
  taxLine: number;
  pctLine: number;
}
/** AuditFile's children in the XSD's order */
const TOP_ORDER = ['Header', 'MasterFiles', 'GeneralLedgerEntries', 'SourceDocuments'];
const EMPTY_LINE: Readonly<LineState> = { number: '', credit: null, debit: null, pct: null, taxAmount: null, region: null, taxType: null, taxCode: null, taxBase: null, quantity: null, hasTax: false, exempt: false, taxLine: 0, pctLine: 0 };
const newLine = (): LineState => ({ ...EMPTY_LINE });

interface Doc {
  section: SectionName;
  line: number;
  fields: Record<string, string>;
  debit: number;
  credit: number;
  lines: number;
  quantity: number;
  products: string[];
  settles: string[];
  /** line amounts that are not decimal numbers ("180,00"): reported, not summed as NaN */
  badAmounts: string[];
  /** the line being read */
  ln: LineState;
  /** the tax of its credit lines and of its debit lines ((TaxBase or amount) × TaxPercentage / 100, or TaxAmount) */
  taxCredit: number;
  taxDebit: number;
  /** lines that carry a Tax */
  taxedLines: number;
  /** payments: PaymentMethod/PaymentMechanism as read (TB, CC, NU…) */
  mechanisms: string[];
}

/** a sales invoice or a payment as read, with its customer from MasterFiles (for an import) */
export interface SaftDocument {
  kind: 'invoice' | 'payment';
  number: string;
  type: string;
  status: string;
  date: string;
  system_entry_date: string;
  atcud: string | null;
  customer_id: string | null;
  customer_nif: string | null;
  customer_name: string | null;
  net_total: number;
  tax_payable: number;
  gross_total: number;
  /** payments: the invoices they settle (Line/SourceDocumentID/OriginatingON) */
  settles: string[];
  /** payments: their PaymentMechanism codes, in file order (TB transfer, CC card, NU cash…) */
  mechanisms: string[];
}

export interface SaftResult {
  header: Record<string, string | null>;
  counts: Record<string, number>;
  totals: Record<string, { declared: Record<string, number | null>; computed: Record<string, number> }>;
  checks: SaftCheck[];
  hash_chain: 'verified' | 'not_verified' | 'failed';
  valid: boolean;
  bytes: number;
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;
/**
 * SAF-T nests ~8 deep; the XML parser's namespace scopes make each element cost its depth, so a
 * file of 100,000 nested elements (700 KB) held the event loop for ~20 s. Deeper is refused.
 */
const MAX_DEPTH = 64;
class TooDeep extends Error {}
/** a total is the rounded sum of amounts that may carry more decimals: it may differ from their sum by up to a cent */
/** the largest document total read as an amount: its cents stay exact integers (below 2^53) */
export const MAX_AMOUNT = 1e13;
const CENT = 0.01 + 1e-9;
/** SAF-T's decimal, the XSD's xs:decimal: a point, no thousands separator ("14918.71", ".359"; not "14.918,71") */
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
/**
 * The longest text kept of one element: SAF-T's longest strings are a few hundred characters
 * (HeaderComment 255, descriptions 200, Hash 172); a 60 MB element was held whole and echoed.
 */
const MAX_TEXT = 65_536;
/**
 * A string kept past its chunk, as its own copy: a value read from the XML is a slice of the text
 * decoded from the chunk it came in, and keeps all of that text alive. A copy through a Buffer:
 * `(' ' + s).slice(1)`, used here before, is no copy in JSC (a slice of a rope that falls within
 * one of its parts is a slice of that part): each series' last Hash kept the whole text of its
 * chunk (2 MB for the background path's 1 MiB chunks), ~100 MB of them by the end of a 200 MB file.
 */
const own = (s: string) => Buffer.from(s, 'utf16le').toString('utf16le');
/**
 * The bytes decoded into one string for the XML parser. Every name and value the parser hands out
 * is a slice of that string and keeps it alive until the slice is collected: the garbage of a
 * 1 MiB chunk (the background path's) held 2 MB strings where 16 KiB pieces hold 32 KB ones: a
 * 200 MB file fed in 1 MiB chunks peaked at ~300 MB RSS decoded whole, ~120-150 MB in pieces, no
 * slower (a bare process, 2026-11-28).
 */
const PIECE_BYTES = 16 * 1024;
/** the declared totals of each section (the XSD requires them) */
const DECLARED_TOTALS: Record<SectionName, string[]> = {
  SalesInvoices: ['NumberOfEntries', 'TotalDebit', 'TotalCredit'],
  MovementOfGoods: ['NumberOfMovementLines', 'TotalQuantityIssued'],
  WorkingDocuments: ['NumberOfEntries', 'TotalDebit', 'TotalCredit'],
  Payments: ['NumberOfEntries', 'TotalDebit', 'TotalCredit'],
};

/**
 * The numbers seen in each series (TYPE SERIES), for duplicates and gaps, kept to the end of the
 * file. A series numbered as it should be (each number the last one + 1) is the run first..last: two
 * numbers in typed arrays, by the series' index. A series that leaves its run once (a gap, a
 * duplicate, a number past 2^53: each an error already) keeps every number it has seen, in a Set.
 * An object and a Set a series (and an entry a number) were the longest-lived part of the parse,
 * spread among its garbage: a 200 MB file of ~23,000 series kept ~14 MB, and the heap's blocks they
 * were scattered in twice that (2026-11-28).
 */
export class SeriesNumbers {
  private readonly byKey = new Map<string, number>();
  /** NaN: none seen yet, or the series is scattered */
  private first = new Float64Array(64).fill(NaN);
  /** 0 before any (as a series starts) */
  private lastOf = new Float64Array(64);
  /** the series that left their run: every number seen */
  private readonly scattered = new Map<number, Set<number>>();
  /** each series' last Hash (the chain's previous link), when the chain is verified */
  readonly hashes: string[] = [];

  /** the series' index (a new one: its key copied off the text it was read from) */
  index(key: string): number {
    let i = this.byKey.get(key);
    if (i !== undefined) return i;
    i = this.byKey.size;
    this.byKey.set(own(key), i);
    if (i === this.first.length) {
      const first = new Float64Array(i * 2).fill(NaN);
      const last = new Float64Array(i * 2);
      first.set(this.first);
      last.set(this.lastOf);
      this.first = first;
      this.lastOf = last;
    }
    return i;
  }
  /** the last number seen (0 before any) */
  last(i: number): number {
    return this.lastOf[i]!;
  }
  seen(i: number, n: number): boolean {
    const set = this.scattered.get(i);
    return set ? set.has(n) : n >= this.first[i]! && n <= this.lastOf[i]!; // (false while first is NaN)
  }
  add(i: number, n: number) {
    const first = this.first[i]!;
    const set = this.scattered.get(i);
    if (set) set.add(n);
    else if (Number.isNaN(first) && Number.isSafeInteger(n)) this.first[i] = n; // a run starts
    else if (n !== this.lastOf[i]! + 1 || !Number.isSafeInteger(n)) {
      // the run is left: its numbers (as many as its documents) and every one from now on
      const all = new Set<number>();
      if (!Number.isNaN(first)) for (let k = first; k <= this.lastOf[i]!; k++) all.add(k);
      all.add(n);
      this.scattered.set(i, all);
      this.first[i] = NaN;
    }
    this.lastOf[i] = n;
  }
}

export async function parseSaft(
  chunks: AsyncIterable<Uint8Array>,
  opts: { publicKeyPem?: string | null; maxChecks?: number; onDocuments?: (docs: SaftDocument[], header: Readonly<Record<string, string | null>>) => Promise<void> } = {},
): Promise<SaftResult> {
  const ready: SaftDocument[] = [];
  const customerInfo = new Map<string, { nif: string | null; name: string | null }>();
  const maxChecks = opts.maxChecks ?? 500;
  const checks: SaftCheck[] = [];
  let parser: SaxesParser;
  // counted apart from the list, which stops at maxChecks: an error after that many warnings still
  // makes the file invalid (and refuses its import)
  let errorCount = 0;
  // line: the parser's current line unless given (null: the check has no line, e.g. a missing element)
  const add = (severity: SaftCheck['severity'], code: string, message: string, path: string | null = null, line?: number | null) => {
    if (severity === 'error') errorCount++;
    // kept to the end of the file: copied (a message or a path quoting a value is built on its chunk)
    if (checks.length < maxChecks) checks.push({ code, severity, message: own(message), path: path === null ? null : own(path), line: line === undefined ? (parser?.line ?? null) : line });
  };
  let key: KeyObject | null = null;
  if (opts.publicKeyPem) {
    try {
      key = createPublicKey(opts.publicKeyPem);
    } catch {
      add('error', 'public_key_invalid', 'the public key given is not a PEM RSA public key', null, null);
    }
  }

  parser = new SaxesParser({ xmlns: true, position: true });
  const stack: string[] = [];
  let text = '';
  let rootOk = false;
  const header: Record<string, string | null> = {};
  /** where each Header element and each section's declared total ends (their checks' line) */
  const headerLine: Record<string, number> = {};
  const declaredLine: Record<string, Record<string, number>> = {};
  const headerSeen = new Set<string>();
  const customers = new Set<string>();
  const suppliers = new Set<string>();
  const products = new Set<string>();
  const counts: Record<string, number> = { customers: 0, suppliers: 0, products: 0, tax_table_entries: 0, invoices: 0, payments: 0, movements_of_goods: 0, working_documents: 0 };
  const byType: Record<string, number> = {};
  const declared: Record<string, Record<string, number | null>> = {};
  const computed: Record<string, Record<string, number>> = {};
  let doc: Doc | null = null;
  let masterRecord: Record<string, string> | null = null;
  const series = new SeriesNumbers();
  let hashFailures = 0;
  let hashesChecked = 0;
  const pendingRefs: { kind: 'customer' | 'supplier' | 'product'; id: string; path: string; line: number }[] = [];
  let textOverflow = false;
  /** the Header element open at depth 3 has elements of its own (CompanyAddress) */
  let headerNested = false;
  let headerKeys = 0;
  /** each (region, rate, period) reported once by `tax_rate` (a file uses a handful) */
  const rateWarned = new Set<string>();
  /** each exemption code outside the AT's table, reported once (`tax_exemption_code_unknown`) */
  const exemptionWarned = new Set<string>();
  /** MasterFiles/TaxTable: TaxType → TaxCountryRegion → TaxCode → its entries (copied off their chunks) */
  const taxTable = new Map<string, Map<string, Map<string, TaxEntry>>>();
  let taxTableKeys = 0;
  /** the TaxTable element has ended: lines are judged against it as they end (before: kept, judged at the end) */
  let taxTableRead = false;
  /** the TaxTableEntry being read */
  let taxEntry: { type: string; region: string; code: string; pct: string | null; amount: boolean } | null = null;
  /** lines' taxes read before the TaxTable, by tax: where (up to maxChecks of them in all) and how many lines */
  const pendingTaxes = new Map<string, { type: string | null; region: string | null; code: string | null; pct: number | null; at: { path: string; line: number; pctLine: number }[]; lines: number }>();
  let pendingTaxesKept = 0;
  /** lines whose tax could not be kept to judge (more than MAX_PENDING_TAXES distinct taxes before the TaxTable) */
  let taxesUnjudged = 0;

  let lastTop = -1;
  let orderReported = false;
  parser.on('opentag', (t) => {
    const tag = t as SaxesTagNS;
    const name = tag.local;
    if (stack.length >= MAX_DEPTH) throw new TooDeep();
    stack.push(name);
    text = '';
    if (stack.length === 3 && stack[1] === 'Header') headerSeen.add(own(name)), (headerNested = false); // structured ones (CompanyAddress) hold no text of their own
    else if (stack.length === 4 && stack[1] === 'Header') headerNested = true;
    if (stack.length === 1) {
      if (name !== 'AuditFile' || tag.uri !== SAFT_NAMESPACE) add('error', 'not_saft', `the root element is ${tag.name} in namespace "${tag.uri}", expected AuditFile in ${SAFT_NAMESPACE}`);
      else rootOk = true;
    } else if (stack.length === 2) {
      // the XSD's sequence: Header, MasterFiles, GeneralLedgerEntries, SourceDocuments (the AT's
      // validator refuses another order; the file is still read whole, and judged as it comes)
      const at = TOP_ORDER.indexOf(name);
      if (at >= 0 && at < lastTop && !orderReported) {
        orderReported = true;
        add('error', 'structure_order', `${name} comes after ${TOP_ORDER[lastTop]}: the XSD's order is ${TOP_ORDER.join(', ')}`, name);
      }
      if (at >= 0) lastTop = Math.max(lastTop, at);
    }
    const parent = stack[stack.length - 2];
    if (parent === 'MasterFiles' && ['Customer', 'Supplier', 'Product'].includes(name)) masterRecord = {};
    else if (name === 'TaxTableEntry' && parent === 'TaxTable' && stack[1] === 'MasterFiles') taxEntry = { type: '', region: '', code: '', pct: null, amount: false };
    const section = stack[2] as SectionName | undefined;
    if (stack[1] === 'SourceDocuments' && section && SECTIONS[section] && name === SECTIONS[section].doc && stack.length === 4)
      doc = { section, line: parser.line, fields: {}, debit: 0, credit: 0, lines: 0, quantity: 0, products: [], settles: [], badAmounts: [], ln: newLine(), taxCredit: 0, taxDebit: 0, taxedLines: 0, mechanisms: [] };
    else if (doc && stack.length === 5 && name === 'Line') {
      Object.assign(doc.ln, EMPTY_LINE); // (the line's state reused, every field back to EMPTY_LINE's)
    }
  });
  const addText = (t: string) => {
    if (text.length + t.length <= MAX_TEXT) text += t;
    else {
      text = (text + t).slice(0, MAX_TEXT);
      textOverflow = true;
    }
  };
  parser.on('text', addText);
  parser.on('cdata', addText);
  parser.on('closetag', (t) => {
    const name = (t as SaxesTagNS).local;
    const value = text.trim();
    const depth = stack.length;
    if (textOverflow) {
      add('error', 'field_too_long', `${stack.slice(1).join('/')} is longer than ${MAX_TEXT} characters (SAF-T's fields are at most a few hundred): only its start was read`, stack.slice(1).join('/'));
      textOverflow = false;
    }
    const parent = stack[depth - 2];
    // a Header element: as read; a nested one (CompanyAddress/City) as `CompanyAddress.City`, its parent not (it holds no text)
    if (stack[1] === 'Header' && (depth === 3 || depth === 4)) {
      const k = depth === 3 ? name : `${stack[2]}.${name}`;
      if (depth === 3 && headerNested) headerNested = false;
      else if (k in header || headerKeys++ < MAX_HEADER_KEYS) (header[own(k)] = own(value)), (headerLine[k] = parser.line);
    }
    // the XSD's amounts are at least 0: a negative one anywhere (a line's, a total's) is reported where it is
    if (value.charCodeAt(0) === 45 && NON_NEGATIVE.has(name) && DECIMAL.test(value) && Number(value) < 0) {
      const where = doc ? `${SECTIONS[doc.section].doc} ${doc.fields[SECTIONS[doc.section].number] ?? ''}` : stack.slice(stack[1] === 'SourceDocuments' ? 2 : 1).join('/');
      const inLine = doc && stack[4] === 'Line' ? `Line ${doc.ln.number} ` : '';
      add('error', 'amount_negative', `${where}: ${inLine}${name} ${value.slice(0, 40)} is negative (the XSD's amounts, totals, quantities and rates are at least 0; a credit note carries DebitAmount)`, where);
    }
    if (masterRecord && depth >= 4 && stack[1] === 'MasterFiles') {
      if (!(name in masterRecord)) masterRecord[name] = value;
    }
    if (parent === 'MasterFiles' && masterRecord) {
      if (name === 'Customer') {
        counts.customers!++;
        // kept for the whole file: copied off their chunks (MasterFiles can be tens of MB)
        const id = own(masterRecord.CustomerID ?? '');
        customers.add(id);
        if (opts.onDocuments) customerInfo.set(id, { nif: masterRecord.CustomerTaxID === undefined ? null : own(masterRecord.CustomerTaxID), name: masterRecord.CompanyName === undefined ? null : own(masterRecord.CompanyName) });
        const nif = masterRecord.CustomerTaxID ?? '';
        const country = masterRecord.Country ?? 'PT';
        // a warning: AT's own demo file carries one (129999998), and files hold legacy customers
        if (/^\d{9}$/.test(nif) && country === 'PT' && !isValidNif(nif)) add('warning', 'customer_nif_invalid', `customer ${masterRecord.CustomerID}: NIF ${nif} fails the check digit`, `Customer ${masterRecord.CustomerID}`);
      } else if (name === 'Supplier') (counts.suppliers!++, suppliers.add(own(masterRecord.SupplierID ?? '')));
      else if (name === 'Product') (counts.products!++, products.add(own(masterRecord.ProductCode ?? '')));
      masterRecord = null;
    }
    // tax table entries sit one level deeper: MasterFiles/TaxTable/TaxTableEntry
    if (taxEntry && parent === 'TaxTableEntry' && depth === 5) {
      if (name === 'TaxType') taxEntry.type = own(value);
      else if (name === 'TaxCountryRegion') taxEntry.region = own(value);
      else if (name === 'TaxCode') taxEntry.code = own(value);
      else if (name === 'TaxPercentage') taxEntry.pct = value;
      else if (name === 'TaxAmount') taxEntry.amount = true;
    }
    if (name === 'TaxTableEntry' && parent === 'TaxTable' && stack[1] === 'MasterFiles') {
      counts.tax_table_entries!++;
      if (taxEntry) addTaxEntry(taxEntry);
      taxEntry = null;
    }
    if (name === 'TaxTable' && parent === 'MasterFiles' && depth === 3) taxTableRead = true;
    // section headers (declared totals)
    const section = stack[2] as SectionName | undefined;
    if (stack[1] === 'SourceDocuments' && section && SECTIONS[section] && depth === 4 && !doc) {
      declared[section] ??= {};
      if (/^(NumberOfEntries|NumberOfMovementLines|TotalDebit|TotalCredit|TotalQuantityIssued)$/.test(name)) {
        const count = name.startsWith('NumberOf');
        const ok = count ? /^\d+$/.test(value) : DECIMAL.test(value);
        declared[section]![name] = ok ? Number(value) : null;
        (declaredLine[section] ??= {})[name] = parser.line;
        if (!ok) add('error', count ? 'total_entries' : 'total_amount', `${section}: ${name} ${value.slice(0, 40)} is not ${count ? 'a whole number' : 'a decimal number (a point, no thousands separator)'}`, `${section}/${name}`);
      }
    }
    if (doc) {
      if (depth === 5 || (depth === 6 && parent === 'DocumentStatus') || (depth === 6 && parent === 'DocumentTotals')) doc.fields[name] ??= value;
      if (name === 'ProductCode' && parent === 'Line') doc.products.push(value);
      if (parent === 'Line' && name === 'UnitPrice' && !DECIMAL.test(value)) doc.badAmounts.push(`${name} ${value.slice(0, 40)}`);
      if (parent === 'Line' && (name === 'DebitAmount' || name === 'CreditAmount' || name === 'Quantity')) {
        // (read once a line: the document's sums and the line's own value)
        if (!DECIMAL.test(value)) doc.badAmounts.push(`${name} ${value.slice(0, 40)}`);
        else {
          const n = Number(value);
          if (name === 'DebitAmount') (doc.debit += n), (doc.ln.debit = n);
          else if (name === 'CreditAmount') (doc.credit += n), (doc.ln.credit = n);
          else (doc.quantity += n), (doc.ln.quantity = n);
        }
      }
      if (parent === 'Line' && depth === 6) {
        const ln = doc.ln;
        if (name === 'LineNumber') ln.number = value.slice(0, 20);
        // (either one given says it: an empty code element after a reason does not take it back)
        else if (name === 'TaxExemptionCode' || name === 'TaxExemptionReason') {
          ln.exempt ||= !!value;
          if (name === 'TaxExemptionCode') exemptionCode(doc, value, value !== text);
        }
        else if (name === 'Tax') ln.hasTax = true;
        else if (name === 'TaxBase' && DECIMAL.test(value)) ln.taxBase = Number(value);
      } else if (parent === 'Tax' && depth === 7 && stack[4] === 'Line') {
        const ln = doc.ln;
        if (name === 'TaxPercentage') (ln.pct = value), (ln.pctLine = parser.line);
        else if (name === 'TaxAmount') ln.taxAmount = value;
        else if (name === 'TaxCountryRegion') ln.region = value;
        else if (name === 'TaxType') (ln.taxType = value), (ln.taxLine = parser.line);
        else if (name === 'TaxCode') ln.taxCode = value;
      }
      if (name === 'Line' && depth === 5) doc.lines++, lineDone(doc);
      if (name === 'PaymentMechanism' && parent === 'PaymentMethod' && depth === 6 && doc.mechanisms.length < 16) doc.mechanisms.push(value.slice(0, 2));
      if (name === 'OriginatingON' && stack[depth - 2] === 'SourceDocumentID' && doc.section === 'Payments') doc.settles.push(value);
      if (depth === 4 && name === SECTIONS[doc.section].doc) finishDoc(doc), (doc = null);
    }
    if (depth === 1 && name === 'AuditFile') endOfFile();
    stack.pop();
    text = '';
  });

  function finishDoc(d: Doc) {
    const spec = SECTIONS[d.section];
    const number = d.fields[spec.number] ?? '';
    const status = d.fields[spec.status] ?? '';
    const type = d.fields[spec.type] ?? '';
    const where = `${spec.doc} ${number}`;
    // a required element absent (or empty): the tax authority's validator refuses the file, and an
    // absent amount or date must not be stored as 0 or as nothing by an import
    const required = [spec.date, spec.status, spec.type, ...(spec.partyRequired ? [spec.party] : []), ...REQUIRED_DOCUMENT_FIELDS];
    for (const f of required) if (!d.fields[f]) add('error', 'document_field_missing', `${where}: ${f} is required`, where, d.line);
    if (type && !ALLOWED[d.section].type.has(type)) add('error', 'document_type', `${where}: ${spec.type} ${type} is not one of the XSD's`, where, d.line);
    if (status && !ALLOWED[d.section].status.has(status)) add('error', 'document_status', `${where}: ${spec.status} ${status} is not one of the XSD's`, where, d.line);
    const docDate = d.fields[spec.date];
    if (docDate && !isCalendarDate(docDate)) add('error', 'date_invalid', `${where}: ${spec.date} ${docDate} is not a calendar date`, where, d.line);
    // the file covers its period (Header StartDate..EndDate): a document outside it belongs to another file
    else if (docDate && header.StartDate && header.EndDate && isCalendarDate(header.StartDate) && isCalendarDate(header.EndDate) && (docDate < header.StartDate || docDate > header.EndDate))
      add('error', 'date_outside_period', `${where}: ${spec.date} ${docDate} is outside the file's period ${header.StartDate}..${header.EndDate} (Header StartDate, EndDate)`, where, d.line);
    documentTotals(d, where);
    for (const bad of d.badAmounts) add('error', 'document_totals', `${where}: Line ${bad} is not a decimal amount (a point, no thousands separator)`, where, d.line);
    const counter = d.section === 'SalesInvoices' ? 'invoices' : d.section === 'Payments' ? 'payments' : d.section === 'MovementOfGoods' ? 'movements_of_goods' : 'working_documents';
    counts[counter]!++;
    if (d.section === 'SalesInvoices') byType[type] = (byType[type] ?? 0) + 1;
    // movements of goods declare lines and quantities; the other sections documents and amounts
    computed[d.section] ??= d.section === 'MovementOfGoods' ? { NumberOfMovementLines: 0, TotalQuantityIssued: 0 } : { NumberOfEntries: 0, TotalDebit: 0, TotalCredit: 0 };
    const c = computed[d.section]!;
    // cancelled documents (and, for invoices, those billed by another) count but carry no amounts
    const counted = status !== 'A' && !(d.section === 'SalesInvoices' && status === 'F');
    if (d.section === 'MovementOfGoods') {
      c.NumberOfMovementLines! += d.lines; // every line counts; only the quantities of documents not cancelled
      if (counted) c.TotalQuantityIssued! += d.quantity;
    } else {
      c.NumberOfEntries!++;
      if (counted) {
        c.TotalDebit! += d.debit;
        c.TotalCredit! += d.credit;
      }
    }
    // numbering: TYPE SERIES/SEQ, unique and consecutive within its series
    const m = /^(\S+) (.+)\/(\d+)$/.exec(number);
    if (!m) add('error', 'document_number_format', `${number} is not "TYPE SERIES/NUMBER"`, where, d.line);
    else {
      const seriesKey = `${d.section}|${m[1]} ${m[2]}`;
      const seq = Number(m[3]);
      const s = series.index(seriesKey);
      const last = series.last(s);
      if (series.seen(s, seq)) add('error', 'document_number_duplicate', `${number} appears twice`, where, d.line);
      else if (last && seq !== last + 1) add('error', 'document_number_gap', `${number} follows ${m[1]} ${m[2]}/${last}: not consecutive`, where, d.line);
      series.add(s, seq);
      // ATCUD: CODE-SEQ, or 0 before 2023
      const atcud = d.fields.ATCUD;
      if (atcud === '0' && docDate && docDate >= ATCUD_REQUIRED_FROM) add('warning', 'atcud_missing', `ATCUD 0 on a document of ${docDate}: a real ATCUD is required since ${ATCUD_REQUIRED_FROM}`, where, d.line);
      if (atcud !== undefined && atcud !== '0') {
        const a = /^([A-Z0-9]{8,})-(\d+)$/.exec(atcud);
        if (!a) add('error', 'atcud_format', `ATCUD ${atcud} is not CODE-NUMBER`, where, d.line);
        else if (Number(a[2]) !== seq) add('error', 'atcud_sequence', `ATCUD ${atcud} does not end in the document's number ${seq}`, where, d.line);
      }
      if (spec.hashed) {
        const hash = d.fields.Hash ?? '';
        if (!hash) add('error', 'hash_missing', `${number} has no Hash`, where, d.line);
        else if (!/^[A-Za-z0-9+/]+=*$/.test(hash) || hash.length < 100) add('error', 'hash_format', `${number}: the Hash is not a base64 RSA signature`, where, d.line);
        else if (key) {
          hashesChecked++;
          const message = `${d.fields[spec.date] ?? ''};${d.fields.SystemEntryDate ?? ''};${number};${d.fields.GrossTotal ?? ''};${series.hashes[s] ?? ''}`;
          const ok = createVerify('RSA-SHA1').update(message).verify(key, hash, 'base64');
          if (!ok) (hashFailures++, add('error', 'hash_chain', `${number}: the Hash is not the signature of "${message.slice(0, 120)}" with the key given (altered document or broken chain)`, where, d.line));
        }
        if (key) series.hashes[s] = own(hash); // the chain's next link (read only to verify it)
      }
    }
    if (opts.onDocuments && (d.section === 'SalesInvoices' || d.section === 'Payments')) {
      const cid = d.fields.CustomerID ?? null;
      const info = cid ? customerInfo.get(cid) : undefined;
      ready.push({
        kind: d.section === 'SalesInvoices' ? 'invoice' : 'payment',
        number,
        type,
        status,
        date: d.fields[spec.date] ?? '',
        system_entry_date: d.fields.SystemEntryDate ?? '',
        atcud: d.fields.ATCUD ?? null,
        customer_id: cid,
        customer_nif: info?.nif ?? null,
        customer_name: info?.name ?? null,
        net_total: Number(d.fields.NetTotal ?? 0),
        tax_payable: Number(d.fields.TaxPayable ?? 0),
        gross_total: Number(d.fields.GrossTotal ?? 0),
        settles: d.settles,
        mechanisms: d.mechanisms,
      });
    }
    // a movement of goods names a customer or a supplier (or neither: an internal transfer)
    // MasterFiles come first in a SAF-T file: a reference already known is settled now, and only the
    // others wait for the end of the file (kept for the whole file, every one of them had held the
    // chunk of text it was read from: hundreds of MB on a 200 MB file)
    const party = d.fields[spec.party];
    if (party && !customers.has(party)) pendingRefs.push({ kind: 'customer', id: own(party), path: own(where), line: d.line });
    const supplier = d.section === 'MovementOfGoods' ? d.fields.SupplierID : undefined;
    if (supplier && !suppliers.has(supplier)) pendingRefs.push({ kind: 'supplier', id: own(supplier), path: own(where), line: d.line });
    for (const p of d.products) if (!products.has(p)) pendingRefs.push({ kind: 'product', id: own(p), path: own(where), line: d.line });
  }

  /**
   * A document's own totals (DocumentTotals): numbers; GrossTotal = NetTotal + TaxPayable; NetTotal
   * = its lines' amounts (credits less debits, either sign). Within a cent: a total is the rounded
   * sum of amounts that may carry more decimals. A forged total was otherwise valid and imported.
   */
  function documentTotals(d: Doc, where: string) {
    const amounts: Record<string, number> = {};
    for (const f of ['NetTotal', 'TaxPayable', 'GrossTotal'] as const) {
      const text = d.fields[f];
      if (!text) continue; // document_field_missing says so
      if (!/^-?\d+(\.\d+)?$/.test(text)) add('error', 'document_totals', `${where}: ${f} ${text} is not a decimal amount`, where, d.line);
      // (cents of a larger one are no exact number, and no database column holds them)
      else if (Math.abs(Number(text)) >= MAX_AMOUNT) add('error', 'document_totals', `${where}: ${f} ${text} is beyond any document's amount (at most ${MAX_AMOUNT.toExponential()} in absolute value)`, where, d.line);
      else amounts[f] = Number(text);
    }
    const { NetTotal: net, TaxPayable: tax, GrossTotal: gross } = amounts;
    if (net !== undefined && tax !== undefined && gross !== undefined && Math.abs(gross - (net + tax)) > CENT)
      add('error', 'document_totals', `${where}: GrossTotal ${gross} is not NetTotal ${net} + TaxPayable ${tax} (${round4(net + tax)})`, where, d.line);
    // each line's amount may be rounded on its own: up to half a cent a line apart from the total's.
    // |credits - debits|: a credit note's lines are debits, a mixed document's either; a negative
    // amount (whose absolute value matched: -23.39 credit against NetTotal 23.39) is amount_negative
    if (net !== undefined && d.lines && Math.abs(net - Math.abs(d.credit - d.debit)) > CENT + 0.005 * d.lines)
      add('error', 'document_totals', `${where}: NetTotal ${net}, its lines' amounts sum to ${round4(Math.abs(d.credit - d.debit))}`, where, d.line);
    // TaxPayable = its lines' tax (amount × TaxPercentage / 100, or the line's TaxAmount), each line's
    // tax rounded on its own: half a cent a line, plus a cent. Invoices and working documents (whose
    // lines must carry Tax); movements of goods when every line does; not payments
    const taxed = TAX_CHECKED.has(d.section) && d.lines > 0 && (d.section !== 'MovementOfGoods' || d.taxedLines === d.lines);
    if (tax !== undefined && taxed) {
      const lineTax = Math.abs(d.taxCredit - d.taxDebit);
      if (Math.abs(tax - lineTax) > CENT + 0.005 * d.lines)
        add('error', 'document_totals', `${where}: TaxPayable ${tax}, its lines' tax (amount × TaxPercentage / 100, or TaxAmount) sums to ${round4(lineTax)}`, where, d.line);
    }
  }

  function addTaxEntry(e: { type: string; region: string; code: string; pct: string | null; amount: boolean }) {
    let regions = taxTable.get(e.type);
    if (!regions) taxTable.set(e.type, (regions = new Map()));
    let codes = regions.get(e.region);
    if (!codes) regions.set(e.region, (codes = new Map()));
    let entry = codes.get(e.code);
    if (!entry) {
      if (++taxTableKeys > MAX_TAX_TABLE_KEYS) return; // (not judged then: see taxTableKeys)
      codes.set(e.code, (entry = { pcts: [], amount: false }));
    }
    if (e.pct !== null && DECIMAL.test(e.pct)) entry.pcts.push(Number(e.pct));
    entry.amount ||= e.amount;
  }

  /**
   * A line's tax against the TaxTable: 'unknown' (no entry of its TaxType, TaxCountryRegion and
   * TaxCode), 'rate' (its TaxPercentage is none of its entries'), or null. A line's TaxAmount is the
   * line's own amount of tax (its entry's may be a unit amount, or a rate): only its entry is looked for.
   */
  function taxFault(type: string | null, region: string | null, code: string | null, pct: number | null): 'unknown' | 'rate' | null {
    const entry = taxTable.get(type ?? '')?.get(region ?? '')?.get(code ?? '');
    if (!entry) return 'unknown';
    if (pct !== null && !entry.pcts.includes(pct)) return 'rate';
    return null;
  }

  const taxName = (type: string | null, region: string | null, code: string | null) => `${type || '(no TaxType)'} ${region || '(no TaxCountryRegion)'} ${code || '(no TaxCode)'}`;
  /** a line's tax not in the TaxTable: an error on the line's Tax (its TaxPercentage for a rate) */
  function reportTax(fault: 'unknown' | 'rate', type: string | null, region: string | null, code: string | null, pct: number | null, lineWhere: string, line: number, more = 0) {
    const doc = lineWhere.slice(0, lineWhere.lastIndexOf('/Line '));
    const lineName = lineWhere.slice(doc.length + 1);
    const also = more ? `; and ${more} more line${more > 1 ? 's' : ''} with this tax, not listed` : '';
    if (fault === 'unknown')
      add('error', 'tax_unknown', `${doc}: ${lineName} Tax ${taxName(type, region, code)} has no TaxTableEntry in MasterFiles/TaxTable (TaxType, TaxCountryRegion, TaxCode)${also}`, `${lineWhere}/Tax`, line);
    else {
      const entry = taxTable.get(type ?? '')!.get(region ?? '')!.get(code ?? '')!;
      // (an entry with a fixed TaxAmount beside its rates is named too: a line may carry that amount instead)
      const its = entry.pcts.length ? `${entry.pcts.join(' % or ')} %${entry.amount ? ', or a fixed TaxAmount' : ''}` : 'a TaxAmount, no TaxPercentage';
      add('error', 'tax_table_rate', `${doc}: ${lineName} TaxPercentage ${pct} differs from its TaxTableEntry's (${taxName(type, region, code)}: ${its})${also}`, `${lineWhere}/Tax/TaxPercentage`, line);
    }
  }

  /** the file line a tax check points at: its TaxType's (the Tax), or its TaxPercentage's for a rate; </Line>'s if the line has neither */
  const taxCheckLine = (fault: 'unknown' | 'rate', ln: LineState) => (fault === 'rate' ? ln.pctLine : ln.taxLine) || parser.line;
  /** a line's tax read before the TaxTable (MasterFiles come first in a valid file): kept, bounded, and judged at the end */
  function deferTax(type: string | null, region: string | null, code: string | null, pct: number | null, lineWhere: string, ln: LineState) {
    const k = `${type}\u0000${region}\u0000${code}\u0000${pct}`;
    let p = pendingTaxes.get(k);
    if (!p) {
      if (pendingTaxes.size >= MAX_PENDING_TAXES) return void taxesUnjudged++;
      pendingTaxes.set(own(k), (p = { type: type === null ? null : own(type), region: region === null ? null : own(region), code: code === null ? null : own(code), pct, at: [], lines: 0 }));
    }
    p.lines++;
    if (pendingTaxesKept < maxChecks) p.at.push({ path: own(lineWhere), line: ln.taxLine || parser.line, pctLine: ln.pctLine || parser.line }), pendingTaxesKept++;
  }

  /**
   * a line's TaxExemptionCode: the XSD's pattern (an error), the AT's table (a warning, once per
   * code). `padded`: spaces around the code as written (the XSD's pattern is on the text as it is:
   * xs:string keeps them)
   */
  function exemptionCode(d: Doc, value: string, padded: boolean) {
    const spec = SECTIONS[d.section];
    const where = `${spec.doc} ${d.fields[spec.number] ?? ''}`;
    if (padded && value) {
      add('error', 'tax_exemption_code', `${where}: Line ${d.ln.number} TaxExemptionCode "${value.slice(0, 40)}" has spaces around it: the XSD's pattern (M and two digits) allows none`, `${where}/Line ${d.ln.number}/TaxExemptionCode`);
      return;
    }
    if (!EXEMPTION_CODE.test(value)) {
      add('error', 'tax_exemption_code', `${where}: Line ${d.ln.number} TaxExemptionCode "${value.slice(0, 40)}" is not the XSD's (M and two digits: M01…M99)`, `${where}/Line ${d.ln.number}/TaxExemptionCode`);
      return;
    }
    for (let i = 0; i < value.length; i += 3) {
      const code = value.slice(i, i + 3);
      if (AT_EXEMPTION_CODES.has(code) || exemptionWarned.has(code) || exemptionWarned.size >= 100) continue;
      exemptionWarned.add(own(code));
      const why = REPEALED_EXEMPTION_CODES.has(code) ? 'a repealed code (earlier tables of the AT)' : 'not in the AT\'s table of exemption reasons (M01, M02, M04–M07, M09–M16, M19–M26, M30–M34, M40–M46, M99)';
      add('warning', 'tax_exemption_code_unknown', `${where}: Line ${d.ln.number} TaxExemptionCode ${code} is ${why}; reported once a code`, `${where}/Line ${d.ln.number}/TaxExemptionCode`);
    }
  }

  /** a line read whole: its tax into its document's, its rate and exemption checked */
  function lineDone(d: Doc) {
    const ln = d.ln;
    if (!ln.hasTax) return;
    // the line's amount; a line of tax only (amount 0) is taxed on its TaxBase, a unit value, times its quantity
    const own = ln.credit || ln.debit || 0;
    const amount = own === 0 && ln.taxBase !== null ? ln.taxBase * (ln.quantity ?? 1) : own;
    let tax: number | null = null;
    let pct: number | null = null;
    if (ln.pct !== null) {
      if (!DECIMAL.test(ln.pct)) d.badAmounts.push(`${ln.number} TaxPercentage ${ln.pct.slice(0, 40)}`);
      else (pct = Number(ln.pct)), (tax = (amount * pct) / 100);
    } else if (ln.taxAmount !== null) {
      if (!DECIMAL.test(ln.taxAmount)) d.badAmounts.push(`${ln.number} TaxAmount ${ln.taxAmount.slice(0, 40)}`);
      else tax = Number(ln.taxAmount);
    }
    if (tax === null) return;
    d.taxedLines++;
    if (ln.credit !== null) d.taxCredit += tax;
    else if (ln.debit !== null) d.taxDebit += tax;
    const spec = SECTIONS[d.section];
    const where = () => `${spec.doc} ${d.fields[spec.number] ?? ''}`;
    // its tax is one of the file's TaxTable (no lookup string built: three Map reads)
    if (taxTableRead) {
      if (taxTableKeys <= MAX_TAX_TABLE_KEYS) {
        const fault = taxFault(ln.taxType, ln.region, ln.taxCode, pct);
        if (fault) reportTax(fault, ln.taxType, ln.region, ln.taxCode, pct, `${where()}/Line ${ln.number}`, taxCheckLine(fault, ln));
      }
    } else deferTax(ln.taxType, ln.region, ln.taxCode, pct, `${where()}/Line ${ln.number}`, ln);
    // the XSD's assert: a line without tax (0 %, or a TaxAmount of 0) says why (TaxExemptionReason and TaxExemptionCode)
    if ((ln.pct !== null ? pct === 0 : tax === 0) && !ln.exempt)
      add('error', 'tax_exemption_missing', `${where()}: Line ${ln.number} has no tax (${ln.pct !== null ? `TaxPercentage ${ln.pct}` : `TaxAmount ${ln.taxAmount}`}) and no TaxExemptionReason / TaxExemptionCode`, `${where()}/Line ${ln.number}`);
    if (pct === null || ln.taxType !== 'IVA' || !ln.region) return;
    const periods = VAT_RATES[ln.region];
    if (!periods) return; // another country's VAT: not ours to know
    if (pct === 0 || (pct === periods[0]![1][3] && d.fields[spec.date]! >= periods[0]![0])) return; // (the usual line: today's normal rate)
    const date = d.fields[spec.date] && isCalendarDate(d.fields[spec.date]!) ? d.fields[spec.date]! : header.StartDate ?? '';
    const period = periods.find(([from]) => date >= from);
    if (!period || period[1].includes(pct)) return;
    const k = `${ln.region} ${pct} ${period[0]}`;
    if (rateWarned.has(k) || rateWarned.size >= 100) return;
    rateWarned.add(k);
    add('warning', 'tax_rate', `${where()}: Line ${ln.number} TaxPercentage ${ln.pct} is not a VAT rate of ${ln.region} on ${date} (${period[1].join(', ')} %); reported once a rate`, `${where()}/Line ${ln.number}/Tax/TaxPercentage`);
  }

  function endOfFile() {
    for (const f of REQUIRED_HEADER) if (!header[f]) add('error', 'header_field_missing', `Header/${f} is required`, `Header/${f}`, headerLine[f] ?? null);
    if (!headerSeen.has('CompanyAddress')) add('error', 'header_field_missing', 'Header/CompanyAddress is required', 'Header/CompanyAddress', null);
    if (header.TaxAccountingBasis && !TAX_ACCOUNTING_BASIS.has(header.TaxAccountingBasis)) add('error', 'header_value_invalid', `Header/TaxAccountingBasis ${header.TaxAccountingBasis} is not one of C, E, F, I, P, R, S, T`, 'Header/TaxAccountingBasis', headerLine.TaxAccountingBasis);
    for (const f of ['StartDate', 'EndDate', 'DateCreated'] as const)
      if (header[f] && !isCalendarDate(header[f]!)) add('error', 'header_value_invalid', `Header/${f} ${header[f]} is not a calendar date`, `Header/${f}`, headerLine[f]);
    if (header.AuditFileVersion && header.AuditFileVersion !== '1.04_01') add('error', 'version', `AuditFileVersion ${header.AuditFileVersion}, expected 1.04_01`, 'Header/AuditFileVersion', headerLine.AuditFileVersion);
    if (header.TaxRegistrationNumber && !isValidNif(header.TaxRegistrationNumber)) add('error', 'company_nif_invalid', `TaxRegistrationNumber ${header.TaxRegistrationNumber} fails the check digit`, 'Header/TaxRegistrationNumber', headerLine.TaxRegistrationNumber);
    if (header.CurrencyCode && header.CurrencyCode !== 'EUR') add('error', 'currency', 'CurrencyCode must be EUR', 'Header/CurrencyCode', headerLine.CurrencyCode);
    // a file without a TaxTable whose lines carry taxes: one error for the file (each line's would
    // say the same), how many lines it leaves without their entry
    if (!taxTableRead && pendingTaxes.size) {
      const lines = [...pendingTaxes.values()].reduce((n, p) => n + p.lines, 0) + taxesUnjudged;
      add('error', 'tax_table_missing', `MasterFiles has no TaxTable: the taxes of ${lines} line${lines > 1 ? 's' : ''} have no TaxTableEntry (TaxType, TaxCountryRegion, TaxCode)`, 'MasterFiles/TaxTable', null);
    }
    // lines read before the TaxTable, judged now
    else if (taxTableKeys <= MAX_TAX_TABLE_KEYS)
      for (const p of pendingTaxes.values()) {
        const fault = taxFault(p.type, p.region, p.code, p.pct);
        if (!fault) continue;
        // as many as the answer still has room for, the last one listed naming the lines left out
        const shown = p.at.slice(0, Math.max(1, maxChecks - checks.length));
        shown.forEach((at, i) => reportTax(fault, p.type, p.region, p.code, p.pct, at.path, fault === 'rate' ? at.pctLine : at.line, i === shown.length - 1 ? p.lines - shown.length : 0));
        if (!p.at.length) add('error', fault === 'unknown' ? 'tax_unknown' : 'tax_table_rate', `${p.lines} line${p.lines > 1 ? 's' : ''} with Tax ${taxName(p.type, p.region, p.code)}${p.pct === null ? '' : ` ${p.pct} %`} ${p.lines > 1 ? 'are' : 'is'} not in MasterFiles/TaxTable (not listed)`, 'MasterFiles/TaxTable', null);
      }
    if (taxesUnjudged && taxTableRead) add('warning', 'tax_table_unchecked', `${taxesUnjudged} lines read before MasterFiles/TaxTable were not checked against it (more than ${MAX_PENDING_TAXES} distinct taxes)`, 'MasterFiles/TaxTable', null);
    if (taxTableKeys > MAX_TAX_TABLE_KEYS) add('warning', 'tax_table_unchecked', `MasterFiles/TaxTable has more than ${MAX_TAX_TABLE_KEYS} distinct taxes: lines were not checked against it`, 'MasterFiles/TaxTable', null);
    for (const r of pendingRefs) {
      if (r.kind === 'customer' && !customers.has(r.id)) add('error', 'customer_unknown', `CustomerID ${r.id} is not in MasterFiles`, r.path, r.line);
      if (r.kind === 'supplier' && !suppliers.has(r.id)) add('error', 'supplier_unknown', `SupplierID ${r.id} is not in MasterFiles`, r.path, r.line);
      if (r.kind === 'product' && !products.has(r.id)) add('error', 'product_unknown', `ProductCode ${r.id} is not in MasterFiles`, r.path, r.line);
    }
    // a section with documents declares its totals (the XSD requires them): absent, nothing was checked
    for (const section of Object.keys(computed) as SectionName[])
      for (const name of DECLARED_TOTALS[section])
        if (declared[section]?.[name] === undefined) add('error', name.startsWith('NumberOf') ? 'total_entries' : 'total_amount', `${section}: ${name} is required (the XSD's; nothing to check the documents against)`, `${section}/${name}`, null);
    for (const [section, d] of Object.entries(declared)) {
      const c = computed[section] ?? {};
      for (const count of ['NumberOfEntries', 'NumberOfMovementLines'])
        if (d[count] !== undefined && d[count] !== (c[count] ?? 0)) add('error', 'total_entries', `${section}: ${count} declared ${d[count]}, counted ${c[count] ?? 0}`, `${section}/${count}`, declaredLine[section]?.[count] ?? null);
      for (const t of ['TotalDebit', 'TotalCredit', 'TotalQuantityIssued'])
        if (d[t] !== undefined && d[t] !== null && Math.abs(d[t]! - (c[t] ?? 0)) > 0.01) add('error', 'total_amount', `${section}: ${t} declared ${d[t]}, lines sum to ${round4(c[t] ?? 0)}`, `${section}/${t}`, declaredLine[section]?.[t] ?? null);
    }
    for (const c of Object.values(computed)) for (const k of Object.keys(c)) c[k] = round4(c[k]!);
  }

  let bytes = 0;
  let decoder: TextDecoder | null = null;
  let declaredEncoding = 'utf-8';
  const decode = (b: Uint8Array, stream: boolean): string => {
    try {
      return decoder!.decode(b, { stream });
    } catch {
      add('error', 'encoding', `the file's bytes are not valid ${declaredEncoding}, the encoding its XML declaration names (Windows-1252 bytes declared UTF-8?): names and texts would be garbled`, null, parser.line);
      decoder = new TextDecoder(declaredEncoding.toLowerCase() as 'utf-8');
      return decoder.decode(b, { stream });
    }
  };
  let head = new Uint8Array(0);
  let broken = false;
  let malformed = false;
  /** not read at all (UTF-16): no further verdict on the XML */
  let unreadable = false;
  // errors of the XML are checks; errors of the source (a damaged gzip stream, a limit) propagate
  const write = (text: string) => {
    if (broken) return;
    try {
      parser.write(text);
    } catch (err) {
      broken = malformed = true;
      if (err instanceof TooDeep) add('error', 'xml_too_deep', `elements nested more than ${MAX_DEPTH} deep: not a SAF-T file (the rest is not read)`, null, parser.line);
      else add('error', 'xml_malformed', `not well-formed XML: ${(err as Error).message.split('\n')[0]}`, null, parser.line);
    }
  };
  // in pieces (PIECE_BYTES): the decoder keeps a character cut between two of them for the next
  const feed = (b: Uint8Array) => {
    for (let at = 0; at < b.length && !broken; at += PIECE_BYTES) write(decode(b.subarray(at, at + PIECE_BYTES), true));
  };
  for await (const chunk of chunks) {
    bytes += chunk.byteLength;
    if (broken) continue;
    if (!decoder) {
      // the encoding the XML declaration names (the official files are Windows-1252)
      const joined = new Uint8Array(head.length + chunk.length);
      joined.set(head);
      joined.set(chunk, head.length);
      head = joined;
      // UTF-16 (a byte order mark, or two ASCII characters as 16-bit units: "<?", "<A", " <"; XML
      // holds no NUL, so zero bytes there are no UTF-8 or Windows-1252 file): SAF-T files are neither
      if (head.length >= 4 && ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff) || (head[0] !== 0 && head[1] === 0 && head[2] !== 0 && head[3] === 0) || (head[0] === 0 && head[1] !== 0 && head[2] === 0 && head[3] !== 0))) {
        add('error', 'encoding', 'the file is UTF-16: not supported (SAF-T files are Windows-1252 or UTF-8); the rest is not read', null, 1);
        broken = malformed = unreadable = true;
        continue;
      }
      const prolog = new TextDecoder('latin1').decode(head.subarray(0, 200));
      if (head.length < 200 && !prolog.includes('?>')) continue;
      let enc = /encoding=["']([A-Za-z0-9._-]+)["']/.exec(prolog)?.[1] ?? 'utf-8';
      // a UTF-8 byte order mark before another declared encoding: the two contradict each other (a
      // fatal error in XML 1.0 §4.3.3). Reported; the file is read as UTF-8 (the BOM is written by
      // whatever last saved the file) so that the other checks still mean something
      if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf && !/^utf-?8$/i.test(enc)) {
        add('error', 'encoding', `a UTF-8 byte order mark before an XML declaration of ${enc.slice(0, 40)}: the two contradict each other (read as UTF-8)`, null, 1);
        enc = 'UTF-8';
      }
      try {
        // fatal: bytes that are not in the declared encoding (Windows-1252 bytes declared UTF-8, the
        // usual mistake) are a fatal error of the XML, reported once; the rest is read as before
        decoder = new TextDecoder(enc.toLowerCase() as 'utf-8', { fatal: true });
        declaredEncoding = enc;
      } catch {
        add('error', 'encoding', `unsupported encoding ${enc}`, null, 1);
        decoder = new TextDecoder('utf-8');
      }
      feed(head);
      continue;
    }
    feed(chunk);
    if (opts.onDocuments && ready.length >= 200) await opts.onDocuments(ready.splice(0), header);
  }
  if (unreadable) {
    // nothing more to read
  } else if (!decoder) write(new TextDecoder().decode(head));
  else write(decode(new Uint8Array(0), false));
  if (!broken && !unreadable) {
    try {
      parser.close();
    } catch (err) {
      malformed = true;
      add('error', 'xml_malformed', `not well-formed XML: ${(err as Error).message.split('\n')[0]}`, null, parser.line);
    }
  }
  if (opts.onDocuments && ready.length) await opts.onDocuments(ready.splice(0), header);
  if (!rootOk && !unreadable && !checks.some((c) => c.code === 'not_saft' || c.code === 'xml_malformed' || c.code === 'xml_too_deep')) add('error', 'not_saft', 'no AuditFile element in the SAF-T namespace', null, null);

  return {
    header,
    counts: { ...counts, ...Object.fromEntries(Object.entries(byType).map(([t, n]) => [`invoices_${t}`, n])) },
    totals: Object.fromEntries(Object.keys({ ...declared, ...computed }).map((s) => [s, { declared: declared[s] ?? {}, computed: computed[s] ?? {} }])),
    checks,
    // verified: every document of a whole, well-formed SAF-T file checked (a truncated file was not)
    hash_chain: !key ? 'not_verified' : hashFailures ? 'failed' : hashesChecked && rootOk && !malformed ? 'verified' : 'not_verified',
    valid: errorCount === 0,
    bytes,
  };
}
