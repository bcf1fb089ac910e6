import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { freshDatabase, readConsentForm, runCli, spawnServer } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

/**
 * The sandbox consent page over real HTTP (issue 17 item 11): the page is a POST form, GET changes
 * nothing, the form's token is bound to the browser's cookie, and a forged post is refused with an
 * HTML page while the genuine one sends the browser back to return_url.
 */
let db: Awaited<ReturnType<typeof freshDatabase>>;
let server: Awaited<ReturnType<typeof spawnServer>>;
let key: string;
const RETURN = 'https://app.example.com/erp/done';

beforeAll(async () => {
  db = await freshDatabase();
  server = await spawnServer({ ...db.env, SEED_DEMO_TENANT: 'false' });
  const created = await runCli(['tenant', 'create', '--name', 'Consent Lda', '--json'], db.env);
  expect(created.code).toBe(0);
  key = JSON.parse(created.stdout).api_key;
}, 30_000);
afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${server.base}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
const post = (fields: Record<string, string>, cookie?: string) =>
  fetch(`${server.base}/v1/erp-connector/oauth/consent`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
    body: new URLSearchParams(fields).toString(),
  });
const statuses = async () => ((await (await api('GET', '/v1/erp-connector/connections')).json()) as { data: { customer_reference: string; status: string }[] }).data;

describe('sandbox consent over HTTP', () => {
  test('GET page = POST form; forged posts → 403/400 HTML, nothing changes; the real post → 303 to return_url; sync then works', async () => {
    // before consent the sandbox sync is refused (item 10)
    const before = await api('POST', '/v1/erp-connector/sync', { provider: 'demo', customer_reference: 'http-1' });
    expect(before.status).toBe(409);
    expect(await before.json()).toMatchObject({ code: 'erp_not_connected', status: 409 });

    const init = (await (await api('POST', '/v1/erp-connector/oauth/initiate', { provider: 'demo', customer_reference: 'http-1', return_url: RETURN })).json()) as { authorize_url: string; state: string };
    const authorize = new URL(init.authorize_url);
    expect(authorize.pathname).toBe('/v1/erp-connector/oauth/consent');
    const page = await fetch(`${server.base}${authorize.pathname}${authorize.search}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const form = await readConsentForm(page);
    expect(form.html).toMatch(/<form method="post" action="\/v1\/erp-connector\/oauth\/consent"/);
    expect(form.html).not.toMatch(/<a [^>]*href="[^"]*callback/);
    expect(form.cookie).toMatch(/^pt_consent_[0-9a-f-]+=[A-Za-z0-9_-]+$/);
    // viewing the page (twice) changed nothing
    await fetch(`${server.base}${authorize.pathname}${authorize.search}`);
    expect(await statuses()).toEqual([expect.objectContaining({ customer_reference: 'http-1', status: 'pending' })]);

    // GET of the callback with this state changes nothing either
    const get = await fetch(`${server.base}/v1/erp-connector/oauth/callback?state=${encodeURIComponent(init.state)}&code=sandbox_x`, { redirect: 'manual' });
    expect(get.status).toBe(400);
    expect(get.headers.get('location')).toBeNull();

    // forged: no token, a wrong token, the right token without the browser's cookie
    for (const [fields, cookie] of [
      [{ state: form.state!, decision: 'approve' }, form.cookie],
      [{ state: form.state!, decision: 'approve', csrf_token: 'A'.repeat(43) }, form.cookie],
      [{ state: form.state!, decision: 'approve', csrf_token: form.csrfToken! }, undefined],
    ] as [Record<string, string>, string | undefined][]) {
      const r = await post(fields, cookie);
      expect(r.status).toBe(403);
      expect(r.headers.get('content-type')).toContain('text/html');
      expect(r.headers.get('location')).toBeNull();
      expect(await r.text()).toContain('could not be verified');
    }
    expect((await statuses())[0]!.status).toBe('pending');

    const ok = await post({ state: form.state!, csrf_token: form.csrfToken!, decision: 'approve' }, form.cookie);
    expect(ok.status).toBe(303);
    const loc = new URL(ok.headers.get('location')!);
    expect(loc.origin + loc.pathname).toBe(RETURN);
    expect(loc.searchParams.get('status')).toBe('connected');
    expect((await statuses())[0]!.status).toBe('active');
    // single use: the same post again → 400 page
    expect((await post({ state: form.state!, csrf_token: form.csrfToken!, decision: 'deny' }, form.cookie)).status).toBe(400);

    const sync = await api('POST', '/v1/erp-connector/sync', { provider: 'demo', customer_reference: 'http-1' });
    expect(sync.status).toBe(202);
  }, 30_000);
});
