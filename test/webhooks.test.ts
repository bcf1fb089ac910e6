import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { Webhook } from 'standardwebhooks';
import { and, eq } from 'drizzle-orm';
import { SANDBOX_FIXTURES } from '../src/features/score/fixtures';
import { postWebhook, RefusedAddressError, webhookDns } from '../src/features/webhooks/delivery-http';
import { isLinkLocalAddress } from '../src/features/webhooks/service';
import { expectError, freePort, makeApp, REDIS_TEST_URL, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

interface Received {
  headers: Record<string, string>;
  body: string;
}

/** A webhook receiver on 127.0.0.1 whose answers the test controls. */
function receiver() {
  const received: Received[] = [];
  let answers: number[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      received.push({ headers: Object.fromEntries(req.headers.entries()), body: await req.text() });
      return new Response('ok', { status: answers.shift() ?? 200 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hooks`,
    received,
    answerWith: (...codes: number[]) => (answers = codes),
    stop: () => server.stop(true),
  };
}

async function until<T>(fn: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('condition not reached in time');
    await Bun.sleep(20);
  }
}

const nifOf = (outcome: string) => SANDBOX_FIXTURES.find((f) => f.outcome === outcome)!.nif;

let h: TestApp;
let rx: ReturnType<typeof receiver>;
beforeAll(async () => {
  // the clock stays real here: deliveries and retries run on timers
  h = await makeApp({ WEBHOOK_RETRY_DELAYS_MS: '50,100', WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_FAILURE_THRESHOLD: '5', WEBHOOK_DISABLE_AFTER_MS: '0' });
  h.clock.now = () => new Date();
  rx = receiver();
});
afterAll(async () => {
  rx.stop();
  await h.close();
});

const create = (key: string, body: Record<string, unknown>) => h.json('POST', '/v1/admin/webhooks', { key, body });

describe('webhook endpoints', () => {
  test('create shows the whsec_ secret once; list shows only its prefix', async () => {
    const t = await h.tenant();
    const c = await create(t.api_key, { url: rx.url, description: 'ops', enabled_events: ['*'] });
    expect(c.status).toBe(201);
    expect(c.headers.get('location')).toBe(`/v1/admin/webhooks/${c.body.id}`);
    expect(c.body.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(c.body.signing_secret_prefix).toBe(c.body.signing_secret.slice(0, 12));
    expect(c.body.status).toBe('active');
    const list = await h.json('GET', '/v1/admin/webhooks', { key: t.api_key });
    expect(list.body.webhooks.length).toBe(1);
    expect(JSON.stringify(list.body)).not.toContain(c.body.signing_secret.slice(12));
    const rows = await h.ctx.database.db.select().from(h.ctx.database.t.webhookEndpoints);
    expect(JSON.stringify(rows)).not.toContain(c.body.signing_secret.slice(12)); // encrypted at rest
  });

  test('validation: events, url; live endpoints must be https and public', async () => {
    const t = await h.tenant();
    const bad = expectError(await create(t.api_key, { url: rx.url, enabled_events: ['score.updated', 'nope'] }), 422, 'validation_failed');
    expect(bad.fields[0].path).toBe('enabled_events');
    expectError(await create(t.api_key, { url: rx.url, enabled_events: ['*', 'score.updated'] }), 422, 'validation_failed');
    expect(expectError(await create(t.api_key, { url: rx.url, enabled_events: ['score.updated', 'score.updated'] }), 422, 'validation_failed').fields[0]).toEqual({ path: 'enabled_events', message: 'must not repeat an item' });
    expectError(await create(t.api_key, { url: 'ftp://x', enabled_events: ['*'] }), 422, 'validation_failed');
    // the rules the document states (an http(s) URL with a host and no credentials; the event names)
    for (const url of ['https://user:pw@example.com/h', 'http:///h', 'https://?x=1'])
      expect(expectError(await create(t.api_key, { url, enabled_events: ['*'] }), 422, 'validation_failed').fields.map((f: { path: string }) => f.path), url).toEqual(['url']);
    const doc = (await h.json('GET', '/openapi.json')).body;
    const schema = doc.components.schemas.CreateWebhook;
    expect(schema.properties.enabled_events.items.enum).toEqual(expect.arrayContaining(['score.updated', '*']));
    for (const url of ['https://user:pw@example.com/h', 'http:///h', 'ftp://x']) expect(new RegExp(schema.properties.url.pattern).test(url), url).toBe(false);
    expect(new RegExp(schema.properties.url.pattern).test(rx.url)).toBe(true);
    // messages that name the rule: a missing field, a nullable string's length
    expect(expectError(await create(t.api_key, { url: rx.url }), 422, 'validation_failed').fields).toEqual([{ path: 'enabled_events', message: 'is required' }]);
    const long = expectError(await create(t.api_key, { url: rx.url, enabled_events: ['*'], description: 'd'.repeat(501) }), 422, 'validation_failed');
    expect(long.fields).toEqual([{ path: 'description', message: 'must be at most 500 characters' }]);
    const live = await h.tenant({ env: 'live' });
    const http = expectError(await create(live.api_key, { url: 'http://example.com/h', enabled_events: ['*'] }), 422, 'validation_failed');
    expect(http.fields[0].path).toBe('url');
    const refused = [
      'https://127.0.0.1/h', 'https://10.1.2.3/h', 'https://169.254.169.254/latest', 'https://[::1]/h', 'https://localhost/h',
      // IPv4 embedded in IPv6, which URL parsing rewrites to hex: mapped, compatible, NAT64, 6to4
      'https://[::ffff:127.0.0.1]/h', 'https://[::ffff:7f00:1]/h', 'https://[::ffff:169.254.169.254]/latest', 'https://[::127.0.0.1]/h',
      'https://[64:ff9b::7f00:1]/h', 'https://[2002:7f00:1::]/h', 'https://[fd00::1]/h', 'https://[fe80::1]/h',
    ];
    for (const url of refused)
      expect(expectError(await create(live.api_key, { url, enabled_events: ['*'] }), 422, 'validation_failed').fields[0].path).toBe('url');
  });

  test('a hosted sandbox (WEBHOOK_ALLOW_PRIVATE_TARGETS=false) refuses private targets too, but allows http', async () => {
    const hosted = await makeApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
    try {
      const t = await hosted.tenant();
      for (const url of ['http://127.0.0.1:9/h', 'http://169.254.169.254/latest', 'http://[::ffff:10.0.0.1]/x'])
        expect(expectError(await hosted.json('POST', '/v1/admin/webhooks', { key: t.api_key, body: { url, enabled_events: ['*'] } }), 422, 'validation_failed').fields[0].path).toBe('url');
      expect((await hosted.json('POST', '/v1/admin/webhooks', { key: t.api_key, body: { url: 'http://93.184.215.14/h', enabled_events: ['*'] } })).status).toBe(201);
    } finally {
      await hosted.close();
    }
  });

  test('the embedded sandbox (private targets allowed) still refuses link-local targets, at registration and at delivery', async () => {
    const t = await h.tenant();
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[fe80::1]/h', 'http://[::ffff:169.254.169.254]/latest', 'http://[fd00:ec2::254]/latest'])
      expect(expectError(await create(t.api_key, { url, enabled_events: ['*'] }), 422, 'validation_failed').fields).toEqual([{ path: 'url', message: expect.stringContaining('link-local') }]);
    // loopback and private receivers stay allowed (local development)
    expect((await create(t.api_key, { url: rx.url, enabled_events: ['*'] })).status).toBe(201);
    expect((await create(t.api_key, { url: 'http://10.1.2.3/h', enabled_events: ['*'] })).status).toBe(201);
    // the embedded forms of 169.254.0.0/16 are link-local too; loopback and private are not
    for (const ip of ['169.254.169.254', 'fe80::abcd', '::ffff:a9fe:a9fe', '64:ff9b::a9fe:a9fe', '2002:a9fe:a9fe::1', 'fd00:ec2::254']) expect(isLinkLocalAddress(ip), ip).toBe(true);
    for (const ip of ['127.0.0.1', '10.0.0.1', '::1', '::ffff:7f00:1', 'fd00:ec2::253', '2001:db8::1']) expect(isLinkLocalAddress(ip), ip).toBe(false);
  });

  test('sending a test to a disabled endpoint → 409 webhook_endpoint_inactive; a malformed events cursor → 422', async () => {
    const t = await h.tenant();
    const c = await create(t.api_key, { url: rx.url, enabled_events: ['*'] });
    await h.json('PATCH', `/v1/admin/webhooks/${c.body.id}`, { key: t.api_key, body: { status: 'disabled' } });
    expectError(await h.json('POST', `/v1/admin/webhooks/${c.body.id}/test`, { key: t.api_key }), 409, 'webhook_endpoint_inactive');
    expect(expectError(await h.json('GET', '/v1/events?cursor=garbage', { key: t.api_key }), 422, 'validation_failed').fields[0].path).toBe('query.cursor');
    const badType = expectError(await h.json('GET', '/v1/events?type=bogus', { key: t.api_key }), 422, 'validation_failed').fields[0];
    expect(badType.path).toBe('query.type');
    expect(badType.message).toStartWith('must match: Comma-separated event types: '); // not the raw pattern
  });

  test('update, disable, delete; another tenant gets 404 and sees nothing', async () => {
    const a = await h.tenant();
    const b = await h.tenant();
    const c = await create(a.api_key, { url: rx.url, enabled_events: ['score.updated'] });
    const id = c.body.id;
    const upd = await h.json('PATCH', `/v1/admin/webhooks/${id}`, { key: a.api_key, body: { enabled_events: ['deterioration.alert'], description: null, status: 'disabled' } });
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({ enabled_events: ['deterioration.alert'], status: 'disabled', description: null });
    // a PATCH with nothing it knows (a misspelt field) is refused, not answered 200 with no change
    for (const body of [{ events: ['score.updated'] }, {}]) {
      const none = expectError(await h.json('PATCH', `/v1/admin/webhooks/${id}`, { key: a.api_key, body }), 422, 'validation_failed');
      expect(none.fields).toEqual([{ path: '(body)', message: 'must set at least one of: url, description, enabled_events, status' }]);
    }
    expect((await h.json('GET', `/v1/admin/webhooks/${id}`, { key: a.api_key })).body.enabled_events).toEqual(['deterioration.alert']);
    expectError(await h.json('PATCH', `/v1/admin/webhooks/${id}`, { key: b.api_key, body: { status: 'active' } }), 404, 'resource_not_found');
    expect((await h.json('GET', `/v1/admin/webhooks/${id}`, { key: a.api_key })).body).toMatchObject({ id, status: 'disabled' });
    expectError(await h.json('GET', `/v1/admin/webhooks/${id}`, { key: b.api_key }), 404, 'resource_not_found');
    expectError(await h.json('DELETE', `/v1/admin/webhooks/${id}`, { key: b.api_key }), 404, 'resource_not_found');
    expectError(await h.json('POST', `/v1/admin/webhooks/${id}/test`, { key: b.api_key }), 404, 'resource_not_found');
    expect((await h.json('GET', '/v1/admin/webhooks', { key: b.api_key })).body.webhooks).toEqual([]);
    expect((await h.json('DELETE', `/v1/admin/webhooks/${id}`, { key: a.api_key })).body).toEqual({ id, deleted: true });
    expectError(await h.json('DELETE', `/v1/admin/webhooks/${id}`, { key: a.api_key }), 404, 'resource_not_found');
    expectError(await h.json('PATCH', '/v1/admin/webhooks/not-a-uuid', { key: a.api_key, body: {} }), 404, 'resource_not_found');
  });

  test('scope webhooks:manage is required', async () => {
    const t = await h.tenant({ scopes: ['score'] });
    expectError(await h.json('GET', '/v1/admin/webhooks', { key: t.api_key }), 403, 'insufficient_scope');
    expectError(await h.json('GET', '/v1/admin/webhooks'), 401, 'missing_api_key');
  });
});

describe('the delivery connection', () => {
  /** the endpoint's last delivery once an attempt has failed */
  const failedOnce = (app: TestApp, key: string, id: string) =>
    until(async () => {
      const d = await app.json('GET', `/v1/admin/webhooks/${id}/deliveries`, { key });
      return d.body.data[0]?.last_error && d.body.data[0];
    });

  test('DNS rebinding: a name that turns private after the check is refused at connect time; nothing reaches the target', async () => {
    const hosted = await makeApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', WEBHOOK_RETRY_DELAYS_MS: '60000' });
    hosted.clock.now = () => new Date();
    const original = webhookDns.lookupAll;
    const port = new URL(rx.url).port;
    let answers = 0;
    // public for the check at creation and the check before sending; loopback when the client connects
    webhookDns.lookupAll = async (host) => (host === 'rebind.example.test' ? [{ address: ++answers <= 2 ? '93.184.215.14' : '127.0.0.1', family: 4 }] : original(host));
    try {
      const t = await hosted.tenant();
      const c = await hosted.json('POST', '/v1/admin/webhooks', { key: t.api_key, body: { url: `http://rebind.example.test:${port}/rebound`, enabled_events: ['*'] } });
      expect(c.status).toBe(201);
      const before = rx.received.length;
      expect((await hosted.json('POST', `/v1/admin/webhooks/${c.body.id}/test`, { key: t.api_key })).status).toBe(202);
      const d = await failedOnce(hosted, t.api_key, c.body.id);
      expect(d).toMatchObject({ status: 'pending', attempts: 1, last_status_code: null });
      expect(d.last_error).toContain('public address');
      expect(answers).toBe(3);
      expect(rx.received.length).toBe(before);
    } finally {
      webhookDns.lookupAll = original;
      await hosted.close();
    }
  });

  test('the embedded sandbox: a name that turns link-local after the check is refused at connect time, as a private one is in a hosted one', async () => {
    const local = await makeApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_DELAYS_MS: '60000' });
    local.clock.now = () => new Date();
    const original = webhookDns.lookupAll;
    let answers = 0;
    // loopback (allowed here) for the check at creation; the metadata address when the client connects
    webhookDns.lookupAll = async (host) => (host === 'meta.example.test' ? [{ address: ++answers <= 1 ? '127.0.0.1' : '169.254.169.254', family: 4 }] : original(host));
    try {
      const t = await local.tenant();
      const c = await local.json('POST', '/v1/admin/webhooks', { key: t.api_key, body: { url: 'http://meta.example.test/latest', enabled_events: ['*'] } });
      expect(c.status).toBe(201);
      expect((await local.json('POST', `/v1/admin/webhooks/${c.body.id}/test`, { key: t.api_key })).status).toBe(202);
      const d = await failedOnce(local, t.api_key, c.body.id);
      expect(d).toMatchObject({ status: 'pending', attempts: 1, last_status_code: null });
      expect(d.last_error).toContain('refused');
    } finally {
      webhookDns.lookupAll = original;
      await local.close();
    }
  });

  test('an address literal is checked too (it is never looked up), before anything is sent', async () => {
    const before = rx.received.length;
    const send = (url: string) => postWebhook(url, { headers: {}, body: '{}', timeoutMs: 1000, allowedAddress: (ip) => ip !== '127.0.0.1' });
    await expect(send(rx.url)).rejects.toBeInstanceOf(RefusedAddressError);
    expect(rx.received.length).toBe(before);
    expect(await postWebhook(rx.url, { headers: {}, body: '{}', timeoutMs: 1000 })).toBe(200); // no check asked: delivered
  });

  test('the connection goes to the address the name was resolved to for it', async () => {
    const original = webhookDns.lookupAll;
    webhookDns.lookupAll = async (host) => (host === 'pinned.example.test' ? [{ address: '127.0.0.1', family: 4 }] : original(host));
    try {
      const t = await h.tenant();
      const c = await create(t.api_key, { url: `http://pinned.example.test:${new URL(rx.url).port}/pinned`, enabled_events: ['*'] });
      const r = await h.json('POST', `/v1/admin/webhooks/${c.body.id}/test`, { key: t.api_key });
      const got = await until(() => rx.received.find((x) => x.headers['webhook-id'] === r.body.event_id));
      expect(got.headers.host).toBe(`pinned.example.test:${new URL(rx.url).port}`);
    } finally {
      webhookDns.lookupAll = original;
    }
  });

  test('a receiver slower than WEBHOOK_TIMEOUT_MS: the attempt fails with "timeout"; redirects are not followed', async () => {
    let redirectedTo = 0;
    const slow: ReturnType<typeof Bun.serve> = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(req: Request): Promise<Response> {
        const path = new URL(req.url).pathname;
        if (path === '/slow') await Bun.sleep(3000);
        if (path === '/moved') return new Response(null, { status: 302, headers: { location: `http://127.0.0.1:${slow.port}/elsewhere` } });
        if (path === '/elsewhere') redirectedTo++;
        return new Response('ok');
      },
    });
    try {
      const t = await h.tenant();
      const base = `http://127.0.0.1:${slow.port}`;
      const a = await create(t.api_key, { url: `${base}/slow`, enabled_events: ['*'] });
      const b = await create(t.api_key, { url: `${base}/moved`, enabled_events: ['*'] });
      await h.json('POST', `/v1/admin/webhooks/${a.body.id}/test`, { key: t.api_key });
      await h.json('POST', `/v1/admin/webhooks/${b.body.id}/test`, { key: t.api_key });
      const first = await failedOnce(h, t.api_key, a.body.id);
      expect(first.last_error).toBe('timeout');
      const moved = await failedOnce(h, t.api_key, b.body.id);
      expect(moved).toMatchObject({ last_status_code: 302, last_error: 'HTTP 302' });
      expect(redirectedTo).toBe(0);
    } finally {
      slow.stop(true);
    }
  });
});

describe('signed delivery (Standard Webhooks)', () => {
  test('a test event is delivered once, verified by the standardwebhooks package', async () => {
    const t = await h.tenant();
    const c = await create(t.api_key, { url: rx.url, enabled_events: ['score.updated'] });
    const before = rx.received.length;
    const r = await h.json('POST', `/v1/admin/webhooks/${c.body.id}/test`, { key: t.api_key });
    expect(r.status).toBe(202);
    const got = await until(() => rx.received.slice(before).find((x) => x.headers['webhook-id'] === r.body.event_id));
    const payload = new Webhook(c.body.signing_secret).verify(got.body, got.headers) as any;
    expect(payload).toMatchObject({ id: r.body.event_id, type: 'webhook.test', environment: 'sandbox' });
    expect(() => new Webhook('whsec_' + Buffer.alloc(32, 1).toString('base64')).verify(got.body, got.headers)).toThrow();
    const deliveries = await until(async () => {
      const d = await h.json('GET', `/v1/admin/webhooks/${c.body.id}/deliveries`, { key: t.api_key });
      return d.body.data[0]?.status === 'succeeded' && d.body;
    });
    expect(deliveries.data[0]).toMatchObject({ event_type: 'webhook.test', attempts: 1, last_status_code: 200 });
    const ep = (await h.json('GET', '/v1/admin/webhooks', { key: t.api_key })).body.webhooks[0];
    expect(ep.last_success_at).not.toBeNull();
  });

  test('an attempt cut short by a database outage gives its claim back: retried by the sweep long before its lock would expire, and not counted', async () => {
    const t = await h.tenant();
    const c = await create(t.api_key, { url: rx.url, enabled_events: ['webhook.test'] });
    const service = h.ctx.services!.webhooks as unknown as { sendClaimed: (...args: unknown[]) => Promise<unknown> };
    let cut = 0;
    let lockedUntil: Date | null = null;
    // the first attempt loses its connection, as when PostgreSQL terminates it
    service.sendClaimed = async (delivery) => {
      cut++;
      lockedUntil = (delivery as { lockedUntil: Date | null }).lockedUntil;
      delete (service as { sendClaimed?: unknown }).sendClaimed; // the prototype's again
      throw Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    };
    try {
      const r = await h.json('POST', `/v1/admin/webhooks/${c.body.id}/test`, { key: t.api_key });
      expect(r.status).toBe(202);
      await until(() => rx.received.find((x) => x.headers['webhook-id'] === r.body.event_id), 10_000);
      expect(cut).toBe(1);
      // sent again before the cut attempt's claim would have expired (WEBHOOK_TIMEOUT_MS, 1 s here, + 5 s; the sweep runs every second)
      expect(lockedUntil).toBeInstanceOf(Date);
      expect(Date.now()).toBeLessThan(lockedUntil!.getTime());
      const [d] = await until(async () => {
        const list = await deliveriesOf(h, t.api_key, c.body.id);
        return list[0]?.status === 'succeeded' && list;
      });
      expect(d).toMatchObject({ attempts: 1, last_status_code: 200 });
    } finally {
      delete (service as { sendClaimed?: unknown }).sendClaimed;
    }
  });

  test('after rotate-secret both the new and the old secret verify for 24 h', async () => {
    const t = await h.tenant();
    const c = await create(t.api_key, { url: rx.url, enabled_events: ['*'] });
    const rot = await h.json('POST', `/v1/admin/webhooks/${c.body.id}/rotate-secret`, { key: t.api_key });
    expect(rot.status).toBe(200);
    expect(rot.body.signing_secret).not.toBe(c.body.signing_secret);
    const r = await h.json('POST', `/v1/admin/webhooks/${c.body.id}/test`, { key: t.api_key });
    const got = await until(() => rx.received.find((x) => x.headers['webhook-id'] === r.body.event_id));
    expect(got.headers['webhook-signature']!.split(' ').length).toBe(2);
    expect(() => new Webhook(rot.body.signing_secret).verify(got.body, got.headers)).not.toThrow();
    expect(() => new Webhook(c.body.signing_secret).verify(got.body, got.headers)).not.toThrow();
    expect(rot.body).toMatchObject({ previous_secret_prefix: c.body.signing_secret_prefix, ended_secret_prefix: null });
  });

  test('a second rotation within the grace says the first secret ends now (one earlier secret is kept), in its answer and the audit log', async () => {
    const t = await h.tenant();
    const c = await create(t.api_key, { url: rx.url, enabled_events: ['*'] });
    const first = await h.json('POST', `/v1/admin/webhooks/${c.body.id}/rotate-secret`, { key: t.api_key });
    const second = await h.json('POST', `/v1/admin/webhooks/${c.body.id}/rotate-secret`, { key: t.api_key });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ previous_secret_prefix: first.body.signing_secret_prefix, ended_secret_prefix: c.body.signing_secret_prefix });
    const r = await h.json('POST', `/v1/admin/webhooks/${c.body.id}/test`, { key: t.api_key });
    const got = await until(() => rx.received.find((x) => x.headers['webhook-id'] === r.body.event_id));
    expect(() => new Webhook(second.body.signing_secret).verify(got.body, got.headers)).not.toThrow();
    expect(() => new Webhook(first.body.signing_secret).verify(got.body, got.headers)).not.toThrow();
    expect(() => new Webhook(c.body.signing_secret).verify(got.body, got.headers)).toThrow(); // as the answer said
    const audit = await auditOf(h, t.tenant_id, 'webhook.secret_rotated');
    expect(audit.map((a) => a.details)).toEqual([
      expect.objectContaining({ previous_secret_prefix: c.body.signing_secret_prefix, ended_secret_prefix: null }),
      expect.objectContaining({ previous_secret_prefix: first.body.signing_secret_prefix, ended_secret_prefix: c.body.signing_secret_prefix }),
    ]);
    for (const a of audit) expect(JSON.stringify(a.details)).not.toContain(second.body.signing_secret);
  });

  test('rotations sent at once each replace a different secret (each answer names the one it replaced)', async () => {
    const t = await h.tenant();
    const c = await create(t.api_key, { url: rx.url, enabled_events: ['*'] });
    const answers = await Promise.all(Array.from({ length: 6 }, () => h.json('POST', `/v1/admin/webhooks/${c.body.id}/rotate-secret`, { key: t.api_key })));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const replaced = answers.map((a) => a.body.previous_secret_prefix);
    expect(new Set(replaced).size).toBe(answers.length);
    // a chain: the first replaced the original, and every new secret but the last was replaced by another
    const news = answers.map((a) => a.body.signing_secret_prefix);
    expect(replaced).toContain(c.body.signing_secret_prefix);
    expect(news.filter((n) => !replaced.includes(n)).length).toBe(1);
    // each answer's prefix is its own secret's (it had been read after the rotation: another's could show)
    for (const a of answers) expect(a.body.signing_secret_prefix).toBe(a.body.signing_secret.slice(0, 12));
  });

  test('the audit log says what a change of endpoint changed: its url and events, from and to; creation and deletion name them', async () => {
    const t = await h.tenant();
    const c = await create(t.api_key, { url: rx.url, enabled_events: ['score.updated'] });
    await h.json('PATCH', `/v1/admin/webhooks/${c.body.id}`, { key: t.api_key, body: { url: `${rx.url}/moved`, enabled_events: ['*'] } });
    await h.json('DELETE', `/v1/admin/webhooks/${c.body.id}`, { key: t.api_key });
    expect((await auditOf(h, t.tenant_id, 'webhook.created'))[0]!.details).toEqual({ url: rx.url, description: null, enabled_events: ['score.updated'] });
    expect((await auditOf(h, t.tenant_id, 'webhook.updated'))[0]!.details).toEqual({ changes: { url: { from: rx.url, to: `${rx.url}/moved` }, enabled_events: { from: ['score.updated'], to: ['*'] } } });
    expect((await auditOf(h, t.tenant_id, 'webhook.deleted'))[0]!.details).toEqual({ url: `${rx.url}/moved`, enabled_events: ['*'], status: 'active' });
    // a PATCH that changes nothing is no entry
    const d = await create(t.api_key, { url: rx.url, enabled_events: ['score.updated'] });
    expect((await h.json('PATCH', `/v1/admin/webhooks/${d.body.id}`, { key: t.api_key, body: { url: rx.url, enabled_events: ['score.updated'] } })).status).toBe(200);
    expect((await auditOf(h, t.tenant_id, 'webhook.updated')).length).toBe(1);
  });

  test('failures are retried with back-off (3 attempts), counted, then succeed; success resets the counter', async () => {
    const t = await h.tenant();
    const c = await create(t.api_key, { url: rx.url, enabled_events: ['*'] });
    rx.answerWith(500, 503);
    const r = await h.json('POST', `/v1/admin/webhooks/${c.body.id}/test`, { key: t.api_key });
    const d = await until(async () => {
      const list = await h.json('GET', `/v1/admin/webhooks/${c.body.id}/deliveries`, { key: t.api_key });
      return list.body.data[0]?.status === 'succeeded' && list.body.data[0];
    });
    expect(d).toMatchObject({ attempts: 3, last_status_code: 200 });
    expect(rx.received.filter((x) => x.headers['webhook-id'] === r.body.event_id).length).toBe(3);
    const ep = (await h.json('GET', '/v1/admin/webhooks', { key: t.api_key })).body.webhooks[0];
    expect(ep.consecutive_failures).toBe(0);
    expect(ep.last_failure_at).not.toBeNull();
    expect(ep.last_success_at).not.toBeNull();
  });

  test('a delivery that fails 3 times is given up; after the threshold of consecutive failures the endpoint is failed until re-enabled', async () => {
    const t = await h.tenant();
    const down = receiver();
    const c = await create(t.api_key, { url: down.url, enabled_events: ['*'] });
    down.answerWith(...Array(20).fill(500));
    const r1 = await h.json('POST', `/v1/admin/webhooks/${c.body.id}/test`, { key: t.api_key });
    await until(async () => (await h.json('GET', `/v1/admin/webhooks/${c.body.id}/deliveries`, { key: t.api_key })).body.data[0]?.status === 'failed');
    let ep = (await h.json('GET', '/v1/admin/webhooks', { key: t.api_key })).body.webhooks[0];
    expect(ep).toMatchObject({ consecutive_failures: 3, status: 'active' });
    const r2 = await h.json('POST', `/v1/admin/webhooks/${c.body.id}/test`, { key: t.api_key });
    ep = await until(async () => {
      const e = (await h.json('GET', '/v1/admin/webhooks', { key: t.api_key })).body.webhooks[0];
      return e.status === 'failed' && e;
    });
    expect(ep.consecutive_failures).toBe(5);
    expect(down.received.filter((x) => x.headers['webhook-id'] === r1.body.event_id).length).toBe(3);
    const sent = down.received.length;
    await Bun.sleep(300);
    expect(down.received.length).toBe(sent); // nothing more goes to a failed endpoint
    // the delivery still pending when the endpoint failed is held (not failed: issue 17), with no next attempt announced
    const given = await until(async () => {
      const d = (await h.json('GET', `/v1/admin/webhooks/${c.body.id}/deliveries`, { key: t.api_key })).body.data as { status: string; next_attempt_at: string | null }[];
      return d.length === 2 && d.map((x) => x.status).join() === 'held,failed' && d;
    });
    expect(given.map((x) => x.next_attempt_at)).toEqual([null, null]);
    down.answerWith(); // the receiver is back
    const re = await h.json('PATCH', `/v1/admin/webhooks/${c.body.id}`, { key: t.api_key, body: { status: 'active' } });
    expect(re.body).toMatchObject({ status: 'active', consecutive_failures: 0 });
    // re-enabling sends what it missed (the one given up during the failure streak and the held one), in event order
    const after = await until(() => {
      const ids = down.received.slice(sent).map((x) => x.headers['webhook-id']);
      return ids.length >= 2 && ids;
    });
    expect(after).toEqual([r1.body.event_id, r2.body.event_id]);
    await until(async () => (await h.json('GET', `/v1/admin/webhooks/${c.body.id}/deliveries`, { key: t.api_key })).body.data.every((x: { status: string }) => x.status === 'succeeded'));
    down.stop();
  });

  test('a receiver that is down and then up gets the event', async () => {
    const t = await h.tenant();
    const port = freePort();
    const c = await create(t.api_key, { url: `http://127.0.0.1:${port}/late`, enabled_events: ['*'] });
    const r = await h.json('POST', `/v1/admin/webhooks/${c.body.id}/test`, { key: t.api_key });
    await until(async () => (await h.json('GET', `/v1/admin/webhooks/${c.body.id}/deliveries`, { key: t.api_key })).body.data[0]?.attempts >= 1);
    const got: string[] = [];
    const late = Bun.serve({ port, hostname: '127.0.0.1', fetch: async (req) => (got.push(req.headers.get('webhook-id')!), new Response('ok')) });
    try {
      await until(() => got.includes(r.body.event_id));
    } finally {
      late.stop(true);
    }
  });
});

describe('events and the re-score', () => {
  test('sandbox rescore of the deteriorating fixture emits score.updated and deterioration.alert, delivered to subscribers', async () => {
    const t = await h.tenant();
    const all = await create(t.api_key, { url: rx.url, enabled_events: ['*'] });
    const onlyScore = await create(t.api_key, { url: rx.url + '?only=score', enabled_events: ['score.updated'] });
    const nif = nifOf('deteriorating_on_rescore');
    const first = await h.json('POST', '/v1/score', { key: t.api_key, body: { nif, customer_reference: 'watch-1' } });
    await h.json('POST', '/v1/score', { key: t.api_key, body: { nif: nifOf('tier_a_low_pd') } });
    const res = await h.json('POST', '/v1/sandbox/rescore', { key: t.api_key });
    expect(res.status).toBe(200);
    expect(res.body.rescored).toBe(2);
    const types = res.body.events.filter((e: any) => e.nif === nif).map((e: any) => e.type).sort();
    expect(types).toEqual(['deterioration.alert', 'score.updated']);
    expect(res.body.events.filter((e: any) => e.nif !== nif)).toEqual([]); // the stable company did not move
    const updatedId = res.body.events.find((e: any) => e.type === 'score.updated').id;
    const alertId = res.body.events.find((e: any) => e.type === 'deterioration.alert').id;
    const toAll = await until(() => {
      const ids = rx.received.filter((x) => x.headers['webhook-id'] && !x.body.includes('"webhook.test"')).map((x) => JSON.parse(x.body).id);
      // both endpoints' deliveries of the update (they arrive in either order), and the alert
      return ids.filter((id) => id === updatedId).length >= 2 && ids.includes(alertId) && ids;
    });
    expect(toAll.filter((id) => id === updatedId).length).toBe(2); // both endpoints
    expect(toAll.filter((id) => id === alertId).length).toBe(1); // only the '*' endpoint
    const update = JSON.parse(rx.received.find((x) => x.body.includes(updatedId))!.body);
    expect(update.data).toMatchObject({ nif, customer_reference: 'watch-1', previous: { score: first.body.score, tier: first.body.tier } });
    expect(update.data.current.score).toBeLessThan(first.body.score - 5);
    const ev = await h.json('GET', '/v1/events?type=deterioration.alert', { key: t.api_key });
    expect(ev.body.data.map((e: any) => e.id)).toEqual([alertId]);
    expect(ev.body.data[0].data.new_negative_reasons.length + Number(ev.body.data[0].data.tier_worsened)).toBeGreaterThan(0);
    void all;
    void onlyScore;
  });

  test('GET /v1/events: newest first, cursor pagination, per tenant', async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    const c = await create(t.api_key, { url: rx.url, enabled_events: ['*'] });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await h.json('POST', `/v1/admin/webhooks/${c.body.id}/test`, { key: t.api_key })).body.event_id);
    const p1 = await h.json('GET', '/v1/events?limit=2', { key: t.api_key });
    expect(p1.body.data.map((e: any) => e.id)).toEqual([ids[4], ids[3]]);
    const p2 = await h.json('GET', `/v1/events?limit=2&cursor=${p1.body.next_cursor}`, { key: t.api_key });
    expect(p2.body.data.map((e: any) => e.id)).toEqual([ids[2], ids[1]]);
    const p3 = await h.json('GET', `/v1/events?limit=2&cursor=${p2.body.next_cursor}`, { key: t.api_key });
    expect(p3.body.data.map((e: any) => e.id)).toEqual([ids[0]]);
    expect(p3.body.next_cursor).toBeNull();
    expect((await h.json('GET', '/v1/events', { key: other.api_key })).body.data).toEqual([]);
    expectError(await h.json('GET', '/v1/events?limit=0', { key: t.api_key }), 422, 'validation_failed');
  });

  test('rescore is sandbox-only on demand; the nightly job runs once per night', async () => {
    const live = await h.tenant({ env: 'live' });
    expectError(await h.json('POST', '/v1/sandbox/rescore', { key: live.api_key }), 403, 'sandbox_only');
    const t = await h.tenant();
    await h.json('POST', '/v1/score', { key: t.api_key, body: { nif: nifOf('tier_c_average') } });
    // two schedulers firing the same night (e.g. two processes): the job runs once
    await Promise.all([h.ctx.jobs.enqueue('rescore.nightly', {}), h.ctx.jobs.enqueue('rescore.nightly', {})]);
    await h.ctx.jobs.idle!();
    const { scoreResults, appMeta } = h.ctx.database.t;
    const rows = await h.ctx.database.db.select().from(scoreResults).where(eq(scoreResults.tenantId, t.tenant_id));
    expect(rows.filter((r) => r.trigger === 'rescore').length).toBe(1);
    expect((await h.ctx.database.db.select().from(appMeta)).filter((m) => m.key.startsWith('nightly-rescore:')).length).toBe(1);
  });
});

// ---- issue 17 item 3: no event is lost while an endpoint is down, disabled or failed ------------

/** Events as the features emit them (the outbox), n of them, a few ms apart (distinct created_at). */
async function emitEvents(app: TestApp, tenantId: string, n: number, env = 'sandbox') {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    ids.push(await app.ctx.database.withTx((tx) => app.ctx.events.emit(tx, { tenantId, env, type: 'score.updated', data: { seq: i } })));
    await Bun.sleep(3);
  }
  app.ctx.events.onEmitted();
  return ids;
}

type DeliveryView = { id: string; event_id: string; status: string; attempts: number; next_attempt_at: string | null; last_error: string | null };
const deliveriesOf = async (app: TestApp, key: string, id: string): Promise<DeliveryView[]> =>
  (await app.json('GET', `/v1/admin/webhooks/${id}/deliveries?limit=200`, { key })).body.data;
const auditOf = async (app: TestApp, tenantId: string, action: string) => {
  const a = app.ctx.database.t.auditLog;
  return (await app.ctx.database.db.select().from(a).where(eq(a.tenantId, tenantId))).filter((r) => r.action === action);
};
/** a receiver on a port the test chooses, started when the test says the outage is over */
function lateReceiver(port: number) {
  const ids: string[] = [];
  const server = Bun.serve({ port, hostname: '127.0.0.1', fetch: async (req) => (ids.push(req.headers.get('webhook-id')!), new Response('ok')) });
  return { ids, stop: () => server.stop(true) };
}

describe('held deliveries, re-enable, replay and retry (issue 17)', () => {
  test('receiver down → endpoint auto-disabled → events during the outage → re-enabled: every event delivered once, in order', async () => {
    // the numbers scaled down: 15 consecutive failures, a streak of at least 400 ms
    const app = await makeApp({ WEBHOOK_RETRY_DELAYS_MS: '50,100', WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_FAILURE_THRESHOLD: '15', WEBHOOK_DISABLE_AFTER_MS: '400' });
    app.clock.now = () => new Date();
    try {
      const t = await app.tenant();
      const port = freePort(); // nothing listens: the receiver is down
      const c = await app.json('POST', '/v1/admin/webhooks', { key: t.api_key, body: { url: `http://127.0.0.1:${port}/h`, enabled_events: ['*'] } });
      const events: string[] = [];
      const started = Date.now();
      let ep: any;
      while (Date.now() - started < 8000) {
        events.push(...(await emitEvents(app, t.tenant_id, 1)));
        await Bun.sleep(25);
        ep = (await app.json('GET', `/v1/admin/webhooks/${c.body.id}`, { key: t.api_key })).body;
        if (ep.status === 'failed') break;
      }
      expect(ep.status).toBe('failed');
      expect(ep.consecutive_failures).toBeGreaterThanOrEqual(15);
      expect(Date.now() - started).toBeGreaterThanOrEqual(400); // not disabled by a burst
      // events while the endpoint is failed: each gets a delivery record, held
      events.push(...(await emitEvents(app, t.tenant_id, 10)));
      const during = await until(async () => {
        const d = await deliveriesOf(app, t.api_key, c.body.id);
        return d.length === events.length && d.every((x) => x.status === 'held' || x.status === 'failed') && d;
      }, 8000);
      expect(new Set(during.map((d) => d.event_id))).toEqual(new Set(events));
      expect(during.filter((d) => d.status === 'held').length).toBeGreaterThanOrEqual(10);
      expect(during.some((d) => d.last_error === 'endpoint not active')).toBe(false);
      expect(during.every((d) => d.next_attempt_at === null)).toBe(true);

      const rx2 = lateReceiver(port); // the receiver is back
      try {
        const re = await app.json('PATCH', `/v1/admin/webhooks/${c.body.id}`, { key: t.api_key, body: { status: 'active' } });
        expect(re.body).toMatchObject({ status: 'active', consecutive_failures: 0 });
        await until(() => rx2.ids.length >= events.length, 10_000);
        await Bun.sleep(100);
        expect(rx2.ids).toEqual(events); // all of them, once each, in event order
        const after = await until(async () => {
          const d = await deliveriesOf(app, t.api_key, c.body.id);
          return d.every((x) => x.status === 'succeeded') && d;
        });
        expect(after.length).toBe(events.length);
        const audit = await auditOf(app, t.tenant_id, 'webhook.updated');
        expect(audit.at(-1)!.details).toMatchObject({ status: 'active', previous_status: 'failed', deliveries_released: events.length });
      } finally {
        rx2.stop();
      }
    } finally {
      await app.close();
    }
  }, 30_000);

  test('auto-disable needs the failures spread over WEBHOOK_DISABLE_AFTER_MS, not a burst', async () => {
    const app = await makeApp({ WEBHOOK_RETRY_DELAYS_MS: '50', WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_FAILURE_THRESHOLD: '3', WEBHOOK_DISABLE_AFTER_MS: '60000' });
    app.clock.now = () => new Date();
    const down = receiver();
    try {
      down.answerWith(...Array(50).fill(500));
      const t = await app.tenant();
      const c = await app.json('POST', '/v1/admin/webhooks', { key: t.api_key, body: { url: down.url, enabled_events: ['*'] } });
      for (let i = 0; i < 3; i++) await app.json('POST', `/v1/admin/webhooks/${c.body.id}/test`, { key: t.api_key });
      const burst = await until(async () => {
        const e = (await app.json('GET', `/v1/admin/webhooks/${c.body.id}`, { key: t.api_key })).body;
        return e.consecutive_failures >= 6 && e;
      });
      expect(burst.status).toBe('active'); // 6 failures within a second: over the threshold, but not spread
      // the streak began 61 s ago: the next failure disables it
      const w = app.ctx.database.t.webhookEndpoints;
      await app.ctx.database.withTx((tx) => tx.update(w).set({ failingSince: new Date(Date.now() - 61_000) }).where(eq(w.id, c.body.id)));
      await app.json('POST', `/v1/admin/webhooks/${c.body.id}/test`, { key: t.api_key });
      const failed = await until(async () => {
        const e = (await app.json('GET', `/v1/admin/webhooks/${c.body.id}`, { key: t.api_key })).body;
        return e.status === 'failed' && e;
      });
      expect(failed.consecutive_failures).toBeGreaterThanOrEqual(7);
    } finally {
      down.stop();
      await app.close();
    }
  });

  test('a disabled endpoint keeps a held delivery of every event; re-enabling sends them in order', async () => {
    const t = await h.tenant();
    const c = await create(t.api_key, { url: rx.url, enabled_events: ['score.updated'] });
    await h.json('PATCH', `/v1/admin/webhooks/${c.body.id}`, { key: t.api_key, body: { status: 'disabled' } });
    const events = await emitEvents(h, t.tenant_id, 5);
    const held = await until(async () => {
      const d = await deliveriesOf(h, t.api_key, c.body.id);
      return d.length === 5 && d;
    });
    expect(held.map((d) => d.status)).toEqual(Array(5).fill('held'));
    expect(held.map((d) => d.attempts)).toEqual(Array(5).fill(0));
    await Bun.sleep(150);
    expect(rx.received.filter((x) => events.includes(x.headers['webhook-id']!))).toEqual([]);
    await h.json('PATCH', `/v1/admin/webhooks/${c.body.id}`, { key: t.api_key, body: { status: 'active' } });
    const got = await until(() => {
      const ids = rx.received.map((x) => x.headers['webhook-id']!).filter((id) => events.includes(id));
      return ids.length === 5 && ids;
    });
    expect(got).toEqual(events);
  });

  test('replay since: the events at or after it, again, in order; 202 with the count; audited', async () => {
    const t = await h.tenant();
    const c = await create(t.api_key, { url: rx.url, enabled_events: ['*'] });
    const events = await emitEvents(h, t.tenant_id, 4);
    await until(async () => {
      const d = await deliveriesOf(h, t.api_key, c.body.id);
      return d.length === 4 && d.every((x) => x.status === 'succeeded');
    });
    // an event the old code never gave a delivery (lost while the endpoint was disabled) is replayed too
    const d = h.ctx.database.t.webhookDeliveries;
    await h.ctx.database.withTx((tx) => tx.delete(d).where(and(eq(d.eventId, events[3]!), eq(d.endpointId, c.body.id))));
    const list = (await h.json('GET', '/v1/events?limit=10', { key: t.api_key })).body.data as { id: string; created_at: string }[];
    const since = list.find((e) => e.id === events[1])!.created_at;
    const mark = rx.received.length;
    const r = await h.json('POST', `/v1/admin/webhooks/${c.body.id}/replay?since=${encodeURIComponent(since)}`, { key: t.api_key });
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ endpoint_id: c.body.id, since, replayed: 3, endpoint_status: 'active' });
    const again = await until(() => {
      const ids = rx.received.slice(mark).map((x) => x.headers['webhook-id']!).filter((id) => events.includes(id));
      return ids.length >= 3 && ids;
    });
    expect(again).toEqual(events.slice(1));
    const audit = await auditOf(h, t.tenant_id, 'webhook.replayed');
    expect(audit.length).toBe(1);
    expect(audit[0]).toMatchObject({ target: c.body.id, actorKeyId: t.api_key_id, details: { since, deliveries: 3 } });
    // an offset date-time works too; nothing since now
    await Bun.sleep(30);
    const none = await h.json('POST', `/v1/admin/webhooks/${c.body.id}/replay?since=${encodeURIComponent(new Date(Date.now() - 10).toISOString().replace('Z', '+00:00'))}`, { key: t.api_key });
    expect(none.status).toBe(202);
    expect(none.body.replayed).toBe(0);
  });

  test('replay to a disabled endpoint holds the deliveries until it is re-enabled', async () => {
    const t = await h.tenant();
    const c = await create(t.api_key, { url: rx.url, enabled_events: ['*'] });
    const started = new Date(Date.now() - 1000).toISOString();
    const events = await emitEvents(h, t.tenant_id, 2);
    await until(async () => {
      const d = await deliveriesOf(h, t.api_key, c.body.id);
      return d.length === 2 && d.every((x) => x.status === 'succeeded');
    });
    await h.json('PATCH', `/v1/admin/webhooks/${c.body.id}`, { key: t.api_key, body: { status: 'disabled' } });
    const mark = rx.received.length;
    const r = await h.json('POST', `/v1/admin/webhooks/${c.body.id}/replay?since=${started}`, { key: t.api_key });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ replayed: 2, endpoint_status: 'disabled' });
    expect((await deliveriesOf(h, t.api_key, c.body.id)).map((x) => x.status)).toEqual(['held', 'held']);
    await Bun.sleep(150);
    expect(rx.received.length).toBe(mark);
    await h.json('PATCH', `/v1/admin/webhooks/${c.body.id}`, { key: t.api_key, body: { status: 'active' } });
    const got = await until(() => {
      const ids = rx.received.slice(mark).map((x) => x.headers['webhook-id']!).filter((id) => events.includes(id));
      return ids.length === 2 && ids;
    });
    expect(got).toEqual(events);
  });

  test('replay errors: 422 for a bad since (§2.8 with fields), 404 for an unknown or malformed id, another tenant\'s or other environment\'s endpoint', async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    const live = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'live' });
    const c = await create(t.api_key, { url: rx.url, enabled_events: ['*'] });
    const replay = (key: string, id: string, qs: string) => h.json('POST', `/v1/admin/webhooks/${id}/replay${qs}`, { key });
    const ok = encodeURIComponent(new Date(Date.now() - 60_000).toISOString());
    const old = new Date(Date.now() - 31 * 86_400_000).toISOString();
    const future = new Date(Date.now() + 3_600_000).toISOString();
    for (const qs of ['', '?since=', '?since=yesterday', '?since=2026-11-22', '?since=1732269600', '?since=2026-13-01T00:00:00Z', `?since=${old}`, `?since=${future}`, '?since=2026-11-22T10:00:00Z&since=x']) {
      const e = expectError(await replay(t.api_key, c.body.id, qs), 422, 'validation_failed');
      expect(e.fields.map((f: { path: string }) => f.path), qs).toEqual(['query.since']);
    }
    expectError(await replay(t.api_key, crypto.randomUUID(), `?since=${ok}`), 404, 'resource_not_found');
    expectError(await replay(other.api_key, c.body.id, `?since=${ok}`), 404, 'resource_not_found');
    expectError(await replay(live.api_key, c.body.id, `?since=${ok}`), 404, 'resource_not_found');
    expectError(await replay(t.api_key, 'not-a-uuid', `?since=${ok}`), 404, 'resource_not_found');
    const scoped = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', scopes: ['score'] });
    expectError(await replay(scoped.api_key, c.body.id, `?since=${ok}`), 403, 'insufficient_scope');
    expectError(await h.json('POST', `/v1/admin/webhooks/${c.body.id}/replay?since=${ok}`), 401, 'missing_api_key');
    expect(await auditOf(h, t.tenant_id, 'webhook.replayed')).toEqual([]);
  });

  test('retry of one delivery: re-sent now (202), also a succeeded one; 404 unknown or not this endpoint\'s; 409 in flight or endpoint inactive', async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    const c = await create(t.api_key, { url: rx.url, enabled_events: ['*'] });
    const c2 = await create(t.api_key, { url: rx.url + '?second', enabled_events: ['*'] });
    const r = await h.json('POST', `/v1/admin/webhooks/${c.body.id}/test`, { key: t.api_key });
    const [done] = await until(async () => {
      const d = await deliveriesOf(h, t.api_key, c.body.id);
      return d[0]?.status === 'succeeded' && d;
    });
    const mark = rx.received.length;
    const path = (ep: string, del: string) => `/v1/admin/webhooks/${ep}/deliveries/${del}/retry`;
    const res = await h.json('POST', path(c.body.id, done!.id), { key: t.api_key });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ delivery_id: done!.id, event_id: r.body.event_id, status: 'pending' });
    await until(() => rx.received.slice(mark).some((x) => x.headers['webhook-id'] === r.body.event_id));
    await until(async () => (await deliveriesOf(h, t.api_key, c.body.id))[0]?.status === 'succeeded');
    const audit = await auditOf(h, t.tenant_id, 'webhook.delivery_retried');
    expect(audit[0]).toMatchObject({ target: c.body.id, actorKeyId: t.api_key_id, details: { delivery_id: done!.id, event_id: r.body.event_id, previous_status: 'succeeded' } });

    expectError(await h.json('POST', path(c.body.id, crypto.randomUUID()), { key: t.api_key }), 404, 'resource_not_found');
    expectError(await h.json('POST', path(c2.body.id, done!.id), { key: t.api_key }), 404, 'resource_not_found'); // another endpoint's delivery
    expectError(await h.json('POST', path(c.body.id, done!.id), { key: other.api_key }), 404, 'resource_not_found');
    expectError(await h.json('POST', path(c.body.id, 'nope'), { key: t.api_key }), 404, 'resource_not_found');

    // in flight: the receiver is still answering
    const slow = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: async () => (await Bun.sleep(600), new Response('ok')) });
    try {
      const s = await create(t.api_key, { url: `http://127.0.0.1:${slow.port}/slow`, enabled_events: ['webhook.test'] });
      await h.json('POST', `/v1/admin/webhooks/${s.body.id}/test`, { key: t.api_key });
      const [flying] = await until(async () => {
        const rows = await h.ctx.database.db.select().from(h.ctx.database.t.webhookDeliveries).where(eq(h.ctx.database.t.webhookDeliveries.endpointId, s.body.id));
        return rows[0]?.lockedUntil && rows;
      });
      expectError(await h.json('POST', path(s.body.id, flying!.id), { key: t.api_key }), 409, 'webhook_delivery_in_flight');
      await until(async () => (await deliveriesOf(h, t.api_key, s.body.id))[0]?.status === 'succeeded');
      expect((await h.json('POST', path(s.body.id, flying!.id), { key: t.api_key })).status).toBe(202);
    } finally {
      slow.stop(true);
    }
    await h.json('PATCH', `/v1/admin/webhooks/${c.body.id}`, { key: t.api_key, body: { status: 'disabled' } });
    expectError(await h.json('POST', path(c.body.id, done!.id), { key: t.api_key }), 409, 'webhook_endpoint_inactive');
  });

  test('the documents list replay and retry with their errors', async () => {
    const doc = (await h.json('GET', '/openapi.json')).body;
    const replay = doc.paths['/v1/admin/webhooks/{id}/replay'].post;
    expect(Object.keys(replay.responses)).toEqual(expect.arrayContaining(['202', '404', '422']));
    expect(replay.parameters.find((p: { name: string }) => p.name === 'since')).toMatchObject({ in: 'query', required: true });
    const retry = doc.paths['/v1/admin/webhooks/{id}/deliveries/{delivery_id}/retry'].post;
    expect(Object.keys(retry.responses)).toEqual(expect.arrayContaining(['202', '404', '409']));
  });
});

describe('BullMQ (REDIS_URL set): an API process and a worker process', () => {
  test('held deliveries are sent by the worker after the API re-enables the endpoint', async () => {
    const api = await makeApp({ REDIS_URL: REDIS_TEST_URL, WEBHOOK_DISABLE_AFTER_MS: '0' }, { workers: false });
    api.clock.now = () => new Date();
    const worker = await makeApp({ REDIS_URL: REDIS_TEST_URL, REDIS_PREFIX: api.config.redisPrefix, ...api.dbEnv });
    worker.clock.now = () => new Date();
    try {
      const t = await api.tenant();
      const c = await api.json('POST', '/v1/admin/webhooks', { key: t.api_key, body: { url: rx.url, enabled_events: ['*'] } });
      await api.json('PATCH', `/v1/admin/webhooks/${c.body.id}`, { key: t.api_key, body: { status: 'disabled' } });
      const events = await emitEvents(api, t.tenant_id, 4);
      await until(async () => (await deliveriesOf(api, t.api_key, c.body.id)).length === 4, 8000);
      const mark = rx.received.length;
      await api.json('PATCH', `/v1/admin/webhooks/${c.body.id}`, { key: t.api_key, body: { status: 'active' } });
      const got = await until(() => {
        const ids = rx.received.slice(mark).map((x) => x.headers['webhook-id']!).filter((id) => events.includes(id));
        return ids.length === 4 && ids;
      }, 8000);
      expect(got).toEqual(events);
    } finally {
      await worker.close();
      await api.close();
    }
  }, 20_000);
});
