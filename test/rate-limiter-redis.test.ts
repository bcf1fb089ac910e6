import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import Redis from 'ioredis';
import { announceTenantChanges, generationKey } from '../src/lib/cache-generations';
import { createLogger } from '../src/lib/log';
import { MemoryRateLimiter, RedisRateLimiter, type RateDecision, type RateRequest } from '../src/lib/rate-limiter';
import { RedisScripts } from '../src/lib/redis-scripts';
import { REDIS_TEST_URL } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

/** The Redis script and the in-process limiter decide alike; the script also carries cache generations. */
describe('RedisRateLimiter', () => {
  let redis: Redis;
  const prefix = `rl${crypto.randomUUID().slice(0, 8)}`;
  let limiter: RedisRateLimiter;
  const log = createLogger('silent');
  let scripts: RedisScripts;
  beforeAll(async () => {
    redis = new Redis(REDIS_TEST_URL, { enableAutoPipelining: true });
    scripts = new RedisScripts(REDIS_TEST_URL, log);
    await scripts.connect();
    limiter = new RedisRateLimiter(redis, scripts, new MemoryRateLimiter(), log, `${prefix}:rl:`, (aspect, id) => generationKey(prefix, aspect, id));
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
    scripts.close();
  });

  const strip = ({ generation: _g, scoreGeneration: _s, ...d }: RateDecision) => d;
  /** a script call's runs (term, now, count): ARGV is the number of terms, the lease span, the number of settlements, 8 values per term, 6 per settlement, then the runs */
  const runsOf = (argv: (string | number)[]) => argv.slice(3 + 8 * Number(argv[0]) + 6 * Number(argv[2]));

  test('the same decisions as the in-process limiter: per-minute limit, window, daily quota, Retry-After', async () => {
    const memory = new MemoryRateLimiter();
    const start = Date.parse('2026-11-22T23:58:00.000Z'); // the daily quota resets at midnight within the run
    const steps: RateRequest[] = [];
    for (let i = 0; i < 40; i++) {
      steps.push({ bucket: 'key:k1', limitPerMinute: 5, daily: { tenantId: 't1:sandbox', quota: 12 }, nowMs: start + i * 4_000 });
      if (i % 3 === 0) steps.push({ bucket: 'ip:127.0.0.1', limitPerMinute: 2, nowMs: start + i * 4_000 + 1 });
    }
    const denied = new Set<string>();
    for (const req of steps) {
      const fromRedis = await limiter.consume(req);
      expect(strip(fromRedis)).toEqual(memory.consumeSync(req));
      if (!fromRedis.allowed) denied.add(fromRedis.deniedBy!);
    }
    expect([...denied].sort()).toEqual(['daily', 'minute']); // both branches were exercised
    // peeks (service pages) read the same standing budget and consume nothing
    const last = steps.at(-1)!.nowMs + 1500;
    for (const [bucket, limitPerMinute] of [['key:k1', 5], ['ip:127.0.0.1', 2], ['ip:never-seen', 2]] as const) {
      const req = { bucket, limitPerMinute, nowMs: last };
      const peeked = await limiter.peek(req);
      expect(strip(peeked)).toEqual(await memory.peek(req));
      expect(strip(await limiter.peek(req))).toEqual(strip(peeked));
    }
  });

  test('a spacing that is no round number of ms (60 000 / 7) stays exact from call to call (the stored value keeps every digit)', async () => {
    const memory = new MemoryRateLimiter();
    const start = Date.parse('2026-11-23T09:00:00.000Z');
    for (let i = 0; i < 60; i++) {
      const req: RateRequest = { bucket: 'key:seven', limitPerMinute: 7, nowMs: start + i * 3_217 };
      expect(strip(await limiter.consume(req))).toEqual(memory.consumeSync(req)); // one call each
    }
  });

  test('a stalled Redis does not hold up a peek (service pages, health checks): the local view after 100 ms', async () => {
    await redis.call('CLIENT', 'PAUSE', '600', 'ALL'); // Redis holds every client's commands for 600 ms
    const started = performance.now();
    const d = await limiter.peek({ bucket: 'ip:1.2.3.4', limitPerMinute: 60, nowMs: Date.now() });
    expect(performance.now() - started).toBeLessThan(450);
    expect(d).toMatchObject({ allowed: true, limit: 60, remaining: 60 });
    await Bun.sleep(650);
  });

  test('generations: read with the decision, started at Redis time when missing, moved on by announcements, never charged when stale', async () => {
    const req = (o: Partial<RateRequest> = {}): RateRequest => ({ bucket: 'key:g1', limitPerMinute: 100, daily: { tenantId: 'tg:sandbox', quota: 1000 }, generationOf: 'tg', nowMs: Date.now(), ...o });
    const first = await limiter.consume(req());
    expect(first.allowed).toBe(true);
    expect(first.generation).toBeGreaterThan(Date.now() * 1000 - 60_000_000); // µs on Redis's clock
    expect(first.scoreGeneration).toBe(first.generation);
    const again = await limiter.consume(req({ expectGeneration: first.generation }));
    expect(again).toMatchObject({ allowed: true, generation: first.generation, daily: { remaining: 998 } });

    const announce = announceTenantChanges(redis, prefix, log);
    expect(await announce([{ tenantId: 'tg', aspect: 'access' }])).toBe(true);
    const stale = await limiter.consume(req({ expectGeneration: first.generation }));
    expect(stale.stale).toBe(true);
    expect(stale.generation).toBeGreaterThan(first.generation!);
    expect(stale.scoreGeneration).toBe(first.scoreGeneration); // only the access counter moved
    const charged = await limiter.consume(req({ expectGeneration: stale.generation }));
    expect(charged).toMatchObject({ allowed: true, daily: { remaining: 997 } }); // the stale call consumed nothing

    // anonymous buckets read no generation
    const anon = await limiter.consume({ bucket: 'ip:10.0.0.1', limitPerMinute: 5, nowMs: Date.now() });
    expect(anon.generation).toBeUndefined();
  });

  test('requests sent in one turn are decided together, in order, exactly as one by one (shared keys, both limits, more than one script call)', async () => {
    const memory = new MemoryRateLimiter();
    const now = Date.parse('2026-11-22T12:00:00.000Z');
    const reqs: RateRequest[] = [];
    // 300 requests (over one call's 256): two keys of one tenant share its daily quota of 150;
    // key a allows 200 a minute, key b 40; an address bucket allows 3
    for (let i = 0; i < 300; i++) {
      const nowMs = now + Math.floor(i / 10);
      if (i % 7 === 0) reqs.push({ bucket: 'ip:192.0.2.1', limitPerMinute: 3, nowMs });
      else reqs.push({ bucket: i % 2 ? 'key:a' : 'key:b', limitPerMinute: i % 2 ? 200 : 40, daily: { tenantId: 'tb:sandbox', quota: 150 }, nowMs });
    }
    const sizes: number[] = [];
    const run = scripts.run.bind(scripts);
    scripts.run = (script, keys, argv) => {
      const runs = runsOf(argv);
      sizes.push(runs.reduce<number>((sum, v, i) => (i % 3 === 2 ? sum + Number(v) : sum), 0));
      return run(script, keys, argv);
    };
    try {
      const decisions = await Promise.all(reqs.map((r) => limiter.consume(r))); // all in this turn
      expect(sizes).toEqual([256, 44]);
      const outcomes = new Set<string>();
      reqs.forEach((r, i) => {
        expect(strip(decisions[i]!)).toEqual(memory.consumeSync(r));
        outcomes.add(decisions[i]!.allowed ? 'allowed' : decisions[i]!.deniedBy!);
      });
      expect([...outcomes].sort()).toEqual(['allowed', 'daily', 'minute']);
      // what the batch left in Redis is what the next request sees
      const next = { bucket: 'key:b', limitPerMinute: 40, daily: { tenantId: 'tb:sandbox', quota: 1000 }, nowMs: now + 30_000 };
      expect(strip(await limiter.consume(next))).toEqual(memory.consumeSync(next));
    } finally {
      scripts.run = run;
    }
  });

  test("a turn's requests of one key at one instant travel as one run; a run that meets a limit midway is decided request by request", async () => {
    const memory = new MemoryRateLimiter();
    const nowMs = Date.parse('2026-11-23T10:00:00.000Z');
    const daily = { tenantId: 'tr:sandbox', quota: 22 };
    // key r1 allows 10 a minute; r2 100; both share the tenant's daily quota of 22
    const reqs: RateRequest[] = [
      ...Array.from({ length: 15 }, (): RateRequest => ({ bucket: 'key:r1', limitPerMinute: 10, daily, nowMs })),
      ...Array.from({ length: 20 }, (): RateRequest => ({ bucket: 'key:r2', limitPerMinute: 100, daily, nowMs })),
    ];
    const calls: (string | number)[][] = [];
    const run = scripts.run.bind(scripts);
    scripts.run = (script, keys, argv) => (calls.push(argv), run(script, keys, argv));
    try {
      const decisions = await Promise.all(reqs.map((r) => limiter.consume(r)));
      expect(calls.length).toBe(1);
      expect(runsOf(calls[0]!)).toEqual([1, nowMs, 15, 2, nowMs, 20]); // two runs
      reqs.forEach((r, i) => expect(strip(decisions[i]!)).toEqual(memory.consumeSync(r)));
      expect(decisions.map((d) => (d.allowed ? 'a' : d.deniedBy![0])).join('')).toBe('a'.repeat(10) + 'm'.repeat(5) + 'a'.repeat(12) + 'd'.repeat(8));
    } finally {
      scripts.run = run;
    }
  });

  test('Redis failing mid-batch: every request of the batch is decided by the in-process limiter, none is lost', async () => {
    const broken = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => null });
    const brokenScripts = new RedisScripts('redis://127.0.0.1:1', log); // never connected
    const memory = new MemoryRateLimiter();
    const failing = new RedisRateLimiter(broken, brokenScripts, memory, log, 'x:', (aspect, id) => generationKey('x', aspect, id));
    const reqs = Array.from({ length: 5 }, (_, i): RateRequest => ({ bucket: 'key:f', limitPerMinute: 3, nowMs: 1_000 + i }));
    const decisions = await Promise.all(reqs.map((r) => failing.consume(r)));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
    expect(failing.problem()).toContain('redis rate limiter unavailable');
    broken.disconnect();
    brokenScripts.close();
  });

  test('a reply of an unexpected shape is a failure: the batch is decided by the in-process limiter', async () => {
    const memory = new MemoryRateLimiter();
    const odd = new RedisRateLimiter(redis, { run: async () => ['1'], ping: async () => {} }, memory, log, `${prefix}:odd:`, (aspect, id) => generationKey(prefix, aspect, id));
    const reqs = Array.from({ length: 4 }, (_, i): RateRequest => ({ bucket: 'key:odd', limitPerMinute: 3, nowMs: 5_000 + i }));
    const decisions = await Promise.all(reqs.map((r) => odd.consume(r)));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(odd.problem()).toContain('unexpected reply');
  });

  test('a dropped connection: decisions fall back at once, and come from Redis again once it is back', async () => {
    await redis.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes'); // drops the scripts' connection
    const start = Date.now();
    let d: RateDecision | undefined;
    while (Date.now() - start < 5000) {
      d = await limiter.consume({ bucket: 'key:reconnect', limitPerMinute: 100, daily: { tenantId: 'tr:sandbox', quota: 50 }, nowMs: Date.now() });
      if (limiter.problem() === null) break;
      await Bun.sleep(100);
    }
    expect(limiter.problem()).toBeNull();
    expect(d!.allowed).toBe(true);
    expect(Number(await redis.get(`${prefix}:rl:day:tr:sandbox:${Date.now() - (Date.now() % 86_400_000)}`))).toBeGreaterThan(0); // counted in Redis
  });

  test('a health check clears a past failure once Redis answers again, without waiting for a keyed request', async () => {
    let up = false;
    const flaky = { run: (...a: Parameters<RedisScripts['run']>) => (up ? scripts.run(...a) : Promise.reject(new Error('connection closed'))), ping: () => (up ? Promise.resolve() : Promise.reject(new Error('connection closed'))) };
    const l = new RedisRateLimiter(redis, flaky, new MemoryRateLimiter(), log, `${prefix}:rl:`, (aspect, id) => generationKey(prefix, aspect, id));
    expect((await l.consume({ bucket: 'key:hc', limitPerMinute: 5, nowMs: Date.now() })).allowed).toBe(true); // decided in process
    expect(l.problem()).toContain('connection closed');
    expect(await l.recheck()).toContain('connection closed'); // still down: still reported
    up = true;
    expect(await l.recheck()).toBeNull();
    expect(l.problem()).toBeNull();
  });

  test('a script Redis no longer knows (restart, SCRIPT FLUSH) is loaded again, and the decision still made', async () => {
    await redis.call('SCRIPT', 'FLUSH');
    const d = await limiter.consume({ bucket: 'key:flushed', limitPerMinute: 10, nowMs: Date.now() });
    expect(d).toMatchObject({ allowed: true, remaining: 9 });
    expect(limiter.problem()).toBeNull();
  });
});
