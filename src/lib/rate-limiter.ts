import type Redis from 'ioredis';
import type { CacheAspect } from '../db/client';
import { LUA_NOW_US } from './cache-generations';
import type { Logger } from './log';
import type { GenerationFeed } from './generation-feed';
import type { RedisScripts } from './redis-scripts';
import { TurnQueue } from './turn-end';

/**
 * Rate limiting: GCRA (generic cell rate algorithm) per key per minute, plus a per-tenant daily
 * quota counted per UTC day. GCRA spaces requests at T = 60 s / limit and allows a burst of up to
 * `limit`: the sustained rate never exceeds the limit, and a span of Δ admits at most
 * limit + Δ / T (no fixed window, so no double burst at a window's edge). Both checks are decided
 * together: a request denied by one consumes neither. Two implementations, one interface:
 * in-process (embedded) and Redis (one Lua script, atomic, shared by every process; with leases of
 * prepaid requests for keys far from their limits, see RedisRateLimiter). If Redis fails, requests
 * are decided by the in-process limiter (fail open to per-process limits), the failure is logged
 * once a minute and /readyz reports it.
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
  /**
   * what the request weighs (default 1): charged to both budgets at once, all or nothing (a
   * POST /v1/score/batch of N items weighs N). A request that weighs more than a budget can ever
   * hold is always denied.
   */
  units?: number;
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
  /**
   * the same decision without a promise where it needs no I/O: always for the in-process limiter,
   * from a lease for the Redis one (undefined: call consume)
   */
  consumeSync?(req: RateRequest): RateDecision | undefined;
  /** the per-minute budget of a bucket as it stands, consuming nothing (for responses that are not limited) */
  peek(req: Pick<RateRequest, 'bucket' | 'limitPerMinute' | 'nowMs'>): Promise<RateDecision>;
  /** null when healthy, else a short description */
  problem(): string | null;
  /**
   * checks again now (health checks): a limiter that failed is otherwise cleared only by the
   * next keyed request, which never comes once a load balancer has stopped sending traffic
   */
  recheck?(): Promise<string | null>;
  /** gives back what it holds (shutdown) */
  close?(): Promise<void>;
  /** decisions made so far: in this process (embedded, or from a lease), by Redis, or in process because Redis failed */
  readonly decisions: DecisionCounts;
}

export interface DecisionCounts {
  process: number;
  redis: number;
  fallback: number;
}

const WINDOW_MS = 60_000;
const DAY_MS = 86_400_000;
const dayStart = (now: number) => now - (now % DAY_MS);

/** Pure GCRA step shared by the in-process limiter (the Lua script mirrors it); `consume: false` only reports. */
function gcra(storedTat: number | undefined, limit: number, now: number, consume = true, units = 1) {
  const T = WINDOW_MS / limit;
  const tat = Math.max(storedTat ?? now, now);
  const newTat = tat + units * T;
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
  readonly decisions: DecisionCounts = { process: 0, redis: 0, fallback: 0 };
  private tats = new Map<string, number>();
  private days = new Map<string, { day: number; count: number }>();
  private lastSweep = 0;
  /**
   * As the fallback of a shared limiter: what it admitted while the shared state was unreachable,
   * to be merged into that state before it decides again (RedisRateLimiter.merge): bucket → state,
   * and tenant → the day and the requests counted on it.
   */
  private dirtyTats = new Map<string, number>();
  private dirtyDays = new Map<string, { day: number; count: number }>();

  /**
   * The shared state of a bucket (and a tenant's day) as the shared limiter last saw it: a decision
   * here, during an outage, starts from it instead of a full budget. Never loosens what is here.
   */
  observe(bucket: string, tat: number | undefined, daily?: { tenantId: string; day: number; count: number }) {
    if (tat !== undefined && !(tat <= (this.tats.get(bucket) ?? -Infinity))) this.tats.set(bucket, tat);
    if (daily) {
      const cur = this.days.get(daily.tenantId);
      if (!cur || cur.day !== daily.day || cur.count < daily.count) this.days.set(daily.tenantId, { day: daily.day, count: daily.count });
    }
  }

  /** consumeSync, remembering what it admitted for the merge (the fallback's path) */
  consumeFallback(req: RateRequest): RateDecision {
    const d = this.consumeSync(req);
    if (d.allowed) {
      this.dirtyTats.set(req.bucket, this.tats.get(req.bucket)!);
      if (req.daily) {
        const day = dayStart(req.nowMs);
        const units = req.units ?? 1;
        const cur = this.dirtyDays.get(req.daily.tenantId);
        if (cur && cur.day === day) cur.count += units;
        else this.dirtyDays.set(req.daily.tenantId, { day, count: units });
      }
    }
    return d;
  }

  /** what was admitted since the last call (emptied); `restore` puts back what could not be merged */
  takeAdmitted() {
    const taken = { tats: this.dirtyTats, days: this.dirtyDays };
    this.dirtyTats = new Map();
    this.dirtyDays = new Map();
    return taken;
  }

  restoreAdmitted(taken: ReturnType<MemoryRateLimiter['takeAdmitted']>) {
    for (const [b, tat] of taken.tats) if (!((this.dirtyTats.get(b) ?? -Infinity) >= tat)) this.dirtyTats.set(b, tat);
    for (const [t, d] of taken.days) {
      const cur = this.dirtyDays.get(t);
      if (cur && cur.day === d.day) cur.count += d.count;
      else if (!cur || cur.day < d.day) this.dirtyDays.set(t, { ...d });
    }
  }

  get hasAdmitted() {
    return this.dirtyTats.size > 0 || this.dirtyDays.size > 0;
  }

  async consume(req: RateRequest): Promise<RateDecision> {
    return this.consumeSync(req);
  }

  async peek({ bucket, limitPerMinute, nowMs }: Pick<RateRequest, 'bucket' | 'limitPerMinute' | 'nowMs'>): Promise<RateDecision> {
    return standing(this.tats.get(bucket), limitPerMinute, nowMs);
  }

  consumeSync({ bucket, limitPerMinute, daily, nowMs, units = 1 }: RateRequest): RateDecision {
    this.decisions.process++;
    this.sweep(nowMs);
    const g = gcra(this.tats.get(bucket), limitPerMinute, nowMs, true, units);
    let dailyState: RateDecision['daily'];
    if (daily) {
      const day = dayStart(nowMs);
      const cur = this.days.get(daily.tenantId);
      const count = cur && cur.day === day ? cur.count : 0;
      const resetAtMs = day + DAY_MS;
      if (count + units > daily.quota) {
        // nothing is consumed: the minute budget is reported as it stands, not as if charged
        const minute = standing(this.tats.get(bucket), limitPerMinute, nowMs);
        return { ...minute, allowed: false, deniedBy: 'daily', retryAfterMs: resetAtMs - nowMs, daily: { quota: daily.quota, remaining: Math.max(0, daily.quota - count), resetAtMs } };
      }
      dailyState = { quota: daily.quota, remaining: daily.quota - count - (g.allowed ? units : 0), resetAtMs };
      if (g.allowed) {
        if (cur && cur.day === day) cur.count = count + units;
        else this.days.set(daily.tenantId, { day, count: count + units });
      }
    }
    if (g.allowed) this.tats.set(bucket, g.tat);
    const resetAtMs = Math.max(g.tat, nowMs);
    return { allowed: g.allowed, deniedBy: g.allowed ? undefined : 'minute', limit: limitPerMinute, remaining: g.remaining, resetAtMs, retryAfterMs: g.retryAfterMs, daily: dailyState };
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
// decided alone, one after the other). Redis spends its time per argument and per value it returns,
// so the batch is sent in parts:
// - terms: requests that share a bucket, limits and generation check share one term of 8 values:
//   indexes into KEYS of its gcra bucket, daily counter, access and scores cache generations
//   (0 = none), then limit per minute, daily quota (or -1), expected access generation (or -1), and
//   how many requests to prepay for this process (a lease, 0 = none; see RedisRateLimiter);
// - settlements of leases, applied first (6 values: indexes of bucket and daily counter, requests
//   not used, now, the bucket's state the grant left, the state the process replayed from its own
//   requests or -1; see the script for what each does);
// - runs: consecutive requests of one term at one instant (ms) are one run of 3 values: term, now,
//   count. A turn's requests of one key are then one run, however many they are. A request that
//   weighs more than one unit (RateRequest.units) is a run of its own whose count is minus its units.
// ARGV = number of terms, lease span (ms), number of settlements, the terms, the settlements, the
// runs. The answer: every key's value as the batch's requests found it (after the settlements;
// generations created where missing), then one character per request: its outcome (1 allowed,
// 0 minute, 2 daily, 3 stale), then the requests prepaid per term ("k,k,…") and the bucket state
// each grant left ("%.17g,…"). The caller replays the batch
// from those values and outcomes to get each request's numbers (replayBatch, the same arithmetic in
// the same order), instead of Redis sending 5 integers per request. Each key is read once (MGET)
// and written once (SET).
// The merge after an outage: KEYS = the buckets, then the day counters; ARGV = number of buckets,
// now (ms), each bucket's state decided in process, each day's requests counted in process. A
// bucket keeps the later state; a day counter adds the count (a new one expires as the script's do).
const MERGE_LUA = `
local nb, now = tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 1, nb do
  local tat = tonumber(ARGV[2 + i])
  local cur = tonumber(redis.call('GET', KEYS[i]))
  if cur == nil or tat > cur then
    local ttl = math.ceil(tat - now) + 1000
    if ttl < 1000 then ttl = 1000 end
    redis.call('SET', KEYS[i], string.format('%.17g', tat), 'PX', ttl)
  end
end
for i = nb + 1, #KEYS do
  local added = tonumber(ARGV[2 + i])
  if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('INCRBY', KEYS[i], added)
  else redis.call('SET', KEYS[i], string.format('%d', added), 'PX', 90000000) end
end
return 1
`;

const LUA = `
if redis.replicate_commands then redis.replicate_commands() end
${LUA_NOW_US}
local cur = redis.call('MGET', unpack(KEYS))
local nt, span, nr = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local existed, tatTtl, dayDirty = {}, {}, {}
for i = 1, #KEYS do existed[i] = cur[i] ~= false end
local function keepTat(i, now)
  local ttl = math.ceil(cur[i] - now) + 1000
  if ttl < 1000 then ttl = 1000 end
  if (tatTtl[i] or 0) < ttl then tatTtl[i] = ttl end
end
-- settled leases: the day's count gets the unused requests back (it only adds up). The bucket
-- takes the state the process replayed from its own requests only if nothing moved it since the
-- grant (every later write leaves it above the grant's value: requests, grants, and other exact
-- settlements all land higher); otherwise it keeps counting the whole lease, which can only be
-- stricter (unused requests given back there could be ones a later request's "now" already wrote
-- off: an outside review found that over-admitted)
for r = 4 + nt * 8, 3 + nt * 8 + nr * 6, 6 do
  local bi, di, cells, now = tonumber(ARGV[r]), tonumber(ARGV[r + 1]), tonumber(ARGV[r + 2]), tonumber(ARGV[r + 3])
  local granted, replayed = tonumber(ARGV[r + 4]), tonumber(ARGV[r + 5])
  if replayed >= 0 and tonumber(cur[bi]) == granted then
    cur[bi] = replayed
    keepTat(bi, now)
  end
  if di > 0 and tonumber(cur[di]) then
    local c = tonumber(cur[di]) - cells
    if c < 0 then c = 0 end
    cur[di] = c
    dayDirty[di] = true
  end
end
local terms, genSet = {}, {}
for t = 1, nt do
  local o = 4 + (t - 1) * 8
  local term = {tonumber(ARGV[o]), tonumber(ARGV[o + 1]), tonumber(ARGV[o + 2]), tonumber(ARGV[o + 3]), tonumber(ARGV[o + 4]), tonumber(ARGV[o + 5]), tonumber(ARGV[o + 6]), tonumber(ARGV[o + 7])}
  local ai, si = term[3], term[4]
  if ai > 0 then
    -- a missing generation starts at Redis's clock in µs: never a value it had before it was lost
    if not tonumber(cur[ai]) or not tonumber(cur[si]) then
      local us = now_us()
      if not tonumber(cur[ai]) then cur[ai] = us; genSet[ai] = true end
      if not tonumber(cur[si]) then cur[si] = us; genSet[si] = true end
    end
    term[9] = term[7] >= 0 and tonumber(cur[ai]) ~= term[7]
  end
  terms[t] = term
end
-- %.17g: the exact double (tostring keeps 14 digits, ~0.1 ms, which drifted from the in-process limiter)
local out = {}
for i = 1, #KEYS do
  if type(cur[i]) == 'number' then out[i] = string.format('%.17g', cur[i]) else out[i] = cur[i] end
end
local outcomes = {}
for r = 4 + nt * 8 + nr * 6, #ARGV, 3 do
  local term, now, n = terms[tonumber(ARGV[r])], tonumber(ARGV[r + 1]), tonumber(ARGV[r + 2])
  -- a negative count: one request that weighs that many units (all or nothing)
  local w = 1
  if n < 0 then w = -n; n = 1 end
  term[10] = now
  if term[9] then
    outcomes[#outcomes + 1] = string.rep('3', n)
  else
    local bi, di, limit, quota = term[1], term[2], term[5], term[6]
    local T = 60000 / limit
    local stored = tonumber(cur[bi])
    local count = 0
    if quota >= 0 then count = tonumber(cur[di]) or 0 end
    local allowed, denial = 0, nil
    while allowed < n do
      local tat = now
      if stored and stored > now then tat = stored end
      -- a denial consumes nothing, so the run's remaining requests meet the same denial
      if quota >= 0 and count + w > quota then denial = '2'; break end
      if (tat + w * T - now) > 60000.000001 then denial = '0'; break end
      stored = tat + w * T
      allowed = allowed + 1
      if quota >= 0 then count = count + w end
    end
    if allowed > 0 then
      cur[bi] = stored
      keepTat(bi, now)
      if quota >= 0 then cur[di] = count; dayDirty[di] = true end
    end
    outcomes[#outcomes + 1] = string.rep('1', allowed)
    if denial then outcomes[#outcomes + 1] = string.rep(denial, n - allowed) end
  end
end
-- leases: only while at least half the minute's budget (and 100 requests) and more than 1000 of
-- the day's stay left after them, and never more than half of what the day has left. The prepaid
-- requests are counted as if made at now + span: the process uses them only within LEASE_MS of
-- sending the call (its own clock) and stamped within LEASE_MS of the grant's now, so each was
-- counted no earlier than it was made (with hosts' clocks in sync, as GCRA across processes needs)
local grants, grantTats = {}, {}
for t = 1, nt do
  local term, k = terms[t], 0
  if term[8] > 0 and not term[9] and term[10] then
    local bi, di, limit, quota, now = term[1], term[2], term[5], term[6], term[10]
    local T = 60000 / limit
    local base = now + span
    local s = tonumber(cur[bi])
    if s and s > base then base = s end
    -- at most 1 % of the limit, so that what several processes may hold unused stays small
    k = math.min(term[8], math.max(1, math.floor(limit / 100)), math.floor((60000 - (base - now)) / T + 1e-9) - math.max(math.ceil(limit / 2), 100))
    local c = 0
    if quota >= 0 then
      c = tonumber(cur[di]) or 0
      k = math.min(k, math.floor((quota - c - 1000) / 2))
    end
    if k > 0 then
      cur[bi] = base + k * T
      keepTat(bi, now)
      if quota >= 0 then cur[di] = c + k; dayDirty[di] = true end
      grantTats[t] = string.format('%.17g', cur[bi])
    else
      k = 0
    end
  end
  grants[t] = k
  grantTats[t] = grantTats[t] or '0'
end
for i, ttl in pairs(tatTtl) do redis.call('SET', KEYS[i], string.format('%.17g', cur[i]), 'PX', ttl) end
for i in pairs(dayDirty) do
  if existed[i] then redis.call('SET', KEYS[i], string.format('%d', cur[i]), 'KEEPTTL')
  else redis.call('SET', KEYS[i], string.format('%d', cur[i]), 'PX', 90000000) end
end
for i in pairs(genSet) do redis.call('SET', KEYS[i], string.format('%d', cur[i])) end
out[#KEYS + 1] = table.concat(outcomes)
out[#KEYS + 2] = table.concat(grants, ',')
out[#KEYS + 3] = table.concat(grantTats, ',')
return out
`;

/** what requests of one batch share (see LUA): indexes into the batch's keys (1-based, 0 = none) */
interface Term {
  bucket: number;
  day: number;
  access: number;
  scores: number;
  req: RateRequest;
  /** requests asked to be prepaid for this process (0: none) */
  lease: number;
  lastNowMs?: number;
}

/** at most this many requests per script call (its KEYS and ARGV stay small) */
const MAX_BATCH = 256;

/** how long prepaid requests may be used; then the lease is settled (the day's count gets what is left) */
export const LEASE_MS = 100;
/** how often leases past their time are settled without waiting for a request */
const SWEEP_MS = 50;
/**
 * a lease's requests are counted in Redis as if made this long after the grant: later than any of
 * them can be used (LEASE_MS), so none is counted before it is made (see the script)
 */
export const LEASE_SPAN_MS = 250;
const FIRST_LEASE = 16;
const MAX_LEASE = 1024;

/**
 * Requests of one key prepaid in Redis for this process (RedisRateLimiter): used one by one in
 * process, with the key's budget replayed locally from the state Redis had after the last request
 * it decided, so that a process alone on a key reports exactly what Redis would.
 */
interface Lease {
  bucketKey: string;
  /** the daily counter's Redis key, and whose it is */
  dayKey: string | null;
  dailyTenant: string | undefined;
  limit: number;
  quota: number;
  day: number;
  /** prepaid requests left */
  cells: number;
  granted: number;
  /** the bucket's GCRA state and the day's count as this process replays them */
  tat: number | undefined;
  count: number;
  /** the bucket's state in Redis right after the grant (to settle exactly if nothing else moved it) */
  grantedTat: number;
  /** performance.now() after which it is settled: LEASE_MS after the call that granted it was sent */
  expires: number;
  /** the grant's now (the request clock): requests stamped later than LEASE_MS after it go to Redis */
  grantNowMs: number;
}

interface Settlement {
  bucketKey: string;
  dayKey: string | null;
  /** prepaid requests not used */
  cells: number;
  nowMs: number;
  grantedTat: number;
  replayedTat: number;
}

interface PendingDecision {
  req: RateRequest;
  resolve: (d: RateDecision) => void;
}

export class RedisRateLimiter implements RateLimiter {
  readonly decisions: DecisionCounts = { process: 0, redis: 0, fallback: 0 };
  private failing: string | null = null;

  // Requests are held until the event loop has dispatched everything it read in this turn, then
  // decided by one script call: one write, one read and one script run for the batch instead of
  // one each per request (docs/benchmarks.md).
  private readonly pending = new TurnQueue<PendingDecision>((pending) => {
    for (let i = 0; i < pending.length; i += MAX_BATCH) void this.decide(pending.length <= MAX_BATCH ? pending : pending.slice(i, i + MAX_BATCH));
  });

  // Leases (docs/decisions.md): with a generation feed, a key with ample budget left gets some of
  // its requests prepaid for this process in the same script call, and the next ones are decided
  // in process, without a round trip, until they run out or LEASE_MS passes; then the lease is
  // settled with the next script call (or a sweep). Near a limit (less than half the minute's
  // budget or ~1000 of the day's left) every request is decided by Redis.
  private readonly leases = new Map<string, Lease>();
  private readonly leaseSizes = new BoundedMemo<number>();
  /** buckets with a lease asked for in a script call still out (one at a time per bucket) */
  private readonly leasing = new Set<string>();
  private settlements: Settlement[] = [];
  private readonly sweeper: ReturnType<typeof setInterval> | null = null;

  constructor(
    /** for peeks */
    private readonly redis: Redis,
    /** for the decisions (one script call per turn) */
    private readonly scripts: Pick<RedisScripts, 'run' | 'ping'>,
    private readonly fallback: MemoryRateLimiter,
    private readonly log: Logger,
    private readonly prefix = 'rl:',
    private readonly generationKey: (aspect: CacheAspect, tenantId: string) => string,
    /** tenants' generations as pushed to this process; without it every request asks Redis */
    private readonly feed: GenerationFeed | null = null,
  ) {
    if (feed) {
      this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
      this.sweeper.unref?.();
    }
  }

  consume(req: RateRequest): Promise<RateDecision> {
    return new Promise((resolve) => this.pending.push({ req, resolve }));
  }

  /**
   * The decision in process, from a lease, if there is one for the request's key and its tenant's
   * generations are known as current (GenerationFeed); undefined: ask Redis (consume).
   */
  consumeSync(req: RateRequest): RateDecision | undefined {
    // (a request of several units is decided by Redis, which settles the key's lease first)
    const lease = this.feed && req.generationOf !== undefined && (req.units ?? 1) === 1 ? this.leases.get(req.bucket) : undefined;
    if (!lease) return undefined;
    if (
      lease.cells === 0 ||
      performance.now() > lease.expires ||
      req.nowMs > lease.grantNowMs + LEASE_MS ||
      lease.limit !== req.limitPerMinute ||
      lease.quota !== (req.daily ? req.daily.quota : -1) ||
      lease.dailyTenant !== req.daily?.tenantId ||
      (req.daily !== undefined && dayStart(req.nowMs) !== lease.day)
    ) {
      this.retire(req.bucket, lease);
      return undefined;
    }
    const gens = this.feed!.current(req.generationOf!);
    if (!gens) return undefined;
    if (req.expectGeneration !== undefined && req.expectGeneration !== gens.access) {
      this.decisions.process++;
      return { allowed: false, stale: true, generation: gens.access, scoreGeneration: gens.scores, limit: req.limitPerMinute, remaining: 0, resetAtMs: req.nowMs, retryAfterMs: 0 };
    }
    const g = gcra(lease.tat, req.limitPerMinute, req.nowMs);
    if (!g.allowed) return undefined; // cannot happen with the margin leases keep; Redis decides then
    lease.tat = g.tat;
    lease.cells--;
    if (req.daily) lease.count++;
    if (lease.cells === 0) this.leaseSizes.set(req.bucket, Math.min(MAX_LEASE, lease.granted * 2)); // used up in time: larger next time
    this.decisions.process++;
    return decision(req, 1, g, lease.count, gens.access, gens.scores);
  }

  /** A lease no longer used: settled with the next script call (see the script). */
  private retire(bucket: string, lease: Lease) {
    this.leases.delete(bucket);
    if (lease.cells * 2 > lease.granted) this.leaseSizes.set(bucket, Math.max(FIRST_LEASE, lease.granted >> 1));
    this.settlements.push({
      bucketKey: lease.bucketKey,
      dayKey: lease.dayKey,
      cells: lease.cells,
      nowMs: Date.now(),
      grantedTat: lease.grantedTat,
      replayedTat: lease.tat ?? -1,
    });
  }

  /** leases past their time are settled, by a script call of their own if no request makes one */
  private sweep() {
    const now = performance.now();
    for (const [bucket, lease] of this.leases) if (now > lease.expires) this.retire(bucket, lease);
    if (this.settlements.length) void this.decide([]);
  }

  /** every lease settled (shutdown), including those granted by calls still out */
  async close() {
    if (this.sweeper) clearInterval(this.sweeper);
    await Promise.race([Promise.allSettled([...this.inflight]), Bun.sleep(2000)]);
    for (const [bucket, lease] of this.leases) this.retire(bucket, lease);
    while (this.settlements.length) await this.decide([]);
  }

  /** script calls waiting for their answer */
  private readonly inflight = new Set<Promise<unknown>>();

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
    const terms: Term[] = [];
    const termArgs: number[] = [];
    const runs: number[] = [];
    const termOf = new Array<number>(batch.length);
    const byBucket = new Map<string, number>();
    const coherent = this.feed?.coherent() ?? false;
    for (let i = 0; i < batch.length; i++) {
      const req = batch[i]!.req;
      // a lease of a key whose requests Redis decides now is settled first (in this very call), so
      // that it never replays a state that misses them
      if (this.leases.size) {
        const held = this.leases.get(req.bucket);
        if (held) this.retire(req.bucket, held);
      }
      let t = byBucket.get(req.bucket);
      if (t === undefined || !sameTerms(terms[t]!.req, req)) {
        const tenant = req.generationOf;
        const generations = tenant !== undefined ? (this.generationNames.get(tenant) ?? this.generationNames.set(tenant, [this.generationKey('access', tenant), this.generationKey('scores', tenant)])) : undefined;
        // a lease only for keyed requests (their tenant's generations come with it), one ask per bucket at a time
        const lease = coherent && tenant !== undefined && !this.leasing.has(req.bucket) ? (this.leaseSizes.get(req.bucket) ?? FIRST_LEASE) : 0;
        if (lease) this.leasing.add(req.bucket);
        const term: Term = {
          bucket: index(this.names.get(req.bucket) ?? this.names.set(req.bucket, `${this.prefix}${req.bucket}`)),
          day: req.daily ? index(this.dayName(req.daily.tenantId, dayStart(req.nowMs))) : 0,
          access: generations ? index(generations[0]) : 0,
          scores: generations ? index(generations[1]) : 0,
          req,
          lease,
        };
        byBucket.set(req.bucket, (t = terms.push(term) - 1));
        termArgs.push(term.bucket, term.day, term.access, term.scores, req.limitPerMinute, req.daily ? req.daily.quota : -1, req.expectGeneration ?? -1, lease);
      }
      termOf[i] = t;
      terms[t]!.lastNowMs = req.nowMs; // the script's term now: its last run's
      const n = runs.length;
      const units = req.units ?? 1;
      if (units !== 1) runs.push(t + 1, req.nowMs, -units);
      else if (n && runs[n - 3] === t + 1 && runs[n - 2] === req.nowMs && runs[n - 1]! > 0) runs[n - 1]!++;
      else runs.push(t + 1, req.nowMs, 1);
    }
    // (lost if the call fails: it may have run, and settling twice would give back twice; a lost
    // settlement only leaves the bucket stricter until its state drains)
    const settlements = this.settlements.length <= MAX_BATCH ? this.settlements : this.settlements.slice(0, MAX_BATCH);
    this.settlements = this.settlements.length <= MAX_BATCH ? [] : this.settlements.slice(MAX_BATCH);
    // (a double travels as String(n), the shortest text that reads back as the same double: the
    // script compares the granted state with what it stored)
    const settleArgs: number[] = [];
    for (const st of settlements) settleArgs.push(index(st.bucketKey), st.dayKey ? index(st.dayKey) : 0, st.cells, st.nowMs, st.grantedTat, st.replayedTat);
    const mark = this.feed?.mark() ?? null;
    const sentAt = performance.now();
    let res: (string | number | null)[];
    try {
      if (!keys.length) return;
      // back from an outage: what this process admitted meanwhile goes into the shared state first
      if (this.fallback.hasAdmitted) await this.merge(batch[0]?.req.nowMs ?? Date.now());
      const call = this.scripts.run(LUA, keys, [terms.length, LEASE_SPAN_MS, settlements.length, ...termArgs, ...settleArgs, ...runs]);
      this.inflight.add(call);
      try {
        res = (await call) as (string | number | null)[];
      } finally {
        this.inflight.delete(call);
      }
      // a reply of another shape is a failure like any other: the batch goes to the in-process limiter
      if (!Array.isArray(res) || res.length !== keys.length + 3 || (res[keys.length] as string)?.length !== batch.length) throw new Error('unexpected reply from the rate-limit script');
      this.failing = null;
    } catch (err) {
      this.failing = unavailable(err);
      this.log.throttled('ratelimit-redis', 60_000, 'error', 'rate limiter: redis unreachable, using in-process limits', {
        error: (err as Error).message,
      });
      this.decisions.fallback += batch.length;
      for (const { req, resolve } of batch) resolve(this.fallback.consumeFallback(req));
      return;
    } finally {
      for (const term of terms) if (term.lease) this.leasing.delete(term.req.bucket);
    }
    this.decisions.redis += batch.length;
    const values = replayBatch(batch, terms, termOf, res, keys.length);
    // the fallback keeps the shared state as last seen, so an outage starts from it, not from a full budget
    for (const term of terms) {
      const daily = term.req.daily && term.day ? { tenantId: term.req.daily.tenantId, day: dayStart(term.lastNowMs ?? term.req.nowMs), count: values[term.day - 1] ?? 0 } : undefined;
      this.fallback.observe(term.req.bucket, values[term.bucket - 1], daily);
    }
    if (this.feed) this.learn(terms, values, String(res[keys.length + 1]), String(res[keys.length + 2]), keys, mark, sentAt);
  }

  /**
   * After an outage: each bucket this process decided alone takes the later of the two states
   * (Redis may have come back empty, or other processes may have moved it), and each tenant's day
   * gets the requests counted here. Throws if Redis is still unreachable (the batch then falls back,
   * and what was admitted is kept for the next attempt).
   */
  private async merge(nowMs: number) {
    const taken = this.fallback.takeAdmitted();
    const keys: string[] = [];
    const args: (string | number)[] = [taken.tats.size, nowMs];
    for (const [bucket, tat] of taken.tats) {
      keys.push(`${this.prefix}${bucket}`);
      args.push(String(tat));
    }
    for (const [tenantId, d] of taken.days) {
      keys.push(this.dayName(tenantId, d.day));
      args.push(d.count);
    }
    try {
      if (keys.length) await this.scripts.run(MERGE_LUA, keys, args);
      this.log.info('rate limiter: merged the limits decided in process during a Redis outage', { buckets: taken.tats.size, days: taken.days.size });
    } catch (err) {
      this.fallback.restoreAdmitted(taken);
      throw err;
    }
  }

  /** what the script's answer tells this process: its tenants' generations and its new leases */
  private learn(terms: Term[], values: (number | undefined)[], grants: string, grantTats: string, keys: string[], mark: number | null, sentAt: number) {
    const granted = grants.split(',');
    const tats = grantTats.split(',');
    const expires = sentAt + LEASE_MS;
    for (let t = 0; t < terms.length; t++) {
      const { req, access, scores, bucket, day } = terms[t]!;
      if (access) this.feed!.learn(mark, req.generationOf!, values[access - 1]!, values[scores - 1]!);
      const cells = Number(granted[t]);
      if (!(cells > 0)) continue;
      const old = this.leases.get(req.bucket);
      if (old) this.retire(req.bucket, old);
      this.leases.set(req.bucket, {
        bucketKey: keys[bucket - 1]!,
        dayKey: day ? keys[day - 1]! : null,
        dailyTenant: req.daily?.tenantId,
        limit: req.limitPerMinute,
        quota: req.daily ? req.daily.quota : -1,
        day: dayStart(req.nowMs),
        cells,
        granted: cells,
        tat: values[bucket - 1],
        count: day ? (values[day - 1] ?? 0) : 0,
        grantedTat: Number(tats[t]),
        expires,
        grantNowMs: terms[t]!.lastNowMs ?? req.nowMs,
      });
    }
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

const sameTerms = (a: RateRequest, b: RateRequest) =>
  a.limitPerMinute === b.limitPerMinute &&
  a.generationOf === b.generationOf &&
  a.expectGeneration === b.expectGeneration &&
  a.daily?.tenantId === b.daily?.tenantId &&
  a.daily?.quota === b.daily?.quota &&
  (a.daily === undefined || dayStart(a.nowMs) === dayStart(b.nowMs));

/**
 * Each request's decision from the script's answer: the keys' values as the batch found them and
 * one outcome per request. The outcomes are Redis's; the numbers (budget left, reset, daily count)
 * follow from the values by the GCRA step the script mirrors (gcra), in the same order.
 */
function replayBatch(batch: PendingDecision[], terms: Term[], termOf: number[], res: (string | number | null)[], keyCount: number) {
  const values: (number | undefined)[] = new Array(keyCount);
  for (let i = 0; i < keyCount; i++) values[i] = res[i] === null ? undefined : Number(res[i]);
  const outcomes = res[keyCount] as string;
  for (let i = 0; i < batch.length; i++) {
    const { req, resolve } = batch[i]!;
    const term = terms[termOf[i]!]!;
    const outcome = outcomes.charCodeAt(i) - 48;
    const gen = term.access ? values[term.access - 1]! : -1;
    const sgen = term.scores ? values[term.scores - 1]! : -1;
    if (outcome === 3) {
      resolve({ allowed: false, stale: true, generation: gen, scoreGeneration: sgen, limit: req.limitPerMinute, remaining: 0, resetAtMs: req.nowMs, retryAfterMs: 0 });
      continue;
    }
    const units = req.units ?? 1;
    const g = gcra(values[term.bucket - 1], req.limitPerMinute, req.nowMs, outcome === 1, units);
    let count = term.day ? (values[term.day - 1] ?? 0) : 0;
    if (outcome === 1) {
      values[term.bucket - 1] = g.tat;
      if (term.day) values[term.day - 1] = count += units;
    }
    resolve(decision(req, outcome, g, count, gen, sgen));
  }
  return values;
}

/** A request's decision from its outcome (1 allowed, 0 minute, 2 daily), its GCRA step and the daily count it left. */
function decision(req: RateRequest, outcome: number, g: ReturnType<typeof gcra>, count: number, gen: number, sgen: number): RateDecision {
  const { limitPerMinute, daily, nowMs } = req;
  const dayReset = dayStart(nowMs) + DAY_MS;
  const dailyState = daily ? { quota: daily.quota, remaining: Math.max(0, daily.quota - count), resetAtMs: dayReset } : undefined;
  // one object literal of one shape per request (no spread of a shared base: this runs per request)
  return {
    allowed: outcome === 1,
    deniedBy: outcome === 1 ? undefined : outcome === 2 ? 'daily' : 'minute',
    limit: limitPerMinute,
    remaining: g.remaining,
    resetAtMs: Math.max(g.tat, nowMs),
    retryAfterMs: outcome === 1 ? 0 : outcome === 2 ? dayReset - nowMs : g.retryAfterMs,
    daily: dailyState,
    generation: gen >= 0 ? gen : undefined,
    scoreGeneration: sgen >= 0 ? sgen : undefined,
  };
}

// the policy header only changes with a key's limits: built once per pair, not per request, and
// looked up by the two numbers (no key string built per request)
const policies = new Map<number, Map<number | undefined, string>>();
function policyHeader(limit: number, quota: number | undefined) {
  let byQuota = policies.get(limit);
  if (!byQuota) {
    if (policies.size >= 10_000) policies.clear();
    policies.set(limit, (byQuota = new Map()));
  }
  let value = byQuota.get(quota);
  if (value === undefined) byQuota.set(quota, (value = `"minute";q=${limit};w=60` + (quota !== undefined ? `, "daily";q=${quota};w=86400` : '')));
  return value;
}

/** The response headers for a decision: GitHub-style X-RateLimit-* (Reset = epoch seconds) and the IETF draft fields. */
export function rateLimitHeaders(d: RateDecision, nowMs: number): Record<string, string> {
  // the X-RateLimit-* trio describes the budget that runs out first: the minute's, or the daily
  // quota once fewer requests are left in it (and when it is what denies), so that Remaining is
  // always what may still be sent before a 429 and Reset when that budget comes back
  const daily = d.daily && (d.deniedBy === 'daily' || d.daily.remaining < d.remaining) ? d.daily : undefined;
  const h: Record<string, string> = {
    'x-ratelimit-limit': String(daily ? daily.quota : d.limit),
    'x-ratelimit-remaining': String(daily ? daily.remaining : d.remaining),
    'x-ratelimit-reset': String(Math.ceil((daily ? daily.resetAtMs : d.resetAtMs) / 1000)),
  };
  const minute = `"minute";r=${d.remaining};t=${Math.max(0, Math.ceil((d.resetAtMs - nowMs) / 1000))}`;
  h['ratelimit-policy'] = policyHeader(d.limit, d.daily?.quota);
  h['ratelimit'] = d.daily ? `${minute}, "daily";r=${d.daily.remaining};t=${Math.max(0, Math.ceil((d.daily.resetAtMs - nowMs) / 1000))}` : minute;
  if (!d.allowed) h['retry-after'] = String(Math.max(1, Math.ceil(d.retryAfterMs / 1000)));
  return h;
}
