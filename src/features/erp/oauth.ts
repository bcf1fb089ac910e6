import { createHash, randomBytes } from 'node:crypto';
import { and, eq, gt, inArray, lt, ne } from 'drizzle-orm';
import type { AppContext } from '../../context';
import type { Database } from '../../db/client';
import { sha256Hex } from '../../lib/crypto';
import { ApiError, validationError } from '../../lib/errors';
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
    return this.ctx.config.publicBaseUrl ?? `http://localhost:${this.ctx.config.port}`;
  }

  redirectUri() {
    return `${this.baseUrl()}${CALLBACK_PATH}`;
  }

  async initiate(caller: ErpCaller, body: { provider: AnyProvider; customer_reference: string; return_url: string }) {
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

  async consent(state: string | undefined): Promise<Response> {
    const row = await this.pendingByState(state);
    if (!row || row.env !== 'sandbox') return invalidState();
    const q = (extra: string) => `${CALLBACK_PATH}?state=${encodeURIComponent(state!)}&${extra}`;
    return consentPage({
      provider: row.provider,
      customerReference: row.customerReference,
      approveHref: q(`code=sandbox_${b64url(24)}`),
      denyHref: q('error=access_denied'),
      expiresAt: row.stateExpiresAt!,
    });
  }

  async callback(query: { state?: string; code?: string; error?: string }): Promise<Response> {
    const row = await this.pendingByState(query.state);
    if (!row) return invalidState();
    const { withTx, t } = this.ctx.database;
    const c = t.erpConnections;
    const now = this.now;
    // Claim the state first (single use): clearing state_hash makes any replay an unknown state.
    const claimed = await withTx((tx) =>
      tx
        .update(c)
        .set({ stateHash: null, updatedAt: now })
        .where(and(eq(c.id, row.id), eq(c.stateHash, row.stateHash!), eq(c.status, 'pending'), gt(c.stateExpiresAt, now)))
        .returning({ id: c.id }),
    );
    if (!claimed.length) return invalidState();

    const finish = async (status: 'denied' | 'error') => {
      await withTx((tx) => tx.update(c).set({ status, pkceVerifierEnc: null, updatedAt: this.now }).where(eq(c.id, row.id)));
      return redirectBack(row, status === 'denied' ? 'denied' : 'error');
    };
    if (query.error) return finish(query.error === 'access_denied' ? 'denied' : 'error');
    const code = query.code;
    if (!code || code.length > 4096) return finish('error');

    let tokens: TokenSet | null = null;
    if (row.env === 'sandbox') {
      if (!code.startsWith('sandbox_')) return finish('error');
    } else {
      const info = this.settings.providers[row.provider as ErpProvider];
      if (!info?.client) return finish('error');
      try {
        const verifier = row.pkceVerifierEnc ? this.ctx.secretBox.open(row.pkceVerifierEnc) : null;
        tokens = await info.client.exchangeCode({ code, redirectUri: this.redirectUri(), codeVerifier: verifier });
      } catch (err) {
        this.ctx.log.warn('erp oauth code exchange failed', { provider: row.provider, connectionId: row.id, error: (err as Error).message });
        return finish('error');
      }
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
      await tx
        .update(c)
        .set({ status: 'disconnected', accessTokenEnc: null, refreshTokenEnc: null, tokenExpiresAt: null, updatedAt: now })
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

function redirectBack(row: ConnectionRow, status: 'connected' | 'denied' | 'error'): Response {
  const u = new URL(row.returnUrl);
  u.searchParams.set('status', status);
  u.searchParams.set('provider', row.provider);
  u.searchParams.set('customer_reference', row.customerReference);
  return new Response(null, { status: 302, headers: { location: u.toString(), 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' } });
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

  async markRelinkRequired(id: string) {
    const { withTx, t } = this.ctx.database;
    const c = t.erpConnections;
    await withTx((tx) =>
      tx
        .update(c)
        .set({ status: 'relink_required', accessTokenEnc: null, refreshTokenEnc: null, tokenExpiresAt: null, updatedAt: this.ctx.clock.now() })
        .where(and(eq(c.id, id), eq(c.status, 'active'))),
    );
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
        await this.markRelinkRequired(id);
        throw new UpstreamError('relink_required', 'the access token expired and there is no refresh token');
      }
      let fresh: TokenSet;
      try {
        fresh = await client.refresh(box.open(refreshEnc));
      } catch (err) {
        if (err instanceof OAuthRejected) {
          await this.markRelinkRequired(id);
          throw new UpstreamError('relink_required', 'the provider refused the refresh token; the customer must link again');
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
