import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { freshDatabase, ROOT, runCli, spawnServer, TEST_DB } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

/**
 * The embedded sandbox shares its database file with whoever opens it: the operator CLI and a
 * plain SQLite reader. A service that lost its locks on the -shm file (see WalIndexMap) was killed
 * by SIGBUS within seconds of such runs under write load.
 */
describe.skipIf(TEST_DB !== 'sqlite')('SQLite file shared with other processes', () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  beforeAll(async () => {
    db = await freshDatabase();
  });
  afterAll(() => db.drop());

  test('the service survives CLI runs and a sqlite3 reader during write load (30 s)', async () => {
    const server = await spawnServer({ ...db.env, LOG_LEVEL: 'warn' });
    try {
      const created = await runCli(['tenant', 'create', '--name', 'Load', '--plan', 'enterprise', '--rate-limit', '1000000', '--daily-quota', '100000000', '--json'], db.env);
      const key = JSON.parse(created.stdout).api_key;
      const file = `${db.env.DATA_DIR}/service.sqlite`;
      const until = Date.now() + 30_000;
      const counts = { ok: 0, failed: 0, cli: 0, cliFailed: 0, reads: 0 };
      const writer = async () => {
        for (let i = 0; Date.now() < until; i++) {
          const res = await fetch(`${server.base}/v1/score`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ nif: i % 2 ? '599000015' : '599000023', refresh: 'force_refresh' }),
          }).catch(() => null);
          if (res?.status === 200) counts.ok++;
          else counts.failed++;
          await res?.text();
          if (!res) await Bun.sleep(100);
        }
      };
      const operator = async () => {
        for (let i = 0; Date.now() < until; i++) {
          const cli = Bun.spawn(['bun', 'run', 'src/cli.ts', 'tenant', 'create', '--name', `load ${i}`, '--json'], {
            cwd: ROOT,
            env: { ...process.env, ...db.env, LOG_LEVEL: 'silent' },
            stdout: 'ignore',
            stderr: 'ignore',
          });
          if ((await cli.exited) === 0) counts.cli++;
          else counts.cliFailed++;
          const reader = Bun.spawn(['sqlite3', file, 'select count(*) from tenants; select count(*) from score_results;'], { stdout: 'ignore', stderr: 'ignore' });
          if ((await reader.exited) === 0) counts.reads++;
        }
      };
      await Promise.all([writer(), writer(), writer(), operator()]);
      expect(server.proc.exitCode).toBeNull();
      expect(server.output()).not.toContain('panic');
      expect((await fetch(`${server.base}/healthz`)).status).toBe(200);
      expect(counts.failed).toBe(0);
      expect(counts.ok).toBeGreaterThan(100);
      expect(counts.cli).toBeGreaterThan(5);
      expect(counts.cliFailed).toBe(0);
      expect(counts.reads).toBeGreaterThan(5);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 90_000);
});
