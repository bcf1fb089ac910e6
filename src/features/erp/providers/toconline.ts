import type { SyncedInvoice } from '../demo-data';
import { authedFetch, expectJson, fetchWithRetry, readTokenResponse, UpstreamError } from './http';
import { dateOnly, documentCents, grouped, INVOICE_TYPES, isoUtc, PAGING_LIMITS, type ApiSession, type PagingLimits, type ProviderClient, type ProviderClientConfig, type TokenSet } from './types';

/**
 * TOConline (shared domain REFERENCE §9).
 * - Authorise: GET {oauth}/auth?client_id&redirect_uri&response_type=code&scope=commercial&state
 *   (+ code_challenge, code_challenge_method=S256).
 * - Token: POST {oauth}/token, HTTP Basic client auth, form grant_type=authorization_code|refresh_token
 *   (+ code_verifier).
 * - Data: GET {api}/api/v1/commercial_sales_documents, JSON:API (`application/vnd.api+json`),
 *   paged with page[number] / page[size] (max 500). Filters are equality-only (no "updated since"),
 *   so every sync walks all pages; the cursor then decides which rows are written.
 * - No bank-transaction endpoint: transactions_count stays 0.
 */
export const TOCONLINE_PAGE_SIZE = 100;
const JSONAPI = 'application/vnd.api+json';

export class TOConlineClient implements ProviderClient {
  readonly pkce = true;
  constructor(
    private readonly cfg: ProviderClientConfig,
    /** a listing longer than `maxPages` pages fails the run (upstream_rejected) */
    private readonly limits: Pick<PagingLimits, 'maxPages'> = PAGING_LIMITS,
  ) {}

  authorizeUrl(p: { redirectUri: string; state: string; codeChallenge: string | null }) {
    const u = new URL(this.cfg.authorizeUrl);
    u.searchParams.set('client_id', this.cfg.clientId);
    u.searchParams.set('redirect_uri', p.redirectUri);
    u.searchParams.set('response_type', 'code');
    if (this.cfg.scopes.length) u.searchParams.set('scope', this.cfg.scopes.join(' '));
    u.searchParams.set('state', p.state);
    if (p.codeChallenge) {
      u.searchParams.set('code_challenge', p.codeChallenge);
      u.searchParams.set('code_challenge_method', 'S256');
    }
    return u.toString();
  }

  private token(form: Record<string, string>): Promise<TokenSet> {
    const basic = Buffer.from(`${this.cfg.clientId}:${this.cfg.clientSecret}`).toString('base64');
    return fetchWithRetry(
      () =>
        new Request(this.cfg.tokenUrl, {
          method: 'POST',
          headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: new URLSearchParams(form).toString(),
        }),
      this.cfg.http,
    ).then(readTokenResponse);
  }

  exchangeCode(p: { code: string; redirectUri: string; codeVerifier: string | null }) {
    return this.token({
      grant_type: 'authorization_code',
      code: p.code,
      redirect_uri: p.redirectUri,
      ...(p.codeVerifier ? { code_verifier: p.codeVerifier } : {}),
    });
  }

  refresh(refreshToken: string) {
    return this.token({ grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  async *invoices(session: ApiSession): AsyncIterable<SyncedInvoice[]> {
    for (let page = 1; page <= this.limits.maxPages; page++) {
      const u = new URL(`${this.cfg.apiUrl}/api/v1/commercial_sales_documents`);
      u.searchParams.set('page[number]', String(page));
      u.searchParams.set('page[size]', String(TOCONLINE_PAGE_SIZE));
      u.searchParams.set('sort', 'id');
      const res = await authedFetch(session, (token) => new Request(u.toString(), { headers: { authorization: `Bearer ${token}`, accept: JSONAPI } }), this.cfg.http);
      const body = (await expectJson(res, 'commercial_sales_documents')) as { data?: unknown; links?: { next?: unknown } };
      if (!Array.isArray(body.data)) throw new UpstreamError('upstream_rejected', 'commercial_sales_documents: no data array in the response');
      const mapped: SyncedInvoice[] = [];
      for (const item of body.data) {
        const inv = mapTOConlineDocument(item);
        if (inv) mapped.push(inv);
      }
      yield mapped;
      const hasLinks = body.links && typeof body.links === 'object';
      if (hasLinks ? !body.links!.next : body.data.length < TOCONLINE_PAGE_SIZE) return;
      if (body.data.length === 0) return;
    }
    // a walk that never ends is not a complete one: fail the run rather than report what was read as all of it
    throw new UpstreamError('upstream_rejected', `commercial_sales_documents: more than ${grouped(this.limits.maxPages)} pages (its paging does not end)`);
  }
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : typeof v === 'number' ? String(v) : null);

/**
 * One JSON:API resource ({id, type, attributes}) or flat object → invoice row. Drafts (no
 * document number, status 0) and non-invoice documents (quotes, guides) → null.
 */
export function mapTOConlineDocument(item: unknown): SyncedInvoice | null {
  if (!item || typeof item !== 'object') return null;
  const r = item as Record<string, unknown>;
  const a = (r.attributes && typeof r.attributes === 'object' ? r.attributes : r) as Record<string, unknown>;
  const id = str(r.id) ?? str(a.id);
  const type = str(a.document_type)?.toUpperCase() ?? null;
  const number =
    str(a.document_no) ?? (a.document_series_prefix !== undefined && a.document_series_no !== undefined ? `${a.document_series_prefix}/${a.document_series_no}` : null);
  const issueDate = dateOnly(a.date);
  if (!id || !type || !INVOICE_TYPES.has(type) || !number || !issueDate) return null;
  if (Number(a.status) === 0) return null; // draft: not a fiscal document yet
  const gross = documentCents(a.gross_total, 'gross_total', id);
  const net = a.net_total !== undefined ? documentCents(a.net_total, 'net_total', id) : gross - documentCents(a.tax_payable, 'tax_payable', id, 0);
  const tax = a.tax_payable !== undefined ? documentCents(a.tax_payable, 'tax_payable', id) : gross - net;
  const annulled = a.status === 'A' || Number(a.status) === 4 || a.cancelled === true || a.voided === true;
  const updatedAt = isoUtc(a.updated_at) ?? isoUtc(a.created_at) ?? isoUtc(a.date)!;
  return {
    provider_document_id: id,
    document_type: type as SyncedInvoice['document_type'],
    number,
    atcud: str(a.atcud) ?? '',
    issue_date: issueDate,
    due_date: dateOnly(a.due_date),
    customer_nif: str(a.customer_tax_registration_number) ?? '',
    customer_name: str(a.customer_business_name) ?? '',
    currency: (str(a.currency_iso_code) ?? 'EUR') as 'EUR',
    net_total_cents: net,
    tax_total_cents: tax,
    gross_total_cents: gross,
    vat_breakdown: [],
    status: annulled ? 'A' : 'N',
    references: [],
    updated_at: updatedAt,
  };
}
