import { afterAll, beforeAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { loadConfig, type Config } from '../src/config';
import { createContext, type AppContext } from '../src/context';
import { createApp, dispatch } from '../src/app';
import { startWorkers } from '../src/workers';
import { createLogger, type Logger } from '../src/lib/log';

/** The suite runs twice in CI: TEST_DB=sqlite (default) and TEST_DB=postgres. */
export const TEST_DB = (process.env.TEST_DB ?? 'sqlite') as 'sqlite' | 'postgres';
export const PG_ADMIN_URL = process.env.PG_TEST_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_TEST_URL = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379';

export class TestClock {
  constructor(public ms = Date.parse('2026-11-22T10:00:00.000Z')) {}
  now = () => new Date(this.ms);
  advance(ms: number) {
    this.ms += ms;
  }
}

/** A fresh, empty database: a temp dir for SQLite, a new database on the PostgreSQL server. */
export async function freshDatabase(): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  if (TEST_DB === 'postgres') {
    const name = `t_${crypto.randomUUID().replaceAll('-', '').slice(0, 20)}`;
    const admin = postgres(PG_ADMIN_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    await admin.end();
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${name}`;
    return {
      env: { DATABASE_URL: url.toString(), ENCRYPTION_KEY: 'a'.repeat(64) },
      drop: async () => {
        const a = postgres(PG_ADMIN_URL, { max: 1, onnotice: () => {} });
        await a.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
        await a.end();
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  return { env: { DATA_DIR: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

export interface TestApp {
  ctx: AppContext;
  app: ReturnType<typeof createApp>;
  clock: TestClock;
  config: Config;
  dbEnv: Record<string, string>;
  call(method: string, path: string, opts?: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> }): Promise<Response>;
  json<T = any>(method: string, path: string, opts?: Parameters<TestApp['call']>[2]): Promise<{ status: number; body: T; headers: Headers }>;
  tenant(opts?: Partial<Parameters<AppContext['tenants']['createTenant']>[0]>): Promise<{ tenant_id: string; api_key_id: string; api_key: string }>;
  close(): Promise<void>;
}

/**
 * One app for a test file (or a describe block): made before its tests, closed after, with a
 * tenant whose key is `key`. Read through the returned object (made in beforeAll).
 */
export function suiteApp(envOverrides: Record<string, string> = {}, opts: Parameters<typeof makeApp>[1] = { workers: false }): TestApp & { key: string } {
  let app: TestApp | undefined;
  let key = '';
  beforeAll(async () => {
    app = await makeApp(envOverrides, opts);
    key = (await app.tenant()).api_key;
  });
  afterAll(() => app?.close());
  return new Proxy({} as TestApp & { key: string }, {
    get: (_, p) => {
      if (p === 'key') return key;
      if (!app) throw new Error('suiteApp: used before its beforeAll ran');
      return app[p as keyof TestApp];
    },
  });
}

export async function makeApp(envOverrides: Record<string, string> = {}, opts: { clock?: TestClock; workers?: boolean; log?: Logger } = {}): Promise<TestApp> {
  const fresh = await freshDatabase();
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    ANON_RATE_LIMIT_PER_MINUTE: '100000',
    SEED_DEMO_TENANT: 'false',
    // each test app gets its own Redis namespace (queues, limits) unless a test shares one on purpose
    REDIS_PREFIX: `t${crypto.randomUUID().slice(0, 8)}`,
    // receivers in tests listen on 127.0.0.1 (also on PostgreSQL, where the default is to refuse)
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    ...fresh.env,
    ...envOverrides,
  });
  const clock = opts.clock ?? new TestClock();
  const ctx = await createContext(config, { clock, log: opts.log ?? createLogger('silent') });
  const app = createApp(ctx);
  if (opts.workers !== false) await startWorkers(ctx);
  const call: TestApp['call'] = (method, path, o = {}) => {
    const headers: Record<string, string> = { ...(o.key ? { authorization: `Bearer ${o.key}` } : {}) };
    let body: string | undefined;
    if (o.rawBody !== undefined) body = o.rawBody;
    else if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] = 'application/json';
    }
    Object.assign(headers, o.headers);
    return dispatch(app, new Request(`http://localhost${path}`, { method, headers, body }));
  };
  let n = 0;
  return {
    ctx,
    app,
    clock,
    config,
    dbEnv: fresh.env,
    call,
    async json(method, path, o) {
      const res = await call(method, path, o);
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
    },
    tenant: (o) => ctx.tenants.createTenant({ name: `Tenant ${++n}`, plan: 'enterprise', rateLimitPerMinute: 100000, ...o }),
    async close() {
      await ctx.close();
      await fresh.drop();
    },
  };
}

/** Asserts the §2.8 error body and returns it. */
export function expectError(res: { status: number; body: any; headers: Headers }, status: number, code: string) {
  const b = res.body;
  const problems: string[] = [];
  if (res.status !== status) problems.push(`status ${res.status} != ${status}`);
  if (b?.code !== code) problems.push(`code ${b?.code} != ${code}`);
  if (b?.status !== status) problems.push(`body.status ${b?.status} != ${status}`);
  if (typeof b?.message !== 'string' || !b.message) problems.push('message missing');
  if (typeof b?.requestId !== 'string' || b.requestId !== res.headers.get('x-request-id')) problems.push('requestId missing or != X-Request-Id');
  if (b?.docsUrl !== undefined && !/\/docs\/errors#/.test(b.docsUrl)) problems.push('docsUrl malformed');
  if (b?.fields !== undefined && !(Array.isArray(b.fields) && b.fields.every((f: any) => typeof f.path === 'string' && typeof f.message === 'string')))
    problems.push('fields malformed');
  if (JSON.stringify(b).match(/\bat .*\.ts:\d+/)) problems.push('stack trace leaked');
  if (problems.length) throw new Error(`error body check failed: ${problems.join('; ')}\n${JSON.stringify(b)}`);
  return b;
}

export const ROOT = new URL('..', import.meta.url).pathname;

/** Runs `bun run src/cli.ts …` with the given environment. */
export async function runCli(args: string[], env: Record<string, string>) {
  const p = Bun.spawn(['bun', 'run', 'src/cli.ts', ...args], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'silent', ...env }, stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

// below the kernel's ephemeral range (32768+), where outgoing connections take their ports
let nextPort = 20000 + Math.floor(Math.random() * 10000);
/**
 * A port nothing listens on now, below the ephemeral range (32768+) where outgoing connections take
 * theirs; checked by binding it, since a port in use made a later listen fail (EADDRINUSE).
 */
export function freePort(): number {
  for (;;) {
    const port = nextPort++;
    try {
      Bun.serve({ port, hostname: '127.0.0.1', fetch: () => new Response() }).stop(true);
      return port;
    } catch {}
  }
}

/** Starts `bun run src/index.ts` as a real process and waits for /healthz. */
export async function spawnServer(env: Record<string, string>, opts: { readyLine?: string } = {}) {
  const port = Number(env.PORT ?? freePort());
  const p = Bun.spawn(['bun', 'run', 'src/index.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env, PORT: String(port) },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  let out = '';
  const reader = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of p.stdout as unknown as AsyncIterable<Uint8Array>) out += dec.decode(chunk);
  })();
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 150; i++) {
    if (p.exitCode !== null) break;
    if (opts.readyLine) {
      if (out.includes(opts.readyLine)) break;
    } else {
      try {
        if ((await fetch(`${base}/healthz`)).ok) break;
      } catch {}
    }
    await Bun.sleep(100);
  }
  return {
    base,
    port,
    proc: p,
    output: () => out,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      p.kill(signal);
      const code = await p.exited;
      await reader.catch(() => {});
      return code;
    },
  };
}

/** The consent page's form: its action, hidden fields and the cookie it set (as a Cookie header value). */
export async function readConsentForm(page: Response) {
  const html = await page.text();
  const form = /<form method="post" action="([^"]+)"/.exec(html);
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1]?.replaceAll('&amp;', '&') ?? null;
  const setCookie = page.headers.get('set-cookie') ?? '';
  return { html, action: form?.[1] ?? null, state: field('state'), csrfToken: field('csrf_token'), cookie: setCookie.split(';')[0] ?? '' };
}

/**
 * Links a sandbox ERP connection like a browser: initiate, open the consent page, post its form
 * with the decision (approve by default). Returns the initiate body and the POST's response (303
 * to return_url). ERP syncs need an active connection in the sandbox too.
 */
export async function connectSandboxErp(
  app: Pick<TestApp, 'call' | 'json'>,
  key: string,
  provider: string,
  opts: { customerReference?: string; returnUrl?: string; decision?: 'approve' | 'deny'; companyNif?: string } = {},
) {
  const init = await app.json('POST', '/v1/erp-connector/oauth/initiate', {
    key,
    body: {
      provider,
      customer_reference: opts.customerReference ?? 'cust-1',
      return_url: opts.returnUrl ?? 'https://app.example.com/erp/done',
      ...(opts.companyNif ? { company_nif: opts.companyNif } : {}),
    },
  });
  if (init.status !== 200) throw new Error(`initiate failed: ${init.status} ${JSON.stringify(init.body)}`);
  const u = new URL(init.body.authorize_url);
  const page = await app.call('GET', u.pathname + u.search);
  if (page.status !== 200) throw new Error(`consent page: ${page.status}`);
  const form = await readConsentForm(page);
  const res = await app.call('POST', form.action!, {
    rawBody: new URLSearchParams({ state: form.state!, csrf_token: form.csrfToken!, decision: opts.decision ?? 'approve' }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.cookie },
  });
  if (res.status !== 303) throw new Error(`consent decision: ${res.status} ${await res.text()}`);
  return { init: init.body as { authorize_url: string; state: string; expires_at: string }, response: res, location: new URL(res.headers.get('location')!) };
}

/** A throwaway redis-server of a test's own (never the shared one), stopped and restarted at will. */
export const startRedis = (port: number, dir: string) =>
  Bun.spawn(['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdout: 'ignore', stderr: 'ignore' });

/** Waits until something listens on the port (up) or nothing does (down), 5 s at most. */
export async function waitPort(port: number, up: boolean) {
  for (let i = 0; i < 100; i++) {
    const ok = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } }).then((s) => (s.end(), true), () => false);
    if (ok === up) return;
    await Bun.sleep(50);
  }
}

/** A keyed JSON POST as a client sends it (body as given if it is already text). */
export const jsonPost = (path: string, key: string, body: unknown, headers: Record<string, string> = {}) =>
  new Request(`http://localhost${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

/**
 * What a client sees of an answer, minus what differs between any two requests (request ids,
 * dates, and the body fields named in `varying`): for comparing two paths that must answer alike.
 * An error body is checked against §2.8 as sent.
 */
export async function seenAnswer(res: Response, varying: string[] = []) {
  const headers = Object.fromEntries([...res.headers].filter(([k]) => !['x-request-id', 'date', 'content-length'].includes(k)));
  const raw = (await res.json()) as Record<string, unknown>;
  if (raw.requestId) expectError({ status: res.status, body: raw, headers: res.headers }, res.status, String(raw.code));
  const body: Record<string, unknown> = { ...raw, ...(raw.requestId ? { requestId: '…' } : {}) };
  for (const field of varying) if (field in body) body[field] = '…';
  return { status: res.status, headers, body };
}

/**
 * One request through a fast path and through the Elysia route, sent by two new tenants with the
 * same budget (so that their rate-limit headers match): both answers, for comparing them.
 */
export async function throughBothPaths(h: TestApp, fast: (request: Request) => Promise<Response | null>, build: (key: string) => Request) {
  const a = await h.tenant({ rateLimitPerMinute: 1000 });
  const b = await h.tenant({ rateLimitPerMinute: 1000 });
  const viaFast = await fast(build(a.api_key));
  if (!viaFast) throw new Error('the fast path handed the request over');
  return { viaFast, viaElysia: await h.app.handle(build(b.api_key)), tenant: a };
}

/** A healthy company as a live credit bureau answers it (fake bureau servers of the live-tier tests). */
export const bureauCompany = (name: string) => ({
  name,
  sector: 'C',
  age_years: 12,
  cost_cents: 200,
  financials: {
    total_assets: 5e6, current_assets: 2e6, cash: 4e5, total_liabilities: 2.5e6, current_liabilities: 1e6, financial_debt: 1e6,
    equity: 2.5e6, share_capital: 5e5, retained_earnings: 1.5e6, revenue: 8e6, ebit: 6e5, ebitda: 9e5, interest_expense: 5e4,
  },
  payment_behaviour: { dso_days: 50, days_beyond_terms_avg: 3, share_of_receivables_from_top_customer: 0.15 },
});

/** a multipart/form-data body as a browser or `curl -F` sends it, its parts in the order given: its bytes and its Content-Type */
export async function multipart(parts: [string, string | Blob, string?][]) {
  const fd = new FormData();
  for (const [name, value, filename] of parts) {
    if (typeof value === 'string') fd.append(name, value);
    else fd.append(name, value, filename);
  }
  const r = new Response(fd);
  const contentType = r.headers.get('content-type')!; // (read before the body: Bun drops it after)
  return { bytes: new Uint8Array(await r.arrayBuffer()), contentType };
}

/** blank names (empty, spaces, a tab, invisible characters, a trailing line break) and the 422 message each gets on `name` */
export const BLANK_NAMES: readonly (readonly [string, string])[] = (() => {
  const visible = 'must contain visible characters and no control characters (line breaks, tabs)';
  return [['', 'must be at least 1 character'], ['   ', visible], ['\t', visible], ['\u200b', visible], ['\u200b \u2060\ufeff\u00ad', visible], ['backend\n', visible]] as const;
})();
