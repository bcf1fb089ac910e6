import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { expectError, makeApp, REDIS_TEST_URL, TEST_DB, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

describe('GET /metrics', () => {
  let h: TestApp;
  const token = 'metrics-token-0123456789';
  beforeAll(async () => {
    h = await makeApp({ METRICS_TOKEN: token, ANON_RATE_LIMIT_PER_MINUTE: '2' });
  });
  afterAll(() => h.close());

  test('needs the metrics token', async () => {
    expectError(await h.json('GET', '/metrics'), 401, 'missing_api_key');
    expectError(await h.json('GET', '/metrics', { headers: { authorization: 'Basic bWV0cmljczp4' } }), 401, 'missing_api_key');
    // wrong credentials are invalid ones, not missing ones
    const wrong = expectError(await h.json('GET', '/metrics', { headers: { authorization: 'Bearer wrong-token-xxxxxxxx' } }), 401, 'invalid_api_key');
    expect(wrong.message).toBe('The metrics token is not valid.');
  });

  test('Prometheus text with request counts and latency by route and status, queue depth, pool usage, rate-limit rejections', async () => {
    const t = await h.tenant({ plan: 'free' });
    const k = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', rateLimitPerMinute: 1 });
    await h.call('GET', '/v1/admin/keys', { key: k.api_key });
    await h.call('GET', '/v1/admin/keys', { key: k.api_key }); // 429: the key's minute
    const quota = await h.tenant({ dailyQuota: 1 });
    await h.call('GET', '/v1/events', { key: quota.api_key });
    expect((await h.call('GET', '/v1/events', { key: quota.api_key })).status).toBe(429); // the tenant's daily quota
    const anonymous = [];
    for (let i = 0; i < 3; i++) anonymous.push((await h.call('GET', '/v1/sandbox/fixtures')).status);
    expect(anonymous).toEqual([401, 401, 429]); // the client address's budget
    // a pool connection held in a transaction while the metrics are read
    let release!: () => void;
    const held = h.ctx.database.withTx(async (tx) => {
      await tx.select().from(h.ctx.database.t.tenants).limit(1);
      await new Promise<void>((r) => (release = r));
    });
    await Bun.sleep(20); // the access-log hook runs after the response is sent
    const res = await h.call('GET', '/metrics', { headers: { authorization: `Bearer ${token}` } });
    release();
    await held;
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/v1\/admin\/keys",status="200"\} 1/);
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/v1\/admin\/keys",status="429"\} 1/);
    expect(text).toContain('# TYPE http_requests_total counter');
    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    // one series per route and status: cumulative buckets ending in +Inf = _count, and a _sum
    const series = 'method="GET",route="/v1/admin/keys",status="200"';
    const buckets = [...text.matchAll(new RegExp(`http_request_duration_seconds_bucket\\{${series},le="([^"]+)"\\} (\\d+)`, 'g'))];
    expect(buckets.map((m) => m[1])).toEqual(['0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2', '5', '+Inf']);
    const counts = buckets.map((m) => Number(m[2]));
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(counts.at(-1)).toBe(1);
    expect(text).toContain(`http_request_duration_seconds_count{${series}} 1`);
    expect(text).toMatch(new RegExp(`http_request_duration_seconds_sum\\{${series}\\} 0\\.\\d+`));
    expect(text).toMatch(/rate_limit_rejections_total\{reason="minute"\} 1\n/);
    expect(text).toMatch(/rate_limit_rejections_total\{reason="daily"\} 1\n/);
    expect(text).toMatch(/rate_limit_rejections_total\{reason="address"\} 1\n/);
    expect(text).toContain('queue_depth');
    expect(Number(/^db_pool_in_use (\d+)$/m.exec(text)?.[1])).toBeGreaterThanOrEqual(1);
    expect(Number(/^db_pool_open (\d+)$/m.exec(text)?.[1])).toBeGreaterThanOrEqual(1);
    expect(text).toContain('webhook_delivery_attempts_total');
    // the embedded limiter decides everything in process
    expect(Number(/^rate_limit_decisions_total\{where="process"\} (\d+)$/m.exec(text)?.[1])).toBeGreaterThanOrEqual(6);
    expect(text).toMatch(/^rate_limit_decisions_total\{where="redis"\} 0$/m);
    expect(text).not.toContain('generation_feed_coherent');
  });
});

describe.skipIf(TEST_DB !== 'postgres')('GET /metrics on PostgreSQL + Redis', () => {
  test('the generation feed is coherent, and a busy key is decided in process from leases after its first call to Redis', async () => {
    const token = 'metrics-token-0123456789';
    const h = await makeApp({ METRICS_TOKEN: token, REDIS_URL: REDIS_TEST_URL }, { workers: false });
    try {
      const t = await h.tenant();
      for (let i = 0; i < 40; i++) expect((await h.json('POST', '/v1/score', { key: t.api_key, body: { nif: '599000015' } })).status).toBe(200);
      const text = await (await h.call('GET', '/metrics', { headers: { authorization: `Bearer ${token}` } })).text();
      expect(text).toMatch(/^generation_feed_coherent 1$/m);
      const count = (where: string) => Number(new RegExp(`^rate_limit_decisions_total\\{where="${where}"\\} (\\d+)$`, 'm').exec(text)?.[1]);
      expect(count('redis')).toBeGreaterThanOrEqual(1);
      expect(count('process')).toBeGreaterThan(count('redis'));
      expect(count('fallback')).toBe(0);
    } finally {
      await h.close();
    }
  });
});

describe('without METRICS_TOKEN', () => {
  test('/metrics is not served on the API port', async () => {
    const h = await makeApp();
    try {
      expectError(await h.json('GET', '/metrics'), 404, 'not_found');
    } finally {
      await h.close();
    }
  });
});
