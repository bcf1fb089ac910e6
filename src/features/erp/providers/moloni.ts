import type { SyncedInvoice } from '../demo-data';
import { authedFetch, expectJson, fetchWithRetry, readTokenResponse, UpstreamError } from './http';
import { dateOnly, documentCents, grouped, INVOICE_TYPES, isoUtc, PAGING_LIMITS, type ApiSession, type PagingLimits, type ProviderClient, type ProviderClientConfig, type TokenSet } from './types';

/**
 * Moloni (shared domain REFERENCE §9; community SDKs).
 * - Authorise: GET {api}/authorize/?response_type=code&client_id&redirect_uri&state. No PKCE.
 * - Grant: GET {api}/grant/?grant_type=authorization_code|refresh_token&client_id&client_secret
 *   &code&redirect_uri (or &refresh_token). Access tokens last 3600 s.
 * - Calls: POST {api}/{resource}/{method}/?access_token=…&json=true with a JSON body carrying
 *   company_id; list methods page with qty (≤ 50) and offset. company_id comes from
 *   companies/getAll (the first company the user can see) and is kept on the connection.
 * - Amounts: Moloni's `net_value` is the document total WITH taxes and `gross_value` the
 *   value before discounts and taxes; so gross_total = net_value, tax_total = taxes_value,
 *   net_total = net_value − taxes_value.
 * - No bank-transaction endpoint: transactions_count stays 0.
 */
export const MOLONI_PAGE_SIZE = 50;

export class MoloniClient implements ProviderClient {
  readonly pkce = false;
  constructor(
    private readonly cfg: ProviderClientConfig,
    /** a listing longer than `maxDocuments` documents fails the run (upstream_rejected) */
    private readonly limits: Pick<PagingLimits, 'maxDocuments'> = PAGING_LIMITS,
  ) {}

  authorizeUrl(p: { redirectUri: string; state: string; codeChallenge: string | null }) {
    const u = new URL(this.cfg.authorizeUrl);
    u.searchParams.set('response_type', 'code');
    u.searchParams.set('client_id', this.cfg.clientId);
    u.searchParams.set('redirect_uri', p.redirectUri);
    u.searchParams.set('state', p.state);
    if (this.cfg.scopes.length) u.searchParams.set('scope', this.cfg.scopes.join(' '));
    return u.toString();
  }

  private grant(params: Record<string, string>): Promise<TokenSet> {
    const u = new URL(this.cfg.tokenUrl);
    for (const [k, v] of Object.entries({ ...params, client_id: this.cfg.clientId, client_secret: this.cfg.clientSecret })) u.searchParams.set(k, v);
    return fetchWithRetry(() => new Request(u.toString(), { headers: { accept: 'application/json' } }), this.cfg.http).then(readTokenResponse);
  }

  exchangeCode(p: { code: string; redirectUri: string; codeVerifier: string | null }) {
    return this.grant({ grant_type: 'authorization_code', code: p.code, redirect_uri: p.redirectUri });
  }

  refresh(refreshToken: string) {
    return this.grant({ grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  private async call(session: ApiSession, path: string, body: Record<string, unknown>): Promise<unknown> {
    const build = (token: string) => {
      const u = new URL(`${this.cfg.apiUrl}/${path}/`);
      u.searchParams.set('access_token', token);
      u.searchParams.set('json', 'true');
      return new Request(u.toString(), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) });
    };
    const res = await authedFetch(session, build, this.cfg.http, isMoloniUnauthorized);
    const json = await expectJson(res, path);
    if (json && typeof json === 'object' && !Array.isArray(json) && typeof (json as { error?: unknown }).error === 'string')
      throw new UpstreamError('upstream_rejected', `${path}: the provider answered error ${(json as { error: string }).error}`);
    return json;
  }

  private async companyId(session: ApiSession): Promise<string> {
    if (session.externalAccountId) return session.externalAccountId;
    const companies = await this.call(session, 'companies/getAll', {});
    const first = Array.isArray(companies) ? (companies[0] as { company_id?: unknown } | undefined) : undefined;
    if (!first || first.company_id === undefined) throw new UpstreamError('upstream_rejected', 'companies/getAll: the account has no company');
    const id = String(first.company_id);
    await session.saveExternalAccountId(id);
    return id;
  }

  async *invoices(session: ApiSession): AsyncIterable<SyncedInvoice[]> {
    const companyId = await this.companyId(session);
    for (let offset = 0; offset < this.limits.maxDocuments; offset += MOLONI_PAGE_SIZE) {
      const docs = await this.call(session, 'documents/getAll', { company_id: Number(companyId) || companyId, qty: MOLONI_PAGE_SIZE, offset });
      if (!Array.isArray(docs)) throw new UpstreamError('upstream_rejected', 'documents/getAll: the response is not an array');
      const mapped: SyncedInvoice[] = [];
      for (const d of docs) {
        const inv = mapMoloniDocument(d);
        if (inv) mapped.push(inv);
      }
      yield mapped;
      if (docs.length < MOLONI_PAGE_SIZE) return;
    }
    // a walk that never ends is not a complete one: fail the run rather than report what was read as all of it
    throw new UpstreamError('upstream_rejected', `documents/getAll: more than ${grouped(this.limits.maxDocuments)} documents (its paging does not end)`);
  }
}

/** Moloni signals a bad token with 401, or with 400/403 and error invalid_token / expired_token. */
async function isMoloniUnauthorized(res: Response): Promise<boolean> {
  if (res.status === 401) return true;
  if (res.status !== 400 && res.status !== 403) return false;
  const body = (await res
    .clone()
    .json()
    .catch(() => null)) as { error?: unknown } | null;
  return body?.error === 'invalid_token' || body?.error === 'expired_token';
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : typeof v === 'number' ? String(v) : null);

/** A documents/getAll entry → invoice row; drafts (status 0) and non-invoice documents → null. */
export function mapMoloniDocument(d: unknown): SyncedInvoice | null {
  if (!d || typeof d !== 'object') return null;
  const a = d as Record<string, unknown>;
  const dt = a.document_type as { saft_code?: unknown } | undefined;
  const type = str(dt?.saft_code)?.toUpperCase() ?? null;
  const id = str(a.document_id);
  const issueDate = dateOnly(a.date);
  if (!id || !type || !INVOICE_TYPES.has(type) || !issueDate) return null;
  const status = Number(a.status);
  if (status === 0 || Number(a.number) < 0) return null; // draft
  const total = documentCents(a.net_value, 'net_value', id);
  const tax = documentCents(a.taxes_value, 'taxes_value', id, 0);
  const set = str(a.document_set_name) ?? str((a.document_set as { name?: unknown } | undefined)?.name) ?? '';
  return {
    provider_document_id: id,
    document_type: type as SyncedInvoice['document_type'],
    number: `${type} ${set}/${a.number}`,
    atcud: str(a.atcud) ?? '',
    issue_date: issueDate,
    due_date: type === 'FS' || type === 'FR' ? null : dateOnly(a.expiration_date),
    customer_nif: str(a.entity_vat) ?? '',
    customer_name: str(a.entity_name) ?? '',
    currency: 'EUR',
    net_total_cents: total - tax,
    tax_total_cents: tax,
    gross_total_cents: total,
    vat_breakdown: [],
    status: status === 1 ? 'N' : 'A',
    references: [],
    updated_at: isoUtc(a.lastmodified) ?? isoUtc(a.date)!,
  };
}
