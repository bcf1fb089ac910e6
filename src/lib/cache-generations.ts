import type Redis from 'ioredis';
import type { CacheAspect, TenantTouch } from '../db/client';
import type { Logger } from './log';
import type { RedisScripts } from './redis-scripts';
import { ANNOUNCE_WAIT_MS, feedRegistry, generationChannel, type GenerationFeed } from './generation-feed';

/**
 * Per-tenant cache generations: how several processes on PostgreSQL cache a tenant's keys and
 * latest scores in process and still honour a change committed by any of them on the very next
 * request (a revoked key is refused at once, a fresh score is what the next cached_ok returns).
 *
 * - Three counters per tenant: `access` (its keys and tenant row), `scores` (its latest scores) and
 *   `inputs` (what a computed score reads besides the request: CacheAspect), so that a tenant
 *   computing many new scores does not keep invalidating its cached keys and score inputs.
 * - Every transaction that changes them marks the tenant (`Database.touchTenant`); once it has
 *   committed, and before the write is answered, the counter in Redis moves on (this module).
 * - A request of a key learns `access` and `scores` either from the rate-limit script it runs (the
 *   same atomic call returns them) or, without a round trip, from the process's generation feed,
 *   which holds every change answered so far while it is coherent (generation-feed.ts); when it is
 *   not, the request asks Redis. `inputs` is known only from the feed (read from Redis once per
 *   tenant, then followed): without it, score inputs are read from the database.
 *   Cached reads are served only if they were loaded under that very counter value (ReadCache),
 *   otherwise read again from the database.
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

// KEYS: the counters to move on, then the registry of processes that follow the changes. ARGV: the
// channel they listen on (generation-feed.ts), the announcer's acknowledgement channel and message
// id, then each counter's "<aspect>:<tenant>". Each counter becomes max(value + 1, now in µs). The
// change is published by the same script, so no process can read the new value from Redis before
// the message that announces it is on its way. Returns how many subscribers received it, then the
// registered processes.
const BUMP = `
if redis.replicate_commands then redis.replicate_commands() end
${LUA_NOW_US}
local us = now_us()
local msg = {ARGV[2], ARGV[3]}
for i = 1, #KEYS - 1 do
  local nxt = tonumber(redis.call('GET', KEYS[i]) or '0') + 1
  if nxt < us then nxt = us end
  local v = string.format('%d', nxt)
  redis.call('SET', KEYS[i], v)
  msg[#msg + 1] = ARGV[3 + i] .. '=' .. v
end
local out = redis.call('ZRANGEBYSCORE', KEYS[#KEYS], math.floor(us / 1000), '+inf')
table.insert(out, 1, redis.call('PUBLISH', ARGV[1], table.concat(msg, ' ')))
return out
`;

type Bumper = Redis & { bumpGenerations(numKeys: number, ...args: string[]): Promise<[number, ...string[]]> };

/**
 * Database.tenantsChanged for a Redis connection: resolves true once the counters moved on and every
 * registered process acknowledged the change (or ANNOUNCE_WAIT_MS passed: see generation-feed.ts),
 * false if that failed (then it keeps retrying in the background, every second, until it goes
 * through). Without a feed of its own (the CLI) nothing can acknowledge to it: it waits
 * ANNOUNCE_WAIT_MS whenever a process follows the changes.
 */
export function announceTenantChanges(redis: Redis, redisPrefix: string, log: Pick<Logger, 'throttled'>, feed?: GenerationFeed, scripts?: RedisScripts) {
  const bumper = redis as Bumper;
  if (!('bumpGenerations' in bumper)) redis.defineCommand('bumpGenerations', { lua: BUMP });
  // one call per group commit on the write paths: through the native client where the process has
  // one and it is connected (its encoding and parsing cost this process's thread less than
  // ioredis's, measured); otherwise, or if its connection drops during the call, through ioredis,
  // which reconnects by itself (the native one only when next used)
  const bump = async (keys: string[], argv: string[]): Promise<[number, ...string[]]> => {
    if (scripts?.connected) {
      try {
        return (await scripts.run(BUMP, keys, argv)) as [number, ...string[]];
      } catch (err) {
        if (scripts.connected || redis.status !== 'ready') throw err;
      }
    }
    return bumper.bumpGenerations(keys.length, ...keys, ...argv);
  };
  const pending = new Map<string, string>();
  let timer: ReturnType<typeof setInterval> | null = null;
  const channel = generationChannel(redisPrefix);
  const registry = feedRegistry(redisPrefix);
  const send = async (changes: Map<string, string>) => {
    const acks = feed?.expect();
    let receivers: number;
    let followers: string[];
    try {
      [receivers, ...followers] = await bump([...changes.keys(), registry], [channel, feed?.ackChannel ?? '-', acks?.id ?? '-', ...changes.values()]);
    } catch (err) {
      acks?.cancel();
      throw err;
    }
    if (acks) {
      const silent = await acks.wait(followers, receivers);
      if (silent) log.throttled('generation-acks', 60_000, 'warn', 'cache generations: processes did not acknowledge a change in time (waited them out)', { processes: silent });
    } else if (followers.length || receivers) await Bun.sleep(ANNOUNCE_WAIT_MS);
  };
  const retryLater = (changes: Map<string, string>, err: unknown) => {
    log.throttled('cache-generations', 60_000, 'error', 'cache generations not announced yet (Redis unreachable); retrying every second', {
      error: err instanceof Error ? err.message : String(err),
    });
    for (const [k, name] of changes) pending.set(k, name);
    timer ??= setInterval(() => {
      if (redis.status !== 'ready' || !pending.size) return;
      const batch = new Map(pending);
      send(batch).then(
        () => {
          for (const k of batch.keys()) pending.delete(k);
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
    const changes = new Map(touched.map(({ tenantId, aspect }) => [generationKey(redisPrefix, aspect, tenantId), `${aspect}:${tenantId}`]));
    // without a connection, fail at once (no offline queue): the write is committed already
    if (redis.status !== 'ready') {
      retryLater(changes, new Error(`redis ${redis.status}`));
      return false;
    }
    try {
      await send(changes);
      return true;
    } catch (err) {
      retryLater(changes, err);
      return false;
    }
  };
}
