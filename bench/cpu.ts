/**
 * CPU per request of the cached POST /v1/score (not a test): the service, Redis and PostgreSQL
 * processes' CPU time (from /proc) divided by the requests wrk got answered, at a fixed offered
 * rate or flat out. On this shared host req/s moves with the neighbours; CPU per request moves
 * much less, so it is what an optimisation is judged by (against a run of the code before it).
 *   bun run bench/cpu.ts [--mode pg|sqlite|bare] [--rate N (0 = flat out)] [--seconds 5] [--reps 2] [--connections 100] [--prof DIR]
 * --route score|force_refresh|esg: the cached score (default), a force-refreshed score or POST /v1/esg.
 * --prof writes the service's CPU profile (Bun's --cpu-prof-md) into DIR.
 * Needs wrk; PostgreSQL and Redis on 127.0.0.1 for --mode pg.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { RUNTIME_ENV, wrk } from './wrk';
import { ESG_EXAMPLES } from '../src/features/esg/examples';
import { benchDataDir } from './temp-dir';

const { values } = parseArgs({ options: { mode: { type: 'string', default: 'pg' }, rate: { type: 'string', default: '0' }, seconds: { type: 'string', default: '5' }, reps: { type: 'string', default: '2' }, prof: { type: 'string' }, root: { type: 'string' }, connections: { type: 'string', default: '100' }, route: { type: 'string', default: 'score' } } });
const ROOT = values.root ?? join(import.meta.dir, '..');
const PORT = String(24500 + Math.floor(Math.random() * 400));
const TICK_US = 1e6 / 100; // /proc/<pid>/stat counts in clock ticks (USER_HZ = 100)

/** utime + stime of a process (all its threads), in µs; `which` = 'sys': stime alone */
function cpuUs(pid: number, which: 'all' | 'sys' = 'all', thread = false): number {
  try {
    const stat = readFileSync(thread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((which === 'sys' ? 0 : Number(f[11])) + Number(f[12])) * TICK_US;
  } catch {
    return 0;
  }
}
const pidsOf = (comm: string) =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/comm`, 'utf8').trim() === comm;
      } catch {
        return false;
      }
    })
    .map(Number);
const sumCpu = (pids: number[]) => pids.reduce((s, p) => s + cpuUs(p), 0);
/** voluntary context switches of a process's threads (each one a park of that thread) */
const parks = (pid: number) => {
  try {
    return readdirSync(`/proc/${pid}/task`).reduce((n, t) => n + Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/task/${t}/status`, 'utf8'))?.[1] ?? 0), 0);
  } catch {
    return 0;
  }
};

const mode = values.mode!;
const env: Record<string, string> = { ...(process.env as Record<string, string>), ...RUNTIME_ENV, PORT, LOG_LEVEL: 'warn', SEED_DEMO_TENANT: 'false', ANON_RATE_LIMIT_PER_MINUTE: '1000000' };
const dbName = `benchcpu_${Date.now()}`;
const admin = mode === 'pg' ? postgres('postgres://postgres@127.0.0.1:5432/test', { max: 1, onnotice: () => {} }) : null;
if (mode === 'pg') {
  await admin!.unsafe(`create database ${dbName}`);
  Object.assign(env, { DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${dbName}`, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: dbName, ENCRYPTION_KEY: 'b'.repeat(64) });
} else if (mode === 'sqlite') env.DATA_DIR = benchDataDir('benchcpu-');

const profile = values.prof ? ['--cpu-prof-md', `--cpu-prof-dir=${values.prof}`] : [];
const server = Bun.spawn(['bun', ...profile, mode === 'bare' ? 'bench/bare-server.ts' : 'src/index.ts'], { cwd: ROOT, env, stdout: 'ignore', stderr: 'inherit' });
try {
  const probe = mode === 'bare' ? '/bare' : '/healthz';
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${PORT}${probe}`)).ok) break;
    } catch {}
    await Bun.sleep(100);
  }
  let key = '';
  if (mode !== 'bare') {
    const cli = Bun.spawn(['bun', 'src/cli.ts', 'tenant', 'create', '--name', 'bench', '--plan', 'enterprise', '--rate-limit', '100000000', '--daily-quota', '1000000000', '--json'], { cwd: ROOT, env, stdout: 'pipe', stderr: 'inherit' });
    key = JSON.parse(await new Response(cli.stdout).text()).api_key;
  }
  const route = values.route!;
  const url = `http://127.0.0.1:${PORT}${mode === 'bare' ? '/bare' : route === 'esg' ? '/v1/esg' : '/v1/score'}`;
  const body = JSON.stringify(route === 'esg' ? ESG_EXAMPLES.developing_manufacturer : { nif: '599000015', ...(route === 'force_refresh' ? { refresh: 'force_refresh' } : {}) });
  await wrk(url, { method: 'POST', body, key, connections: Number(values.connections), seconds: 2 }); // warm-up (JIT, caches)
  const redisPids = mode === 'pg' ? pidsOf('redis-server') : [];
  const pgPids = mode === 'pg' ? pidsOf('postgres') : [];
  const rate = Number(values.rate);
  for (let rep = 0; rep < Number(values.reps); rep++) {
    const t0 = performance.now();
    const [s0, r0, p0, k0, m0] = [cpuUs(server.pid), sumCpu(redisPids), sumCpu(pgPids), cpuUs(server.pid, 'sys'), cpuUs(server.pid, 'all', true)];
    const v0 = parks(server.pid);
    const r = await wrk(url, { method: 'POST', body, key, rate, connections: Number(values.connections), seconds: Number(values.seconds) });
    const wall = (performance.now() - t0) * 1000;
    const v1 = parks(server.pid);
    const [s1, r1, p1, k1, m1] = [cpuUs(server.pid), sumCpu(redisPids), sumCpu(pgPids), cpuUs(server.pid, 'sys'), cpuUs(server.pid, 'all', true)];
    const per = (a: number, b: number) => ((b - a) / r.requests).toFixed(2);
    console.log(
      `${mode} ${route} rate=${rate || 'max'} rps=${Math.round(r.rps)} p50=${r.p50_ms.toFixed(2)} p95=${r.p95_ms.toFixed(2)} p99=${r.p99_ms.toFixed(2)} non2xx=${r.non2xx}` +
        ` | µs/req service=${per(s0, s1)} (main thread ${per(m0, m1)}, kernel ${per(k0, k1)}, parks/req ${((v1 - v0) / r.requests).toFixed(3)}) redis=${per(r0, r1)} pg=${per(p0, p1)} | service busy ${Math.round((100 * (s1 - s0)) / wall)} % (main thread ${Math.round((100 * (m1 - m0)) / wall)} %)`,
    );
  }
} finally {
  server.kill('SIGTERM');
  await server.exited;
  if (admin) {
    await admin.unsafe(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  }
}
