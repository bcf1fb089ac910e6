/**
 * POST /v1/score/batch benchmark (not a test): 1,000 force-refreshed scores of 1,000 distinct
 * companies in one call (a live key, its three data sources in process, answering at once: a
 * batch computes each distinct NIF once, and the sandbox has only 9 scorable fixtures), through the
 * application in process (no HTTP), on SQLite and on PostgreSQL.
 *   bun run bench/score-batch.ts [--runs 5]
 * Target (issue 23): under 250 ms on SQLite.
 */
import { cpus } from 'node:os';
import postgres from 'postgres';
import { createApp, dispatch } from '../src/app';
import { loadConfig } from '../src/config';
import { createContext } from '../src/context';
import { createLogger } from '../src/lib/log';
import { isValidNif } from '../src/lib/nif';
import type { LiveAdapters } from '../src/features/score/adapters';
import { bureauCompany } from '../test/helpers';
import { benchDataDir } from './temp-dir';

const args = process.argv.slice(2);
const RUNS = args.includes('--runs') ? Number(args[args.indexOf('--runs') + 1]) : 5;
// 1,000 distinct valid NIFs (8 digits and their mod-11 check digit)
const nifs: string[] = [];
for (let base = 50_000_000; nifs.length < 1000; base++) {
  const d = String(base);
  const sum = [...d].reduce((s, c, i) => s + Number(c) * (9 - i), 0);
  const check = 11 - (sum % 11);
  nifs.push(d + (check >= 10 ? 0 : check));
}
if (!nifs.every(isValidNif)) throw new Error('bench NIFs fail their check digit');
const items = nifs.map((nif) => ({ nif }));
// each company as a live bureau, credit register and tax authority answer it, varied by its NIF
const adapters: LiveAdapters = {
  bureau: async (nif) => ({ ...bureauCompany(`Empresa ${nif}`), age_years: 2 + (Number(nif.slice(-3)) % 30) }),
  creditRegister: async () => null,
  taxAuthority: async () => null,
};

async function run(label: string, env: Record<string, string>) {
  const ctx = await createContext(loadConfig({ ...process.env, ...env, SEED_DEMO_TENANT: 'false', LOG_LEVEL: 'silent' }), { log: createLogger('silent') });
  ctx.liveAdapters = adapters;
  const app = createApp(ctx);
  const tenant = await ctx.tenants.createTenant({ name: 'bench', plan: 'enterprise', rateLimitPerMinute: 1_000_000, dailyQuota: 1e9 });
  const t = await ctx.tenants.createKey({ tenantId: tenant.tenant_id, env: 'live' });
  const times: number[] = [];
  for (let i = 0; i < RUNS + 1; i++) {
    const t0 = performance.now();
    const res = await dispatch(app, new Request('http://localhost/v1/score/batch', { method: 'POST', headers: { authorization: `Bearer ${t.api_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ items, refresh: 'force_refresh' }) }));
    const body = (await res.json()) as { summary: { succeeded: number; computed: number } };
    if (body.summary.succeeded !== 1000 || body.summary.computed !== 1000) throw new Error(`expected 1000 scores, got ${JSON.stringify(body).slice(0, 200)}`);
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
