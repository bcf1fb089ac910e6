import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { eq } from 'drizzle-orm';
import { expectError, makeApp, REDIS_TEST_URL, TestClock, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

describe('rate limits (in-process GCRA)', () => {
  let h: TestApp;
  beforeAll(async () => {
    h = await makeApp({ ANON_RATE_LIMIT_PER_MINUTE: '5' });
  });
  afterAll(() => h.close());

  test('100 parallel requests against a limit of 60 → exactly 60 succeed, the rest 429 rate_limited', async () => {
    const t = await h.tenant({ name: 'free', plan: 'free' });
    const res = await Promise.all(Array.from({ length: 100 }, () => h.json('GET', '/v1/admin/keys', { key: t.api_key })));
    expect(res.filter((r) => r.status === 200).length).toBe(60);
    const limited = res.filter((r) => r.status === 429);
    expect(limited.length).toBe(40);
    const b = expectError(limited[0]!, 429, 'rate_limited');
    expect(b.message).toContain('60');
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  test('window edge: after a full burst only the replenished amount passes (no 2x at the edge)', async () => {
    const t = await h.tenant({ name: 'edge', plan: 'free' });
    for (let i = 0; i < 60; i++) expect((await h.call('GET', '/v1/admin/keys', { key: t.api_key })).status).toBe(200);
    h.clock.advance(1000);
    const after1s = await Promise.all(Array.from({ length: 10 }, () => h.call('GET', '/v1/admin/keys', { key: t.api_key })));
    expect(after1s.filter((r) => r.status === 200).length).toBe(1);
    h.clock.advance(30_000);
    const after30s = await Promise.all(Array.from({ length: 60 }, () => h.call('GET', '/v1/admin/keys', { key: t.api_key })));
    expect(after30s.filter((r) => r.status === 200).length).toBe(30);
  });

  test('headers on 2xx, 4xx and 429; Reset is epoch seconds; IETF fields present', async () => {
    const t = await h.tenant({ name: 'hdr', plan: 'starter' });
    const ok = await h.call('GET', '/v1/admin/keys', { key: t.api_key });
    expect(ok.headers.get('x-ratelimit-limit')).toBe('600');
    expect(ok.headers.get('x-ratelimit-remaining')).toBe('599');
    const reset = Number(ok.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThanOrEqual(Math.floor(h.clock.ms / 1000));
    expect(reset).toBeLessThanOrEqual(Math.ceil(h.clock.ms / 1000) + 60);
    expect(ok.headers.get('ratelimit-policy')).toBe('"minute";q=600;w=60, "daily";q=100000;w=86400');
    expect(ok.headers.get('ratelimit')).toMatch(/^"minute";r=599;t=\d+, "daily";r=99999;t=\d+$/);
    const bad = await h.call('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: {} });
    expect(bad.status).toBe(422);
    expect(bad.headers.get('x-ratelimit-remaining')).toBe('598');
    const nf = await h.call('GET', '/v1/nowhere', { key: t.api_key });
    expect(nf.status).toBe(404);
    expect(nf.headers.get('x-ratelimit-limit')).not.toBeNull();
  });

  test("a key's rate_limit_per_minute overrides the plan", async () => {
    const t = await h.tenant({ name: 'override', plan: 'growth' });
    const k = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', rateLimitPerMinute: 3 });
    const res = await Promise.all(Array.from({ length: 5 }, () => h.call('GET', '/v1/admin/keys', { key: k.api_key })));
    expect(res.filter((r) => r.status === 200).length).toBe(3);
    expect(res[0]!.headers.get('x-ratelimit-limit')).toBe('3');
  });

  test('requests without a valid key are limited per client address, with the same headers', async () => {
    h.clock.advance(60_000); // earlier unauthenticated calls (unknown routes) spent from the same address budget
    const res: Response[] = [];
    for (let i = 0; i < 7; i++) res.push(await h.call('GET', '/v1/admin/keys', { headers: { authorization: 'Bearer sk_test_bad' } }));
    expect(res[0]!.status).toBe(401);
    expect(res[0]!.headers.get('x-ratelimit-limit')).toBe('5');
    expect(res.filter((r) => r.status === 429).length).toBe(2);
    const body = (await res[6]!.json()) as { code: string };
    expect(body.code).toBe('rate_limited');
    expect(res[6]!.headers.get('retry-after')).not.toBeNull();
    // service pages are never limited (health checks, scrapers), but carry the address's budget as it stands
    for (const path of ['/healthz', '/readyz', '/openapi.json', '/docs', '/docs/errors', '/roadmap']) {
      const page = await h.call('GET', path);
      expect(page.status, path).toBe(200);
      expect(page.headers.get('x-ratelimit-limit'), path).toBe('5');
      expect(page.headers.get('x-ratelimit-remaining'), path).toBe('0');
      expect(page.headers.get('x-ratelimit-reset'), path).toMatch(/^\d+$/);
      expect(page.headers.get('ratelimit-policy'), path).toBe('"minute";q=5;w=60');
      expect(page.headers.get('retry-after'), path).toBeNull();
    }
    h.clock.advance(60_000);
    const rested = await h.call('GET', '/healthz');
    expect(rested.headers.get('x-ratelimit-remaining')).toBe('5');
    expect((await h.call('GET', '/healthz')).headers.get('x-ratelimit-remaining')).toBe('5'); // a peek consumes nothing
  });

  test('daily quota → 429 daily_quota_exceeded with Retry-After until UTC midnight', async () => {
    const t = await h.tenant({ name: 'quota', dailyQuota: 3 });
    const midnightS = String(Date.UTC(2026, 10, 23) / 1000);
    for (let i = 0; i < 3; i++) {
      const ok = await h.call('GET', '/v1/admin/keys', { key: t.api_key });
      expect(ok.status).toBe(200);
      // fewer requests are left of the quota than of the minute's budget: the trio announces the quota
      expect([ok.headers.get('x-ratelimit-limit'), ok.headers.get('x-ratelimit-remaining'), ok.headers.get('x-ratelimit-reset')]).toEqual(['3', String(2 - i), midnightS]);
    }
    const r = await h.json('GET', '/v1/admin/keys', { key: t.api_key });
    expectError(r, 429, 'daily_quota_exceeded');
    const midnight = Date.UTC(2026, 10, 23) / 1000;
    expect(Number(r.headers.get('retry-after'))).toBe(Math.ceil(midnight - h.clock.ms / 1000));
    expect(r.headers.get('ratelimit')).toContain('"daily";r=0');
    // the live environment of the same tenant has its own daily count
    const live = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'live' });
    expect((await h.call('GET', '/v1/admin/keys', { key: live.api_key })).status).toBe(200);
    // the X-RateLimit trio now describes the daily quota: nothing left until UTC midnight
    expect(r.headers.get('x-ratelimit-limit')).toBe('3');
    expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(r.headers.get('x-ratelimit-reset')).toBe(String(midnight));
    // the tenant's own usage is still readable (the quota does not count it; its minute limit does)
    for (let i = 0; i < 3; i++) {
      const usage = await h.json('GET', '/v1/admin/usage', { key: t.api_key });
      expect(usage.status).toBe(200);
      expect(usage.headers.get('ratelimit')).not.toContain('"daily"');
    }
    expectError(await h.json('GET', '/v1/admin/keys', { key: t.api_key }), 429, 'daily_quota_exceeded');
  });

  test('reading usage does not spend the daily quota', async () => {
    const t = await h.tenant({ name: 'quota-usage', dailyQuota: 2 });
    for (let i = 0; i < 5; i++) expect((await h.call('GET', '/v1/admin/usage', { key: t.api_key })).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await h.call('GET', '/v1/admin/keys', { key: t.api_key })).status).toBe(200);
    expectError(await h.json('GET', '/v1/admin/keys', { key: t.api_key }), 429, 'daily_quota_exceeded');
  });

  test("a valid key's body errors and unknown routes are charged to that key, not to the address", async () => {
    const t = await h.tenant({ name: 'own-budget', plan: 'starter' });
    const bad = await h.call('POST', '/v1/admin/keys/revoke', { key: t.api_key, rawBody: '{bad', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('x-ratelimit-limit')).toBe('600');
    expect(bad.headers.get('x-ratelimit-remaining')).toBe('599');
    const nf = await h.call('GET', '/v1/nowhere-else', { key: t.api_key });
    expect(nf.status).toBe(404);
    expect(nf.headers.get('x-ratelimit-remaining')).toBe('598');
  });
});

describe('rate limits on Redis: one exact budget shared by several processes', () => {
  let a: TestApp;
  let b: TestApp;
  const clock = new TestClock();
  beforeAll(async () => {
    const shared = { REDIS_URL: REDIS_TEST_URL, REDIS_PREFIX: `shared${crypto.randomUUID().slice(0, 8)}` };
    a = await makeApp(shared, { clock });
    // second "process": its own context and Redis connection, same Redis namespace
    b = await makeApp(shared, { clock });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  test('100 parallel requests split over two apps against a limit of 60 → exactly 60 succeed', async () => {
    // same tenant and key in both databases: the bucket is keyed by key id
    const t = await a.tenant({ name: 'shared', plan: 'free' });
    const { tenants, apiKeys } = a.ctx.database.t;
    const tenantRow = (await a.ctx.database.db.select().from(tenants).where(eq(tenants.id, t.tenant_id)))[0]!;
    const keyRow = (await a.ctx.database.db.select().from(apiKeys).where(eq(apiKeys.id, t.api_key_id)))[0]!;
    await b.ctx.database.withTx(async (tx) => {
      await tx.insert(b.ctx.database.t.tenants).values(tenantRow);
      await tx.insert(b.ctx.database.t.apiKeys).values(keyRow);
    });
    const res = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).call('GET', '/v1/admin/keys', { key: t.api_key })));
    expect(res.filter((r) => r.status === 200).length).toBe(60);
    expect(res.filter((r) => r.status === 429).length).toBe(40);
  });

  test('Redis unreachable: fail open to in-process limits, and /readyz reports it', async () => {
    const c = await makeApp({ REDIS_URL: 'redis://127.0.0.1:6390' });
    try {
      const t = await c.tenant({ name: 'no-redis', plan: 'free' });
      const r = await c.call('GET', '/v1/admin/keys', { key: t.api_key });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-ratelimit-limit')).toBe('60');
      const ready = await c.json('GET', '/readyz');
      expectError(ready, 503, 'service_unavailable');
      expect(ready.body.checks.redis).toContain('unreachable');
    } finally {
      await c.close();
    }
  });
});

describe('Idempotency-Key', () => {
  let h: TestApp;
  beforeAll(async () => {
    h = await makeApp();
  });
  afterAll(() => h.close());

  const keysOf = async (tenantId: string) => (await h.ctx.tenants.listKeys(tenantId)).length;

  test('replay returns the byte-identical stored response, marked Idempotent-Replayed, without running again', async () => {
    const t = await h.tenant();
    const headers = { 'idempotency-key': 'rotate-1' };
    const first = await h.call('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: { grace_days: 3 }, headers });
    const firstText = await first.text();
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const second = await h.call('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: { grace_days: 3 }, headers });
    expect(second.status).toBe(201);
    expect(await second.text()).toBe(firstText);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await keysOf(t.tenant_id)).toBe(2); // one rotation, not two
    // the stored response holds the new key: it must not sit in the database in plaintext
    const newKey = (JSON.parse(firstText) as { api_key: string }).api_key;
    const rows = await h.ctx.database.db.select().from(h.ctx.database.t.idempotencyKeys);
    expect(JSON.stringify(rows)).not.toContain(newKey.slice(8));
  });

  test('JSON key order and whitespace do not make a different body', async () => {
    const t = await h.tenant();
    const k2 = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox' });
    const headers = { 'idempotency-key': 'rev-1', 'content-type': 'application/json' };
    const a = await h.call('POST', '/v1/admin/keys/revoke', { key: t.api_key, rawBody: `{"api_key_id":"${k2.api_key_id}","reason":"x"}`, headers });
    const b = await h.call('POST', '/v1/admin/keys/revoke', { key: t.api_key, rawBody: `{ "reason": "x", "api_key_id": "${k2.api_key_id}" }`, headers });
    expect(b.status).toBe(a.status);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
  });

  test('each API key has its own Idempotency-Keys: another key of the tenant sending the same one is a request of its own (a narrower key never gets the secret a replay holds)', async () => {
    const t = await h.tenant();
    const admin = t.api_key;
    const manager = (await h.json('POST', '/v1/admin/keys', { key: admin, body: { name: 'keys only', scopes: ['keys:manage'] } })).body.api_key as string;
    const star = await h.json('POST', '/v1/admin/keys', { key: admin, body: { name: 'star' } });
    expect(star.status).toBe(201);
    const headers = { 'idempotency-key': 'rotate-star' };
    const rotated = await h.json('POST', '/v1/admin/keys/rotate', { key: admin, body: { api_key_id: star.body.api_key_id, grace_days: 1 }, headers });
    expect(rotated.status).toBe(201);
    // the narrower key is refused the rotation, with or without the admin's Idempotency-Key: no replay of the admin's answer
    for (const h2 of [{}, headers]) {
      const r = await h.json('POST', '/v1/admin/keys/rotate', { key: manager, body: { api_key_id: star.body.api_key_id, grace_days: 1 }, headers: h2 });
      expectError(r, 403, 'insufficient_scope');
      expect(r.headers.get('idempotent-replayed')).toBeNull();
      expect(JSON.stringify(r.body)).not.toContain(rotated.body.api_key);
    }
    // the other way round: a refusal stored under the narrower key is not what the admin gets
    const poison = { 'idempotency-key': 'create-1' };
    expectError(await h.json('POST', '/v1/admin/keys', { key: manager, body: { name: 'p', scopes: ['score'] }, headers: poison }), 403, 'insufficient_scope');
    const created = await h.json('POST', '/v1/admin/keys', { key: admin, body: { name: 'p', scopes: ['score'] }, headers: poison });
    expect(created.status).toBe(201);
    expect(created.headers.get('idempotent-replayed')).toBeNull();
    // and each key's own replay still works
    const replay = await h.json('POST', '/v1/admin/keys', { key: admin, body: { name: 'p', scopes: ['score'] }, headers: poison });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.api_key).toBe(created.body.api_key);
  });

  test('same key, different body or path → 422 idempotency_key_reused', async () => {
    const t = await h.tenant();
    const headers = { 'idempotency-key': 'k-reuse' };
    expect((await h.call('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: { grace_days: 1 }, headers })).status).toBe(201);
    expectError(await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: { grace_days: 2 }, headers }), 422, 'idempotency_key_reused');
    expectError(
      await h.json('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: crypto.randomUUID() }, headers }),
      422,
      'idempotency_key_reused',
    );
  });

  test('concurrent duplicate → one success and one 409 idempotency_key_in_use', async () => {
    const t = await h.tenant();
    const headers = { 'idempotency-key': 'k-concurrent' };
    const body = { nif: '599000015', refresh: 'force_refresh' };
    // slow the scoring down (outside any transaction) so the duplicate surely arrives mid-flight
    const scores = h.ctx.services!.scores;
    const original = scores.evaluate.bind(scores);
    scores.evaluate = async (...args) => (await Bun.sleep(150), original(...args));
    let r1, r2;
    try {
      const first = h.json('POST', '/v1/score', { key: t.api_key, body, headers });
      await Bun.sleep(30);
      [r1, r2] = await Promise.all([first, h.json('POST', '/v1/score', { key: t.api_key, body, headers })]);
    } finally {
      scores.evaluate = original;
    }
    expect([r1.status, r2.status].sort()).toEqual([200, 409]);
    expectError([r1, r2].find((r) => r.status === 409)!, 409, 'idempotency_key_in_use');
    const s = h.ctx.database.t.scoreResults;
    expect((await h.ctx.database.db.select().from(s).where(eq(s.tenantId, t.tenant_id))).length).toBe(1);
  });

  test('invalid Idempotency-Key header → 422 with a field error on the header', async () => {
    const t = await h.tenant();
    for (const bad of ['x'.repeat(256), 'tab\there', 'é']) {
      const b = expectError(await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: {}, headers: { 'idempotency-key': bad } }), 422, 'validation_failed');
      expect(b.fields).toEqual([{ path: 'header.Idempotency-Key', message: expect.any(String) }]);
    }
  });

  test('requests rejected before the handler store nothing; a handler 4xx is stored; keys are per tenant', async () => {
    const t = await h.tenant();
    const headers = { 'idempotency-key': 'k-early' };
    expect((await h.call('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: 'bad' }, headers })).status).toBe(422);
    const { idempotencyKeys } = h.ctx.database.t;
    const rows = await h.ctx.database.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.tenantId, t.tenant_id));
    expect(rows).toEqual([]);
    // now a real handler 409 (last active key): stored and replayed
    const first = await h.json('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: t.api_key_id }, headers });
    expectError(first, 409, 'last_active_key');
    const replay = await h.call('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: t.api_key_id }, headers });
    expect(replay.status).toBe(409);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    // another tenant using the same key string is independent
    const other = await h.tenant();
    const o = await h.call('POST', '/v1/admin/keys/rotate', { key: other.api_key, body: {}, headers });
    expect(o.status).toBe(201);
    expect(o.headers.get('idempotent-replayed')).toBeNull();
  });

  test('records expire after 24 h and are purged', async () => {
    const t = await h.tenant();
    const headers = { 'idempotency-key': 'k-expire' };
    expect((await h.call('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: {}, headers })).status).toBe(201);
    h.clock.advance(24 * 3600_000 + 1000);
    expect(await h.ctx.idempotency.purgeExpired()).toBeGreaterThanOrEqual(1);
    const again = await h.call('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: {}, headers });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
  });
});
