import type Redis from 'ioredis';
import type { CacheAspect } from '../db/client';
import { LUA_NOW_US } from './cache-generations';
import type { Logger } from './log';
import type { RedisScripts } from './redis-scripts';
import { TurnQueue } from './turn-end';

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
  /**
   * checks again now (health checks): a limiter that failed is otherwise cleared only by the
   * next keyed request, which never comes once a load balancer has stopped sending traffic
   */
  recheck?(): Promise<string | null>;
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

// One call decides a whole batch of requests, in their order, atomically (as if each had been
// decided alone, one after the other). KEYS = the batch's distinct keys; ARGV = 8 values per request:
// indexes into KEYS of its gcra bucket, daily counter, access and scores cache generations (0 =
// none), then limit per minute, now (ms), daily quota (or -1), expected access generation (or -1).
// Answers 5 integers per request: outcome (1 allowed, 0 minute, 2 daily, 3 stale), tat in µs,
// daily count, access generation, scores generation (-1 = not asked).
// Each key is read once (one MGET) and written once (SET / INCRBY), however many of the batch's
// requests share it: a script call and each redis.call cost Redis more than the arithmetic.
const LUA = `
if redis.replicate_commands then redis.replicate_commands() end
${LUA_NOW_US}
local cur = redis.call('MGET', unpack(KEYS))
local tatTtl, dayAdd, genSet = {}, {}, {}
local out = {}
for o = 0, #ARGV - 1, 8 do
  local bi, di, ai, si = tonumber(ARGV[o + 1]), tonumber(ARGV[o + 2]), tonumber(ARGV[o + 3]), tonumber(ARGV[o + 4])
  local limit, now, quota, expected = tonumber(ARGV[o + 5]), tonumber(ARGV[o + 6]), tonumber(ARGV[o + 7]), tonumber(ARGV[o + 8])
  local gen, sgen = -1, -1
  if ai > 0 then
    -- a missing generation starts at Redis's clock in µs: never a value it had before it was lost
    gen, sgen = tonumber(cur[ai]), tonumber(cur[si])
    if not gen or not sgen then
      local us = now_us()
      if not gen then gen = us; cur[ai] = us; genSet[ai] = true end
      if not sgen then sgen = us; cur[si] = us; genSet[si] = true end
    end
  end
  local n = #out
  if expected >= 0 and gen ~= expected then
    out[n + 1], out[n + 2], out[n + 3], out[n + 4], out[n + 5] = 3, 0, 0, gen, sgen
  else
    local T = 60000 / limit
    local stored = tonumber(cur[bi])
    local tat = now
    if stored and stored > now then tat = stored end
    local newTat = tat + T
    local count = 0
    if quota >= 0 then count = tonumber(cur[di]) or 0 end
    local outcome = 1
    if quota >= 0 and count >= quota then outcome = 2
    elseif (newTat - now) > 60000.000001 then outcome = 0
    else
      cur[bi] = newTat
      tat = newTat
      local ttl = math.ceil(newTat - now) + 1000
      if (tatTtl[bi] or 0) < ttl then tatTtl[bi] = ttl end
      if quota >= 0 then
        count = count + 1
        cur[di] = count
        dayAdd[di] = (dayAdd[di] or 0) + 1
      end
    end
    out[n + 1], out[n + 2], out[n + 3], out[n + 4], out[n + 5] = outcome, math.floor(tat * 1000), count, gen, sgen
  end
end
for i, ttl in pairs(tatTtl) do redis.call('SET', KEYS[i], tostring(cur[i]), 'PX', ttl) end
for i, add in pairs(dayAdd) do
  if redis.call('INCRBY', KEYS[i], add) == add then redis.call('PEXPIRE', KEYS[i], 90000000) end
end
for i in pairs(genSet) do redis.call('SET', KEYS[i], string.format('%d', cur[i])) end
return out
`;

/** at most this many requests per script call (its KEYS and ARGV stay small) */
const MAX_BATCH = 256;

interface PendingDecision {
  req: RateRequest;
  resolve: (d: RateDecision) => void;
}

export class RedisRateLimiter implements RateLimiter {
  private failing: string | null = null;

  // Requests are held until the event loop has dispatched everything it read in this turn, then
  // decided by one script call: one write, one read and one script run for the batch instead of
  // one each per request (docs/benchmarks.md).
  private readonly pending = new TurnQueue<PendingDecision>((pending) => {
    for (let i = 0; i < pending.length; i += MAX_BATCH) void this.decide(pending.length <= MAX_BATCH ? pending : pending.slice(i, i + MAX_BATCH));
  });

  constructor(
    /** for peeks */
    private readonly redis: Redis,
    /** for the decisions (one script call per turn) */
    private readonly scripts: Pick<RedisScripts, 'run' | 'ping'>,
    private readonly fallback: MemoryRateLimiter,
    private readonly log: Logger,
    private readonly prefix = 'rl:',
    private readonly generationKey: (aspect: CacheAspect, tenantId: string) => string,
  ) {}

  consume(req: RateRequest): Promise<RateDecision> {
    return new Promise((resolve) => this.pending.push({ req, resolve }));
  }

  // Redis key names, built once per bucket, day and tenant rather than per request: the strings
  // they are looked up by live on cached records (hashed once), a new one would be hashed each time
  private readonly names = new BoundedMemo<string>();
  private readonly dayNames = new BoundedMemo<{ day: number; name: string }>();
  private readonly generationNames = new BoundedMemo<[string, string]>();

  private async decide(batch: PendingDecision[]) {
    const keys: string[] = [];
    const keyIndex = new Map<string, number>();
    const index = (key: string) => {
      let i = keyIndex.get(key);
      if (i === undefined) keyIndex.set(key, (i = keys.push(key)));
      return i;
    };
    const argv: number[] = [];
    for (const { req } of batch) {
      const tenant = req.generationOf;
      const generations = tenant !== undefined ? (this.generationNames.get(tenant) ?? this.generationNames.set(tenant, [this.generationKey('access', tenant), this.generationKey('scores', tenant)])) : undefined;
      argv.push(
        index(this.names.get(req.bucket) ?? this.names.set(req.bucket, `${this.prefix}${req.bucket}`)),
        req.daily ? index(this.dayName(req.daily.tenantId, dayStart(req.nowMs))) : 0,
        generations ? index(generations[0]) : 0,
        generations ? index(generations[1]) : 0,
        req.limitPerMinute,
        req.nowMs,
        req.daily ? req.daily.quota : -1,
        req.expectGeneration ?? -1,
      );
    }
    let res: number[];
    try {
      res = (await this.scripts.run(LUA, keys, argv)) as number[];
      this.failing = null;
    } catch (err) {
      this.failing = unavailable(err);
      this.log.throttled('ratelimit-redis', 60_000, 'error', 'rate limiter: redis unreachable, using in-process limits', {
        error: (err as Error).message,
      });
      for (const { req, resolve } of batch) resolve(this.fallback.consumeSync(req));
      return;
    }
    for (let i = 0; i < batch.length; i++) batch[i]!.resolve(decision(batch[i]!.req, res, i * 5));
  }

  private dayName(tenantDaily: string, day: number) {
    const known = this.dayNames.get(tenantDaily);
    return known?.day === day ? known.name : this.dayNames.set(tenantDaily, { day, name: `${this.prefix}day:${tenantDaily}:${day}` }).name;
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

  async recheck() {
    if (this.failing === null) return null;
    try {
      await this.scripts.ping();
      this.failing = null;
    } catch (err) {
      this.failing = unavailable(err);
    }
    return this.failing;
  }
}

/** a memo that forgets everything once it holds 10 000 entries (names of keys no longer in use) */
class BoundedMemo<V> {
  private readonly map = new Map<string, V>();
  get(key: string): V | undefined {
    return this.map.get(key);
  }
  /** stores and returns the value (no closure per lookup on the hot path) */
  set(key: string, value: V): V {
    if (this.map.size >= 10_000) this.map.clear();
    this.map.set(key, value);
    return value;
  }
}

const unavailable = (err: unknown) => `redis rate limiter unavailable: ${(err as Error).message}`;

/** A request's decision from its five integers in the batch script's answer. */
function decision(req: RateRequest, res: number[], at: number): RateDecision {
  const { limitPerMinute, daily, nowMs } = req;
  const outcome = res[at]!;
  const gen = res[at + 3]!;
  const sgen = res[at + 4]!;
  if (outcome === 3) return { allowed: false, stale: true, generation: gen, scoreGeneration: sgen, limit: limitPerMinute, remaining: 0, resetAtMs: nowMs, retryAfterMs: 0 };
  const tat = res[at + 1]! / 1000;
  const count = res[at + 2]!;
  const T = WINDOW_MS / limitPerMinute;
  const remaining = Math.max(0, Math.floor((WINDOW_MS - (tat - nowMs)) / T + 1e-9));
  const dayReset = dayStart(nowMs) + DAY_MS;
  const dailyState = daily ? { quota: daily.quota, remaining: Math.max(0, daily.quota - count), resetAtMs: dayReset } : undefined;
  const base = { limit: limitPerMinute, remaining, resetAtMs: Math.max(tat, nowMs), daily: dailyState, generation: gen >= 0 ? gen : undefined, scoreGeneration: sgen >= 0 ? sgen : undefined };
  if (outcome === 1) return { ...base, allowed: true, retryAfterMs: 0 };
  if (outcome === 2) return { ...base, allowed: false, deniedBy: 'daily', retryAfterMs: dayReset - nowMs };
  return { ...base, allowed: false, deniedBy: 'minute', retryAfterMs: Math.ceil(tat + T - WINDOW_MS - nowMs) };
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
