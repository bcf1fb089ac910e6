/**
 * The request guards' overhead per request, in process (no HTTP, no load generator): the same
 * JSON answer from a bare Elysia route and from GET /v1/sandbox/fixtures behind the guards (request
 * id, key lookup, rate limit + daily quota, scope, headers, metrics, access log), then POST
 * /v1/score (cached) without and with a fresh Idempotency-Key, and with an OAuth access token instead
 * of the API key. Run: bun run bench/guards.ts
 */
import { Elysia } from 'elysia';
import { cpus } from 'node:os';
import { loadConfig } from '../src/config';
import { createContext } from '../src/context';
import { createApp, dispatch } from '../src/app';
import { createLogger } from '../src/lib/log';
import { SANDBOX_FIXTURES } from '../src/features/score/fixtures';
import { benchDataDir } from './temp-dir';

const fixtures = { fixtures: SANDBOX_FIXTURES.map(({ nif, outcome, description }) => ({ nif, outcome, description })) };
const bare = new Elysia().get('/v1/sandbox/fixtures', () => fixtures);
const ctx = await createContext(loadConfig({ DATA_DIR: benchDataDir('bench-guards-'), LOG_LEVEL: 'silent', SEED_DEMO_TENANT: 'false' }), { log: createLogger('silent') });
const app = createApp(ctx);
const t = await ctx.tenants.createTenant({ name: 'bench', plan: 'enterprise', rateLimitPerMinute: 1e8, dailyQuota: 1e9 });
const auth = { authorization: `Bearer ${t.api_key}` };

async function measure(name: string, make: (i: number) => Request, handle: (r: Request) => Promise<Response> | Response) {
  for (let i = 0; i < 1000; i++) await handle(make(i));
  const samples: number[] = [];
  for (let round = 0; round < 5; round++) {
    const N = 5000;
    const t0 = performance.now();
    for (let i = 0; i < N; i++) await handle(make(round * N + i));
    samples.push(((performance.now() - t0) * 1000) / N);
  }
  samples.sort((a, b) => a - b);
  const median = samples[2]!;
  console.log(`| ${name} | ${median.toFixed(1)} |`);
  return median;
}

console.log(`\n${new Date().toISOString().slice(0, 10)} · ${cpus().length} × ${cpus()[0]?.model} · Bun ${Bun.version} · median of 5 × 5000 requests, app.handle in process\n`);
console.log('| request | µs per request |\n|---|---|');
const b = await measure('bare Elysia GET (same JSON)', () => new Request('http://localhost/v1/sandbox/fixtures'), (r) => bare.handle(r));
const g = await measure('GET /v1/sandbox/fixtures behind the guards', () => new Request('http://localhost/v1/sandbox/fixtures', { headers: auth }), (r) => dispatch(app, r));
const body = '{"nif":"599000015"}';
const post = (extra: Record<string, string>) => new Request('http://localhost/v1/score', { method: 'POST', headers: { ...auth, 'content-type': 'application/json', ...extra }, body });
const s = await measure('POST /v1/score cached', () => post({}), (r) => dispatch(app, r));
const si = await measure('POST /v1/score cached + new Idempotency-Key', (i) => post({ 'idempotency-key': `bench-${i}-${Math.random()}` }), (r) => dispatch(app, r));
// the same with an OAuth access token (client credentials) instead of the API key
const send = (path: string, payload: string, headers: Record<string, string>) => dispatch(app, new Request(`http://localhost${path}`, { method: 'POST', headers, body: payload }));
const client = (await (await send('/v1/admin/oauth-clients', JSON.stringify({ name: 'bench', scopes: ['score'] }), { ...auth, 'content-type': 'application/json' })).json()) as { client_id: string; client_secret: string };
const token = (await (await send('/v1/oauth/token', new URLSearchParams({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret }).toString(), { 'content-type': 'application/x-www-form-urlencoded' })).json()) as { access_token: string };
const st = await measure('POST /v1/score cached, OAuth access token', () => new Request('http://localhost/v1/score', { method: 'POST', headers: { authorization: `Bearer ${token.access_token}`, 'content-type': 'application/json' }, body }), (r) => dispatch(app, r));
console.log(`\nGuards overhead: ${(g - b).toFixed(1)} µs per request; Idempotency-Key adds ${(si - s).toFixed(1)} µs (two writes: claim and result); an access token instead of the key ${(st - s).toFixed(1)} µs.`);
await ctx.close();
process.exit(0);
