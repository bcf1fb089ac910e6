import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { existsSync } from 'node:fs';
import postgres from 'postgres';
import { freePort, freshDatabase, REDIS_TEST_URL, ROOT, runCli, spawnServer, TEST_DB } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

let db: Awaited<ReturnType<typeof freshDatabase>>;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

/** the tenant's audit records, oldest first, read from the database the CLI wrote */
async function auditOf(tenantId: string): Promise<{ action: string; actor_key_id: string | null; details: string }[]> {
  if (TEST_DB === 'sqlite') {
    const { Database } = await import('bun:sqlite');
    const file = new Database(`${db.env.DATA_DIR}/service.sqlite`, { readonly: true });
    try {
      return file.query('select action, actor_key_id, details from audit_log where tenant_id = ? order by created_at, rowid').all(tenantId) as never;
    } finally {
      file.close();
    }
  }
  const sql = postgres(db.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
  try {
    return (await sql`select action, actor_key_id, details::text as details from audit_log where tenant_id = ${tenantId} order by created_at, id`) as never;
  } finally {
    await sql.end();
  }
}

describe('operator CLI', () => {
  test('a database that does not exist yet is refused (nothing created) unless --create; the database used is named', async () => {
    const where = TEST_DB === 'sqlite' ? `SQLite ${db.env.DATA_DIR}/service.sqlite` : `PostgreSQL ${db.env.DATABASE_URL}`;
    for (const args of [['tenant', 'list'], ['tenant', 'create', '--name', 'Too early']]) {
      const r = await runCli(args, db.env);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`database: ${where}`);
      expect(r.stderr).toContain('--create');
      expect(r.stdout).toBe('');
    }
    if (TEST_DB === 'sqlite') expect(existsSync(`${db.env.DATA_DIR}/service.sqlite`)).toBe(false);
    else {
      const sql = postgres(db.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
      expect((await sql`select to_regclass('tenants')::text as t`)[0]!.t).toBeNull();
      await sql.end();
    }
  });

  test('tenant create → one JSON object with tenant_id, api_key_id, api_key', async () => {
    const r = await runCli(['tenant', 'create', '--name', 'Banco Exemplo', '--plan', 'growth', '--json', '--create'], db.env);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out).sort()).toEqual(['api_key', 'api_key_id', 'tenant_id']);
    expect(out.api_key).toMatch(/^sk_test_[0-9a-f]{28}$/);
  });
  test('key create, suspend, resume; defaults and flags', async () => {
    const t = JSON.parse((await runCli(['tenant', 'create', '--name', 'X', '--env', 'live', '--scopes', 'score,esg', '--json'], db.env)).stdout);
    expect(t.api_key).toMatch(/^sk_live_/);
    const k = await runCli(['key', 'create', '--tenant', t.tenant_id, '--env', 'sandbox', '--name', 'ci', '--rate-limit', '5', '--json'], db.env);
    expect(k.code).toBe(0);
    expect(Object.keys(JSON.parse(k.stdout)).sort()).toEqual(['api_key', 'api_key_id']);
    expect((await runCli(['tenant', 'suspend', '--tenant', t.tenant_id], db.env)).code).toBe(0);
    expect((await runCli(['tenant', 'resume', '--tenant', t.tenant_id], db.env)).code).toBe(0);
    expect((await runCli(['tenant', 'quota', '--tenant', t.tenant_id, '--daily-quota', '500'], db.env)).code).toBe(0);
    // every operator change is audited, actor "operator"
    const audit = await auditOf(t.tenant_id);
    expect(audit.map((r) => r.action)).toEqual(['tenant.created', 'api_key.created', 'tenant.suspended', 'tenant.resumed', 'tenant.quota_changed']);
    expect(audit.every((r) => r.actor_key_id === null && JSON.parse(r.details).actor === 'operator')).toBe(true);
    expect(JSON.parse(audit[1]!.details)).toMatchObject({ rate_limit_per_minute: 5 });
  });
  test('tenant list, key list (by environment) and key revoke (the last active key only with --force), in JSON and text', async () => {
    const t = JSON.parse((await runCli(['tenant', 'create', '--name', 'Listed', '--plan', 'starter', '--json'], db.env)).stdout);
    const live = JSON.parse((await runCli(['key', 'create', '--tenant', t.tenant_id, '--env', 'live', '--name', 'prod', '--json'], db.env)).stdout);
    // an OAuth client's principal row (prefix oc_) is no API key: neither counted nor listed
    const database = await import('../src/db/client').then((m) => m.openDatabase({ databaseUrl: db.env.DATABASE_URL ?? null, dataDir: db.env.DATA_DIR ?? '', poolSize: 1 }));
    await database.db.insert(database.t.apiKeys).values({ id: crypto.randomUUID(), tenantId: t.tenant_id, name: 'oauth client x', env: 'sandbox', keyPrefix: 'oc_0123456789', keyHash: 'f'.repeat(64), scopes: ['*'], createdAt: new Date() });
    await database.close();
    const tenants = JSON.parse((await runCli(['tenant', 'list', '--json'], db.env)).stdout);
    expect(tenants.find((x: { tenant_id: string }) => x.tenant_id === t.tenant_id)).toMatchObject({ name: 'Listed', plan: 'starter', status: 'active', active_keys: { sandbox: 1, live: 1 } });
    const text = await runCli(['tenant', 'list'], db.env);
    expect(text.stdout).toContain(t.tenant_id);
    const all = JSON.parse((await runCli(['key', 'list', '--tenant', t.tenant_id, '--json'], db.env)).stdout);
    expect(all.map((k: { env: string }) => k.env).sort()).toEqual(['live', 'sandbox']);
    const liveOnly = JSON.parse((await runCli(['key', 'list', '--tenant', t.tenant_id, '--env', 'live', '--json'], db.env)).stdout);
    expect(liveOnly).toEqual([expect.objectContaining({ api_key_id: live.api_key_id, env: 'live', name: 'prod', status: 'active', key_prefix: live.api_key.slice(0, 12) })]);
    expect(JSON.stringify(all)).not.toContain(live.api_key); // never the plaintext, nor its hash
    expect(JSON.stringify(all)).not.toMatch(/[0-9a-f]{64}/);
    // both keys are active: the sandbox one may go; then the live one is the last
    const sandboxKey = all.find((k: { env: string }) => k.env === 'sandbox').api_key_id;
    const r1 = await runCli(['key', 'revoke', '--key', sandboxKey, '--reason', 'rotated out', '--json'], db.env);
    expect(r1.code).toBe(0);
    expect(JSON.parse(r1.stdout)).toMatchObject({ revoked: true, api_key_id: sandboxKey });
    const last = await runCli(['key', 'revoke', '--key', live.api_key_id], db.env);
    expect(last.code).toBe(1);
    expect(last.stderr).toContain('--force');
    const forced = await runCli(['key', 'revoke', '--key', live.api_key_id, '--force'], db.env);
    expect(forced.code).toBe(0);
    const after = JSON.parse((await runCli(['key', 'list', '--tenant', t.tenant_id, '--json'], db.env)).stdout);
    expect(after.map((k: { status: string }) => k.status)).toEqual(['revoked', 'revoked']);
    expect((await runCli(['key', 'revoke', '--key', live.api_key_id, '--json'], db.env)).code).toBe(0); // idempotent
    expect((await runCli(['key', 'revoke', '--key', crypto.randomUUID()], db.env)).stderr).toContain('unknown key');
    expect((await runCli(['key', 'list', '--tenant', crypto.randomUUID()], db.env)).stderr).toContain('unknown tenant');
  });

  test.skipIf(TEST_DB !== 'postgres')('PostgreSQL, Redis unreachable: the change is saved, the CLI says it could not be announced and exits 3', async () => {
    const t = JSON.parse((await runCli(['tenant', 'create', '--name', 'R', '--json', '--create'], db.env)).stdout);
    const r = await runCli(['tenant', 'suspend', '--tenant', t.tenant_id], { ...db.env, REDIS_URL: 'redis://127.0.0.1:6390' });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('could not be reached to tell the running processes');
    const ctx = await import('../src/db/client').then((m) => m.openDatabase({ databaseUrl: db.env.DATABASE_URL ?? null, dataDir: db.env.DATA_DIR ?? '', poolSize: 1 }));
    const { eq } = await import('drizzle-orm');
    const [row] = await ctx.db.select().from(ctx.t.tenants).where(eq(ctx.t.tenants.id, t.tenant_id));
    await ctx.close();
    expect(row?.status).toBe('suspended');
    const ok = await runCli(['tenant', 'resume', '--tenant', t.tenant_id], { ...db.env, REDIS_URL: REDIS_TEST_URL });
    expect(ok.code).toBe(0);
    expect(ok.stderr).not.toContain('warning');
  });

  test('bad arguments: a clear message and a non-zero exit', async () => {
    const cases: [string[], RegExp][] = [
      [['tenant', 'create', '--json'], /--name is required/],
      [['tenant', 'create', '--name', 'x', '--plan', 'gold'], /--plan must be one of/],
      [['tenant', 'create', '--name', 'x', '--scopes', 'score,bogus'], /unknown scope/],
      [['key', 'create', '--tenant', 'abc'], /--env is required/],
      [['key', 'create', '--tenant', 'abc', '--env', 'sandbox', '--rate-limit', '-3'], /rate-limit/],
      [['tenant', 'explode'], /unknown command/],
      [[], /a command is required/],
      [['tenant', 'create', '--nme', 'x'], /Unknown option/i],
      [['key', 'create', '--tenant', crypto.randomUUID(), '--env', 'sandbox'], /unknown tenant/],
      [['key', 'revoke'], /--key is required/],
      [['key', 'list'], /--tenant is required/],
      [['key', 'revoke', '--key', 'x', '--reason', 'r'.repeat(257)], /--reason must be at most 256/],
    ];
    for (const [args, msg] of cases) {
      const r = await runCli(args, db.env);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.stderr, args.join(' ')).toMatch(msg);
    }
  });
});

describe('server process', () => {
  test('a bad configuration value stops the start with one line naming the variable', async () => {
    const p = Bun.spawn(['bun', 'run', 'src/index.ts'], { cwd: ROOT, env: { ...process.env, PORT: 'eighty' }, stdout: 'pipe', stderr: 'pipe' });
    const [err, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
    expect(code).not.toBe(0);
    expect(err.trim()).toBe('configuration: PORT is invalid (integer 0..65535)');
    const erp = Bun.spawn(['bun', 'run', 'src/index.ts'], { cwd: ROOT, env: { ...process.env, DATA_DIR: ':memory:', ERP_MOLONI_TOKEN_URL: 'ftp://x' }, stdout: 'pipe', stderr: 'pipe' });
    const [erpErr, erpCode] = await Promise.all([new Response(erp.stderr).text(), erp.exited]);
    expect(erpCode).not.toBe(0);
    expect(erpErr.trim()).toBe('configuration: ERP_MOLONI_TOKEN_URL is invalid (http(s) URL)');
    // checked before anything is created (a bad time zone used to fail after the demo tenant was made)
    const tz = Bun.spawn(['bun', 'run', 'src/index.ts'], { cwd: ROOT, env: { ...process.env, DATA_DIR: ':memory:', RESCORE_TZ: 'Mars/Base' }, stdout: 'pipe', stderr: 'pipe' });
    const [tzOut, tzErr, tzCode] = await Promise.all([new Response(tz.stdout).text(), new Response(tz.stderr).text(), tz.exited]);
    expect(tzCode).not.toBe(0);
    expect(tzErr.trim()).toBe('configuration: RESCORE_TZ is invalid (an IANA time zone such as Europe/Lisbon; got "Mars/Base")');
    expect(tzOut).not.toContain('sk_test_');
  });

  test.skipIf(TEST_DB !== 'sqlite')('first start of an empty embedded database prints a sandbox key and curl line once; the key works', async () => {
    const fresh = await freshDatabase();
    try {
      const s1 = await spawnServer({ ...fresh.env });
      const out1 = s1.output();
      const key = /sk_test_[0-9a-f]{28}/.exec(out1)?.[0];
      expect(key).toBeDefined();
      expect(out1).toContain('curl');
      const ok = await fetch(`${s1.base}/v1/admin/keys`, { headers: { authorization: `Bearer ${key}` } });
      expect(ok.status).toBe(200);
      const bad = await fetch(`${s1.base}/v1/admin/keys`, { headers: { authorization: 'Bearer sk_test_' + 'f'.repeat(28) } });
      expect(bad.status).toBe(401);
      expect(((await bad.json()) as { code: string }).code).toBe('invalid_api_key');
      // the Dockerfile's HEALTHCHECK command
      const hc = (env: Record<string, string>) => Bun.spawn(['bun', 'run', 'scripts/healthcheck.ts'], { cwd: ROOT, env: { ...process.env, ...env } }).exited;
      expect(await hc({ ROLE: 'all', PORT: String(s1.port) })).toBe(0);
      expect(await s1.stop()).toBe(0); // graceful shutdown exits 0
      expect(await hc({ ROLE: 'all', PORT: String(s1.port) })).toBe(1);
      const s2 = await spawnServer({ ...fresh.env });
      expect(s2.output()).not.toContain('sk_test_');
      expect(s2.output()).not.toContain('without REDIS_URL');
      await s2.stop();
      // an api process without Redis says what it will not share
      const api = await spawnServer({ ...fresh.env, ROLE: 'api' });
      expect(api.output()).toContain('ROLE=api without REDIS_URL');
      await api.stop();
    } finally {
      await fresh.drop();
    }
  });

  test('a change made by another process (the CLI) is seen by the very next request', async () => {
    const fresh = await freshDatabase();
    try {
      const s = await spawnServer({ ...fresh.env, SEED_DEMO_TENANT: 'false' });
      const t = JSON.parse((await runCli(['tenant', 'create', '--name', 'x', '--json'], fresh.env)).stdout);
      const get = () => fetch(`${s.base}/v1/admin/keys`, { headers: { authorization: `Bearer ${t.api_key}` } });
      expect((await get()).status).toBe(200);
      expect((await get()).status).toBe(200); // now served from the process's read cache on SQLite
      expect((await runCli(['tenant', 'suspend', '--tenant', t.tenant_id], fresh.env)).code).toBe(0);
      const after = await get();
      expect(after.status).toBe(403);
      expect(((await after.json()) as { code: string }).code).toBe('tenant_suspended');
      await s.stop();
    } finally {
      await fresh.drop();
    }
  });

  test('METRICS_PORT serves /metrics on its own port (e.g. for workers); the API port has none without a token', async () => {
    const fresh = await freshDatabase();
    try {
      const metricsPort = freePort();
      const s = await spawnServer({ ...fresh.env, SEED_DEMO_TENANT: 'false', METRICS_PORT: String(metricsPort) });
      const m = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(m.status).toBe(200);
      expect(await m.text()).toContain('http_requests_total');
      expect((await fetch(`${s.base}/metrics`)).status).toBe(404);
      await s.stop();
    } finally {
      await fresh.drop();
    }
  });

  test('buffered usage is not lost on a clean shutdown (SIGTERM)', async () => {
    const fresh = await freshDatabase();
    try {
      const s = await spawnServer({ ...fresh.env, SEED_DEMO_TENANT: 'false' });
      const t = JSON.parse((await runCli(['tenant', 'create', '--name', 'u', '--plan', 'enterprise', '--rate-limit', '100000', '--json'], fresh.env)).stdout);
      const N = 300;
      const res = await Promise.all(
        Array.from({ length: N }, () =>
          fetch(`${s.base}/v1/score`, { method: 'POST', headers: { authorization: `Bearer ${t.api_key}`, 'content-type': 'application/json' }, body: '{"nif":"599000015"}' }),
        ),
      );
      const refused = res.filter((r) => r.status !== 200);
      // status and body of the first refusal, should there be one (two CI runs had one 500 among
      // the 300; not reproduced since), with the server's error lines, to find out why
      const errors = () => s.output().split('\n').filter((l) => /"level":"error"|error/i.test(l)).slice(0, 5).join('\n');
      const first: string | null = refused[0] ? `${refused[0].status} ${await refused[0].text()}\n${errors()}` : null;
      expect({ refused: refused.length, first }).toEqual({ refused: 0, first: null });
      expect(await s.stop('SIGTERM')).toBe(0); // right away: rows still in the buffer must be flushed
      const ctx = await import('../src/db/client').then((m) => m.openDatabase({ databaseUrl: fresh.env.DATABASE_URL ?? null, dataDir: fresh.env.DATA_DIR ?? '', poolSize: 1 }));
      const { eq } = await import('drizzle-orm');
      const rows = await ctx.db.select().from(ctx.t.usageRecords).where(eq(ctx.t.usageRecords.tenantId, t.tenant_id));
      await ctx.close();
      expect(rows.reduce((n, r) => n + r.quantity, 0)).toBe(N);
      expect(new Set(rows.flatMap((r) => r.requestIds!.split(' '))).size).toBe(N);
    } finally {
      await fresh.drop();
    }
  });

  test('a worker killed -9 in the middle of a webhook delivery loses nothing', async () => {
    const fresh = await freshDatabase();
    let holdFirst = true;
    const got: string[] = [];
    const receiver = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(req) {
        const id = req.headers.get('webhook-id')!;
        if (holdFirst) {
          holdFirst = false;
          await Bun.sleep(3000); // the worker dies while this delivery is in flight
          return new Response('late', { status: 200 });
        }
        got.push(id);
        return new Response('ok');
      },
    });
    const env = { ...fresh.env, SEED_DEMO_TENANT: 'false', WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };
    try {
      const a = await spawnServer(env);
      const t = JSON.parse((await runCli(['tenant', 'create', '--name', 'w', '--json'], fresh.env)).stdout);
      const auth = { authorization: `Bearer ${t.api_key}`, 'content-type': 'application/json' };
      const ep = (await (await fetch(`${a.base}/v1/admin/webhooks`, { method: 'POST', headers: auth, body: JSON.stringify({ url: `http://127.0.0.1:${receiver.port}/h`, enabled_events: ['*'] }) })).json()) as { id: string };
      const sent = (await (await fetch(`${a.base}/v1/admin/webhooks/${ep.id}/test`, { method: 'POST', headers: auth })).json()) as { event_id: string };
      for (let i = 0; i < 50 && holdFirst; i++) await Bun.sleep(20); // the delivery has reached the receiver
      expect(holdFirst).toBe(false);
      a.proc.kill('SIGKILL');
      await a.proc.exited;
      const b = await spawnServer(env); // a new process recovers the delivery from the database
      for (let i = 0; i < 200 && !got.includes(sent.event_id); i++) await Bun.sleep(50);
      expect(got).toContain(sent.event_id);
      await b.stop();
    } finally {
      receiver.stop(true);
      await fresh.drop();
    }
  }, 30_000);

  test.skipIf(TEST_DB !== 'postgres')('PostgreSQL: several processes starting together migrate once (advisory lock)', async () => {
    const fresh = await freshDatabase();
    try {
      const servers = await Promise.all([spawnServer(fresh.env), spawnServer(fresh.env), spawnServer(fresh.env)]);
      for (const s of servers) expect((await fetch(`${s.base}/readyz`)).status).toBe(200);
      await Promise.all(servers.map((s) => s.stop()));
    } finally {
      await fresh.drop();
    }
  });
});
