/**
 * POST /v1/score/batch benchmark (not a test): 1,000 force-refreshed sandbox scores in one call,
 * through the application in process (no HTTP), on SQLite and on PostgreSQL.
 *   bun run bench/score-batch.ts [--runs 5]
 * Target (issue 23): under 250 ms on SQLite.
 */
import { cpus } from 'node:os';
import postgres from 'postgres';
import { createApp, dispatch } from '../src/app';
import { loadConfig } from '../src/config';
import { createContext } from '../src/context';
import { createLogger } from '../src/lib/log';
import { SANDBOX_FIXTURES } from '../src/features/score/fixtures';
import { benchDataDir } from './temp-dir';

const args = process.argv.slice(2);
const RUNS = args.includes('--runs') ? Number(args[args.indexOf('--runs') + 1]) : 5;
const scorable = SANDBOX_FIXTURES.filter((f) => !/invalid|not_found/.test(f.outcome)).map((f) => f.nif);
const items = Array.from({ length: 1000 }, (_, i) => ({ nif: scorable[i % scorable.length]! }));

async function run(label: string, env: Record<string, string>) {
  const ctx = await createContext(loadConfig({ ...process.env, ...env, SEED_DEMO_TENANT: 'false', LOG_LEVEL: 'silent' }), { log: createLogger('silent') });
  const app = createApp(ctx);
  const t = await ctx.tenants.createTenant({ name: 'bench', plan: 'enterprise', rateLimitPerMinute: 1_000_000 });
  const times: number[] = [];
  for (let i = 0; i < RUNS + 1; i++) {
    const t0 = performance.now();
    const res = await dispatch(app, new Request('http://localhost/v1/score/batch', { method: 'POST', headers: { authorization: `Bearer ${t.api_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ items, refresh: 'force_refresh' }) }));
    const body = (await res.json()) as { summary: { succeeded: number } };
    if (body.summary.succeeded !== 1000) throw new Error(`expected 1000 scores, got ${JSON.stringify(body).slice(0, 200)}`);
    if (i > 0) times.push(performance.now() - t0); // the first run warms up
  }
  await ctx.close();
  times.sort((a, b) => a - b);
  console.log(`${label}: 1,000 force-refreshed scores per call — median ${times[Math.floor(times.length / 2)]!.toFixed(0)} ms, best ${times[0]!.toFixed(0)} ms, worst ${times.at(-1)!.toFixed(0)} ms (${RUNS} runs)`);
}

console.log(`machine: ${cpus().length} × ${cpus()[0]?.model}; ${new Date().toISOString()}`);
await run('SQLite', { DATABASE_URL: '', REDIS_URL: '', DATA_DIR: benchDataDir('bench-batch-') });
const name = `bench_batch_${Date.now()}`;
const admin = postgres('postgres://postgres@127.0.0.1:5432/postgres', { max: 1, onnotice: () => {} });
await admin.unsafe(`create database ${name}`);
try {
  await run('PostgreSQL', { DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${name}`, REDIS_URL: '', ENCRYPTION_KEY: '0'.repeat(64) });
} finally {
  await admin.unsafe(`drop database ${name} with (force)`);
  await admin.end();
}
