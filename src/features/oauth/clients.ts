import { and, eq, isNull } from 'drizzle-orm';
import type { AppContext } from '../../context';
import { randomHex, safeEqual, sha256Hex } from '../../lib/crypto';
import { ApiError, validationError } from '../../lib/errors';
import { assertMayActOn, assertOutlivedBy, grantedBy, MAX_ACTIVE_KEYS, type Actor, type AdminService, type CallerKey } from '../admin/service';
import type { Env, KeyRow } from '../tenants/service';
import { clientKeyHash } from './tokens';

type ClientRow = AppContext['database']['t']['oauthClients']['$inferSelect'];
export const SECRET_PREFIX_LENGTH = 8;
const newSecret = () => `ocs_${randomHex(24)}`;

/**
 * OAuth clients of a tenant (scope keys:manage): created with scopes within the caller's, secret
 * shown once and stored hashed, rotated with a grace, deleted. Each has an api_keys row as its
 * principal (scopes, rate limit, revocation): deleting the client revokes that row, which every
 * process sees on its next request, like a revoked key.
 */
export class OAuthClients {
  constructor(
    private readonly ctx: AppContext,
    private readonly admin: AdminService,
  ) {}

  private view(c: ClientRow, key: Pick<KeyRow, 'scopes' | 'rateLimitPerMinute'>) {
    return {
      client_id: c.id,
      name: c.name,
      env: c.env as Env,
      scopes: key.scopes,
      rate_limit_per_minute: key.rateLimitPerMinute,
      secret_prefix: c.secretPrefix,
      previous_secret_expires_at: c.previousSecretExpiresAt && c.previousSecretExpiresAt > this.ctx.clock.now() ? c.previousSecretExpiresAt.toISOString() : null,
      created_at: c.createdAt.toISOString(),
    };
  }

  async create(actor: Actor, caller: CallerKey, body: { name: string; env?: Env; scopes?: string[]; rate_limit_per_minute?: number }) {
    const env = body.env ?? (actor.env as Env);
    if (env !== actor.env) throw new ApiError('cross_environment_forbidden', `A ${actor.env} key can only create ${actor.env} clients; use a ${env} key.`);
    const { scopes, rateLimitPerMinute, problems } = grantedBy(caller, body);
    if (problems.length) throw validationError(problems);
    assertOutlivedBy(caller, null, 'an OAuth client (clients do not expire)');
    const id = `oc_${randomHex(12)}`;
    const secret = newSecret();
    const now = this.ctx.clock.now();
    const { t, withTx } = this.ctx.database;
    const row = await withTx(async (tx) => {
      await this.admin.lockTenant(tx, actor.tenantId);
      // each client has its own per-minute budget, as a key has: the same cap (under the tenant lock)
      const held = await tx.select({ id: t.oauthClients.id }).from(t.oauthClients).where(and(eq(t.oauthClients.tenantId, actor.tenantId), eq(t.oauthClients.env, env), isNull(t.oauthClients.deletedAt)));
      if (held.length >= MAX_ACTIVE_KEYS) throw new ApiError('too_many_active_keys', `The tenant holds ${held.length} OAuth clients in ${env}, the most allowed is ${MAX_ACTIVE_KEYS}. Delete one first.`);
      const principal = await this.ctx.tenants.createKey({
        tenantId: actor.tenantId,
        env,
        name: `oauth client ${body.name}`.slice(0, 100),
        scopes,
        rateLimitPerMinute,
        principal: { keyHash: clientKeyHash(id), keyPrefix: id.slice(0, 12) },
      });
      const [c] = await tx
        .insert(t.oauthClients)
        .values({ id, tenantId: actor.tenantId, env, keyId: principal.api_key_id, name: body.name, secretHash: sha256Hex(secret), secretPrefix: secret.slice(0, SECRET_PREFIX_LENGTH), createdAt: now })
        .returning();
      await this.admin.audit(tx, actor, 'oauth_client.created', id, { name: body.name, scopes, rate_limit_per_minute: rateLimitPerMinute });
      this.ctx.database.touchTenant(actor.tenantId, 'access');
      return c!;
    });
    return { ...this.view(row, { scopes, rateLimitPerMinute }), client_secret: secret, warning: 'Store the client secret now: it is shown only once and cannot be retrieved again.' };
  }

  private async own(actor: Actor, id: string) {
    const { db, t } = this.ctx.database;
    const [row] = await db
      .select({ client: t.oauthClients, key: t.apiKeys })
      .from(t.oauthClients)
      .innerJoin(t.apiKeys, eq(t.apiKeys.id, t.oauthClients.keyId))
      .where(and(eq(t.oauthClients.id, id), eq(t.oauthClients.tenantId, actor.tenantId), isNull(t.oauthClients.deletedAt)))
      .limit(1);
    if (!row) throw new ApiError('resource_not_found', `No OAuth client ${id} for this tenant.`);
    if (row.client.env !== actor.env) throw new ApiError('cross_environment_forbidden', `A ${actor.env} key cannot manage ${row.client.env} clients.`);
    return row;
  }

  async list(actor: Actor) {
    const { db, t } = this.ctx.database;
    const rows = await db
      .select({ client: t.oauthClients, key: t.apiKeys })
      .from(t.oauthClients)
      .innerJoin(t.apiKeys, eq(t.apiKeys.id, t.oauthClients.keyId))
      // as the key list: a sandbox key sees sandbox clients only, a live key both environments'
      .where(and(eq(t.oauthClients.tenantId, actor.tenantId), actor.env === 'live' ? undefined : eq(t.oauthClients.env, actor.env), isNull(t.oauthClients.deletedAt)))
      .orderBy(t.oauthClients.createdAt);
    return { clients: rows.map((r) => this.view(r.client, r.key)) };
  }

  /** A new secret; the old one keeps working for `graceHours` (0: at once). Tokens already issued stay valid until they expire. */
  async rotateSecret(actor: Actor, caller: CallerKey, id: string, graceHours: number) {
    const { client, key } = await this.own(actor, id);
    assertMayActOn(caller, key, 'rotate', 'OAuth client');
    const secret = newSecret();
    const now = this.ctx.clock.now();
    const { t, withTx } = this.ctx.database;
    const row = await withTx(async (tx) => {
      const [c] = await tx
        .update(t.oauthClients)
        .set({ secretHash: sha256Hex(secret), secretPrefix: secret.slice(0, SECRET_PREFIX_LENGTH), previousSecretHash: graceHours > 0 ? client.secretHash : null, previousSecretExpiresAt: graceHours > 0 ? new Date(now.getTime() + graceHours * 3_600_000) : null })
        .where(eq(t.oauthClients.id, id))
        .returning();
      await this.admin.audit(tx, actor, 'oauth_client.secret_rotated', id, { grace_hours: graceHours });
      return c!;
    });
    return { ...this.view(row, key), client_secret: secret, warning: 'Store the client secret now: it is shown only once and cannot be retrieved again.' };
  }

  /** Deletes the client: its principal is revoked, so its tokens are refused on the next request, on every process. */
  async remove(actor: Actor, caller: CallerKey, id: string) {
    const { client, key } = await this.own(actor, id);
    assertMayActOn(caller, key, 'delete', 'OAuth client');
    const now = this.ctx.clock.now();
    const { t, withTx } = this.ctx.database;
    await withTx(async (tx) => {
      await tx.update(t.oauthClients).set({ deletedAt: now }).where(eq(t.oauthClients.id, id));
      await tx.update(t.apiKeys).set({ revokedAt: now, revokeReason: 'oauth_client_deleted' }).where(eq(t.apiKeys.id, client.keyId));
      await this.admin.audit(tx, actor, 'oauth_client.deleted', id, {});
      // every process drops its cached principal: the client's tokens are refused from the next request
      this.ctx.database.touchTenant(actor.tenantId, 'access');
    });
    return { deleted: true as const, client_id: id, deleted_at: now.toISOString() };
  }

  /** Client authentication at the token endpoint; null for anything that is not this client with this secret. */
  async authenticate(clientId: string, secret: string) {
    if (!/^oc_[0-9a-f]{24}$/.test(clientId)) return null;
    const { db, t } = this.ctx.database;
    const [row] = await db
      .select({ client: t.oauthClients, key: t.apiKeys, tenant: t.tenants })
      .from(t.oauthClients)
      .innerJoin(t.apiKeys, eq(t.apiKeys.id, t.oauthClients.keyId))
      .innerJoin(t.tenants, eq(t.tenants.id, t.oauthClients.tenantId))
      .where(and(eq(t.oauthClients.id, clientId), isNull(t.oauthClients.deletedAt)))
      .limit(1);
    if (!row || row.key.revokedAt || row.tenant.status === 'terminated') return null;
    const hash = sha256Hex(secret);
    const now = this.ctx.clock.now();
    const current = safeEqual(hash, row.client.secretHash);
    const previous = !!row.client.previousSecretHash && !!row.client.previousSecretExpiresAt && row.client.previousSecretExpiresAt > now && safeEqual(hash, row.client.previousSecretHash);
    return current || previous ? row : null;
  }
}
