import type Redis from 'ioredis';
import type { CacheAspect } from '../db/client';
import { LUA_NOW_US } from './cache-generations';
import type { Logger } from './log';

/**
 * Rate limiting: GCRA (generic cell rate algorithm) per key per minute, plus a per-tenant daily
 * quota counted per UTC day. GCRA spaces requests at T = 60 s / limit and allows a burst of up to
 * `limit`; it never lets more than `limit` through in any 60-second span, so there is no 2x burst
 * at a window edge. Both checks are decided together: a request denied by one consumes neither.
 * Two implementations, one interface: in-process (embedded) and Redis (one Lua script, atomic,
 * shared by every process). If Redis fails, requests are decided by the in-process limiter
 * (fail open to per-process limits), the failure is logged once a minute and /readyz reports it.
 */
export interface RateRequest {
  /** bucket of the per-minute limit, e.g. "key:<id>" or "ip:<addr>" */
  bucket: string;
  limitPerMinute: number;
  /** per-tenant daily quota; absent for anonymous buckets */
  daily?: { tenantId: string; quota: number };
  /** a tenant whose cache generations the decision should carry (shared limiter only) */
  generationOf?: string;
  /**
   * the access generation the caller's cached key was loaded under: if the tenant's is another one,
   * nothing is consumed and the decision is `stale` (re-read the key, then ask again)
   */
  expectGeneration?: number;
  nowMs: number;
}

export interface RateDecision {
  allowed: boolean;
  /** which limit denied it */
  deniedBy?: 'minute' | 'daily';
  limit: number;
  remaining: number;
  /** epoch ms when the per-minute allowance is fully restored */
  resetAtMs: number;
  /** ms until the request would be allowed (0 when allowed) */
  retryAfterMs: number;
  daily?: { quota: number; remaining: number; resetAtMs: number };
  /** the tenant's cache generations, read in the same atomic step (see cache-generations.ts) */
  generation?: number;
  scoreGeneration?: number;
  /** expectGeneration did not match `generation`: nothing was consumed */
  stale?: true;
}

export interface RateLimiter {
  consume(req: RateRequest): Promise<RateDecision>;
  /** the same decision without a promise, where it needs no I/O (the in-process limiter) */
  consumeSync?(req: RateRequest): RateDecision;
  /** the per-minute budget of a bucket as it stands, consuming nothing (for responses that are not limited) */
  peek(req: Pick<RateRequest, 'bucket' | 'limitPerMinute' | 'nowMs'>): Promise<RateDecision>;
  /** null when healthy, else a short description */
  problem(): string | null;
}

const WINDOW_MS = 60_000;
const DAY_MS = 86_400_000;
const dayStart = (now: number) => now - (now % DAY_MS);

/** Pure GCRA step shared by the in-process limiter (the Lua script mirrors it); `consume: false` only reports. */
function gcra(storedTat: number | undefined, limit: number, now: number, consume = true) {
  const T = WINDOW_MS / limit;
  const tat = Math.max(storedTat ?? now, now);
  const newTat = tat + T;
  const allowed = newTat - now <= WINDOW_MS + 1e-6;
  const effTat = allowed && consume ? newTat : tat;
  const remaining = Math.max(0, Math.floor((WINDOW_MS - (effTat - now)) / T + 1e-9));
  return { allowed, tat: effTat, remaining, retryAfterMs: allowed ? 0 : Math.ceil(newTat - WINDOW_MS - now) };
}

/** A peek's decision: the budget as it stands; never a denial (nothing was asked for). */
function standing(storedTat: number | undefined, limit: number, now: number): RateDecision {
  const g = gcra(storedTat, limit, now, false);
  return { allowed: true, limit, remaining: g.remaining, resetAtMs: Math.max(g.tat, now), retryAfterMs: 0 };
}

export class MemoryRateLimiter implements RateLimiter {
  private tats = new Map<string, number>();
  private days = new Map<string, { day: number; count: number }>();
  private lastSweep = 0;

  async consume(req: RateRequest): Promise<RateDecision> {
    return this.consumeSync(req);
  }

  async peek({ bucket, limitPerMinute, nowMs }: Pick<RateRequest, 'bucket' | 'limitPerMinute' | 'nowMs'>): Promise<RateDecision> {
    return standing(this.tats.get(bucket), limitPerMinute, nowMs);
  }

  consumeSync({ bucket, limitPerMinute, daily, nowMs }: RateRequest): RateDecision {
    this.sweep(nowMs);
    const g = gcra(this.tats.get(bucket), limitPerMinute, nowMs);
    const base = { limit: limitPerMinute, remaining: g.remaining, resetAtMs: Math.max(g.tat, nowMs) };
    let dailyState: RateDecision['daily'];
    if (daily) {
      const day = dayStart(nowMs);
      const cur = this.days.get(daily.tenantId);
      const count = cur && cur.day === day ? cur.count : 0;
      const resetAtMs = day + DAY_MS;
      if (count >= daily.quota) {
        // nothing is consumed: the minute budget is reported as it stands, not as if charged
        const minute = standing(this.tats.get(bucket), limitPerMinute, nowMs);
        return { ...minute, allowed: false, deniedBy: 'daily', retryAfterMs: resetAtMs - nowMs, daily: { quota: daily.quota, remaining: 0, resetAtMs } };
      }
      dailyState = { quota: daily.quota, remaining: daily.quota - count - (g.allowed ? 1 : 0), resetAtMs };
      if (g.allowed) {
        if (cur && cur.day === day) cur.count = count + 1;
        else this.days.set(daily.tenantId, { day, count: count + 1 });
      }
    }
    if (!g.allowed) return { ...base, allowed: false, deniedBy: 'minute', retryAfterMs: g.retryAfterMs, daily: dailyState };
    this.tats.set(bucket, g.tat);
    return { ...base, allowed: true, retryAfterMs: 0, daily: dailyState };
  }

  problem() {
    return null;
  }

  /** drop buckets that are fully replenished, so memory stays bounded */
  private sweep(now: number) {
    if (now - this.lastSweep < WINDOW_MS) return;
    this.lastSweep = now;
    for (const [k, tat] of this.tats) if (tat <= now) this.tats.delete(k);
    const today = dayStart(now);
    for (const [k, v] of this.days) if (v.day !== today) this.days.delete(k);
  }
}

// KEYS[1] = gcra bucket, KEYS[2] = daily counter, KEYS[3], KEYS[4] = access and scores cache
// generations; ARGV: limit, now, quota (or -1), 1 to read the generations (else -1 is returned for
// them), expected access generation (or -1)
const LUA = `
if redis.replicate_commands then redis.replicate_commands() end
${LUA_NOW_US}
local T = 60000 / tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local quota = tonumber(ARGV[3])
local withGen = ARGV[4] == '1'
-- one read for everything (each redis.call from Lua costs about as much as a whole GET)
local v
if withGen then v = redis.call('MGET', KEYS[1], KEYS[2], KEYS[3], KEYS[4]) else v = redis.call('MGET', KEYS[1], KEYS[2]) end
local gen, sgen = -1, -1
if withGen then
  -- a missing generation starts at Redis's clock in µs: never a value it had before it was lost
  gen, sgen = tonumber(v[3]), tonumber(v[4])
  if not gen or not sgen then
    local us = now_us()
    if not gen then gen = us; redis.call('SET', KEYS[3], string.format('%d', us)) end
    if not sgen then sgen = us; redis.call('SET', KEYS[4], string.format('%d', us)) end
  end
end
local expected = tonumber(ARGV[5])
if expected >= 0 and gen ~= expected then return {0, 'stale', '0', 0, gen, sgen} end
local stored = tonumber(v[1])
local tat = now
if stored and stored > now then tat = stored end
local newTat = tat + T
local allowed = (newTat - now) <= 60000.000001
local count = 0
if quota >= 0 then
  count = tonumber(v[2]) or 0
  if count >= quota then
    return {0, 'daily', tostring(tat), count, gen, sgen}
  end
end
if not allowed then
  return {0, 'minute', tostring(tat), count, gen, sgen}
end
redis.call('SET', KEYS[1], tostring(newTat), 'PX', math.ceil(newTat - now) + 1000)
if quota >= 0 then
  count = redis.call('INCR', KEYS[2])
  if count == 1 then redis.call('PEXPIRE', KEYS[2], 90000000) end
end
return {1, '', tostring(newTat), count, gen, sgen}
`;

export class RedisRateLimiter implements RateLimiter {
  private failing: string | null = null;

  private readonly redis: Redis & { rateLimit(...args: (string | number)[]): Promise<unknown> };

  constructor(
    redis: Redis,
    private readonly fallback: MemoryRateLimiter,
    private readonly log: Logger,
    private readonly prefix = 'rl:',
    private readonly generationKey: (aspect: CacheAspect, tenantId: string) => string,
  ) {
    // EVALSHA (ioredis loads the script on NOSCRIPT) instead of sending the script every call
    redis.defineCommand('rateLimit', { numberOfKeys: 4, lua: LUA });
    this.redis = redis as typeof this.redis;
  }

  async consume(req: RateRequest): Promise<RateDecision> {
    const { bucket, limitPerMinute, daily, nowMs, generationOf } = req;
    const dayKey = daily ? `${this.prefix}day:${daily.tenantId}:${dayStart(nowMs)}` : `${this.prefix}noday`;
    const accessKey = generationOf !== undefined ? this.generationKey('access', generationOf) : `${this.prefix}nogen`;
    const scoresKey = generationOf !== undefined ? this.generationKey('scores', generationOf) : `${this.prefix}nogen`;
    let res: [number, string, string, number, number, number];
    try {
      res = (await this.redis.rateLimit(`${this.prefix}${bucket}`, dayKey, accessKey, scoresKey, limitPerMinute, nowMs, daily ? daily.quota : -1, generationOf !== undefined ? 1 : 0, req.expectGeneration ?? -1)) as never;
      this.failing = null;
    } catch (err) {
      this.failing = `redis rate limiter unavailable: ${(err as Error).message}`;
      this.log.throttled('ratelimit-redis', 60_000, 'error', 'rate limiter: redis unreachable, using in-process limits', {
        error: (err as Error).message,
      });
      return this.fallback.consumeSync(req);
    }
    const [ok, deniedBy, tatStr, count, gen, sgen] = res;
    if (deniedBy === 'stale') return { allowed: false, stale: true, generation: gen, scoreGeneration: sgen, limit: limitPerMinute, remaining: 0, resetAtMs: nowMs, retryAfterMs: 0 };
    const tat = Number(tatStr);
    const T = WINDOW_MS / limitPerMinute;
    const remaining = Math.max(0, Math.floor((WINDOW_MS - (tat - nowMs)) / T + 1e-9));
    const dayReset = dayStart(nowMs) + DAY_MS;
    const dailyState = daily ? { quota: daily.quota, remaining: Math.max(0, daily.quota - Number(count)), resetAtMs: dayReset } : undefined;
    const base = { limit: limitPerMinute, remaining, resetAtMs: Math.max(tat, nowMs), daily: dailyState, generation: gen >= 0 ? gen : undefined, scoreGeneration: sgen >= 0 ? sgen : undefined };
    if (ok === 1) return { ...base, allowed: true, retryAfterMs: 0 };
    if (deniedBy === 'daily') return { ...base, allowed: false, deniedBy: 'daily', retryAfterMs: dayReset - nowMs };
    return { ...base, allowed: false, deniedBy: 'minute', retryAfterMs: Math.ceil(tat + T - WINDOW_MS - nowMs) };
  }

  async peek(req: Pick<RateRequest, 'bucket' | 'limitPerMinute' | 'nowMs'>): Promise<RateDecision> {
    // service pages (health checks) must not wait on a stalled Redis: 100 ms, then the local view
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const stored = await Promise.race([
        this.redis.get(`${this.prefix}${req.bucket}`),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('peek timeout')), 100))),
      ]);
      return standing(stored === null ? undefined : Number(stored), req.limitPerMinute, req.nowMs);
    } catch {
      return this.fallback.peek(req);
    } finally {
      clearTimeout(timer);
    }
  }

  problem() {
    return this.failing;
  }
}

// the policy header only changes with a key's limits: built once per pair, not per request
const policies = new Map<string, string>();
function policyHeader(limit: number, quota: number | undefined) {
  const id = `${limit}/${quota}`;
  let value = policies.get(id);
  if (value === undefined) {
    value = `"minute";q=${limit};w=60` + (quota !== undefined ? `, "daily";q=${quota};w=86400` : '');
    if (policies.size > 10_000) policies.clear();
    policies.set(id, value);
  }
  return value;
}

/** The response headers for a decision: GitHub-style X-RateLimit-* (Reset = epoch seconds) and the IETF draft fields. */
export function rateLimitHeaders(d: RateDecision, nowMs: number): Record<string, string> {
  // when the daily quota is what denies, the X-RateLimit-* trio describes it, so that a client
  // following them waits until the quota resets instead of retrying every minute
  const dailyDenied = d.deniedBy === 'daily' && d.daily;
  const h: Record<string, string> = {
    'x-ratelimit-limit': String(dailyDenied ? d.daily!.quota : d.limit),
    'x-ratelimit-remaining': String(dailyDenied ? 0 : d.remaining),
    'x-ratelimit-reset': String(Math.ceil((dailyDenied ? d.daily!.resetAtMs : d.resetAtMs) / 1000)),
  };
  const minute = `"minute";r=${d.remaining};t=${Math.max(0, Math.ceil((d.resetAtMs - nowMs) / 1000))}`;
  h['ratelimit-policy'] = policyHeader(d.limit, d.daily?.quota);
  h['ratelimit'] = d.daily ? `${minute}, "daily";r=${d.daily.remaining};t=${Math.max(0, Math.ceil((d.daily.resetAtMs - nowMs) / 1000))}` : minute;
  if (!d.allowed) h['retry-after'] = String(Math.max(1, Math.ceil(d.retryAfterMs / 1000)));
  return h;
}
