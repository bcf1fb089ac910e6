import { desc, eq, isNull, or, gt } from 'drizzle-orm';
import { exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import type { AppContext } from '../../context';
import { ApiError } from '../../lib/errors';
import { hashKey, type KeyRow, type TenantRow } from '../tenants/service';

/**
 * OAuth 2.0 access tokens (client credentials, RFC 6749 §4.4; spec §5.7): ES256-signed JWTs
 * (RFC 9068 `at+jwt`) with the tenant, environment, client and scopes, short-lived. The signing
 * keys live in the database (private half sealed), so every replica signs and verifies with the
 * same ones; a new key takes over every OAUTH_KEY_ROTATE_DAYS and the old one stays published
 * at /.well-known/jwks.json while tokens it signed can still be valid.
 */
export const TOKEN_TYPE = 'at+jwt';
export const ALG = 'ES256';
/** a JWT's shape: three base64url parts, a JSON header */
export const JWT_SHAPE = /^eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** The api_keys row that stands for a client: its hash is derived from the client id (never a usable key). */
export const clientKeyHash = (clientId: string) => hashKey(`oauth-client:${clientId}`);

type SigningRow = AppContext['database']['t']['oauthSigningKeys']['$inferSelect'];
interface LoadedKey {
  kid: string;
  publicJwk: JWK;
  verify: CryptoKey;
  sign: CryptoKey;
  createdAt: Date;
  retiredAt: Date | null;
}

export class OAuthTokens {
  private keys = new Map<string, LoadedKey>();
  private loadedAtMs = 0;
  private loading: Promise<void> | null = null;

  constructor(private readonly ctx: AppContext) {}

  get issuer() {
    return this.ctx.config.publicBaseUrl ?? `http://localhost:${this.ctx.config.port}`;
  }
  private now() {
    return this.ctx.clock.now();
  }
  private get ttlS() {
    return this.ctx.config.oauthTokenTtlSeconds;
  }

  private async load(force = false) {
    if (!force && Date.now() - this.loadedAtMs < 60_000 && this.keys.size) return;
    this.loading ??= (async () => {
      try {
        const t = this.ctx.database.t.oauthSigningKeys;
        // keys still able to have signed a valid token: not retired, or retired within a token lifetime
        const since = new Date(this.now().getTime() - (this.ttlS + 60) * 1000);
        const rows = await this.ctx.database.db.select().from(t).where(or(isNull(t.retiredAt), gt(t.retiredAt, since))).orderBy(desc(t.createdAt));
        const next = new Map<string, LoadedKey>();
        for (const r of rows) {
          const cached = this.keys.get(r.kid);
          next.set(r.kid, cached ? { ...cached, retiredAt: r.retiredAt } : await this.materialise(r));
        }
        this.keys = next;
        this.loadedAtMs = Date.now();
      } finally {
        this.loading = null;
      }
    })();
    await this.loading;
  }

  private async materialise(r: SigningRow): Promise<LoadedKey> {
    const privateJwk = JSON.parse(this.ctx.secretBox.open(r.privateJwkEnc)) as JWK;
    return {
      kid: r.kid,
      publicJwk: r.publicJwk as JWK,
      verify: (await importJWK(r.publicJwk as JWK, ALG)) as CryptoKey,
      sign: (await importJWK(privateJwk, ALG)) as CryptoKey,
      createdAt: r.createdAt,
      retiredAt: r.retiredAt,
    };
  }

  /** The key new tokens are signed with: the newest unretired one, made (and the others retired) when it is due. */
  private async signingKey(): Promise<LoadedKey> {
    await this.load();
    const rotateMs = this.ctx.config.oauthKeyRotateDays * 86_400_000;
    // newest first (kids are time-ordered: they break a tie of created_at)
    const fresh = [...this.keys.values()].filter((k) => !k.retiredAt).sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.kid < b.kid ? 1 : -1))[0];
    if (fresh && this.now().getTime() - fresh.createdAt.getTime() < rotateMs) return fresh;
    await this.rotate();
    return this.signingKey();
  }

  /** A new signing key; the older ones stop signing but stay published for a token lifetime. */
  async rotate(): Promise<string> {
    const { publicKey, privateKey } = await generateKeyPair(ALG, { extractable: true });
    const kid = `k_${Bun.randomUUIDv7().replaceAll('-', '').slice(0, 20)}`;
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: 'sig' };
    const privateJwk = await exportJWK(privateKey);
    const now = this.now();
    const t = this.ctx.database.t.oauthSigningKeys;
    await this.ctx.database.withTx(async (tx) => {
      await tx.update(t).set({ retiredAt: now }).where(isNull(t.retiredAt));
      await tx.insert(t).values({ kid, alg: ALG, publicJwk, privateJwkEnc: this.ctx.secretBox.seal(JSON.stringify(privateJwk)), createdAt: now, retiredAt: null });
    });
    await this.load(true);
    return kid;
  }

  /** GET /.well-known/jwks.json */
  async jwks() {
    await this.load();
    return { keys: [...this.keys.values()].map((k) => k.publicJwk) };
  }

  async issue(client: { id: string; tenantId: string; env: string }, scopes: string[]) {
    const key = await this.signingKey();
    const iat = Math.floor(this.now().getTime() / 1000);
    const token = await new SignJWT({ scope: scopes.join(' '), tid: client.tenantId, env: client.env, client_id: client.id })
      .setProtectedHeader({ alg: ALG, kid: key.kid, typ: TOKEN_TYPE })
      .setIssuer(this.issuer)
      .setAudience(this.issuer)
      .setSubject(client.id)
      .setIssuedAt(iat)
      .setNotBefore(iat - 5)
      .setExpirationTime(iat + this.ttlS)
      .setJti(crypto.randomUUID())
      .sign(key.sign);
    return { access_token: token, token_type: 'Bearer' as const, expires_in: this.ttlS, scope: scopes.join(' ') };
  }

  /**
   * An access token as a key: the client's principal row (its revocation, tenant state, rate limit
   * and usage attribution), with the token's scopes; an ApiError for anything not acceptable.
   */
  async verify(token: string): Promise<{ key: KeyRow; tenant: TenantRow } | ApiError> {
    const invalid = (why: string) => new ApiError('invalid_api_key', `The access token is not valid: ${why}.`);
    let payload: JWTPayload;
    try {
      const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8')) as { kid?: string; alg?: string };
      if (header.alg !== ALG || typeof header.kid !== 'string') return invalid('not one of this service\u2019s tokens');
      await this.load();
      let key = this.keys.get(header.kid);
      if (!key) {
        await this.load(true); // a key made by another replica since
        key = this.keys.get(header.kid);
      }
      if (!key) return invalid('signed with an unknown or withdrawn key');
      ({ payload } = await jwtVerify(token, key.verify, { issuer: this.issuer, audience: this.issuer, algorithms: [ALG], typ: TOKEN_TYPE, currentDate: this.now(), clockTolerance: 5 }));
    } catch (err) {
      const code = (err as { code?: string }).code;
      return invalid(code === 'ERR_JWT_EXPIRED' ? 'expired; request a new one' : 'bad signature or claims');
    }
    if (typeof payload.sub !== 'string' || typeof payload.tid !== 'string' || typeof payload.scope !== 'string') return invalid('claims missing');
    const found = await this.ctx.tenants.findByHash(clientKeyHash(payload.sub));
    if (!found || found.tenant.id !== payload.tid || found.key.revokedAt || found.tenant.status === 'terminated') return invalid('the client was deleted');
    const granted = new Set(found.key.scopes);
    const scopes = payload.scope.split(' ').filter((s) => granted.has('*') || granted.has(s));
    return { key: { ...found.key, scopes }, tenant: found.tenant };
  }
}
