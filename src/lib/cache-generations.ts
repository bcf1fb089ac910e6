import type Redis from 'ioredis';
import type { CacheAspect, TenantTouch } from '../db/client';
import type { Logger } from './log';

/**
 * Per-tenant cache generations: how several processes on PostgreSQL cache a tenant's keys and
 * latest scores in process and still honour a change committed by any of them on the very next
 * request (a revoked key is refused at once, a fresh score is what the next cached_ok returns).
 *
 * - Two counters per tenant: `access` (its keys and tenant row) and `scores` (its latest scores),
 *   so that a tenant computing many new scores does not keep invalidating its cached keys.
 * - Every transaction that changes them marks the tenant (`Database.touchTenant`); once it has
 *   committed, and before the write is answered, the counter in Redis is incremented (this function).
 * - Every request of a key already makes one atomic Redis call, for the rate limit: the same script
 *   returns both counters. Cached reads are served only if they were loaded under that very
 *   counter value (ReadCache), otherwise read again from the database.
 * So a change is visible to any request that starts after the write was answered. If Redis cannot
 * be reached, requests read the database (no counter, no cache) and a failed increment is retried,
 * then logged; cached entries also expire after 60 s as a backstop for that case.
 */
export const generationKey = (redisPrefix: string, aspect: CacheAspect, tenantId: string) => `${redisPrefix}:gen:${aspect}:${tenantId}`;

export function announceTenantChanges(redis: Redis, redisPrefix: string, log: Pick<Logger, 'error'>) {
  return async (touched: TenantTouch[]) => {
    for (let attempt = 1; ; attempt++) {
      try {
        const batch = redis.multi();
        for (const { tenantId, aspect } of touched) batch.incr(generationKey(redisPrefix, aspect, tenantId));
        const results = await batch.exec();
        const failed = results?.find(([err]) => err);
        if (!results || failed) throw failed?.[0] ?? new Error('transaction discarded');
        return;
      } catch (err) {
        if (attempt === 3) {
          log.error('cache generations not announced: other processes may serve these tenants from cache for up to 60 s', {
            tenants: touched.length,
            error: (err as Error).message,
          });
          return;
        }
        await Bun.sleep(50 * attempt);
      }
    }
  };
}
