/**
 * No process dies of a database outage (issue 17 item 2): an api and a worker process on
 * PostgreSQL + Redis, ERP syncs and webhook deliveries running, and every connection of the
 * service's database terminated (pg_terminate_backend) again and again. Both processes stay up,
 * their pools reconnect, and the work completes.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import postgres from 'postgres';
import { connectSandboxErp, freshDatabase, REDIS_TEST_URL, runCli, spawnServer, TEST_DB, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

describe.skipIf(TEST_DB !== 'postgres')('connections terminated under load', () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let env: Record<string, string>;
  let api: Awaited<ReturnType<typeof spawnServer>>;
  let worker: Awaited<ReturnType<typeof spawnServer>>;
  let admin: postgres.Sql;
  let receiver: ReturnType<typeof Bun.serve>;
  const received = new Set<string>();

  beforeAll(async () => {
    db = await freshDatabase();
    env = {
      ...db.env,
      REDIS_URL: REDIS_TEST_URL,
      REDIS_PREFIX: `term${crypto.randomUUID().slice(0, 8)}`,
      ANON_RATE_LIMIT_PER_MINUTE: '100000',
      WEBHOOK_RETRY_DELAYS_MS: '200,400',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      ERP_DEMO_INVOICES: '3000',
      ERP_SYNC_STALL_MS: '2000',
      LOG_LEVEL: 'warn',
    };
    admin = postgres(db.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    receiver = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: async (r) => (received.add(r.headers.get('webhook-id')!), new Response('ok')) });
    api = await spawnServer({ ...env, ROLE: 'api' });
    worker = await spawnServer({ ...env, ROLE: 'worker', LOG_LEVEL: 'info' }, { readyLine: 'workers started' });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    receiver?.stop(true);
    await admin?.end();
    await db?.drop();
  }, 40_000);

  test('both processes survive, reconnect, and syncs and deliveries complete', async () => {
    const { api_key: key } = JSON.parse((await runCli(['tenant', 'create', '--name', 'term', '--plan', 'enterprise', '--json'], env)).stdout);
    const http: Pick<TestApp, 'call' | 'json'> = {
      call: (method, path, o = {}) =>
        fetch(api.base + path, {
          method,
          redirect: 'manual',
          headers: { ...(o.key ? { authorization: `Bearer ${o.key}` } : {}), ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}), ...o.headers },
          body: o.rawBody ?? (o.body !== undefined ? JSON.stringify(o.body) : undefined),
        }),
      async json(method, path, o) {
        const res = await http.call(method, path, o);
        const text = await res.text();
        return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
      },
    };
    const refs = ['c1', 'c2', 'c3'];
    for (const ref of refs) await connectSandboxErp(http, key, 'demo', { customerReference: ref });
    const hook = await http.json('POST', '/v1/admin/webhooks', { key, body: { url: `http://127.0.0.1:${receiver.port}/h`, enabled_events: ['*'] } });
    expect(hook.status).toBe(201);

    const runs: string[] = [];
    for (const ref of refs) runs.push((await http.json('POST', '/v1/erp-connector/sync', { key, body: { provider: 'demo', customer_reference: ref, mode: 'full' } })).body.run_id);
    const tests: string[] = [];
    for (let i = 0; i < 5; i++) {
      const t = await http.json('POST', `/v1/admin/webhooks/${hook.body.id}/test`, { key });
      if (t.status === 202) tests.push(t.body.delivery_id);
    }

    // take every connection away, five times, while the work runs
    for (let i = 0; i < 5; i++) {
      await Bun.sleep(150);
      await admin.unsafe(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`);
    }

    // the processes are still there
    await Bun.sleep(500);
    expect(api.proc.exitCode).toBeNull();
    expect(worker.proc.exitCode).toBeNull();

    // every run reaches an end (a run cut off is retried or failed, never left running), and a sync after the outage succeeds
    const settled = async (id: string) => {
      for (let i = 0; i < 300; i++) {
        const r = await http.json('GET', `/v1/erp-connector/sync/${id}`, { key });
        if (r.status === 200 && (r.body.status === 'succeeded' || r.body.status === 'failed')) return r.body.status as string;
        await Bun.sleep(100);
      }
      return 'unsettled';
    };
    for (const id of runs) expect(['succeeded', 'failed']).toContain(await settled(id));
    const after = await http.json('POST', '/v1/erp-connector/sync', { key, body: { provider: 'demo', customer_reference: 'c1', mode: 'full' } });
    expect(after.status).toBe(202);
    expect(await settled(after.body.run_id)).toBe('succeeded');

    // the test deliveries and the sync events arrive (retries carry them over the outage)
    const t = await http.json('POST', `/v1/admin/webhooks/${hook.body.id}/test`, { key });
    expect(t.status).toBe(202);
    for (let i = 0; i < 100 && received.size < 3; i++) await Bun.sleep(100);
    expect(received.size).toBeGreaterThanOrEqual(3);

    expect(api.proc.exitCode).toBeNull();
    expect(worker.proc.exitCode).toBeNull();
    expect(worker.output() + api.output()).not.toContain('exiting');
  }, 90_000);
});
