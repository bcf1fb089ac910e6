/**
 * Profiling harness (not a benchmark): POST /v1/score cached through app.handle in a loop, so a
 * CPU profile shows only the hot path.  bun --cpu-prof-md run bench/profile-score.ts [requests]
 * CONC=n sends n requests at a time (one event-loop turn, as under load: the Redis limiter decides a
 * turn's requests in one call); with DATABASE_URL, REDIS_URL, REDIS_PREFIX and ENCRYPTION_KEY set it
 * runs on PostgreSQL + Redis.
 */
import { loadConfig } from '../src/config';
import { createContext } from '../src/context';
import { createApp, dispatch } from '../src/app';
import { createLogger } from '../src/lib/log';
import { ESG_EXAMPLES } from '../src/features/esg/examples';
import { benchDataDir } from './temp-dir';

const N = Number(process.argv[2] ?? 200_000);
const ctx = await createContext(loadConfig({ DATA_DIR: benchDataDir('bench-profile-'), LOG_LEVEL: 'silent', SEED_DEMO_TENANT: 'false', ...Object.fromEntries(['DATABASE_URL', 'REDIS_URL', 'REDIS_PREFIX', 'ENCRYPTION_KEY'].filter((k) => process.env[k]).map((k) => [k, process.env[k]!])) }), { log: createLogger('silent') });
// ablations, to find where the time goes: OFF=usage,metrics,limiter
const off = new Set((process.env.OFF ?? '').split(',').filter(Boolean));
if (off.has('usage')) ctx.usage.record = () => {};
if (off.has('metrics')) ctx.metrics.observeRequest = () => {};
if (off.has('limiter')) {
  const d = await ctx.limiter.consume({ bucket: 'x', limitPerMinute: 1e9, nowMs: Date.now() });
  ctx.limiter.consume = async () => d;
}
const app = createApp(ctx);
const t = await ctx.tenants.createTenant({ name: 'bench', plan: 'enterprise', rateLimitPerMinute: 1e9, dailyQuota: 1e9 });
const headers: Record<string, string> = { authorization: `Bearer ${t.api_key}`, 'content-type': 'application/json', 'content-length': '19' };
// TOKEN=1: authenticated by an OAuth access token (client credentials) instead of the API key
if (process.env.TOKEN) {
  const post = (path: string, body: string, h: Record<string, string>) => dispatch(app, new Request(`http://localhost${path}`, { method: 'POST', headers: h, body }));
  const client = (await (await post('/v1/admin/oauth-clients', JSON.stringify({ name: 'bench', env: 'sandbox', scopes: ['score', 'esg'] }), { authorization: headers.authorization!, 'content-type': 'application/json' })).json()) as { client_id: string; client_secret: string };
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret });
  const token = (await (await post('/v1/oauth/token', form.toString(), { 'content-type': 'application/x-www-form-urlencoded' })).json()) as { access_token: string };
  headers.authorization = `Bearer ${token.access_token}`;
}
// ROUTE=esg profiles POST /v1/esg, ROUTE=decision a repeated decision (bench/decision.ts's);
// REFRESH=force_refresh a force-refreshed score (or decision)
const refresh = process.env.REFRESH ? { refresh: process.env.REFRESH } : {};
const ROUTES: Record<string, [string, unknown]> = {
  esg: ['/v1/esg', ESG_EXAMPLES.developing_manufacturer],
  decision: ['/v1/decision', { nif: '599000023', context: { operation_type: 'factoring', amount_eur: 150000, expected_term_days: 90 }, ...refresh }],
  score: ['/v1/score', { nif: '599000015', ...refresh }],
};
const [route, sent] = ROUTES[process.env.ROUTE ?? 'score']!;
const body = JSON.stringify(sent);
headers['content-length'] = String(Buffer.byteLength(body));
const CONC = Number(process.env.CONC ?? 1);
const one = async () => {
  const res = await dispatch(app, new Request(`http://localhost${route}`, { method: 'POST', headers, body }));
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
  await res.text();
};
const t0 = performance.now();
const cpu0 = process.cpuUsage();
for (let i = 0; i < N; i += CONC) await Promise.all(Array.from({ length: CONC }, one));
const cpu = process.cpuUsage(cpu0);
console.log(`${(((performance.now() - t0) * 1000) / N).toFixed(1)} µs per request (wall), ${((cpu.user + cpu.system) / N).toFixed(1)} µs of CPU (${(cpu.system / N).toFixed(1)} in the kernel)`);
await ctx.close();
process.exit(0);
