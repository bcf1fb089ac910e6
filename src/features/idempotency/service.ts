import { and, eq, lt } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { ApiError } from '../../lib/errors';
import { sha256Hex } from '../../lib/crypto';

/**
 * Idempotency-Key records (Stripe's model). The first request that passes auth and validation
 * claims the key (insert; the unique index on tenant+env+key decides races across processes),
 * runs, and stores its status and body for 24 h. A replay with the same method, path and JSON body
 * gets the stored bytes; a different request with the key gets 422 idempotency_key_reused; a
 * replay while the first still runs gets 409 idempotency_key_in_use. 5xx outcomes are not stored
 * (the claim is released) so that a retry can succeed. A claim older than LOCK_TIMEOUT_MS is
 * considered abandoned (its process died) and can be taken over.
 */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
export const LOCK_TIMEOUT_MS = 120_000;
export const IDEMPOTENCY_KEY_FORMAT = /^[\x20-\x7e]{1,255}$/;

export interface StoredResponse {
  status: number;
  body: string;
}

/** canonical JSON (sorted keys) so whitespace and key order do not make a body "different" */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return '[' + value.map(canonicalJson).join(',') + ']';
  if (value && typeof value === 'object')
    return '{' + Object.keys(value).sort().map((k) => JSON.stringify(k) + ':' + canonicalJson((value as Record<string, unknown>)[k])).join(',') + '}';
  return JSON.stringify(value) ?? 'null';
}

export class IdempotencyService {
  constructor(
    private readonly database: Database,
    private readonly now: () => Date,
  ) {}

  async begin(scope: { tenantId: string; env: string }, key: string, method: string, path: string, body: unknown):
    Promise<{ claimed: string } | { replay: StoredResponse }> {
    const { withTx, db, t } = this.database;
    const bodyHash = sha256Hex(canonicalJson(body ?? {}));
    for (let attempt = 0; attempt < 4; attempt++) {
      const now = this.now();
      const id = crypto.randomUUID();
      const inserted = await withTx((tx) =>
        tx
          .insert(t.idempotencyKeys)
          .values({ id, tenantId: scope.tenantId, env: scope.env, key, method, path, bodyHash, state: 'running', createdAt: now, expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS) })
          .onConflictDoNothing()
          .returning({ id: t.idempotencyKeys.id }),
      );
      if (inserted.length) return { claimed: id };
      const [row] = await db
        .select()
        .from(t.idempotencyKeys)
        .where(and(eq(t.idempotencyKeys.tenantId, scope.tenantId), eq(t.idempotencyKeys.env, scope.env), eq(t.idempotencyKeys.key, key)));
      if (!row) continue;
      const abandoned = row.state === 'running' && row.createdAt.getTime() + LOCK_TIMEOUT_MS <= now.getTime();
      if (row.expiresAt.getTime() <= now.getTime() || abandoned) {
        await withTx((tx) => tx.delete(t.idempotencyKeys).where(and(eq(t.idempotencyKeys.id, row.id), eq(t.idempotencyKeys.state, row.state))));
        continue;
      }
      if (row.method !== method || row.path !== path || row.bodyHash !== bodyHash)
        throw new ApiError(
          'idempotency_key_reused',
          `Idempotency-Key "${key}" was already used for a different request (${row.method} ${row.path} with another body). Use a new key for a new request.`,
        );
      if (row.state === 'running')
        throw new ApiError('idempotency_key_in_use', 'A request with this Idempotency-Key is still in progress; retry after it completes.', {
          headers: { 'retry-after': '1' },
        });
      return { replay: { status: row.responseStatus ?? 200, body: row.responseBody ?? '' } };
    }
    throw new ApiError('idempotency_key_in_use', 'The Idempotency-Key is contended; retry.', { headers: { 'retry-after': '1' } });
  }

  async complete(claimId: string, status: number, body: string) {
    const { withTx, t } = this.database;
    await withTx(async (tx) => {
      if (status >= 500) await tx.delete(t.idempotencyKeys).where(eq(t.idempotencyKeys.id, claimId));
      else await tx.update(t.idempotencyKeys).set({ state: 'done', responseStatus: status, responseBody: body }).where(eq(t.idempotencyKeys.id, claimId));
    });
  }

  /** periodic job: drop expired records */
  async purgeExpired(): Promise<number> {
    const { withTx, t } = this.database;
    const res = await withTx((tx) => tx.delete(t.idempotencyKeys).where(lt(t.idempotencyKeys.expiresAt, this.now())).returning({ id: t.idempotencyKeys.id }));
    return res.length;
  }
}
