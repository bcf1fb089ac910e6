import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import postgres from 'postgres';
import { freshDatabase, REDIS_TEST_URL, runCli, spawnServer, TEST_DB } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

/**
 * Issue #8's proof that the service scales out: two `api` processes and two `worker` processes on
 * one PostgreSQL database and one Redis. Runs in the PostgreSQL pass of the suite.
 */
describe.skipIf(TEST_DB !== 'postgres')('several processes on PostgreSQL + Redis', () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let env: Record<string, string>;
  let api1: Awaited<ReturnType<typeof spawnServer>>;
  let api2: Awaited<ReturnType<typeof spawnServer>>;
  const workers: Awaited<ReturnType<typeof spawnServer>>[] = [];
  const received: { id: string; body: string }[] = [];
  let receiver: ReturnType<typeof Bun.serve>;
  let sql: postgres.Sql;

  beforeAll(async () => {
    db = await freshDatabase();
    env = {
      ...db.env,
      REDIS_URL: REDIS_TEST_URL,
      REDIS_PREFIX: `scale${crypto.randomUUID().slice(0, 8)}`,
      ANON_RATE_LIMIT_PER_MINUTE: '100000',
      RESCORE_CRON: '* * * * * *', // every second: the nightly job must still run once per night
      WEBHOOK_RETRY_DELAYS_MS: '200,400',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    };
    sql = postgres(db.env.DATABASE_URL!, { max: 2, onnotice: () => {} });
    receiver = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: async (req) => {
        received.push({ id: req.headers.get('webhook-id')!, body: await req.text() });
        return new Response('ok');
      },
    });
    [api1, api2] = await Promise.all([spawnServer({ ...env, ROLE: 'api' }), spawnServer({ ...env, ROLE: 'api' })]);
    workers.push(
      ...(await Promise.all([
        spawnServer({ ...env, ROLE: 'worker', LOG_LEVEL: 'info' }, { readyLine: 'workers started' }),
        spawnServer({ ...env, ROLE: 'worker', LOG_LEVEL: 'info' }, { readyLine: 'workers started' }),
      ])),
    );
  });

  afterAll(async () => {
    const codes = await Promise.all([api1, api2, ...workers].map((p) => p?.stop()));
    receiver?.stop(true);
    await sql?.end();
    await db?.drop();
    expect(codes.every((c) => c === 0)).toBe(true); // graceful shutdown on SIGTERM exits 0
  });

  const tenant = async (args: string[] = []) => JSON.parse((await runCli(['tenant', 'create', '--name', 'scale', '--json', ...args], env)).stdout);
  const call = (base: string, method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  test('both API processes are up and the workers started', async () => {
    expect((await fetch(`${api1.base}/readyz`)).status).toBe(200);
    expect((await fetch(`${api2.base}/readyz`)).status).toBe(200);
    for (const w of workers) expect(w.output()).toContain('workers started');
  });

  test("a key's per-minute limit is exact across both API processes", async () => {
    const t = await tenant(['--plan', 'free']);
    const res = await Promise.all(Array.from({ length: 100 }, (_, i) => call(i % 2 ? api1.base : api2.base, 'GET', '/v1/admin/keys', t.api_key)));
    expect(res.filter((r) => r.status === 200).length).toBe(60);
    expect(res.filter((r) => r.status === 429).length).toBe(40);
  });

  test('a key revoked through one process is refused by the other on the next request', async () => {
    const t = await tenant(['--plan', 'growth']);
    const second = JSON.parse((await runCli(['key', 'create', '--tenant', t.tenant_id, '--env', 'sandbox', '--json'], env)).stdout);
    expect((await call(api2.base, 'GET', '/v1/admin/keys', second.api_key)).status).toBe(200);
    const revoke = await call(api1.base, 'POST', '/v1/admin/keys/revoke', t.api_key, { api_key_id: second.api_key_id });
    expect(revoke.status).toBe(200);
    const after = await call(api2.base, 'GET', '/v1/admin/keys', second.api_key);
    expect(after.status).toBe(401);
    expect(((await after.json()) as { code: string }).code).toBe('api_key_revoked');
  });

  test('a tenant suspended with the operator CLI is refused by both processes on their next request', async () => {
    const t = await tenant(['--plan', 'growth']);
    for (const api of [api1, api2]) for (let i = 0; i < 2; i++) expect((await call(api.base, 'POST', '/v1/score', t.api_key, { nif: '599000015' })).status).toBe(200);
    expect((await runCli(['tenant', 'suspend', '--tenant', t.tenant_id], env)).code).toBe(0);
    for (const api of [api1, api2]) {
      const r = await call(api.base, 'POST', '/v1/score', t.api_key, { nif: '599000015' });
      expect(r.status).toBe(403);
      expect(((await r.json()) as { code: string }).code).toBe('tenant_suspended');
    }
    expect((await runCli(['tenant', 'resume', '--tenant', t.tenant_id], env)).code).toBe(0);
    expect((await call(api2.base, 'POST', '/v1/score', t.api_key, { nif: '599000015' })).status).toBe(200);
  });

  test('an Idempotency-Key replay sent to the other process returns the stored response', async () => {
    const t = await tenant(['--plan', 'growth']);
    const headers = { 'idempotency-key': 'scale-out-1' };
    const body = { nif: '599000082', customer_reference: 'scale' };
    const first = await call(api1.base, 'POST', '/v1/score', t.api_key, body, headers);
    const firstText = await first.text();
    expect(first.status).toBe(200);
    const replay = await call(api2.base, 'POST', '/v1/score', t.api_key, body, headers);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.text()).toBe(firstText);
    // the every-second nightly schedule may also re-score it; the replay itself computed nothing
    const [{ n }] = await sql`select count(*)::int as n from score_results where tenant_id = ${t.tenant_id} and trigger = 'request'`;
    expect(n).toBe(1);
  });

  test('a webhook event is delivered once', async () => {
    const t = await tenant(['--plan', 'growth']);
    const created = await call(api1.base, 'POST', '/v1/admin/webhooks', t.api_key, { url: `http://127.0.0.1:${receiver.port}/h`, enabled_events: ['*'] });
    const ep = (await created.json()) as { id: string };
    const sent = (await (await call(api2.base, 'POST', `/v1/admin/webhooks/${ep.id}/test`, t.api_key)).json()) as { event_id: string };
    for (let i = 0; i < 100 && !received.some((r) => r.id === sent.event_id); i++) await Bun.sleep(50);
    await Bun.sleep(1500); // room for a duplicate to show up
    expect(received.filter((r) => r.id === sent.event_id).length).toBe(1);
  });

  test('the nightly re-score runs once, not once per process', async () => {
    const t = await tenant(['--plan', 'growth']);
    expect((await call(api1.base, 'POST', '/v1/score', t.api_key, { nif: '599000031' })).status).toBe(200);
    // the schedule fires every second on both workers; the night's run may have started before this
    // tenant existed, so look at the guard rows and at how often any company was re-scored
    await Bun.sleep(2500);
    const guards = await sql`select key from app_meta where key like 'nightly-rescore:%'`;
    expect(guards.length).toBe(1);
    const perCompany = await sql`select tenant_id, nif, count(*)::int as n from score_results where trigger = 'rescore' group by tenant_id, nif`;
    for (const row of perCompany) expect(row.n).toBe(1);
  });
});
