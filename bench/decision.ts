/**
 * Credit decisions benchmark (not a test).
 * 1. The pure path: engine + policy decisions per second over the sandbox fixtures.
 * 2. HTTP: POST /v1/decision repeated within the cache window (the same request: answered as the
 *    same decision from memory, billed), against the bare Elysia JSON POST measured alternately in
 *    the same run, on SQLite and on PostgreSQL + Redis; then new decisions (force_refresh: a new
 *    score, a stored decision each) for scale.
 *   bun run bench/decision.ts [--seconds 5] [--connections 50] [--pairs 3]
 * Needs wrk (Debian package), PostgreSQL and Redis on 127.0.0.1.
 */
import { cpus } from 'node:os';
import postgres from 'postgres';
import { decide, OPERATION_TYPES } from '../src/features/decision/policy';
import { scoreCompany, type CompanyProfile } from '../src/features/score/engine';
import { SANDBOX_FIXTURES, sandboxLookup } from '../src/features/score/fixtures';
import { benchCli, startProcess, wrk } from './wrk';
import { benchDataDir } from './temp-dir';

const args = process.argv.slice(2);
const arg = (name: string, def: number) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : def);
const SECONDS = arg('seconds', 5);
const CONNECTIONS = arg('connections', 50);
const PAIRS = arg('pairs', 3);
let port = 24100;

// --- 1. pure ------------------------------------------------------------------------------------
const profiles: CompanyProfile[] = [];
for (const f of SANDBOX_FIXTURES) {
  const r = sandboxLookup(f.nif, 0);
  if (r.kind === 'profile') profiles.push(r.profile);
}
let sink = 0;
const one = (i: number) => {
  const p = profiles[i % profiles.length]!;
  const s = scoreCompany(p, 'en');
  const d = decide({
    pd: s.pd_scale,
    revenue_eur: p.financials?.revenue ?? null,
    equity_eur: p.financials?.equity ?? null,
    adverse: false,
    operation_type: OPERATION_TYPES[i % OPERATION_TYPES.length]!,
    amount_eur: 10_000 + (i % 100) * 1000,
    term_days: 30 + (i % 12) * 30,
  });
  sink += d.spread_bps + d.limit_eur;
};
for (let i = 0; i < 20_000; i++) one(i);
let n = 0;
const t0 = performance.now();
while (performance.now() - t0 < 2000) for (let i = 0; i < 1000; i++, n++) one(n);
const pureRate = n / ((performance.now() - t0) / 1000);

// --- 2. HTTP --------------------------------------------------------------------------------------
const rows: string[] = [];
const pairRows: string[] = [];
const fmt = (r: { rps: number; p50_ms: number; p95_ms: number; p99_ms: number; non2xx: number }) =>
  `${Math.round(r.rps)} | ${r.p50_ms.toFixed(2)} | ${r.p95_ms.toFixed(2)} | ${r.p99_ms.toFixed(2)} | ${r.non2xx}`;

const barePort = String(port++);
const bare = await startProcess(['bun', 'run', 'bench/bare-server.ts'], { PORT: barePort });
const bareUrl = `http://127.0.0.1:${barePort}/bare`;
await wrk(bareUrl, { method: 'POST', body: { nif: '599000015' }, connections: CONNECTIONS, seconds: 1 });

const decision = { nif: '599000023', context: { operation_type: 'factoring', amount_eur: 150000, expected_term_days: 90 } };

async function runService(setup: string, env: Record<string, string>) {
  const PORT = String(port++);
  const full = { ...env, PORT, ANON_RATE_LIMIT_PER_MINUTE: '1000000', SEED_DEMO_TENANT: 'false' };
  const svc = await startProcess(['bun', 'run', 'src/index.ts'], full);
  const t = await benchCli(full, ['tenant', 'create', '--name', 'bench', '--plan', 'enterprise', '--rate-limit', '100000000', '--daily-quota', '1000000000', '--json']);
  const url = `http://127.0.0.1:${PORT}/v1/decision`;
  const first = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${t.api_key}`, 'content-type': 'application/json' }, body: JSON.stringify(decision) });
  if (first.status !== 200) throw new Error(`decision: ${first.status} ${await first.text()}`);
  await wrk(url, { method: 'POST', body: decision, key: t.api_key, connections: CONNECTIONS, seconds: 1 }); // warm-up
  for (let i = 0; i < PAIRS; i++) {
    const b = await wrk(bareUrl, { method: 'POST', body: { nif: '599000023' }, connections: CONNECTIONS, seconds: SECONDS });
    const d = await wrk(url, { method: 'POST', body: decision, key: t.api_key, connections: CONNECTIONS, seconds: SECONDS });
    rows.push(`| ${setup} | ${i + 1} | bare POST | ${fmt(b)} |`);
    rows.push(`| ${setup} | ${i + 1} | POST /v1/decision | ${fmt(d)} |`);
    pairRows.push(`| ${setup} | ${i + 1} | ${Math.round(b.rps)} | ${Math.round(d.rps)} | ${Math.round((100 * d.rps) / b.rps)} % | ${d.p95_ms.toFixed(2)} |`);
  }
  const forced = await wrk(url, { method: 'POST', body: { ...decision, refresh: 'force_refresh' }, key: t.api_key, connections: CONNECTIONS, seconds: SECONDS });
  rows.push(`| ${setup} | — | POST /v1/decision force_refresh (new score, stored decision) | ${fmt(forced)} |`);
  svc.proc.kill('SIGTERM');
  await svc.proc.exited;
}

await runService('SQLite', { DATA_DIR: benchDataDir('bench-decision-') });
const dbName = `bench_dec_${Date.now()}`;
const admin = postgres('postgres://postgres@127.0.0.1:5432/test', { max: 1, onnotice: () => {} });
await admin.unsafe(`create database ${dbName}`);
try {
  await runService('PostgreSQL + Redis', { DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${dbName}`, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: dbName, ENCRYPTION_KEY: 'c'.repeat(64) });
} finally {
  await admin.unsafe(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
bare.proc.kill();

console.log(`\n${new Date().toISOString().slice(0, 10)} · ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'} · Bun ${Bun.version} · wrk -t1 -c${CONNECTIONS} -d${SECONDS}s; load generator on the same machine\n`);
console.log(`Pure engine + policy: ${Math.round(pureRate)} decisions/s (${(1e6 / pureRate).toFixed(2)} µs each; checksum ${sink})\n`);
console.log('| setup | run | route | req/s | p50 ms | p95 ms | p99 ms | non-2xx |');
console.log('|---|---|---|---|---|---|---|---|');
for (const r of rows) console.log(r);
console.log('\n| setup | run | bare POST req/s | decision req/s | ratio | decision p95 ms |');
console.log('|---|---|---|---|---|---|');
for (const p of pairRows) console.log(p);
