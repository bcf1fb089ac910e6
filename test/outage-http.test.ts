/**
 * Outages answer 503, never 500 or a development page (issue 17 item 4): the database is taken
 * away under a running server (PostgreSQL: through a TCP proxy the test closes; SQLite: another
 * process holds the write lock), and every answer is the §2.8 JSON body — 503 service_unavailable
 * with Retry-After when the dependency is down — with no SQL, parameters or file paths.
 */
import { afterAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Database } from 'bun:sqlite';
import { freePort, freshDatabase, runCli, spawnServer, TEST_DB } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

/** A TCP proxy to PostgreSQL that the test can cut (closing every connection) and restore. */
function pgProxy(target = { hostname: '127.0.0.1', port: 5432 }) {
  const port = freePort();
  type Pair = { client: import('bun').Socket<{ upstream?: import('bun').Socket<unknown>; pending: Uint8Array[] }> };
  const clients = new Set<Pair['client']>();
  let server: import('bun').TCPSocketListener<{ upstream?: import('bun').Socket<unknown>; pending: Uint8Array[] }> | null = null;
  const listen = () => {
    server = Bun.listen<{ upstream?: import('bun').Socket<unknown>; pending: Uint8Array[] }>({
      hostname: '127.0.0.1',
      port,
      socket: {
        open(client) {
          client.data = { pending: [] };
          clients.add(client);
          void Bun.connect({
            ...target,
            socket: {
              data(_up, chunk) { client.write(chunk); },
              close() { client.end(); },
              error() { client.end(); },
            },
          }).then((up) => {
            client.data.upstream = up;
            for (const c of client.data.pending) up.write(c);
            client.data.pending = [];
          }, () => client.end());
        },
        data(client, chunk) {
          if (client.data.upstream) client.data.upstream.write(chunk);
          else client.data.pending.push(new Uint8Array(chunk));
        },
        close(client) {
          clients.delete(client);
          client.data.upstream?.end();
        },
        error(client) { client.data.upstream?.end(); },
      },
    });
  };
  listen();
  return {
    port,
    cut() {
      server?.stop(true);
      server = null;
      for (const c of clients) { c.data.upstream?.end(); c.end(); }
      clients.clear();
    },
    restore: listen,
  };
}

async function probe(base: string, key: string) {
  const calls: [string, string, unknown?, string?][] = [
    ['POST', '/v1/score', { nif: '599000015' }, key],
    ['POST', '/v1/score', { nif: '599000023', refresh: 'force_refresh' }, key],
    ['GET', '/v1/admin/keys', undefined, key],
    ['POST', '/v1/decision', { nif: '599000031', context: { operation_type: 'factoring', amount_eur: 1000, expected_term_days: 30 } }, key],
    ['POST', '/v1/score', { nif: '599000015' }, 'sk_test_' + '0'.repeat(28)],
    ['GET', '/v1/events', undefined, key],
    ['GET', '/readyz'],
  ];
  const seen: { path: string; status: number; code?: string }[] = [];
  for (const [method, path, body, k] of calls) {
    const res = await fetch(base + path, {
      method,
      headers: { ...(k ? { authorization: `Bearer ${k}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
    expect(text).not.toMatch(/<html|<!doctype/i);
    expect(text).not.toMatch(/select |insert |key_hash|\/work\/|node_modules|\.ts:\d+/i);
    const b = JSON.parse(text);
    expect(res.status).not.toBe(500);
    if (res.status === 503 && path !== '/readyz') {
      expect(b).toMatchObject({ code: 'service_unavailable', status: 503 });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(b.requestId).toBe(res.headers.get('x-request-id'));
    }
    seen.push({ path, status: res.status, code: b.code });
  }
  return seen;
}

const cleanups: (() => Promise<unknown> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe.if(TEST_DB === 'postgres')('PostgreSQL taken away under load', () => {
  test('every answer is JSON: 503 service_unavailable with Retry-After while it is down, normal again after', async () => {
    const db = await freshDatabase();
    cleanups.push(db.drop);
    const proxy = pgProxy();
    cleanups.push(() => proxy.cut());
    const url = new URL(db.env.DATABASE_URL!);
    url.host = `127.0.0.1:${proxy.port}`;
    const env = { ...db.env, DATABASE_URL: url.toString(), SEED_DEMO_TENANT: 'false', LOG_LEVEL: 'silent' };
    const server = await spawnServer(env);
    cleanups.push(() => server.stop());
    const created = await runCli(['tenant', 'create', '--name', 'outage', '--json'], env);
    const { api_key: key } = JSON.parse(created.stdout);
    expect((await fetch(`${server.base}/v1/score`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"nif":"599000015"}' })).status).toBe(200);

    proxy.cut();
    const down = await probe(server.base, key);
    expect(down.filter((s) => s.status === 503).length).toBeGreaterThanOrEqual(3);
    expect(down.find((s) => s.path === '/readyz')!.status).toBe(503);
    expect(server.proc.exitCode).toBeNull();

    proxy.restore();
    let back = 0;
    for (let i = 0; i < 50 && back !== 200; i++) {
      await Bun.sleep(200);
      back = (await fetch(`${server.base}/v1/score`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"nif":"599000023","refresh":"force_refresh"}' })).status;
    }
    expect(back).toBe(200);
  }, 60_000);
});

describe.if(TEST_DB === 'sqlite')('SQLite locked by another process', () => {
  test('writes answer 503 service_unavailable with Retry-After while the lock is held; normal after', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'outage-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const env = { DATA_DIR: dir, SEED_DEMO_TENANT: 'false', LOG_LEVEL: 'silent', SQLITE_BUSY_TIMEOUT_MS: '200' };
    const server = await spawnServer(env);
    cleanups.push(() => server.stop());
    const { api_key: key } = JSON.parse((await runCli(['tenant', 'create', '--name', 'outage', '--json'], env)).stdout);
    // another process takes the write lock and keeps it
    const locker = new Database(join(dir, 'service.sqlite'));
    locker.exec('PRAGMA busy_timeout = 5000');
    locker.exec('BEGIN IMMEDIATE');
    locker.exec(`INSERT INTO app_meta (key, value) VALUES ('outage-test', 'x') ON CONFLICT DO NOTHING`);
    const down = await probe(server.base, key);
    expect(down.find((s) => s.path === '/v1/score' && s.status === 503)).toBeDefined();
    expect(server.proc.exitCode).toBeNull();
    locker.exec('ROLLBACK');
    locker.close();
    const ok = await fetch(`${server.base}/v1/score`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"nif":"599000031","refresh":"force_refresh"}' });
    expect(ok.status).toBe(200);
  }, 60_000);
});
