import { Elysia } from 'elysia';
import type { AppContext } from '../../context';
import { authed } from '../../plugins/auth';
import { apiDoc } from '../../lib/api-doc';
import { ApiError, validationError } from '../../lib/errors';
import { closedBody } from '../../lib/request-problems';
import { iso } from '../../lib/schemas';
import { isClientPrincipal, keyStatus } from '../tenants/service';
import { AuditLog, AuditLogQuery, CreateKeyRequest, CreateKeyResponse, ListKeysResponse, RevokeRequest, RevokeResponse, RotateRequest, RotateResponse, UsageQuery, UsageResponse } from './model';
import { actorOf, AdminService } from './service';

export function adminRoutes(ctx: AppContext) {
  const admin = new AdminService(ctx.database, ctx.tenants, () => ctx.clock.now());

  const keys = new Elysia()
    .use(authed(ctx, 'keys:manage'))
    .get(
      '/v1/admin/keys',
      async ({ auth }) => {
        const now = ctx.clock.now();
        // a sandbox key (CI, laptops) sees sandbox keys only; a live key, the production
        // credential that may also erase the tenant, sees both environments' metadata
        const rows = (await ctx.tenants.listKeys(auth.tenantId)).filter((k) => auth.env === 'live' || k.env === auth.env);
        return {
          keys: rows.map((k) => ({
            id: k.id,
            name: k.name,
            env: k.env as 'sandbox' | 'live',
            key_prefix: k.keyPrefix,
            scopes: k.scopes,
            rate_limit_per_minute: k.rateLimitPerMinute,
            last_used_at: iso(k.lastUsedAt),
            revoked_at: iso(k.revokedAt),
            expires_at: iso(k.expiresAt),
            created_at: k.createdAt.toISOString(),
            status: keyStatus(k, now),
          })),
        };
      },
      {
        response: { 200: ListKeysResponse },
        detail: apiDoc({
          summary: 'List API keys (metadata only)',
          description: "A sandbox (sk_test_) key lists the tenant's sandbox keys only; a live key lists both environments' keys. Never a plaintext key or hash.",
          tag: 'admin',
          security: 'bearerAuth',
          operationId: 'listKeys',
        }),
      },
    )
    .post(
      '/v1/admin/keys',
      async ({ auth, body, set }) => {
        const res = await admin.create(actorOf(auth), await admin.callerOf(auth), body);
        set.status = 201;
        return res;
      },
      {
        transform: closedBody(CreateKeyRequest),
        body: CreateKeyRequest,
        response: { 201: CreateKeyResponse },
        detail: apiDoc({
          summary: 'Create a key: a name, scopes within the caller\u2019s, an optional expiry and rate limit (shown once)',
          description: 'Like Stripe\u2019s restricted keys: the new key is of the calling key\u2019s environment, holds a subset of its scopes (only a * key may grant *; anything else is 403 insufficient_scope), a per-minute limit no higher than the caller\u2019s own, and may expire. Audited (api_key.created). At most 20 active keys per environment.',
          tag: 'admin',
          security: 'bearerAuth',
          operationId: 'createKey',
          errors: ['cross_environment_forbidden', 'too_many_active_keys'],
          examples: { restricted: { summary: 'A scoring-only key for a batch job, expiring', value: { name: 'portfolio batch job', scopes: ['score'], expires_at: '2027-06-30T00:00:00Z', rate_limit_per_minute: 600 } } },
        }),
      },
    )
    .post(
      '/v1/admin/keys/rotate',
      async ({ auth, body, set }) => {
        // an OAuth access token is not a key: which key to rotate must be said
        if (!body?.api_key_id && isClientPrincipal(auth.key)) throw validationError([{ path: 'api_key_id', message: 'is required with an OAuth access token (it is not an API key)' }]);
        // a key id is a UUID, in either case (RFC 9562)
        const res = await admin.rotate(actorOf(auth), await admin.callerOf(auth), body?.api_key_id?.toLowerCase() ?? auth.keyId, body?.grace_days ?? 7);
        set.status = 201;
        return res;
      },
      {
        transform: closedBody(RotateRequest),
        body: RotateRequest,
        response: { 201: RotateResponse },
        detail: apiDoc({
          summary: 'Rotate a key: issue a new one, the old one expires after grace_days',
          tag: 'admin',
          security: 'bearerAuth',
          operationId: 'rotateKey',
          errors: ['cross_tenant_forbidden', 'cross_environment_forbidden', 'resource_not_found', 'key_not_active', 'too_many_active_keys'],
        }),
      },
    )
    .post('/v1/admin/keys/revoke', async ({ auth, body }) => admin.revoke(actorOf(auth), await admin.callerOf(auth), body.api_key_id.toLowerCase(), body.reason ?? null), {
      transform: closedBody(RevokeRequest),
      body: RevokeRequest,
      response: { 200: RevokeResponse },
      detail: apiDoc({
        summary: 'Revoke a key immediately (idempotent)',
        tag: 'admin',
        security: 'bearerAuth',
        operationId: 'revokeKey',
        errors: ['cross_tenant_forbidden', 'cross_environment_forbidden', 'resource_not_found', 'last_active_key'],
      }),
    })
    .get('/v1/admin/audit-log', ({ auth, query }) => admin.auditLog(actorOf(auth), query), {
      query: AuditLogQuery,
      response: { 200: AuditLog },
      detail: apiDoc({
        summary: 'The administrative audit log, newest first',
        description:
          'Who changed what, when: key creation, rotation and revocation, OAuth clients, webhook endpoints, the credit policy, GDPR exports and erasure, and the operator\'s changes (actor "operator"). Of the key\'s environment (a record belongs to its acting key\'s environment; an operator\'s to the key it changed, else to live). Filters: action, target.',
        tag: 'admin',
        security: 'bearerAuth',
        operationId: 'listAuditLog',
      }),
    });

  const usage = new Elysia().use(authed(ctx, 'usage:read', { dailyQuota: false })).get(
    '/v1/admin/usage',
    async ({ auth, query }) => {
      const now = ctx.clock.now();
      const from = query.from ? new Date(query.from) : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
      const to = query.to ? new Date(query.to) : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
      if (from.getTime() >= to.getTime())
        throw new ApiError('validation_failed', 'from must be before to.', { fields: [{ path: 'query.from', message: 'must be before to' }] });
      const env = query.env ?? auth.env;
      if (env !== auth.env) throw new ApiError('cross_environment_forbidden', `A ${auth.env} key can only read ${auth.env} usage.`);
      const groupBy = query.group_by ?? 'meter';
      const totals = await ctx.usage.summary(auth.tenantId, env, from, to, groupBy);
      return { from: from.toISOString(), to: to.toISOString(), env, group_by: groupBy, totals };
    },
    {
      query: UsageQuery,
      response: { 200: UsageResponse },
      detail: apiDoc({ summary: "The tenant's metered usage per meter line", tag: 'admin', security: 'bearerAuth', operationId: 'getUsage', errors: ['validation_failed', 'cross_environment_forbidden'] }),
    },
  );

  return new Elysia({ name: 'admin' }).use(keys).use(usage);
}
