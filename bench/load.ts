/**
 * Load benchmark (not a test): a bare Elysia JSON POST as the reference, then the service's
 * POST /v1/score (cached, with a new Idempotency-Key each, and force_refresh), POST /v1/esg and a
 * guards-only GET, on SQLite and on PostgreSQL + Redis, measured with wrk (Debian package) as a
 * separate process; then p99 of cached scoring at half the bare POST's throughput (wrk at a fixed
 * offered rate), and the live tier composed from three fake adapters that each answer after 300 ms.
 * Every service row is preceded by a bare POST of its own, its ratio taken to that one: the host's
 * speed drifts within a run.
 *   bun run bench/load.ts [--seconds 5] [--connections 50]
 * Needs: wrk (apt-get install wrk), PostgreSQL and Redis on 127.0.0.1 for the second half.
 */
import { cpus } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { ESG_EXAMPLES } from '../src/features/esg/examples';
import { benchCli, startProcess, wrk as runWrk, type WrkResult } from './wrk';
import { benchDataDir } from './temp-dir';

const args = process.argv.slice(2);
const arg = (name: string, def: number) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : def);
const SECONDS = arg('seconds', 5);
const CONNECTIONS = arg('connections', 50);
const ROOT = join(import.meta.dir, '..');
let port = 24000; // below the ephemeral range (32768+), where outgoing connections take their ports

const wrk = (url: string, o: { method?: string; body?: unknown; key?: string; connections?: number; seconds?: number; rate?: number; idempotency?: boolean } = {}) =>
  runWrk(url, { ...o, connections: o.connections ?? CONNECTIONS, seconds: o.seconds ?? SECONDS });

/** A fixed offered rate (bench/wrk-report.lua's BENCH_RATE), with connections to spare so that the
 * generator never waits on the server's latency; autocannon (Node) took a core of its own here. */
const fixedRate = (url: string, rate: number, body: unknown, key: string) => wrk(url, { method: 'POST', body, key, rate, connections: 100 });

const start = startProcess;
const cli = benchCli;

const rows: string[] = [];
const pairs: string[] = [];
const PAIRS = arg('pairs', 3);
const row = (setup: string, name: string, r: { rps: number; p50_ms: number; p95_ms?: number; p99_ms: number; non2xx: number }, ref?: number) =>
  rows.push(
    `| ${setup} | ${name} | ${Math.round(r.rps)} | ${ref ? Math.round(ref) : '—'} | ${ref ? `${Math.round((100 * r.rps) / ref)} %` : '—'} | ${r.p50_ms.toFixed(2)} | ${r.p95_ms?.toFixed(2) ?? '—'} | ${r.p99_ms.toFixed(2)} | ${r.non2xx} |`,
  );
/** the bare POST now, as the reference of the service row measured next */
const bareNow = async () => (await wrk(bareUrl, { method: 'POST', body: { nif: '599000015' } })).rps;
/** a service row after a bare POST of its own, and its ratio to that one */
async function pairedRow(setup: string, name: string | ((bareRps: number) => string), measure: (bareRps: number) => Promise<WrkResult>) {
  const bareRps = await bareNow();
  const r = await measure(bareRps);
  row(setup, typeof name === 'string' ? name : name(bareRps), r, bareRps);
  return r;
}

async function runService(setup: string, env: Record<string, string>) {
  const PORT = String(port++);
  const full = { ...env, PORT, ANON_RATE_LIMIT_PER_MINUTE: '1000000' };
  const svc = await start(['bun', 'run', 'src/index.ts'], full);
  const t = await cli(full, ['tenant', 'create', '--name', 'bench', '--plan', 'enterprise', '--rate-limit', '100000000', '--daily-quota', '1000000000', '--json']);
  const base = `http://127.0.0.1:${PORT}`;
  const score = { nif: '599000015' };
  await fetch(`${base}/v1/score`, { method: 'POST', headers: { authorization: `Bearer ${t.api_key}`, 'content-type': 'application/json' }, body: JSON.stringify(score) });
  await wrk(`${base}/v1/score`, { method: 'POST', body: score, key: t.api_key, seconds: 1 }); // warm-up (JIT, caches)
  await pairedRow(setup, 'GET /v1/sandbox/fixtures (guards only)', () => wrk(`${base}/v1/sandbox/fixtures`, { key: t.api_key }));
  const cached = await pairedRow(setup, 'POST /v1/score cached', () => wrk(`${base}/v1/score`, { method: 'POST', body: score, key: t.api_key }));
  // the machine's speed drifts over a run: also alternate the bare POST and the cached score,
  // pair by pair, and report each pair's ratio
  for (let i = 0; i < PAIRS; i++) {
    const b = await wrk(`${bareUrl}`, { method: 'POST', body: score });
    const c = await wrk(`${base}/v1/score`, { method: 'POST', body: score, key: t.api_key });
    const bt = await wrk(`${bareUrl}-turn-end`, { method: 'POST', body: score });
    pairs.push(`| ${setup} | ${i + 1} | ${Math.round(b.rps)} | ${Math.round(c.rps)} | ${Math.round((100 * c.rps) / b.rps)} % | ${Math.round(bt.rps)} | ${Math.round((100 * c.rps) / bt.rps)} % |`);
  }
  await pairedRow(setup, 'POST /v1/score cached, a new Idempotency-Key each (claim and answer stored)', () => wrk(`${base}/v1/score`, { method: 'POST', body: score, key: t.api_key, idempotency: true }));
  const forced = { ...score, refresh: 'force_refresh' };
  const refreshed = await pairedRow(setup, 'POST /v1/score force_refresh', () => wrk(`${base}/v1/score`, { method: 'POST', body: forced, key: t.api_key }));
  const esg = await pairedRow(setup, 'POST /v1/esg', () => wrk(`${base}/v1/esg`, { method: 'POST', body: ESG_EXAMPLES.developing_manufacturer, key: t.api_key }));
  // the writes' latency target (#23): p99 at half their own maximum
  await pairedRow(setup, `POST /v1/score force_refresh, offered ${Math.round(refreshed.rps / 2)} req/s (half its own maximum; fixed rate)`, () => fixedRate(`${base}/v1/score`, refreshed.rps / 2, forced, t.api_key));
  await pairedRow(setup, `POST /v1/esg, offered ${Math.round(esg.rps / 2)} req/s (half its own maximum; fixed rate)`, () => fixedRate(`${base}/v1/esg`, esg.rps / 2, ESG_EXAMPLES.developing_manufacturer, t.api_key));
  await pairedRow(setup, (bareRps) => `POST /v1/score cached, offered ${Math.round(bareRps / 2)} req/s (half the bare POST just before; fixed rate)`, (bareRps) => fixedRate(`${base}/v1/score`, bareRps / 2, score, t.api_key));
  await pairedRow(setup, `POST /v1/score cached, offered ${Math.round(cached.rps / 2)} req/s (half its own maximum; fixed rate)`, () => fixedRate(`${base}/v1/score`, cached.rps / 2, score, t.api_key));
  svc.proc.kill('SIGTERM');
  await svc.proc.exited;
}

async function runLive() {
  const slow = (body: unknown) => Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: async () => (await Bun.sleep(300), Response.json(body)) });
  const bureau = slow({
    name: 'Bench, S.A.', sector: 'C', age_years: 10, cost_cents: 150,
    financials: { total_assets: 5e6, current_assets: 2e6, cash: 4e5, total_liabilities: 2.5e6, current_liabilities: 1e6, financial_debt: 1e6, equity: 2.5e6, share_capital: 5e5, retained_earnings: 1.5e6, revenue: 8e6, ebit: 6e5, ebitda: 9e5, interest_expense: 5e4 },
  });
  const crc = slow({ total_exposure_eur: 1e6, overdue_eur: 0, institutions_count: 2, default_in_last_12m: false, written_off_eur: 0, litigation_eur: 0 });
  const tax = slow({ status: 'regular', vat_registered: true });
  const PORT = String(port++);
  const env = {
    DATA_DIR: benchDataDir('bench-live-'), PORT, SEED_DEMO_TENANT: 'false',
    BUREAU_URL: `http://127.0.0.1:${bureau.port}`, BUREAU_API_KEY: 'k', CRC_URL: `http://127.0.0.1:${crc.port}`, CRC_API_KEY: 'k', TAX_URL: `http://127.0.0.1:${tax.port}`, TAX_API_KEY: 'k',
  };
  const svc = await start(['bun', 'run', 'src/index.ts'], env);
  const t = await cli(env, ['tenant', 'create', '--name', 'live', '--env', 'live', '--plan', 'enterprise', '--rate-limit', '100000000', '--json']);
  const r = await wrk(`http://127.0.0.1:${PORT}/v1/score`, { method: 'POST', body: { nif: '500000000', refresh: 'force_refresh' }, key: t.api_key, connections: 20 });
  row('SQLite, live tier', 'POST /v1/score live, three 300 ms adapters', r);
  svc.proc.kill('SIGTERM');
  await svc.proc.exited;
  for (const s of [bureau, crc, tax]) s.stop(true);
}

const barePort = String(port++);
const bare = await start(['bun', 'run', 'bench/bare-server.ts'], { PORT: barePort });
const bareUrl = `http://127.0.0.1:${barePort}/bare`;
await wrk(bareUrl, { method: 'POST', body: { nif: '599000015' }, seconds: 1 }); // warm-up
const bareRes = await wrk(bareUrl, { method: 'POST', body: { nif: '599000015' } });
row('bare Elysia', 'POST /bare (TypeBox body)', bareRes, bareRes.rps);
row('bare Elysia', 'GET /bare', await wrk(`http://127.0.0.1:${barePort}/bare`), bareRes.rps);
// the same POST with its answer released at the end of the event-loop turn, as the score fast
// path does (src/lib/turn-end.ts): how much of the ratio that trick alone is worth
row('bare Elysia', 'POST /bare-turn-end (same, answer at the end of the turn)', await wrk(`http://127.0.0.1:${barePort}/bare-turn-end`, { method: 'POST', body: { nif: '599000015' } }), bareRes.rps);
await runService('SQLite', { DATA_DIR: benchDataDir('bench-sqlite-'), SEED_DEMO_TENANT: 'false' });

const dbName = `bench_${Date.now()}`;
const admin = postgres('postgres://postgres@127.0.0.1:5432/test', { max: 1, onnotice: () => {} });
await admin.unsafe(`create database ${dbName}`);
try {
  await runService(
    'PostgreSQL + Redis',
    { DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${dbName}`, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: dbName, ENCRYPTION_KEY: 'b'.repeat(64) },
  );
} finally {
  await admin.unsafe(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
bare.proc.kill();
await runLive();

console.log(`\n${new Date().toISOString().slice(0, 10)} · ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'} · Bun ${Bun.version} · wrk -t1 -c${CONNECTIONS} -d${SECONDS}s (live tier: -c20); load generator on the same machine\n`);
console.log('| setup | route | req/s | bare POST just before, req/s | vs that bare POST | p50 ms | p95 ms | p99 ms | non-2xx |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of rows) console.log(r);
console.log('\nAlternating runs (bare POST, cached score, bare POST with its answer at the end of the turn, back to back):\n');
console.log('| setup | run | bare POST req/s | cached score req/s | ratio | bare POST, turn end, req/s | ratio to it |');
console.log('|---|---|---|---|---|---|---|');
for (const p of pairs) console.log(p);
