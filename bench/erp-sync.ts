/**
 * ERP sync throughput and memory: one sandbox `demo` sync of ERP_DEMO_INVOICES documents
 * (default 100 000; about 0.82 transactions per document come with them) through the real job
 * handler, in process, on SQLite in a temporary directory (or PostgreSQL when DATABASE_URL is
 * set; then ENCRYPTION_KEY is needed too). RSS is sampled every 100 ms.
 *
 * Run: bun run bench/erp-sync.ts            (ERP_DEMO_INVOICES=100000)
 *      ERP_DEMO_INVOICES=20000 bun run bench/erp-sync.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config';
import { createContext } from '../src/context';
import { configureErp, registerErpWorkers } from '../src/features/erp';
import { createLogger } from '../src/lib/log';

const invoices = Number(process.env.ERP_DEMO_INVOICES ?? 100_000);
const dir = process.env.DATABASE_URL ? null : mkdtempSync(join(tmpdir(), 'erp-bench-'));
const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', SEED_DEMO_TENANT: 'false', REDIS_URL: '', ...(dir ? { DATA_DIR: dir } : {}) });
const ctx = await createContext(config, { log: createLogger('silent') });
const erp = configureErp(ctx, { ERP_DEMO_INVOICES: String(invoices) });
registerErpWorkers(ctx);
await ctx.jobs.start();
const tenant = await ctx.tenants.createTenant({ name: 'bench', plan: 'enterprise' });
// a sync needs the customer's consent (an active connection): the sandbox demo provider holds no
// token, so the connection the consent page would leave is written as it would be
const now = new Date();
await ctx.database.db.insert(ctx.database.t.erpConnections).values({
  id: crypto.randomUUID(), tenantId: tenant.tenant_id, env: 'sandbox', provider: 'demo', customerReference: 'bench', status: 'active',
  returnUrl: 'https://bench.example/done', createdAt: now, updatedAt: now, connectedAt: now,
});

const mb = (b: number) => Math.round((b / 1048576) * 10) / 10;
Bun.gc(true);
const baseline = process.memoryUsage().rss;
let peak = baseline;
const samples: number[] = [];
const sampler = setInterval(() => {
  const rss = process.memoryUsage().rss;
  samples.push(rss);
  if (rss > peak) peak = rss;
}, 100);

const t0 = performance.now();
const res = await erp.sync.request({ tenantId: tenant.tenant_id, keyId: tenant.api_key_id, env: 'sandbox', requestId: null }, { provider: 'demo', customer_reference: 'bench', mode: 'full' });
await ctx.jobs.idle!();
const seconds = (performance.now() - t0) / 1000;
clearInterval(sampler);
const run = await erp.getRun({ tenantId: tenant.tenant_id, keyId: null, env: 'sandbox', requestId: null }, res.run_id);

const q = (p: number) => mb(samples[Math.min(samples.length - 1, Math.floor(p * samples.length))] ?? baseline);
console.log(
  JSON.stringify(
    {
      database: ctx.database.dialect,
      status: run.status,
      invoices: run.invoices_count,
      transactions: run.transactions_count,
      seconds: Number(seconds.toFixed(2)),
      rows_per_second: Math.round((run.invoices_count + run.transactions_count) / seconds),
      rss_baseline_mb: mb(baseline),
      rss_at_25_50_75_pct_mb: [q(0.25), q(0.5), q(0.75)],
      rss_peak_mb: mb(peak),
      machine: { nproc: cpus().length, cpu: cpus()[0]?.model ?? 'unknown' },
      bun: Bun.version,
      date: new Date().toISOString().slice(0, 10),
    },
    null,
    2,
  ),
);
await ctx.close();
if (dir) rmSync(dir, { recursive: true, force: true });
process.exit(run.status === "succeeded" ? 0 : 1);
