import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { createHash } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { configureErp, erpService, registerErpWorkers } from '../src/features/erp';
import { PAGING_LIMITS } from '../src/features/erp/providers/types';
import { startWorkers } from '../src/workers';
import { expectError, makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

/**
 * Live ERP flow against fake TOConline and Moloni servers on 127.0.0.1: authorisation URL (PKCE
 * for TOConline), code exchange, sealed tokens, paged pulls and mapping, refresh on expiry,
 * refresh races, 429 back-off, and relink_required when the provider refuses our tokens.
 */

// ---------------------------------------------------------------------------------------------
// Fake TOConline: {oauth}/token with Basic client auth; JSON:API sales documents, 100 per page
// ---------------------------------------------------------------------------------------------
const toc = {
  tokenRequests: [] as { authorization: string | null; form: Record<string, string> }[],
  docRequests: [] as { status: number; auth: string | null; page: string | null }[],
  validAccess: new Set<string>(),
  refreshTokens: new Set<string>(),
  issued: 0,
  challenge: '' as string,
  mode: { refresh: 'ok' as 'ok' | 'fail', docs: 'ok' as 'ok' | '429-once' | '401-always' | '503-always' },
  served429: 0,
  /** run before a page of documents is answered (a customer disconnecting meanwhile) */
  beforePage: null as ((page: string | null) => Promise<void>) | null,
  /** the documents of a page, in place of TOC_DOCS (a test's own books) */
  serve: null as ((page: number, size: number) => { data: unknown[]; last: boolean }) | null,
};
const TOC_DOCS = Array.from({ length: 233 }, (_, i) => {
  const n = i + 1;
  const type = n === 7 ? 'OR' : n % 10 === 0 ? 'NC' : 'FT';
  return {
    id: String(1000 + n),
    type: 'commercial_sales_documents',
    attributes: {
      document_type: type,
      document_no: n === 8 ? null : `${type} 2026/${n}`,
      status: n === 8 ? 0 : n === 9 ? 4 : 1,
      date: `2026-03-${String((n % 28) + 1).padStart(2, '0')}`,
      due_date: `2026-04-${String((n % 28) + 1).padStart(2, '0')}`,
      customer_tax_registration_number: '500000000',
      customer_business_name: `Cliente ${n}, Lda.`,
      currency_iso_code: 'EUR',
      net_total: (n * 10.1).toFixed(2),
      tax_payable: (n * 10.1 * 0.23).toFixed(2),
      gross_total: (n * 10.1 + Number((n * 10.1 * 0.23).toFixed(2))).toFixed(2),
      atcud: `ABCD1234-${n}`,
      updated_at: `2026-03-${String((n % 28) + 1).padStart(2, '0')}T10:00:00Z`,
    },
  };
});
const TOC_EXPECTED = TOC_DOCS.filter((d) => d.attributes.document_type !== 'OR' && d.attributes.status !== 0).length;

function tocIssue() {
  toc.issued++;
  const access = `toc-access-${toc.issued}-${crypto.randomUUID()}`;
  const refresh = `toc-refresh-${toc.issued}-${crypto.randomUUID()}`;
  toc.validAccess.add(access);
  toc.refreshTokens.add(refresh);
  return Response.json({ access_token: access, refresh_token: refresh, token_type: 'bearer', expires_in: 3600 });
}

const tocServer = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(req) {
    const url = new URL(req.url);
    if (url.pathname === '/oauth/token' && req.method === 'POST') {
      const form = Object.fromEntries(new URLSearchParams(await req.text()));
      toc.tokenRequests.push({ authorization: req.headers.get('authorization'), form });
      if (req.headers.get('authorization') !== `Basic ${Buffer.from('toc-client:toc-secret').toString('base64')}`) return Response.json({ error: 'invalid_client' }, { status: 401 });
      if (form.grant_type === 'authorization_code') {
        if (form.code !== 'good-code') return Response.json({ error: 'invalid_grant' }, { status: 400 });
        const expected = createHash('sha256').update(form.code_verifier ?? '').digest('base64url');
        if (expected !== toc.challenge) return Response.json({ error: 'invalid_grant', error_description: 'PKCE' }, { status: 400 });
        return tocIssue();
      }
      if (form.grant_type === 'refresh_token') {
        await Bun.sleep(30); // widen the race window
        if (toc.mode.refresh === 'fail' || !toc.refreshTokens.has(form.refresh_token!)) return Response.json({ error: 'invalid_grant' }, { status: 400 });
        toc.refreshTokens.delete(form.refresh_token!); // rotating refresh tokens
        return tocIssue();
      }
      return Response.json({ error: 'unsupported_grant_type' }, { status: 400 });
    }
    if (url.pathname === '/api/v1/commercial_sales_documents') {
      const auth = req.headers.get('authorization');
      const page = url.searchParams.get('page[number]');
      const record = (status: number) => toc.docRequests.push({ status, auth, page });
      await toc.beforePage?.(page);
      if (toc.mode.docs === '429-once' && toc.served429 === 0) {
        toc.served429++;
        record(429);
        return new Response('slow down', { status: 429, headers: { 'retry-after': '0' } });
      }
      if (toc.mode.docs === '503-always') {
        record(503);
        return new Response('down', { status: 503 });
      }
      if (toc.mode.docs === '401-always' || !auth?.startsWith('Bearer ') || !toc.validAccess.has(auth.slice(7))) {
        record(401);
        return Response.json({ errors: [{ title: 'Unauthorized' }] }, { status: 401 });
      }
      record(200);
      const size = Number(url.searchParams.get('page[size]'));
      const n = Number(page);
      const { data, last } = toc.serve ? toc.serve(n, size) : { data: TOC_DOCS.slice((n - 1) * size, n * size), last: n * size >= TOC_DOCS.length };
      return new Response(JSON.stringify({ data, links: { self: url.toString(), next: last ? null : `${url.origin}${url.pathname}?page[number]=${n + 1}` } }), {
        headers: { 'content-type': 'application/vnd.api+json' },
      });
    }
    return new Response('not found', { status: 404 });
  },
});

// ---------------------------------------------------------------------------------------------
// Fake Moloni: GET /v1/grant/ with the client credentials in the query; POST …/?access_token=…
// ---------------------------------------------------------------------------------------------
const mol = {
  grants: [] as Record<string, string>[],
  calls: [] as { path: string; token: string | null; body: any }[],
  validAccess: new Set<string>(),
  mode: { docs: 'ok' as 'ok' | '401-always' },
  /** the documents at an offset, in place of MOL_DOCS (a test's own books) */
  serve: null as ((offset: number, qty: number) => unknown[]) | null,
};
const MOL_DOCS = Array.from({ length: 120 }, (_, i) => {
  const n = i + 1;
  const saft = n === 5 ? 'OR' : n % 15 === 0 ? 'NC' : n % 4 === 0 ? 'FR' : 'FT';
  const gross = n * 3.5;
  const taxes = Number((gross * 0.23).toFixed(2));
  return {
    document_id: 900000 + n,
    company_id: 240211,
    document_set_name: '2026',
    number: n === 6 ? -1 : n,
    status: n === 6 ? 0 : 1,
    date: '2026-02-10T00:00:00+0000',
    expiration_date: '2026-03-12T00:00:00+0000',
    entity_vat: '510000002',
    entity_name: `Entidade ${n}`,
    gross_value: gross,
    taxes_value: taxes,
    net_value: Number((gross + taxes).toFixed(2)),
    lastmodified: `2026-02-10T1${n % 10}:00:00+0100`,
    document_type: { document_type_id: 1, saft_code: saft },
    document_set: { name: '2026' },
  };
});
const MOL_EXPECTED = MOL_DOCS.filter((d) => d.document_type.saft_code !== 'OR' && d.status !== 0).length;

const molServer = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(req) {
    const url = new URL(req.url);
    if (url.pathname === '/v1/grant/') {
      const q = Object.fromEntries(url.searchParams);
      mol.grants.push(q);
      if (q.client_id !== 'mol-client' || q.client_secret !== 'mol-secret') return Response.json({ error: 'invalid_client' }, { status: 400 });
      if (q.grant_type === 'authorization_code' && q.code !== 'mol-code') return Response.json({ error: 'invalid_grant' }, { status: 400 });
      const access = `mol-access-${crypto.randomUUID()}`;
      mol.validAccess.add(access);
      return Response.json({ access_token: access, expires_in: 3600, token_type: 'bearer', scope: null, refresh_token: `mol-refresh-${crypto.randomUUID()}` });
    }
    const token = url.searchParams.get('access_token');
    const body: any = req.method === 'POST' ? await req.json().catch(() => null) : null;
    mol.calls.push({ path: url.pathname, token, body });
    if (mol.mode.docs === '401-always' || !token || !mol.validAccess.has(token)) return Response.json({ error: 'invalid_token', error_description: 'expired' }, { status: 401 });
    if (url.searchParams.get('json') !== 'true') return new Response('form body', { status: 400 });
    if (url.pathname === '/v1/companies/getAll/') return Response.json([{ company_id: 240211, name: 'Empresa Exemplo' }]);
    if (url.pathname === '/v1/documents/getAll/') {
      if (body?.company_id !== 240211) return Response.json({ error: 'company_id' }, { status: 400 });
      return Response.json(mol.serve ? mol.serve(body.offset, body.qty) : MOL_DOCS.slice(body.offset, body.offset + body.qty));
    }
    return new Response('not found', { status: 404 });
  },
});

// ---------------------------------------------------------------------------------------------

let h: TestApp;
let live: { tenant_id: string; api_key: string };
const RETURN = 'https://app.example.com/erp/return';
const ERP_ENV = {
  ERP_TOCONLINE_CLIENT_ID: 'toc-client',
  ERP_TOCONLINE_CLIENT_SECRET: 'toc-secret',
  ERP_TOCONLINE_AUTHORIZE_URL: `http://127.0.0.1:${tocServer.port}/oauth/auth`,
  ERP_TOCONLINE_TOKEN_URL: `http://127.0.0.1:${tocServer.port}/oauth/token`,
  ERP_TOCONLINE_API_URL: `http://127.0.0.1:${tocServer.port}`,
  ERP_MOLONI_CLIENT_ID: 'mol-client',
  ERP_MOLONI_CLIENT_SECRET: 'mol-secret',
  ERP_MOLONI_AUTHORIZE_URL: `http://127.0.0.1:${molServer.port}/v1/authorize/`,
  ERP_MOLONI_TOKEN_URL: `http://127.0.0.1:${molServer.port}/v1/grant/`,
  ERP_MOLONI_API_URL: `http://127.0.0.1:${molServer.port}/v1`,
  ERP_HTTP_BASE_DELAY_MS: '5',
  ERP_HTTP_MAX_WAIT_MS: '100',
  ERP_HTTP_MAX_ATTEMPTS: '3',
};

beforeAll(async () => {
  h = await makeApp({ PUBLIC_BASE_URL: 'https://api.example.test' }, { workers: false });
  configureErp(h.ctx, ERP_ENV);
  registerErpWorkers(h.ctx);
  await startWorkers(h.ctx);
  live = await h.tenant({ env: 'live' });
});
afterAll(async () => {
  tocServer.stop(true);
  molServer.stop(true);
  await h.close();
});

async function waitRun(runId: string) {
  for (let i = 0; i < 500; i++) {
    await h.ctx.jobs.idle?.();
    const r = await h.json('GET', `/v1/erp-connector/sync/${runId}`, { key: live.api_key });
    if (r.body?.status === 'succeeded' || r.body?.status === 'failed') return r.body;
    await Bun.sleep(10);
  }
  throw new Error('run did not finish');
}
async function syncAndWait(body: Record<string, unknown>) {
  const r = await h.json('POST', '/v1/erp-connector/sync', { key: live.api_key, body });
  expect(r.status).toBe(202);
  return waitRun(r.body.run_id);
}
const connRow = async (id: string) => {
  const c = h.ctx.database.t.erpConnections;
  const [row] = await h.ctx.database.db.select().from(c).where(eq(c.id, id));
  return row!;
};
const connections = async () => (await h.json('GET', '/v1/erp-connector/connections', { key: live.api_key })).body.data as any[];

/** initiate → (the provider redirects back) → callback with a code; returns the 302 location and the connection */
async function linkToconline(ref: string) {
  const init = await h.json('POST', '/v1/erp-connector/oauth/initiate', { key: live.api_key, body: { provider: 'toconline', customer_reference: ref, return_url: RETURN } });
  expect(init.status).toBe(200);
  const auth = new URL(init.body.authorize_url);
  toc.challenge = auth.searchParams.get('code_challenge')!;
  const cb = await h.call('GET', `/v1/erp-connector/oauth/callback?code=good-code&state=${encodeURIComponent(init.body.state)}`);
  expect(cb.status).toBe(302);
  const conn = (await connections()).find((c) => c.customer_reference === ref && c.status === 'active');
  return { init: init.body, auth, location: new URL(cb.headers.get('location')!), conn };
}

describe('TOConline (OAuth2 code + PKCE, Basic client auth, JSON:API)', () => {
  let connId: string;

  test('authorize URL carries client_id, redirect_uri, response_type, scope, state and an S256 code challenge', async () => {
    const { init, auth, location, conn } = await linkToconline('toc-1');
    expect(auth.origin + auth.pathname).toBe(ERP_ENV.ERP_TOCONLINE_AUTHORIZE_URL);
    expect(auth.searchParams.get('client_id')).toBe('toc-client');
    expect(auth.searchParams.get('redirect_uri')).toBe('https://api.example.test/v1/erp-connector/oauth/callback');
    expect(auth.searchParams.get('response_type')).toBe('code');
    expect(auth.searchParams.get('scope')).toBe('commercial');
    expect(auth.searchParams.get('state')).toBe(init.state);
    expect(auth.searchParams.get('code_challenge_method')).toBe('S256');
    expect(auth.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Object.fromEntries(location.searchParams)).toEqual({ status: 'connected', provider: 'toconline', customer_reference: 'toc-1' });
    expect(conn).toBeDefined();
    connId = conn.id;
    expect(conn.token_expires_at).toBe(new Date(h.clock.ms + 3600_000).toISOString());
  });

  test('the code exchange used Basic client auth, the redirect_uri and the PKCE verifier', () => {
    const ex = toc.tokenRequests.find((r) => r.form.grant_type === 'authorization_code')!;
    expect(ex.authorization).toBe(`Basic ${Buffer.from('toc-client:toc-secret').toString('base64')}`);
    expect(ex.form.code).toBe('good-code');
    expect(ex.form.redirect_uri).toBe('https://api.example.test/v1/erp-connector/oauth/callback');
    expect(ex.form.code_verifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
    expect(ex.form.client_secret).toBeUndefined();
  });

  test('tokens are stored sealed: no column holds a token or the verifier in clear', async () => {
    const row = await connRow(connId);
    const raw = JSON.stringify(row);
    for (const secret of [...toc.validAccess, ...toc.refreshTokens]) expect(raw).not.toContain(secret);
    expect(row.accessTokenEnc).toMatch(/^v1\./);
    expect(toc.validAccess.has(h.ctx.secretBox.open(row.accessTokenEnc!))).toBe(true);
    expect(toc.refreshTokens.has(h.ctx.secretBox.open(row.refreshTokenEnc!))).toBe(true);
    expect(row.pkceVerifierEnc).toBeNull();
    expect(row.stateHash).toBeNull();
    if (h.ctx.database.pg) {
      const rows = await h.ctx.database.pg`select * from erp_connections where id = ${connId}`;
      const text = JSON.stringify(rows);
      for (const secret of [...toc.validAccess, ...toc.refreshTokens]) expect(text).not.toContain(secret);
    }
    // the connections list never returns token material
    expect(JSON.stringify(await connections())).not.toMatch(/toc-(access|refresh)/);
  });

  test('a wrong code at the callback → redirect with status=error; the state cannot be reused', async () => {
    const init = await h.json('POST', '/v1/erp-connector/oauth/initiate', { key: live.api_key, body: { provider: 'toconline', customer_reference: 'toc-bad', return_url: RETURN } });
    toc.challenge = new URL(init.body.authorize_url).searchParams.get('code_challenge')!;
    const cb = await h.call('GET', `/v1/erp-connector/oauth/callback?code=wrong&state=${encodeURIComponent(init.body.state)}`);
    expect(cb.status).toBe(302);
    expect(new URL(cb.headers.get('location')!).searchParams.get('status')).toBe('error');
    const again = await h.call('GET', `/v1/erp-connector/oauth/callback?code=good-code&state=${encodeURIComponent(init.body.state)}`);
    expect(again.status).toBe(400);
    expect((await connections()).find((c) => c.customer_reference === 'toc-bad')).toMatchObject({ status: 'error', status_reason: expect.stringMatching(/^the provider refused the authorization code/) });
  });

  test('a callback without a code, or with the provider\'s error, ends the link with its reason', async () => {
    for (const [ref, query, status, reason] of [
      ['toc-nocode', '', 'error', 'the redirect carried no authorization code'],
      ['toc-denied', '&error=access_denied', 'denied', 'the customer denied access at the provider'],
      ['toc-err', '&error=server_error', 'error', 'the provider answered error=server_error'],
    ] as const) {
      const init = await h.json('POST', '/v1/erp-connector/oauth/initiate', { key: live.api_key, body: { provider: 'toconline', customer_reference: ref, return_url: RETURN } });
      const cb = await h.call('GET', `/v1/erp-connector/oauth/callback?state=${encodeURIComponent(init.body.state)}${query}`);
      expect(cb.status).toBe(302);
      expect(new URL(cb.headers.get('location')!).searchParams.get('status')).toBe(status);
      expect((await connections()).find((c) => c.customer_reference === ref)).toMatchObject({ status, status_reason: reason });
    }
  });

  test('a callback once live OAuth is no longer configured (credentials removed since the initiate) ends the link with its reason, without calling the provider', async () => {
    const init = await h.json('POST', '/v1/erp-connector/oauth/initiate', { key: live.api_key, body: { provider: 'toconline', customer_reference: 'toc-unconfigured', return_url: RETURN } });
    expect(init.status).toBe(200);
    toc.challenge = new URL(init.body.authorize_url).searchParams.get('code_challenge')!;
    const tokenRequests = toc.tokenRequests.length;
    configureErp(h.ctx, { ...ERP_ENV, ERP_TOCONLINE_CLIENT_SECRET: '' }); // (a restart without the secret)
    try {
      const cb = await h.call('GET', `/v1/erp-connector/oauth/callback?code=good-code&state=${encodeURIComponent(init.body.state)}`);
      expect(cb.status).toBe(302);
      expect(Object.fromEntries(new URL(cb.headers.get('location')!).searchParams)).toEqual({ status: 'error', provider: 'toconline', customer_reference: 'toc-unconfigured' });
      expect((await connections()).find((c) => c.customer_reference === 'toc-unconfigured')).toMatchObject({
        status: 'error',
        status_reason: 'live OAuth for toconline is not configured on this deployment',
      });
      expect(toc.tokenRequests.length).toBe(tokenRequests); // the code was not exchanged
    } finally {
      configureErp(h.ctx, ERP_ENV);
    }
    // the state was used: configured again, the same redirect is refused (400 page), nothing connects
    expect((await h.call('GET', `/v1/erp-connector/oauth/callback?code=good-code&state=${encodeURIComponent(init.body.state)}`)).status).toBe(400);
    expect((await connections()).find((c) => c.customer_reference === 'toc-unconfigured').status).toBe('error');
  });

  test('sync pulls every page and maps JSON:API documents to invoices (cents, skipping drafts and quotes)', async () => {
    const before = toc.docRequests.length;
    const run = await syncAndWait({ provider: 'toconline', customer_reference: 'toc-1' });
    expect(run).toMatchObject({ status: 'succeeded', invoices_count: TOC_EXPECTED, transactions_count: 0, error_code: null });
    const pages = toc.docRequests.slice(before).filter((r) => r.status === 200).map((r) => r.page);
    expect(pages).toEqual(['1', '2', '3']);
    const inv = await h.json('GET', '/v1/erp/toconline/invoices?customer_reference=toc-1&limit=200', { key: live.api_key });
    const all = [...inv.body.data];
    expect(inv.body.next_cursor).not.toBeNull();
    const next = await h.json('GET', `/v1/erp/toconline/invoices?customer_reference=toc-1&limit=200&cursor=${inv.body.next_cursor}`, { key: live.api_key });
    all.push(...next.body.data);
    expect(all).toHaveLength(TOC_EXPECTED);
    const n1 = all.find((x) => x.provider_document_id === '1001');
    expect(n1).toMatchObject({
      document_type: 'FT',
      number: 'FT 2026/1',
      atcud: 'ABCD1234-1',
      issue_date: '2026-03-02',
      due_date: '2026-04-02',
      customer_nif: '500000000',
      customer_name: 'Cliente 1, Lda.',
      currency: 'EUR',
      net_total_cents: 1010,
      tax_total_cents: 232,
      gross_total_cents: 1242,
      status: 'N',
      updated_at: '2026-03-02T10:00:00.000Z',
    });
    expect(all.find((x) => x.provider_document_id === '1009').status).toBe('A');
    expect(all.find((x) => x.provider_document_id === '1010').document_type).toBe('NC');
    expect(all.some((x) => x.provider_document_id === '1007' || x.provider_document_id === '1008')).toBe(false);
    // a second incremental run walks the pages again but writes nothing new
    const again = await syncAndWait({ provider: 'toconline', customer_reference: 'toc-1' });
    expect(again).toMatchObject({ status: 'succeeded', invoices_count: 0 });
    const full = await syncAndWait({ provider: 'toconline', customer_reference: 'toc-1', mode: 'full' });
    expect(full.invoices_count).toBe(TOC_EXPECTED);
    const i = h.ctx.database.t.invoices;
    expect((await h.ctx.database.db.select({ id: i.id }).from(i).where(eq(i.tenantId, live.tenant_id))).length).toBe(TOC_EXPECTED);
  });

  test('an expired access token is refreshed before the call (clock advanced past expiry)', async () => {
    const refreshesBefore = toc.tokenRequests.filter((r) => r.form.grant_type === 'refresh_token').length;
    const oldAccess = h.ctx.secretBox.open((await connRow(connId)).accessTokenEnc!);
    h.clock.advance(3600_000);
    const run = await syncAndWait({ provider: 'toconline', customer_reference: 'toc-1', mode: 'full' });
    expect(run.status).toBe('succeeded');
    const refreshes = toc.tokenRequests.filter((r) => r.form.grant_type === 'refresh_token');
    expect(refreshes.length).toBe(refreshesBefore + 1);
    expect(refreshes.at(-1)!.authorization).toStartWith('Basic ');
    const row = await connRow(connId);
    const newAccess = h.ctx.secretBox.open(row.accessTokenEnc!);
    expect(newAccess).not.toBe(oldAccess);
    expect(row.tokenExpiresAt!.getTime()).toBe(h.clock.ms + 3600_000);
    expect(toc.docRequests.at(-1)!.auth).toBe(`Bearer ${newAccess}`);
  });

  test('concurrent refreshes of one connection call the token endpoint once (lock + re-read)', async () => {
    h.clock.advance(3600_000);
    const before = toc.tokenRequests.filter((r) => r.form.grant_type === 'refresh_token').length;
    const svc = erpService(h.ctx);
    const client = svc.settings.providers.toconline.client!;
    const tokens = await Promise.all([1, 2, 3, 4].map(() => svc.tokens.token(connId, client, { force: false })));
    expect(new Set(tokens).size).toBe(1);
    expect(toc.tokenRequests.filter((r) => r.form.grant_type === 'refresh_token').length).toBe(before + 1);
  });

  test('upstream 429 then success: backs off (Retry-After) and retries within the job', async () => {
    toc.mode.docs = '429-once';
    toc.served429 = 0;
    const run = await syncAndWait({ provider: 'toconline', customer_reference: 'toc-1', mode: 'full' });
    toc.mode.docs = 'ok';
    expect(run.status).toBe('succeeded');
    expect(run.invoices_count).toBe(TOC_EXPECTED);
    expect(toc.served429).toBe(1);
  });

  test('upstream 5xx that does not recover → run failed upstream_unavailable; the connection stays active', async () => {
    toc.mode.docs = '503-always';
    const before = toc.docRequests.length;
    const run = await syncAndWait({ provider: 'toconline', customer_reference: 'toc-1', mode: 'full' });
    toc.mode.docs = 'ok';
    expect(run).toMatchObject({ status: 'failed', error_code: 'upstream_unavailable' });
    expect(toc.docRequests.length - before).toBe(3); // ERP_HTTP_MAX_ATTEMPTS
    expect((await connRow(connId)).status).toBe('active');
    const e = h.ctx.database.t.events;
    const failed = (await h.ctx.database.db.select().from(e).where(eq(e.tenantId, live.tenant_id))).filter((x) => x.type === 'erp.sync.failed');
    expect(failed.at(-1)!.data).toMatchObject({ run_id: run.run_id, status: 'failed', error_code: 'upstream_unavailable', provider: 'toconline' });
  });

  test('upstream 401 + refused refresh → run failed relink_required, connection relink_required, next sync 409', async () => {
    toc.mode.docs = '401-always';
    toc.mode.refresh = 'fail';
    const run = await syncAndWait({ provider: 'toconline', customer_reference: 'toc-1', mode: 'full' });
    toc.mode.docs = 'ok';
    toc.mode.refresh = 'ok';
    expect(run).toMatchObject({ status: 'failed', error_code: 'relink_required' });
    const row = await connRow(connId);
    expect(row).toMatchObject({ status: 'relink_required', accessTokenEnc: null, refreshTokenEnc: null });
    const shown = (await h.json('GET', `/v1/erp-connector/connections/${connId}`, { key: live.api_key })).body;
    expect(shown).toMatchObject({ status: 'relink_required', status_reason: 'the provider refused the refresh token; the customer must link again' });
    const b = expectError(await h.json('POST', '/v1/erp-connector/sync', { key: live.api_key, body: { provider: 'toconline', customer_reference: 'toc-1' } }), 409, 'erp_not_connected');
    expect(b.message).toMatch(/linked again/);
  });

  test('relinking restores the connection; an expired token whose refresh is refused → relink_required', async () => {
    const { conn } = await linkToconline('toc-1');
    expect(conn.id).not.toBe(connId);
    expect(conn.status_reason).toBeNull();
    expect(await connRow(connId)).toMatchObject({ status: 'disconnected', statusReason: 'superseded by a newer link of the same customer' });
    h.clock.advance(3600_000);
    toc.mode.refresh = 'fail';
    const run = await syncAndWait({ provider: 'toconline', customer_reference: 'toc-1', mode: 'full' });
    toc.mode.refresh = 'ok';
    expect(run).toMatchObject({ status: 'failed', error_code: 'relink_required', invoices_count: 0 });
    expect((await connRow(conn.id)).status).toBe('relink_required');
  });

  test('401 even after a successful refresh → relink_required', async () => {
    const { conn } = await linkToconline('toc-2');
    toc.mode.docs = '401-always';
    const run = await syncAndWait({ provider: 'toconline', customer_reference: 'toc-2' });
    toc.mode.docs = 'ok';
    expect(run).toMatchObject({ status: 'failed', error_code: 'relink_required' });
    expect((await connRow(conn.id)).status).toBe('relink_required');
  });

  /** a TOConline sales document as the fake serves it (no updated_at unless given: the date stands in for it) */
  const tocDoc = (id: number, date: string, extra: Record<string, unknown> = {}) => ({
    id: String(id),
    type: 'commercial_sales_documents',
    attributes: { document_type: 'FT', document_no: `FT 2026/${id}`, status: 1, date, customer_tax_registration_number: '500000000', currency_iso_code: 'EUR', net_total: '100.00', tax_payable: '23.00', gross_total: '123.00', ...extra },
  });
  const serveBooks = (docs: unknown[]) => (toc.serve = (n, size) => ({ data: docs.slice((n - 1) * size, n * size), last: n * size >= docs.length }));
  const stored = async (ref: string) => {
    const inv = (await h.json('GET', `/v1/erp/toconline/invoices?customer_reference=${ref}&limit=200`, { key: live.api_key })).body.data as any[];
    return Object.fromEntries(inv.map((x) => [x.provider_document_id, x.status])) as Record<string, string>;
  };

  test('an incremental run takes what arrives late with an older date, and what changed without its updated_at moving; nothing unchanged is written again', async () => {
    await linkToconline('inc-1');
    try {
      const books = [tocDoc(100, '2026-11-20'), tocDoc(101, '2026-11-27')];
      serveBooks(books);
      expect(await syncAndWait({ provider: 'toconline', customer_reference: 'inc-1' })).toMatchObject({ status: 'succeeded', invoices_count: 2 });
      // a document with an older date appears (a higher id), one newer, and 101 is annulled (same date)
      books.push(tocDoc(102, '2026-11-26'), tocDoc(103, '2026-11-28'));
      books[1] = tocDoc(101, '2026-11-27', { status: 4 });
      const next = await syncAndWait({ provider: 'toconline', customer_reference: 'inc-1' });
      expect(next).toMatchObject({ status: 'succeeded', invoices_count: 3 });
      expect(await stored('inc-1')).toEqual({ '100': 'N', '101': 'A', '102': 'N', '103': 'N' });
      // a tie at the position's time with a smaller id, with real updated_at values
      books.push(tocDoc(99, '2026-11-28', { updated_at: '2026-11-28T00:00:00Z' }));
      expect(await syncAndWait({ provider: 'toconline', customer_reference: 'inc-1' })).toMatchObject({ status: 'succeeded', invoices_count: 1 });
      expect(Object.keys(await stored('inc-1')).sort()).toEqual(['100', '101', '102', '103', '99']);
      // nothing changed: nothing written
      expect(await syncAndWait({ provider: 'toconline', customer_reference: 'inc-1' })).toMatchObject({ status: 'succeeded', invoices_count: 0 });
    } finally {
      toc.serve = null;
    }
  });

  test('a document listed on two pages (pages shifting under the walk) is written and counted once', async () => {
    await linkToconline('dup-1');
    try {
      toc.serve = (n) => ({ data: n === 1 ? [tocDoc(50, '2026-11-20'), tocDoc(51, '2026-11-21')] : [tocDoc(51, '2026-11-21'), tocDoc(52, '2026-11-22')], last: n === 2 });
      const run = await syncAndWait({ provider: 'toconline', customer_reference: 'dup-1', mode: 'full' });
      expect(run).toMatchObject({ status: 'succeeded', invoices_count: 3 });
      expect(Object.keys(await stored('dup-1')).sort()).toEqual(['50', '51', '52']);
    } finally {
      toc.serve = null;
    }
  });

  test('a provider whose paging does not advance fails the run (upstream_rejected) after a few pages, not 100 000', async () => {
    await linkToconline('stuck-1');
    const before = toc.docRequests.length;
    try {
      toc.serve = () => ({ data: [tocDoc(7, '2026-11-20')], last: false });
      const run = await syncAndWait({ provider: 'toconline', customer_reference: 'stuck-1', mode: 'full' });
      expect(run).toMatchObject({ status: 'failed', error_code: 'upstream_rejected' });
      expect(run.error_message).toContain('paging does not advance');
      expect(toc.docRequests.length - before).toBeLessThan(10);
      expect(Object.keys(await stored('stuck-1'))).toEqual([]); // (the one row's batch was never flushed: nothing half-written)
    } finally {
      toc.serve = null;
    }
  });

  test('a listing past the page cap (paging that advances but never ends) fails the run (upstream_rejected) as stuck paging does; one within it succeeds', async () => {
    await linkToconline('cap-1');
    try {
      configureErp(h.ctx, ERP_ENV, { ...PAGING_LIMITS, maxPages: 3 });
      // the fake's books are 3 pages, the last without a next link: within the cap
      expect(await syncAndWait({ provider: 'toconline', customer_reference: 'cap-1', mode: 'full' })).toMatchObject({ status: 'succeeded', invoices_count: TOC_EXPECTED });
      // every page new documents and a next link: walked to the cap, then failed
      toc.serve = (n) => ({ data: [tocDoc(5000 + n, '2026-11-20')], last: false });
      const before = toc.docRequests.length;
      const run = await syncAndWait({ provider: 'toconline', customer_reference: 'cap-1', mode: 'full' });
      expect(run).toMatchObject({ status: 'failed', error_code: 'upstream_rejected', error_message: 'commercial_sales_documents: more than 3 pages (its paging does not end)' });
      expect(toc.docRequests.slice(before).map((r) => r.page)).toEqual(['1', '2', '3']);
      expect(Object.keys(await stored('cap-1')).some((id) => Number(id) >= 5000)).toBe(false); // (nothing of the endless walk was reported as the books)
    } finally {
      toc.serve = null;
      configureErp(h.ctx, ERP_ENV);
    }
  });

  test('an amount that is not one ("abc", "1.234,56", "1e3") fails the run naming the document, rather than storing a €0 invoice', async () => {
    await linkToconline('amt-1');
    try {
      for (const [value, id] of [['abc', 105], ['1.234,56', 106], ['1e3', 107]] as const) {
        serveBooks([tocDoc(104, '2026-11-20'), tocDoc(id, '2026-11-21', { gross_total: value })]);
        const run = await syncAndWait({ provider: 'toconline', customer_reference: 'amt-1', mode: 'full' });
        expect(run).toMatchObject({ status: 'failed', error_code: 'upstream_rejected' });
        expect(run.error_message).toContain(`document ${id}: gross_total "${value}" is not an amount`);
      }
      expect(Object.values(await stored('amt-1')).length).toBe(0);
    } finally {
      toc.serve = null;
    }
  });

  test('a disconnected connection cannot sync (409) and its run, if queued before, fails erp_not_connected', async () => {
    const { conn } = await linkToconline('toc-3');
    const del = await h.json('DELETE', `/v1/erp-connector/connections/${conn.id}`, { key: live.api_key });
    expect(del.body.status).toBe('disconnected');
    expectError(await h.json('POST', '/v1/erp-connector/sync', { key: live.api_key, body: { provider: 'toconline', customer_reference: 'toc-3' } }), 409, 'erp_not_connected');
    // a run that was queued while the connection was still active
    const r = h.ctx.database.t.syncRuns;
    const runId = crypto.randomUUID();
    await h.ctx.database.withTx((tx) =>
      tx.insert(r).values({
        id: runId, tenantId: live.tenant_id, env: 'live', provider: 'toconline', customerReference: 'toc-3', connectionId: conn.id, mode: 'incremental',
        status: 'queued', attempts: 0, invoicesCount: 0, transactionsCount: 0, createdAt: h.ctx.clock.now(),
      }),
    );
    await erpService(h.ctx).sync.handle({ runId });
    const run = (await h.json('GET', `/v1/erp-connector/sync/${runId}`, { key: live.api_key })).body;
    expect(run).toMatchObject({ status: 'failed', error_code: 'erp_not_connected', attempts: 1 });
  });

  test('pages fetched before the customer disconnects are not stored after it: the run fails erp_not_connected', async () => {
    const { conn } = await linkToconline('toc-4');
    toc.beforePage = async (page) => {
      if (page !== '3') return;
      toc.beforePage = null;
      expect((await h.json('DELETE', `/v1/erp-connector/connections/${conn.id}`, { key: live.api_key })).body.status).toBe('disconnected');
    };
    const run = await syncAndWait({ provider: 'toconline', customer_reference: 'toc-4' });
    expect(run).toMatchObject({ status: 'failed', error_code: 'erp_not_connected' });
    const i = h.ctx.database.t.invoices;
    expect(await h.ctx.database.db.select({ id: i.id }).from(i).where(and(eq(i.tenantId, live.tenant_id), eq(i.customerReference, 'toc-4')))).toEqual([]);
  });
});

describe('Moloni (grant endpoint, access_token in the query, company_id, qty/offset)', () => {
  let connId: string;

  test('authorize URL has no PKCE; the callback exchanges the code at the grant endpoint with the client credentials', async () => {
    const init = await h.json('POST', '/v1/erp-connector/oauth/initiate', { key: live.api_key, body: { provider: 'moloni', customer_reference: 'mol-1', return_url: RETURN } });
    expect(init.status).toBe(200);
    const auth = new URL(init.body.authorize_url);
    expect(auth.origin + auth.pathname).toBe(ERP_ENV.ERP_MOLONI_AUTHORIZE_URL);
    expect(Object.fromEntries(auth.searchParams)).toEqual({
      response_type: 'code',
      client_id: 'mol-client',
      redirect_uri: 'https://api.example.test/v1/erp-connector/oauth/callback',
      state: init.body.state,
    });
    const cb = await h.call('GET', `/v1/erp-connector/oauth/callback?code=mol-code&state=${encodeURIComponent(init.body.state)}`);
    expect(cb.status).toBe(302);
    expect(new URL(cb.headers.get('location')!).searchParams.get('status')).toBe('connected');
    const grant = mol.grants.at(-1)!;
    expect(grant).toMatchObject({ grant_type: 'authorization_code', client_id: 'mol-client', client_secret: 'mol-secret', code: 'mol-code', redirect_uri: 'https://api.example.test/v1/erp-connector/oauth/callback' });
    expect(grant.code_verifier).toBeUndefined();
    const conn = (await connections()).find((c) => c.customer_reference === 'mol-1');
    expect(conn.status).toBe('active');
    connId = conn.id;
    const raw = JSON.stringify(await connRow(connId));
    for (const tkn of mol.validAccess) expect(raw).not.toContain(tkn);
  });

  test('sync finds company_id, pages with qty/offset and maps totals (net_value is the total with VAT)', async () => {
    const run = await syncAndWait({ provider: 'moloni', customer_reference: 'mol-1' });
    expect(run).toMatchObject({ status: 'succeeded', invoices_count: MOL_EXPECTED, transactions_count: 0 });
    expect(mol.calls.filter((c) => c.path === '/v1/companies/getAll/')).toHaveLength(1);
    const docCalls = mol.calls.filter((c) => c.path === '/v1/documents/getAll/');
    expect(docCalls.map((c) => [c.body.offset, c.body.qty])).toEqual([
      [0, 50],
      [50, 50],
      [100, 50],
    ]);
    expect(docCalls.every((c) => c.body.company_id === 240211 && mol.validAccess.has(c.token!))).toBe(true);
    expect((await connRow(connId)).externalAccountId).toBe('240211');
    const list = await h.json('GET', '/v1/erp/moloni/invoices?limit=200', { key: live.api_key });
    expect(list.body.data).toHaveLength(MOL_EXPECTED);
    const d1 = list.body.data.find((x: any) => x.provider_document_id === '900001');
    expect(d1).toMatchObject({
      document_type: 'FT',
      number: 'FT 2026/1',
      issue_date: '2026-02-10',
      due_date: '2026-03-12',
      customer_nif: '510000002',
      customer_name: 'Entidade 1',
      gross_total_cents: 431,
      tax_total_cents: 81,
      net_total_cents: 350,
      status: 'N',
      updated_at: '2026-02-10T10:00:00.000Z',
    });
    expect(list.body.data.find((x: any) => x.provider_document_id === '900004')).toMatchObject({ document_type: 'FR', due_date: null });
    // the second sync reuses the stored company_id
    await syncAndWait({ provider: 'moloni', customer_reference: 'mol-1', mode: 'full' });
    expect(mol.calls.filter((c) => c.path === '/v1/companies/getAll/')).toHaveLength(1);
  });

  test('Moloni 401 invalid_token: one refresh via the grant endpoint, then relink_required', async () => {
    mol.mode.docs = '401-always';
    const grantsBefore = mol.grants.length;
    const run = await syncAndWait({ provider: 'moloni', customer_reference: 'mol-1', mode: 'full' });
    mol.mode.docs = 'ok';
    expect(run).toMatchObject({ status: 'failed', error_code: 'relink_required' });
    const refreshes = mol.grants.slice(grantsBefore);
    expect(refreshes).toHaveLength(1);
    expect(refreshes[0]).toMatchObject({ grant_type: 'refresh_token', client_id: 'mol-client', client_secret: 'mol-secret' });
    expect((await connRow(connId)).status).toBe('relink_required');
  });

  /** initiate → the provider's redirect back with a code → an active connection */
  async function linkMoloni(ref: string) {
    const init = await h.json('POST', '/v1/erp-connector/oauth/initiate', { key: live.api_key, body: { provider: 'moloni', customer_reference: ref, return_url: RETURN } });
    expect(init.status).toBe(200);
    const cb = await h.call('GET', `/v1/erp-connector/oauth/callback?code=mol-code&state=${encodeURIComponent(init.body.state)}`);
    expect(new URL(cb.headers.get('location')!).searchParams.get('status')).toBe('connected');
  }
  /** a Moloni document as the fake serves it (an FT of MOL_DOCS' shape) */
  const molDoc = (id: number, extra: Record<string, unknown> = {}) => ({ ...MOL_DOCS[0]!, document_id: id, number: id, ...extra });
  const storedMoloni = async (ref: string) => (await h.json('GET', `/v1/erp/moloni/invoices?customer_reference=${ref}&limit=200`, { key: live.api_key })).body.data as any[];

  test('an amount that is not one ("abc", "1.234,56", "1e3") fails the run naming the document, rather than storing a €0 invoice', async () => {
    await linkMoloni('mol-amt');
    try {
      for (const [field, value, id] of [['net_value', 'abc', 910001], ['net_value', '1.234,56', 910002], ['net_value', '1e3', 910003], ['taxes_value', 'abc', 910004]] as const) {
        mol.serve = (offset) => (offset ? [] : [molDoc(910000), molDoc(id, { [field]: value })]);
        const run = await syncAndWait({ provider: 'moloni', customer_reference: 'mol-amt', mode: 'full' });
        expect(run).toMatchObject({ status: 'failed', error_code: 'upstream_rejected' });
        expect(run.error_message).toContain(`document ${id}: ${field} "${value}" is not an amount`);
      }
      expect(await storedMoloni('mol-amt')).toEqual([]);
    } finally {
      mol.serve = null;
    }
  });

  test('a listing past the document cap (offsets that advance but never end) fails the run (upstream_rejected) as stuck paging does; one within it succeeds', async () => {
    await linkMoloni('mol-cap');
    try {
      configureErp(h.ctx, ERP_ENV, { ...PAGING_LIMITS, maxDocuments: 150 });
      // the fake's 120 documents: within the cap
      expect(await syncAndWait({ provider: 'moloni', customer_reference: 'mol-cap', mode: 'full' })).toMatchObject({ status: 'succeeded', invoices_count: MOL_EXPECTED });
      // every offset a full page of new documents: walked to the cap, then failed
      mol.serve = (offset, qty) => Array.from({ length: qty }, (_, i) => molDoc(920000 + offset + i));
      const before = mol.calls.length;
      const run = await syncAndWait({ provider: 'moloni', customer_reference: 'mol-cap', mode: 'full' });
      expect(run).toMatchObject({ status: 'failed', error_code: 'upstream_rejected', error_message: 'documents/getAll: more than 150 documents (its paging does not end)' });
      expect(mol.calls.slice(before).filter((c) => c.path === '/v1/documents/getAll/').map((c) => c.body.offset)).toEqual([0, 50, 100]);
      expect((await storedMoloni('mol-cap')).some((x) => Number(x.provider_document_id) >= 920000)).toBe(false);
    } finally {
      mol.serve = null;
      configureErp(h.ctx, ERP_ENV);
    }
  });
});
