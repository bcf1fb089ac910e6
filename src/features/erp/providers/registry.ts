import { DEMO_SIZE_PRESETS } from '../demo-data';
import { ERP_PROVIDERS, type AnyProvider, type ErpProvider } from '../model';
import { HttpOptions } from './http';
import { MoloniClient } from './moloni';
import { TOConlineClient } from './toconline';
import { PAGING_LIMITS, type PagingLimits, type ProviderClient } from './types';

/**
 * The ERP provider registry and the feature's settings, read from an environment record (not
 * from process.env directly, so tests can pass their own values).
 *
 * Per provider P (upper case): ERP_P_CLIENT_ID, ERP_P_CLIENT_SECRET, ERP_P_AUTHORIZE_URL,
 * ERP_P_TOKEN_URL, ERP_P_API_URL, ERP_P_SCOPES. Endpoints default to the real ones; a provider is
 * "configured" only when this service has an API client for it AND both client credentials are set.
 */
export type Env = Record<string, string | undefined>;

export interface ProviderInfo {
  name: ErpProvider;
  /** true when live OAuth and sync work (client implemented + credentials present) */
  configured: boolean;
  /** why not, when not configured (never contains secrets) */
  reason: string | null;
  /** PKCE (S256) on the authorize/token calls */
  pkce: boolean;
  authorizeUrl: string | null;
  tokenUrl: string | null;
  apiUrl: string | null;
  scopes: string[];
  clientId: string | null;
  /** the implementation, when configured */
  client: ProviderClient | null;
}

interface Defaults {
  authorizeUrl: string | null;
  tokenUrl: string | null;
  apiUrl: string | null;
  scopes: string[];
  /** null: no API client in this service yet */
  implemented: 'toconline' | 'moloni' | null;
  /** false: its API has no bank-transaction resource (a sandbox sync of it then brings invoices only, as live would) */
  bankTransactions: boolean;
  /** false: its document list carries no VAT breakdown nor references (a sandbox sync of it then brings them empty, as live would) */
  documentDetails: boolean;
  note: string;
}

/** Real endpoints (shared domain REFERENCE §9). TOConline hosts are per instance (app17/api17 here). */
export const PROVIDER_DEFAULTS: Record<ErpProvider, Defaults> = {
  toconline: {
    authorizeUrl: 'https://app17.toconline.pt/oauth/auth',
    tokenUrl: 'https://app17.toconline.pt/oauth/token',
    apiUrl: 'https://api17.toconline.pt',
    scopes: ['commercial'],
    implemented: 'toconline',
    bankTransactions: false,
    documentDetails: false,
    note: 'OAuth2 authorization code + PKCE, Basic client auth at the token endpoint; JSON:API',
  },
  moloni: {
    authorizeUrl: 'https://api.moloni.pt/v1/authorize/',
    tokenUrl: 'https://api.moloni.pt/v1/grant/',
    apiUrl: 'https://api.moloni.pt/v1',
    scopes: [],
    implemented: 'moloni',
    bankTransactions: false,
    documentDetails: false,
    note: 'OAuth2 authorization code without PKCE; client credentials in the grant query string',
  },
  sage: {
    authorizeUrl: 'https://www.sageone.com/oauth2/auth/central?filter=apiv3.1',
    tokenUrl: 'https://oauth.accounting.sage.com/token',
    apiUrl: 'https://api.accounting.sage.com/v3.1',
    scopes: ['full_access'],
    implemented: null,
    bankTransactions: true,
    documentDetails: true,
    note: 'no API client yet (invoice and bank-transaction resources not verified)',
  },
  primavera: {
    authorizeUrl: null,
    tokenUrl: 'https://identity.primaverabss.com/core/connect/token',
    apiUrl: 'https://my.jasminsoftware.com/api',
    scopes: ['application'],
    implemented: null,
    bankTransactions: true,
    documentDetails: true,
    note: 'Jasmin uses client credentials per account, not a customer consent flow; no API client yet',
  },
  invoicexpress: {
    authorizeUrl: null,
    tokenUrl: null,
    apiUrl: null,
    scopes: [],
    implemented: null,
    bankTransactions: true,
    documentDetails: true,
    note: 'InvoiceXpress authenticates with an account API key in the query string, not OAuth; no API client yet',
  },
  phc: {
    authorizeUrl: null,
    tokenUrl: null,
    apiUrl: null,
    scopes: [],
    implemented: null,
    bankTransactions: true,
    documentDetails: true,
    note: 'no public API documentation available; no API client yet',
  },
};

export interface ErpSettings {
  providers: Record<ErpProvider, ProviderInfo>;
  /** ERP_DEMO_INVOICES: documents per sandbox data set (default DEMO_SIZE_PRESETS.small = 50) */
  demoInvoices: number;
  /** first issue date of the sandbox data set */
  demoStartDate: string;
  /** ERP_SYNC_STALL_MS: a running run whose heartbeat is older is stalled (default 30 000) */
  stallMs: number;
  /** a stalled run is retried until it was claimed this many times, then failed 'stalled' */
  maxAttempts: number;
  /** rows per write transaction */
  batchSize: number;
  http: HttpOptions;
}

const intVar = (env: Env, name: string, def: number, min: number, max: number) => {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!/^[0-9]+$/.test(raw) || !Number.isSafeInteger(n) || n < min || n > max) throw new Error(`configuration: ${name} is invalid (integer ${min}..${max})`);
  return n;
};

const urlVar = (env: Env, name: string, def: string | null) => {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!/^https?:\/\//.test(raw)) throw new Error(`configuration: ${name} is invalid (http(s) URL)`);
  return raw;
};

/** `limits`: where the clients give up on a listing that does not end (the production caps unless given) */
export function erpSettingsFromEnv(env: Env, limits: PagingLimits = PAGING_LIMITS): ErpSettings {
  const http: HttpOptions = {
    timeoutMs: intVar(env, 'ERP_HTTP_TIMEOUT_MS', 15_000, 100, 300_000),
    maxAttempts: intVar(env, 'ERP_HTTP_MAX_ATTEMPTS', 4, 1, 10),
    baseDelayMs: intVar(env, 'ERP_HTTP_BASE_DELAY_MS', 250, 0, 60_000),
    maxWaitMs: intVar(env, 'ERP_HTTP_MAX_WAIT_MS', 10_000, 0, 300_000),
  };
  const providers = {} as Record<ErpProvider, ProviderInfo>;
  for (const name of ERP_PROVIDERS) {
    const d = PROVIDER_DEFAULTS[name];
    const P = `ERP_${name.toUpperCase()}_`;
    const clientId = env[`${P}CLIENT_ID`] || null;
    const clientSecret = env[`${P}CLIENT_SECRET`] || null;
    const info: ProviderInfo = {
      name,
      configured: false,
      reason: null,
      pkce: name === 'toconline',
      authorizeUrl: urlVar(env, `${P}AUTHORIZE_URL`, d.authorizeUrl),
      tokenUrl: urlVar(env, `${P}TOKEN_URL`, d.tokenUrl),
      apiUrl: urlVar(env, `${P}API_URL`, d.apiUrl)?.replace(/\/+$/, '') ?? null,
      scopes: env[`${P}SCOPES`] !== undefined ? env[`${P}SCOPES`]!.split(/[\s,]+/).filter(Boolean) : d.scopes,
      clientId,
      client: null,
    };
    if (!d.implemented) info.reason = d.note;
    else if (!clientId || !clientSecret) info.reason = `${P}CLIENT_ID and ${P}CLIENT_SECRET are not set`;
    else if (!info.authorizeUrl || !info.tokenUrl || !info.apiUrl) info.reason = 'endpoints missing';
    else {
      const cfg = { clientId, clientSecret, authorizeUrl: info.authorizeUrl, tokenUrl: info.tokenUrl, apiUrl: info.apiUrl, scopes: info.scopes, http };
      info.client = d.implemented === 'toconline' ? new TOConlineClient(cfg, limits) : new MoloniClient(cfg, limits);
      info.configured = true;
    }
    providers[name] = info;
  }
  return {
    providers,
    demoInvoices: intVar(env, 'ERP_DEMO_INVOICES', DEMO_SIZE_PRESETS.small, 0, 10_000_000),
    demoStartDate: '2025-11-01',
    stallMs: intVar(env, 'ERP_SYNC_STALL_MS', 30_000, 100, 3_600_000),
    maxAttempts: 3,
    batchSize: intVar(env, 'ERP_SYNC_BATCH_SIZE', 500, 1, 1000),
    http,
  };
}

export const isLiveCapable = (p: AnyProvider): p is ErpProvider => p !== 'demo';
