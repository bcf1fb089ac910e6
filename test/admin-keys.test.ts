import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { eq } from 'drizzle-orm';
import { Value } from '@sinclair/typebox/value';
import { AuditLog, ListKeysResponse, RotateResponse } from '../src/features/admin/model';
import { MAX_ACTIVE_KEYS } from '../src/features/admin/service';
import { BLANK_NAMES, expectError, makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

let h: TestApp;
beforeAll(async () => {
  h = await makeApp();
});
afterAll(() => h.close());

const DAY = 86_400_000;
const auditOf = async (tenantId: string) => {
  const a = h.ctx.database.t.auditLog;
  return h.ctx.database.db.select().from(a).where(eq(a.tenantId, tenantId));
};

describe('GET /v1/admin/keys', () => {
  test('a live key lists both environments with computed status; never the plaintext or hash', async () => {
    const t = await h.tenant();
    const live = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'live', name: 'prod', scopes: ['score'], rateLimitPerMinute: 100 });
    const liveAdmin = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'live', name: 'prod admin', scopes: ['keys:manage'] });
    const soon = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', name: 'soon' });
    await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: { api_key_id: soon.api_key_id, grace_days: 1 } });
    h.clock.advance(DAY + 1000);
    // a sandbox key sees the sandbox keys only (issue 17 item 9)
    const sandboxView = await h.json('GET', '/v1/admin/keys', { key: t.api_key });
    expect(sandboxView.status).toBe(200);
    expect(sandboxView.body.keys.length).toBe(3);
    expect(sandboxView.body.keys.every((k: any) => k.env === 'sandbox')).toBe(true);
    expect(JSON.stringify(sandboxView.body)).not.toContain(live.api_key.slice(0, 12));
    const r = await h.json('GET', '/v1/admin/keys', { key: liveAdmin.api_key });
    expect(r.body.keys.length).toBe(5);
    expect(r.status).toBe(200);
    expect(Value.Check(ListKeysResponse, r.body)).toBe(true);
    const byId = Object.fromEntries(r.body.keys.map((k: any) => [k.id, k]));
    expect(byId[live.api_key_id]).toMatchObject({ env: 'live', name: 'prod', scopes: ['score'], rate_limit_per_minute: 100, status: 'active', key_prefix: live.api_key.slice(0, 12) });
    expect(byId[soon.api_key_id].status).toBe('expired');
    const text = JSON.stringify(r.body);
    for (const k of [t.api_key, live.api_key, soon.api_key, liveAdmin.api_key]) expect(text).not.toContain(k.slice(12));
    expect(text).not.toMatch(/[0-9a-f]{64}/);
  });
});

describe('POST /v1/admin/keys/rotate', () => {
  test('201: a new key inheriting name, env, scopes and rate limit; the old one works until now + grace_days', async () => {
    const t = await h.tenant();
    const old = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', name: 'ci', scopes: ['score', 'keys:manage'], rateLimitPerMinute: 50 });
    const r = await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: { api_key_id: old.api_key_id, grace_days: 3 } });
    expect(r.status).toBe(201);
    expect(Value.Check(RotateResponse, r.body)).toBe(true);
    expect(r.body).toMatchObject({ rotated_from: old.api_key_id, grace_days: 3 });
    expect(r.body.api_key).toMatch(/^sk_test_[0-9a-f]{28}$/);
    expect(r.body.warning).toMatch(/store/i);
    expect(r.body.old_expires_at).toBe(new Date(h.clock.ms + 3 * DAY).toISOString());
    const keys = (await h.json('GET', '/v1/admin/keys', { key: t.api_key })).body.keys;
    expect(keys.find((k: any) => k.id === r.body.api_key_id)).toMatchObject({ name: 'ci', env: 'sandbox', scopes: ['score', 'keys:manage'], rate_limit_per_minute: 50, status: 'active' });
    // both work during the grace period; the old one stops after it
    expect((await h.call('GET', '/v1/admin/keys', { key: old.api_key })).status).toBe(200);
    expect((await h.call('GET', '/v1/admin/keys', { key: r.body.api_key })).status).toBe(200);
    h.clock.advance(3 * DAY);
    expectError(await h.json('GET', '/v1/admin/keys', { key: old.api_key }), 401, 'api_key_expired');
    expect((await h.call('GET', '/v1/admin/keys', { key: r.body.api_key })).status).toBe(200);
    // the plaintext is never shown again
    expect(JSON.stringify((await h.json('GET', '/v1/admin/keys', { key: r.body.api_key })).body)).not.toContain(r.body.api_key.slice(12));
  });

  test("a key in its grace rotated again: the new key keeps the key's own lifetime, not the first rotation's grace end", async () => {
    const t = await h.tenant();
    const listed = async () => Object.fromEntries((await h.json('GET', '/v1/admin/keys', { key: t.api_key })).body.keys.map((k: { id?: string; api_key_id?: string; expires_at: string | null }) => [k.id ?? k.api_key_id, k.expires_at]));
    const permanent = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', name: 'ci' });
    const b = (await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: { api_key_id: permanent.api_key_id, grace_days: 30 } })).body;
    const c = (await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: { api_key_id: permanent.api_key_id } })).body;
    const keys = await listed();
    expect([keys[b.api_key_id], keys[c.api_key_id]]).toEqual([null, null]);
    // a temporary key stays as temporary as it was
    const until = new Date(h.clock.ms + 60 * DAY);
    const temporary = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', name: 'contractor', expiresAt: until });
    const d = (await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: { api_key_id: temporary.api_key_id, grace_days: 30 } })).body;
    const e = (await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: { api_key_id: temporary.api_key_id } })).body;
    const after = await listed();
    expect([after[d.api_key_id], after[e.api_key_id]]).toEqual([until.toISOString(), until.toISOString()]);
    // its first successor rotated in turn (its expires_at now its own grace end), then the key again:
    // still the key's lifetime, down the chain, not the successor's grace end
    const p2 = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', name: 'chain' });
    const s1 = (await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: { api_key_id: p2.api_key_id, grace_days: 30 } })).body;
    const s1b = (await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: { api_key_id: s1.api_key_id, grace_days: 5 } })).body;
    const s2 = (await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: { api_key_id: p2.api_key_id, grace_days: 1 } })).body;
    const chain = await listed();
    expect([chain[s1.api_key_id], chain[s1b.api_key_id], chain[s2.api_key_id]]).toEqual([new Date(h.clock.ms + 5 * DAY).toISOString(), null, null]);
  });

  test('without a body it rotates the calling key with 7 days of grace; grace_days 0 stops the old key at once', async () => {
    const t = await h.tenant();
    const r = await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ rotated_from: t.api_key_id, grace_days: 7, old_expires_at: new Date(h.clock.ms + 7 * DAY).toISOString() });
    const r0 = await h.json('POST', '/v1/admin/keys/rotate', { key: r.body.api_key, body: { grace_days: 0 } });
    expect(r0.status).toBe(201);
    expectError(await h.json('GET', '/v1/admin/keys', { key: r.body.api_key }), 401, 'api_key_expired');
  });

  test('grace_days outside 0–30 or a bad id → 422 validation_failed with the field', async () => {
    const t = await h.tenant();
    for (const body of [{ grace_days: 31 }, { grace_days: -1 }, { grace_days: 1.5 }, { grace_days: '7' }, { api_key_id: 'nope' }]) {
      const b = expectError(await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body }), 422, 'validation_failed');
      expect(b.fields[0].path).toBe(Object.keys(body)[0]);
    }
  });

  test("another tenant's key → 403; an unknown id → 404; a revoked or expired key → 409 key_not_active", async () => {
    const a = await h.tenant();
    const b = await h.tenant();
    expectError(await h.json('POST', '/v1/admin/keys/rotate', { key: a.api_key, body: { api_key_id: b.api_key_id } }), 403, 'cross_tenant_forbidden');
    expectError(await h.json('POST', '/v1/admin/keys/rotate', { key: a.api_key, body: { api_key_id: crypto.randomUUID() } }), 404, 'resource_not_found');
    const k = await h.ctx.tenants.createKey({ tenantId: a.tenant_id, env: 'sandbox' });
    await h.json('POST', '/v1/admin/keys/revoke', { key: a.api_key, body: { api_key_id: k.api_key_id } });
    expectError(await h.json('POST', '/v1/admin/keys/rotate', { key: a.api_key, body: { api_key_id: k.api_key_id } }), 409, 'key_not_active');
    const e = await h.ctx.tenants.createKey({ tenantId: a.tenant_id, env: 'sandbox' });
    await h.json('POST', '/v1/admin/keys/rotate', { key: a.api_key, body: { api_key_id: e.api_key_id, grace_days: 0 } });
    expectError(await h.json('POST', '/v1/admin/keys/rotate', { key: a.api_key, body: { api_key_id: e.api_key_id } }), 409, 'key_not_active');
    // b's key is untouched
    expect((await h.call('GET', '/v1/admin/keys', { key: b.api_key })).status).toBe(200);
  });

  test(`at most ${MAX_ACTIVE_KEYS} active keys per environment: a rotation beyond is refused with 409 too_many_active_keys (keys in grace count; live keys do not)`, async () => {
    const t = await h.tenant();
    await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'live' }); // the other environment is not counted
    const revoked = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox' });
    await h.json('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: revoked.api_key_id } }); // nor are revoked keys
    for (let i = 0; i < MAX_ACTIVE_KEYS - 2; i++) await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox' });
    // MAX - 1 active: a rotation keeps the old key in its grace, MAX after it
    const first = await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: {} });
    expect(first.status).toBe(201);
    const listed = async () => (await h.json('GET', '/v1/admin/keys', { key: t.api_key })).body.keys.filter((k: any) => k.env === 'sandbox' && k.status === 'active').length;
    expect(await listed()).toBe(MAX_ACTIVE_KEYS);
    const refused = expectError(await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: {} }), 409, 'too_many_active_keys');
    expect(refused.message).toContain(`${MAX_ACTIVE_KEYS}`);
    expect(await listed()).toBe(MAX_ACTIVE_KEYS); // nothing was created
    // with grace_days 0 the old key stops at once: the count does not grow, so it is allowed
    const swap = await h.json('POST', '/v1/admin/keys/rotate', { key: first.body.api_key, body: { grace_days: 0 } });
    expect(swap.status).toBe(201);
    expect(await listed()).toBe(MAX_ACTIVE_KEYS);
    // revoking one makes room
    await h.json('POST', '/v1/admin/keys/revoke', { key: swap.body.api_key, body: { api_key_id: t.api_key_id } });
    expect((await h.json('POST', '/v1/admin/keys/rotate', { key: swap.body.api_key, body: {} })).status).toBe(201);
  });

  test('a sandbox key cannot rotate or revoke live keys, nor read live usage (403 cross_environment_forbidden)', async () => {
    const t = await h.tenant();
    const live = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'live' });
    const r = expectError(await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: { api_key_id: live.api_key_id } }), 403, 'cross_environment_forbidden');
    expect(JSON.stringify(r)).not.toContain('sk_live_');
    expectError(await h.json('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: live.api_key_id } }), 403, 'cross_environment_forbidden');
    expectError(await h.json('GET', '/v1/admin/usage?env=live', { key: t.api_key }), 403, 'cross_environment_forbidden');
    // the live key can
    expect((await h.json('POST', '/v1/admin/keys/rotate', { key: live.api_key, body: { api_key_id: live.api_key_id } })).status).toBe(201);
  });

  test('needs keys:manage', async () => {
    const t = await h.tenant({ scopes: ['score'] });
    expectError(await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: {} }), 403, 'insufficient_scope');
  });
});

describe('POST /v1/admin/keys/revoke', () => {
  test('immediate and idempotent: a second call returns the same revoked_at; the key gets 401 at once', async () => {
    const t = await h.tenant();
    const k = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox' });
    expect((await h.call('GET', '/v1/admin/keys', { key: k.api_key })).status).toBe(200);
    const r1 = await h.json('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: k.api_key_id, reason: 'leaked in a log' } });
    expect(r1.status).toBe(200);
    expect(r1.body).toEqual({ revoked: true, revoked_at: h.clock.now().toISOString(), api_key_id: k.api_key_id });
    expectError(await h.json('GET', '/v1/admin/keys', { key: k.api_key }), 401, 'api_key_revoked');
    h.clock.advance(60_000);
    const r2 = await h.json('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: k.api_key_id } });
    expect(r2.body.revoked_at).toBe(r1.body.revoked_at);
    // the id is a UUID: in upper case it is the same key
    const r3 = await h.json('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: k.api_key_id.toUpperCase() } });
    expect(r3.body).toEqual({ revoked: true, revoked_at: r1.body.revoked_at, api_key_id: k.api_key_id });
  });

  test('the last active key is refused with 409 last_active_key; reason over 256 → 422; another tenant → 403', async () => {
    const t = await h.tenant();
    expectError(await h.json('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: t.api_key_id } }), 409, 'last_active_key');
    expect((await h.call('GET', '/v1/admin/keys', { key: t.api_key })).status).toBe(200);
    const b = expectError(await h.json('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: t.api_key_id, reason: 'x'.repeat(257) } }), 422, 'validation_failed');
    expect(b.fields[0].path).toBe('reason');
    const other = await h.tenant();
    expectError(await h.json('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: other.api_key_id } }), 403, 'cross_tenant_forbidden');
    expectError(await h.json('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: crypto.randomUUID() } }), 404, 'resource_not_found');
    // with a second key, the first can go
    const second = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox' });
    expect((await h.json('POST', '/v1/admin/keys/revoke', { key: second.api_key, body: { api_key_id: t.api_key_id } })).status).toBe(200);
  });

  test('the environment cannot be locked out: a live key does not make a sandbox key revocable, nor does a key in its rotation grace', async () => {
    const t = await h.tenant();
    // a live key exists, but a sandbox key cannot act on it: revoking the only sandbox key would leave that environment keyless
    await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'live' });
    const b = expectError(await h.json('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: t.api_key_id } }), 409, 'last_active_key');
    expect(b.message).toContain('sandbox');
    // rotated with a grace: the old key lapses by itself, so the new one is the last lasting key
    const rotated = await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: { api_key_id: t.api_key_id, grace_days: 1 } });
    expect(rotated.status).toBe(201);
    expectError(await h.json('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: rotated.body.api_key_id } }), 409, 'last_active_key');
    // the old one may go (the new one stays)
    expect((await h.json('POST', '/v1/admin/keys/revoke', { key: rotated.body.api_key, body: { api_key_id: t.api_key_id } })).status).toBe(200);
    expect((await h.call('GET', '/v1/admin/keys', { key: rotated.body.api_key })).status).toBe(200);
  });
});

describe('audit', () => {
  test('every admin action writes who (key id), what, when and the request id', async () => {
    const t = await h.tenant();
    const rot = await h.call('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: { grace_days: 1 } });
    const rotated = (await rot.json()) as { api_key_id: string };
    const rev = await h.call('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: t.api_key_id } });
    const rows = await auditOf(t.tenant_id);
    const rotation = rows.find((r) => r.action === 'api_key.rotated')!;
    expect(rotation).toMatchObject({ actorKeyId: t.api_key_id, target: t.api_key_id, requestId: rot.headers.get('x-request-id') });
    expect(rotation.details).toMatchObject({ new_key_id: rotated.api_key_id, grace_days: 1 });
    expect(rows.find((r) => r.action === 'api_key.revoked')).toMatchObject({ actorKeyId: t.api_key_id, requestId: rev.headers.get('x-request-id') });
    expect(rows.every((r) => r.createdAt instanceof Date)).toBe(true);
  });
});

describe('POST /v1/admin/keys', () => {
  test('creates a restricted key shown once: it works for its scopes only, expires, is listed and audited', async () => {
    const t = await h.tenant();
    const created = await h.json('POST', '/v1/admin/keys', { key: t.api_key, body: { name: 'batch', scopes: ['score'], expires_at: new Date(h.clock.now().getTime() + 2 * DAY).toISOString(), rate_limit_per_minute: 600 } });
    expect(created.status).toBe(201);
    const k = created.body.api_key; // (read before toMatchObject: Bun's asymmetric matchers replace the matched values)
    expect(k).toMatch(/^sk_test_[0-9a-f]{28}$/);
    expect(created.body).toMatchObject({ name: 'batch', env: 'sandbox', scopes: ['score'], rate_limit_per_minute: 600 });
    const first = await h.json('POST', '/v1/score', { key: k, body: { nif: '599000015' } });
    expect(first.status).toBe(200);
    expectError(await h.json('POST', '/v1/esg', { key: k, body: {} }), 403, 'insufficient_scope');
    expect((await h.json('POST', '/v1/score', { key: k, body: { nif: '599000015' } })).headers.get('x-ratelimit-limit')).toBe('600');
    const listed = (await h.json('GET', '/v1/admin/keys', { key: t.api_key })).body.keys.find((x: any) => x.id === created.body.api_key_id);
    expect(listed).toMatchObject({ name: 'batch', scopes: ['score'], status: 'active', expires_at: created.body.expires_at });
    expect(JSON.stringify(listed)).not.toContain(k);
    expect((await auditOf(t.tenant_id)).find((a) => a.action === 'api_key.created')).toMatchObject({ target: created.body.api_key_id, actorKeyId: expect.any(String) });
    h.clock.advance(2 * DAY + 1000);
    expectError(await h.json('POST', '/v1/score', { key: k, body: { nif: '599000015' } }), 401, 'api_key_expired');
  });

  test('a key cannot grant what it does not hold, nor a higher limit, nor another environment; bad expiry; scope', async () => {
    const t = await h.tenant();
    const narrow = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', name: 'keys only', scopes: ['keys:manage', 'score'], rateLimitPerMinute: 100 });
    const r = await h.json('POST', '/v1/admin/keys', { key: narrow.api_key, body: { name: 'x', scopes: ['score', 'esg'] } });
    expect(expectError(r, 403, 'insufficient_scope').fields).toEqual([{ path: 'scopes', message: expect.stringContaining('esg') }]);
    expectError(await h.json('POST', '/v1/admin/keys', { key: narrow.api_key, body: { name: 'x', scopes: ['*'] } }), 403, 'insufficient_scope');
    expect(expectError(await h.json('POST', '/v1/admin/keys', { key: narrow.api_key, body: { name: 'x', rate_limit_per_minute: 101 } }), 422, 'validation_failed').fields[0].path).toBe('rate_limit_per_minute');
    const same = await h.json('POST', '/v1/admin/keys', { key: narrow.api_key, body: { name: 'inherits' } });
    // leaving the limit out inherits the caller's own (the plan's 600 would be faster than 100)
    expect(same.body).toMatchObject({ scopes: ['keys:manage', 'score'], rate_limit_per_minute: 100 });
    expect((await h.json('GET', '/v1/admin/keys', { key: same.body.api_key })).headers.get('x-ratelimit-limit')).toBe('100');
    expectError(await h.json('POST', '/v1/admin/keys', { key: t.api_key, body: { name: 'x', env: 'live' } }), 403, 'cross_environment_forbidden');
    expect(expectError(await h.json('POST', '/v1/admin/keys', { key: t.api_key, body: { name: 'x', expires_at: '2020-01-01T00:00:00Z' } }), 422, 'validation_failed').fields[0].path).toBe('expires_at');
    expect(expectError(await h.json('POST', '/v1/admin/keys', { key: t.api_key, body: { name: 'x', expires_at: '9999-12-31T00:00:00Z' } }), 422, 'validation_failed').fields).toEqual([{ path: 'expires_at', message: expect.stringContaining('from 1900 to 2199') }]);
    expectError(await h.json('POST', '/v1/admin/keys', { key: t.api_key, body: { name: 'x', scopes: ['nope'] } }), 422, 'validation_failed');
    expectError(await h.json('POST', '/v1/admin/keys', { key: t.api_key, body: {} }), 422, 'validation_failed');
    const scoreOnly = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', name: 'score', scopes: ['score'] });
    expectError(await h.json('POST', '/v1/admin/keys', { key: scoreOnly.api_key, body: { name: 'x' } }), 403, 'insufficient_scope');
  });

  test('a key rotates or revokes only keys within what it could create: their scopes held by it, and (a rotation mints a copy) a limit no higher', async () => {
    const t = await h.tenant(); // t.api_key: scopes *
    const narrow = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', name: 'esg admin', scopes: ['esg', 'keys:manage'], rateLimitPerMinute: 100 });
    const rotate = (key: string, id: string) => h.json('POST', '/v1/admin/keys/rotate', { key, body: { api_key_id: id, grace_days: 0 } });
    const revoke = (key: string, id: string) => h.json('POST', '/v1/admin/keys/revoke', { key, body: { api_key_id: id } });
    // the * key: neither rotated (its copy would be a * key in the narrow key's hands) nor revoked
    expect(expectError(await rotate(narrow.api_key, t.api_key_id), 403, 'insufficient_scope').message).toContain('*');
    expectError(await revoke(narrow.api_key, t.api_key_id), 403, 'insufficient_scope');
    expect((await h.json('GET', '/v1/admin/keys', { key: t.api_key })).status).toBe(200); // untouched
    // a key of its own scopes but a higher limit: revoked yes, rotated no
    const faster = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', name: 'fast esg', scopes: ['esg'], rateLimitPerMinute: 1000 });
    expect(expectError(await rotate(narrow.api_key, faster.api_key_id), 403, 'insufficient_scope').message).toContain('per-minute limit (1000)');
    const slower = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', name: 'slow esg', scopes: ['esg'], rateLimitPerMinute: 50 });
    expect((await rotate(narrow.api_key, slower.api_key_id)).status).toBe(201);
    expect((await revoke(narrow.api_key, faster.api_key_id)).status).toBe(200);
    // itself: always
    expect((await rotate(narrow.api_key, narrow.api_key_id)).status).toBe(201);
    expect((await auditOf(t.tenant_id)).filter((a) => a.action === 'api_key.rotated')).toHaveLength(2);
  });

  test('a key that expires mints nothing that outlives it: rotation keeps the expiry, a new key at most its own, no OAuth client', async () => {
    const t = await h.tenant();
    const tomorrow = new Date(h.clock.now().getTime() + DAY);
    const temp = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', name: 'contractor', scopes: ['keys:manage', 'score'], expiresAt: tomorrow });
    // rotating itself: the successor expires when it would have
    const self = await h.json('POST', '/v1/admin/keys/rotate', { key: temp.api_key, body: { grace_days: 0 } });
    expect(self.status).toBe(201);
    const listed = (await h.json('GET', '/v1/admin/keys', { key: t.api_key })).body.keys.find((k: any) => k.id === self.body.api_key_id);
    expect(listed.expires_at).toBe(tomorrow.toISOString());
    const successor = self.body.api_key;
    // a permanent key of the same scopes: not rotated by it
    const permanent = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', name: 'permanent', scopes: ['score'] });
    expect(expectError(await h.json('POST', '/v1/admin/keys/rotate', { key: successor, body: { api_key_id: permanent.api_key_id } }), 403, 'insufficient_scope').message).toContain('outlives');
    // a new key: its expiry by default, never later
    const child = await h.json('POST', '/v1/admin/keys', { key: successor, body: { name: 'child', scopes: ['score'] } });
    expect(child.body.expires_at).toBe(tomorrow.toISOString());
    expect(expectError(await h.json('POST', '/v1/admin/keys', { key: successor, body: { name: 'later', expires_at: new Date(tomorrow.getTime() + DAY).toISOString() } }), 422, 'validation_failed').fields).toEqual([{ path: 'expires_at', message: expect.stringContaining("no later than the calling key's own expiry") }]);
    // an OAuth client never expires
    expectError(await h.json('POST', '/v1/admin/oauth-clients', { key: successor, body: { name: 'forever', scopes: ['score'] } }), 403, 'insufficient_scope');
  });

  test('a key in its rotation grace lives on in its successor: it may still create what outlives the grace', async () => {
    const t = await h.tenant();
    expect((await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: { grace_days: 7 } })).status).toBe(201);
    const made = await h.json('POST', '/v1/admin/keys', { key: t.api_key, body: { name: 'after rotating' } });
    expect([made.status, made.body.expires_at]).toEqual([201, null]);
    expect((await h.json('POST', '/v1/admin/oauth-clients', { key: t.api_key, body: { name: 'backend', scopes: ['score'] } })).status).toBe(201);
  });

  test('a blank name (empty, spaces, or invisible characters only) is 422 validation_failed on name; no key is made', async () => {
    const t = await h.tenant();
    const keys = async () => (await h.json('GET', '/v1/admin/keys', { key: t.api_key })).body.keys.length;
    const before = await keys();
    for (const [name, message] of BLANK_NAMES) {
      const r = await h.json('POST', '/v1/admin/keys', { key: t.api_key, body: { name } });
      const b = expectError(r, 422, 'validation_failed');
      expect([JSON.stringify(name), b.message, b.fields]).toEqual([JSON.stringify(name), 'The request is invalid.', [{ path: 'name', message }]]);
    }
    expect(await keys()).toBe(before);
    expect((await auditOf(t.tenant_id)).filter((a) => a.action === 'api_key.created')).toEqual([]);
    // a visible character among them is a name
    expect((await h.json('POST', '/v1/admin/keys', { key: t.api_key, body: { name: ' \u200bb ' } })).status).toBe(201);
  });

  test('at most MAX_ACTIVE_KEYS active keys per environment', async () => {
    const t = await h.tenant();
    for (let i = 1; i < MAX_ACTIVE_KEYS; i++) expect((await h.json('POST', '/v1/admin/keys', { key: t.api_key, body: { name: `k${i}` } })).status).toBe(201);
    expectError(await h.json('POST', '/v1/admin/keys', { key: t.api_key, body: { name: 'one too many' } }), 409, 'too_many_active_keys');
  });
});

describe('Cache-Control on authenticated answers', () => {
  test('no-store on every answer that shows a secret once (keys, webhook and OAuth client secrets), on their replays, and on any tenant answer (the score fast path too)', async () => {
    const t = await h.tenant();
    const k = t.api_key;
    const created = await h.call('POST', '/v1/admin/keys', { key: k, body: { name: 'ci' }, headers: { 'idempotency-key': 'nostore-1' } });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const replayed = await h.call('POST', '/v1/admin/keys', { key: k, body: { name: 'ci' }, headers: { 'idempotency-key': 'nostore-1' } });
    expect([replayed.headers.get('idempotent-replayed'), replayed.headers.get('cache-control')]).toEqual(['true', 'no-store']);
    const rotated = await h.call('POST', '/v1/admin/keys/rotate', { key: k, body: {} });
    expect([rotated.status, rotated.headers.get('cache-control')]).toEqual([201, 'no-store']);
    const hook = await h.call('POST', '/v1/admin/webhooks', { key: k, body: { url: 'https://example.com/hook', enabled_events: ['*'] } });
    expect([hook.status, hook.headers.get('cache-control')]).toEqual([201, 'no-store']);
    // (k is in its rotation grace now, expiring: its successor, which does not, creates the client)
    const successor = ((await rotated.json()) as { api_key: string }).api_key;
    const client = await h.call('POST', '/v1/admin/oauth-clients', { key: successor, body: { name: 'backend' } });
    expect([client.status, client.headers.get('cache-control')]).toEqual([201, 'no-store']);
    const score = await h.call('POST', '/v1/score', { key: k, body: { nif: '599000015' } });
    expect([score.status, score.headers.get('cache-control')]).toEqual([200, 'no-store']);
    const listed = await h.call('GET', '/v1/admin/keys', { key: k });
    expect([listed.status, listed.headers.get('cache-control')]).toEqual([200, 'no-store']);
  });
});

describe('GET /v1/admin/audit-log', () => {
  test('who changed what, newest first, of the key\'s environment; filters, pages; another tenant sees none; scope', async () => {
    const t = await h.tenant();
    const created = await h.json('POST', '/v1/admin/keys', { key: t.api_key, body: { name: 'batch', scopes: ['score'] } });
    const rotated = await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: { api_key_id: created.body.api_key_id, grace_days: 0 } });
    expect(rotated.status).toBe(201);
    const live = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'live', name: 'prod' });
    await h.json('POST', '/v1/admin/keys', { key: live.api_key, body: { name: 'live one' } });
    const log = await h.json('GET', '/v1/admin/audit-log', { key: t.api_key });
    expect(log.status).toBe(200);
    expect(Value.Check(AuditLog, log.body)).toBe(true);
    expect(log.body.data.map((r: any) => [r.action, r.target])).toEqual([
      ['api_key.rotated', created.body.api_key_id],
      ['api_key.created', created.body.api_key_id],
    ]);
    expect(log.body.data[0]).toMatchObject({ actor: 'key', actor_key_id: t.api_key_id, request_id: rotated.headers.get('x-request-id'), details: { new_key_id: rotated.body.api_key_id, grace_days: 0 } });
    // the live key's own record is the live environment's
    expect((await h.json('GET', '/v1/admin/audit-log', { key: live.api_key })).body.data.map((r: any) => r.action)).toEqual(['api_key.created']);
    expect((await h.json('GET', '/v1/admin/audit-log?action=api_key.created', { key: t.api_key })).body.data).toHaveLength(1);
    const page = await h.json('GET', '/v1/admin/audit-log?limit=1', { key: t.api_key });
    const next = await h.json('GET', `/v1/admin/audit-log?limit=1&cursor=${page.body.next_cursor}`, { key: t.api_key });
    expect([page.body.data[0].action, next.body.data[0].action, next.body.next_cursor]).toEqual(['api_key.rotated', 'api_key.created', null]);
    expectError(await h.json('GET', '/v1/admin/audit-log?cursor=nope', { key: t.api_key }), 422, 'validation_failed');
    const other = await h.tenant();
    expect((await h.json('GET', '/v1/admin/audit-log', { key: other.api_key })).body.data).toEqual([]);
    const scoreOnly = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', name: 's', scopes: ['score'] });
    expectError(await h.json('GET', '/v1/admin/audit-log', { key: scoreOnly.api_key }), 403, 'insufficient_scope');
  });
});
