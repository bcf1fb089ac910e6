import { Elysia } from 'elysia';
import type { AppContext } from '../context';
import { ApiError, validationError } from '../lib/errors';
import { safeEqual } from '../lib/crypto';
import { rateLimitHeaders } from '../lib/rate-limiter';
import { IDEMPOTENCY_KEY_FORMAT } from '../features/idempotency/service';
import { effectiveRateLimit, hashKey, KEY_FORMAT, keyStatus, type Env, type KeyRow, type Scope, type TenantRow } from '../features/tenants/service';
import { requestState } from './request-state';

export interface AuthContext {
  tenantId: string;
  keyId: string;
  env: Env;
  tenant: TenantRow;
  key: KeyRow;
  requestId: string;
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
  return d.allowed ? null : new ApiError('rate_limited', 'Too many unauthenticated requests from this address.', { headers: { 'retry-after': state.rateHeaders['retry-after']! } });
}

/**
 * Charges one request to a key: its per-minute budget and its tenant's daily quota (counted per
 * environment, so a sandbox load test never eats production's quota). Sets the rate-limit headers
 * and returns the 429 to answer when over a limit, null otherwise.
 */
async function chargeKeyBudget(ctx: AppContext, request: Request, set: { headers: Record<string, unknown> }, tenant: TenantRow, key: KeyRow, now: Date) {
  const state = requestState(request);
  state.tenantId = tenant.id;
  state.keyId = key.id;
  const nowMs = now.getTime();
  const d = await ctx.limiter.consume({
    bucket: `key:${key.id}`,
    limitPerMinute: effectiveRateLimit(tenant, key),
    daily: { tenantId: `${tenant.id}:${key.env}`, quota: tenant.dailyQuota },
    nowMs,
  });
  state.rateHeaders = rateLimitHeaders(d, nowMs);
  Object.assign(set.headers, state.rateHeaders);
  if (d.allowed) return null;
  const headers = { 'retry-after': state.rateHeaders['retry-after']! };
  return d.deniedBy === 'daily'
    ? new ApiError('daily_quota_exceeded', `The tenant's daily quota of ${tenant.dailyQuota} requests is used up.`, { headers })
    : new ApiError('rate_limited', `Rate limit of ${d.limit} requests per minute exceeded for this key.`, { headers });
}

/**
 * For error paths that never reached the guard (body errors, unknown routes): if the request
 * carries a valid, active key, that key pays (see chargeKeyBudget). Null when there is no such key.
 */
export async function chargeKey(ctx: AppContext, request: Request, set: { headers: Record<string, unknown> }): Promise<ApiError | null> {
  const m = /^Bearer\s+(sk_(?:test|live)_[0-9a-f]{28})\s*$/i.exec(request.headers.get('authorization') ?? '');
  if (!m) return null;
  const found = await ctx.tenants.findByPlaintext(m[1]!);
  const now = ctx.clock.now();
  if (!found || found.tenant.status === 'terminated' || keyStatus(found.key, now) !== 'active') return null;
  return chargeKeyBudget(ctx, request, set, found.tenant, found.key, now);
}

/**
 * The guard in front of every API route, in this order: Bearer key → key/tenant state → per-key
 * rate limit and daily quota (headers on every response) → tenant suspension → scope. It runs in
 * `derive`, before body validation, so an unauthenticated caller cannot probe schemas. POST routes
 * then get Idempotency-Key handling after validation (before the handler) and storage after it.
 */
export function authed(ctx: AppContext, scope: Scope) {
  return new Elysia()
    .derive({ as: 'scoped' }, async ({ headers, request, set, server }) => {
      const state = requestState(request);
      const reject = async (err: ApiError) => {
        throw (await limitAnonymous(ctx, request, server as ServerLike, set)) ?? err;
      };
      const m = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
      if (!m) return reject(new ApiError('missing_api_key', 'Send your API key as "Authorization: Bearer sk_test_…".'));
      const token = m[1]!;
      if (!KEY_FORMAT.test(token)) return reject(new ApiError('invalid_api_key', 'The API key is not valid.'));
      const found = await ctx.tenants.findByPlaintext(token);
      // the lookup is by hash; compare again in constant time so a lookup quirk can never authenticate
      if (!found || !safeEqual(found.key.keyHash, hashKey(token))) return reject(new ApiError('invalid_api_key', 'The API key is not valid.'));
      const { key, tenant } = found;
      if (tenant.status === 'terminated') return reject(new ApiError('invalid_api_key', 'The API key is not valid.'));
      const now = ctx.clock.now();
      const status = keyStatus(key, now);
      if (status === 'revoked') return reject(new ApiError('api_key_revoked', 'This API key was revoked.'));
      if (status === 'expired') return reject(new ApiError('api_key_expired', 'This API key expired.'));

      const overLimit = await chargeKeyBudget(ctx, request, set, tenant, key, now);
      if (overLimit) throw overLimit;
      if (tenant.status === 'suspended') throw new ApiError('tenant_suspended', 'The tenant is suspended.');
      if (!key.scopes.includes('*') && !key.scopes.includes(scope))
        throw new ApiError('insufficient_scope', `This endpoint needs the "${scope}" scope (or "*").`);
      ctx.keyTouches.add(key.id, { keyId: key.id, at: now });
      const auth: AuthContext = { tenantId: tenant.id, keyId: key.id, env: key.env as Env, tenant, key, requestId: state.id };
      return { auth };
    })
    .onBeforeHandle({ as: 'scoped' }, async ({ request, headers, body, auth, path, set }) => {
      if (requestState(request).nonObjectBody) throw validationError([{ path: '(body)', message: 'must be a JSON object' }]);
      if (request.method !== 'POST') return;
      const idemKey = headers['idempotency-key'];
      if (idemKey === undefined) return;
      if (!IDEMPOTENCY_KEY_FORMAT.test(idemKey))
        throw new ApiError('validation_failed', 'The Idempotency-Key header is invalid.', {
          fields: [{ path: 'header.Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }],
        });
      const res = await ctx.idempotency.begin({ tenantId: auth.tenantId, env: auth.env }, idemKey, request.method, path, body);
      if ('replay' in res) {
        return new Response(res.replay.body, {
          status: res.replay.status,
          headers: { ...(set.headers as Record<string, string>), 'content-type': 'application/json', 'idempotent-replayed': 'true' },
        });
      }
      requestState(request).idempotencyClaim = res.claimed;
    })
    .onAfterHandle({ as: 'scoped' }, async ({ request, response, set }) => {
      const claim = requestState(request).idempotencyClaim;
      if (!claim || response instanceof Response) return;
      const text = JSON.stringify(response);
      const status = typeof set.status === 'number' ? set.status : 200;
      await ctx.idempotency.complete(claim, status, text);
      requestState(request).idempotencyClaim = undefined;
      return new Response(text, { status, headers: { ...(set.headers as Record<string, string>), 'content-type': 'application/json' } });
    });
}
