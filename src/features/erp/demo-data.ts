/**
 * Deterministic synthetic ERP data for the sandbox `demo` provider (and, labelled with another
 * provider name, for sandbox syncs of real providers): Portuguese sales documents shaped after
 * SAF-T (PT) 1.04_01 invoices, and bank-statement transactions, a good share of which pay them.
 *
 * Domain facts used (shared domain REFERENCE §1–3):
 * - NIF: 9 digits, mod-11 check digit (src/lib/nif.ts); 999999990 is AT's "consumidor final".
 * - Document types FT, FS, FR, NC, ND; InvoiceNo "TYPE SERIES/SEQ" (here the series is the year
 *   of issue, so each type restarts at 1 every calendar year); status N (normal) or A (annulled).
 * - ATCUD = "<validation code of the series, ≥ 8 chars>-<sequence number after '/'>".
 * - VAT (IVA) rates of mainland Portugal: 23 % normal, 13 % intermediate, 6 % reduced.
 *
 * Properties:
 * - Pure and deterministic: every value is a function of the options only (seed string, count,
 *   start date, provider label). Randomness comes from mulberry32 seeded with FNV-1a hashes of
 *   the seed; no clock, no Math.random, no I/O.
 * - Streaming: both exports are lazy generators with memory independent of the number of
 *   invoices (a few bounded buffers: a ring of 64 recent invoices that credit/debit notes may
 *   reference, groups of ≤ 8 documents sharing an `updated_at`, one head per payment-delay lane).
 * - Sync-cursor friendly: `updated_at` is non-decreasing in generation order and ids increase in
 *   generation order, so a cursor over (updated_at, id) sees every row exactly once; documents
 *   are stamped in groups that share one `updated_at`, to exercise cursors that must not drop
 *   rows with equal timestamps.
 * - Money is integer cents. VAT is computed per line, rounded half up, and summed per rate; line
 *   amounts are nudged by a cent where needed so that the per-rate sum also equals
 *   round(base × rate / 100) — both readings of "the VAT of the document" agree exactly.
 */
import { nifCheckDigit } from '../../lib/nif';
import { fnv1a32, mulberry32 } from '../../lib/prng';

// ---------------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------------

export type DemoVatRate = 23 | 13 | 6;

export interface SyncedInvoice {
  /** Stable id unique per dataset, e.g. 'demo-inv-000123'. */
  provider_document_id: string;
  document_type: 'FT' | 'FS' | 'FR' | 'NC' | 'ND';
  /** 'FT 2026/123': type, space, series (year of issue), '/', sequence. */
  number: string;
  /** 'CSDF7T5H-123': validation code of the series + '-' + sequence number. */
  atcud: string;
  /** YYYY-MM-DD */
  issue_date: string;
  /** YYYY-MM-DD; null for FS/FR (paid at once). */
  due_date: string | null;
  /** Valid PT NIF; '999999990' for "consumidor final" on some FS. */
  customer_nif: string;
  customer_name: string;
  currency: 'EUR';
  /** Integer cents; credit notes carry positive amounts (document_type says it is a credit). */
  net_total_cents: number;
  tax_total_cents: number;
  gross_total_cents: number;
  /** One entry per VAT rate present, in the order 23, 13, 6. */
  vat_breakdown: { rate: DemoVatRate; base_cents: number; tax_cents: number }[];
  status: 'N' | 'A';
  /** NC/ND: the number of the earlier invoice they correct; [] otherwise. */
  references: string[];
  /** ISO 8601 date-time (UTC, 'YYYY-MM-DDTHH:MM:SSZ'). */
  updated_at: string;
}

export interface SyncedTransaction {
  /** 'demo-txn-000045' */
  provider_transaction_id: string;
  /** YYYY-MM-DD */
  booking_date: string;
  /** Positive = credit (money in), negative = debit. */
  amount_cents: number;
  currency: 'EUR';
  description: string;
  counterparty_name: string | null;
  /** Check-digit-valid PT50 IBAN (compact form) or null (fees, taxes, card settlements). */
  counterparty_iban: string | null;
  /** Ground truth for reconciliation: the invoice (or refunded credit note) this pays, if any. */
  matched_invoice_number: string | null;
  updated_at: string;
}

export interface DemoDatasetOptions {
  /** Any string; sandbox syncs use the customer reference, so every tenant gets the same books for it. */
  seed: string;
  /** Number of documents (credit and debit notes included). */
  invoices: number;
  /** YYYY-MM-DD: the first issue date; documents spread over the ~12 months after it. */
  startDate: string;
  /** Label for ids (`${provider}-inv-…`, `${provider}-txn-…`); default 'demo'. */
  provider?: string;
}

export const DEMO_SIZE_PRESETS: { small: number; medium: number; large: number } = Object.freeze({
  small: 50,
  medium: 2000,
  large: 100000,
});

// ---------------------------------------------------------------------------------------------
// PRNG and hashing
// ---------------------------------------------------------------------------------------------


/** Combine 32-bit words with the murmur3 finaliser; used to derive independent sub-seeds. */
function mixStep(h: number, p: number): number {
  h = Math.imul(h ^ (p >>> 0), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

function mix3(a: number, b: number, c: number): number {
  return mixStep(mixStep(mixStep(0x9e3779b9, a), b), c) >>> 0;
}

interface WeightTable<T> {
  items: readonly T[];
  cum: number[];
  total: number;
}

function table<T>(items: readonly T[], weights: readonly number[]): WeightTable<T> {
  const cum: number[] = [];
  let total = 0;
  for (const w of weights) cum.push((total += w));
  return { items, cum, total };
}

/** Helpers over a mulberry32 stream. */
class Prng {
  /** Uniform in [0, 1). */
  readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  /** Integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  /** Pick from a precomputed weight table. */
  draw<T>(t: WeightTable<T>): T {
    const x = this.next() * t.total;
    const cum = t.cum;
    for (let i = 0; i < cum.length; i++) if (x < cum[i]!) return t.items[i]!;
    return t.items[t.items.length - 1]!;
  }
  /** Pick by weight; `weights` parallel to `items`. */
  weighted<T>(items: readonly T[], weights: readonly number[]): T {
    let total = 0;
    for (const w of weights) total += w;
    let x = this.next() * total;
    for (let i = 0; i < items.length; i++) {
      x -= weights[i]!;
      if (x < 0) return items[i]!;
    }
    return items[items.length - 1]!;
  }
  /** Log-uniform integer in [lo, hi]: realistic spread of prices. */
  logInt(lo: number, hi: number): number {
    return Math.min(hi, Math.floor(Math.exp(Math.log(lo) + this.next() * (Math.log(hi + 1) - Math.log(lo)))));
  }
}

// Salts for the independent random streams.
const SALT_INVOICE = 0x1f0a;
const SALT_CUSTOMER = 0x2c57;
const SALT_SERIES = 0x3e11;
const SALT_PLAN = 0x4b2d;
const SALT_UNRELATED = 0x5a93;
const SALT_COUNTERPARTY = 0x6d0f;
const SALT_STAMP_INV = 0x7c21;
const SALT_STAMP_TXN = 0x8e45;

// ---------------------------------------------------------------------------------------------
// Dates (epoch-day arithmetic on plain strings)
// ---------------------------------------------------------------------------------------------

const DAY_MS = 86_400_000;

function parseDay(s: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) throw new RangeError(`startDate must be YYYY-MM-DD, got ${JSON.stringify(s)}`);
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  const ms = Date.UTC(y, mo - 1, d);
  const back = new Date(ms);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) {
    throw new RangeError(`startDate is not a calendar date: ${s}`);
  }
  return Math.round(ms / DAY_MS);
}

const dayStrings = new Map<number, string>();

/** YYYY-MM-DD of an epoch day (memoised; the set of days in use is small and bounded). */
function fmtDay(day: number): string {
  let s = dayStrings.get(day);
  if (s === undefined) {
    s = new Date(day * DAY_MS).toISOString().slice(0, 10);
    if (dayStrings.size < 20000) dayStrings.set(day, s);
  }
  return s;
}

function yearOfDay(day: number): number {
  return new Date(day * DAY_MS).getUTCFullYear();
}

/** 0 = Sunday … 6 = Saturday (1970-01-01 was a Thursday). */
function weekday(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

/** Move Saturdays and Sundays to the following Monday (monotone, so order is preserved). */
function nextBankDay(day: number): number {
  const w = weekday(day);
  return w === 6 ? day + 2 : w === 0 ? day + 1 : day;
}

function fmtTimestamp(sec: number): string {
  return new Date(sec * 1000).toISOString().slice(0, 19) + 'Z';
}

// ---------------------------------------------------------------------------------------------
// Identifiers: NIF, IBAN, ATCUD validation codes
// ---------------------------------------------------------------------------------------------

function digits(rng: Prng, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += String(rng.int(0, 9));
  return s;
}

function makeNif(first8: string): string {
  return first8 + String(nifCheckDigit(first8));
}

/** Remainder mod 97 of a string of digits and letters (A=10 … Z=35), ISO 13616 / ISO 7064. */
function mod97(s: string): number {
  let r = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) r = (r * 10 + (c - 48)) % 97;
    else if (c >= 65 && c <= 90) r = (r * 100 + (c - 55)) % 97;
    else return -1;
  }
  return r;
}

/**
 * ISO 13616 mod-97 validity of an IBAN (spaces ignored, case-insensitive). For Portuguese IBANs
 * the length must be 25 (PT + 2 check digits + 21-digit NIB); other countries are checked for
 * the generic shape only.
 */
export function ptIbanCheck(iban: string): boolean {
  if (typeof iban !== 'string') return false;
  const s = iban.replace(/\s+/g, '').toUpperCase();
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$/.test(s)) return false;
  if (s.startsWith('PT') && !/^PT[0-9]{23}$/.test(s)) return false;
  return mod97(s.slice(4) + s.slice(0, 4)) === 1;
}

/** Real Portuguese bank codes (CGD, BCP, BPI, Novo Banco, Santander, Montepio, Crédito Agrícola, BIC, Bankinter, ActivoBank). */
const BANK_CODES = ['0035', '0033', '0010', '0007', '0018', '0036', '0045', '0079', '0269', '0023'] as const;

/** Synthetic PT IBAN: NIB = bank(4) + branch(4) + account(11) + NIB check(2); IBAN check digits computed (always 50). */
function makePtIban(rng: Prng): string {
  const body = rng.pick(BANK_CODES) + digits(rng, 4) + digits(rng, 11);
  const nibCheck = 98 - mod97(body + '00');
  const bban = body + String(nibCheck).padStart(2, '0');
  const ibanCheck = 98 - mod97(bban + 'PT00');
  return 'PT' + String(ibanCheck).padStart(2, '0') + bban;
}

const CODE_ALPHABET = 'ABCDEFGHIJKLMNPQRSTUVWXYZ0123456789';

/** AT validation code of a series (8 chars), a function of seed, type and series. */
function validationCode(seedHash: number, type: string, series: number): string {
  const rng = new Prng(mix3(seedHash, SALT_SERIES, fnv1a32(`${type}/${series}`)));
  let s = '';
  for (let i = 0; i < 8; i++) s += CODE_ALPHABET[rng.int(0, CODE_ALPHABET.length - 1)];
  return s;
}

// ---------------------------------------------------------------------------------------------
// Customers (derived on demand from their index: no table is kept)
// ---------------------------------------------------------------------------------------------

const SURNAMES = [
  'Silva', 'Santos', 'Ferreira', 'Pereira', 'Oliveira', 'Costa', 'Rodrigues', 'Martins', 'Sousa',
  'Fernandes', 'Gonçalves', 'Gomes', 'Lopes', 'Marques', 'Alves', 'Almeida', 'Ribeiro', 'Pinto',
  'Carvalho', 'Teixeira', 'Moreira', 'Correia', 'Mendes', 'Nunes', 'Soares', 'Vieira', 'Monteiro',
  'Cardoso', 'Rocha', 'Raposo', 'Neves', 'Coelho', 'Cruz', 'Cunha', 'Pires', 'Ramos', 'Reis',
  'Simões', 'Antunes', 'Matos', 'Fonseca', 'Machado', 'Azevedo', 'Barbosa', 'Tavares', 'Brandão',
] as const;
const FIRST_NAMES = [
  'João', 'José', 'António', 'Manuel', 'Francisco', 'Rui', 'Pedro', 'Paulo', 'Carlos', 'Miguel',
  'Maria', 'Ana', 'Isabel', 'Sofia', 'Catarina', 'Teresa', 'Helena', 'Joana', 'Rita', 'Marta',
] as const;
const SECTORS = [
  'Transportes', 'Construções', 'Metalúrgica', 'Têxteis', 'Distribuição', 'Panificadora',
  'Serralharia', 'Carpintaria', 'Vinhos', 'Cerâmica', 'Informática', 'Consultores', 'Mármores',
  'Cortiças', 'Conservas', 'Calçado', 'Mobiliário', 'Logística', 'Agro-Pecuária', 'Climatização',
  'Instalações Elétricas', 'Restauração', 'Plásticos', 'Tipografia', 'Materiais de Construção',
] as const;
const PLACES = [
  'Minho', 'Douro', 'Alentejo', 'Algarve', 'Ribatejo', 'Beira', 'Trás-os-Montes', 'Oeste', 'Lis',
  'Sado', 'Tejo', 'Mondego', 'Porto', 'Braga', 'Leiria', 'Aveiro', 'Viseu', 'Setúbal', 'Évora',
  'Faro', 'Coimbra', 'Guimarães', 'Barcelos', 'Águeda', 'Torres Vedras', 'Santarém',
] as const;
const MUNICIPALITIES = ['Leiria', 'Aveiro', 'Viseu', 'Évora', 'Braga', 'Guarda', 'Tomar', 'Loulé', 'Barcelos', 'Oeiras'] as const;

/** prompt: pays in full by the due date (only the fixture buyer 599000015) */
type Behaviour = 'prompt' | 'good' | 'slow' | 'bad';

interface Customer {
  nif: string;
  name: string;
  /** Upper-case ASCII name as a bank statement prints it (≤ 22 chars). */
  bankName: string;
  iban: string;
  /** Payment terms in days: 0 = pronto pagamento. */
  terms: 0 | 30 | 60 | 90;
  behaviour: Behaviour;
}

function bankify(name: string, max = 22): string {
  const ascii = name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toUpperCase()
    .replace(/[^A-Z0-9& ]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return ascii.length <= max ? ascii : ascii.slice(0, max).trimEnd();
}

function companyName(rng: Prng): string {
  const a = rng.pick(SURNAMES);
  let b = rng.pick(SURNAMES);
  if (b === a) b = SURNAMES[(SURNAMES.indexOf(a) + 7) % SURNAMES.length]!;
  const sector = rng.pick(SECTORS);
  const place = rng.pick(PLACES);
  switch (rng.int(0, 7)) {
    case 0: return `${sector} ${a} & Filhos, Lda.`;
    case 1: return `${a} & ${b}, Lda.`;
    case 2: return `${sector} do ${place}, S.A.`;
    case 3: return `${a} ${sector}, Unipessoal Lda.`;
    case 4: return `${sector} ${a} & ${b}, Lda.`;
    case 5: return `${a}, ${b} & Irmãos, Lda.`;
    case 6: return `Sociedade de ${sector} ${a}, S.A.`;
    default: return `${sector} ${place}, Lda.`;
  }
}

/**
 * The demo books' four biggest customers (indexes 0–3, which the invoice draw favours) are the
 * scoring fixtures, each paying as its profile suggests: credit decisions on these NIFs then show
 * the tenant's own payment experience (docs/erp-demo-data.md).
 */
export const FIXTURE_BUYERS: readonly { nif: string; name: string; behaviour: Behaviour }[] = [
  { nif: '599000015', name: 'Sandbox Alfa, Lda.', behaviour: 'prompt' },
  { nif: '599000040', name: 'Sandbox Delta, Lda.', behaviour: 'bad' },
  { nif: '599000023', name: 'Sandbox Beta, S.A.', behaviour: 'good' },
  { nif: '599000031', name: 'Sandbox Gama, Lda.', behaviour: 'slow' },
];

function customerAt(seedHash: number, idx: number): Customer {
  const rng = new Prng(mix3(seedHash, SALT_CUSTOMER, idx));
  const fixture = idx >= 0 && idx < FIXTURE_BUYERS.length ? FIXTURE_BUYERS[idx]! : undefined;
  if (fixture) return { nif: fixture.nif, name: fixture.name, bankName: bankify(fixture.name), iban: makePtIban(rng), terms: 30, behaviour: fixture.behaviour };
  const kind = rng.weighted(['company', 'public', 'sole'] as const, [86, 4, 10]);
  let nif: string;
  let name: string;
  if (kind === 'company') {
    nif = makeNif('5' + String(rng.int(0, 1)) + digits(rng, 6));
    name = companyName(rng);
  } else if (kind === 'public') {
    nif = makeNif('50' + digits(rng, 6)); // public bodies mostly hold 50x/6xx NIPCs
    if (rng.chance(0.5)) nif = makeNif('6' + digits(rng, 7));
    name = rng.chance(0.6) ? `Município de ${rng.pick(MUNICIPALITIES)}` : `Agrupamento de Escolas de ${rng.pick(MUNICIPALITIES)}`;
  } else {
    nif = makeNif(String(rng.int(1, 2)) + digits(rng, 7));
    name = `${rng.pick(FIRST_NAMES)} ${rng.pick(SURNAMES)} ${rng.pick(SURNAMES)}`;
  }
  const terms = kind === 'public' ? 60 : rng.weighted([0, 30, 60, 90] as const, [10, 50, 30, 10]);
  const behaviour = kind === 'public' ? 'slow' : rng.weighted(['good', 'slow', 'bad'] as const, [65, 27, 8]);
  return { nif, name, bankName: bankify(name), iban: makePtIban(rng), terms, behaviour };
}

/**
 * Customers of one generator run, memoised. Bounded: indexes are < 5000 (customer pool) or one
 * of 41 supplier indexes, so the cache never exceeds ~5 000 entries whatever the data-set size.
 */
class Customers {
  private readonly cache = new Map<number, Customer>();
  constructor(private readonly seedHash: number) {}
  get(idx: number): Customer {
    let c = this.cache.get(idx);
    if (c === undefined) {
      c = customerAt(this.seedHash, idx);
      this.cache.set(idx, c);
    }
    return c;
  }
}

const CONSUMER_NIF = '999999990';
const CONSUMER_NAME = 'Consumidor final';

// ---------------------------------------------------------------------------------------------
// Invoices
// ---------------------------------------------------------------------------------------------

type DocType = SyncedInvoice['document_type'];
const RATES: readonly DemoVatRate[] = [23, 13, 6];

// Weight tables (items, relative weights).
const T_RATE = table([0, 1, 2], [64, 11, 25]);
const T_QTY_FR = table([1, 2, 3, 5, 10], [50, 20, 10, 10, 10]);
const T_QTY_FT = table([1, 2, 3, 4, 6, 10, 12, 24, 50], [35, 15, 10, 8, 8, 8, 6, 6, 4]);
const T_DOC_TYPE = table<DocType>(['FT', 'FS', 'FR', 'NC', 'ND'], [60, 12, 14, 9, 5]);
const T_LINES_FT = table([1, 2, 3, 4, 5, 6], [30, 25, 18, 12, 8, 7]);
const T_GROUP = table([1, 2, 3, 4, 5, 6, 7, 8], [12, 22, 18, 14, 11, 9, 7, 7]);
const T_OUTCOME = table(['pay', 'partial', 'split'] as const, [82, 8, 10]);

interface Normalised {
  seed: string;
  seedHash: number;
  n: number;
  startDay: number;
  provider: string;
}

function normalise(opts: DemoDatasetOptions): Normalised {
  if (!opts || typeof opts.seed !== 'string') throw new TypeError('seed must be a string');
  if (!Number.isSafeInteger(opts.invoices) || opts.invoices < 0) {
    throw new RangeError('invoices must be a non-negative integer');
  }
  const provider = opts.provider ?? 'demo';
  if (typeof provider !== 'string' || !/^[A-Za-z0-9_.-]+$/.test(provider)) {
    throw new RangeError('provider must be a non-empty label of letters, digits, "_", "." or "-"');
  }
  return { seed: opts.seed, seedHash: fnv1a32(opts.seed), n: opts.invoices, startDay: parseDay(opts.startDate), provider };
}

function pad6(i: number): string {
  const s = String(i);
  return s.length >= 6 ? s : '000000'.slice(s.length) + s;
}

function roundHalfUpDiv100(x: number): number {
  return Math.floor((x + 50) / 100);
}

/** Accumulates lines per VAT rate; tax per line rounded half up, sum kept equal to round(base × rate). */
class VatBuckets {
  readonly base = [0, 0, 0];
  readonly tax = [0, 0, 0];

  addLine(rateIdx: number, netCents: number): void {
    const r = RATES[rateIdx]!;
    let n = Math.max(1, netCents);
    // Nudge by a cent until the per-line rounding agrees with rounding the bucket total. Each
    // extra cent moves the rounding residue by r/100 < 0.5, so this ends within a few steps.
    for (let guard = 0; guard < 100; guard++) {
      const lineTax = roundHalfUpDiv100(n * r);
      if (roundHalfUpDiv100((this.base[rateIdx]! + n) * r) === this.tax[rateIdx]! + lineTax) {
        this.base[rateIdx] = this.base[rateIdx]! + n;
        this.tax[rateIdx] = this.tax[rateIdx]! + lineTax;
        return;
      }
      n++;
    }
    throw new Error('unreachable: VAT rounding did not converge');
  }

  breakdown(): SyncedInvoice['vat_breakdown'] {
    const out: SyncedInvoice['vat_breakdown'] = [];
    for (let k = 0; k < RATES.length; k++) {
      if (this.base[k]! > 0) out.push({ rate: RATES[k]!, base_cents: this.base[k]!, tax_cents: this.tax[k]! });
    }
    return out;
  }
}

function pickRateIdx(rng: Prng): number {
  return rng.draw(T_RATE);
}

/** Quantity × unit price for one line of a document of the given kind. */
function lineNet(rng: Prng, type: DocType): number {
  switch (type) {
    case 'FS': return rng.int(1, 4) * rng.logInt(150, 6000);
    case 'ND': return rng.logInt(500, 15000);
    case 'FR': return rng.draw(T_QTY_FR) * rng.logInt(300, 120000);
    default: return rng.draw(T_QTY_FT) * rng.logInt(250, 250000);
  }
}

interface RingEntry {
  number: string;
  customerIdx: number; // -1 = consumidor final
  nif: string;
  name: string;
  breakdown: SyncedInvoice['vat_breakdown'];
}

/** One generated document plus what the transaction generator needs to know about it. */
interface RawInvoice {
  index: number;
  /** Epoch day of issue. */
  day: number;
  customerIdx: number; // -1 = consumidor final
  inv: SyncedInvoice;
}

const RING_SIZE = 64;

function businessDays(startDay: number): number[] {
  // The start date itself (whatever the weekday), then every weekday of the next ~12 months.
  const days = [startDay];
  for (let d = startDay + 1; d < startDay + 365; d++) {
    const w = weekday(d);
    if (w !== 0 && w !== 6) days.push(d);
  }
  return days;
}

/** Documents in issue order, without `updated_at` (stamped by `stampGroups`). */
function* rawInvoices(o: Normalised, customers: Customers): Generator<RawInvoice> {
  const { n, seedHash } = o;
  if (n === 0) return;
  const days = businessDays(o.startDay);
  const customerCount = Math.min(5000, Math.max(5, Math.ceil(n / 12)));
  const seq = new Map<string, number>();
  const codes = new Map<string, string>();
  const ring: RingEntry[] = [];
  let ringNext = 0;

  for (let i = 0; i < n; i++) {
    const rng = new Prng(mix3(seedHash, SALT_INVOICE, i));
    // Issue day: position (i + u) / n of the business days; monotone in i, first on startDate.
    const u = i === 0 ? 0 : rng.next();
    const day = days[Math.min(days.length - 1, Math.floor(((i + u) * days.length) / n))]!;

    let type = rng.draw(T_DOC_TYPE);
    if ((type === 'NC' || type === 'ND') && ring.length === 0) type = 'FT';
    const status: 'N' | 'A' = rng.chance(0.02) ? 'A' : 'N';

    const buckets = new VatBuckets();
    let customerIdx: number;
    let nif: string;
    let name: string;
    let references: string[] = [];
    let breakdown: SyncedInvoice['vat_breakdown'];
    let terms = 0;

    if (type === 'NC' || type === 'ND') {
      const ref = ring[rng.int(0, ring.length - 1)]!;
      customerIdx = ref.customerIdx;
      nif = ref.nif;
      name = ref.name;
      references = [ref.number];
      if (type === 'NC') {
        // Full credit (returns, cancelled order) or a partial one (discount, damaged goods).
        const full = rng.chance(0.4);
        const f = full ? 1 : 0.05 + rng.next() * 0.55;
        breakdown = ref.breakdown.map((b) => {
          const base = full ? b.base_cents : Math.max(1, Math.round(b.base_cents * f));
          return { rate: b.rate, base_cents: base, tax_cents: roundHalfUpDiv100(base * b.rate) };
        });
      } else {
        buckets.addLine(0, lineNet(rng, 'ND')); // interest/charges, normal rate
        breakdown = buckets.breakdown();
        terms = 30;
      }
    } else {
      const consumer = type === 'FS' && rng.chance(0.35);
      if (consumer) {
        customerIdx = -1;
        nif = CONSUMER_NIF;
        name = CONSUMER_NAME;
      } else {
        customerIdx = Math.floor(customerCount * rng.next() ** 2); // a few big customers
        const c = customers.get(customerIdx);
        nif = c.nif;
        name = c.name;
        terms = c.terms;
      }
      const lines = type === 'FT' ? rng.draw(T_LINES_FT) : rng.int(1, 3);
      for (let l = 0; l < lines; l++) buckets.addLine(pickRateIdx(rng), lineNet(rng, type));
      breakdown = buckets.breakdown();
    }

    let net = 0;
    let tax = 0;
    for (const b of breakdown) {
      net += b.base_cents;
      tax += b.tax_cents;
    }

    const series = yearOfDay(day);
    const key = `${type} ${series}`;
    const sequence = (seq.get(key) ?? 0) + 1;
    seq.set(key, sequence);
    let code = codes.get(key);
    if (code === undefined) {
      code = validationCode(seedHash, type, series);
      codes.set(key, code);
    }
    const number = `${key}/${sequence}`;

    const inv: SyncedInvoice = {
      provider_document_id: `${o.provider}-inv-${pad6(i + 1)}`,
      document_type: type,
      number,
      atcud: `${code}-${sequence}`,
      issue_date: fmtDay(day),
      due_date: type === 'FS' || type === 'FR' ? null : fmtDay(day + terms),
      customer_nif: nif,
      customer_name: name,
      currency: 'EUR',
      net_total_cents: net,
      tax_total_cents: tax,
      gross_total_cents: net + tax,
      vat_breakdown: breakdown,
      status,
      references,
      updated_at: '',
    };

    if (status === 'N' && (type === 'FT' || type === 'FR' || type === 'FS')) {
      const entry: RingEntry = { number, customerIdx, nif, name, breakdown };
      if (ring.length < RING_SIZE) ring.push(entry);
      else ring[ringNext] = entry;
      ringNext = (ringNext + 1) % RING_SIZE;
    }
    yield { index: i, day, customerIdx, inv };
  }
}

/**
 * Assigns `updated_at` to consecutive groups of 1–8 items (the first group has ≥ 2 when there
 * are ≥ 2 items; later groups are also closed early when the next item is more than
 * `maxSpanDays` after the group's first one): all items of a group share one timestamp,
 * timestamps never decrease, and a group's timestamp is on or after the day of its last item.
 * Holds at most one group in memory.
 */
function* stampGroups<T extends { updated_at: string }>(
  src: Iterable<{ value: T; day: number }>,
  rng: Prng,
  opts: { firstHour: number; spreadSec: number; maxStepSec: number; maxSpanDays: number },
): Generator<T> {
  let clock = -Infinity;
  let group: T[] = [];
  let groupDay = 0;
  let groupFirstDay = 0;
  let first = true;
  let target = rng.int(2, 6);
  const nextTarget = (): number => rng.draw(T_GROUP);
  const flush = (): void => {
    const dayStart = groupDay * 86400 + opts.firstHour * 3600;
    clock = clock < dayStart ? dayStart + rng.int(0, opts.spreadSec) : clock + rng.int(1, opts.maxStepSec);
    const ts = fmtTimestamp(clock);
    for (const v of group) v.updated_at = ts;
  };
  for (const { value, day } of src) {
    if (group.length >= (first ? 2 : 1) && day > groupFirstDay + opts.maxSpanDays) {
      flush();
      yield* group;
      group = [];
      first = false;
      target = nextTarget();
    }
    if (group.length === 0) groupFirstDay = day;
    group.push(value);
    groupDay = day;
    if (group.length >= target) {
      flush();
      yield* group;
      group = [];
      first = false;
      target = nextTarget();
    }
  }
  if (group.length > 0) {
    flush();
    yield* group;
  }
}

/** Documents (FT, FS, FR, NC, ND) in issue order; lazy, deterministic, memory-flat. */
export function* demoInvoices(opts: DemoDatasetOptions): Generator<SyncedInvoice> {
  const o = normalise(opts);
  if (o.n === 0) return;
  const perDay = o.n / 261;
  const groupsPerDay = perDay / 4;
  yield* stampGroups(
    (function* () {
      for (const r of rawInvoices(o, new Customers(o.seedHash))) yield { value: r.inv, day: r.day };
    })(),
    new Prng(mix3(o.seedHash, SALT_STAMP_INV, 0)),
    {
      firstHour: 8,
      spreadSec: groupsPerDay <= 1 ? 9 * 3600 : 3600,
      maxStepSec: Math.max(1, Math.min(3600, Math.floor((9 * 3600) / Math.max(1, groupsPerDay)))),
      maxSpanDays: 7,
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Transactions
// ---------------------------------------------------------------------------------------------

/** Payment delays in calendar days after issue; one merge lane per delay. */
const DELAYS = [0, 3, 15, 30, 45, 60, 90, 120] as const;

type PlanItem =
  | { delay: number; kind: 'pay' | 'partial' | 'split1' | 'split2' | 'refund'; amount: number }
  | { delay: number; kind: 'unrelated' };

function delayIndex(d: number): number {
  const k = DELAYS.indexOf(d as (typeof DELAYS)[number]);
  return k < 0 ? 0 : k;
}

/** What happens in the bank to document `r`: a pure function of the seed and the document. */
function paymentPlan(seedHash: number, customers: Customers, r: RawInvoice): PlanItem[] {
  const rng = new Prng(mix3(seedHash, SALT_PLAN, r.index));
  const inv = r.inv;
  const plan: PlanItem[] = [];
  const gross = inv.gross_total_cents;
  if (inv.status === 'N') {
    switch (inv.document_type) {
      case 'FT':
      case 'ND': {
        const c: Pick<Customer, 'terms' | 'behaviour'> =
          r.customerIdx >= 0 ? customers.get(r.customerIdx) : { terms: 0, behaviour: 'good' };
        const unpaid = c.behaviour === 'prompt' ? 0 : c.behaviour === 'good' ? 0.1 : c.behaviour === 'slow' ? 0.2 : 0.45;
        if (rng.chance(unpaid)) break;
        const base: readonly number[] =
          c.behaviour === 'prompt'
            ? c.terms === 0 ? [0, 3] : c.terms === 30 ? [15, 30] : c.terms === 60 ? [30, 60] : [60, 90]
            : c.terms === 0 ? [3, 3, 15] : c.terms === 30 ? [15, 30, 30, 30, 45] : c.terms === 60 ? [45, 60, 60, 90] : [60, 90, 90, 120];
        const shift = c.behaviour === 'prompt' || c.behaviour === 'good' ? 0 : c.behaviour === 'slow' ? 1 : 2;
        const k = Math.min(DELAYS.length - 1, delayIndex(rng.pick(base)) + shift);
        const outcome = c.behaviour === 'prompt' ? 'pay' : rng.draw(T_OUTCOME);
        if (outcome === 'split' && gross >= 10000) {
          const k1 = Math.min(k, DELAYS.length - 3);
          const first = Math.round(gross * (0.3 + rng.next() * 0.4));
          plan.push({ delay: DELAYS[k1]!, kind: 'split1', amount: first });
          plan.push({ delay: DELAYS[k1 + 2]!, kind: 'split2', amount: gross - first });
        } else if (outcome === 'partial' && gross >= 200) {
          plan.push({ delay: DELAYS[k]!, kind: 'partial', amount: Math.round(gross * (0.2 + rng.next() * 0.75)) });
        } else {
          plan.push({ delay: DELAYS[k]!, kind: 'pay', amount: gross });
        }
        break;
      }
      case 'FR':
        if (rng.chance(0.5)) plan.push({ delay: 0, kind: 'pay', amount: gross });
        break;
      case 'FS':
        if (rng.chance(r.customerIdx < 0 ? 0.1 : 0.25)) plan.push({ delay: r.customerIdx < 0 ? 0 : 3, kind: 'pay', amount: gross });
        break;
      case 'NC':
        if (rng.chance(0.2)) plan.push({ delay: 15, kind: 'refund', amount: -gross });
        break;
    }
  }
  if (rng.chance(0.13)) plan.push({ delay: 0, kind: 'unrelated' });
  return plan;
}

type TxnDraft = Omit<SyncedTransaction, 'provider_transaction_id' | 'updated_at'>;

interface CounterpartyTemplate {
  description: string;
  name: string | null;
  hasIban: boolean;
  sign: 1 | -1;
  min: number;
  max: number;
  weight: number;
}

/** Bank movements unrelated to the sales documents (amount ranges in cents). */
const UNRELATED: readonly CounterpartyTemplate[] = [
  { description: 'PAG SERV EDP COMERCIAL', name: 'EDP Comercial', hasIban: true, sign: -1, min: 6000, max: 90000, weight: 8 },
  { description: 'PAG SERV MEO', name: 'MEO - Serviços de Comunicações e Multimédia', hasIban: true, sign: -1, min: 3000, max: 30000, weight: 6 },
  { description: 'DD VODAFONE PORTUGAL', name: 'Vodafone Portugal', hasIban: true, sign: -1, min: 2500, max: 25000, weight: 4 },
  { description: 'PAG SERV EPAL', name: 'EPAL - Empresa Portuguesa das Águas Livres', hasIban: true, sign: -1, min: 1500, max: 20000, weight: 4 },
  { description: 'DD GALP ENERGIA', name: 'Galp Energia', hasIban: true, sign: -1, min: 5000, max: 250000, weight: 6 },
  { description: 'PAG ESTADO IVA', name: 'Autoridade Tributária e Aduaneira', hasIban: false, sign: -1, min: 50000, max: 2500000, weight: 4 },
  { description: 'PAG SEG SOCIAL', name: 'Instituto da Segurança Social', hasIban: false, sign: -1, min: 30000, max: 1500000, weight: 4 },
  { description: 'TRF SALARIOS', name: null, hasIban: false, sign: -1, min: 80000, max: 5000000, weight: 4 },
  { description: 'COMISSAO MANUTENCAO CONTA', name: null, hasIban: false, sign: -1, min: 500, max: 1500, weight: 8 },
  { description: 'IMPOSTO SELO S/ COMISSOES', name: null, hasIban: false, sign: -1, min: 20, max: 60, weight: 6 },
  { description: 'SIBS TPA LIQUIDACAO', name: 'SIBS', hasIban: false, sign: 1, min: 2000, max: 300000, weight: 8 },
  { description: 'JUROS CREDORES', name: null, hasIban: false, sign: 1, min: 1, max: 2500, weight: 2 },
  { description: 'LEVANTAMENTO ATM', name: null, hasIban: false, sign: -1, min: 2000, max: 20000, weight: 3 },
  { description: 'PAG FORNECEDOR', name: '*supplier', hasIban: true, sign: -1, min: 5000, max: 1500000, weight: 14 },
  { description: 'TRF', name: '*customer', hasIban: true, sign: 1, min: 5000, max: 500000, weight: 8 },
];
const T_UNRELATED = table(UNRELATED, UNRELATED.map((t) => t.weight));

function unrelatedDraft(seedHash: number, customers: Customers, r: RawInvoice, bookingDay: number, customerCount: number): TxnDraft {
  const rng = new Prng(mix3(seedHash, SALT_UNRELATED, r.index));
  const t = rng.draw(T_UNRELATED);
  const amount = t.sign * rng.logInt(t.min, t.max);
  let name = t.name;
  let iban: string | null = null;
  let description = t.description;
  if (name === '*supplier' || name === '*customer') {
    // A supplier being paid, or a customer's transfer not tied to any document (advance, error):
    // the latter is a deliberate decoy for reconciliation.
    const c = customers.get(name === '*supplier' ? 100000 + rng.int(0, 40) : rng.int(0, customerCount - 1));
    name = c.name;
    iban = c.iban;
    description = `${t.description} ${c.bankName}`;
  } else if (t.hasIban) {
    iban = makePtIban(new Prng(mix3(seedHash, SALT_COUNTERPARTY, fnv1a32(t.description))));
  }
  return {
    booking_date: fmtDay(bookingDay),
    amount_cents: amount,
    currency: 'EUR',
    description,
    counterparty_name: name,
    counterparty_iban: iban,
    matched_invoice_number: null,
  };
}

function paymentDraft(seedHash: number, customers: Customers, r: RawInvoice, item: PlanItem & { amount: number }, bookingDay: number): TxnDraft {
  const inv = r.inv;
  const rng = new Prng(mix3(seedHash, SALT_PLAN ^ 0xffff, r.index * 8 + delayIndex(item.delay)));
  let name: string | null;
  let bankName: string;
  let iban: string;
  if (r.customerIdx >= 0) {
    const c = customers.get(r.customerIdx);
    name = c.name;
    bankName = c.bankName;
    iban = c.iban;
  } else {
    name = null;
    bankName = 'MB WAY';
    iban = makePtIban(rng);
  }
  const compact = inv.number.replace(' ', '');
  let description: string;
  switch (item.kind) {
    case 'refund':
      description = `TRF DEVOLUCAO ${inv.number} ${bankName}`;
      break;
    case 'partial':
      description = `TRF PARCIAL ${inv.number} ${bankName}`;
      break;
    case 'split1':
      description = `TRF ${inv.number} 1/2 ${bankName}`;
      break;
    case 'split2':
      description = `TRF ${inv.number} 2/2 ${bankName}`;
      break;
    default:
      description =
        r.customerIdx < 0
          ? `TRF MB WAY ${compact}`
          : rng.weighted([`TRF ${inv.number} ${bankName}`, `TRF SEPA ${bankName}`, `PAGAMENTO ${compact}`, `TRF ${bankName} FACT ${inv.number.split('/')[1]}`], [55, 25, 12, 8]);
  }
  return {
    booking_date: fmtDay(bookingDay),
    amount_cents: item.amount,
    currency: 'EUR',
    description,
    counterparty_name: name,
    counterparty_iban: iban,
    matched_invoice_number: inv.number,
  };
}

/** One lane: the transactions of one payment delay, in booking-date order. */
function* lane(o: Normalised, customers: Customers, delay: number, customerCount: number): Generator<{ day: number; draft: TxnDraft }> {
  for (const r of rawInvoices(o, customers)) {
    const plan = paymentPlan(o.seedHash, customers, r);
    for (const item of plan) {
      if (item.delay !== delay) continue;
      const bookingDay = nextBankDay(r.day + delay);
      const draft = item.kind === 'unrelated' ? unrelatedDraft(o.seedHash, customers, r, bookingDay, customerCount) : paymentDraft(o.seedHash, customers, r, item, bookingDay);
      yield { day: bookingDay, draft };
    }
  }
}

/**
 * Bank transactions in booking-date order (about 0.8 per document): exact, partial and
 * two-instalment payments of the documents of `demoInvoices(opts)` (matched_invoice_number is
 * the ground truth), refunds of some credit notes (negative), and unrelated movements (fees,
 * utilities, taxes, salaries, card settlements, suppliers, decoy transfers from customers).
 * Lazy and memory-flat: one invoice stream per payment-delay lane is merged by booking date.
 */
export function* demoTransactions(opts: DemoDatasetOptions): Generator<SyncedTransaction> {
  const o = normalise(opts);
  if (o.n === 0) return;
  const customerCount = Math.min(5000, Math.max(5, Math.ceil(o.n / 12)));
  const customers = new Customers(o.seedHash);
  const lanes = DELAYS.map((d) => lane(o, customers, d, customerCount));
  const heads = lanes.map((l) => l.next());
  let counter = 0;
  const merged = function* (): Generator<{ value: SyncedTransaction; day: number }> {
    for (;;) {
      let best = -1;
      for (let k = 0; k < heads.length; k++) {
        const h = heads[k]!;
        if (h.done) continue;
        if (best < 0 || h.value.day < (heads[best]!.value as { day: number }).day) best = k;
      }
      if (best < 0) return;
      const h = heads[best]!.value as { day: number; draft: TxnDraft };
      heads[best] = lanes[best]!.next();
      counter++;
      const txn: SyncedTransaction = {
        provider_transaction_id: `${o.provider}-txn-${pad6(counter)}`,
        ...h.draft,
        updated_at: '',
      };
      yield { value: txn, day: h.day };
    }
  };
  yield* stampGroups(merged(), new Prng(mix3(o.seedHash, SALT_STAMP_TXN, 0)), {
    firstHour: 6,
    spreadSec: 3 * 3600,
    maxStepSec: 120,
    maxSpanDays: 3,
  });
}
