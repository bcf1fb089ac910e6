import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, count, eq } from 'drizzle-orm';
import { configureErp, erpService, registerErpWorkers } from '../src/features/erp';
import { RECOVER_SWEEP } from '../src/features/erp/sync';
import { startWorkers } from '../src/workers';
import { connectSandboxErp, makeApp, REDIS_TEST_URL, ROOT, TestClock, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

/**
 * Workers: the BullMQ path, claim races, the recovery sweep (lost enqueue, stalled runs, the
 * 3-attempt limit) and a real worker process killed with SIGKILL in the middle of a run.
 */

const realClock = () => {
  const c = new TestClock();
  c.now = () => new Date();
  return c;
};

async function waitRun(h: TestApp, key: string, runId: string, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const r = await h.json('GET', `/v1/erp-connector/sync/${runId}`, { key });
    if (r.body?.status === 'succeeded' || r.body?.status === 'failed') return r.body;
    await Bun.sleep(25);
  }
  throw new Error(`run ${runId} did not finish`);
}

/** A run as POST /sync leaves it, with the active sandbox connection (the customer's consent) a run needs. */
const insertRun = async (h: TestApp, tenantId: string, fields: Record<string, unknown>) => {
  const r = h.ctx.database.t.syncRuns;
  const id = crypto.randomUUID();
  const now = h.ctx.clock.now();
  const customerReference = (fields.customerReference as string | undefined) ?? 'stalled';
  await h.ctx.database.withTx((tx) =>
    tx.insert(h.ctx.database.t.erpConnections).values({ id: crypto.randomUUID(), tenantId, env: 'sandbox', provider: 'demo', customerReference, status: 'active', returnUrl: 'https://app.example.com/done', createdAt: now, updatedAt: now, connectedAt: now }),
  );
  return h.ctx.database
    .withTx((tx) =>
      tx.insert(r).values({
        id,
        tenantId,
        env: 'sandbox',
        provider: 'demo',
        customerReference: 'stalled',
        mode: 'incremental',
        status: 'queued',
        attempts: 0,
        invoicesCount: 0,
        transactionsCount: 0,
        createdAt: h.ctx.clock.now(),
        ...fields,
      }),
    )
    .then(() => id);
};

const countInvoices = async (h: TestApp, tenantId: string) => {
  const i = h.ctx.database.t.invoices;
  const [row] = await h.ctx.database.db.select({ n: count() }).from(i).where(eq(i.tenantId, tenantId));
  return Number(row?.n ?? 0);
};

describe('BullMQ (REDIS_URL set)', () => {
  let h: TestApp;
  beforeAll(async () => {
    h = await makeApp({ REDIS_URL: REDIS_TEST_URL }, { workers: false, clock: realClock() });
    configureErp(h.ctx, {});
    registerErpWorkers(h.ctx);
    await startWorkers(h.ctx);
  });
  afterAll(() => h.close());

  test('a demo sync runs to success through the Redis queue', async () => {
    expect(h.ctx.jobs.kind).toBe('bullmq');
    const t = await h.tenant();
    await connectSandboxErp(h, t.api_key, 'demo', { customerReference: 'bull' });
    const r = await h.json('POST', '/v1/erp-connector/sync', { key: t.api_key, body: { provider: 'demo', customer_reference: 'bull' } });
    expect(r.status).toBe(202);
    const run = await waitRun(h, t.api_key, r.body.run_id);
    expect(run).toMatchObject({ status: 'succeeded', invoices_count: 50, attempts: 1 });
    expect(await countInvoices(h, t.tenant_id)).toBe(50);
  });

  test('the recovery sweep re-enqueues a stalled run through BullMQ (new job id per attempt)', async () => {
    const t = await h.tenant();
    const id = await insertRun(h, t.tenant_id, { status: 'running', attempts: 1, startedAt: new Date(Date.now() - 120_000), heartbeatAt: new Date(Date.now() - 60_000) });
    await h.ctx.sweeps.get(RECOVER_SWEEP)!.run();
    const run = await waitRun(h, t.api_key, id);
    expect(run).toMatchObject({ status: 'succeeded', attempts: 2, invoices_count: 50 });
  });
});

describe('recovery sweep and claims (in-process queue)', () => {
  let h: TestApp;
  let t: { tenant_id: string; api_key: string };
  beforeAll(async () => {
    h = await makeApp({}, { workers: false });
    configureErp(h.ctx, { ERP_SYNC_STALL_MS: '30000' });
    registerErpWorkers(h.ctx);
    await startWorkers(h.ctx);
    t = await h.tenant();
  });
  afterAll(() => h.close());
  const sweep = () => h.ctx.sweeps.get(RECOVER_SWEEP)!.run() as Promise<{ requeued: number; failed: number }>;

  test('registers the erp.sync job and the erp.sync.recover sweep (every 5 s)', () => {
    expect(h.ctx.sweeps.get(RECOVER_SWEEP)!.everyMs).toBe(5000);
  });

  test('a queued run whose enqueue was lost is picked up by the sweep', async () => {
    const id = await insertRun(h, t.tenant_id, { customerReference: 'lost' });
    const res = await sweep();
    expect(res.requeued).toBeGreaterThanOrEqual(1);
    const run = await waitRun(h, t.api_key, id);
    expect(run).toMatchObject({ status: 'succeeded', attempts: 1, invoices_count: 50 });
  });

  test('a running run with a fresh heartbeat is left alone; a stale one is retried (attempts + 1) and resumes', async () => {
    const now = h.clock.ms;
    const fresh = await insertRun(h, t.tenant_id, { customerReference: 'fresh', status: 'running', attempts: 1, startedAt: new Date(now - 5000), heartbeatAt: new Date(now - 5000) });
    const stale = await insertRun(h, t.tenant_id, { customerReference: 'stale', status: 'running', attempts: 1, startedAt: new Date(now - 90_000), heartbeatAt: new Date(now - 31_000) });
    await sweep();
    const run = await waitRun(h, t.api_key, stale);
    expect(run).toMatchObject({ status: 'succeeded', attempts: 2, invoices_count: 50, error_code: null });
    expect(run.started_at).toBe(new Date(now - 90_000).toISOString());
    await h.ctx.jobs.idle?.();
    const f = (await h.json('GET', `/v1/erp-connector/sync/${fresh}`, { key: t.api_key })).body;
    expect(f).toMatchObject({ status: 'running', attempts: 1 });
    // a job for the fresh run (e.g. a duplicate delivery) does not claim it either
    await erpService(h.ctx).sync.handle({ runId: fresh });
    expect((await h.json('GET', `/v1/erp-connector/sync/${fresh}`, { key: t.api_key })).body.attempts).toBe(1);
  });

  test('after 3 attempts a stalled run is failed with error_code stalled and an erp.sync.failed event', async () => {
    const id = await insertRun(h, t.tenant_id, { customerReference: 'dead', status: 'running', attempts: 3, invoicesCount: 500, startedAt: new Date(h.clock.ms - 300_000), heartbeatAt: new Date(h.clock.ms - 60_000) });
    const res = await sweep();
    expect(res.failed).toBe(1);
    const run = (await h.json('GET', `/v1/erp-connector/sync/${id}`, { key: t.api_key })).body;
    expect(run).toMatchObject({ status: 'failed', error_code: 'stalled', attempts: 3, invoices_count: 500 });
    expect(run.finished_at).not.toBeNull();
    const e = h.ctx.database.t.events;
    const ev = (await h.ctx.database.db.select().from(e).where(and(eq(e.tenantId, t.tenant_id), eq(e.type, 'erp.sync.failed')))).find((x) => (x.data as any).run_id === id);
    expect(ev!.data).toMatchObject({ status: 'failed', error_code: 'stalled', provider: 'demo', customer_reference: 'dead' });
    // sweeping again changes nothing
    expect((await sweep()).failed).toBe(0);
  });

  test('three stalls in a row: retried twice, then failed stalled', async () => {
    const id = await insertRun(h, t.tenant_id, { customerReference: 'flaky', status: 'running', attempts: 1, heartbeatAt: new Date(h.clock.ms - 60_000) });
    const r = h.ctx.database.t.syncRuns;
    const stallAgain = async () => {
      await h.ctx.jobs.idle?.();
      await h.ctx.database.withTx((tx) => tx.update(r).set({ status: 'running', heartbeatAt: new Date(h.clock.ms - 60_000), finishedAt: null }).where(eq(r.id, id)));
    };
    for (const expected of [2, 3]) {
      await sweep();
      await h.ctx.jobs.idle?.();
      const run = (await h.json('GET', `/v1/erp-connector/sync/${id}`, { key: t.api_key })).body;
      expect(run.attempts).toBe(expected);
      await stallAgain(); // the worker "died" again
    }
    await sweep();
    const run = (await h.json('GET', `/v1/erp-connector/sync/${id}`, { key: t.api_key })).body;
    expect(run).toMatchObject({ status: 'failed', error_code: 'stalled', attempts: 3 });
  });

  test('two deliveries of the same job: one claim, no duplicate rows', async () => {
    const id = await insertRun(h, t.tenant_id, { customerReference: 'twice' });
    const svc = erpService(h.ctx).sync;
    await Promise.all([svc.handle({ runId: id }), svc.handle({ runId: id }), svc.handle({ runId: id })]);
    const run = (await h.json('GET', `/v1/erp-connector/sync/${id}`, { key: t.api_key })).body;
    expect(run).toMatchObject({ status: 'succeeded', attempts: 1, invoices_count: 50 });
    const i = h.ctx.database.t.invoices;
    const rows = await h.ctx.database.db.select({ n: count() }).from(i).where(and(eq(i.tenantId, t.tenant_id), eq(i.customerReference, 'twice')));
    expect(Number(rows[0]!.n)).toBe(50);
  });
});

describe('a worker process killed mid-run (SIGKILL) is recovered by another process', () => {
  const N = 20_000;
  let h: TestApp;
  let dir: string;
  beforeAll(async () => {
    h = await makeApp({ REDIS_URL: REDIS_TEST_URL }, { workers: false, clock: realClock() });
    configureErp(h.ctx, { ERP_DEMO_INVOICES: String(N), ERP_SYNC_STALL_MS: '1500' });
    registerErpWorkers(h.ctx);
    dir = mkdtempSync(join(tmpdir(), 'erp-worker-'));
  });
  afterAll(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the run resumes from its last committed batch and finishes with every row exactly once', async () => {
    const script = join(dir, 'worker.ts');
    writeFileSync(
      script,
      `import { loadConfig } from '${ROOT}src/config';
import { createContext } from '${ROOT}src/context';
import { registerErpWorkers } from '${ROOT}src/features/erp';
const ctx = await createContext(loadConfig(process.env));
registerErpWorkers(ctx);
await ctx.jobs.start();
console.error('erp worker ready');
`,
    );
    const child = Bun.spawn(['bun', 'run', script], {
      cwd: ROOT,
      env: { ...process.env, ...h.dbEnv, REDIS_URL: REDIS_TEST_URL, REDIS_PREFIX: h.config.redisPrefix, LOG_LEVEL: 'silent', ERP_DEMO_INVOICES: String(N) },
      stdout: 'ignore',
      stderr: 'pipe',
    });
    try {
      const t = await h.tenant();
      await connectSandboxErp(h, t.api_key, 'demo', { customerReference: 'big' });
      const r = await h.json('POST', '/v1/erp-connector/sync', { key: t.api_key, body: { provider: 'demo', customer_reference: 'big' } });
      expect(r.status).toBe(202);
      const runId = r.body.run_id;
      // wait until the child has committed a few batches, then kill it without warning
      let seen: any = null;
      for (let i = 0; i < 1200; i++) {
        seen = (await h.json('GET', `/v1/erp-connector/sync/${runId}`, { key: t.api_key })).body;
        if (seen.status === 'running' && seen.invoices_count >= 1000) break;
        await Bun.sleep(25);
      }
      expect(seen).toMatchObject({ status: 'running', attempts: 1 });
      child.kill('SIGKILL');
      await child.exited;
      const atKill = (await h.json('GET', `/v1/erp-connector/sync/${runId}`, { key: t.api_key })).body;
      expect(atKill.status).toBe('running');
      expect(atKill.invoices_count).toBeLessThan(N);
      expect(await countInvoices(h, t.tenant_id)).toBe(atKill.invoices_count);

      // this process takes over: start its workers, wait past the stall timeout, sweep
      await startWorkers(h.ctx);
      await Bun.sleep(1700);
      await h.ctx.sweeps.get(RECOVER_SWEEP)!.run();
      const run = await waitRun(h, t.api_key, runId, 120_000);
      expect(run).toMatchObject({ status: 'succeeded', attempts: 2, invoices_count: N, error_code: null });
      expect(await countInvoices(h, t.tenant_id)).toBe(N);
      const x = h.ctx.database.t.bankTransactions;
      const [tx] = await h.ctx.database.db.select({ n: count() }).from(x).where(eq(x.tenantId, t.tenant_id));
      expect(Number(tx!.n)).toBe(run.transactions_count);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 180_000);
});
