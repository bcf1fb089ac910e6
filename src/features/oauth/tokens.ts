import { and, desc, inArray, isNull, or, gt } from 'drizzle-orm';
import { publicBaseUrl } from '../../config';
import { decodeJwt, exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
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
/** how long a new signing key is published before it signs: more than the JWKS's max-age (300 s) and a replica's key reload (60 s) */
export const PUBLISH_AHEAD_MS = 10 * 60_000;
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

/** jwtVerify's clock tolerance for exp and nbf */
const CLOCK_TOLERANCE_MS = 5_000;
/** verified tokens a process remembers (~1 KB each) */
const VERIFIED_TOKENS_MAX = 10_000;

/** What a verified token says (OAuthTokens.verify), and the principal last derived from it. */
interface VerifiedToken {
  kid: string;
  /** the client's principal row's key hash (clientKeyHash of `sub`) */
  keyHash: string;
  tid: string;
  scope: string;
  expMs: number;
  nbfMs: number;
  principal?: { of: KeyRow; tenant: TenantRow; found: { key: KeyRow; tenant: TenantRow } };
}

export class OAuthTokens {
  private keys = new Map<string, LoadedKey>();
  private loadedAtMs = 0;
  private forcedLoadAtMs = -Infinity;
  private loading: Promise<void> | null = null;

  constructor(private readonly ctx: AppContext) {}

  get issuer() {
    return publicBaseUrl(this.ctx.config);
  }
  private now() {
    return this.ctx.clock.now();
  }
  private get ttlS() {
    return this.ctx.config.oauthTokenTtlSeconds;
  }

  private async load(force = false) {
    if (!force && this.now().getTime() - this.loadedAtMs < 60_000 && this.keys.size) return;
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
        this.loadedAtMs = this.now().getTime();
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

  /**
   * The key new tokens are signed with: the newest unretired key published for PUBLISH_AHEAD_MS
   * (so every verifier that caches the JWKS by its max-age already holds it), or the first key
   * while there is no other. A successor is made PUBLISH_AHEAD_MS before the signing key is due
   * for rotation; once it signs, the older keys are retired (still published for a token lifetime).
   */
  private async signingKey(): Promise<LoadedKey> {
    await this.load();
    const now = this.now().getTime();
    // newest first (kids are time-ordered: they break a tie of created_at)
    const live = [...this.keys.values()].filter((k) => !k.retiredAt).sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.kid < b.kid ? 1 : -1));
    if (!live.length) {
      await this.addKey(new Date(0));
      return this.signingKey();
    }
    const signer = live.find((k) => now - k.createdAt.getTime() >= PUBLISH_AHEAD_MS) ?? live[live.length - 1]!;
    const older = live.slice(live.indexOf(signer) + 1);
    if (older.length) await this.retire(older);
    const successor = live[0] !== signer;
    if (!successor && now - signer.createdAt.getTime() >= this.ctx.config.oauthKeyRotateDays * 86_400_000 - PUBLISH_AHEAD_MS) await this.addKey(signer.createdAt);
    return signer;
  }

  /**
   * A new signing key, published at once; it signs once it has been published PUBLISH_AHEAD_MS,
   * and the key signing until then stays published for a token lifetime after.
   */
  async rotate(): Promise<string> {
    await this.adding; // (one made meanwhile for the rotation schedule does not stand for this one)
    return (await this.makeKey(null))!;
  }

  private adding: Promise<string | null> | null = null;
  /**
   * A new key, unless an unretired one newer than `after` exists by then. One at a time in a
   * process (the token requests of one moment would each make one); across replicas the check is
   * made in the inserting transaction, and two made at once are both published (the newest signs).
   */
  private addKey(after: Date): Promise<string | null> {
    this.adding ??= this.makeKey(after).finally(() => (this.adding = null));
    return this.adding;
  }

  /** a new key (published at once), unless `after` is given and an unretired key newer than it exists */
  private makeKey(after: Date | null): Promise<string | null> {
    return (async () => {
      const { publicKey, privateKey } = await generateKeyPair(ALG, { extractable: true });
      const kid = `k_${Bun.randomUUIDv7().replaceAll('-', '').slice(0, 20)}`;
      const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: 'sig' };
      const privateJwk = await exportJWK(privateKey);
      const t = this.ctx.database.t.oauthSigningKeys;
      const made = await this.ctx.database.withTx(async (tx) => {
        if (after && (await tx.select({ kid: t.kid }).from(t).where(and(isNull(t.retiredAt), gt(t.createdAt, after))).limit(1)).length) return null;
        await tx.insert(t).values({ kid, alg: ALG, publicJwk, privateJwkEnc: this.ctx.secretBox.seal(JSON.stringify(privateJwk)), createdAt: this.now(), retiredAt: null });
        return kid;
      });
      await this.load(true);
      return made;
    })();
  }

  private async retire(keys: LoadedKey[]) {
    const t = this.ctx.database.t.oauthSigningKeys;
    await this.ctx.database.withTx((tx) => tx.update(t).set({ retiredAt: this.now() }).where(and(inArray(t.kid, keys.map((k) => k.kid)), isNull(t.retiredAt))));
    await this.load(true);
  }

  /** GET /.well-known/jwks.json: never empty (a verifier caching an empty set would refuse the first tokens) */
  async jwks() {
    await this.load();
    if (![...this.keys.values()].some((k) => !k.retiredAt)) await this.signingKey();
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
    // (the error responder gives every 401 its RFC 6750 challenge, with the message as error_description)
    const invalid = (why: string, code: 'invalid_api_key' | 'access_token_expired' | 'access_token_revoked' = 'invalid_api_key') =>
      new ApiError(code, `The access token is not valid: ${why}.`);
    await this.load();
    const nowMs = this.now().getTime();
    let claims = this.verified.get(token);
    // a token verified before is taken on its signature's word while its key is still accepted and
    // it is within its times (with jwtVerify's tolerance); anything else is verified again
    if (claims && !(this.keys.has(claims.kid) && nowMs <= claims.expMs + CLOCK_TOLERANCE_MS && nowMs >= claims.nbfMs - CLOCK_TOLERANCE_MS)) {
      this.verified.delete(token);
      claims = undefined;
    }
    if (!claims) {
      const checked = await this.verifySignature(token, invalid);
      if (checked instanceof ApiError) return checked;
      claims = checked;
      if (this.verified.size >= VERIFIED_TOKENS_MAX) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, claims);
    }
    // the client's principal read on every request (cached in process as API keys are): its
    // deletion, or its tenant's suspension, refuses the token on the next request
    const found = await this.ctx.tenants.findByHash(claims.keyHash);
    if (!found || found.tenant.id !== claims.tid || found.tenant.status === 'terminated') return invalid('the client is unknown');
    if (found.key.revokedAt) return invalid('its client was deleted', 'access_token_revoked');
    // the principal with the token's scopes: the same object while the client's row is (the rate
    // limiter names its budgets by key object)
    const last = claims.principal;
    if (last && last.of === found.key && last.tenant === found.tenant) return last.found;
    const granted = new Set(found.key.scopes);
    const scopes = claims.scope.split(' ').filter((s) => granted.has('*') || granted.has(s));
    const principal = { key: { ...found.key, scopes }, tenant: found.tenant };
    claims.principal = { of: found.key, tenant: found.tenant, found: principal };
    return principal;
  }

  /** tokens whose signature and claims were verified, by their text (bounded: the oldest goes first) */
  private readonly verified = new Map<string, VerifiedToken>();

  /** The token's signature, issuer, audience, type and times checked (jose), and what the service reads from its claims. */
  private async verifySignature(token: string, invalid: (why: string, code?: 'access_token_expired') => ApiError): Promise<VerifiedToken | ApiError> {
    let payload: JWTPayload;
    let kid: string;
    try {
      const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8')) as { kid?: string; alg?: string };
      if (header.alg !== ALG || typeof header.kid !== 'string') return invalid('not one of this service\u2019s tokens');
      kid = header.kid;
      let key = this.keys.get(kid);
      if (!key) {
        // a key is withdrawn a token lifetime after it stopped signing: a token of it read past
        // its expiry says so (unverified: either way it is refused, and the client asks again)
        const { exp, iss } = decodeJwt(token);
        if (iss === this.issuer && typeof exp === 'number' && exp * 1000 < this.now().getTime() - CLOCK_TOLERANCE_MS) return invalid('expired; request a new one', 'access_token_expired');
        // a first key made by another replica since (later keys are published ahead of signing):
        // read again, at most once a second whatever unknown kids are sent
        if (this.now().getTime() - this.forcedLoadAtMs >= 1_000) {
          this.forcedLoadAtMs = this.now().getTime();
          await this.load(true);
          key = this.keys.get(kid);
        }
        if (!key) return invalid('signed with an unknown or withdrawn key');
      }
      ({ payload } = await jwtVerify(token, key.verify, { issuer: this.issuer, audience: this.issuer, algorithms: [ALG], typ: TOKEN_TYPE, currentDate: this.now(), clockTolerance: CLOCK_TOLERANCE_MS / 1000 }));
    } catch (err) {
      const code = (err as { code?: string }).code;
      return code === 'ERR_JWT_EXPIRED' ? invalid('expired; request a new one', 'access_token_expired') : invalid('bad signature or claims');
    }
    if (typeof payload.sub !== 'string' || typeof payload.tid !== 'string' || typeof payload.scope !== 'string' || typeof payload.exp !== 'number') return invalid('claims missing');
    return {
      kid,
      keyHash: clientKeyHash(payload.sub),
      tid: payload.tid,
      scope: payload.scope,
      expMs: payload.exp * 1000,
      nbfMs: typeof payload.nbf === 'number' ? payload.nbf * 1000 : -Infinity,
    };
  }
}
