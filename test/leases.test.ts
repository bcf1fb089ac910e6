import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import Redis from 'ioredis';
import { announceTenantChanges, generationKey } from '../src/lib/cache-generations';
import { ANNOUNCE_WAIT_MS, COHERENT_MS, feedRegistry, GenerationFeed, generationChannel } from '../src/lib/generation-feed';
import { createLogger } from '../src/lib/log';
import { LEASE_MS, MemoryRateLimiter, RedisRateLimiter, type RateDecision, type RateRequest } from '../src/lib/rate-limiter';
import { mulberry32 } from '../src/lib/prng';
import { RedisScripts } from '../src/lib/redis-scripts';
import { REDIS_TEST_URL } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

/**
 * Processes on PostgreSQL + Redis know their tenants' cache generations from a feed (pushed, and
 * acknowledged before a change is answered), and decide requests of keys with ample budget from
 * leases (requests prepaid in Redis), without a round trip. Two "processes" here: two feeds and two
 * limiters on one Redis namespace.
 */
describe('generation feed and leases', () => {
  const prefix = `ls${crypto.randomUUID().slice(0, 8)}`;
  const log = createLogger('silent');
  const day = Date.parse('2026-11-23T12:00:00.000Z');
  type Proc = { redis: Redis; scripts: RedisScripts; feed: GenerationFeed; limiter: RedisRateLimiter; calls: (string | number)[][]; announce: ReturnType<typeof announceTenantChanges> };
  const procs: Proc[] = [];
  let a: Proc;
  let b: Proc;
  let admin: Redis;

  async function proc(): Promise<Proc> {
    const redis = new Redis(REDIS_TEST_URL, { enableAutoPipelining: true });
    const scripts = new RedisScripts(REDIS_TEST_URL, log);
    await scripts.connect();
    const calls: (string | number)[][] = [];
    const run = scripts.run.bind(scripts);
    scripts.run = (script, keys, argv) => (calls.push(argv), run(script, keys, argv));
    const feed = new GenerationFeed(REDIS_TEST_URL, prefix, redis, log);
    await feed.start();
    // start() waits 100 ms at most for the subscription; on a busy machine the first heartbeat can come later
    for (let i = 0; i < 200 && !feed.coherent(); i++) await Bun.sleep(10);
    const limiter = new RedisRateLimiter(redis, scripts, new MemoryRateLimiter(), log, `${prefix}:rl:`, (aspect, id) => generationKey(prefix, aspect, id), feed);
    const p = { redis, scripts, feed, limiter, calls, announce: announceTenantChanges(redis, prefix, log, feed) };
    procs.push(p);
    return p;
  }

  beforeAll(async () => {
    admin = new Redis(REDIS_TEST_URL);
    a = await proc();
    b = await proc();
    for (let i = 0; i < 50 && !(a.feed.coherent() && b.feed.coherent()); i++) await Bun.sleep(10);
  });
  afterAll(async () => {
    for (const p of procs) {
      await p.limiter.close();
      await p.feed.close();
      p.scripts.close();
      await p.redis.quit();
    }
    const keys = await admin.keys(`${prefix}:*`);
    if (keys.length) await admin.del(...keys);
    await admin.quit();
  });

  const strip = ({ generation: _g, scoreGeneration: _s, ...d }: RateDecision) => d;
  /** as admitKey asks: in process if the limiter can, else from Redis */
  const decide = (p: Proc, req: RateRequest) => p.limiter.consumeSync(req) ?? p.limiter.consume(req);
  const keyed = (tenant: string, limitPerMinute: number, quota: number, nowMs: number): RateRequest => ({
    bucket: `key:${tenant}`,
    limitPerMinute,
    daily: { tenantId: `${tenant}:sandbox`, quota },
    generationOf: tenant,
    nowMs,
  });

  test('both feeds are coherent once started', () => {
    expect(a.feed.coherent()).toBe(true);
    expect(b.feed.coherent()).toBe(true);
  });

  test('a change announced by one process is applied by the other before the announcement resolves (acknowledged, not waited out)', async () => {
    const tenant = `t${crypto.randomUUID().slice(0, 6)}`;
    await decide(b, keyed(tenant, 600, 1_000_000, day)); // b learns the tenant's generations from the script's answer
    const before = { ...b.feed.current(tenant)! };
    expect(before.access).toBeGreaterThan(0);
    const started = performance.now();
    expect(await a.announce([{ tenantId: tenant, aspect: 'access' }])).toBe(true);
    expect(performance.now() - started).toBeLessThan(ANNOUNCE_WAIT_MS);
    const stored = Number(await admin.get(generationKey(prefix, 'access', tenant)));
    expect(stored).toBeGreaterThan(before.access);
    expect(b.feed.current(tenant)).toEqual({ access: stored, scores: before.scores, inputs: 0 });
  });

  test("a tenant's inputs generation: unknown at first, read from Redis (created if missing) for the asks after; a change announced elsewhere moves it before the announcement resolves", async () => {
    const tenant = `t${crypto.randomUUID().slice(0, 6)}`;
    const key = generationKey(prefix, 'inputs', tenant);
    expect(await admin.get(key)).toBeNull();
    expect(b.feed.inputs(tenant)).toBeUndefined(); // the first ask starts the read
    let learned: number | undefined;
    for (let i = 0; i < 100 && (learned = b.feed.inputs(tenant)) === undefined; i++) await Bun.sleep(5);
    const stored = Number(await admin.get(key));
    expect(stored).toBeGreaterThan(0);
    expect(learned).toBe(stored);
    expect(await a.announce([{ tenantId: tenant, aspect: 'inputs' }])).toBe(true);
    const moved = Number(await admin.get(key));
    expect(moved).toBeGreaterThan(stored);
    expect(b.feed.inputs(tenant)).toBe(moved);
    // a counter that exists is read as it is, not created again
    const other = `t${crypto.randomUUID().slice(0, 6)}`;
    await admin.set(generationKey(prefix, 'inputs', other), '42');
    expect(a.feed.inputs(other)).toBeUndefined();
    for (let i = 0; i < 100 && a.feed.inputs(other) === undefined; i++) await Bun.sleep(5);
    expect(a.feed.inputs(other)).toBe(42);
  });

  test('announcements go through the native client while it is connected, and through ioredis while it is not (it reconnects only when next used)', async () => {
    const scripts = new RedisScripts(REDIS_TEST_URL, log); // not connected yet
    const announce = announceTenantChanges(a.redis, prefix, log, a.feed, scripts);
    let native = 0;
    const run = scripts.run.bind(scripts);
    scripts.run = (script, keys, argv) => (native++, run(script, keys, argv));
    try {
      const tenant = `t${crypto.randomUUID().slice(0, 6)}`;
      const key = generationKey(prefix, 'inputs', tenant);
      expect(await announce([{ tenantId: tenant, aspect: 'inputs' }])).toBe(true);
      const first = Number(await admin.get(key));
      expect(first).toBeGreaterThan(0);
      expect(native).toBe(0);
      await scripts.connect();
      expect(await announce([{ tenantId: tenant, aspect: 'inputs' }])).toBe(true);
      expect(native).toBe(1);
      expect(Number(await admin.get(key))).toBeGreaterThan(first);
      expect(b.feed.inputs(tenant)).toBe(Number(await admin.get(key))); // acknowledged by the other process before it resolved
    } finally {
      scripts.close();
    }
  });

  test("the announcing process acknowledges its own change without a message through Redis; the other process's acknowledgement still travels", async () => {
    const spy = new Redis(REDIS_TEST_URL);
    const acks: string[] = [];
    spy.on('message', (_channel: string, message: string) => acks.push(message));
    await spy.subscribe(a.feed.ackChannel);
    try {
      const started = performance.now();
      expect(await a.announce([{ tenantId: `t${crypto.randomUUID().slice(0, 6)}`, aspect: 'scores' }])).toBe(true);
      expect(performance.now() - started).toBeLessThan(ANNOUNCE_WAIT_MS); // both acknowledged, not waited out
      await Bun.sleep(50); // anything published on the channel has reached the spy
      expect(acks.map((m) => m.split(' ')[1])).toEqual([b.feed.id]);
    } finally {
      spy.disconnect();
    }
  });

  test('a process that never acknowledges (stalled: subscribed, or registered) holds an announcement for ANNOUNCE_WAIT_MS, no longer', async () => {
    const stalled = new Redis(REDIS_TEST_URL);
    await stalled.subscribe(generationChannel(prefix));
    try {
      let started = performance.now();
      expect(await a.announce([{ tenantId: 'tstalled', aspect: 'scores' }])).toBe(true);
      expect(performance.now() - started).toBeGreaterThanOrEqual(ANNOUNCE_WAIT_MS - 5);
      stalled.disconnect();
      await Bun.sleep(50); // until Redis has seen it go
      started = performance.now();
      expect(await a.announce([{ tenantId: 'tstalled', aspect: 'scores' }])).toBe(true);
      expect(performance.now() - started).toBeLessThan(ANNOUNCE_WAIT_MS);
      const seconds = Number((await admin.time())[0]);
      await admin.zadd(feedRegistry(prefix), seconds * 1000 + 60_000, 'stalled-process');
      started = performance.now();
      expect(await a.announce([{ tenantId: 'tstalled', aspect: 'scores' }])).toBe(true);
      const took = performance.now() - started;
      expect(took).toBeGreaterThanOrEqual(ANNOUNCE_WAIT_MS - 5);
      expect(took).toBeLessThan(ANNOUNCE_WAIT_MS + 400);
      expect(ANNOUNCE_WAIT_MS).toBeGreaterThan(COHERENT_MS); // what makes that wait enough (generation-feed.ts)
    } finally {
      await admin.zrem(feedRegistry(prefix), 'stalled-process');
      stalled.disconnect();
    }
  });

  test('a process whose heartbeats stop is no longer coherent after COHERENT_MS: it asks Redis again', async () => {
    const c = await proc();
    const tenant = `t${crypto.randomUUID().slice(0, 6)}`;
    await decide(c, keyed(tenant, 600_000, 10_000_000, day));
    expect(c.feed.current(tenant)).toBeDefined();
    clearInterval((c.feed as unknown as { timer: ReturnType<typeof setInterval> }).timer);
    await Bun.sleep(COHERENT_MS + 150);
    expect(c.feed.coherent()).toBe(false);
    expect(c.feed.current(tenant)).toBeUndefined();
    expect(c.limiter.consumeSync(keyed(tenant, 600_000, 10_000_000, day + 1))).toBeUndefined();
  });

  test('a lost subscription forgets every copy, and an answer read before it is not learned', async () => {
    const c = await proc();
    const tenant = `t${crypto.randomUUID().slice(0, 6)}`;
    await decide(c, keyed(tenant, 600, 1_000_000, day));
    expect(c.feed.current(tenant)).toBeDefined();
    const mark = c.feed.mark();
    (c.feed as unknown as { sub: Redis }).sub.disconnect(true); // reconnects by itself
    for (let i = 0; i < 100 && c.feed.current(tenant); i++) await Bun.sleep(1);
    expect(c.feed.current(tenant)).toBeUndefined();
    for (let i = 0; i < 100 && !c.feed.coherent(); i++) await Bun.sleep(10);
    expect(c.feed.coherent()).toBe(true);
    c.feed.learn(mark, tenant, 1, 1);
    expect(c.feed.current(tenant)).toBeUndefined();
    c.feed.learn(c.feed.mark(), tenant, 5, 6);
    expect(c.feed.current(tenant)).toEqual({ access: 5, scores: 6, inputs: 0 });
  });

  test("an inputs generation read sent before the subscription was lost and answered after it is not learned; the next ask reads it again", async () => {
    const c = await proc();
    const tenant = `t${crypto.randomUUID().slice(0, 6)}`;
    const original = c.redis as unknown as { readGeneration: (...args: unknown[]) => Promise<string> };
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reads = 0;
    // the feed's connection, but Redis's answer to the read reaches the feed only once the gate opens
    const gated = new Proxy(c.redis, {
      get(target, prop) {
        if (prop === 'readGeneration')
          return async (...args: unknown[]) => {
            reads++;
            const value = await original.readGeneration(...args);
            await gate;
            return value;
          };
        const value = Reflect.get(target, prop);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    (c.feed as unknown as { redis: Redis }).redis = gated;
    const known = () => (c.feed as unknown as { tenants: Map<string, { inputs: number }> }).tenants.get(tenant)?.inputs ?? 0;
    expect(c.feed.inputs(tenant)).toBeUndefined(); // the read is sent under this subscription
    expect(reads).toBe(1);
    (c.feed as unknown as { sub: Redis }).sub.disconnect(true); // reconnects by itself
    for (let i = 0; i < 100 && c.feed.coherent(); i++) await Bun.sleep(1);
    for (let i = 0; i < 200 && !c.feed.coherent(); i++) await Bun.sleep(10);
    expect(c.feed.coherent()).toBe(true);
    release();
    for (let i = 0; i < 20 && (c.feed as unknown as { fetching: Set<string> }).fetching.size; i++) await Bun.sleep(5);
    expect(known()).toBe(0); // answered, but under the lost subscription
    // the next ask reads it anew, under the current subscription, and that answer is learned
    expect(c.feed.inputs(tenant)).toBeUndefined();
    expect(reads).toBe(2);
    let learned: number | undefined;
    for (let i = 0; i < 100 && (learned = c.feed.inputs(tenant)) === undefined; i++) await Bun.sleep(5);
    expect(learned).toBe(Number(await admin.get(generationKey(prefix, 'inputs', tenant))));
    await c.feed.close();
  });

  test('a subscription dropped by Redis just before a change: once the change is answered, the process either has it or knows nothing', async () => {
    for (let round = 0; round < 5; round++) {
      const c = await proc();
      const tenant = `t${crypto.randomUUID().slice(0, 6)}`;
      await decide(c, keyed(tenant, 600, 1_000_000, day));
      const before = c.feed.current(tenant)!.access;
      const clients = String(await admin.client('LIST'));
      const subId = /id=(\d+) .*name=feed:(\w+)/g;
      let id: string | undefined;
      for (const m of clients.matchAll(subId)) if (m[2] === c.feed.id) id = m[1];
      expect(id).toBeDefined();
      await admin.client('KILL', 'ID', id!);
      // announced at once: c has not seen its connection go yet; c is registered, so it is waited for
      expect(await a.announce([{ tenantId: tenant, aspect: 'access' }])).toBe(true);
      const now = c.feed.current(tenant);
      if (now) expect(now.access).toBeGreaterThan(before);
      await c.feed.close();
    }
  });

  test('a key with ample budget: after one call to Redis its requests are decided in process, with the numbers Redis would give', async () => {
    const c = await proc();
    const tenant = `t${crypto.randomUUID().slice(0, 6)}`;
    const memory = new MemoryRateLimiter();
    let local = 0;
    for (let i = 0; i < 200; i++) {
      const req = keyed(tenant, 6000, 100_000, day + i * 3);
      const sync = c.limiter.consumeSync(req);
      if (sync) local++;
      const d = sync ?? (await c.limiter.consume(req));
      expect(strip(d)).toEqual(memory.consumeSync(req));
    }
    // leases of 16, 32, then 1 % of the limit (60), each for at most 100 ms of the requests' clock (33 of them here)
    expect(c.calls.length).toBeLessThanOrEqual(10);
    expect(local).toBeGreaterThanOrEqual(185);
    // what was prepaid and not used is given back: the day's count in Redis is what was used
    await c.limiter.close();
    const count = await admin.get(`${prefix}:rl:day:${tenant}:sandbox:${day - (day % 86_400_000)}`);
    expect(Number(count)).toBe(200);
  });

  test('a lease not used up is given back after LEASE_MS by the sweep, without any request', async () => {
    const c = await proc();
    const tenant = `t${crypto.randomUUID().slice(0, 6)}`;
    const dayKey = `${prefix}:rl:day:${tenant}:sandbox:${day - (day % 86_400_000)}`;
    await decide(c, keyed(tenant, 6000, 100_000, day));
    expect(Number(await admin.get(dayKey))).toBeGreaterThan(1); // 1 used + a lease
    expect(c.limiter.consumeSync(keyed(tenant, 6000, 100_000, day + 1))).toBeDefined();
    await Bun.sleep(LEASE_MS * 2 + 100);
    expect(Number(await admin.get(dayKey))).toBe(2);
  });

  test('near a limit every request goes to Redis: a small limit is exact across two processes, request by request', async () => {
    const tenant = `t${crypto.randomUUID().slice(0, 6)}`;
    const memory = new MemoryRateLimiter();
    const outcomes: string[] = [];
    for (let i = 0; i < 14; i++) {
      const p = i % 2 ? b : a;
      const req = keyed(tenant, 10, 100_000, day + i);
      expect(p.limiter.consumeSync(req)).toBeUndefined();
      const d = await p.limiter.consume(req);
      expect(strip(d)).toEqual(memory.consumeSync(req));
      outcomes.push(d.allowed ? 'a' : 'm');
    }
    expect(outcomes.join('')).toBe('a'.repeat(10) + 'm'.repeat(4));
  });

  test('a daily quota near its end is exact too: no lease while fewer than 1000 of the day are left', async () => {
    const tenant = `t${crypto.randomUUID().slice(0, 6)}`;
    const decisions: RateDecision[] = [];
    for (let i = 0; i < 8; i++) decisions.push(await decide(i % 2 ? b : a, keyed(tenant, 600_000, 5, day + i)));
    expect(decisions.map((d) => (d.allowed ? 'a' : d.deniedBy![0])).join('')).toBe('aaaaaddd');
    expect(decisions.map((d) => d.daily!.remaining)).toEqual([4, 3, 2, 1, 0, 0, 0, 0]);
  });

  test('two processes on one key with ample budget never admit more than Redis prepaid, and together count every request', async () => {
    const tenant = `t${crypto.randomUUID().slice(0, 6)}`;
    const dayKey = `${prefix}:rl:day:${tenant}:sandbox:${day - (day % 86_400_000)}`;
    let allowed = 0;
    for (let i = 0; i < 600; i++) if ((await decide(i % 3 ? b : a, keyed(tenant, 60_000, 10_000, day + i))).allowed) allowed++;
    expect(allowed).toBe(600);
    const inRedis = Number(await admin.get(dayKey));
    expect(inRedis).toBeGreaterThanOrEqual(600); // the used ones, plus what is still prepaid
    await Bun.sleep(LEASE_MS * 2 + 100); // leases given back by the sweeps
    expect(Number(await admin.get(dayKey))).toBe(600);
  });

  /** admits requests at nowMs until one is refused; how many were admitted */
  const burst = async (p: Proc, tenant: string, limit: number, nowMs: number, memory?: MemoryRateLimiter) => {
    let admitted = 0;
    for (let i = 0; i < limit * 2; i++) {
      const req = keyed(tenant, limit, 10_000_000, nowMs);
      const d = await decide(p, req);
      if (memory) expect(strip(d)).toEqual(memory.consumeSync(req));
      if (!d.allowed) break;
      admitted++;
    }
    return admitted;
  };

  test('an idle key leased by one process, then a burst through another: never more than exact GCRA would admit (the lease counts as made later, not earlier)', async () => {
    const tenant = `t${crypto.randomUUID().slice(0, 6)}`;
    const memory = new MemoryRateLimiter();
    const first = keyed(tenant, 6000, 10_000_000, day);
    expect((await decide(a, first)).allowed).toBe(true); // a takes a lease on the idle key
    memory.consumeSync(first);
    expect(a.limiter.consumeSync(keyed(tenant, 6000, 10_000_000, day + 1))).toBeDefined();
    memory.consumeSync(keyed(tenant, 6000, 10_000_000, day + 1));
    // 240 ms later (the key's clock), a burst through b, then what a still holds
    let admitted = await burst(b, tenant, 6000, day + 240);
    for (let d = a.limiter.consumeSync(keyed(tenant, 6000, 10_000_000, day + 240)); d?.allowed; d = a.limiter.consumeSync(keyed(tenant, 6000, 10_000_000, day + 240))) admitted++;
    let exact = 0;
    while (memory.consumeSync(keyed(tenant, 6000, 10_000_000, day + 240)).allowed) exact++;
    expect(exact).toBe(6000);
    expect(admitted).toBeLessThanOrEqual(exact);
    expect(admitted).toBeGreaterThanOrEqual(exact - 40); // the lease's span (250 ms at 10 ms a request) at most
  });

  test('one process alone on a key: a lease left unused and settled, then a burst, admits exactly what GCRA admits, request by request', async () => {
    const c = await proc();
    const tenant = `t${crypto.randomUUID().slice(0, 6)}`;
    const memory = new MemoryRateLimiter();
    const first = keyed(tenant, 6000, 10_000_000, day);
    expect(strip(await decide(c, first))).toEqual(memory.consumeSync(first));
    await Bun.sleep(LEASE_MS + 150); // expired and settled by a sweep
    expect(await burst(c, tenant, 6000, day + 240, memory)).toBe(6000);
    expect(await burst(c, tenant, 6000, day + 60_240, memory)).toBe(6000); // a minute later, all of it again
  });

  test("unused requests of a lease that a later request's clock has written off are not given back to the key (review finding)", async () => {
    const [p1, p2] = [await proc(), await proc()];
    const tenant = `t${crypto.randomUUID().slice(0, 6)}`;
    const memory = new MemoryRateLimiter();
    let admitted = 0;
    let exact = 0;
    const send = async (p: Proc, nowMs: number, localOnly = false) => {
      const req = keyed(tenant, 6000, 10_000_000, nowMs);
      const sync = p.limiter.consumeSync(req);
      if (localOnly && !sync) return false;
      const d = sync ?? (await p.limiter.consume(req));
      if (d.allowed) admitted++;
      if (memory.consumeSync(req).allowed) exact++;
      return d.allowed;
    };
    await send(p1, day); // a lease of 16, used up at once: the next one is 32
    for (let i = 0; i < 16; i++) expect(await send(p1, day, true)).toBe(true);
    await send(p1, day + 1); // p1 now holds 32 unused (320 ms of the key's spacing)
    while (await send(p2, day + 1500)); // 1.5 s later: p1's 32 are written off by the clock; a burst to the limit
    await send(p1, day + 1500); // p1's lease is past its time: settled in this call
    while (await send(p2, day + 1500)); // the burst goes on
    expect(admitted).toBeLessThanOrEqual(exact);
    expect(admitted).toBeGreaterThanOrEqual(exact - 60);
  });

  test('three processes, random interleavings, idle spells and expired leases: never ahead of exact GCRA on any prefix', async () => {
    // a token bucket admits the most, on every prefix of the requests, when it admits greedily (exact
    // GCRA): a system that never breaks the bucket can never be ahead of it
    const c = await proc();
    const procs3 = [a, b, c];
    for (const seed of [1, 2, 3]) {
      const random = mulberry32(seed);
      const tenant = `t${crypto.randomUUID().slice(0, 6)}`;
      const memory = new MemoryRateLimiter();
      let nowMs = day;
      let admitted = 0;
      let exact = 0;
      let local = 0;
      for (let i = 0; i < 1500; i++) {
        const r = random();
        // bursts (the limit is 20 a second), pauses, idle spells: the key goes from idle to its limit and back
        nowMs += r < 0.9 ? Math.floor(random() * 2) : r < 0.99 ? Math.floor(random() * 300) : 1000 + Math.floor(random() * 4000);
        if (random() < 0.005) await Bun.sleep(60 + Math.floor(random() * 100)); // leases expire, sweeps settle
        const p = procs3[Math.floor(random() * 3)]!;
        const req = keyed(tenant, 1200, 10_000_000, nowMs);
        const sync = p.limiter.consumeSync(req);
        if (sync) local++;
        const d = sync ?? (await p.limiter.consume(req));
        if (d.allowed) admitted++;
        if (memory.consumeSync(req).allowed) exact++;
        if (admitted > exact) throw new Error(`seed ${seed}, request ${i}: ${admitted} admitted, exact GCRA ${exact}`);
      }
      expect(local).toBeGreaterThan(100); // the leases were used
      expect(admitted).toBeGreaterThan(exact * 0.9); // and it is not simply refusing
    }
  }, 30_000);

  test('a stale cached key is reported stale in process, consuming nothing', async () => {
    const tenant = `t${crypto.randomUUID().slice(0, 6)}`;
    const first = await decide(a, keyed(tenant, 6000, 100_000, day));
    const d = a.limiter.consumeSync({ ...keyed(tenant, 6000, 100_000, day + 1), expectGeneration: first.generation! - 1 });
    expect(d).toMatchObject({ allowed: false, stale: true, generation: first.generation });
    const next = a.limiter.consumeSync({ ...keyed(tenant, 6000, 100_000, day + 2), expectGeneration: first.generation! });
    expect(next).toMatchObject({ allowed: true, remaining: 5998 });
  });
});
