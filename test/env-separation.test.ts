import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { eq } from 'drizzle-orm';
import { expectError, makeApp, runCli, TEST_DB, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

/**
 * Issue 17 item 9: a sandbox key sees and changes only sandbox data, a live key only live data,
 * on every route that reads or writes tenant data (admin keys, usage, webhooks, events, ERP,
 * GDPR). Erasing the tenant (both environments) needs a live key or the operator CLI.
 */
let h: TestApp;
let tenantId: string;
let sandboxKey: string;
let liveKey: string;
let liveKeyId: string;
let sandboxKeyId: string;
/** one live and one sandbox row of each kind, written directly */
const ids = { live: {} as Record<string, string>, sandbox: {} as Record<string, string> };

beforeAll(async () => {
  h = await makeApp({}, { workers: false });
  const t = await h.tenant({ scopes: ['*'] });
  tenantId = t.tenant_id;
  sandboxKey = t.api_key;
  sandboxKeyId = t.api_key_id;
  const live = await h.ctx.tenants.createKey({ tenantId, env: 'live', name: 'prod', scopes: ['*'] });
  liveKey = live.api_key;
  liveKeyId = live.api_key_id;
  const { withTx, t: s } = h.ctx.database;
  const now = h.clock.now();
  for (const env of ['live', 'sandbox'] as const) {
    const endpoint = crypto.randomUUID();
    const event = `evt_${crypto.randomUUID().replaceAll('-', '')}`;
    const conn = crypto.randomUUID();
    const run = crypto.randomUUID();
    Object.assign(ids[env], { endpoint, event, conn, run });
    await withTx(async (tx) => {
      await tx.insert(s.webhookEndpoints).values({
        id: endpoint,
        tenantId,
        env,
        url: `https://hooks.example.com/${env}`,
        enabledEvents: ['*'],
        secretEnc: h.ctx.secretBox.seal('whsec_x'),
        secretPrefix: 'whsec_x',
        status: 'active',
        consecutiveFailures: 0,
        createdAt: now,
      });
      await tx.insert(s.events).values({ id: event, tenantId, env, type: 'score.updated', data: { nif: `${env}-nif` }, createdAt: now, dispatchedAt: now });
      await tx.insert(s.webhookDeliveries).values({ id: crypto.randomUUID(), tenantId, eventId: event, endpointId: endpoint, status: 'succeeded', attempts: 1, createdAt: now, updatedAt: now });
      await tx.insert(s.erpConnections).values({ id: conn, tenantId, env, provider: 'moloni', customerReference: `${env}-cust`, status: 'active', returnUrl: 'https://app.example.com/x', createdAt: now, updatedAt: now, connectedAt: now });
      await tx.insert(s.syncRuns).values({ id: run, tenantId, env, provider: 'moloni', customerReference: `${env}-cust`, connectionId: conn, mode: 'full', status: 'succeeded', attempts: 1, invoicesCount: 0, transactionsCount: 0, createdAt: now });
      await tx.insert(s.usageRecords).values({ id: crypto.randomUUID(), tenantId, apiKeyId: env === 'live' ? liveKeyId : sandboxKeyId, env, meter: 'score', quantity: 7, billable: env === 'live', createdAt: now });
    });
  }
});
afterAll(() => h.close());

const other = (env: 'sandbox' | 'live') => (env === 'sandbox' ? 'live' : 'sandbox');

describe.each(['sandbox', 'live'] as const)('a %s key and the other environment', (env) => {
  const key = () => (env === 'sandbox' ? sandboxKey : liveKey);
  const theirs = () => ids[other(env)];
  const mine = () => ids[env];

  test('webhook endpoints and deliveries of the other environment: not listed, 404 on every operation, unchanged', async () => {
    const w = h.ctx.database.t.webhookEndpoints;
    const before = await h.ctx.database.db.select().from(w).where(eq(w.id, theirs().endpoint!));
    const list = await h.json('GET', '/v1/admin/webhooks', { key: key() });
    expect(list.body.webhooks.map((x: any) => x.id)).toEqual([mine().endpoint]);
    const id = theirs().endpoint;
    const calls: [string, string, unknown?][] = [
      ['GET', `/v1/admin/webhooks/${id}`],
      ['PATCH', `/v1/admin/webhooks/${id}`, { status: 'disabled' }],
      ['POST', `/v1/admin/webhooks/${id}/test`, {}],
      ['POST', `/v1/admin/webhooks/${id}/rotate-secret`, {}],
      ['GET', `/v1/admin/webhooks/${id}/deliveries`],
      ['DELETE', `/v1/admin/webhooks/${id}`],
    ];
    for (const [method, path, body] of calls) expectError(await h.json(method, path, { key: key(), body }), 404, 'resource_not_found');
    expect(await h.ctx.database.db.select().from(w).where(eq(w.id, id!))).toEqual(before);
    // own deliveries are readable
    expect((await h.json('GET', `/v1/admin/webhooks/${mine().endpoint}/deliveries`, { key: key() })).body.data).toHaveLength(1);
  });

  test('events: only this environment', async () => {
    const r = await h.json('GET', '/v1/events', { key: key() });
    expect(r.status).toBe(200);
    expect(r.body.data.map((e: any) => e.id)).toEqual([mine().event]);
    expect(r.body.data[0].environment).toBe(env);
  });

  test('usage: the other environment → 403 cross_environment_forbidden; own usage only', async () => {
    expectError(await h.json('GET', `/v1/admin/usage?env=${other(env)}`, { key: key() }), 403, 'cross_environment_forbidden');
    const r = await h.json('GET', '/v1/admin/usage', { key: key() });
    expect(r.body.env).toBe(env);
    expect(r.body.totals.reduce((n: number, x: any) => n + x.quantity, 0)).toBe(7);
  });

  test('keys: rotating or revoking a key of the other environment → 403 cross_environment_forbidden', async () => {
    const target = env === 'sandbox' ? liveKeyId : sandboxKeyId;
    expectError(await h.json('POST', '/v1/admin/keys/rotate', { key: key(), body: { api_key_id: target } }), 403, 'cross_environment_forbidden');
    expectError(await h.json('POST', '/v1/admin/keys/revoke', { key: key(), body: { api_key_id: target } }), 403, 'cross_environment_forbidden');
    const listed = (await h.json('GET', '/v1/admin/keys', { key: key() })).body.keys.map((k: any) => k.env);
    // a sandbox key lists sandbox keys only; a live key both
    expect(new Set(listed)).toEqual(new Set(env === 'sandbox' ? ['sandbox'] : ['sandbox', 'live']));
  });

  test('ERP: connections, runs and data of the other environment are invisible; DELETE → 404 and unchanged', async () => {
    const conns = await h.json('GET', '/v1/erp-connector/connections', { key: key() });
    expect(conns.body.data.map((c: any) => c.id)).toEqual([mine().conn]);
    expectError(await h.json('DELETE', `/v1/erp-connector/connections/${theirs().conn}`, { key: key() }), 404, 'resource_not_found');
    const c = h.ctx.database.t.erpConnections;
    expect((await h.ctx.database.db.select().from(c).where(eq(c.id, theirs().conn!)))[0]!.status).toBe('active');
    expectError(await h.json('GET', `/v1/erp-connector/sync/${theirs().run}`, { key: key() }), 404, 'resource_not_found');
    expect((await h.json('GET', '/v1/erp-connector/sync', { key: key() })).body.data.map((r: any) => r.run_id)).toEqual([mine().run]);
  });

  test('GDPR export: only this environment’s rows (and the tenant record)', async () => {
    const res = await h.call('POST', '/v1/admin/gdpr/export', { key: key(), body: {} });
    expect(res.status).toBe(200);
    const doc = JSON.parse(await res.text());
    expect(doc.manifest.environments).toEqual([env]);
    const text = JSON.stringify(doc);
    for (const id of Object.values(theirs())) expect(text).not.toContain(id);
    for (const id of Object.values(mine())) expect(text).toContain(id);
    expect(text).not.toContain(`${other(env)}-cust`);
    expect(doc.tenant.id).toBe(tenantId);
  });
});

describe('erasing the tenant', () => {
  test('a sandbox key → 403 live_key_required and the live key keeps working', async () => {
    expectError(await h.json('POST', '/v1/admin/gdpr/erase', { key: sandboxKey, body: { confirmation: 'ERASE-MY-DATA' } }), 403, 'live_key_required');
    expect((await h.json('GET', '/v1/admin/keys', { key: liveKey })).status).toBe(200);
    const [tenant] = await h.ctx.database.db.select().from(h.ctx.database.t.tenants).where(eq(h.ctx.database.t.tenants.id, tenantId));
    expect(tenant!.status).toBe('active');
  });

  test('operator CLI: tenant erase shows what it would do without --confirm (exit 2), erases with it, refuses a second time', async () => {
    const t = await h.tenant({ name: 'Erase Me Lda' });
    await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'live', name: 'prod' });
    const { db, t: s } = h.ctx.database;
    const tenantRow = async () => (await db.select().from(s.tenants).where(eq(s.tenants.id, t.tenant_id)))[0]!;

    const dry = await runCli(['tenant', 'erase', '--tenant', t.tenant_id, '--json'], h.dbEnv);
    expect(dry.code).toBe(2);
    expect(JSON.parse(dry.stdout)).toEqual({ tenant_id: t.tenant_id, name: 'Erase Me Lda', status: 'active', active_keys: { sandbox: 1, live: 1 }, erased: false });
    expect(dry.stderr).toContain('--confirm');
    expect((await tenantRow()).status).toBe('active');

    const done = await runCli(['tenant', 'erase', '--tenant', t.tenant_id, '--confirm', '--json'], h.dbEnv);
    expect({ code: done.code, stderr: done.stderr }).toEqual({ code: 0, stderr: expect.stringContaining('database: ') });
    const r = JSON.parse(done.stdout);
    expect(r).toMatchObject({ erased: true, tenant_status: 'terminated', redacted_api_keys: 2 });
    expect(r.retained_under_legal_basis.years).toBe(7);
    expect(await tenantRow()).toMatchObject({ status: 'terminated', name: `erased-tenant-${t.tenant_id.slice(0, 8)}` });
    const keys = await db.select().from(s.apiKeys).where(eq(s.apiKeys.tenantId, t.tenant_id));
    expect(keys.every((k) => k.revokedAt !== null && k.revokeReason === 'gdpr_erasure')).toBe(true);
    const audit = await db.select().from(s.auditLog).where(eq(s.auditLog.tenantId, t.tenant_id));
    expect(audit.find((a) => a.action === 'gdpr.erased')).toMatchObject({ actorKeyId: null, target: t.tenant_id, details: expect.objectContaining({ actor: 'operator' }) });
    if (TEST_DB === 'sqlite') expectError(await h.json('GET', '/v1/admin/keys', { key: t.api_key }), 401, 'invalid_api_key');

    const again = await runCli(['tenant', 'erase', '--tenant', t.tenant_id, '--confirm'], h.dbEnv);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already erased');
    const unknown = await runCli(['tenant', 'erase', '--tenant', crypto.randomUUID(), '--confirm'], h.dbEnv);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown tenant');
    const usage = await runCli(['tenant', 'erase'], h.dbEnv);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--tenant is required');
  }, 30_000);
});
