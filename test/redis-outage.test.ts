/**
 * No process dies of a Redis outage (issue 17 item 2): an api and a worker process on a Redis of
 * their own that the test stops and starts again empty. While it is down, keyed requests get the
 * §2.8 body (never a 500 or a crash); once it is back, both processes serve and work again.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, freshDatabase, runCli, spawnServer, startRedis, waitPort } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

describe('Redis taken away and brought back empty', () => {
  const port = freePort();
  let dir: string;
  let redis: ReturnType<typeof Bun.spawn>;
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let env: Record<string, string>;
  let api: Awaited<ReturnType<typeof spawnServer>>;
  let worker: Awaited<ReturnType<typeof spawnServer>>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'redis-outage-'));
    redis = startRedis(port, dir);
    await waitPort(port, true);
    db = await freshDatabase();
    env = { ...db.env, REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_PREFIX: 'outage', ANON_RATE_LIMIT_PER_MINUTE: '100000', SEED_DEMO_TENANT: 'false', LOG_LEVEL: 'warn' };
    api = await spawnServer({ ...env, ROLE: 'api' });
    worker = await spawnServer({ ...env, ROLE: 'worker', LOG_LEVEL: 'info' }, { readyLine: 'workers started' });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    redis?.kill();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  }, 40_000);

  test('both processes survive; answers stay §2.8 JSON; service resumes', async () => {
    const { api_key: key } = JSON.parse((await runCli(['tenant', 'create', '--name', 'r', '--plan', 'enterprise', '--json'], env)).stdout);
    const score = (nif: string) =>
      fetch(`${api.base}/v1/score`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ nif, refresh: 'force_refresh' }) });
    expect((await score('599000015')).status).toBe(200);

    redis.kill('SIGKILL');
    await waitPort(port, false);
    for (const nif of ['599000015', '599000023', '599000031']) {
      const r = await score(nif);
      expect(r.status).not.toBe(500);
      expect(r.headers.get('content-type') ?? '').toMatch(/^application\/json/);
      const b = await r.json();
      if (r.status >= 400) expect(b).toMatchObject({ status: r.status, code: expect.any(String) });
      if (r.status === 503) expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    await Bun.sleep(1500);
    expect(api.proc.exitCode).toBeNull();
    expect(worker.proc.exitCode).toBeNull();

    redis = startRedis(port, dir); // back, and empty
    await waitPort(port, true);
    let status = 0;
    for (let i = 0; i < 60 && status !== 200; i++) {
      await Bun.sleep(250);
      status = (await score('599000040')).status;
    }
    expect(status).toBe(200);
    expect(api.proc.exitCode).toBeNull();
    expect(worker.proc.exitCode).toBeNull();
  }, 60_000);
});
