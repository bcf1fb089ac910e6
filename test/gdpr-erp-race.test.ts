import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
import { eq } from 'drizzle-orm';
import { configureErp, registerErpWorkers } from '../src/features/erp';
import { startWorkers } from '../src/workers';
import { connectSandboxErp, makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

let h: TestApp;
beforeAll(async () => {
  h = await makeApp({}, { workers: false });
  h.clock.now = () => new Date();
  configureErp(h.ctx, { ERP_DEMO_INVOICES: '60000', ERP_SYNC_BATCH_SIZE: '200' });
  registerErpWorkers(h.ctx);
  await startWorkers(h.ctx);
});
afterAll(() => h.close());

test('erasing a tenant stops its running sync: nothing is written after the erase', async () => {
  const t = await h.tenant();
  await connectSandboxErp(h, t.api_key, 'demo', { customerReference: 'race-cust' });
  // erasing the tenant needs a live key (issue 17 item 9)
  const live = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'live', scopes: ['gdpr:manage'] });
  const sync = await h.json('POST', '/v1/erp-connector/sync', { key: t.api_key, body: { provider: 'demo', customer_reference: 'race-cust' } });
  expect(sync.status).toBe(202);
  const { invoices, syncRuns, events } = h.ctx.database.t;
  // wait until the run is under way and has written some rows
  for (let i = 0; i < 200; i++) {
    const rows = await h.ctx.database.db.select().from(invoices).where(eq(invoices.tenantId, t.tenant_id)).limit(1);
    if (rows.length) break;
    await Bun.sleep(10);
  }
  const erase = await h.json('POST', '/v1/admin/gdpr/erase', { key: live.api_key, body: { confirmation: 'ERASE-MY-DATA' } });
  expect(erase.status).toBe(200);
  await h.ctx.jobs.idle!();
  await Bun.sleep(100);
  const [run] = await h.ctx.database.db.select().from(syncRuns).where(eq(syncRuns.id, sync.body.run_id));
  expect(run).toMatchObject({ status: 'failed', errorCode: 'tenant_terminated' });
  const stored = await h.ctx.database.db.select().from(invoices).where(eq(invoices.tenantId, t.tenant_id));
  expect(stored.length).toBeLessThan(60000);
  expect(stored.every((r) => r.customerReference !== 'race-cust' && r.customerName === null && r.retainUntil !== null)).toBe(true);
  expect((await h.ctx.database.db.select().from(events).where(eq(events.tenantId, t.tenant_id))).length).toBe(0);
});
