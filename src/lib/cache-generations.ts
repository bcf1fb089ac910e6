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
 *   committed, and before the write is answered, the counter in Redis moves on (this module).
 * - Every request of a key already makes one atomic Redis call, for the rate limit: the same script
 *   returns both counters. Cached reads are served only if they were loaded under that very
 *   counter value (ReadCache), otherwise read again from the database.
 * - Values never repeat, even if Redis loses its data (flush, restart without persistence): a new or
 *   moved counter takes at least Redis's clock in microseconds, above any value it had before.
 *   (A restore from an older snapshot or a failover that drops acknowledged writes can bring back
 *   an old value; cached entries expire after 10 s whatever happens, which bounds that case.)
 * If Redis cannot be reached, requests read the database (no counter, no cache); an announcement
 * that fails is retried every second in the background until it goes through.
 */
export const generationKey = (redisPrefix: string, aspect: CacheAspect, tenantId: string) => `${redisPrefix}:gen:${aspect}:${tenantId}`;

/** Lua: the current microsecond on Redis's clock (shared by the limiter's script) */
export const LUA_NOW_US = `
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
`;

// KEYS: the counters to move on; each becomes max(value + 1, now in µs)
const BUMP = `
if redis.replicate_commands then redis.replicate_commands() end
${LUA_NOW_US}
local us = now_us()
for _, k in ipairs(KEYS) do
  local nxt = tonumber(redis.call('GET', k) or '0') + 1
  if nxt < us then nxt = us end
  redis.call('SET', k, string.format('%d', nxt))
end
return #KEYS
`;

type Bumper = Redis & { bumpGenerations(numKeys: number, ...keys: string[]): Promise<unknown> };

/**
 * Database.tenantsChanged for a Redis connection: resolves true once the counters moved on, false
 * if that failed (then it keeps retrying in the background, every second, until it goes through).
 */
export function announceTenantChanges(redis: Redis, redisPrefix: string, log: Pick<Logger, 'throttled'>) {
  const bumper = redis as Bumper;
  if (!('bumpGenerations' in bumper)) redis.defineCommand('bumpGenerations', { lua: BUMP });
  const pending = new Set<string>();
  let timer: ReturnType<typeof setInterval> | null = null;
  const send = (keys: string[]) => bumper.bumpGenerations(keys.length, ...keys);
  const retryLater = (keys: string[], err: unknown) => {
    log.throttled('cache-generations', 60_000, 'error', 'cache generations not announced yet (Redis unreachable); retrying every second', {
      error: err instanceof Error ? err.message : String(err),
    });
    for (const k of keys) pending.add(k);
    timer ??= setInterval(() => {
      if (redis.status !== 'ready' || !pending.size) return;
      const batch = [...pending];
      send(batch).then(
        () => {
          for (const k of batch) pending.delete(k);
          if (!pending.size && timer) {
            clearInterval(timer);
            timer = null;
          }
        },
        () => {},
      );
    }, 1000);
    timer.unref?.();
  };
  return async (touched: TenantTouch[]): Promise<boolean> => {
    const keys = touched.map(({ tenantId, aspect }) => generationKey(redisPrefix, aspect, tenantId));
    // without a connection, fail at once (no offline queue): the write is committed already
    if (redis.status !== 'ready') {
      retryLater(keys, new Error(`redis ${redis.status}`));
      return false;
    }
    try {
      await send(keys);
      return true;
    } catch (err) {
      retryLater(keys, err);
      return false;
    }
  };
}
