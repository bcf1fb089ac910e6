import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { connectSandboxErp, expectError, makeApp, REDIS_TEST_URL, TEST_DB, TestClock, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

/**
 * Two service instances on one database and one Redis namespace, as two processes would be: each
 * caches keys and latest scores in process (SQLite: checked against the WAL change signal;
 * PostgreSQL: against the tenant's generation in Redis). A change committed through one must be
 * seen by the other's very next request, whichever path answers it (Elysia route or score fast path).
 */
describe('in-process read caches across two instances', () => {
  let a: TestApp;
  let b: TestApp;
  const clock = new TestClock();
  beforeAll(async () => {
    const shared = { REDIS_URL: REDIS_TEST_URL, REDIS_PREFIX: `gen${crypto.randomUUID().slice(0, 8)}` };
    a = await makeApp(shared, { clock, workers: false });
    b = await makeApp({ ...shared, ...a.dbEnv }, { clock, workers: false });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  const score = (app: TestApp, key: string, body: Record<string, unknown> = {}) => app.json('POST', '/v1/score', { key, body: { nif: '599000015', ...body } });
  /** b has the key in its cache: two requests, the second served from it */
  const warm = async (key: string) => {
    for (let i = 0; i < 2; i++) expect((await b.call('GET', '/v1/admin/keys', { key })).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await score(b, key)).status).toBe(200);
  };

  /** counts the key reads that reach app's database */
  const countKeyReads = (app: TestApp) => {
    const tenants = app.ctx.tenants as unknown as { lookupByHash(hash: string): Promise<unknown> };
    const original = tenants.lookupByHash;
    const counter = { count: 0, restore: () => void (tenants.lookupByHash = original) };
    tenants.lookupByHash = (hash) => (counter.count++, original.call(tenants, hash));
    return counter;
  };

  test('the key lookup is served from the cache while nothing changes', async () => {
    const t = await a.tenant();
    await warm(t.api_key);
    await Promise.all([a.ctx.usage.flush(), b.ctx.usage.flush()]);
    await warm(t.api_key); // again, in case a commit landed while the key was being loaded
    await b.ctx.usage.flush();
    const reads = countKeyReads(b);
    try {
      for (let i = 0; i < 5; i++) {
        expect((await score(b, t.api_key)).status).toBe(200);
        // its usage row is committed (SQLite: by the background worker, declared) before the next
        // request looks: that commit changes nothing the caches hold
        await b.ctx.usage.flush();
      }
      for (let i = 0; i < 5; i++) expect((await b.call('GET', '/v1/admin/keys', { key: t.api_key })).status).toBe(200);
      expect(reads.count).toBe(0);
      // a change through the other instance: read again once, then cached again; the new limit
      // applies from that very request (nothing charged under the old one)
      await a.ctx.tenants.setQuota(t.tenant_id, { rateLimitPerMinute: 5000 });
      const after = await score(b, t.api_key);
      expect(after.headers.get('x-ratelimit-limit')).toBe('5000');
      expect(reads.count).toBe(1);
      await score(b, t.api_key);
      expect(reads.count).toBe(1);
    } finally {
      reads.restore();
    }
  });

  test('a key revoked through one instance is refused by the other on its next request (fast path and Elysia route)', async () => {
    const t = await a.tenant();
    const second = await a.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox' });
    await warm(second.api_key);
    const revoke = await a.json('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: second.api_key_id } });
    expect(revoke.status).toBe(200);
    expectError(await score(b, second.api_key), 401, 'api_key_revoked');
    expectError(await b.json('GET', '/v1/admin/keys', { key: second.api_key }), 401, 'api_key_revoked');
  });

  test('a key rotated through one instance with no grace period is refused by the other at once; the new key works there', async () => {
    const t = await a.tenant();
    const second = await a.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox' });
    await warm(second.api_key);
    const rotated = await a.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: { api_key_id: second.api_key_id, grace_days: 0 } });
    expect(rotated.status).toBe(201);
    expectError(await score(b, second.api_key), 401, 'api_key_expired');
    expect((await score(b, rotated.body.api_key)).status).toBe(200);
  });

  test('a tenant suspended through one instance gets 403 from the other on its next request', async () => {
    const t = await a.tenant();
    await warm(t.api_key);
    await a.ctx.tenants.setStatus(t.tenant_id, 'suspended');
    expectError(await score(b, t.api_key), 403, 'tenant_suspended');
    expectError(await b.json('GET', '/v1/admin/keys', { key: t.api_key }), 403, 'tenant_suspended');
    await a.ctx.tenants.setStatus(t.tenant_id, 'active');
    expect((await score(b, t.api_key)).status).toBe(200);
  });

  test('a score refreshed through one instance is what the other returns as cached next', async () => {
    const t = await a.tenant();
    await warm(t.api_key);
    const before = await score(b, t.api_key);
    expect(before.body.cache).toBe('cached');
    clock.advance(60_000);
    const fresh = await score(a, t.api_key, { refresh: 'force_refresh' });
    expect(fresh.body.cache).toBe('fresh');
    expect(fresh.body.computed_at).not.toBe(before.body.computed_at);
    const reads = countKeyReads(b);
    try {
      const next = await score(b, t.api_key);
      expect(next.body).toMatchObject({ cache: 'cached', computed_at: fresh.body.computed_at });
      // PostgreSQL: a new score moves the tenant's score generation only, so its keys stay cached
      // (SQLite: any commit drops the whole cache)
      expect(reads.count).toBe(TEST_DB === 'postgres' ? 0 : 1);
    } finally {
      reads.restore();
    }
  });

  /** counts the score-input reads that reach app's database (PostgreSQL: one query per turn) */
  const countInputReads = (app: TestApp) => {
    const scores = app.ctx.services!.scores as unknown as { readScoreInputsBatch(keys: unknown[]): Promise<unknown> };
    const original = scores.readScoreInputsBatch;
    const counter = { count: 0, restore: () => void (scores.readScoreInputsBatch = original) };
    scores.readScoreInputsBatch = (keys) => (counter.count++, original.call(scores, keys));
    return counter;
  };
  const refresh = (app: TestApp, key: string, nif: string) => app.json('POST', '/v1/score', { key, body: { nif, refresh: 'force_refresh' } });
  /** b computes scores of this NIF without reading their inputs again (PostgreSQL; SQLite's are cached under its change signal) */
  const warmInputs = async (key: string, nif: string) => {
    for (let i = 0; i < 20; i++) {
      const reads = countInputReads(b);
      try {
        expect((await refresh(b, key, nif)).status).toBe(200);
        if (reads.count === 0) return;
      } finally {
        reads.restore();
      }
      await Bun.sleep(10); // the first ask learns the tenant's inputs generation in the background
    }
    if (TEST_DB === 'postgres') throw new Error('score inputs never cached');
  };

  test('books synced through one instance are in the next score the other computes (its cached score inputs dropped)', async () => {
    // a third instance runs the sync worker (a and b run none)
    const worker = await makeApp({ REDIS_URL: REDIS_TEST_URL, REDIS_PREFIX: a.config.redisPrefix, ERP_DEMO_INVOICES: '600', ...a.dbEnv }, { clock });
    try {
      const t = await a.tenant();
      await connectSandboxErp(a, t.api_key, 'demo', { customerReference: 'books' });
      await warmInputs(t.api_key, '599000040');
      expect((await refresh(b, t.api_key, '599000040')).body.data_sources).not.toContain('erp:demo');
      const run = await a.json('POST', '/v1/erp-connector/sync', { key: t.api_key, body: { provider: 'demo', customer_reference: 'books' } });
      expect(run.status).toBe(202);
      let status = '';
      for (let i = 0; i < 400 && status !== 'succeeded' && status !== 'failed'; i++) {
        await Bun.sleep(25);
        status = (await a.json('GET', `/v1/erp-connector/sync/${run.body.run_id}`, { key: t.api_key })).body.status;
      }
      expect(status).toBe('succeeded');
      const after = await refresh(b, t.api_key, '599000040');
      expect(after.status).toBe(200);
      expect(after.body.data_sources).toContain('erp:demo');
    } finally {
      await worker.close();
    }
  });

  test("a re-score through one instance moves the re-score count the other's next score starts from", async () => {
    const t = await a.tenant();
    const first = await refresh(b, t.api_key, '599000082'); // the fixture that worsens with each re-score
    await warmInputs(t.api_key, '599000082');
    expect((await refresh(b, t.api_key, '599000082')).body.score).toBe(first.body.score);
    expect((await a.json('POST', '/v1/sandbox/rescore', { key: t.api_key })).body.rescored).toBe(1);
    const after = await refresh(b, t.api_key, '599000082');
    expect(after.body.score).toBeLessThan(first.body.score - 5);
  });

  test('a GDPR erase through one instance revokes the keys for the other at once', async () => {
    const t = await a.tenant();
    await warm(t.api_key);
    // erasing needs a live key (issue 17 item 9); the sandbox key warmed on b must die with it
    const live = await a.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'live', scopes: ['gdpr:manage'] });
    const erase = await a.json('POST', '/v1/admin/gdpr/erase', { key: live.api_key, body: { confirmation: 'ERASE-MY-DATA' } });
    expect(erase.status).toBe(200);
    const r = await score(b, t.api_key);
    expect(r.status).toBe(401);
    expectError(await b.json('GET', '/v1/admin/keys', { key: t.api_key }), 401, r.body.code);
  });

  test('an unknown route with a key revoked through the other instance: 404, and the caller\'s address pays', async () => {
    const t = await a.tenant();
    const second = await a.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox' });
    await warm(second.api_key);
    expect((await a.call('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: second.api_key_id } })).status).toBe(200);
    const r = await b.json('GET', '/v1/nowhere', { key: second.api_key });
    expectError(r, 404, 'not_found');
    expect(r.headers.get('x-ratelimit-limit')).toBe(String(b.config.anonRateLimitPerMinute));
  });

  test.skipIf(TEST_DB !== 'postgres')('PostgreSQL: generations lost in Redis (flush, restart) never make a stale cached key current again', async () => {
    const t = await a.tenant();
    const second = await a.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox' });
    await a.ctx.tenants.setQuota(t.tenant_id, { dailyQuota: 1_000_000 }); // the counter moves once
    await warm(second.api_key);
    // Redis loses the counters (only this test's namespace is touched)
    const redis = a.ctx.redis!;
    const keys = await redis.keys(`${a.config.redisPrefix}:gen:*`);
    expect(keys.length).toBeGreaterThan(0);
    await redis.del(...keys);
    expect((await a.call('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: second.api_key_id } })).status).toBe(200);
    expectError(await score(b, second.api_key), 401, 'api_key_revoked');
    expectError(await b.json('GET', '/v1/admin/keys', { key: second.api_key }), 401, 'api_key_revoked');
  });

  test.skipIf(TEST_DB !== 'postgres')('PostgreSQL, Redis unreachable from one instance: it reads the database on every request instead of trusting its cache', async () => {
    const c = await makeApp({ REDIS_URL: REDIS_TEST_URL, REDIS_PREFIX: a.config.redisPrefix, ...a.dbEnv }, { clock, workers: false });
    try {
      const t = await a.tenant();
      const second = await a.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox' });
      for (let i = 0; i < 2; i++) expect((await score(c, second.api_key)).status).toBe(200);
      c.ctx.redis!.disconnect(); // c's limiter falls back to in-process limits: no generation
      const revoke = await a.json('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: second.api_key_id } });
      expect(revoke.status).toBe(200);
      expectError(await score(c, second.api_key), 401, 'api_key_revoked');
    } finally {
      await c.close();
    }
  });
});
