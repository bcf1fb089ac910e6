/**
 * The AT invoice QR code (Portaria 195/2020; "Especificações Técnicas Código QR"; REFERENCE §3):
 * `CODE:value` pairs joined by `*` in a fixed order. Pure: the payload in, the named fields and the
 * checks out.
 */
import { isValidNif } from '../../lib/nif';

export interface QrCheck {
  code: string;
  severity: 'error' | 'warning';
  message: string;
  field: string | null;
}

export interface FiscalSpace {
  region: string;
  exempt_base: number | null;
  reduced_base: number | null;
  reduced_vat: number | null;
  intermediate_base: number | null;
  intermediate_vat: number | null;
  normal_base: number | null;
  normal_vat: number | null;
}

export interface DecodedQr {
  issuer_nif: string | null;
  buyer_nif: string | null;
  buyer_country: string | null;
  document_type: string | null;
  document_status: string | null;
  document_date: string | null;
  document_id: string | null;
  atcud: string | null;
  fiscal_spaces: FiscalSpace[];
  non_taxable: number | null;
  stamp_duty: number | null;
  total_taxes: number | null;
  gross_total: number | null;
  withholding: number | null;
  hash_characters: string | null;
  certificate_number: string | null;
  other_info: string | null;
}

/** The order of the codes and their maximum lengths (c032/go-ptinvoice field.go, from the AT specification). */
const ORDER: [string, number][] = [
  ['A', 9], ['B', 30], ['C', 12], ['D', 2], ['E', 1], ['F', 8], ['G', 60], ['H', 70],
  ['I1', 5], ['I2', 16], ['I3', 16], ['I4', 16], ['I5', 16], ['I6', 16], ['I7', 16], ['I8', 16],
  ['J1', 5], ['J2', 16], ['J3', 16], ['J4', 16], ['J5', 16], ['J6', 16], ['J7', 16], ['J8', 16],
  ['K1', 5], ['K2', 16], ['K3', 16], ['K4', 16], ['K5', 16], ['K6', 16], ['K7', 16], ['K8', 16],
  ['L', 16], ['M', 16], ['N', 16], ['O', 16], ['P', 16], ['Q', 4], ['R', 4], ['S', 65],
];
const POSITION = new Map(ORDER.map(([c], i) => [c, i]));
const MAX = new Map(ORDER);
const REQUIRED = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I1', 'N', 'O', 'Q', 'R'];
const DOCUMENT_TYPES = new Set(['FT', 'FS', 'FR', 'ND', 'NC', 'GR', 'GT', 'GA', 'GC', 'GD', 'CM', 'CC', 'FC', 'FO', 'NE', 'OU', 'OR', 'PF', 'RP', 'RE', 'CS', 'LD', 'RA', 'RC', 'RG']);
const STATUSES = new Set(['N', 'A', 'S', 'F', 'R', 'T']);

/**
 * VAT rates by fiscal space (reduced, intermediate, normal), each set from the day it took effect
 * (CIVA art. 18.º): the Azores' normal rate 18 → 16 % from 2021-07-01 (Decreto Legislativo Regional
 * 15-A/2021/A), Madeira's reduced rate 5 → 4 % from 2024-10-01 (regional budget for 2024). Mainland
 * 6/13/23 throughout the QR code's life.
 */
export const VAT_RATE_HISTORY: Record<string, { from: string; rates: [number, number, number] }[]> = {
  PT: [{ from: '2011-01-01', rates: [6, 13, 23] }],
  'PT-AC': [
    { from: '2015-07-01', rates: [4, 9, 18] },
    { from: '2021-07-01', rates: [4, 9, 16] },
  ],
  'PT-MA': [
    { from: '2012-04-01', rates: [5, 12, 22] },
    { from: '2024-10-01', rates: [4, 12, 22] },
  ],
};
/**
 * The rate applies at the tax point (the supply), and an invoice may follow its supply by five
 * working days (CIVA art. 36.º n.º 1): a document dated this many days into a new rate may still
 * carry the previous one (a warning, not an error).
 */
export const VAT_RATE_CHANGE_GRACE_DAYS = 7;

/** the rates in force on a date (the latest set when the date is unknown), and the set before them while within the grace days */
export function vatRatesOn(region: string, date: string | null): { rates: [number, number, number]; from: string; previous: { rates: [number, number, number]; until: string } | null } | null {
  const history = VAT_RATE_HISTORY[region];
  if (!history) return null;
  let i = history.length - 1;
  if (date !== null) while (i > 0 && history[i]!.from > date) i--;
  const current = history[i]!;
  const graceEnd = new Date(Date.parse(`${current.from}T00:00:00Z`) + VAT_RATE_CHANGE_GRACE_DAYS * 86_400_000).toISOString().slice(0, 10);
  const previous = i > 0 && date !== null && date < graceEnd ? { rates: history[i - 1]!.rates, until: current.from } : null;
  return { rates: current.rates, from: current.from, previous };
}

/**
 * How far a stated VAT may be from base × rate: rounding and nothing more. Software rounds the VAT
 * of each line (half a cent at most); the QR does not say how many lines there were, so a cent is
 * allowed for every started €10 of the base, at least €0.02 and at most €0.50 (50 lines): €45 off
 * on a base of €100 000 is an error (a share of the base had allowed €50).
 */
export const VAT_TOLERANCE = { perLine: 0.01, lineEvery: 10, min: 0.02, max: 0.5 };
export const vatTolerance = (base: number) =>
  Math.min(VAT_TOLERANCE.max, Math.max(VAT_TOLERANCE.min, VAT_TOLERANCE.perLine * Math.ceil(Math.abs(base) / VAT_TOLERANCE.lineEvery)));

export class NotAtQr extends Error {}

// an amount that is not a number ("246,00": the amount_format check reports it) is absent, not NaN
// (NaN is no JSON number: the answer failed its own schema)
const amount = (v: string | undefined) => {
  if (v === undefined) return null;
  const n = Number(v);
  return Number.isFinite(n) && v.trim() !== '' ? n : null;
};

/** the date from which a document carries a real ATCUD instead of "0" (REFERENCE §3 [verify]) */
export const ATCUD_REQUIRED_FROM = '2023-01-01';
/**
 * The earliest date a QR code can carry: Decreto-Lei 28/2019 of 2019-02-15 created it (art. 7.º n.º 3;
 * Portaria 195/2020 made it due on documents from 2021-01-01, REFERENCE §3). Not 2021: the AT's own
 * specification example is dated 2019-08-12, and a copy of an earlier document printed by updated
 * software carries one.
 */
export const QR_DATES_FROM = '2019-02-15';
/** a document date may be this far past today (time zones, a clock a little fast) */
const FUTURE_SKEW_DAYS = 1;

/** `now`: the service's clock (a document dated after it is an error) */
export function decodeQr(payload: string, now: Date = new Date()): { fields: DecodedQr; raw: Record<string, string>; checks: QrCheck[] } {
  const text = payload.trim();
  const parts = text.split('*');
  const raw: Record<string, string> = {};
  const order: string[] = [];
  const checks: QrCheck[] = [];
  const err = (code: string, message: string, field: string | null = null) => checks.push({ code, severity: 'error', message, field });
  const warn = (code: string, message: string, field: string | null = null) => checks.push({ code, severity: 'warning', message, field });
  for (const part of parts) {
    const colon = part.indexOf(':');
    if (colon <= 0) throw new NotAtQr('not an AT invoice QR code: a part is not CODE:value');
    const code = part.slice(0, colon);
    if (!POSITION.has(code)) throw new NotAtQr(`not an AT invoice QR code: unknown field ${code.slice(0, 8)}`);
    if (code in raw) err('duplicate_field', `field ${code} appears twice`, code);
    raw[code] = part.slice(colon + 1);
    order.push(code);
  }
  if (!('A' in raw) || !('O' in raw)) throw new NotAtQr('not an AT invoice QR code: no issuer NIF (A) or gross total (O)');

  for (const code of REQUIRED) if (!(code in raw)) err('missing_field', `field ${code} is required`, code);
  for (let i = 1; i < order.length; i++) if (POSITION.get(order[i]!)! < POSITION.get(order[i - 1]!)!) err('field_order', `field ${order[i]} comes after ${order[i - 1]}`, order[i]!);
  for (const [code, value] of Object.entries(raw)) if (value.length > MAX.get(code)!) err('field_length', `field ${code} is longer than ${MAX.get(code)} characters`, code);

  const money = /^-?\d{1,13}\.\d{2}$/;
  for (const code of Object.keys(raw)) {
    if (/^[IJK][2-8]$|^[LMNOP]$/.test(code) && !money.test(raw[code]!)) err('amount_format', `field ${code} must be an amount with a "." and two decimals`, code);
  }

  if (raw.A !== undefined && !isValidNif(raw.A)) err('issuer_nif_invalid', 'the issuer NIF fails the check digit', 'A');
  if (raw.B !== undefined && raw.C === 'PT' && !isValidNif(raw.B)) err('buyer_nif_invalid', 'the buyer NIF fails the check digit', 'B');
  if (raw.D !== undefined && !DOCUMENT_TYPES.has(raw.D)) err('document_type', `unknown document type ${raw.D}`, 'D');
  if (raw.E !== undefined && !STATUSES.has(raw.E)) err('document_status', `unknown document status ${raw.E}`, 'E');
  // the document's unique id, "TYPE SERIES/NUMBER" (SAF-T InvoiceNo): the ATCUD's sequence is its number
  if (raw.G !== undefined && !/^\S+ [^/\s]+\/\d+$/.test(raw.G)) err('document_id_format', 'field G must be the document\'s id "TYPE SERIES/NUMBER" (e.g. FT A/7)', 'G');
  let date: string | null = null;
  if (raw.F !== undefined) {
    const m = /^(\d{4})(\d{2})(\d{2})$/.exec(raw.F);
    const d = m ? new Date(`${m[1]}-${m[2]}-${m[3]}T00:00:00Z`) : null;
    if (!m || !d || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== `${m[1]}-${m[2]}-${m[3]}`) err('date_invalid', 'field F is not a valid YYYYMMDD date', 'F');
    else date = `${m[1]}-${m[2]}-${m[3]}`;
  }
  const latest = new Date(now.getTime() + FUTURE_SKEW_DAYS * 86_400_000).toISOString().slice(0, 10);
  if (date !== null && date < QR_DATES_FROM) err('date_out_of_range', `the document date ${date} is before the QR code existed (${QR_DATES_FROM}, Decreto-Lei 28/2019)`, 'F');
  else if (date !== null && date > latest) err('date_out_of_range', `the document date ${date} is in the future`, 'F');
  // "0" stood for the ATCUD until the obligation applied in practice, from 2023 (REFERENCE §3,
  // [verify]): a warning on a later document, not an error
  if (raw.H === '0' && date !== null && date >= ATCUD_REQUIRED_FROM) warn('atcud_missing', `ATCUD 0 on a document of ${date}: a real ATCUD (code-number) is required since ${ATCUD_REQUIRED_FROM}`, 'H');
  if (raw.H !== undefined && raw.H !== '0') {
    const m = /^([A-Z0-9]{8,})-(\d+)$/.exec(raw.H);
    if (!m) err('atcud_format', 'the ATCUD must be a validation code of at least 8 characters, "-" and the sequence number', 'H');
    else {
      const seq = raw.G ? /\/(\d+)$/.exec(raw.G)?.[1] : undefined;
      if (seq !== undefined && Number(seq) !== Number(m[2])) err('atcud_sequence', `the ATCUD sequence ${m[2]} is not the document number's ${seq}`, 'H');
    }
  }

  const spaces: FiscalSpace[] = [];
  for (const p of ['I', 'J', 'K']) {
    const region = raw[`${p}1`];
    if (region === undefined) continue;
    const f = (n: number) => amount(raw[`${p}${n}`]);
    const space: FiscalSpace = { region, exempt_base: f(2), reduced_base: f(3), reduced_vat: f(4), intermediate_base: f(5), intermediate_vat: f(6), normal_base: f(7), normal_vat: f(8) };
    spaces.push(space);
    const inForce = vatRatesOn(region, date);
    if (region !== '0' && !inForce && !/^[A-Z]{2}$/.test(region)) err('fiscal_space', `unknown fiscal space ${region}`, `${p}1`);
    if (inForce) {
      const { rates, previous } = inForce;
      const pairs: [number | null, number | null, 0 | 1 | 2, string][] = [
        [space.reduced_base, space.reduced_vat, 0, `${p}4`],
        [space.intermediate_base, space.intermediate_vat, 1, `${p}6`],
        [space.normal_base, space.normal_vat, 2, `${p}8`],
      ];
      const off = (base: number, vat: number, rate: number) => Math.abs(base * (rate / 100) - vat) > vatTolerance(base) + 1e-9;
      for (const [base, vat, which, field] of pairs) {
        if (base === null && vat === null) continue;
        const rate = rates[which];
        if ((base === null) !== (vat === null)) err('vat_pair', `a base without its VAT (or VAT without its base) in ${region}`, field);
        else if (!off(base!, vat!, rate)) continue;
        else if (previous && previous.rates[which] !== rate && !off(base!, vat!, previous.rates[which]))
          warn('vat_rate_previous', `VAT ${vat!.toFixed(2)} is ${previous.rates[which]} % of ${base!.toFixed(2)}, ${region}'s rate before ${previous.until} (${rate} % since): right only if the supply took place before that date`, field);
        else
          err('vat_rate', `VAT ${vat!.toFixed(2)} is not ${rate} % of ${base!.toFixed(2)} (${region}${VAT_RATE_HISTORY[region]!.length > 1 && date !== null ? ` on ${date}` : ''}; ${(base! * (rate / 100)).toFixed(2)} within €${vatTolerance(base!).toFixed(2)} of rounding)`, field);
      }
    }
  }
  const sum = (xs: (number | null)[]) => Math.round(xs.reduce<number>((s, x) => s + (x ?? 0), 0) * 100) / 100;
  const vats = spaces.flatMap((s) => [s.reduced_vat, s.intermediate_vat, s.normal_vat]);
  const bases = spaces.flatMap((s) => [s.exempt_base, s.reduced_base, s.intermediate_base, s.normal_base]);
  const n = amount(raw.N);
  const o = amount(raw.O);
  const m = amount(raw.M);
  if (n !== null && Number.isFinite(n) && Math.abs(sum([...vats, m]) - n) > 0.01) err('total_taxes', `total taxes ${n.toFixed(2)} are not the sum of the VAT and stamp duty (${sum([...vats, m]).toFixed(2)})`, 'N');
  if (o !== null && Number.isFinite(o)) {
    const expected = sum([...bases, amount(raw.L), n ?? sum([...vats, m])]);
    if (Math.abs(expected - o) > 0.01) err('gross_total', `gross total ${o.toFixed(2)} is not bases + non-taxable + taxes (${expected.toFixed(2)})`, 'O');
  }
  if (raw.Q !== undefined && !/^[A-Za-z0-9+/=]{4}$/.test(raw.Q)) warn('hash_characters', 'field Q should be the 4 characters taken from the document signature', 'Q');
  if (raw.R !== undefined && !/^\d{1,4}$/.test(raw.R)) err('certificate_number', 'field R must be the software certificate number (up to 4 digits)', 'R');

  return {
    raw,
    checks,
    fields: {
      issuer_nif: raw.A ?? null,
      buyer_nif: raw.B ?? null,
      buyer_country: raw.C ?? null,
      document_type: raw.D ?? null,
      document_status: raw.E ?? null,
      document_date: date,
      document_id: raw.G ?? null,
      atcud: raw.H ?? null,
      fiscal_spaces: spaces,
      non_taxable: amount(raw.L),
      stamp_duty: m,
      total_taxes: n,
      gross_total: o,
      withholding: amount(raw.P),
      hash_characters: raw.Q ?? null,
      certificate_number: raw.R ?? null,
      other_info: raw.S ?? null,
    },
  };
}
