import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { CompanyProfile, CreditRegister, Financials, PaymentBehaviour, TaxAuthority } from './engine';

/**
 * Live-tier data sources behind interfaces, each an HTTP JSON API configured by environment
 * variables (base URL, API key, timeout). Contracts (documented in docs/scoring.md):
 *   bureau: GET {BUREAU_URL}/companies/{nif} → 200 {name, sector, age_years, financials?, payment_behaviour?, events?, cost_cents} | 404
 *   CRC:    GET {CRC_URL}/exposures/{nif}    → 200 CreditRegister | 404 (no exposures reported)
 *   tax:    GET {TAX_URL}/taxpayers/{nif}    → 200 {status: 'regular'|'irregular', vat_registered} | 404 (not registered)
 * Every call sends "Authorization: Bearer <API key>" and is aborted after the timeout.
 */
export class UpstreamError extends Error {
  constructor(
    readonly source: string,
    message: string,
  ) {
    super(message);
  }
}

export interface BureauRecord {
  name: string;
  sector: string;
  age_years: number;
  financials?: Financials;
  payment_behaviour?: PaymentBehaviour;
  events?: CompanyProfile['events'];
  /** what the bureau charges for this lookup, in euro cents */
  cost_cents: number;
}

export interface LiveAdapters {
  bureau(nif: string): Promise<BureauRecord | null>;
  creditRegister(nif: string): Promise<CreditRegister | null>;
  taxAuthority(nif: string): Promise<TaxAuthority | null>;
}

export interface AdapterConfig {
  url: string;
  apiKey: string;
  timeoutMs: number;
}

// What each source must answer (docs/scoring.md §11). An answer outside it is one the service
// cannot read (503, nothing stored or billed): a revenue "NaN", an equity of -1e300, a negative
// cost or a sector "ZZ" had been scored, billed and shown as they came.
const MAX_EUR = 1e13; // ten trillion euros: more than any Portuguese company holds or owes
const Eur = (min: number) => Type.Number({ minimum: min, maximum: MAX_EUR });
const FinancialsSchema = Type.Object({
  fiscal_year: Type.Optional(Type.Union([Type.Integer({ minimum: 1900, maximum: 2199 }), Type.Null()])),
  total_assets: Eur(0),
  current_assets: Eur(0),
  cash: Eur(0),
  total_liabilities: Eur(0),
  current_liabilities: Eur(0),
  financial_debt: Eur(0),
  equity: Eur(-MAX_EUR),
  share_capital: Eur(0),
  retained_earnings: Eur(-MAX_EUR),
  revenue: Eur(0),
  ebit: Eur(-MAX_EUR),
  ebitda: Eur(-MAX_EUR),
  interest_expense: Eur(-MAX_EUR), // some sources report expenses as negative amounts
});
const BureauSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 500 }),
  sector: Type.String({ pattern: '^[A-U]([0-9]{2})?$' }), // a NACE Rev.2 section letter (and division)
  age_years: Type.Number({ minimum: 0, maximum: 500 }),
  // a block may be absent or null (no filed accounts, no trade data, no events): scored without it
  financials: Type.Optional(Type.Union([FinancialsSchema, Type.Null()])),
  payment_behaviour: Type.Optional(
    Type.Union([
      Type.Object({ dso_days: Type.Number({ minimum: 0, maximum: 3650 }), days_beyond_terms_avg: Type.Number({ minimum: -3650, maximum: 3650 }), share_of_receivables_from_top_customer: Type.Number({ minimum: 0, maximum: 1 }) }),
      Type.Null(),
    ]),
  ),
  // an event absent is one that did not happen
  events: Type.Optional(Type.Union([Type.Object({ insolvency_proceedings: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])), restructuring_proceedings: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])) }), Type.Null()])),
  cost_cents: Type.Number({ minimum: 0, maximum: 100_000 }), // up to €1000 a lookup
});
const CreditRegisterSchema = Type.Object({
  total_exposure_eur: Eur(0),
  overdue_eur: Eur(0),
  institutions_count: Type.Integer({ minimum: 0, maximum: 10_000 }),
  default_in_last_12m: Type.Boolean(),
  written_off_eur: Eur(0),
  litigation_eur: Eur(0),
});
const TaxAuthoritySchema = Type.Object({ status: Type.Union([Type.Literal('regular'), Type.Literal('irregular')]), vat_registered: Type.Boolean() });
const checkers = { bureau: TypeCompiler.Compile(BureauSchema), credit_register: TypeCompiler.Compile(CreditRegisterSchema), tax_authority: TypeCompiler.Compile(TaxAuthoritySchema) };

async function getJson<T>(source: keyof typeof checkers, cfg: AdapterConfig, path: string): Promise<T | null> {
  let res: Response;
  try {
    res = await fetch(`${cfg.url.replace(/\/$/, '')}${path}`, {
      headers: { authorization: `Bearer ${cfg.apiKey}`, accept: 'application/json' },
      signal: AbortSignal.timeout(cfg.timeoutMs),
    });
  } catch (err) {
    throw new UpstreamError(source, (err as Error).name === 'TimeoutError' ? `${source} timed out` : `${source} unreachable`);
  }
  if (res.status === 404) return null;
  if (!res.ok) throw new UpstreamError(source, `${source} answered ${res.status}`);
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    throw new UpstreamError(source, `${source} sent invalid JSON`);
  }
  const problem = checkers[source].Errors(body).First();
  if (problem) throw new UpstreamError(source, `${source} sent an answer that cannot be read (${problem.path || '(body)'}: ${problem.message})`);
  return body as T;
}

export function httpAdapters(cfg: { bureau: AdapterConfig; crc: AdapterConfig; tax: AdapterConfig }): LiveAdapters {
  return {
    bureau: (nif) => getJson<BureauRecord>('bureau', cfg.bureau, `/companies/${nif}`),
    creditRegister: (nif) => getJson<CreditRegister>('credit_register', cfg.crc, `/exposures/${nif}`),
    taxAuthority: (nif) => getJson<TaxAuthority>('tax_authority', cfg.tax, `/taxpayers/${nif}`),
  };
}

/** Adapters from the environment, or null when any of the three is not configured. */
export function adaptersFromEnv(env: Record<string, string | undefined>): LiveAdapters | null {
  const timeoutMs = Number(env.ADAPTER_TIMEOUT_MS ?? 1500);
  const one = (prefix: string): AdapterConfig | null =>
    env[`${prefix}_URL`] && env[`${prefix}_API_KEY`] ? { url: env[`${prefix}_URL`]!, apiKey: env[`${prefix}_API_KEY`]!, timeoutMs } : null;
  const bureau = one('BUREAU');
  const crc = one('CRC');
  const tax = one('TAX');
  return bureau && crc && tax ? httpAdapters({ bureau, crc, tax }) : null;
}

/** Calls the three sources concurrently and composes the engine's profile. */
export async function composeLiveProfile(adapters: LiveAdapters, nif: string): Promise<{ profile: CompanyProfile; bureauCostCents: number } | null> {
  const [bureau, crc, tax] = await Promise.all([adapters.bureau(nif), adapters.creditRegister(nif), adapters.taxAuthority(nif)]);
  if (!bureau) return null;
  return {
    bureauCostCents: bureau.cost_cents,
    profile: {
      nif,
      name: bureau.name,
      sector: bureau.sector,
      age_years: bureau.age_years,
      // (an expense reported as a negative amount is the same expense)
      ...(bureau.financials ? { financials: { ...bureau.financials, interest_expense: Math.abs(bureau.financials.interest_expense) } } : {}),
      ...(bureau.payment_behaviour ? { payment_behaviour: bureau.payment_behaviour } : {}),
      ...(bureau.events ? { events: { insolvency_proceedings: bureau.events.insolvency_proceedings === true, restructuring_proceedings: bureau.events.restructuring_proceedings === true } } : {}),
      ...(crc ? { credit_register: crc } : {}),
      ...(tax ? { tax_authority: tax } : {}),
    },
  };
}
