/**
 * The write rows of bench/load.ts alone, alternated with the bare POST pair by pair (the host's
 * speed drifts within a run): POST /v1/score force_refresh and POST /v1/esg on one database.
 *   bun run bench/writes.ts [--db sqlite|postgres] [--seconds 4] [--pairs 3] [--connections 50]
 * Needs wrk; PostgreSQL and Redis on 127.0.0.1 for --db postgres.
 */
import { cpus } from 'node:os';
import postgres from 'postgres';
import { ESG_EXAMPLES } from '../src/features/esg/examples';
import { benchCli, startProcess, wrk as runWrk } from './wrk';
import { benchDataDir } from './temp-dir';

const args = process.argv.slice(2);
const arg = (name: string, def: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : def);
const SECONDS = Number(arg('seconds', '4'));
const PAIRS = Number(arg('pairs', '3'));
const CONNECTIONS = Number(arg('connections', '50'));
const DB = arg('db', 'sqlite');
const wrk = (url: string, o: { method?: string; body?: unknown; key?: string; seconds?: number } = {}) =>
  runWrk(url, { ...o, connections: CONNECTIONS, seconds: o.seconds ?? SECONDS });

const bare = await startProcess(['bun', 'run', 'bench/bare-server.ts'], { PORT: '24100' });
const bareUrl = 'http://127.0.0.1:24100/bare';

const dbName = `bench_writes_${Date.now()}`;
const admin = DB === 'postgres' ? postgres('postgres://postgres@127.0.0.1:5432/test', { max: 1, onnotice: () => {} }) : null;
if (admin) await admin.unsafe(`create database ${dbName}`);
const env: Record<string, string> = {
  PORT: '24101',
  ANON_RATE_LIMIT_PER_MINUTE: '1000000',
  SEED_DEMO_TENANT: 'false',
  ...(admin
    ? { DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${dbName}`, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: dbName, ENCRYPTION_KEY: 'b'.repeat(64) }
    : { DATA_DIR: benchDataDir('bench-writes-') }),
};
const rows: string[] = [];
let svc: Awaited<ReturnType<typeof startProcess>> | undefined;
try {
  await wrk(bareUrl, { method: 'POST', body: { nif: '599000015' }, seconds: 1 }); // warm-up
  svc = await startProcess(['bun', 'run', 'src/index.ts'], env);
  const t = await benchCli(env, ['tenant', 'create', '--name', 'bench', '--plan', 'enterprise', '--rate-limit', '100000000', '--daily-quota', '1000000000', '--json']);
  const base = 'http://127.0.0.1:24101';
  const forced = { nif: '599000015', refresh: 'force_refresh' };
  const esg = ESG_EXAMPLES.developing_manufacturer;
  await wrk(`${base}/v1/score`, { method: 'POST', body: forced, key: t.api_key, seconds: 1 }); // warm-up
  await wrk(`${base}/v1/esg`, { method: 'POST', body: esg, key: t.api_key, seconds: 1 });
  for (let i = 0; i < PAIRS; i++) {
    const b = await wrk(bareUrl, { method: 'POST', body: { nif: '599000015' } });
    const f = await wrk(`${base}/v1/score`, { method: 'POST', body: forced, key: t.api_key });
    const e = await wrk(`${base}/v1/esg`, { method: 'POST', body: esg, key: t.api_key });
    const pct = (x: number) => `${Math.round((100 * x) / b.rps)} %`;
    if (f.non2xx || e.non2xx) throw new Error(`non-2xx answers: force_refresh ${f.non2xx}, esg ${e.non2xx}`);
    rows.push(`| ${DB} | ${i + 1} | ${Math.round(b.rps)} | ${Math.round(f.rps)} | ${pct(f.rps)} | ${f.p99_ms.toFixed(2)} | ${Math.round(e.rps)} | ${pct(e.rps)} | ${e.p99_ms.toFixed(2)} |`);
  }
} finally {
  svc?.proc.kill('SIGTERM');
  await svc?.proc.exited;
  bare.proc.kill();
  if (admin) {
    await admin.unsafe(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  }
}
console.log(`\n${new Date().toISOString().slice(0, 10)} · ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'} · Bun ${Bun.version} · wrk -t1 -c${CONNECTIONS} -d${SECONDS}s\n`);
console.log('| database | pair | bare POST req/s | force_refresh req/s | ratio | p99 ms | POST /v1/esg req/s | ratio | p99 ms |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of rows) console.log(r);
