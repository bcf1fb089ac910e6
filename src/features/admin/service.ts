import { and, desc, eq, inArray, isNotNull, isNull, like, notInArray, or, type SQL } from 'drizzle-orm';
import type { Database, Db } from '../../db/client';
import { ApiError, validationError } from '../../lib/errors';
import { pageOf } from '../../lib/schemas';
import { afterTimeCursor, timeCursorOf } from '../../lib/page-cursor';
import { clientIdsByKey, effectiveRateLimit, TenantService, keyStatus, type Env, type KeyRow, type TenantRow } from '../tenants/service';

/** active API keys a tenant may hold per environment through the API (rotation) */
export const MAX_ACTIVE_KEYS = 20;

export interface Actor {
  tenantId: string;
  /** the acting API key; null for the operator (the CLI), recorded as such in the audit log */
  keyId: string | null;
  requestId: string | null;
  /** the calling key's environment: it may only change keys of that environment */
  env: string;
}

/** The operator acting through the CLI on a tenant's keys or data of one environment. */
export const operatorActor = (tenantId: string, env: string): Actor => ({ tenantId, keyId: null, requestId: null, env });

/** The acting key of an authenticated request, as audit records and admin rules need it. */
export const actorOf = (a: Actor): Actor => ({ tenantId: a.tenantId, keyId: a.keyId, requestId: a.requestId, env: a.env });

/** The acting key and its tenant, for what it may grant or act on; null for the operator (the CLI). */
export type CallerKey = { key: Pick<KeyRow, 'scopes' | 'rateLimitPerMinute' | 'expiresAt'>; tenant: Pick<TenantRow, 'plan' | 'rateLimitPerMinute'> };

/** whether a credential expiring at `a` outlives one expiring at `b` (null: never expires) */
const outlives = (a: Date | null, b: Date | null) => b !== null && (a === null || a > b);

const article = (noun: string) => `${/^[aeiouAEIOU]/.test(noun) ? 'an' : 'a'} ${noun}`;

const scopesBeyond = (caller: CallerKey, scopes: string[]) => (caller.key.scopes.includes('*') ? [] : scopes.filter((s) => !caller.key.scopes.includes(s)));

/**
 * What a new key or OAuth client gets (Stripe's restricted keys): the scopes asked for, all held by
 * the caller (default: the caller's), and a per-minute limit no higher than the caller's (default:
 * the caller's own limit, so a limited key cannot mint a faster one by leaving the field out).
 */
export function grantedBy(caller: CallerKey, body: { scopes?: string[]; rate_limit_per_minute?: number }) {
  const scopes = body.scopes ?? caller.key.scopes;
  const beyond = scopesBeyond(caller, scopes);
  if (beyond.length) throw new ApiError('insufficient_scope', `A key cannot grant scopes it does not hold: ${beyond.join(', ')}.`, { fields: [{ path: 'scopes', message: `not held by the calling key: ${beyond.join(', ')}` }] });
  const ceiling = effectiveRateLimit(caller.tenant, caller.key);
  const problems = body.rate_limit_per_minute !== undefined && body.rate_limit_per_minute > ceiling ? [{ path: 'rate_limit_per_minute', message: `must be at most ${ceiling}, the calling key's own limit` }] : [];
  return { scopes, rateLimitPerMinute: body.rate_limit_per_minute ?? caller.key.rateLimitPerMinute ?? null, problems };
}

/**
 * A key (or OAuth client) the caller rotates, revokes or deletes must be within what it could have
 * created: scopes it holds and, for a rotation (which mints a copy), a limit no higher than its own.
 * Otherwise a key holding `esg` and `keys:manage` got a `*` key by rotating one.
 */
export function assertMayActOn(caller: CallerKey | null, target: Pick<KeyRow, 'scopes' | 'rateLimitPerMinute' | 'expiresAt'>, action: 'rotate' | 'revoke' | 'delete', noun: 'key' | 'OAuth client') {
  if (!caller) return;
  const beyond = scopesBeyond(caller, target.scopes);
  if (beyond.length) throw new ApiError('insufficient_scope', `A key cannot ${action} ${article(noun)} holding scopes it does not hold itself: ${beyond.join(', ')}.`);
  if (action === 'rotate') {
    const own = effectiveRateLimit(caller.tenant, caller.key);
    const theirs = effectiveRateLimit(caller.tenant, target);
    if (theirs > own) throw new ApiError('insufficient_scope', `A key cannot rotate ${article(noun)} with a higher per-minute limit (${theirs}) than its own (${own}).`);
    // the copy keeps the target's lifetime: a key expiring tomorrow must not get one that never does
    if (outlives(target.expiresAt, caller.key.expiresAt))
      throw new ApiError('insufficient_scope', `A key that expires (${caller.key.expiresAt!.toISOString()}) cannot rotate ${article(noun)} that outlives it.`);
  }
}

/** A key that expires cannot mint a credential outliving it (an OAuth client never expires). */
export function assertOutlivedBy(caller: CallerKey, expiresAt: Date | null, noun: string) {
  if (outlives(expiresAt, caller.key.expiresAt)) throw new ApiError('insufficient_scope', `A key that expires (${caller.key.expiresAt!.toISOString()}) cannot create ${noun} that outlives it.`);
}

/**
 * The audit records of one environment: a record belongs to its acting key's environment; an
 * operator's record (no acting key) to the environment of the key it targets, else to live.
 */
export function auditLogOfEnv(database: Database, tenantId: string, env: 'sandbox' | 'live'): SQL | undefined {
  const { t, db } = database;
  const a = t.auditLog;
  const k = t.apiKeys;
  const keysOf = (e: string | null) => db.select({ id: k.id }).from(k).where(e ? and(eq(k.tenantId, tenantId), eq(k.env, e)) : eq(k.tenantId, tenantId));
  const operatorOnKey = and(isNull(a.actorKeyId), inArray(a.target, keysOf(env)));
  const byKey = inArray(a.actorKeyId, keysOf(env));
  return env === 'live' ? or(byKey, operatorOnKey, and(isNull(a.actorKeyId), or(isNull(a.target), notInArray(a.target, keysOf(null))))) : or(byKey, operatorOnKey);
}

/** Key rotation and revocation (Stripe's rolling model), each with an audit record. */
export class AdminService {
  constructor(
    private readonly database: Database,
    private readonly tenants: TenantService,
    private readonly now: () => Date,
  ) {}

  /**
   * The caller as the rules on what it may mint see it. A key in its rotation grace lives on in its
   * successor (the grace is for moving over, not the key's lifetime): the successor's expiry counts,
   * so a key just rotated can still create what the tenant needs; a key made temporary stays so.
   */
  async callerOf(auth: { key: KeyRow; tenant: TenantRow }): Promise<CallerKey> {
    if (!auth.key.expiresAt) return { key: auth.key, tenant: auth.tenant };
    const expiresAt = await this.lifetimeOf(this.database.db, auth.key);
    return { key: expiresAt === auth.key.expiresAt ? auth.key : { ...auth.key, expiresAt }, tenant: auth.tenant };
  }

  /**
   * A key's own lifetime: its expires_at, or once it was rotated (expires_at then holds its grace
   * end) what its first successor carried, down the chain of first successors (a successor rotated
   * in turn holds its own grace end too). At most 64 links (MAX_ACTIVE_KEYS bounds a live chain).
   */
  private async lifetimeOf(db: Db, key: Pick<KeyRow, 'id' | 'tenantId' | 'expiresAt'>): Promise<Date | null> {
    const k = this.database.t.apiKeys;
    let current = key;
    for (let i = 0; i < 64; i++) {
      const [first] = await db.select({ id: k.id, tenantId: k.tenantId, expiresAt: k.expiresAt }).from(k).where(and(eq(k.tenantId, current.tenantId), eq(k.rotatedFrom, current.id))).orderBy(k.createdAt).limit(1);
      if (!first) break;
      current = first;
    }
    return current.expiresAt;
  }

  /** Audit record in the caller's transaction: who (key id), what, when, request id. */
  async audit(tx: Db, actor: Actor, action: string, target: string | null, details: Record<string, unknown> = {}) {
    await tx.insert(this.database.t.auditLog).values({
      id: Bun.randomUUIDv7(), // time-ordered: records of one millisecond list in the order they were made
      tenantId: actor.tenantId,
      actorKeyId: actor.keyId,
      action,
      target,
      requestId: actor.requestId,
      details: actor.keyId === null ? { ...details, actor: 'operator' } : details,
      createdAt: this.now(),
    });
  }

  /** The audit records of the caller's environment, newest first (action and target filters; a cursor of (time, id)). */
  async auditLog(actor: Actor, q: { action?: string; target?: string; limit?: number; cursor?: string }) {
    const a = this.database.t.auditLog;
    const limit = q.limit ?? 50;
    const conds: (SQL | undefined)[] = [eq(a.tenantId, actor.tenantId), auditLogOfEnv(this.database, actor.tenantId, actor.env as 'sandbox' | 'live')];
    if (q.action) conds.push(eq(a.action, q.action));
    if (q.target) conds.push(eq(a.target, q.target));
    conds.push(afterTimeCursor(a.createdAt, a.id, q.cursor));
    const rows = await this.database.db.select().from(a).where(and(...conds)).orderBy(desc(a.createdAt), desc(a.id)).limit(limit + 1);
    const clientOf = await clientIdsByKey(this.database, actor.tenantId, rows.map((r) => r.actorKeyId));
    return pageOf(
      rows,
      limit,
      (r) => ({
        id: r.id,
        action: r.action,
        target: r.target,
        actor: r.actorKeyId === null ? ('operator' as const) : clientOf.has(r.actorKeyId) ? ('oauth_client' as const) : ('key' as const),
        actor_key_id: r.actorKeyId,
        actor_client_id: r.actorKeyId === null ? null : (clientOf.get(r.actorKeyId) ?? null),
        request_id: r.requestId,
        details: (r.details ?? {}) as Record<string, unknown>,
        created_at: r.createdAt.toISOString(),
      }),
      (last) => timeCursorOf(last.createdAt, last.id),
    );
  }

  /** Serialises concurrent admin changes of one tenant (a row lock on PostgreSQL; SQLite is serial already). */
  async lockTenant(tx: Db, tenantId: string) {
    const t = this.database.t.tenants;
    await tx.update(t).set({ status: t.status }).where(eq(t.id, tenantId));
  }

  /** the tenant's keys usable at `now` (both environments); inside the caller's transaction, under its tenant lock */
  private async activeKeys(tx: Db, tenantId: string, now: Date) {
    const k = this.database.t.apiKeys;
    // API keys only: the rows standing for OAuth clients are neither counted nor a tenant's way in
    const rows = await tx.select({ id: k.id, env: k.env, revokedAt: k.revokedAt, expiresAt: k.expiresAt }).from(k).where(and(eq(k.tenantId, tenantId), isNull(k.revokedAt), like(k.keyPrefix, 'sk_%')));
    return rows.filter((r) => keyStatus(r, now) === 'active');
  }

  private async ownKey(tx: Db, actor: Actor, keyId: string) {
    const k = this.database.t.apiKeys;
    const [row] = await tx.select().from(k).where(eq(k.id, keyId));
    if (!row) throw new ApiError('resource_not_found', `No API key ${keyId}.`);
    if (row.tenantId !== actor.tenantId) throw new ApiError('cross_tenant_forbidden', 'That API key belongs to another tenant.');
    if (!row.keyPrefix.startsWith('sk_')) throw new ApiError('resource_not_found', `No API key ${keyId} (an OAuth client is managed under /v1/admin/oauth-clients).`);
    // a sandbox key (CI, laptops) must never mint or kill production keys
    if (row.env !== actor.env) throw new ApiError('cross_environment_forbidden', `A ${actor.env} key cannot change ${row.env} keys; use a ${row.env} key.`);
    return row;
  }

  async rotate(actor: Actor, caller: CallerKey | null, keyId: string, graceDays: number) {
    const { withTx, t } = this.database;
    return withTx(async (tx) => {
      await this.lockTenant(tx, actor.tenantId);
      const old = await this.ownKey(tx, actor, keyId);
      assertMayActOn(caller, old, 'rotate', 'key');
      const now = this.now();
      if (keyStatus(old, now) !== 'active') throw new ApiError('key_not_active', `Key ${keyId} is ${keyStatus(old, now)} and cannot be rotated.`);
      const graceEnd = new Date(now.getTime() + graceDays * 86_400_000);
      const oldExpiresAt = old.expiresAt && old.expiresAt < graceEnd ? old.expiresAt : graceEnd;
      // a key in its grace is still active and can be rotated again: without a cap, rotations
      // could mint keys without end, each with its own per-minute budget (the tenant lock above
      // makes the count exact against concurrent rotations)
      const active = (await this.activeKeys(tx, actor.tenantId, now)).filter((k) => k.env === old.env).length;
      if (active + (oldExpiresAt > now ? 1 : 0) > MAX_ACTIVE_KEYS)
        throw new ApiError('too_many_active_keys', `The tenant holds ${active} active ${old.env} keys, the most allowed is ${MAX_ACTIVE_KEYS} (keys in their rotation grace count). Revoke one, or rotate with grace_days 0.`);
      // the key's own lifetime carries over (a temporary key stays temporary)
      const lifetime = await this.lifetimeOf(tx, old);
      const created = await this.tenants.createKey({
        tenantId: actor.tenantId,
        env: old.env as Env,
        name: old.name,
        scopes: old.scopes,
        rateLimitPerMinute: old.rateLimitPerMinute,
        expiresAt: lifetime,
        rotatedFrom: old.id,
      });
      await tx.update(t.apiKeys).set({ expiresAt: oldExpiresAt }).where(eq(t.apiKeys.id, old.id));
      this.database.touchTenant(actor.tenantId, 'access');
      await this.audit(tx, actor, 'api_key.rotated', old.id, { new_key_id: created.api_key_id, grace_days: graceDays, old_expires_at: oldExpiresAt.toISOString() });
      return {
        api_key: created.api_key,
        api_key_id: created.api_key_id,
        rotated_from: old.id,
        old_expires_at: oldExpiresAt.toISOString(),
        grace_days: graceDays,
        warning: 'Store this API key now: it is shown only once and cannot be retrieved again. The old key stops working at old_expires_at.',
      };
    });
  }

  /**
   * A new key (Stripe's restricted keys): in the caller's environment, with scopes the caller holds
   * (a `*` key may grant any), a per-minute limit no higher than the caller's own, an optional expiry.
   */
  async create(actor: Actor, caller: CallerKey, body: { name: string; env?: Env; scopes?: string[]; expires_at?: string; rate_limit_per_minute?: number }) {
    const env = body.env ?? (actor.env as Env);
    if (env !== actor.env) throw new ApiError('cross_environment_forbidden', `A ${actor.env} key can only create ${actor.env} keys; use a ${env} key.`);
    const { scopes, rateLimitPerMinute, problems: errors } = grantedBy(caller, body);
    const now = this.now();
    // default: the caller's own expiry; never later than it (a temporary key mints no permanent one)
    const expiresAt = body.expires_at ? new Date(body.expires_at) : (caller.key.expiresAt ?? null);
    if (expiresAt && expiresAt.getTime() <= now.getTime()) errors.push({ path: 'expires_at', message: 'must be in the future' });
    else if (outlives(expiresAt, caller.key.expiresAt)) errors.push({ path: 'expires_at', message: `must be no later than the calling key's own expiry (${caller.key.expiresAt!.toISOString()})` });
    if (errors.length) throw validationError(errors);
    const { withTx } = this.database;
    return withTx(async (tx) => {
      await this.lockTenant(tx, actor.tenantId);
      const active = (await this.activeKeys(tx, actor.tenantId, now)).filter((k) => k.env === env).length;
      if (active + 1 > MAX_ACTIVE_KEYS) throw new ApiError('too_many_active_keys', `The tenant holds ${active} active ${env} keys, the most allowed is ${MAX_ACTIVE_KEYS}. Revoke one first.`);
      const created = await this.tenants.createKey({ tenantId: actor.tenantId, env, name: body.name, scopes, rateLimitPerMinute, expiresAt });
      this.database.touchTenant(actor.tenantId, 'access');
      await this.audit(tx, actor, 'api_key.created', created.api_key_id, { name: body.name, scopes, expires_at: expiresAt?.toISOString() ?? null, rate_limit_per_minute: rateLimitPerMinute });
      return {
        api_key: created.api_key,
        api_key_id: created.api_key_id,
        name: body.name,
        env,
        scopes,
        rate_limit_per_minute: rateLimitPerMinute,
        expires_at: expiresAt?.toISOString() ?? null,
        created_at: now.toISOString(),
        warning: 'Store this API key now: it is shown only once and cannot be retrieved again.',
      };
    });
  }

  /** `allowLast`: the operator may revoke a tenant's last active key (a leaked key must be stoppable). */
  async revoke(actor: Actor, caller: CallerKey | null, keyId: string, reason: string | null, opts: { allowLast?: boolean } = {}) {
    const { withTx, t } = this.database;
    return withTx(async (tx) => {
      await this.lockTenant(tx, actor.tenantId);
      const key = await this.ownKey(tx, actor, keyId);
      assertMayActOn(caller, key, 'revoke', 'key');
      if (key.revokedAt) return { revoked: true, revoked_at: key.revokedAt.toISOString(), api_key_id: key.id };
      const now = this.now();
      if (keyStatus(key, now) === 'active' && !opts.allowLast) {
        // what keeps the tenant reachable once this key is gone: another active key that has not
        // been rotated (a key in its rotation grace lapses by itself), of the same environment when
        // a key is acting (it cannot act on the other environment's keys; the operator can)
        const k = t.apiKeys;
        const superseded = new Set(
          (await tx.select({ from: k.rotatedFrom }).from(k).where(and(eq(k.tenantId, actor.tenantId), isNotNull(k.rotatedFrom)))).map((r) => r.from),
        );
        const byKey = actor.keyId !== null;
        const lasting = (await this.activeKeys(tx, actor.tenantId, now)).filter((o) => o.id !== key.id && (!byKey || o.env === key.env) && !superseded.has(o.id));
        if (!lasting.length)
          throw new ApiError('last_active_key', `Refused: this is the tenant's last active ${byKey ? `${key.env} ` : ''}API key (keys in their rotation grace do not count: they lapse). Create a key first.`);
      }
      await tx.update(t.apiKeys).set({ revokedAt: now, revokeReason: reason }).where(and(eq(t.apiKeys.id, key.id)));
      this.database.touchTenant(actor.tenantId, 'access');
      await this.audit(tx, actor, 'api_key.revoked', key.id, { reason });
      return { revoked: true, revoked_at: now.toISOString(), api_key_id: key.id };
    });
  }
}
