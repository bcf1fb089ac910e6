import { FormatRegistry, Type, type IntegerOptions } from '@sinclair/typebox';
import { t } from 'elysia';
import { isValidNif, NIF_SHAPE } from './nif';
// loaded first for its side effect: see the formats registered below
import '@elysiajs/openapi';

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;
/**
 * `format: date-time` as JSON Schema and OpenAPI define it (RFC 3339: a date, a time and a time
 * zone), replacing Elysia's own check, which also takes a date alone or any text Date can parse
 * (so a request could pass validation with a value the document calls invalid, and a date alone
 * would silently mean UTC midnight). Registered at load, whichever of the two modules loads first.
 */
export function isRfc3339DateTime(value: string): boolean {
  const m = RFC3339.exec(value);
  if (!m) return false;
  // checked on every date-time of every answer (a response schema): no arrays, no Date objects
  const year = +m[1]!;
  const month = +m[2]!;
  const day = +m[3]!;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
  if (+m[4]! > 23 || +m[5]! > 59 || +m[6]! > 59) return false; // no leap seconds: Date cannot hold them
  // what passes the pattern and these ranges, Date parses (0000 to 9999, any fraction, either case)
  return m[9] === undefined || (+m[9] <= 23 && +m[10]! <= 59);
}
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const daysInMonth = (year: number, month: number) => (month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : DAYS_IN_MONTH[month - 1]!);
FormatRegistry.Set('date-time', isRfc3339DateTime);

/**
 * `uuid`, `email` and `date` with the same patterns that were in force, but compiled once. Loading
 * @elysiajs/openapi (its bundled typemap) replaces TypeBox's formats with Zod checks that build a
 * new Zod schema on every value: ~6 µs a check, measured at ~18 % of a POST /v1/esg (its answer's
 * `assessment_id`). Hence the import above: these are set after it, whatever loads first.
 */
export const FORMAT_PATTERNS = {
  // RFC 9562: version 1–8 and the variant bits, or the nil and max UUIDs (Zod v4's `uuid()`)
  uuid: /^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$/,
  // Zod v4's `email()`
  email: /^(?!\.)(?!.*\.\.)([A-Za-z0-9_'+\-\.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9\-]*\.)+[A-Za-z]{2,}$/,
  // a calendar date, leap years included (Zod v4's `date()`)
  date: /^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))$/,
} as const;
for (const [format, pattern] of Object.entries(FORMAT_PATTERNS)) FormatRegistry.Set(format, (value) => pattern.test(value));
/**
 * The years a date in a request may have: no person, invoice, payment or report of this API lies
 * outside them, and 0000-01-01 or 9999-12-31 were accepted and priced (a factoring discount ~200×
 * the invoice, a negative early payment).
 */
export const DATE_YEARS = { min: 1900, max: 2199 } as const;
/** DATE_YEARS as the pattern a request date's schema carries (one check for both uses) */
const REQUEST_YEAR = '^(19[0-9]{2}|2[01][0-9]{2})';
const REQUEST_YEAR_RE = new RegExp(REQUEST_YEAR);
const yearInRange = (value: string) => REQUEST_YEAR_RE.test(value);
/** a calendar date within DATE_YEARS (what RequestDate accepts) */
export const isRequestDate = (value: string) => FORMAT_PATTERNS.date.test(value) && yearInRange(value);
/**
 * A date a request gives: `format: date` (a calendar date) and a pattern for DATE_YEARS. Answers keep
 * plain `format: date`: dates read from books or registries (a company incorporated in 1880) are
 * answered as they are.
 */
export const RequestDate = (options: Parameters<typeof t.String>[0] = {}) => t.String({ format: 'date', pattern: `${REQUEST_YEAR}-`, ...options });
/** A date-time a request gives: RFC 3339 with its zone, in DATE_YEARS (answers keep plain `format: date-time`). */
export const RequestDateTime = (options: Parameters<typeof t.String>[0] = {}) => t.String({ format: 'date-time', pattern: `${REQUEST_YEAR}-`, ...options });
/** ISO 3166-1 alpha-2: the 249 officially assigned codes, and XK (Kosovo), which the EU and UN lists use. */
export const ISO_COUNTRY_CODES = new Set(
  (
    'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ ' +
    'DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT ' +
    'JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG ' +
    'NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH ' +
    'TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS XK YE YT ZA ZM ZW'
  ).split(' '),
);
/** `country`: an ISO 3166-1 alpha-2 code, in either case (a pattern alone took XX) */
FormatRegistry.Set('country', (value) => ISO_COUNTRY_CODES.has(value.toUpperCase()));

/**
 * `date-or-year`: a calendar date as `date` checks it, or a year alone (a birth date known only by
 * its year, as sanctions lists often give it). A pattern alone took 1971-99-99.
 */
export const isDateOrYear = (value: string) => (/^[0-9]{4}$/.test(value) && yearInRange(value)) || isRequestDate(value);
FormatRegistry.Set('date-or-year', isDateOrYear);

/**
 * `printable`: text a document prints (a party's name, an address, an invoice number): at least one
 * visible character, and no control characters (a line break or a tab split or garbled the line it
 * is printed on; a name of spaces or invisible marks named no one).
 */
FormatRegistry.Set('printable', (value) => !/\p{Cc}/u.test(value) && /[^\s\p{Cf}]/u.test(value));

/**
 * Whether a number of euros is whole cents (0.07 and 12345.67 are; 0.001 and 1e-300 are not):
 * `multipleOf: 0.01` cannot say it of binary floating point (0.07 % 0.01 ≠ 0).
 */
export const isWholeCents = (eur: number) => {
  const cents = eur * 100;
  // the tolerance is the binary noise of the product (a few ulps), not a share of the amount
  return Math.abs(cents - Math.round(cents)) <= Math.max(1e-6, Math.abs(cents) * 4 * Number.EPSILON);
};
export const WHOLE_CENTS = 'must be whole cents (at most two decimals)';
/** An amount that passed isWholeCents as the cents it is (0.1 + 0.2 is 0.3): what is decided, stored and echoed, never the client's binary noise. */
export const wholeCents = (eur: number) => Math.round(eur * 100) / 100;

/** TypeBox building blocks shared by feature models. */
export const DateTime = t.String({ format: 'date-time' });
export const NullableDateTime = t.Union([t.String({ format: 'date-time' }), t.Null()]);
export const Uuid = t.String({ format: 'uuid' });
/**
 * `nif`: nine digits whose last is the mod-11 check digit. A format rather than a check in each
 * handler, so that a NIF failing it is listed with every other problem of the request (the handler
 * never ran when the schema failed), and a route with no check of its own refuses it too.
 */
FormatRegistry.Set('nif', (value) => NIF_SHAPE.test(value) && isValidNif(value));
export const Nif = t.String({ pattern: NIF_SHAPE.source, format: 'nif', description: 'Portuguese tax number (NIF/NIPC): exactly 9 digits, the last being its mod-11 check digit (a NIF that fails it is 422 invalid_nif)', examples: ['599000015'] });
/**
 * A NIF whose check digit the route judges with the request's other problems (`nifProblems`), so
 * that a wrong one does not hide them: alone it is 422 invalid_nif, with others it is listed beside them.
 */
export const NifWithOthers = t.String({ pattern: NIF_SHAPE.source, description: 'Portuguese tax number (NIF/NIPC): exactly 9 digits, the last being its mod-11 check digit (judged with the request\'s other problems: alone, a NIF that fails it is 422 invalid_nif)', examples: ['599000015'] });
/** Nine digits whose check digit the route itself judges (KYC: a wrong one is a failed check, not a 422). */
export const NineDigits = t.String({ pattern: NIF_SHAPE.source, description: 'Portuguese tax number (NIF/NIPC): exactly 9 digits', examples: ['599000015'] });
/** Text a document prints, 1 to `max` characters (format `printable`). */
export const Text = (max: number, description?: string) => t.String({ minLength: 1, maxLength: max, format: 'printable', ...(description ? { description } : {}) });
export const CustomerReference = t.String({ maxLength: 128, description: 'Your own reference, echoed back (max 128 characters)' });
export const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/**
 * A whole number in a JSON body or answer: a JSON number only. Elysia's t.Integer also takes a
 * numeric string ("10"), and when that string fails the check its error names no field; it stays
 * for query and path parameters, which arrive as text.
 */
export const Int = (options?: IntegerOptions) => Type.Integer(options);

/** cursor pagination: ?limit=&cursor= → {data, next_cursor} */
/** A page's size in a list's query (every list of this API: 1–200, 50 by default) */
export const PageLimit = t.Optional(t.Integer({ minimum: 1, maximum: 200, default: 50 }));
export const PageQuery = {
  limit: PageLimit,
  cursor: t.Optional(t.String({ maxLength: 200 })),
};
export const Page = <S extends Parameters<typeof t.Array>[0]>(item: S) =>
  t.Object({ data: t.Array(item), next_cursor: t.Union([t.String(), t.Null()], { description: 'Pass as cursor to get the next page; null on the last page.' }) });

/**
 * The one pagination helper: given up to limit+1 rows (queried in page order, after the cursor),
 * returns the page and the cursor of its last row when more rows follow.
 */
export function pageOf<Row, Item>(rows: Row[], limit: number, item: (row: Row) => Item, cursorOf: (row: Row) => string) {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { data: page.map(item), next_cursor: rows.length > limit && last !== undefined ? cursorOf(last) : null };
}

/** an absolute http(s) address (a return URL): its pattern, and how a refusal of it is worded (plugins/http-errors.ts) */
export const HTTP_URL = '^[hH][tT][tT][pP][sS]?://[^/?#\\s]+([/?#]\\S*)?$';
export const HTTP_URL_MESSAGE = 'must be an absolute http(s) URL';
/** text with at least one visible character (not a space, nor an invisible format character: zero-width, bidi marks, soft hyphen) and no control characters (a reference echoed into URLs and pages) */
export const VISIBLE_TEXT = '^[^\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f\\u00ad\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2064\\ufeff][^\\u0000-\\u001f\\u007f]*$';
export const VISIBLE_TEXT_MESSAGE = 'must hold a visible character, and no control characters';

/**
 * Request objects whose unknown fields are refused (422), not ignored: the ESG answers, a decision's
 * context, the credit-policy patch. Elysia marks every body object `additionalProperties: false` as
 * it compiles a route (to strip unknown fields), so the OpenAPI document keeps that mark only on
 * these, and every other object says what the service does: unknown fields are ignored. (Also the
 * money and legal requests: factoring, confirming, insurance, the cession notice.)
 */
export const REFUSES_UNKNOWN_FIELDS = new WeakSet<object>();
export const refusesUnknownFields = <S extends object>(schema: S): S => (REFUSES_UNKNOWN_FIELDS.add(schema), schema);
/** the same for an object and every object inside it (properties, array items, union members) */
export function refusesUnknownFieldsDeep<S extends object>(schema: S): S {
  const node = schema as { type?: unknown; properties?: Record<string, object>; items?: object; anyOf?: object[] };
  if (node.type === 'object') refusesUnknownFields(schema);
  for (const child of [...Object.values(node.properties ?? {}), ...(node.items ? [node.items] : []), ...(node.anyOf ?? [])]) refusesUnknownFieldsDeep(child);
  return schema;
}
