import type Redis from 'ioredis';
import type { Logger } from './log';

/**
 * Per-tenant cache generations: how several processes on PostgreSQL cache a tenant's keys and
 * latest scores in process and still honour a change committed by any of them on the very next
 * request (a revoked key is refused at once, a fresh score is what the next cached_ok returns).
 *
 * - Every transaction that changes a tenant's keys, tenant row or scores marks the tenant
 *   (`Database.touchTenant`); once it has committed, and before the write is answered, the
 *   tenant's counter in Redis is incremented (this function).
 * - Every request of a key already makes one atomic Redis call, for the rate limit: the same script
 *   returns the tenant's counter. Cached reads are served only if they were loaded under that very
 *   counter value (ReadCache), otherwise read again from the database.
 * So a change is visible to any request that starts after the write was answered. If Redis cannot
 * be reached, requests read the database (no counter, no cache) and a failed increment is retried,
 * then logged; cached entries also expire after 60 s as a backstop for that case.
 */
export const generationKey = (redisPrefix: string, tenantId: string) => `${redisPrefix}:gen:${tenantId}`;

export function announceTenantChanges(redis: Redis, redisPrefix: string, log: Pick<Logger, 'error'>) {
  return async (tenantIds: string[]) => {
    for (let attempt = 1; ; attempt++) {
      try {
        const batch = redis.multi();
        for (const id of tenantIds) batch.incr(generationKey(redisPrefix, id));
        const results = await batch.exec();
        const failed = results?.find(([err]) => err);
        if (!results || failed) throw failed?.[0] ?? new Error('transaction discarded');
        return;
      } catch (err) {
        if (attempt === 3) {
          log.error('cache generations not announced: other processes may serve these tenants from cache for up to 60 s', {
            tenants: tenantIds.length,
            error: (err as Error).message,
          });
          return;
        }
        await Bun.sleep(50 * attempt);
      }
    }
  };
}
