import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Webhook } from 'standardwebhooks';
import { eq } from 'drizzle-orm';
import { SANDBOX_FIXTURES } from '../src/features/score/fixtures';
import { postWebhook, RefusedAddressError, webhookDns } from '../src/features/webhooks/delivery-http';
import { expectError, freePort, makeApp, type TestApp } from './helpers';

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
  h = await makeApp({ WEBHOOK_RETRY_DELAYS_MS: '50,100', WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_FAILURE_THRESHOLD: '5' });
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
    expectError(await h.json('PATCH', '/v1/admin/webhooks/not-a-uuid', { key: a.api_key, body: {} }), 422, 'validation_failed');
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
    await h.json('POST', `/v1/admin/webhooks/${c.body.id}/test`, { key: t.api_key });
    ep = await until(async () => {
      const e = (await h.json('GET', '/v1/admin/webhooks', { key: t.api_key })).body.webhooks[0];
      return e.status === 'failed' && e;
    });
    expect(ep.consecutive_failures).toBe(5);
    expect(down.received.filter((x) => x.headers['webhook-id'] === r1.body.event_id).length).toBe(3);
    const sent = down.received.length;
    await Bun.sleep(300);
    expect(down.received.length).toBe(sent); // nothing more goes to a failed endpoint
    // the delivery still pending when the endpoint failed is given up, with no next attempt announced
    const given = await until(async () => {
      const d = (await h.json('GET', `/v1/admin/webhooks/${c.body.id}/deliveries`, { key: t.api_key })).body.data as { status: string; next_attempt_at: string | null }[];
      return d.length === 2 && d.every((x) => x.status === 'failed') && d;
    });
    expect(given.map((x) => x.next_attempt_at)).toEqual([null, null]);
    const re = await h.json('PATCH', `/v1/admin/webhooks/${c.body.id}`, { key: t.api_key, body: { status: 'active' } });
    expect(re.body).toMatchObject({ status: 'active', consecutive_failures: 0 });
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
      return ids.includes(updatedId) && ids.includes(alertId) && ids;
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
