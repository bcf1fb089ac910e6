import { and, eq, inArray, like, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { randomHex, sha256Hex } from '../../lib/crypto';
import { plainCommitsGeneration, ReadCache } from '../../lib/read-cache';

export const PLANS = ['free', 'starter', 'growth', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];
export const ENVS = ['sandbox', 'live'] as const;
export type Env = (typeof ENVS)[number];
export const SCOPES = ['*', 'score', 'esg', 'erp', 'keys:manage', 'webhooks:manage', 'gdpr:manage', 'usage:read', 'policy:manage', 'compliance', 'finance'] as const;
export type Scope = (typeof SCOPES)[number];

/** per-minute limit by plan; enterprise uses the tenant's negotiated value (default 6000) */
export const PLAN_RATE_LIMITS: Record<Plan, number | null> = { free: 60, starter: 600, growth: 6000, enterprise: null };

export type TenantRow = Database['t']['tenants']['$inferSelect'];
export type KeyRow = Database['t']['apiKeys']['$inferSelect'];
/** the api_keys row standing for an OAuth client (its prefix is the client id's), not an API key */
export const isClientPrincipal = (key: Pick<KeyRow, 'keyPrefix'>) => key.keyPrefix.startsWith('oc_');
/**
 * The OAuth client (`oc_…`) each of these api_keys rows stands for, if any: a client acts through
 * its principal row, whose id no list shows, so what is attributed to it is named by its client_id.
 */
export async function clientIdsByKey(database: Database, tenantId: string, keyIds: (string | null)[]): Promise<Map<string, string>> {
  const ids = [...new Set(keyIds.filter((k): k is string => k !== null))];
  if (!ids.length) return new Map();
  const c = database.t.oauthClients;
  const rows = await database.db.select({ id: c.id, keyId: c.keyId }).from(c).where(and(eq(c.tenantId, tenantId), inArray(c.keyId, ids)));
  return new Map(rows.map((x) => [x.keyId, x.id] as const));
}

export const keyPrefixOf = (plaintext: string) => plaintext.slice(0, 12);
export const hashKey = (plaintext: string) => sha256Hex(plaintext);
/** sk_test_/sk_live_ + 28 lowercase hex (112 random bits from the CSPRNG) */
export const generateKey = (env: Env) => (env === 'live' ? 'sk_live_' : 'sk_test_') + randomHex(14);
export const KEY_FORMAT = /^sk_(test|live)_[0-9a-f]{28}$/;

export function keyStatus(k: Pick<KeyRow, 'revokedAt' | 'expiresAt'>, now: Date): 'active' | 'revoked' | 'expired' {
  if (k.revokedAt) return 'revoked';
  if (k.expiresAt && k.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
}

export function effectiveRateLimit(tenant: Pick<TenantRow, 'plan' | 'rateLimitPerMinute'>, key: Pick<KeyRow, 'rateLimitPerMinute'>): number {
  if (key.rateLimitPerMinute) return key.rateLimitPerMinute;
  return PLAN_RATE_LIMITS[tenant.plan as Plan] ?? tenant.rateLimitPerMinute ?? 6000;
}

export class TenantService {
  constructor(
    private readonly database: Database,
    private readonly now: () => Date,
    private readonly defaultDailyQuota: number,
  ) {}

  async createTenant(input: { name: string; plan?: Plan; env?: Env; scopes?: string[]; dailyQuota?: number; rateLimitPerMinute?: number }) {
    const { withTx, t } = this.database;
    return withTx(async (tx) => {
      const tenantId = crypto.randomUUID();
      await tx.insert(t.tenants).values({
        id: tenantId,
        name: input.name,
        plan: input.plan ?? 'free',
        status: 'active',
        dailyQuota: input.dailyQuota ?? this.defaultDailyQuota,
        rateLimitPerMinute: input.rateLimitPerMinute ?? null,
        createdAt: this.now(),
      });
      const key = await this.createKey({ tenantId, env: input.env ?? 'sandbox', name: 'default', scopes: input.scopes ?? ['*'] });
      return { tenant_id: tenantId, ...key };
    });
  }

  /** `principal`: the row stands for another credential (an OAuth client) whose hash and prefix it gives; no plaintext key exists */
  async createKey(input: { tenantId: string; env: Env; name?: string; scopes?: string[]; rateLimitPerMinute?: number | null; rotatedFrom?: string; expiresAt?: Date | null; principal?: { keyHash: string; keyPrefix: string } }) {
    const { withTx, t } = this.database;
    const plaintext = input.principal ? '' : generateKey(input.env);
    const id = crypto.randomUUID();
    await withTx(async (tx) => {
      const [tenant] = await tx.select({ id: t.tenants.id }).from(t.tenants).where(eq(t.tenants.id, input.tenantId));
      if (!tenant) throw new Error(`unknown tenant ${input.tenantId}`);
      await tx.insert(t.apiKeys).values({
        id,
        tenantId: input.tenantId,
        name: input.name ?? 'default',
        env: input.env,
        keyPrefix: input.principal?.keyPrefix ?? keyPrefixOf(plaintext),
        keyHash: input.principal?.keyHash ?? hashKey(plaintext),
        scopes: input.scopes ?? ['*'],
        rateLimitPerMinute: input.rateLimitPerMinute ?? null,
        rotatedFrom: input.rotatedFrom ?? null,
        expiresAt: input.expiresAt ?? null,
        createdAt: this.now(),
      });
    });
    return { api_key_id: id, api_key: plaintext };
  }

  async setStatus(tenantId: string, status: 'active' | 'suspended') {
    const { withTx, t } = this.database;
    return withTx(async (tx) => {
      const [row] = await tx.select().from(t.tenants).where(eq(t.tenants.id, tenantId));
      if (!row) throw new Error(`unknown tenant ${tenantId}`);
      if (row.status === 'terminated') throw new Error(`tenant ${tenantId} is terminated`);
      await tx.update(t.tenants).set({ status }).where(eq(t.tenants.id, tenantId));
      this.database.touchTenant(tenantId, 'access');
    });
  }

  async setQuota(tenantId: string, patch: { dailyQuota?: number; rateLimitPerMinute?: number; plan?: Plan }) {
    const { withTx, t } = this.database;
    return withTx(async (tx) => {
      const res = await tx.update(t.tenants).set(patch).where(eq(t.tenants.id, tenantId)).returning({ id: t.tenants.id });
      if (!res.length) throw new Error(`unknown tenant ${tenantId}`);
      this.database.touchTenant(tenantId, 'access');
    });
  }

  /**
   * The auth lookup, on every request: one indexed read by hash joined with the tenant, prepared
   * once, behind a read cache that never serves a row older than the last commit that changed it
   * (see ReadCache), so a revocation is seen by the very next request of every process.
   */
  private authLookup?: { execute(p: { hash: string }): Promise<{ key: KeyRow; tenant: TenantRow }[]> };
  private authCache?: ReadCache<{ key: KeyRow; tenant: TenantRow }>;
  async findByHash(hash: string, generation?: number | null): Promise<{ key: KeyRow; tenant: TenantRow } | null> {
    this.authCache ??= new ReadCache(this.database);
    // keys and tenants change only in plain transactions: new scores leave them cached (SQLite)
    return this.authCache.get(hash, () => this.lookupByHash(hash), plainCommitsGeneration(this.database, generation));
  }
  /**
   * findByHash from the in-process cache only (undefined: not cached). Synchronous. SQLite: exact.
   * PostgreSQL: with `cachedUnder`, the tenant generation it was loaded under, which the caller
   * must confirm (auth.ts admitKey) before relying on it.
   */
  cachedByHash(hash: string): { key: KeyRow; tenant: TenantRow; cachedUnder?: number } | undefined {
    if (!this.authCache) return undefined;
    if (this.database.changeEpoch() !== null) return this.authCache.peek(hash, plainCommitsGeneration(this.database));
    const c = this.authCache.candidate(hash);
    return c && { ...c.value, cachedUnder: c.epoch };
  }
  private async lookupByHash(hash: string) {
    const { db, t } = this.database;
    this.authLookup ??= db
      .select({ key: t.apiKeys, tenant: t.tenants })
      .from(t.apiKeys)
      .innerJoin(t.tenants, eq(t.apiKeys.tenantId, t.tenants.id))
      .where(eq(t.apiKeys.keyHash, sql.placeholder('hash')))
      .limit(1)
      .prepare('auth_lookup');
    const rows = await this.authLookup.execute({ hash });
    return rows[0] ?? null;
  }

  /** The tenant's API keys (not the rows standing for OAuth clients). */
  async listKeys(tenantId: string) {
    const { db, t } = this.database;
    return db.select().from(t.apiKeys).where(and(eq(t.apiKeys.tenantId, tenantId), like(t.apiKeys.keyPrefix, 'sk_%'))).orderBy(t.apiKeys.createdAt);
  }
}
