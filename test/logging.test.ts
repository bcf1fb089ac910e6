import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
import { createLogger } from '../src/lib/log';
import { makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

const lines: string[] = [];
let h: TestApp;
beforeAll(async () => {
  h = await makeApp({}, { log: createLogger('info', (l) => lines.push(l)) });
});
afterAll(() => h.close());

test('one JSON line per request with method, route, status, duration, requestId and tenant id — never the key', async () => {
  const t = await h.tenant();
  const ok = await h.call('POST', '/v1/score', { key: t.api_key, body: { nif: '599000015' }, headers: { 'idempotency-key': 'log-test' } });
  const bad = await h.call('GET', '/v1/admin/keys', { key: 'sk_test_' + 'a'.repeat(28) });
  await Bun.sleep(20); // the access log is written after the response
  const entries = lines.map((l) => JSON.parse(l)).filter((e) => e.msg === 'request');
  const first = entries.find((e) => e.requestId === ok.headers.get('x-request-id'));
  expect(first).toMatchObject({ level: 'info', method: 'POST', route: '/v1/score', status: 200, tenantId: t.tenant_id, keyId: t.api_key_id });
  expect(typeof first.durationMs).toBe('number');
  expect(entries.find((e) => e.requestId === bad.headers.get('x-request-id'))).toMatchObject({ status: 401, route: '/v1/admin/keys' });
  const all = lines.join('\n');
  expect(all).not.toContain(t.api_key);
  expect(all).not.toContain(t.api_key.slice(12));
  expect(all).not.toContain('a'.repeat(28));
  expect(all).not.toContain('log-test'); // not even the idempotency key
});

test('a route answering with its own Response is logged with that status', async () => {
  const r = await h.call('GET', '/v1/erp-connector/oauth/callback?state=unknown&code=x');
  expect(r.status).toBe(400);
  await Bun.sleep(20);
  const entry = lines.map((l) => JSON.parse(l)).find((e) => e.msg === 'request' && e.requestId === r.headers.get('x-request-id'));
  expect(entry.status).toBe(400);
});

test('an unexpected failure is logged with its requestId (and the response carries no stack)', async () => {
  const t = await h.tenant();
  const orig = h.ctx.tenants.listKeys;
  h.ctx.tenants.listKeys = async () => {
    throw new Error('disk on fire');
  };
  try {
    const r = await h.call('GET', '/v1/admin/keys', { key: t.api_key });
    expect(r.status).toBe(500);
    const entry = lines.map((l) => JSON.parse(l)).find((e) => e.msg === 'unhandled error' && e.requestId === r.headers.get('x-request-id'));
    expect(entry.error).toBe('disk on fire');
    expect(await r.text()).not.toContain('disk on fire');
  } finally {
    h.ctx.tenants.listKeys = orig;
  }
});

test('a key or webhook secret pasted into the path of an unknown route is not logged', async () => {
  const t = await h.tenant();
  const secret = 'whsec_' + btoa('not-a-real-secret-0123456789');
  const r = await h.call('GET', `/v1/scor/${t.api_key}/${secret}?api_key=${t.api_key}`, { key: t.api_key });
  expect(r.status).toBe(404);
  await Bun.sleep(20);
  const entry = lines.map((l) => JSON.parse(l)).find((e) => e.msg === 'request' && e.requestId === r.headers.get('x-request-id'));
  expect(entry).toMatchObject({ status: 404, route: '/v1/scor/sk_test_[redacted]' });
  const all = lines.join('\n');
  expect(all).not.toContain(t.api_key.slice(8));
  expect(all).not.toContain(secret.slice(6));
});
