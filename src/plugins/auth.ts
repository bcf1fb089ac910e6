import { Elysia } from 'elysia';
import type { AppContext } from '../context';
import { ApiError, JSON_UTF8, notAnObject, validationError } from '../lib/errors';
import { kindsChangedByNormalisation } from '../lib/json-guard';
import { safeEqual } from '../lib/crypto';
import { rateLimitHeaders, type RateDecision, type RateRequest } from '../lib/rate-limiter';
import type { MaybePromise } from '../lib/maybe-promise';
import { IDEMPOTENCY_KEY_FORMAT } from '../features/idempotency/service';
import { inputHeaders, requestTarget } from '../features/idempotency/fingerprint';
import { effectiveRateLimit, hashKey, isClientPrincipal, KEY_FORMAT, keyStatus, type Env, type KeyRow, type Scope, type TenantRow } from '../features/tenants/service';
import { requestState } from './request-state';
import { bearerChallenge, severalAuthorizations } from '../lib/text';
import { JWT_SHAPE } from '../features/oauth/tokens';

export interface AuthContext {
  tenantId: string;
  keyId: string;
  env: Env;
  tenant: TenantRow;
  key: KeyRow;
  requestId: string;
  /** PostgreSQL + Redis: the tenant's score cache generation read by this request (see ReadCache) */
  scoreGeneration?: number;
}

type ServerLike = { requestIP?: (r: Request) => { address: string } | null } | null | undefined;

export function clientAddress(ctx: AppContext, request: Request, server: ServerLike): string {
  if (ctx.config.trustProxy) {
    const fwd = request.headers.get('x-forwarded-for')?.split(',')[0]?.trim();
    if (fwd) return fwd;
  }
  return server?.requestIP?.(request)?.address ?? 'unknown';
}

/**
 * Requests without a valid key are limited per client address (ANON_RATE_LIMIT_PER_MINUTE,
 * default 60) and carry the same headers. Returns a 429 error to throw instead when over budget.
 */
export async function limitAnonymous(ctx: AppContext, request: Request, server: ServerLike, set: { headers: Record<string, unknown> }) {
  const state = requestState(request);
  if (state.rateHeaders) return null;
  const nowMs = ctx.clock.now().getTime();
  const d = await ctx.limiter.consume({ bucket: `ip:${clientAddress(ctx, request, server)}`, limitPerMinute: ctx.config.anonRateLimitPerMinute, nowMs });
  state.rateHeaders = rateLimitHeaders(d, nowMs);
  Object.assign(set.headers, state.rateHeaders);
  if (!d.allowed) state.limitedBy = 'address';
  return d.allowed ? null : new ApiError('rate_limited', 'Too many unauthenticated requests from this address.', { headers: { 'retry-after': state.rateHeaders['retry-after']! } });
}

/**
 * Service pages (health, metrics, documents) are not limited, so that health checks and scrapers
 * never get a 429, but they carry the same headers as everything else: the anonymous budget of
 * the caller's address as it stands, unconsumed.
 */
export async function peekAnonymous(ctx: AppContext, request: Request, server: ServerLike, set: { headers: Record<string, unknown> }) {
  const nowMs = ctx.clock.now().getTime();
  const d = await ctx.limiter.peek({ bucket: `ip:${clientAddress(ctx, request, server)}`, limitPerMinute: ctx.config.anonRateLimitPerMinute, nowMs });
  Object.assign(set.headers, rateLimitHeaders(d, nowMs));
}

// a key's budget names and daily quota, built once per key record (the limiter looks its Redis keys
// up by the names; the quota is rebuilt if the tenant record it came from changed)
const budgetNames = new WeakMap<object, { bucket: string; daily: { tenantId: string; quota: number } }>();
/** a key's budgets: its own per-minute bucket, and its tenant's daily quota in its environment */
function budgetNamesOf(tenant: TenantRow, key: KeyRow) {
  let names = budgetNames.get(key);
  if (!names || names.daily.quota !== tenant.dailyQuota) budgetNames.set(key, (names = { bucket: `key:${key.id}`, daily: { tenantId: `${tenant.id}:${key.env}`, quota: tenant.dailyQuota } }));
  return names;
}

/**
 * Admits one request of a verified key: charges its per-minute budget and its tenant's daily quota
 * (counted per environment, so a sandbox load test never eats production's quota), sets the
 * rate-limit headers, and returns the key to go on with, or the error to answer (429 over a limit;
 * 401 if the key turned out unusable, below). Without a promise when the limiter needs no I/O (the
 * in-process one), so the score fast path can skip a microtask.
 *
 * On PostgreSQL the key may have come from the in-process cache under an older generation of its
 * tenant: the limiter's answer carries the current one (cache-generations.ts), and a key that was
 * not loaded under it is read again before anything else, so a revocation committed by any
 * process is honoured by the very next request.
 */
/** `daily`: false for the routes the tenant's daily quota does not count (reading its own usage: authed's option) */
export function admitKey(ctx: AppContext, request: Request, set: { headers: Record<string, unknown> }, found: FoundKey, now: Date, rereads = 2, daily = true): MaybePromise<FoundKey | ApiError> {
  const { tenant, key } = found;
  const names = budgetNamesOf(tenant, key);
  const budget: RateRequest = {
    bucket: names.bucket,
    limitPerMinute: effectiveRateLimit(tenant, key),
    daily: daily ? names.daily : undefined,
    generationOf: tenant.id,
    // a cached key is charged only if it is current (its limits may have changed): else re-read it
    expectGeneration: rereads > 0 ? found.cachedUnder : undefined,
    nowMs: now.getTime(),
  };
  const decided = ctx.limiter.consumeSync?.(budget);
  if (decided) return admitted(ctx, request, set, found, decided, now, rereads, daily);
  return ctx.limiter.consume(budget).then((d) => admitted(ctx, request, set, found, d, now, rereads, daily));
}

function admitted(ctx: AppContext, request: Request, set: { headers: Record<string, unknown> }, found: FoundKey, d: RateDecision, now: Date, rereads: number, daily: boolean): MaybePromise<FoundKey | ApiError> {
  if (d.stale) return reread(ctx, found, d.generation ?? null, now).then((k) => (k instanceof ApiError ? k : admitKey(ctx, request, set, k, now, rereads - 1, daily)));
  const current = confirmKey(ctx, found, d, now);
  if (current instanceof Promise) return current.then((k) => (k instanceof ApiError ? k : applyBudgetDecision(request, set, k, d, now)));
  return current instanceof ApiError ? current : applyBudgetDecision(request, set, current, d, now);
}

/**
 * Charges an admitted request `units` more to its key's budgets (the same as admitKey's), all or
 * nothing: for a request that weighs more than the one unit admitKey charged, known once its body
 * is read (POST /v1/score/batch). The answer's rate-limit headers become this decision's. Not
 * allowed: nothing more was charged (the unit admitKey charged stays), and the caller answers 429.
 */
export async function chargeMore(ctx: AppContext, request: Request, set: { headers: Record<string, unknown> }, auth: Pick<AuthContext, 'tenant' | 'key'>, units: number): Promise<RateDecision> {
  const { tenant, key } = auth;
  const now = ctx.clock.now();
  const names = budgetNamesOf(tenant, key);
  const d = await ctx.limiter.consume({ bucket: names.bucket, limitPerMinute: effectiveRateLimit(tenant, key), daily: names.daily, nowMs: now.getTime(), units });
  applyBudgetDecision(request, set, auth, d, now);
  return d;
}

/**
 * The key as of the decision's access generation (PostgreSQL; SQLite's cache is exact already).
 * The admitted key carries the score generation for the request's score reads.
 */
function confirmKey(ctx: AppContext, found: FoundKey, d: RateDecision, now: Date): MaybePromise<FoundKey | ApiError> {
  if (ctx.database.changeEpoch() !== null) return withLocalScoreGeneration(ctx, found);
  const generation = d.generation ?? null;
  const { scoreGeneration } = d;
  if (found.cachedUnder === undefined) {
    // read from the database by this request, so after any change answered before it started:
    // good for this request. What gets cached must have been read after the generation was known,
    // so it is read once more, in the background.
    if (generation !== null) ctx.tenants.findByHash(found.key.keyHash, generation).catch(() => {});
    return generation === null ? found : { ...found, scoreGeneration };
  }
  if (found.cachedUnder === generation) return { ...found, scoreGeneration };
  // cached under another generation, which the limiter could not check (Redis failing, or the
  // generation kept moving while this request re-read): read it again
  return reread(ctx, found, generation, now).then((k) => (k instanceof ApiError || generation === null ? k : { ...k, scoreGeneration }));
}

/** SQLite: the tenant's local score generation, under which this request's score reads are cached (ReadCache) */
function withLocalScoreGeneration(ctx: AppContext, found: FoundKey): FoundKey {
  const scoreGeneration = ctx.database.localGeneration('scores', found.tenant.id);
  return found.scoreGeneration === scoreGeneration ? found : { ...found, scoreGeneration };
}

/**
 * The tenant's score generation as this process knows it now, for a request that committed scores
 * of its own since it was admitted: SQLite's local count, or (PostgreSQL + Redis) the generation
 * feed's, which has applied every change this process announced; undefined when it cannot tell.
 */
export function scoreGenerationNow(ctx: Pick<AppContext, 'database' | 'generations'>, tenantId: string): number | undefined {
  if (ctx.database.changeEpoch() !== null) return ctx.database.localGeneration('scores', tenantId);
  return ctx.generations?.current(tenantId)?.scores;
}

function reread(ctx: AppContext, found: FoundKey, generation: number | null, now: Date): Promise<FoundKey | ApiError> {
  const hash = found.key.keyHash;
  return ctx.tenants.findByHash(hash, generation).then((k) => {
    const usable = usableKey(k, hash, now);
    return usable instanceof ApiError || generation === null ? usable : { ...usable, cachedUnder: generation };
  });
}

function applyBudgetDecision(request: Request, set: { headers: Record<string, unknown> }, found: FoundKey, d: RateDecision, now: Date): FoundKey | ApiError {
  const { tenant, key } = found;
  const state = requestState(request);
  state.tenantId = tenant.id;
  state.keyId = key.id;
  state.rateHeaders = rateLimitHeaders(d, now.getTime());
  Object.assign(set.headers, state.rateHeaders);
  if (d.allowed) return found;
  state.limitedBy = d.deniedBy ?? 'minute';
  const headers = { 'retry-after': state.rateHeaders['retry-after']! };
  return d.deniedBy === 'daily'
    ? new ApiError('daily_quota_exceeded', `The tenant's daily quota of ${tenant.dailyQuota} requests is used up.`, { headers })
    : new ApiError('rate_limited', `Rate limit of ${d.limit} requests per minute exceeded for this key.`, { headers });
}

/**
 * For error paths that never reached the guard (body errors, unknown routes): if the request
 * carries a valid, active key, that key pays (see admitKey). Returns the 429 to answer instead
 * when over a limit, null otherwise (also when the key turns out unusable: the caller's address
 * pays then, as for any bad key).
 */
export async function chargeKey(ctx: AppContext, request: Request, set: { headers: Record<string, unknown> }): Promise<ApiError | null> {
  const now = ctx.clock.now();
  const found = await verifyKey(ctx, request.headers.get('authorization'), now);
  if (found instanceof ApiError) return null;
  const admittedKey = await admitKey(ctx, request, set, found, now);
  return admittedKey instanceof ApiError && admittedKey.status !== 401 ? admittedKey : null;
}

/**
 * A key and its tenant. `cachedUnder`: PostgreSQL, taken from the in-process cache where it was
 * loaded under that access generation of its tenant (to be confirmed by admitKey).
 * `scoreGeneration`: once admitted, the tenant's current score generation, under which the
 * request may use cached scores.
 */
export type FoundKey = { key: KeyRow; tenant: TenantRow; cachedUnder?: number; scoreGeneration?: number };

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(authorization: string | null | undefined): string | null {
  return /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1] ?? null;
}

/** Whether an Authorization header carries something shaped like an API key (not yet looked up). */
export const hasKeyShapedBearer = (authorization: string | null | undefined) => {
  const token = bearerToken(authorization) ?? '';
  return KEY_FORMAT.test(token) || JWT_SHAPE.test(token);
};

/**
 * The key named by an Authorization header, if it may be used now (not yet charged nor
 * scope-checked). Without a promise when the key is in the in-process cache.
 */
export function verifyKey(ctx: AppContext, authorization: string | null | undefined, now: Date): MaybePromise<FoundKey | ApiError> {
  const token = bearerToken(authorization);
  if (token === null)
    return severalAuthorizations(authorization)
      ? new ApiError('invalid_api_key', 'Send one Authorization header: this request carries several.')
      : /^basic\s/i.test(authorization ?? '')
        ? new ApiError('missing_api_key', 'Basic credentials are for the OAuth token endpoint (POST /v1/oauth/token): send your API key or an access token as "Authorization: Bearer …".')
        : new ApiError('missing_api_key', 'Send your API key as "Authorization: Bearer sk_test_…".');
  if (!KEY_FORMAT.test(token)) {
    // an OAuth access token (client credentials): the client's principal, with the token's scopes
    if (ctx.oauth && JWT_SHAPE.test(token)) return ctx.oauth.verify(token).then((v) => (v instanceof ApiError ? v : usableKey({ ...v }, v.key.keyHash, now)));
    return new ApiError('invalid_api_key', 'The API key is not valid.');
  }
  const hash = hashKey(token);
  const cached = ctx.tenants.cachedByHash(hash);
  return cached ? usableKey(cached, hash, now) : ctx.tenants.findByHash(hash).then((found) => usableKey(found, hash, now));
}

function usableKey(found: FoundKey | null, hash: string, now: Date): FoundKey | ApiError {
  // the lookup is by hash; compare again in constant time so a lookup quirk can never authenticate
  if (!found || !safeEqual(found.key.keyHash, hash)) return new ApiError('invalid_api_key', 'The API key is not valid.');
  if (found.tenant.status === 'terminated') return new ApiError('invalid_api_key', 'The API key is not valid.');
  const status = keyStatus(found.key, now);
  if (status === 'revoked') return new ApiError('api_key_revoked', 'This API key was revoked.');
  if (status === 'expired') return new ApiError('api_key_expired', 'This API key expired.');
  return found;
}

/**
 * Whose Idempotency-Keys a request uses: its API key's; an OAuth client's tokens by their scopes
 * too, since a replay hands over what the first request got (a rotated secret, a new `*` key) and
 * a token issued with fewer scopes must not get it, nor the other way round a refusal it stored.
 */
const idempotencyPrincipal = (key: KeyRow) => (isClientPrincipal(key) ? `${key.id}#${[...key.scopes].sort().join(',')}` : key.id);

/** Whether a key may call an endpoint that needs `scope`. */
const hasScope = (key: KeyRow, scope: Scope) => key.scopes.includes('*') || key.scopes.includes(scope);

/** After admission: a suspended tenant, or a key without the endpoint's scope (403s). */
export function refusal({ tenant, key }: FoundKey, scope: Scope | null): ApiError | null {
  if (tenant.status === 'suspended') return new ApiError('tenant_suspended', 'The tenant is suspended.');
  // RFC 6750 §3.1: the scope the token lacks, for OAuth clients' libraries (API keys are Bearer tokens too)
  if (scope !== null && !hasScope(key, scope)) {
    const message = `This endpoint needs the "${scope}" scope (or "*").`;
    return new ApiError('insufficient_scope', message, { headers: { 'www-authenticate': bearerChallenge('insufficient_scope', message, scope) } });
  }
  return null;
}

/**
 * The guard in front of every API route, in this order: Bearer key → key/tenant state → per-key
 * rate limit and daily quota (headers on every response) → tenant suspension → scope. It runs in
 * `derive`, before body validation, so an unauthenticated caller cannot probe schemas. POST routes
 * then get Idempotency-Key handling after validation (before the handler) and storage after it.
 */
/**
 * An Idempotency-Key replay of a route that can answer a file (by Accept) but stores its JSON: the
 * stored JSON and the replay's headers other than its type and length, so that the route can answer
 * the file the replay's own Accept asks for; null for any other response.
 */
export async function replayedJson<T>(response: unknown, status: number): Promise<{ stored: T; headers: Record<string, string> } | null> {
  if (!(response instanceof Response) || response.headers.get('idempotent-replayed') !== 'true' || response.status !== status) return null;
  const headers: Record<string, string> = {};
  response.headers.forEach((v, k) => {
    if (k !== 'content-type' && k !== 'content-length') headers[k] = v;
  });
  return { stored: JSON.parse(await response.clone().text()) as T, headers };
}

/** Responses built by jsonAnswer, with their JSON text (so an idempotent replay can store it). */
const SERIALISED = new WeakMap<Response, string>();

/**
 * A 200 JSON answer serialised once by the handler, for routes that also store that text: skips
 * the framework's response check and second serialisation (the schema still documents it; the
 * route's own tests check the shape). Idempotency-Key replays store the same text.
 */
export function jsonAnswer(text: string, headers: Record<string, unknown> | undefined): Response {
  const res = new Response(text, { status: 200, headers: { ...(headers as Record<string, string>), 'content-type': JSON_UTF8 } });
  SERIALISED.set(res, text);
  return res;
}

/** The scope a route's key must hold, marked on its authentication hook: /openapi.json reads it (the oauth2 requirement's scopes). */
export const ROUTE_SCOPE = Symbol('route scope');
const withRouteScope = <F extends object>(scope: Scope | null, hook: F): F => Object.assign(hook, { [ROUTE_SCOPE]: scope });

/** `scope` null: any valid key of an active tenant (read-only service information). */
/**
 * `options.dailyQuota: false`: the route is not counted against the tenant's daily quota (its
 * per-minute limit still applies): a finance team reads its usage when the quota is used up.
 */
export function authed(ctx: AppContext, scope: Scope | null, options: { dailyQuota?: false } = {}) {
  return new Elysia()
    .derive({ as: 'scoped' }, withRouteScope(scope, async ({ headers, request, set, server }) => {
      const state = requestState(request);
      const reject = async (err: ApiError) => {
        throw (await limitAnonymous(ctx, request, server as ServerLike, set)) ?? err;
      };
      const now = ctx.clock.now();
      const verified = await verifyKey(ctx, headers.authorization, now);
      if (verified instanceof ApiError) return reject(verified);

      const admittedKey = await admitKey(ctx, request, set, verified, now, 2, options.dailyQuota !== false);
      if (admittedKey instanceof ApiError) throw admittedKey;
      const { key, tenant, scoreGeneration } = admittedKey;
      const refused = refusal(admittedKey, scope);
      if (refused) throw refused;
      ctx.keyTouches.add(key.id, { keyId: key.id, at: now });
      // a tenant's own data, and on some routes a secret shown once: never kept by a cache on the way
      set.headers['cache-control'] = 'no-store';
      const auth: AuthContext = { tenantId: tenant.id, keyId: key.id, env: key.env as Env, tenant, key, requestId: state.id, scoreGeneration };
      ctx.usage.hold(state.id, request.method === 'HEAD'); // billed once it succeeds (UsageMeter.hold)
      // the URL's and the body's own problems (a repeated query parameter; unreadable JSON, a wrong
      // type, too large) come after the key's
      if (state.repeatedQuery) throw state.repeatedQuery;
      if (state.deferredBodyError) throw state.deferredBodyError;
      return { auth };
    }))
    .onBeforeHandle({ as: 'scoped' }, async ({ request, headers, body, auth, path, set }) => {
      const state = requestState(request);
      if (state.nonObjectBody) throw notAnObject();
      const taken = state.parsedBody === undefined ? [] : kindsChangedByNormalisation(state.parsedBody, body);
      if (taken.length) throw validationError(taken);
      if (request.method !== 'POST') return;
      const idemKey = headers['idempotency-key'];
      if (idemKey === undefined) return;
      if (!IDEMPOTENCY_KEY_FORMAT.test(idemKey))
        throw new ApiError('validation_failed', 'The Idempotency-Key header is invalid.', {
          fields: [{ path: 'header.Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }],
        });
      const res = await ctx.idempotency.begin({ tenantId: auth.tenantId, env: auth.env, principalId: idempotencyPrincipal(auth.key) }, idemKey, request.method, requestTarget(path, request.url), state.bodyAsSent ?? body, inputHeaders(headers));
      if ('replay' in res) {
        return new Response(res.replay.body, {
          status: res.replay.status,
          headers: { ...(set.headers as Record<string, string>), ...res.replay.headers, 'content-type': JSON_UTF8, 'idempotent-replayed': 'true' },
        });
      }
      requestState(request).idempotencyClaim = res.claimed;
    })
    .onAfterHandle({ as: 'scoped' }, async ({ request, response, set }) => {
      const claim = requestState(request).idempotencyClaim;
      if (!claim) return;
      if (response instanceof Response) {
        // an answer the handler serialised itself (jsonAnswer): stored as it is
        const text = SERIALISED.get(response);
        if (text === undefined) return;
        await ctx.idempotency.complete(claim, response.status, text, response.headers);
        requestState(request).idempotencyClaim = undefined;
        return;
      }
      const text = JSON.stringify(response);
      const status = typeof set.status === 'number' ? set.status : 200;
      await ctx.idempotency.complete(claim, status, text, set.headers);
      requestState(request).idempotencyClaim = undefined;
      return new Response(text, { status, headers: { ...(set.headers as Record<string, string>), 'content-type': JSON_UTF8 } });
    });
}
