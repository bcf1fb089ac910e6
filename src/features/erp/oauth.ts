import { createHash, randomBytes } from 'node:crypto';
import { publicBaseUrl } from '../../config';
import { and, eq, gt, inArray, lt, ne } from 'drizzle-orm';
import type { AppContext } from '../../context';
import type { Database } from '../../db/client';
import { safeEqual, sha256Hex } from '../../lib/crypto';
import { ApiError, validationError, nifCheckFails } from '../../lib/errors';
import { isValidNif } from '../../lib/nif';
import { consentPage, errorPage } from './consent';
import type { AnyProvider, ErpProvider } from './model';
import { OAuthRejected, UpstreamError } from './providers/http';
import type { ErpSettings } from './providers/registry';
import type { ApiSession, ProviderClient, TokenSet } from './providers/types';
import type { ErpCaller } from './util';

export type ConnectionRow = Database['t']['erpConnections']['$inferSelect'];

export const STATE_TTL_MS = 10 * 60_000;
/** pending connections are deleted this long after their state expired */
export const ABANDONED_AFTER_MS = 24 * 3600_000;
/** refresh an access token when it has less than this left */
export const REFRESH_MARGIN_MS = 60_000;
export const CALLBACK_PATH = '/v1/erp-connector/oauth/callback';
export const CONSENT_PATH = '/v1/erp-connector/oauth/consent';
/** the consent page's cookie (one per pending connection: `pt_consent_<connection id>`) holding the nonce its CSRF token is bound to */
export const CONSENT_COOKIE_PREFIX = 'pt_consent_';
const CSRF_PURPOSE = 'erp-consent-csrf';

/** The value of one cookie of a Cookie header, or null. */
export function cookieValue(header: string | null | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return null;
}

const b64url = (bytes: number) => randomBytes(bytes).toString('base64url');

/** The provider checks for a live caller: demo is sandbox-only, others need live OAuth configured. */
export function assertLiveProvider(settings: ErpSettings, provider: AnyProvider): asserts provider is ErpProvider {
  if (provider === 'demo') throw new ApiError('provider_not_available', 'The demo provider exists only in the sandbox; use an sk_test_ key, or a real provider with an sk_live_ key.');
  const info = settings.providers[provider];
  if (!info.configured)
    throw new ApiError('oauth_credentials_not_configured', `Live OAuth for ${provider} is not configured on this deployment yet. Test the same flow in the sandbox (sk_test_ keys) meanwhile.`);
}

/**
 * OAuth: initiate (pending connection with a hashed single-use state, PKCE where supported),
 * the sandbox consent page, and the callback (code exchange, tokens sealed with SecretBox).
 */
export class OAuthService {
  constructor(
    private readonly ctx: AppContext,
    private readonly settings: ErpSettings,
  ) {}

  private get now() {
    return this.ctx.clock.now();
  }

  baseUrl() {
    return publicBaseUrl(this.ctx.config);
  }

  redirectUri() {
    return `${this.baseUrl()}${CALLBACK_PATH}`;
  }

  async initiate(caller: ErpCaller, body: { provider: AnyProvider; customer_reference: string; return_url: string; company_nif?: string }) {
    if (body.company_nif !== undefined && !isValidNif(body.company_nif))
      throw nifCheckFails('company_nif');
    // the format check lets "https://" through; the callback must be able to redirect there
    let host = '';
    try {
      host = new URL(body.return_url).hostname;
    } catch {}
    if (!host) throw validationError([{ path: 'return_url', message: 'must be an absolute http(s) URL with a host' }]);
    let client: ProviderClient | null = null;
    if (caller.env === 'live') {
      assertLiveProvider(this.settings, body.provider);
      client = this.settings.providers[body.provider].client;
    }
    const state = b64url(32);
    const verifier = client?.pkce ? b64url(48) : null;
    const now = this.now;
    const expiresAt = new Date(now.getTime() + STATE_TTL_MS);
    const { withTx, t } = this.ctx.database;
    await withTx((tx) =>
      tx.insert(t.erpConnections).values({
        id: Bun.randomUUIDv7(),
        tenantId: caller.tenantId,
        env: caller.env,
        provider: body.provider,
        customerReference: body.customer_reference,
        status: 'pending',
        stateHash: sha256Hex(state),
        stateExpiresAt: expiresAt,
        pkceVerifierEnc: verifier ? this.ctx.secretBox.seal(verifier) : null,
        returnUrl: body.return_url,
        companyNif: body.company_nif ?? null,
        createdAt: now,
        updatedAt: now,
      }),
    );
    const authorizeUrl = client
      ? client.authorizeUrl({
          redirectUri: this.redirectUri(),
          state,
          codeChallenge: verifier ? createHash('sha256').update(verifier).digest('base64url') : null,
        })
      : `${this.baseUrl()}${CONSENT_PATH}?state=${encodeURIComponent(state)}`;
    return { authorize_url: authorizeUrl, state, expires_at: expiresAt.toISOString() };
  }

  /**
   * Abandoned flows: pending connections whose state expired more than a day ago are deleted
   * (they never held tokens). Denied / error rows stay as a record of the attempt.
   */
  async purgeAbandoned(): Promise<number> {
    const c = this.ctx.database.t.erpConnections;
    const before = new Date(this.now.getTime() - ABANDONED_AFTER_MS);
    const rows = await this.ctx.database.withTx((tx) =>
      tx
        .delete(c)
        .where(and(eq(c.status, 'pending'), lt(c.stateExpiresAt, before)))
        .returning({ id: c.id }),
    );
    return rows.length;
  }

  /** A pending connection whose state is valid, or null. */
  private async pendingByState(state: string | undefined): Promise<ConnectionRow | null> {
    if (!state || state.length > 200) return null;
    const c = this.ctx.database.t.erpConnections;
    const [row] = await this.ctx.database.db.select().from(c).where(eq(c.stateHash, sha256Hex(state))).limit(1);
    if (!row || row.status !== 'pending' || !row.stateExpiresAt || row.stateExpiresAt.getTime() <= this.now.getTime()) return null;
    // a suspended or terminated tenant cannot complete a link (no tokens stored for it)
    const tn = this.ctx.database.t.tenants;
    const [tenant] = await this.ctx.database.db.select({ status: tn.status }).from(tn).where(eq(tn.id, row.tenantId)).limit(1);
    if (tenant?.status !== 'active') return null;
    return row;
  }

  /** The CSRF token of a consent form: bound to the connection, its single-use state and the browser's cookie nonce. */
  private csrfToken(row: ConnectionRow, nonce: string) {
    return this.ctx.secretBox.mac(CSRF_PURPOSE, `${row.id}\n${row.stateHash}\n${nonce}`);
  }

  /**
   * GET of the sandbox consent page: changes nothing. It sets a cookie with a random nonce
   * (HttpOnly, SameSite=Strict, path of the page) and puts into the form the HMAC of (connection,
   * state hash, nonce) under a key derived from ENCRYPTION_KEY: nothing is stored, every process
   * of the deployment can check it, and a POST from another site carries no cookie.
   */
  async consent(state: string | undefined): Promise<Response> {
    const row = await this.pendingByState(state);
    if (!row || row.env !== 'sandbox') return invalidState();
    const nonce = b64url(24);
    const maxAge = Math.max(1, Math.ceil((row.stateExpiresAt!.getTime() - this.now.getTime()) / 1000));
    const secure = this.baseUrl().startsWith('https:') ? '; Secure' : '';
    return consentPage({
      provider: row.provider,
      customerReference: row.customerReference,
      action: CONSENT_PATH,
      state: state!,
      csrfToken: this.csrfToken(row, nonce),
      cookie: `${CONSENT_COOKIE_PREFIX}${row.id}=${nonce}; Path=${CONSENT_PATH}; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure}`,
      returnOrigin: new URL(row.returnUrl).origin,
      expiresAt: row.stateExpiresAt!,
    });
  }

  /**
   * POST of the consent form (sandbox): the decision. Checked before anything changes: a valid
   * pending sandbox state (else 400 page), the CSRF token against the cookie's nonce (else 403
   * page), decision approve|deny (else 400 page). Then the state is claimed (single use, so the
   * token dies with it) and the customer is sent back to return_url with 303.
   */
  async decide(form: { state?: unknown; csrf_token?: unknown; decision?: unknown }, cookieHeader: string | null): Promise<Response> {
    const state = typeof form.state === 'string' ? form.state : undefined;
    const row = await this.pendingByState(state);
    if (!row || row.env !== 'sandbox') return invalidState();
    const cookieName = `${CONSENT_COOKIE_PREFIX}${row.id}`;
    const nonce = cookieValue(cookieHeader, cookieName);
    const token = typeof form.csrf_token === 'string' ? form.csrf_token : '';
    if (!nonce || !token || token.length > 128 || !safeEqual(token, this.csrfToken(row, nonce))) return forgedRequest();
    if (form.decision !== 'approve' && form.decision !== 'deny')
      return errorPage(400, 'No decision', 'Choose Approve or Deny on the consent page. Nothing was connected.');
    if (!(await this.claim(row))) return invalidState();
    const clear = { 'set-cookie': `${cookieName}=; Path=${CONSENT_PATH}; Max-Age=0; HttpOnly; SameSite=Strict` };
    if (form.decision === 'deny') {
      await this.finish(row, 'denied', 'the customer denied access on the consent page');
      return redirectBack(row, 'denied', 303, clear);
    }
    await this.activate(row, null);
    return redirectBack(row, 'connected', 303, clear);
  }

  /** Claims the state (single use): clearing state_hash makes any replay an unknown state. */
  private async claim(row: ConnectionRow): Promise<boolean> {
    const c = this.ctx.database.t.erpConnections;
    const now = this.now;
    const claimed = await this.ctx.database.withTx((tx) =>
      tx
        .update(c)
        .set({ stateHash: null, updatedAt: now })
        .where(and(eq(c.id, row.id), eq(c.stateHash, row.stateHash!), eq(c.status, 'pending'), gt(c.stateExpiresAt, now)))
        .returning({ id: c.id }),
    );
    return claimed.length > 0;
  }

  private async finish(row: ConnectionRow, status: 'denied' | 'error', reason: string) {
    const c = this.ctx.database.t.erpConnections;
    await this.ctx.database.withTx((tx) => tx.update(c).set({ status, statusReason: reason.slice(0, 300), pkceVerifierEnc: null, updatedAt: this.now }).where(eq(c.id, row.id)));
  }

  /**
   * GET, the OAuth redirect target of live providers. A sandbox state is refused here (400 page,
   * state not claimed, nothing changed): sandbox links are decided by the consent form's POST only.
   */
  async callback(query: { state?: string; code?: string; error?: string }): Promise<Response> {
    const row = await this.pendingByState(query.state);
    if (!row) return invalidState();
    if (row.env === 'sandbox')
      return errorPage(
        400,
        'Use the consent page',
        'Sandbox connections are approved or denied with the buttons of the consent page, not through this address. Nothing was changed; the consent link still works until it expires.',
      );
    if (!(await this.claim(row))) return invalidState();

    const finish = async (status: 'denied' | 'error', reason: string) => {
      await this.finish(row, status, reason);
      return redirectBack(row, status);
    };
    if (query.error)
      return finish(query.error === 'access_denied' ? 'denied' : 'error', query.error === 'access_denied' ? 'the customer denied access at the provider' : `the provider answered error=${query.error.slice(0, 60)}`);
    const code = query.code;
    if (!code || code.length > 4096) return finish('error', code ? 'the authorization code in the redirect is too long' : 'the redirect carried no authorization code');

    const info = this.settings.providers[row.provider as ErpProvider];
    if (!info?.client) return finish('error', `live OAuth for ${row.provider} is not configured on this deployment`);
    let tokens: TokenSet;
    try {
      const verifier = row.pkceVerifierEnc ? this.ctx.secretBox.open(row.pkceVerifierEnc) : null;
      tokens = await info.client.exchangeCode({ code, redirectUri: this.redirectUri(), codeVerifier: verifier });
    } catch (err) {
      this.ctx.log.warn('erp oauth code exchange failed', { provider: row.provider, connectionId: row.id, error: (err as Error).message });
      return finish('error', `the provider refused the authorization code (${err instanceof UpstreamError ? err.code : 'exchange failed'})`);
    }
    await this.activate(row, tokens);
    return redirectBack(row, 'connected');
  }

  /** active + tokens sealed; an older link of the same customer and provider is superseded (disconnected). */
  private async activate(row: ConnectionRow, tokens: TokenSet | null) {
    const { withTx, t } = this.ctx.database;
    const c = t.erpConnections;
    const now = this.now;
    const box = this.ctx.secretBox;
    await withTx(async (tx) => {
      this.ctx.database.touchTenant(row.tenantId, 'inputs'); // an active connection names a NIF that scores read
      await tx
        .update(c)
        .set({ status: 'disconnected', statusReason: 'superseded by a newer link of the same customer', accessTokenEnc: null, refreshTokenEnc: null, tokenExpiresAt: null, updatedAt: now })
        .where(
          and(
            eq(c.tenantId, row.tenantId),
            eq(c.env, row.env),
            eq(c.provider, row.provider),
            eq(c.customerReference, row.customerReference),
            inArray(c.status, ['active', 'relink_required']),
            ne(c.id, row.id),
          ),
        );
      await tx
        .update(c)
        .set({
          status: 'active',
          statusReason: null,
          pkceVerifierEnc: null,
          accessTokenEnc: tokens ? box.seal(tokens.accessToken) : null,
          refreshTokenEnc: tokens?.refreshToken ? box.seal(tokens.refreshToken) : null,
          tokenExpiresAt: tokens?.expiresIn ? new Date(now.getTime() + tokens.expiresIn * 1000) : null,
          connectedAt: now,
          updatedAt: now,
        })
        .where(eq(c.id, row.id));
    });
  }
}

const invalidState = () =>
  errorPage(400, 'This link is not valid', 'The authorisation request is unknown, has expired (links last 10 minutes) or was already used. Nothing was connected.');

const forgedRequest = () =>
  errorPage(403, 'This request could not be verified', 'The consent form was not sent from the consent page of this browser (missing or wrong security token). Nothing was connected; open the consent link again.');

/** 302 after the callback (GET), 303 after the consent form (POST: the browser follows with a GET). */
function redirectBack(row: ConnectionRow, status: 'connected' | 'denied' | 'error', code: 302 | 303 = 302, extra: Record<string, string> = {}): Response {
  const u = new URL(row.returnUrl);
  u.searchParams.set('status', status);
  u.searchParams.set('provider', row.provider);
  u.searchParams.set('customer_reference', row.customerReference);
  return new Response(null, { status: code, headers: { location: u.toString(), 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', ...extra } });
}

/**
 * Access tokens of live connections. Before each API call the token is re-read and refreshed
 * when it has less than a minute left; a 401 forces one refresh. Refreshes are serialised per
 * connection inside the process (lock + re-read after acquiring), and across processes the write
 * is a compare-and-set on the stored refresh token: the loser adopts the winner's tokens. A
 * refused refresh marks the connection relink_required and wipes its tokens.
 */
export class TokenManager {
  private readonly locks = new Map<string, Promise<void>>();

  constructor(private readonly ctx: AppContext) {}

  private async withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = previous.then(() => mine);
    this.locks.set(key, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.locks.get(key) === tail) this.locks.delete(key);
    }
  }

  private async read(id: string): Promise<ConnectionRow | null> {
    const c = this.ctx.database.t.erpConnections;
    const [row] = await this.ctx.database.db.select().from(c).where(eq(c.id, id)).limit(1);
    return row ?? null;
  }

  /** `reason`: why, for the connection's status_reason (never a secret) */
  async markRelinkRequired(id: string, reason: string) {
    const { withTx, t } = this.ctx.database;
    const c = t.erpConnections;
    await withTx(async (tx) => {
      const [was] = await tx
        .update(c)
        .set({ status: 'relink_required', statusReason: reason.slice(0, 300), accessTokenEnc: null, refreshTokenEnc: null, tokenExpiresAt: null, updatedAt: this.ctx.clock.now() })
        .where(and(eq(c.id, id), eq(c.status, 'active')))
        .returning({ tenantId: c.tenantId });
      if (was) this.ctx.database.touchTenant(was.tenantId, 'inputs'); // no longer active: scores stop reading it
    });
  }

  async token(id: string, client: ProviderClient, opts: { force: boolean; rejected?: string }): Promise<string> {
    return this.withLock(id, async () => {
      const row = await this.read(id);
      if (!row || row.status === 'disconnected') throw new UpstreamError('erp_not_connected', 'the connection was disconnected');
      if (row.status !== 'active' || !row.accessTokenEnc) throw new UpstreamError('relink_required', 'the connection needs to be linked again');
      const box = this.ctx.secretBox;
      const access = box.open(row.accessTokenEnc);
      const now = this.ctx.clock.now().getTime();
      if (opts.force) {
        if (opts.rejected !== undefined && access !== opts.rejected) return access; // refreshed meanwhile
      } else if (!row.tokenExpiresAt || row.tokenExpiresAt.getTime() - now > REFRESH_MARGIN_MS) return access;
      const refreshEnc = row.refreshTokenEnc;
      if (!refreshEnc) {
        const why = 'the access token expired and there is no refresh token';
        await this.markRelinkRequired(id, why);
        throw new UpstreamError('relink_required', why);
      }
      let fresh: TokenSet;
      try {
        fresh = await client.refresh(box.open(refreshEnc));
      } catch (err) {
        if (err instanceof OAuthRejected) {
          const why = 'the provider refused the refresh token; the customer must link again';
          await this.markRelinkRequired(id, why);
          throw new UpstreamError('relink_required', why);
        }
        throw err;
      }
      const { withTx, t } = this.ctx.database;
      const c = t.erpConnections;
      const at = this.ctx.clock.now();
      const won = await withTx((tx) =>
        tx
          .update(c)
          .set({
            accessTokenEnc: box.seal(fresh.accessToken),
            refreshTokenEnc: fresh.refreshToken ? box.seal(fresh.refreshToken) : refreshEnc,
            tokenExpiresAt: fresh.expiresIn ? new Date(at.getTime() + fresh.expiresIn * 1000) : null,
            updatedAt: at,
          })
          .where(and(eq(c.id, id), eq(c.status, 'active'), eq(c.refreshTokenEnc, refreshEnc)))
          .returning({ id: c.id }),
      );
      if (won.length) return fresh.accessToken;
      // another process refreshed first: use what it stored
      const again = await this.read(id);
      if (again?.status === 'active' && again.accessTokenEnc) return box.open(again.accessTokenEnc);
      throw new UpstreamError('relink_required', 'the connection needs to be linked again');
    });
  }

  session(row: ConnectionRow, client: ProviderClient): ApiSession {
    const self = this;
    return {
      externalAccountId: row.externalAccountId,
      accessToken: () => self.token(row.id, client, { force: false }),
      forceRefresh: (rejected) => self.token(row.id, client, { force: true, rejected }),
      async saveExternalAccountId(id: string) {
        this.externalAccountId = id;
        const { withTx, t } = self.ctx.database;
        await withTx((tx) => tx.update(t.erpConnections).set({ externalAccountId: id }).where(eq(t.erpConnections.id, row.id)));
      },
    };
  }
}
