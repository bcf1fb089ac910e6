import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { and, count, eq } from 'drizzle-orm';
import { Value } from '@sinclair/typebox/value';
import { configureErp, erpService, registerErpWorkers } from '../src/features/erp';
import { demoInvoices, DEMO_SIZE_PRESETS } from '../src/features/erp/demo-data';
import { ErpSyncResponse, Invoice, SyncRun, Transaction } from '../src/features/erp/model';
import { startWorkers } from '../src/workers';
import { connectSandboxErp, expectError, makeApp, readConsentForm, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

/**
 * ERP connector, sandbox end to end (no outside party): OAuth with the built-in consent page,
 * demo syncs through the in-process job queue, reads, errors and isolation.
 */
let h: TestApp;
let key: string;
const RETURN = 'https://app.example.com/erp/done?from=test';

beforeAll(async () => {
  h = await makeApp({}, { workers: false });
  // toconline configured (unreachable endpoints) so live keys reach the connection check; others not
  configureErp(h.ctx, {
    ERP_TOCONLINE_CLIENT_ID: 'client-toc',
    ERP_TOCONLINE_CLIENT_SECRET: 'secret-toc',
    ERP_TOCONLINE_AUTHORIZE_URL: 'http://127.0.0.1:9/oauth/auth',
    ERP_TOCONLINE_TOKEN_URL: 'http://127.0.0.1:9/oauth/token',
    ERP_TOCONLINE_API_URL: 'http://127.0.0.1:9',
  });
  registerErpWorkers(h.ctx);
  await startWorkers(h.ctx);
  const t = await h.tenant();
  key = t.api_key;
});
afterAll(() => h.close());

const initiate = (body: unknown, k = key) => h.json('POST', '/v1/erp-connector/oauth/initiate', { key: k, body });
const sync = (body: unknown, k = key) => h.json('POST', '/v1/erp-connector/sync', { key: k, body });

async function waitRun(runId: string, k = key) {
  for (let i = 0; i < 400; i++) {
    await h.ctx.jobs.idle?.();
    const r = await h.json('GET', `/v1/erp-connector/sync/${runId}`, { key: k });
    if (r.body?.status === 'succeeded' || r.body?.status === 'failed') return r.body;
    await Bun.sleep(10);
  }
  throw new Error(`run ${runId} did not finish`);
}

async function syncAndWait(body: Record<string, unknown>, k = key) {
  const r = await sync(body, k);
  expect(r.status).toBe(202);
  expect(r.headers.get('location')).toBe(`/v1/erp-connector/sync/${r.body.run_id}`); // where it is polled
  return waitRun(r.body.run_id, k);
}

/** Opens the consent page and posts its form with the decision, like a browser (cookie included). */
async function consentAndFollow(authorizeUrl: string, which: 'approve' | 'deny') {
  const u = new URL(authorizeUrl);
  const page = await h.call('GET', u.pathname + u.search);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toContain('text/html');
  const form = await readConsentForm(page);
  expect(form.action).toBe('/v1/erp-connector/oauth/consent');
  return postConsent({ state: form.state!, csrf_token: form.csrfToken!, decision: which }, form.cookie);
}

const postConsent = (fields: Record<string, string>, cookie?: string, contentType = 'application/x-www-form-urlencoded') =>
  h.call('POST', '/v1/erp-connector/oauth/consent', {
    rawBody: new URLSearchParams(fields).toString(),
    headers: { 'content-type': contentType, ...(cookie ? { cookie } : {}) },
  });

async function connect(provider: string, customerReference: string, k = key) {
  const { init, location, response } = await connectSandboxErp(h, k, provider, { customerReference, returnUrl: RETURN });
  expect(response.status).toBe(303);
  return { init, location };
}

async function allPages(path: string, k = key, limit = 7) {
  const out: any[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 1000; i++) {
    const sep = path.includes('?') ? '&' : '?';
    const r: { status: number; body: any } = await h.json('GET', `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key: k });
    expect(r.status).toBe(200);
    expect(r.body.data.length).toBeLessThanOrEqual(limit);
    out.push(...r.body.data);
    cursor = r.body.next_cursor;
    if (!cursor) break;
  }
  return out;
}

const dbCount = async (table: 'invoices' | 'bankTransactions' | 'erpConnections' | 'syncRuns', tenant: string) => {
  const t = h.ctx.database.t[table];
  const [row] = await h.ctx.database.db.select({ n: count() }).from(t).where(eq(t.tenantId, tenant));
  return Number(row?.n ?? 0);
};

describe('OAuth in the sandbox: initiate → consent page → callback → return_url', () => {
  test('Approve: 302 to return_url with status=connected, provider and customer_reference; connection active', async () => {
    const t = await h.tenant();
    const init = await initiate({ provider: 'demo', customer_reference: 'cust-1', return_url: RETURN }, t.api_key);
    expect(init.status).toBe(200);
    expect(init.body.state.length).toBeGreaterThanOrEqual(32);
    expect(Date.parse(init.body.expires_at) - h.clock.ms).toBe(10 * 60_000);
    const u = new URL(init.body.authorize_url);
    expect(u.pathname).toBe('/v1/erp-connector/oauth/consent');
    expect(u.searchParams.get('state')).toBe(init.body.state);

    // only the hash of the state is stored
    const c = h.ctx.database.t.erpConnections;
    const [row] = await h.ctx.database.db.select().from(c).where(eq(c.tenantId, t.tenant_id));
    expect(row!.status).toBe('pending');
    expect(row!.stateHash).not.toBe(init.body.state);
    expect(row!.stateHash).toMatch(/^[0-9a-f]{64}$/);

    const res = await consentAndFollow(init.body.authorize_url, 'approve');
    expect(res.status).toBe(303);
    expect(res.headers.get('set-cookie')).toMatch(/^pt_consent_[0-9a-f-]+=; Path=\/v1\/erp-connector\/oauth\/consent; Max-Age=0/);
    const loc = new URL(res.headers.get('location')!);
    expect(loc.origin + loc.pathname).toBe('https://app.example.com/erp/done');
    expect(Object.fromEntries(loc.searchParams)).toEqual({ from: 'test', status: 'connected', provider: 'demo', customer_reference: 'cust-1' });

    const list = await h.json('GET', '/v1/erp-connector/connections', { key: t.api_key });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    const conn = list.body.data[0];
    expect(conn).toMatchObject({ provider: 'demo', customer_reference: 'cust-1', status: 'active' });
    expect(conn.connected_at).toBe(new Date(h.clock.ms).toISOString());
    expect(JSON.stringify(list.body)).not.toMatch(/token_enc|state|verifier/i);
  });

  test('the state and its token are single use: replaying the form post → 400 page, nothing changes', async () => {
    const t = await h.tenant();
    const init = await initiate({ provider: 'toconline', customer_reference: 'c-replay', return_url: RETURN }, t.api_key);
    const page = await h.call('GET', new URL(init.body.authorize_url).pathname + new URL(init.body.authorize_url).search);
    const form = await readConsentForm(page);
    const fields = { state: form.state!, csrf_token: form.csrfToken!, decision: 'approve' };
    expect((await postConsent(fields, form.cookie)).status).toBe(303);
    const again = await postConsent({ ...fields, decision: 'deny' }, form.cookie);
    expect(again.status).toBe(400);
    expect(again.headers.get('content-type')).toContain('text/html');
    expect(await again.text()).toContain('not valid');
    // the consent page of a used state is gone too
    expect((await h.call('GET', new URL(init.body.authorize_url).pathname + new URL(init.body.authorize_url).search)).status).toBe(400);
    const conns = await h.json('GET', '/v1/erp-connector/connections', { key: t.api_key });
    expect(conns.body.data.map((c: any) => c.status)).toEqual(['active']);
  });

  test('a suspended tenant cannot complete a link: consent page and callback answer 400, nothing stored', async () => {
    const t = await h.tenant();
    const init = await initiate({ provider: 'demo', customer_reference: 'susp', return_url: RETURN }, t.api_key);
    await h.ctx.tenants.setStatus(t.tenant_id, 'suspended');
    expect((await h.call('GET', new URL(init.body.authorize_url).pathname + new URL(init.body.authorize_url).search)).status).toBe(400);
    const cb = await h.call('GET', `/v1/erp-connector/oauth/callback?state=${encodeURIComponent(init.body.state)}&code=sandbox_x`);
    expect(cb.status).toBe(400);
    // a form (with a token computed for this connection) is refused as well
    await h.ctx.tenants.setStatus(t.tenant_id, 'active');
    const form = await readConsentForm(await h.call('GET', new URL(init.body.authorize_url).pathname + new URL(init.body.authorize_url).search));
    await h.ctx.tenants.setStatus(t.tenant_id, 'suspended');
    expect((await postConsent({ state: form.state!, csrf_token: form.csrfToken!, decision: 'approve' }, form.cookie)).status).toBe(400);
    const c = h.ctx.database.t.erpConnections;
    const [row] = await h.ctx.database.db.select().from(c).where(eq(c.tenantId, t.tenant_id));
    expect(row!.status).toBe('pending');
    expect(row!.accessTokenEnc).toBeNull();
  });

  test('Deny: 302 with status=denied; connection denied', async () => {
    const t = await h.tenant();
    const init = await initiate({ provider: 'moloni', customer_reference: 'c-deny', return_url: 'http://localhost:5173/back' }, t.api_key);
    const res = await consentAndFollow(init.body.authorize_url, 'deny');
    expect(res.status).toBe(303);
    const loc = new URL(res.headers.get('location')!);
    expect(loc.searchParams.get('status')).toBe('denied');
    expect(loc.searchParams.get('provider')).toBe('moloni');
    const conns = await h.json('GET', '/v1/erp-connector/connections', { key: t.api_key });
    expect(conns.body.data[0]).toMatchObject({ status: 'denied', status_reason: 'the customer denied access on the consent page' });
    // deleting it keeps the record that consent was refused (denied is final), and why
    const del = await h.json('DELETE', `/v1/erp-connector/connections/${conns.body.data[0].id}`, { key: t.api_key });
    expect([del.status, del.body.status, del.body.status_reason]).toEqual([200, 'denied', 'the customer denied access on the consent page']);
  });

  test('unknown state, missing state and an expired state (11 min) → 400 HTML page, nothing stored', async () => {
    const t = await h.tenant();
    for (const q of ['?state=nope&code=sandbox_x', '?code=sandbox_x', '?state=' + 'x'.repeat(500)]) {
      const r = await h.call('GET', `/v1/erp-connector/oauth/callback${q}`);
      expect(r.status).toBe(400);
      expect(r.headers.get('content-type')).toContain('text/html');
    }
    expect((await h.call('GET', '/v1/erp-connector/oauth/consent?state=nope')).status).toBe(400);

    const init = await initiate({ provider: 'demo', customer_reference: 'c-late', return_url: RETURN }, t.api_key);
    const page = await h.call('GET', new URL(init.body.authorize_url).pathname + new URL(init.body.authorize_url).search);
    const form = await readConsentForm(page);
    const c = h.ctx.database.t.erpConnections;
    const before = await h.ctx.database.db.select().from(c).where(eq(c.tenantId, t.tenant_id));
    h.clock.advance(11 * 60_000);
    const late = await postConsent({ state: form.state!, csrf_token: form.csrfToken!, decision: 'approve' }, form.cookie);
    expect(late.status).toBe(400);
    expect(late.headers.get('location')).toBeNull();
    const after = await h.ctx.database.db.select().from(c).where(eq(c.tenantId, t.tenant_id));
    expect(after).toEqual(before);
    expect(after[0]!.status).toBe('pending');
  });

  test('abandoned pending connections are purged a day after their state expired', async () => {
    const t = await h.tenant();
    await initiate({ provider: 'demo', customer_reference: 'c-abandoned', return_url: RETURN }, t.api_key);
    await connect('demo', 'c-kept', t.api_key);
    const purge = h.ctx.sweeps.get('erp.oauth.purge')!;
    await purge.run();
    expect(await dbCount('erpConnections', t.tenant_id)).toBe(2);
    h.clock.advance(25 * 3600_000);
    await purge.run();
    const left = await h.json('GET', '/v1/erp-connector/connections', { key: t.api_key });
    expect(left.body.data.map((c: any) => `${c.customer_reference}:${c.status}`)).toEqual(['c-kept:active']);
  });

  test('GET of the callback changes nothing for a sandbox state (not even error=…): 400 page, the consent still works', async () => {
    const t = await h.tenant();
    const init = await initiate({ provider: 'sage', customer_reference: 'c-get', return_url: RETURN }, t.api_key);
    const c = h.ctx.database.t.erpConnections;
    const before = await h.ctx.database.db.select().from(c).where(eq(c.tenantId, t.tenant_id));
    for (const q of ['code=sandbox_x', 'error=server_error', 'error=access_denied']) {
      const r = await h.call('GET', `/v1/erp-connector/oauth/callback?state=${encodeURIComponent(init.body.state)}&${q}`);
      expect(r.status).toBe(400);
      expect(r.headers.get('content-type')).toContain('text/html');
      expect(r.headers.get('location')).toBeNull();
      expect(await r.text()).toContain('consent page');
    }
    expect(await h.ctx.database.db.select().from(c).where(eq(c.tenantId, t.tenant_id))).toEqual(before);
    expect((await consentAndFollow(init.body.authorize_url, 'approve')).status).toBe(303);
  });

  test('consent page: a POST form with state, csrf_token and the two decisions; GET changes nothing; cookie bound to the page', async () => {
    const t = await h.tenant();
    const init = await initiate({ provider: 'demo', customer_reference: 'c-form', return_url: RETURN }, t.api_key);
    const path = new URL(init.body.authorize_url).pathname + new URL(init.body.authorize_url).search;
    const page = await h.call('GET', path);
    const form = await readConsentForm(page);
    expect(form.html).toContain('<form method="post" action="/v1/erp-connector/oauth/consent"');
    expect(form.html).toMatch(/<button type="submit"[^>]*name="decision" value="approve"/);
    expect(form.html).toMatch(/<button type="submit"[^>]*name="decision" value="deny"/);
    expect(form.html).not.toContain('href="/v1/erp-connector/oauth/callback');
    expect(form.state).toBe(init.body.state);
    expect(form.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const setCookie = page.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^pt_consent_[0-9a-f-]{36}=[A-Za-z0-9_-]{32}; Path=\/v1\/erp-connector\/oauth\/consent; Max-Age=600; HttpOnly; SameSite=Strict$/);
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self' https://app.example.com");
    // each view has its own nonce and token; viewing twice changes nothing in the database
    const c = h.ctx.database.t.erpConnections;
    const before = await h.ctx.database.db.select().from(c).where(eq(c.tenantId, t.tenant_id));
    const second = await readConsentForm(await h.call('GET', path));
    expect(second.csrfToken).not.toBe(form.csrfToken);
    expect(await h.ctx.database.db.select().from(c).where(eq(c.tenantId, t.tenant_id))).toEqual(before);

    // forged posts: no token, wrong token, no cookie, another view's cookie, token of another view, JSON body → 403 page, nothing changes
    const base = { state: form.state!, decision: 'approve' };
    const forged: [Record<string, string>, string | undefined, string?][] = [
      [base, form.cookie],
      [{ ...base, csrf_token: 'x'.repeat(43) }, form.cookie],
      [{ ...base, csrf_token: form.csrfToken! }, undefined],
      [{ ...base, csrf_token: form.csrfToken! }, second.cookie],
      [{ ...base, csrf_token: second.csrfToken! }, form.cookie],
      [{ ...base, csrf_token: form.csrfToken! }, form.cookie.replace(/=.*/, '=forged')],
    ];
    for (const [fields, cookie, type] of forged) {
      const r = await postConsent(fields, cookie, type);
      expect({ fields, cookie, status: r.status }).toEqual({ fields, cookie, status: 403 });
      expect(r.headers.get('content-type')).toContain('text/html');
      expect(r.headers.get('location')).toBeNull();
      expect(await r.text()).toContain('could not be verified');
    }
    // a valid token but no decision, an unknown state, or a body that is not a form (text/plain, JSON) → 400 page
    for (const type of ['text/plain', 'application/json'])
      expect((await postConsent({ state: form.state!, csrf_token: form.csrfToken!, decision: 'approve' }, form.cookie, type)).status).toBe(400);
    expect((await postConsent({ state: form.state!, csrf_token: form.csrfToken! }, form.cookie)).status).toBe(400);
    expect((await postConsent({ state: 'nope', csrf_token: form.csrfToken!, decision: 'approve' }, form.cookie)).status).toBe(400);
    expect(await h.ctx.database.db.select().from(c).where(eq(c.tenantId, t.tenant_id))).toEqual(before);
    // the genuine post (the second view's pair) still works
    const ok = await postConsent({ state: second.state!, csrf_token: second.csrfToken!, decision: 'approve' }, second.cookie);
    expect(ok.status).toBe(303);
    expect(new URL(ok.headers.get('location')!).searchParams.get('status')).toBe('connected');
  });

  test('a new link supersedes the previous one of the same customer and provider', async () => {
    const t = await h.tenant();
    await connect('demo', 'c-twice', t.api_key);
    h.clock.advance(1000);
    await connect('demo', 'c-twice', t.api_key);
    const conns = await h.json('GET', '/v1/erp-connector/connections', { key: t.api_key });
    expect(conns.body.data.map((c: any) => c.status)).toEqual(['active', 'disconnected']);
  });

  test('validation: provider enum, customer_reference min length, return_url http(s) only → 422 with field paths', async () => {
    let b = expectError(await initiate({ provider: 'sap', customer_reference: '', return_url: 'not a url' }), 422, 'validation_failed');
    expect(b.fields.map((f: any) => f.path).sort()).toEqual(['customer_reference', 'provider', 'return_url']);
    for (const bad of ['javascript:alert(1)', 'ftp://example.com/x', 'mailto:a@b.c', '/relative/path', 'https://', 'http://']) {
      b = expectError(await initiate({ provider: 'demo', customer_reference: 'c', return_url: bad }), 422, 'validation_failed');
      expect(b.fields).toEqual([{ path: 'return_url', message: expect.stringMatching(/^must be an absolute (http\(s\) URL|URI)$/) }]);
    }
    // a reference echoed into the return URL and the consent page: something visible, no control characters
    for (const bad of ['   ', '\n\r', 'a\u0007b', '\u200b', '\u00a0\u2003', '\ufeff ']) {
      b = expectError(await initiate({ provider: 'demo', customer_reference: bad, return_url: RETURN }), 422, 'validation_failed');
      expect(b.fields).toEqual([{ path: 'customer_reference', message: 'must hold a visible character, and no control characters' }]);
      b = expectError(await sync({ provider: 'demo', customer_reference: bad }), 422, 'validation_failed');
      expect(b.fields[0].path).toBe('customer_reference');
    }
    b = expectError(await initiate({ provider: 'demo', return_url: RETURN }), 422, 'validation_failed');
    expect(b.fields.map((f: any) => f.path)).toEqual(['customer_reference']);
    b = expectError(await sync({ provider: 'demo', customer_reference: 'c', mode: 'sometimes', since: 'yesterday' }), 422, 'validation_failed');
    expect(b.fields.map((f: any) => f.path).sort()).toEqual(['mode', 'since']);
    b = expectError(await sync({ provider: 'nope', customer_reference: '' }), 422, 'validation_failed');
    expect(b.fields.map((f: any) => f.path).sort()).toEqual(['customer_reference', 'provider']);
    b = expectError(await h.json('GET', '/v1/erp/nope/invoices', { key }), 422, 'validation_failed');
    expect(b.fields.map((f: any) => f.path)).toEqual(['path.provider']);
    b = expectError(await h.json('GET', '/v1/erp/demo/invoices?cursor=garbage', { key }), 422, 'validation_failed');
    expect(b.fields.map((f: any) => f.path)).toEqual(['query.cursor']);
    b = expectError(await h.json('GET', '/v1/erp/demo/invoices?since=yesterday', { key }), 422, 'validation_failed');
    expect(b.fields.map((f: any) => f.path)).toEqual(['query.since']);
    // date-time means RFC 3339, as the document says: a date alone, no time zone, or an impossible day are refused
    for (const bad of ['2026-11-01', '2026-11-01T10:00:00', '2026-02-30T00:00:00Z', '2026-11-01T24:00:00Z', 'Sun, 01 Nov 2026 00:00:00 GMT', '9999-12-31T00:00:00Z', '0001-01-01T00:00:00Z']) {
      b = expectError(await sync({ provider: 'demo', customer_reference: 'c', since: bad }), 422, 'validation_failed');
      expect(b.fields, bad).toEqual([{ path: 'since', message: 'must be a date-time with its time zone (RFC 3339), e.g. 2026-11-01T00:00:00Z, from 1900 to 2199' }]);
      b = expectError(await h.json('GET', `/v1/erp/demo/invoices?since=${encodeURIComponent(bad)}`, { key }), 422, 'validation_failed');
      expect(b.fields.map((f: any) => f.path), bad).toEqual(['query.since']);
    }
    for (const good of ['2026-11-01T00:00:00Z', '2026-11-01T01:00:00.123+01:00', '2028-02-29T12:00:00z']) {
      expect((await h.json('GET', `/v1/erp/demo/invoices?since=${encodeURIComponent(good)}`, { key })).status, good).toBe(200);
    }
  });
});

describe('sync runs in the sandbox (demo data)', () => {
  test('demo sync: 202 §2.5, run queued → succeeded with counts; invoices readable with pagination and filter', async () => {
    const t = await h.tenant();
    await connect('demo', 'acme', t.api_key);
    const r = await sync({ provider: 'demo', customer_reference: 'acme' }, t.api_key);
    expect(r.status).toBe(202);
    expect(Value.Check(ErpSyncResponse, r.body)).toBe(true);
    expect(r.body).toMatchObject({ status: 'queued', estimated_duration_seconds: null, webhook_will_fire: false });
    expect(r.body.run_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const run = await waitRun(r.body.run_id, t.api_key);
    expect(Value.Check(SyncRun, run)).toBe(true);
    expect(run).toMatchObject({ status: 'succeeded', provider: 'demo', customer_reference: 'acme', mode: 'incremental', attempts: 1, error_code: null });
    expect(run.invoices_count).toBe(DEMO_SIZE_PRESETS.small);
    expect(run.transactions_count).toBeGreaterThan(10);
    expect(run.started_at).not.toBeNull();
    expect(run.finished_at).not.toBeNull();

    const invoices = await allPages('/v1/erp/demo/invoices', t.api_key);
    expect(invoices).toHaveLength(DEMO_SIZE_PRESETS.small);
    expect(new Set(invoices.map((i) => i.id)).size).toBe(invoices.length);
    for (const inv of invoices) {
      expect(Value.Check(Invoice, inv)).toBe(true);
      expect(inv.gross_total_cents).toBe(inv.net_total_cents + inv.tax_total_cents);
      expect(inv.customer_reference).toBe('acme');
    }
    // the rows are the generator's, for seed tenant:customer_reference
    const expected = [...demoInvoices({ seed: 'acme', invoices: DEMO_SIZE_PRESETS.small, startDate: '2025-11-01' })];
    const byId = new Map(invoices.map((i) => [i.provider_document_id, i]));
    for (const e of expected) {
      const got = byId.get(e.provider_document_id);
      expect(got).toMatchObject({ number: e.number, atcud: e.atcud, gross_total_cents: e.gross_total_cents, vat_breakdown: e.vat_breakdown, references: e.references });
      expect(Date.parse(got.updated_at)).toBe(Date.parse(e.updated_at));
    }
    const txns = await allPages('/v1/erp/demo/transactions', t.api_key, 50);
    expect(txns).toHaveLength(run.transactions_count);
    for (const x of txns) expect(Value.Check(Transaction, x)).toBe(true);

    // customer_reference filter and since filter
    await connect('demo', 'other', t.api_key);
    await syncAndWait({ provider: 'demo', customer_reference: 'other' }, t.api_key);
    expect(await allPages('/v1/erp/demo/invoices?customer_reference=acme', t.api_key, 50)).toHaveLength(50);
    expect(await allPages('/v1/erp/demo/invoices?customer_reference=other', t.api_key, 50)).toHaveLength(50);
    expect(await allPages('/v1/erp/demo/invoices', t.api_key, 50)).toHaveLength(100);
    expect(await allPages('/v1/erp/demo/invoices?customer_reference=nobody', t.api_key, 50)).toHaveLength(0);
    const mid = [...expected].sort((a, b) => a.updated_at.localeCompare(b.updated_at))[25]!.updated_at;
    const recent = await allPages(`/v1/erp/demo/invoices?customer_reference=acme&since=${encodeURIComponent(mid)}`, t.api_key, 50);
    expect(recent.length).toBe(expected.filter((e) => e.updated_at >= mid).length);
    expect(recent.every((i) => Date.parse(i.updated_at) >= Date.parse(mid))).toBe(true);
  });

  test('estimate and webhook flag come from earlier runs, even when this run finishes before its 202 is built', async () => {
    const t = await h.tenant();
    await connect('demo', 'fast', t.api_key);
    const jobs = h.ctx.jobs;
    const enqueue = jobs.enqueue;
    // the queue runs the job to the end before enqueue returns (a fast worker on another replica)
    jobs.enqueue = async (...args: Parameters<typeof enqueue>) => {
      await enqueue.apply(jobs, args);
      await jobs.idle!();
    };
    try {
      const first = await sync({ provider: 'demo', customer_reference: 'fast' }, t.api_key);
      expect(first.status).toBe(202);
      expect(first.body).toMatchObject({ status: 'queued', estimated_duration_seconds: null, webhook_will_fire: false });
      expect((await waitRun(first.body.run_id, t.api_key)).status).toBe('succeeded');
      const second = await sync({ provider: 'demo', customer_reference: 'fast', mode: 'full' }, t.api_key);
      expect(second.status).toBe(202);
      expect(second.body.estimated_duration_seconds).toBeInteger();
    } finally {
      jobs.enqueue = enqueue;
    }
  });

  test('re-running never duplicates; full re-pulls everything; incremental continues from the cursor; since is inclusive', async () => {
    const t = await h.tenant();
    await connect('demo', 'dup', t.api_key);
    const first = await syncAndWait({ provider: 'demo', customer_reference: 'dup' }, t.api_key);
    expect(first.invoices_count).toBe(50);
    const nInv = await dbCount('invoices', t.tenant_id);
    const nTxn = await dbCount('bankTransactions', t.tenant_id);
    expect(nInv).toBe(50);
    expect(nTxn).toBe(first.transactions_count);

    const incremental = await syncAndWait({ provider: 'demo', customer_reference: 'dup' }, t.api_key);
    expect(incremental).toMatchObject({ status: 'succeeded', invoices_count: 0, transactions_count: 0 });

    const full = await syncAndWait({ provider: 'demo', customer_reference: 'dup', mode: 'full' }, t.api_key);
    expect(full).toMatchObject({ status: 'succeeded', mode: 'full', invoices_count: 50, transactions_count: first.transactions_count });
    expect(await dbCount('invoices', t.tenant_id)).toBe(nInv);
    expect(await dbCount('bankTransactions', t.tenant_id)).toBe(nTxn);

    // since: rows with updated_at >= since, including every row sharing the boundary timestamp
    const gen = [...demoInvoices({ seed: 'dup', invoices: 50, startDate: '2025-11-01' })];
    const counts = new Map<string, number>();
    for (const g of gen) counts.set(g.updated_at, (counts.get(g.updated_at) ?? 0) + 1);
    const shared = [...counts.entries()].find(([, n]) => n > 1)![0];
    const since = await syncAndWait({ provider: 'demo', customer_reference: 'dup', since: shared }, t.api_key);
    expect(since.since).toBe(new Date(shared).toISOString());
    expect(since.invoices_count).toBe(gen.filter((g) => g.updated_at >= shared).length);
    expect(await dbCount('invoices', t.tenant_id)).toBe(nInv);
  });

  test('synced_since is the change feed: the rows a later sync stored, late documents with older dates included, which since misses', async () => {
    const t = await h.tenant();
    await connect('demo', 'feed', t.api_key);
    const gen = [...demoInvoices({ seed: 'feed', invoices: 50, startDate: '2025-11-01' })].sort((a, b) => (a.updated_at < b.updated_at ? -1 : 1));
    const cut = gen[30]!.updated_at;
    // a first sync of a window: the newest rows only
    const first = await syncAndWait({ provider: 'demo', customer_reference: 'feed', since: cut }, t.api_key);
    const read = async (q: string) => {
      const rows: { id: string; synced_at: string; updated_at: string }[] = [];
      for (let cursor = ''; ; ) {
        const page = (await h.json('GET', `/v1/erp/demo/invoices?customer_reference=feed&limit=7${q}${cursor}`, { key: t.api_key })).body;
        rows.push(...page.data);
        if (!page.next_cursor) return rows;
        cursor = `&cursor=${page.next_cursor}`;
      }
    };
    const seen = await read('');
    expect(seen.length).toBe(first.invoices_count);
    const mark = seen.map((r) => r.synced_at).sort().at(-1)!;
    const newest = seen.map((r) => r.updated_at).sort().at(-1)!;
    h.clock.advance(60_000);
    // later, the rest arrives: documents older than anything read so far
    const rest = await syncAndWait({ provider: 'demo', customer_reference: 'feed' }, t.api_key);
    expect(rest.status).toBe('succeeded');
    const older = (await read(`&since=${encodeURIComponent(newest)}`)).filter((r) => !seen.some((s) => s.id === r.id));
    expect(older).toEqual([]); // since: by the provider's date, they are not "after" anything
    // the whole feed from the start: oldest change first, by (synced_at, id), across pages of 7
    const fromStart = await read(`&synced_since=${encodeURIComponent('2000-01-01T00:00:00Z')}`);
    expect(fromStart.map((r) => `${r.synced_at}|${r.id}`)).toEqual(fromStart.map((r) => `${r.synced_at}|${r.id}`).sort());
    expect(fromStart.length).toBe(50);
    const feed = (await read(`&synced_since=${encodeURIComponent(new Date(Date.parse(mark) + 1).toISOString())}`)).map((r) => r.id).sort();
    const all = (await read('')).map((r) => r.id);
    expect(feed).toEqual(all.filter((id) => !seen.some((s) => s.id === id)).sort());
    expect(feed.length).toBe(50 - seen.length);
    // a full sync writes every row again (counted), but a row as it was keeps its synced_at: nothing new in the feed
    const mark2 = (await read('')).map((r) => r.synced_at).sort().at(-1)!;
    h.clock.advance(60_000);
    expect((await syncAndWait({ provider: 'demo', customer_reference: 'feed', mode: 'full' }, t.api_key)).invoices_count).toBe(50);
    expect(await read(`&synced_since=${encodeURIComponent(new Date(Date.parse(mark2) + 1).toISOString())}`)).toEqual([]);
    expectError(await h.json('GET', '/v1/erp/demo/invoices?synced_since=yesterday', { key: t.api_key }), 422, 'validation_failed');
  });

  test('a sync from since is a window: it moves the incremental position only when it covered it; since in the future is 422', async () => {
    const t = await h.tenant();
    await connect('demo', 'window', t.api_key);
    expect(expectError(await sync({ provider: 'demo', customer_reference: 'window', since: '2199-01-01T00:00:00Z' }, t.api_key), 422, 'validation_failed').fields).toEqual([{ path: 'since', message: expect.stringContaining('future') }]);
    // after the newest row but not in the future: nothing taken, and the next incremental run still takes everything
    const late = await syncAndWait({ provider: 'demo', customer_reference: 'window', since: new Date(h.clock.now().getTime() - 1000).toISOString() }, t.api_key);
    expect(late).toMatchObject({ status: 'succeeded', invoices_count: 0 });
    expect((await syncAndWait({ provider: 'demo', customer_reference: 'window' }, t.api_key)).invoices_count).toBe(50);
    expect((await syncAndWait({ provider: 'demo', customer_reference: 'window' }, t.api_key)).invoices_count).toBe(0);
    // a window within what was taken: the position stays where it was (nothing new after it)
    const gen = [...demoInvoices({ seed: 'window', invoices: 50, startDate: '2025-11-01' })].sort((a, b) => (a.updated_at < b.updated_at ? -1 : 1));
    const again = await syncAndWait({ provider: 'demo', customer_reference: 'window', since: gen[40]!.updated_at }, t.api_key);
    expect(again.invoices_count).toBeGreaterThan(0);
    expect((await syncAndWait({ provider: 'demo', customer_reference: 'window' }, t.api_key)).invoices_count).toBe(0);
    expect(await dbCount('invoices', t.tenant_id)).toBe(50);
  });

  test('sandbox sync of a real provider: the same kind of data, labelled with the provider (after the sandbox consent)', async () => {
    const t = await h.tenant();
    await connect('toconline', 'c-toc', t.api_key);
    const run = await syncAndWait({ provider: 'toconline', customer_reference: 'c-toc' }, t.api_key);
    expect(run.status).toBe('succeeded');
    // TOConline's API has no bank transactions: the sandbox brings none either, as live would
    expect(run.transactions_count).toBe(0);
    expect((await h.json('GET', '/v1/erp/toconline/transactions', { key: t.api_key })).body.data).toEqual([]);
    const inv = await h.json('GET', '/v1/erp/toconline/invoices?limit=200', { key: t.api_key });
    expect(inv.body.data).toHaveLength(50);
    expect(inv.body.data.every((i: any) => i.provider === 'toconline' && i.provider_document_id.startsWith('toconline-inv-'))).toBe(true);
    // nor VAT breakdowns or references: its document list carries none live
    expect(inv.body.data.every((i: any) => i.vat_breakdown.length === 0 && i.references.length === 0)).toBe(true);
    expect((await h.json('GET', '/v1/erp/demo/invoices', { key: t.api_key })).body.data).toHaveLength(0);
    // a provider whose API gives them (in the sandbox: PHC) brings them
    await connect('phc', 'c-phc', t.api_key);
    await syncAndWait({ provider: 'phc', customer_reference: 'c-phc' }, t.api_key);
    const phc = (await h.json('GET', '/v1/erp/phc/invoices?limit=200', { key: t.api_key })).body.data;
    expect(phc.some((i: any) => i.vat_breakdown.length > 0)).toBe(true);
    expect(phc.some((i: any) => i.references.length > 0)).toBe(true);
  });

  test('an identical sync still queued or running is joined, not duplicated', async () => {
    const t = await h.tenant();
    await connect('demo', 'join', t.api_key);
    const a = await sync({ provider: 'demo', customer_reference: 'join' }, t.api_key);
    const b = await sync({ provider: 'demo', customer_reference: 'join' }, t.api_key);
    const c = await sync({ provider: 'demo', customer_reference: 'join', mode: 'full' }, t.api_key);
    expect(b.body.run_id).toBe(a.body.run_id);
    expect(['queued', 'running']).toContain(b.body.status);
    expect(c.body.run_id).not.toBe(a.body.run_id);
    await waitRun(a.body.run_id, t.api_key);
    await waitRun(c.body.run_id, t.api_key);
    // billed once a run: the request that joined is not a second pull
    await h.ctx.usage.flush();
    const u = h.ctx.database.t.usageRecords;
    const syncs = (await h.ctx.database.db.select().from(u).where(eq(u.tenantId, t.tenant_id))).filter((r) => r.meter === 'erp_sync');
    expect(syncs.reduce((n, r) => n + r.quantity, 0)).toBe(2);
  });

  test('run list: newest first, filters, cursor pagination; GET of an unknown run → 404', async () => {
    const t = await h.tenant();
    const ids: string[] = [];
    for (const ref of ['r1', 'r2', 'r3']) await connect('demo', ref, t.api_key);
    await connect('toconline', 'r1', t.api_key);
    for (const ref of ['r1', 'r2', 'r3']) {
      const r = await syncAndWait({ provider: 'demo', customer_reference: ref }, t.api_key);
      ids.push(r.run_id);
      h.clock.advance(1000);
    }
    await syncAndWait({ provider: 'toconline', customer_reference: 'r1' }, t.api_key);
    const all = await allPages('/v1/erp-connector/sync?provider=demo', t.api_key, 2);
    expect(all.map((r) => r.run_id)).toEqual([...ids].reverse());
    const r1 = await h.json('GET', '/v1/erp-connector/sync?customer_reference=r1', { key: t.api_key });
    expect(r1.body.data.map((r: any) => r.provider)).toEqual(['toconline', 'demo']);
    expectError(await h.json('GET', `/v1/erp-connector/sync/${crypto.randomUUID()}`, { key: t.api_key }), 404, 'resource_not_found');
    expectError(await h.json('GET', '/v1/erp-connector/sync/not-a-uuid', { key: t.api_key }), 404, 'resource_not_found');
  });

  test('estimated_duration_seconds: null without history, then an integer (median of succeeded runs)', async () => {
    const t = await h.tenant();
    for (const [p, ref] of [['demo', 'est'], ['demo', 'est-2'], ['sage', 'est']]) await connect(p!, ref!, t.api_key);
    const first = await sync({ provider: 'demo', customer_reference: 'est' }, t.api_key);
    expect(first.body.estimated_duration_seconds).toBeNull();
    await waitRun(first.body.run_id, t.api_key);
    // give the finished run a known duration of 3.2 s
    const r = h.ctx.database.t.syncRuns;
    const [row] = await h.ctx.database.db.select().from(r).where(eq(r.id, first.body.run_id));
    await h.ctx.database.withTx((tx) => tx.update(r).set({ finishedAt: new Date(row!.startedAt!.getTime() + 3200) }).where(eq(r.id, row!.id)));
    const second = await sync({ provider: 'demo', customer_reference: 'est-2', mode: 'full' }, t.api_key);
    expect(second.body.estimated_duration_seconds).toBe(4);
    expect(Number.isInteger(second.body.estimated_duration_seconds)).toBe(true);
    await waitRun(second.body.run_id, t.api_key);
    // another provider has no history
    expect((await sync({ provider: 'sage', customer_reference: 'est' }, t.api_key)).body.estimated_duration_seconds).toBeNull();
  });

  test('webhook_will_fire: true when active endpoints hear the run whatever its outcome (completed and failed, or *); an erp.sync.completed event is written', async () => {
    const t = await h.tenant();
    const w = h.ctx.database.t.webhookEndpoints;
    const insertEndpoint = (events: string[], status = 'active', env = 'sandbox') =>
      h.ctx.database.withTx((tx) =>
        tx.insert(w).values({
          id: crypto.randomUUID(),
          tenantId: t.tenant_id,
          env,
          url: 'https://hooks.example.com/x',
          enabledEvents: events,
          secretEnc: 'sealed-secret',
          secretPrefix: 'whsec_x',
          status,
          consecutiveFailures: 0,
          createdAt: h.ctx.clock.now(),
        }),
      );
    await insertEndpoint(['score.updated']);
    await insertEndpoint(['*'], 'disabled');
    await insertEndpoint(['*'], 'active', 'live');
    await connect('demo', 'wh', t.api_key);
    const no = await sync({ provider: 'demo', customer_reference: 'wh' }, t.api_key);
    expect(no.body.webhook_will_fire).toBe(false);
    await waitRun(no.body.run_id, t.api_key);
    await insertEndpoint(['erp.sync.completed']);
    // completion alone: a failure would reach no one, so the caller should poll
    const half = await sync({ provider: 'demo', customer_reference: 'wh', mode: 'full' }, t.api_key);
    expect(half.body.webhook_will_fire).toBe(false);
    await waitRun(half.body.run_id, t.api_key);
    await insertEndpoint(['erp.sync.failed', 'score.updated']);
    const yes = await sync({ provider: 'demo', customer_reference: 'wh', mode: 'full' }, t.api_key);
    expect(yes.body.webhook_will_fire).toBe(true);
    const run = await waitRun(yes.body.run_id, t.api_key);

    const e = h.ctx.database.t.events;
    const events = await h.ctx.database.db.select().from(e).where(and(eq(e.tenantId, t.tenant_id), eq(e.type, 'erp.sync.completed')));
    const mine = events.find((x) => (x.data as any).run_id === yes.body.run_id)!;
    expect(mine.env).toBe('sandbox');
    expect(mine.data).toEqual({
      run_id: yes.body.run_id,
      provider: 'demo',
      customer_reference: 'wh',
      status: 'succeeded',
      invoices_count: run.invoices_count,
      transactions_count: run.transactions_count,
    });
  });

  test('usage: one erp_sync record per sync run a request starts (sandbox: not billable)', async () => {
    const t = await h.tenant();
    await connect('demo', 'u1', t.api_key);
    await connect('demo', 'u2', t.api_key);
    await syncAndWait({ provider: 'demo', customer_reference: 'u1' }, t.api_key);
    await syncAndWait({ provider: 'demo', customer_reference: 'u2' }, t.api_key);
    await h.ctx.usage.flush();
    const u = h.ctx.database.t.usageRecords;
    const rows = await h.ctx.database.db.select().from(u).where(eq(u.tenantId, t.tenant_id));
    const syncs = rows.filter((r) => r.meter === 'erp_sync');
    expect(syncs.reduce((n, r) => n + r.quantity, 0)).toBe(2);
    expect(new Set(syncs.flatMap((r) => r.requestIds!.split(' '))).size).toBe(2); // each call's request id
    expect(rows.every((r) => r.billable === false && r.apiKeyId === t.api_key_id)).toBe(true);
  });
});

describe('sandbox syncs need the customer’s consent (issue 17 item 10)', () => {
  test('never initiated, pending, denied, disconnected → 409 erp_not_connected and no run; approved → 202', async () => {
    const t = await h.tenant();
    const refused = async (ref: string, provider = 'demo') => {
      const b = expectError(await sync({ provider, customer_reference: ref }, t.api_key), 409, 'erp_not_connected');
      expect(b.message).toContain(ref);
    };
    await refused('never');
    await refused('never', 'toconline');
    await initiate({ provider: 'demo', customer_reference: 'pending', return_url: RETURN }, t.api_key);
    await refused('pending');
    await connectSandboxErp(h, t.api_key, 'moloni', { customerReference: 'denied', returnUrl: RETURN, decision: 'deny' });
    await refused('denied', 'moloni');
    const { location } = await connect('demo', 'gone', t.api_key);
    expect(location.searchParams.get('status')).toBe('connected');
    const conn = (await h.json('GET', '/v1/erp-connector/connections?customer_reference=gone', { key: t.api_key })).body.data[0];
    expect((await h.json('DELETE', `/v1/erp-connector/connections/${conn.id}`, { key: t.api_key })).status).toBe(200);
    await refused('gone');
    // a consent of another provider or customer does not count
    await connect('demo', 'approved', t.api_key);
    await refused('approved', 'sage');
    expect(await dbCount('syncRuns', t.tenant_id)).toBe(0);
    await h.ctx.usage.flush();
    const u = h.ctx.database.t.usageRecords;
    expect((await h.ctx.database.db.select().from(u).where(eq(u.tenantId, t.tenant_id))).filter((r) => r.meter === 'erp_sync')).toHaveLength(0);
    const run = await syncAndWait({ provider: 'demo', customer_reference: 'approved' }, t.api_key);
    expect(run).toMatchObject({ status: 'succeeded', invoices_count: 50 });
  });

  test('a connection disconnected after the request: the queued run fails erp_not_connected, nothing is written', async () => {
    const t = await h.tenant();
    await connect('demo', 'late-cut', t.api_key);
    const conn = (await h.json('GET', '/v1/erp-connector/connections?customer_reference=late-cut', { key: t.api_key })).body.data[0];
    expect((await h.json('DELETE', `/v1/erp-connector/connections/${conn.id}`, { key: t.api_key })).status).toBe(200);
    // the run as the request left it (queued, with the connection it was accepted for), handled by the job
    const runId = Bun.randomUUIDv7();
    const r = h.ctx.database.t.syncRuns;
    const now = h.clock.now();
    await h.ctx.database.withTx((tx) =>
      tx.insert(r).values({ id: runId, tenantId: t.tenant_id, env: 'sandbox', provider: 'demo', customerReference: 'late-cut', connectionId: conn.id, mode: 'incremental', status: 'queued', attempts: 0, invoicesCount: 0, transactionsCount: 0, createdAt: now }),
    );
    await erpService(h.ctx).sync.handle({ runId });
    const run = await waitRun(runId, t.api_key);
    expect(run).toMatchObject({ status: 'failed', error_code: 'erp_not_connected' });
    expect(await dbCount('invoices', t.tenant_id)).toBe(0);
  });
});

describe('connections', () => {
  test('list with pagination and filters; GET one; DELETE disconnects and wipes; another tenant → 404', async () => {
    const t = await h.tenant();
    for (const ref of ['a', 'b', 'c']) {
      await connect('demo', ref, t.api_key);
      h.clock.advance(1000);
    }
    await connect('moloni', 'a', t.api_key);
    const all = await allPages('/v1/erp-connector/connections', t.api_key, 2);
    expect(all.map((c) => `${c.provider}:${c.customer_reference}`)).toEqual(['moloni:a', 'demo:c', 'demo:b', 'demo:a']);
    expect((await h.json('GET', '/v1/erp-connector/connections?provider=demo&customer_reference=b', { key: t.api_key })).body.data).toHaveLength(1);

    const target = all[1];
    const other = await h.tenant();
    // one connection, as listed; another tenant, or an unknown id: 404
    expect((await h.json('GET', `/v1/erp-connector/connections/${target.id}`, { key: t.api_key })).body).toEqual(target);
    expectError(await h.json('GET', `/v1/erp-connector/connections/${target.id}`, { key: other.api_key }), 404, 'resource_not_found');
    expectError(await h.json('GET', `/v1/erp-connector/connections/${crypto.randomUUID()}`, { key: t.api_key }), 404, 'resource_not_found');
    expectError(await h.json('DELETE', `/v1/erp-connector/connections/${target.id}`, { key: other.api_key }), 404, 'resource_not_found');
    expect(target.status_reason).toBeNull(); // active
    const del = await h.json('DELETE', `/v1/erp-connector/connections/${target.id}`, { key: t.api_key });
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ id: target.id, status: 'disconnected', status_reason: 'disconnected by the tenant (DELETE)' });
    expect((await h.json('DELETE', `/v1/erp-connector/connections/${target.id}`, { key: t.api_key })).status).toBe(200);
    expectError(await h.json('DELETE', `/v1/erp-connector/connections/${crypto.randomUUID()}`, { key: t.api_key }), 404, 'resource_not_found');
    const c = h.ctx.database.t.erpConnections;
    const [row] = await h.ctx.database.db.select().from(c).where(eq(c.id, target.id));
    expect(row).toMatchObject({ status: 'disconnected', accessTokenEnc: null, refreshTokenEnc: null, stateHash: null });
  });
});

describe('auth, environments and isolation', () => {
  test('no key → 401; a key without the erp scope → 403 insufficient_scope', async () => {
    expectError(await h.json('POST', '/v1/erp-connector/sync', { body: { provider: 'demo', customer_reference: 'x' } }), 401, 'missing_api_key');
    expectError(await h.json('GET', '/v1/erp/demo/invoices'), 401, 'missing_api_key');
    const t = await h.tenant({ scopes: ['score'] });
    expectError(await sync({ provider: 'demo', customer_reference: 'x' }, t.api_key), 403, 'insufficient_scope');
    expectError(await initiate({ provider: 'demo', customer_reference: 'x', return_url: RETURN }, t.api_key), 403, 'insufficient_scope');
    expectError(await h.json('GET', '/v1/erp-connector/connections', { key: t.api_key }), 403, 'insufficient_scope');
    const ok = await h.tenant({ scopes: ['erp'] });
    expect((await h.json('GET', '/v1/erp-connector/connections', { key: ok.api_key })).status).toBe(200);
  });

  test('tenant B cannot see A’s runs, invoices, transactions or connections', async () => {
    const a = await h.tenant();
    const b = await h.tenant();
    await connect('demo', 'shared-ref', a.api_key);
    const run = await syncAndWait({ provider: 'demo', customer_reference: 'shared-ref' }, a.api_key);
    expectError(await h.json('GET', `/v1/erp-connector/sync/${run.run_id}`, { key: b.api_key }), 404, 'resource_not_found');
    expect((await h.json('GET', '/v1/erp-connector/sync', { key: b.api_key })).body.data).toEqual([]);
    expect((await h.json('GET', '/v1/erp/demo/invoices?customer_reference=shared-ref', { key: b.api_key })).body.data).toEqual([]);
    expect((await h.json('GET', '/v1/erp/demo/transactions', { key: b.api_key })).body.data).toEqual([]);
    expect((await h.json('GET', '/v1/erp-connector/connections', { key: b.api_key })).body.data).toEqual([]);
    // the same tenant's live key sees none of its sandbox data either
    const live = await h.ctx.tenants.createKey({ tenantId: a.tenant_id, env: 'live', scopes: ['*'] });
    expect((await h.json('GET', '/v1/erp/demo/invoices', { key: live.api_key })).body.data).toEqual([]);
    expectError(await h.json('GET', `/v1/erp-connector/sync/${run.run_id}`, { key: live.api_key }), 404, 'resource_not_found');

    // B syncing the same reference gets the same sandbox books (the README's answers are everyone's), in rows of its own
    await connect('demo', 'shared-ref', b.api_key);
    await syncAndWait({ provider: 'demo', customer_reference: 'shared-ref' }, b.api_key);
    const numbers = async (k: string) => (await allPages('/v1/erp/demo/invoices?customer_reference=shared-ref', k, 50)).map((i) => `${i.number}|${i.gross_total_cents}`).sort();
    const ofA = await allPages('/v1/erp/demo/invoices?customer_reference=shared-ref', a.api_key, 50);
    const ofB = await allPages('/v1/erp/demo/invoices?customer_reference=shared-ref', b.api_key, 50);
    expect(ofA.length).toBeGreaterThan(0);
    expect(ofB.length).toBe(ofA.length);
    expect(await numbers(b.api_key)).toEqual(await numbers(a.api_key));
    expect(ofB.filter((i) => ofA.some((x) => x.id === i.id))).toEqual([]);
    expect(await dbCount('invoices', a.tenant_id)).toBe(ofA.length);
    expect(await dbCount('invoices', b.tenant_id)).toBe(ofB.length);
  });

  test('live key: demo → 422 provider_not_available; unconfigured provider → 503; configured but not connected → 409', async () => {
    const live = await h.tenant({ env: 'live' });
    expectError(await initiate({ provider: 'demo', customer_reference: 'x', return_url: RETURN }, live.api_key), 422, 'provider_not_available');
    expectError(await sync({ provider: 'demo', customer_reference: 'x' }, live.api_key), 422, 'provider_not_available');
    for (const provider of ['moloni', 'sage', 'primavera', 'phc', 'invoicexpress']) {
      expectError(await initiate({ provider, customer_reference: 'x', return_url: RETURN }, live.api_key), 503, 'oauth_credentials_not_configured');
      expectError(await sync({ provider, customer_reference: 'x' }, live.api_key), 503, 'oauth_credentials_not_configured');
    }
    expectError(await sync({ provider: 'toconline', customer_reference: 'x' }, live.api_key), 409, 'erp_not_connected');
    // a live initiate of a configured provider points at the provider, not at the sandbox consent page
    const init = await initiate({ provider: 'toconline', customer_reference: 'x', return_url: RETURN }, live.api_key);
    expect(init.status).toBe(200);
    expect(init.body.authorize_url.startsWith('http://127.0.0.1:9/oauth/auth?')).toBe(true);
    // the sandbox consent page refuses live states
    expect((await h.call('GET', `/v1/erp-connector/oauth/consent?state=${encodeURIComponent(init.body.state)}`)).status).toBe(400);
    // nothing was created for the refused requests
    expect(await dbCount('syncRuns', live.tenant_id)).toBe(0);
    expect(await dbCount('erpConnections', live.tenant_id)).toBe(1);
  });

  test('the callback and consent page are rate limited per client address (no key needed)', async () => {
    const small = await makeApp({ ANON_RATE_LIMIT_PER_MINUTE: '3' }, { workers: false });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await small.call('GET', `/v1/erp-connector/oauth/callback?state=s${i}&code=sandbox_x`)).status);
      expect(statuses).toEqual([400, 400, 400, 429, 429]);
      const r = await small.json('GET', '/v1/erp-connector/oauth/consent?state=x');
      expectError(r, 429, 'rate_limited');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await small.close();
    }
  });

  test('POST /sync with an Idempotency-Key replays the 202 without a second run or usage row', async () => {
    const t = await h.tenant();
    const headers = { 'idempotency-key': 'sync-once' };
    const body = { provider: 'demo', customer_reference: 'idem', mode: 'full' };
    await connect('demo', 'idem', t.api_key);
    const a = await h.json('POST', '/v1/erp-connector/sync', { key: t.api_key, body, headers });
    await waitRun(a.body.run_id, t.api_key);
    const b = await h.json('POST', '/v1/erp-connector/sync', { key: t.api_key, body, headers });
    expect(b.status).toBe(202);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.body).toEqual(a.body);
    expect(await dbCount('syncRuns', t.tenant_id)).toBe(1);
    await h.ctx.usage.flush();
    const u = h.ctx.database.t.usageRecords;
    expect((await h.ctx.database.db.select().from(u).where(eq(u.tenantId, t.tenant_id))).filter((x) => x.meter === 'erp_sync')).toHaveLength(1);
  });

  test('the ERP routes are in the OpenAPI document', async () => {
    const r = await h.json('GET', '/openapi.json');
    for (const p of [
      '/v1/erp-connector/oauth/initiate',
      '/v1/erp-connector/oauth/callback',
      '/v1/erp-connector/sync',
      '/v1/erp-connector/sync/{run_id}',
      '/v1/erp-connector/connections',
      '/v1/erp-connector/connections/{id}',
      '/v1/erp/{provider}/invoices',
      '/v1/erp/{provider}/transactions',
    ])
      expect(Object.keys(r.body.paths)).toContain(p);
    expect(Object.keys(r.body.paths['/v1/erp-connector/sync'].post.responses)).toContain('202');
    // the browser steps are documented as they answer: a redirect and HTML pages, no JSON success
    const callback = r.body.paths['/v1/erp-connector/oauth/callback'].get.responses;
    expect(Object.keys(callback).sort()).toEqual(['302', '400', '429', '500']);
    expect(callback['302'].headers.Location).toBeDefined();
    expect(Object.keys(callback['400'].content)).toEqual(['text/html']);
    const consent = r.body.paths['/v1/erp-connector/oauth/consent'].get.responses;
    expect(Object.keys(consent).sort()).toEqual(['200', '400', '429', '500']);
    expect(Object.keys(consent['200'].content)).toEqual(['text/html']);
    // the consent decision: a form post answered with a redirect or HTML pages (no JSON body errors, no Idempotency-Key)
    const decision = r.body.paths['/v1/erp-connector/oauth/consent'].post;
    expect(Object.keys(decision.requestBody.content)).toEqual(['application/x-www-form-urlencoded']);
    expect(decision.requestBody.content['application/x-www-form-urlencoded'].schema.required).toEqual(['state', 'csrf_token', 'decision']);
    expect(Object.keys(decision.responses).sort()).toEqual(['303', '400', '403', '429', '500']);
    expect(Object.keys(decision.responses['403'].content)).toEqual(['text/html']);
    expect((decision.parameters ?? []).map((p: any) => p.name)).not.toContain('Idempotency-Key');
  });
});
