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

async function getJson<T>(source: string, cfg: AdapterConfig, path: string): Promise<T | null> {
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
  try {
    return (await res.json()) as T;
  } catch {
    throw new UpstreamError(source, `${source} sent invalid JSON`);
  }
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
      ...(bureau.financials ? { financials: bureau.financials } : {}),
      ...(bureau.payment_behaviour ? { payment_behaviour: bureau.payment_behaviour } : {}),
      ...(bureau.events ? { events: bureau.events } : {}),
      ...(crc ? { credit_register: crc } : {}),
      ...(tax ? { tax_authority: tax } : {}),
    },
  };
}
