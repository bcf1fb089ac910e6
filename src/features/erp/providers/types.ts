import type { SyncedInvoice, SyncedTransaction } from '../demo-data';
import { UpstreamError, type HttpOptions } from './http';

/** Tokens as a provider returns them (plaintext only in memory; sealed before storage). */
export interface TokenSet {
  accessToken: string;
  refreshToken: string | null;
  /** seconds of validity from now, when the provider says */
  expiresIn: number | null;
}

export interface ProviderClientConfig {
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  apiUrl: string;
  scopes: string[];
  http: HttpOptions;
}

/**
 * What a sync needs from the connection while it pulls: a valid access token before each call
 * (refreshed when it is about to expire), a forced refresh after a 401, and the provider-side
 * account (e.g. Moloni company_id) remembered on the connection.
 */
export interface ApiSession {
  accessToken(): Promise<string>;
  /** refreshes even if not expired (after a 401); throws UpstreamError('relink_required') when that fails */
  forceRefresh(rejected: string): Promise<string>;
  externalAccountId: string | null;
  saveExternalAccountId(id: string): Promise<void>;
}

export interface ProviderClient {
  readonly pkce: boolean;
  authorizeUrl(p: { redirectUri: string; state: string; codeChallenge: string | null }): string;
  /** authorization_code grant; throws OAuthRejected when the provider refuses the code */
  exchangeCode(p: { code: string; redirectUri: string; codeVerifier: string | null }): Promise<TokenSet>;
  /** refresh_token grant; throws OAuthRejected when the refresh token is refused (→ relink_required) */
  refresh(refreshToken: string): Promise<TokenSet>;
  /** sales documents, a page at a time, mapped to the invoice row shape (order not guaranteed) */
  invoices(session: ApiSession): AsyncIterable<SyncedInvoice[]>;
  /** bank transactions, when the provider has them (TOConline and Moloni do not) */
  transactions?(session: ApiSession): AsyncIterable<SyncedTransaction[]>;
}

/**
 * How far a sync walks a provider's listing before it takes the paging as endless: the run then
 * fails upstream_rejected rather than report what it read as all of the books. Each client uses
 * the cap that fits its paging (page numbers: pages; offsets: documents).
 */
export interface PagingLimits {
  /** pages of a listing paged by number (TOConline) */
  maxPages: number;
  /** documents of a listing paged by offset (Moloni) */
  maxDocuments: number;
}
export const PAGING_LIMITS: PagingLimits = { maxPages: 100_000, maxDocuments: 10_000_000 };

/** 100000 → "100 000" (as the run's error message writes a cap) */
export const grouped = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ' ');

/** SAF-T (PT) invoice types this connector stores; other documents (quotes, guides, receipts…) are skipped. */
export const INVOICE_TYPES = new Set(['FT', 'FS', 'FR', 'NC', 'ND']);

/** An amount in euros (a JSON number, or text with one "." or "," before the decimals) in integer cents, without float drift ("12.345" → 1235, half up); null when it is not one. */
export function parseCents(v: unknown): number | null {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return null;
    v = v.toFixed(6);
  }
  if (typeof v !== 'string') return null;
  const m = /^\s*(-)?(\d*)(?:[.,](\d*))?\s*$/.exec(v);
  if (!m || !(m[2] || m[3])) return null;
  const sign = m[1] ? -1 : 1;
  const whole = Number(m[2] || '0');
  const frac = (m[3] ?? '').padEnd(3, '0');
  const cents = whole * 100 + Number(frac.slice(0, 2)) + (Number(frac[2]) >= 5 ? 1 : 0);
  return sign * cents;
}

/**
 * A document's amount, in cents: one the provider sent that is not an amount ("abc", "1.234,56",
 * "1e3") fails the run, naming the document, rather than storing a €0 invoice; absent, `absent`.
 */
export function documentCents(v: unknown, what: string, documentId: string, absent?: number): number {
  if ((v === undefined || v === null) && absent !== undefined) return absent;
  const cents = parseCents(v);
  if (cents === null) throw new UpstreamError('upstream_rejected', `document ${documentId.slice(0, 40)}: ${what} ${v === undefined ? 'is missing' : `${JSON.stringify(v).slice(0, 40)} is not an amount`}`);
  return cents;
}

/** Any timestamp a provider sends (ISO with offset, '+0100', plain date) → ISO 8601 UTC with ms; null when unparseable. */
export function isoUtc(v: unknown): string | null {
  if (typeof v !== 'string' || !v) return null;
  let s = v.trim();
  if (/^\d{4}-\d{2}-\d{2}$/.test(s)) s += 'T00:00:00Z';
  s = s.replace(/([+-]\d{2})(\d{2})$/, '$1:$2').replace(' ', 'T');
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

export const dateOnly = (v: unknown): string | null => {
  if (typeof v !== 'string') return null;
  const m = /^(\d{4}-\d{2}-\d{2})/.exec(v);
  return m ? m[1]! : null;
};
