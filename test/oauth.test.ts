/**
 * OAuth 2.0 client credentials (issue 23, spec §5.7): clients administered like keys, the token
 * endpoint driven by a real OAuth client library (oauth4webapi) with both client authentication
 * methods, RFC 6749 §5.2 errors with the §2.8 fields, tokens verified from outside against the JWKS
 * with jose, accepted wherever a key is (scopes, rate limit, usage, idempotency, tenants), refused
 * at once after the client is deleted or the tenant suspended, and signing keys rotated without
 * breaking tokens in flight.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import * as oauth from 'oauth4webapi';
import { createLocalJWKSet, decodeProtectedHeader, generateKeyPair, jwtVerify, SignJWT } from 'jose';
import { eq } from 'drizzle-orm';
import { dispatch } from '../src/app';
import { PUBLISH_AHEAD_MS } from '../src/features/oauth/tokens';
import { BLANK_NAMES, expectError, makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

let h: TestApp;
beforeAll(async () => {
  h = await makeApp({}, { workers: false });
});
afterAll(() => h.close());

const issuer = () => new URL(h.ctx.oauth!.issuer);
/** the library's HTTP goes to the application in process */
const viaApp = ((url: string, init: RequestInit) => dispatch(h.app, new Request(url, init))) as unknown as typeof fetch;
const libOptions = () => ({ [oauth.customFetch]: viaApp, [oauth.allowInsecureRequests]: true });

async function newClient(key: string, body: Record<string, unknown> = { name: 'backend', scopes: ['score', 'esg'] }) {
  const r = await h.json('POST', '/v1/admin/oauth-clients', { key, body });
  expect(r.status).toBe(201);
  return r.body as { client_id: string; client_secret: string; scopes: string[] };
}

async function tokenWithLibrary(clientId: string, secret: string, params: Record<string, string> = {}, method: 'basic' | 'post' = 'basic') {
  const as = await oauth.processDiscoveryResponse(issuer(), await oauth.discoveryRequest(issuer(), { algorithm: 'oauth2', ...libOptions() }));
  const client: oauth.Client = { client_id: clientId };
  const auth = method === 'basic' ? oauth.ClientSecretBasic(secret) : oauth.ClientSecretPost(secret);
  const res = await oauth.clientCredentialsGrantRequest(as, client, auth, new URLSearchParams(params), libOptions());
  return oauth.processClientCredentialsResponse(as, client, res);
}

const tokenRequest = (form: string, headers: Record<string, string> = {}) =>
  h.json('POST', '/v1/oauth/token', { rawBody: form, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } });
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

describe('the token endpoint, as an OAuth library uses it', () => {
  test('client credentials with HTTP Basic and with client_secret_post; the token works as a key, with the client\u2019s scopes and rate limit', async () => {
    const t = await h.tenant();
    const c = await newClient(t.api_key, { name: 'backend', scopes: ['score', 'esg'], rate_limit_per_minute: 321 });
    expect(c.client_id).toMatch(/^oc_[0-9a-f]{24}$/);
    expect(c.client_secret).toMatch(/^ocs_/);
    const viaBasic = await tokenWithLibrary(c.client_id, c.client_secret);
    expect(viaBasic).toMatchObject({ token_type: 'bearer', expires_in: 900, scope: 'score esg' });
    const viaPost = await tokenWithLibrary(c.client_id, c.client_secret, { scope: 'score' }, 'post');
    expect(viaPost.scope).toBe('score');

    const scored = await h.json('POST', '/v1/score', { key: viaBasic.access_token, body: { nif: '599000015' } });
    expect(scored.status).toBe(200);
    expect(scored.headers.get('x-ratelimit-limit')).toBe('321');
    // the narrower token cannot assess ESG, the full one can reach the route
    const narrow = await h.json('POST', '/v1/esg', { key: viaPost.access_token, body: {} });
    expectError(narrow, 403, 'insufficient_scope');
    // RFC 6750 §3.1: the scope it lacks, on the fast path's routes and on the others alike
    expect(narrow.headers.get('www-authenticate')).toBe('Bearer realm="api", error="insufficient_scope", error_description="This endpoint needs the \'esg\' scope (or \'*\').", scope="esg"');
    expect((await h.json('GET', '/v1/erp/demo/invoices', { key: viaPost.access_token })).headers.get('www-authenticate')).toBe('Bearer realm="api", error="insufficient_scope", error_description="This endpoint needs the \'erp\' scope (or \'*\').", scope="erp"');
    expect((await h.json('POST', '/v1/esg', { key: viaBasic.access_token, body: {} })).status).toBe(422);
    // usage is attributed to the client's principal
    await h.ctx.usage.flush();
    const { db, t: tb } = h.ctx.database;
    const [client] = await db.select().from(tb.oauthClients).where(eq(tb.oauthClients.id, c.client_id));
    const usage = await db.select().from(tb.usageRecords).where(eq(tb.usageRecords.tenantId, t.tenant_id));
    expect(usage.find((u) => u.meter === 'score')?.apiKeyId).toBe(client!.keyId);
    // Idempotency-Key works the same
    const body = { nif: '599000015', refresh: 'force_refresh' };
    const a = await h.json('POST', '/v1/score', { key: viaBasic.access_token, body, headers: { 'idempotency-key': 'oauth-1' } });
    const b = await h.json('POST', '/v1/score', { key: viaBasic.access_token, body, headers: { 'idempotency-key': 'oauth-1' } });
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.body.computed_at).toBe(a.body.computed_at);
  });

  test('a token issued with fewer scopes never gets, by an Idempotency-Key, what a broader token of its client got (a new * key), nor the other way round', async () => {
    const t = await h.tenant();
    const c = await newClient(t.api_key, { name: 'admin bot' }); // every scope of the caller: *
    const star = (await tokenWithLibrary(c.client_id, c.client_secret)).access_token;
    const narrow = (await tokenWithLibrary(c.client_id, c.client_secret, { scope: 'keys:manage' })).access_token;
    const headers = { 'idempotency-key': 'new-star-key' };
    const created = await h.json('POST', '/v1/admin/keys', { key: star, body: { name: 'all', scopes: ['*'] }, headers });
    expect(created.status).toBe(201);
    const replayed = await h.json('POST', '/v1/admin/keys', { key: narrow, body: { name: 'all', scopes: ['*'] }, headers });
    expectError(replayed, 403, 'insufficient_scope');
    expect(replayed.headers.get('idempotent-replayed')).toBeNull();
    expect(JSON.stringify(replayed.body)).not.toContain(created.body.api_key);
    // the narrow token's stored refusal is not the broad one's answer either
    const poison = { 'idempotency-key': 'narrow-first' };
    expectError(await h.json('POST', '/v1/admin/keys', { key: narrow, body: { name: 'p', scopes: ['*'] }, headers: poison }), 403, 'insufficient_scope');
    expect((await h.json('POST', '/v1/admin/keys', { key: star, body: { name: 'p', scopes: ['*'] }, headers: poison })).status).toBe(201);
    // another token of the same scopes is the same requester: its replay works
    const star2 = (await tokenWithLibrary(c.client_id, c.client_secret)).access_token;
    const again = await h.json('POST', '/v1/admin/keys', { key: star2, body: { name: 'all', scopes: ['*'] }, headers });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.api_key).toBe(created.body.api_key);
  });

  test('the token verified from outside against the JWKS: ES256, at+jwt, tenant, environment, client, scopes, 15 minutes', async () => {
    const t = await h.tenant();
    const c = await newClient(t.api_key);
    const tok = await tokenWithLibrary(c.client_id, c.client_secret);
    const jwks = (await h.json('GET', '/.well-known/jwks.json')).body;
    expect(jwks.keys.every((k: any) => k.kty === 'EC' && k.crv === 'P-256' && !('d' in k))).toBe(true);
    const { payload, protectedHeader } = await jwtVerify(tok.access_token, createLocalJWKSet(jwks), { issuer: issuer().href.replace(/\/$/, ''), audience: issuer().href.replace(/\/$/, ''), currentDate: h.clock.now() });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
    expect(payload).toMatchObject({ sub: c.client_id, tid: t.tenant_id, env: 'sandbox', scope: 'score esg' });
    expect(payload.exp! - payload.iat!).toBe(900);
  });

  test('RFC 6749 §3.2 parameters: an empty one is as if omitted, an unknown one ignored, a known one given twice refused; one Authorization header', async () => {
    const t = await h.tenant();
    const c = await newClient(t.api_key);
    const auth = { authorization: basic(c.client_id, c.client_secret) };
    // scope= (empty): the client's scopes, as without it
    const empty = await tokenRequest('grant_type=client_credentials&scope=', auth);
    expect(empty.status).toBe(200);
    expect(empty.body.scope).toBe('score esg');
    // empty client_secret / client_id beside Basic: not a second authentication method
    for (const form of ['grant_type=client_credentials&client_secret=', 'grant_type=client_credentials&client_id=&client_secret='])
      expect({ form, status: (await tokenRequest(form, auth)).status }).toEqual({ form, status: 200 });
    // client_secret_post with an empty scope and an unknown parameter given twice
    const post = await tokenRequest(`grant_type=client_credentials&client_id=${c.client_id}&client_secret=${c.client_secret}&scope=&foo=1&foo=2`);
    expect(post.status).toBe(200);
    expect(post.body.scope).toBe('score esg');
    // a known parameter given twice (both with values) is refused; with one of them empty it is not
    expect(expectError(await tokenRequest('grant_type=client_credentials&scope=score&scope=esg', auth), 400, 'invalid_request').error_description).toBe('The parameter scope is repeated.');
    expect((await tokenRequest('grant_type=client_credentials&scope=score&scope=', auth)).body.scope).toBe('score');
    // an empty grant_type is a missing one
    expect(expectError(await tokenRequest('grant_type=', auth), 400, 'invalid_request').error_description).toBe('grant_type is missing.');
    // two Authorization headers (joined by a comma), whatever their order or scheme: refused, no token
    const other = await newClient(t.api_key, { name: 'other', scopes: ['*'] });
    for (const authorization of [`${basic(c.client_id, c.client_secret)}, ${basic(other.client_id, other.client_secret)}`, `${basic(other.client_id, other.client_secret)}, Bearer x`]) {
      const r = await tokenRequest('grant_type=client_credentials', { authorization });
      expect(expectError(r, 400, 'invalid_request').error_description).toBe('Send one Authorization header: this request carries several.');
      expect(r.body.access_token).toBeUndefined();
    }
    // a query parameter given twice on the token endpoint (no key): 422 on it, as on every API route
    const twice = await h.json('POST', '/v1/oauth/token?a=1&a=2', { rawBody: 'grant_type=client_credentials', headers: { 'content-type': 'application/x-www-form-urlencoded', ...auth } });
    expect(expectError(twice, 422, 'validation_failed').fields).toEqual([{ path: 'query.a', message: 'is given more than once (every parameter takes one value)' }]);
    expect(twice.body.access_token).toBeUndefined();
    // Basic credentials with anything after them that is not base64: malformed, not read as the first part
    const malformed = expectError(await tokenRequest('grant_type=client_credentials', { authorization: `${basic(c.client_id, c.client_secret)} junk` }), 401, 'invalid_client');
    expect([malformed.message, malformed.error_description]).toEqual(['The Basic credentials are malformed.', 'The Basic credentials are malformed.']);
    // what the description quotes keeps to RFC 6749 §5.2's characters (a NUL, a backslash, an é: "?"; a quote: ')
    const quoted = expectError(await tokenRequest('grant_type=client_credentials&scope=score%00%22%5C%C3%A9', auth), 400, 'invalid_scope');
    expect(quoted.error_description).toBe("Unknown scope(s): score?'??.");
    expect(quoted.error_description).toMatch(/^[\x20\x21\x23-\x5b\x5d-\x7e]*$/);
    // Basic credentials sent to an API route: told where they belong
    const basicOnApi = expectError(await h.json('GET', '/v1/admin/keys', { headers: { authorization: basic(c.client_id, c.client_secret) } }), 401, 'missing_api_key');
    expect(basicOnApi.message).toContain('Basic credentials are for the OAuth token endpoint');
    // the server metadata claims no response type (there is no authorization endpoint)
    const meta = (await h.json('GET', '/.well-known/oauth-authorization-server')).body;
    expect(meta.response_types_supported).toEqual([]);
    expect(meta.grant_types_supported).toEqual(['client_credentials']);
  });

  test('RFC 6749 §5.2 errors with the §2.8 fields; invalid_client is 401 with a Basic challenge; no-store', async () => {
    const t = await h.tenant();
    const c = await newClient(t.api_key);
    const wrong = await tokenRequest('grant_type=client_credentials', { authorization: basic(c.client_id, 'ocs_wrong') });
    expect(expectError(wrong, 401, 'invalid_client')).toMatchObject({ error: 'invalid_client', error_description: expect.any(String) });
    expect(wrong.headers.get('www-authenticate')).toContain('Basic');
    expect(wrong.headers.get('cache-control')).toBe('no-store');
    const cases: [string, Record<string, string>, number, string][] = [
      ['grant_type=password&username=a&password=b', { authorization: basic(c.client_id, c.client_secret) }, 400, 'unsupported_grant_type'],
      ['scope=score', { authorization: basic(c.client_id, c.client_secret) }, 400, 'invalid_request'],
      ['grant_type=client_credentials&scope=gdpr:manage', { authorization: basic(c.client_id, c.client_secret) }, 400, 'invalid_scope'],
      ['grant_type=client_credentials&scope=teleport', { authorization: basic(c.client_id, c.client_secret) }, 400, 'invalid_scope'],
      [`grant_type=client_credentials&client_secret=${c.client_secret}`, { authorization: basic(c.client_id, c.client_secret) }, 400, 'invalid_request'],
      ['grant_type=client_credentials&grant_type=client_credentials', { authorization: basic(c.client_id, c.client_secret) }, 400, 'invalid_request'],
      ['grant_type=client_credentials', {}, 401, 'invalid_client'],
      [`grant_type=client_credentials&client_id=${c.client_id}`, {}, 401, 'invalid_client'],
      [`grant_type=client_credentials&client_id=oc_000000000000000000000000&client_secret=x`, {}, 401, 'invalid_client'],
    ];
    for (const [form, headers, status, code] of cases) {
      const r = await tokenRequest(form, headers);
      expect({ form, body: expectError(r, status, code).error }).toEqual({ form, body: code });
    }
    const json = await h.json('POST', '/v1/oauth/token', { body: { grant_type: 'client_credentials' } });
    expectError(json, 400, 'invalid_request');
    // the OpenAPI document says so: the token endpoint's 4xx bodies are OAuthError (§2.8 and RFC 6749 members)
    const doc = (await h.json('GET', '/openapi.json')).body;
    const responses = doc.paths['/v1/oauth/token'].post.responses;
    for (const status of ['400', '401', '429']) expect({ status, ref: responses[status].content['application/json'].schema.$ref }).toEqual({ status, ref: '#/components/schemas/OAuthError' });
    const oauthError = doc.components.schemas.OAuthError;
    const required = [...doc.components.schemas.Error.required, ...oauthError.allOf[1].required];
    expect(required).toEqual(expect.arrayContaining(['code', 'message', 'status', 'requestId', 'error', 'error_description']));
    for (const body of [json.body, expectError(wrong, 401, 'invalid_client')]) {
      for (const k of required) expect({ k, present: body[k] !== undefined }).toEqual({ k, present: true });
      expect(oauthError.allOf[1].properties.error.enum).toContain(body.error);
    }
    // a form declaring more than 4 KiB (the token endpoint needs no key): refused unread, however large
    // (a 200 MB one was read whole, then refused); the form routes of the consent and the portal alike
    for (const path of ['/v1/oauth/token', '/v1/erp-connector/oauth/consent', '/portal/confirming/accept']) {
      let pulled = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled += 65_536;
          if (pulled > 64 * 1024 * 1024) return controller.close();
          controller.enqueue(new Uint8Array(65_536).fill(97));
        },
      });
      const res = await dispatch(h.app, new Request(`http://localhost${path}`, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(64 * 1024 * 1024) }, duplex: 'half' } as RequestInit));
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect({ path, pulled: pulled <= 4 * 65_536 }).toEqual({ path, pulled: true });
      if (path === '/v1/oauth/token') expect(await res.json()).toMatchObject({ error: 'invalid_request', code: 'invalid_request' });
    }
    // an HTTP client that sends its API key on every call: the form is still the token request, and
    // the Bearer header is no client authentication (the body's client_secret_post is)
    const withKey = { authorization: `Bearer ${t.api_key}` };
    expect((await tokenRequest(`grant_type=client_credentials&client_id=${c.client_id}&client_secret=${c.client_secret}`, withKey)).status).toBe(200);
    expect(expectError(await tokenRequest('grant_type=client_credentials', withKey), 401, 'invalid_client').error).toBe('invalid_client');
    expect(expectError(await h.json('POST', '/v1/oauth/token', { key: t.api_key, body: { grant_type: 'client_credentials' } }), 400, 'invalid_request').error).toBe('invalid_request');
    // the library reads these errors too
    // the library reads the challenge (and the body behind it)
    const refused = await tokenWithLibrary(c.client_id, 'ocs_wrong').catch((e) => e);
    expect(refused).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    expect(refused.cause[0].scheme).toBe('basic');
    expect(await refused.response.json()).toMatchObject({ error: 'invalid_client', code: 'invalid_client', status: 401 });
  });
});

describe('clients, revocation, rotation', () => {
  test('deleting the client refuses its tokens at the next request; suspending the tenant too; keys are not affected', async () => {
    const t = await h.tenant();
    const c = await newClient(t.api_key);
    const tok = (await tokenWithLibrary(c.client_id, c.client_secret)).access_token;
    expect((await h.json('POST', '/v1/score', { key: tok, body: { nif: '599000015' } })).status).toBe(200);
    await h.ctx.tenants.setStatus(t.tenant_id, 'suspended');
    expectError(await h.json('POST', '/v1/score', { key: tok, body: { nif: '599000015' } }), 403, 'tenant_suspended');
    expectError(await tokenRequest('grant_type=client_credentials', { authorization: basic(c.client_id, c.client_secret) }), 400, 'unauthorized_client');
    await h.ctx.tenants.setStatus(t.tenant_id, 'active');
    const del = await h.json('DELETE', `/v1/admin/oauth-clients/${c.client_id}`, { key: t.api_key });
    expect(del.body).toMatchObject({ deleted: true, client_id: c.client_id });
    const refused = await h.json('POST', '/v1/score', { key: tok, body: { nif: '599000015' } });
    expectError(refused, 401, 'access_token_revoked');
    expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="api", error="invalid_token", error_description="The access token is not valid: its client was deleted."');
    expectError(await h.json('GET', '/v1/admin/usage', { key: tok }), 401, 'access_token_revoked');
    expectError(await tokenRequest('grant_type=client_credentials', { authorization: basic(c.client_id, c.client_secret) }), 401, 'invalid_client');
    expectError(await h.json('DELETE', `/v1/admin/oauth-clients/${c.client_id}`, { key: t.api_key }), 404, 'resource_not_found');
    expect((await h.json('POST', '/v1/score', { key: t.api_key, body: { nif: '599000015' } })).status).toBe(200);
  });

  test('the client list never shows a secret and is not the key list; audited; another tenant cannot manage it', async () => {
    const t = await h.tenant();
    const c = await newClient(t.api_key);
    const list = await h.json('GET', '/v1/admin/oauth-clients', { key: t.api_key });
    expect(list.body.clients).toEqual([expect.objectContaining({ client_id: c.client_id, scopes: ['score', 'esg'], secret_prefix: c.client_secret.slice(0, 8) })]);
    expect(JSON.stringify(list.body)).not.toContain(c.client_secret);
    const keys = (await h.json('GET', '/v1/admin/keys', { key: t.api_key })).body.keys;
    expect(keys.every((k: any) => k.key_prefix.startsWith('sk_'))).toBe(true);
    const { db, t: tb } = h.ctx.database;
    const audit = await db.select().from(tb.auditLog).where(eq(tb.auditLog.tenantId, t.tenant_id));
    expect(audit.map((a) => a.action)).toContain('oauth_client.created');
    const [row] = await db.select().from(tb.oauthClients).where(eq(tb.oauthClients.id, c.client_id));
    expect(JSON.stringify(row)).not.toContain(c.client_secret);
    expectError(await h.json('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: row!.keyId } }), 404, 'resource_not_found');
    const other = await h.tenant();
    expectError(await h.json('DELETE', `/v1/admin/oauth-clients/${c.client_id}`, { key: other.api_key }), 404, 'resource_not_found');
    // a client's token cannot read another tenant's data
    const tok = (await tokenWithLibrary(c.client_id, c.client_secret)).access_token;
    const theirs = await h.json('POST', '/v1/decision', { key: other.api_key, body: { nif: '599000015', context: { operation_type: 'factoring', amount_eur: 1000, expected_term_days: 30 } } });
    expectError(await h.json('GET', `/v1/decisions/${theirs.body.decision_id}`, { key: tok }), 404, 'resource_not_found');
  });

  test('scopes within the caller\u2019s; environment; errors', async () => {
    const t = await h.tenant();
    const narrow = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', name: 'n', scopes: ['keys:manage', 'score'] });
    expectError(await h.json('POST', '/v1/admin/oauth-clients', { key: narrow.api_key, body: { name: 'x', scopes: ['esg'] } }), 403, 'insufficient_scope');
    expectError(await h.json('POST', '/v1/admin/oauth-clients', { key: t.api_key, body: { name: 'x', env: 'live' } }), 403, 'cross_environment_forbidden');
    expectError(await h.json('POST', '/v1/admin/oauth-clients', { key: t.api_key, body: { scopes: ['score'] } }), 422, 'validation_failed');
    const scoreOnly = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', name: 's', scopes: ['score'] });
    expectError(await h.json('GET', '/v1/admin/oauth-clients', { key: scoreOnly.api_key }), 403, 'insufficient_scope');
  });

  test('at most 20 OAuth clients per environment, as keys', async () => {
    const t = await h.tenant();
    for (let i = 0; i < 20; i++) await newClient(t.api_key, { name: `c${i}`, scopes: ['score'] });
    expectError(await h.json('POST', '/v1/admin/oauth-clients', { key: t.api_key, body: { name: 'one too many', scopes: ['score'] } }), 409, 'too_many_active_keys');
    const first = (await h.json('GET', '/v1/admin/oauth-clients', { key: t.api_key })).body.clients[0];
    expect((await h.json('DELETE', `/v1/admin/oauth-clients/${first.client_id}`, { key: t.api_key })).status).toBe(200);
    await newClient(t.api_key, { name: 'after a delete', scopes: ['score'] });
  });

  test('a limited key’s client inherits its limit; a key rotates or deletes only clients within its own scopes and limit', async () => {
    const t = await h.tenant();
    const narrow = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', name: 'n', scopes: ['keys:manage', 'score'], rateLimitPerMinute: 100 });
    const own = await h.json('POST', '/v1/admin/oauth-clients', { key: narrow.api_key, body: { name: 'mine', scopes: ['score'] } });
    expect(own.body).toMatchObject({ scopes: ['score'], rate_limit_per_minute: 100 });
    const broad = await newClient(t.api_key, { name: 'broad', scopes: ['score', 'esg'] });
    const fast = await newClient(t.api_key, { name: 'fast', scopes: ['score'], rate_limit_per_minute: 500 });
    expect(expectError(await h.json('POST', `/v1/admin/oauth-clients/${broad.client_id}/rotate-secret`, { key: narrow.api_key, body: {} }), 403, 'insufficient_scope').message).toContain('esg');
    expectError(await h.json('DELETE', `/v1/admin/oauth-clients/${broad.client_id}`, { key: narrow.api_key }), 403, 'insufficient_scope');
    expectError(await h.json('POST', `/v1/admin/oauth-clients/${fast.client_id}/rotate-secret`, { key: narrow.api_key, body: {} }), 403, 'insufficient_scope');
    expect((await h.json('DELETE', `/v1/admin/oauth-clients/${fast.client_id}`, { key: narrow.api_key })).status).toBe(200);
    expect((await h.json('POST', `/v1/admin/oauth-clients/${own.body.client_id}/rotate-secret`, { key: narrow.api_key, body: {} })).status).toBe(200);
    // the broad client still works with its secret
    expect((await tokenWithLibrary(broad.client_id, broad.client_secret)).access_token).toBeString();
  });

  test('secret rotation: the old secret works for its grace, then not; tokens already issued keep working', async () => {
    const t = await h.tenant();
    const c = await newClient(t.api_key);
    const before = (await tokenWithLibrary(c.client_id, c.client_secret)).access_token;
    const rotated = await h.json('POST', `/v1/admin/oauth-clients/${c.client_id}/rotate-secret`, { key: t.api_key, body: { grace_hours: 1 } });
    expect(rotated.body.client_secret).not.toBe(c.client_secret);
    expect((await tokenWithLibrary(c.client_id, c.client_secret)).access_token).toBeString();
    expect((await tokenWithLibrary(c.client_id, rotated.body.client_secret)).access_token).toBeString();
    const now = await h.json('POST', `/v1/admin/oauth-clients/${c.client_id}/rotate-secret`, { key: t.api_key, body: { grace_hours: 0 } });
    expect(await tokenWithLibrary(c.client_id, rotated.body.client_secret).catch((e) => e.response?.status)).toBe(401);
    expect((await tokenWithLibrary(c.client_id, now.body.client_secret)).access_token).toBeString();
    expect((await h.json('POST', '/v1/score', { key: before, body: { nif: '599000015' } })).status).toBe(200);
  });

  test('signing keys rotate without breaking tokens in flight; an expired token is refused', async () => {
    const t = await h.tenant();
    const c = await newClient(t.api_key);
    const old = (await tokenWithLibrary(c.client_id, c.client_secret)).access_token;
    const oldKid = decodeProtectedHeader(old).kid;
    const newKid = await h.ctx.oauth!.rotate();
    expect(newKid).not.toBe(oldKid);
    // the new key is published at once, and signs only once a verifier's cached JWKS (max-age 300 s) holds it
    const kids = async () => (await h.json('GET', '/.well-known/jwks.json')).body.keys.map((k: any) => k.kid);
    expect(await kids()).toEqual(expect.arrayContaining([oldKid, newKid]));
    expect(decodeProtectedHeader((await tokenWithLibrary(c.client_id, c.client_secret)).access_token).kid).toBe(oldKid);
    h.clock.advance(PUBLISH_AHEAD_MS + 1000);
    const fresh = (await tokenWithLibrary(c.client_id, c.client_secret)).access_token;
    expect(decodeProtectedHeader(fresh).kid).toBe(newKid);
    expect(await kids()).toEqual(expect.arrayContaining([oldKid, newKid])); // retired, still published for a token lifetime
    expect((await h.json('POST', '/v1/score', { key: old, body: { nif: '599000015' } })).status).toBe(200);
    h.clock.advance(5.5 * 60_000); // past the old token's 15 minutes; its key still published
    expect(await kids()).toContain(oldKid);
    expectError(await h.json('POST', '/v1/score', { key: old, body: { nif: '599000015' } }), 401, 'access_token_expired');
    h.clock.advance(11 * 60_000); // its key withdrawn too: still told it expired
    const expired = await h.json('POST', '/v1/score', { key: old, body: { nif: '599000015' } });
    expectError(expired, 401, 'access_token_expired');
    expect(expired.headers.get('www-authenticate')).toBe('Bearer realm="api", error="invalid_token", error_description="The access token is not valid: expired; request a new one."');
    expectError(await h.json('GET', '/v1/admin/keys', { key: old }), 401, 'access_token_expired');
    expectError(await h.json('POST', '/v1/score', { key: `${fresh.slice(0, -4)}AAAA`, body: { nif: '599000015' } }), 401, 'invalid_api_key');
    // the old key's tokens have all expired: it is withdrawn from the JWKS
    expect(await kids()).not.toContain(oldKid);
  });
});

describe('a token verified once', () => {
  test('is not verified again on each request, yet a withdrawn signing key or its expiry refuses it at the next request; a token with fewer scopes is its own', async () => {
    const t = await h.tenant();
    const c = await newClient(t.api_key);
    const tok = (await tokenWithLibrary(c.client_id, c.client_secret)).access_token;
    const kid = decodeProtectedHeader(tok).kid!;
    // its signature checked on its first use only; the principal it gives the same object each time
    const tokens = h.ctx.oauth! as unknown as { verifySignature: (...a: unknown[]) => Promise<unknown> };
    const verifySignature = tokens.verifySignature;
    let verified = 0;
    tokens.verifySignature = function (this: unknown, ...a: unknown[]) {
      verified++;
      return verifySignature.apply(this, a);
    };
    try {
      for (let i = 0; i < 3; i++) expect((await h.json('POST', '/v1/score', { key: tok, body: { nif: '599000015' } })).status).toBe(200);
      expect(verified).toBe(1);
      const [a, b] = [await h.ctx.oauth!.verify(tok), await h.ctx.oauth!.verify(tok)];
      expect(verified).toBe(1);
      // (SQLite: the principal row is the cached object, so is what the token makes of it; PostgreSQL
      // reads the row on every request, as a token's revocation by another process must be seen)
      if (h.ctx.database.dialect === 'sqlite') expect((a as { key: object }).key).toBe((b as { key: object }).key);
      else expect((a as { key: object }).key).toEqual((b as { key: object }).key);
    } finally {
      tokens.verifySignature = verifySignature;
    }
    // another token of the client, with fewer scopes, is its own: score only
    const narrow = (await tokenWithLibrary(c.client_id, c.client_secret, { scope: 'score' })).access_token;
    expect((await h.json('POST', '/v1/score', { key: narrow, body: { nif: '599000015' } })).status).toBe(200);
    expectError(await h.json('POST', '/v1/esg', { key: narrow, body: { nif: '599000015', sector: 'C', answers: {} } }), 403, 'insufficient_scope');
    // its signing key taken away (as withdrawn): once the keys are read again, the token is refused within its lifetime
    const keys = h.ctx.database.t.oauthSigningKeys;
    await h.ctx.database.db.delete(keys).where(eq(keys.kid, kid));
    h.clock.advance(61_000);
    const refused = await h.json('POST', '/v1/score', { key: tok, body: { nif: '599000015' } });
    expectError(refused, 401, 'invalid_api_key');
    expect(refused.body.message).toBe('The access token is not valid: signed with an unknown or withdrawn key.');
    expectError(await h.json('POST', '/v1/score', { key: narrow, body: { nif: '599000015' } }), 401, 'invalid_api_key');
    // a new token (a new key) works, then expires while remembered
    const next = (await tokenWithLibrary(c.client_id, c.client_secret)).access_token;
    expect((await h.json('POST', '/v1/score', { key: next, body: { nif: '599000015' } })).status).toBe(200);
    h.clock.advance(15 * 60_000 + 6_000);
    expectError(await h.json('POST', '/v1/score', { key: next, body: { nif: '599000015' } }), 401, 'access_token_expired');
  });
});

describe('the token endpoint\u2019s budgets', () => {
  test('failed requests spend their address\u2019s anonymous budget (then 429 with the RFC 6749 members); an authenticated client spends its own and is never refused for others\u2019 failures', async () => {
    const app = await makeApp({ ANON_RATE_LIMIT_PER_MINUTE: '3' }, { workers: false });
    try {
      const t = await app.tenant();
      const created = await app.json('POST', '/v1/admin/oauth-clients', { key: t.api_key, body: { name: 'backend', scopes: ['score'], rate_limit_per_minute: 4 } });
      expect(created.status).toBe(201);
      const { client_id, client_secret } = created.body;
      const form = (f: string, headers: Record<string, string> = {}) => app.json('POST', '/v1/oauth/token', { rawBody: f, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } });
      // one address's failures, past its 3 a minute: 429, worded for OAuth libraries too
      const failures = [];
      for (let i = 0; i < 4; i++) failures.push(await form(`grant_type=client_credentials&client_id=${client_id}&client_secret=wrong`));
      expect(failures.map((r) => r.status)).toEqual([401, 401, 401, 429]);
      const limited = expectError(failures[3]!, 429, 'rate_limited');
      expect(limited.error).toBe('rate_limited');
      expect(typeof limited.error_description).toBe('string');
      expect(failures[3]!.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(failures[3]!.headers.get('cache-control')).toBe('no-store');
      // the good client, from the same address: its own budget of 4 a minute
      const good = [];
      for (let i = 0; i < 5; i++) good.push(await form('grant_type=client_credentials', { authorization: basic(client_id, client_secret) }));
      expect(good.map((r) => r.status)).toEqual([200, 200, 200, 200, 429]);
      expect(good[0]!.headers.get('x-ratelimit-limit')).toBe('4');
      expect(expectError(good[4]!, 429, 'rate_limited').error).toBe('rate_limited');
    } finally {
      await app.close();
    }
  });
});

describe('the audit log of what a token did', () => {
  test('names the OAuth client (actor oauth_client, actor_client_id), not only its principal key', async () => {
    const t = await h.tenant();
    const c = await newClient(t.api_key, { name: 'provisioner', scopes: ['keys:manage', 'score'] });
    const { access_token } = await tokenWithLibrary(c.client_id, c.client_secret);
    const made = await h.json('POST', '/v1/admin/keys', { key: access_token, body: { name: 'made by a token', scopes: ['score'] } });
    expect(made.status).toBe(201);
    await h.json('POST', '/v1/admin/keys', { key: t.api_key, body: { name: 'made by a key', scopes: ['score'] } });
    const log = (await h.json('GET', '/v1/admin/audit-log?action=api_key.created', { key: t.api_key })).body.data;
    const byToken = log.find((r: any) => r.target === made.body.api_key_id);
    expect(byToken).toMatchObject({ actor: 'oauth_client', actor_client_id: c.client_id });
    expect(typeof byToken.actor_key_id).toBe('string');
    const byKey = log.find((r: any) => r.details?.name === 'made by a key' || (r.target !== made.body.api_key_id && r.actor === 'key'));
    expect(byKey).toMatchObject({ actor: 'key', actor_client_id: null });
  });
});

describe('the signing keys on a new service', () => {
  test('the JWKS is never empty: asked before any token, it publishes the key the first token is signed with', async () => {
    const app = await makeApp({}, { workers: false });
    try {
      const jwks = await app.json('GET', '/.well-known/jwks.json');
      expect(jwks.headers.get('cache-control')).toBe('public, max-age=300');
      expect(jwks.body.keys).toHaveLength(1);
      const t = await app.tenant();
      const created = await app.json('POST', '/v1/admin/oauth-clients', { key: t.api_key, body: { name: 'backend', scopes: ['score'] } });
      const tok = await app.json('POST', '/v1/oauth/token', { rawBody: 'grant_type=client_credentials', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(created.body.client_id, created.body.client_secret) } });
      expect(decodeProtectedHeader(tok.body.access_token).kid).toBe(jwks.body.keys[0].kid);
      // a successor is made ahead of the rotation and signs only once published for PUBLISH_AHEAD_MS
      app.clock.advance(30 * 86_400_000 - PUBLISH_AHEAD_MS + 1000);
      const issue = async () => decodeProtectedHeader((await app.json('POST', '/v1/oauth/token', { rawBody: 'grant_type=client_credentials', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(created.body.client_id, created.body.client_secret) } })).body.access_token).kid;
      // twenty token requests of one moment make one successor, not twenty
      expect(new Set(await Promise.all(Array.from({ length: 20 }, issue)))).toEqual(new Set([jwks.body.keys[0].kid]));
      const published = (await app.json('GET', '/.well-known/jwks.json')).body.keys.map((k: any) => k.kid);
      expect(published).toHaveLength(2);
      app.clock.advance(PUBLISH_AHEAD_MS);
      const next = await issue();
      expect(next).not.toBe(jwks.body.keys[0].kid);
      expect(published).toContain(next);
      // a token of a key this service does not know, its exp passed: "expired" only if it names this issuer
      const { privateKey } = await generateKeyPair('ES256');
      const forged = (iss: string) =>
        new SignJWT({ scope: 'score', tid: t.tenant_id, env: 'sandbox' }).setProtectedHeader({ alg: 'ES256', kid: 'k_00000000000000000000', typ: 'at+jwt' }).setIssuer(iss).setAudience(iss).setSubject(created.body.client_id).setIssuedAt(1).setExpirationTime(2).sign(privateKey);
      expectError(await app.json('POST', '/v1/score', { key: await forged(app.ctx.oauth!.issuer), body: { nif: '599000015' } }), 401, 'access_token_expired');
      expectError(await app.json('POST', '/v1/score', { key: await forged('https://another.example'), body: { nif: '599000015' } }), 401, 'invalid_api_key');
    } finally {
      await app.close();
    }
  });
});

describe('what an integrator reuses between keys and clients', () => {
  test('usage by key names the OAuth client (client_id) whose tokens made it; an API key\u2019s lines have client_id null', async () => {
    const t = await h.tenant();
    const a = await newClient(t.api_key, { name: 'a', scopes: ['score'] });
    const b = await newClient(t.api_key, { name: 'b', scopes: ['score'] });
    for (const [c, n] of [[a, 2], [b, 1]] as const) {
      const tok = (await tokenWithLibrary(c.client_id, c.client_secret)).access_token;
      for (let i = 0; i < n; i++) expect((await h.json('POST', '/v1/score', { key: tok, body: { nif: '599000015' } })).status).toBe(200);
    }
    expect((await h.json('POST', '/v1/score', { key: t.api_key, body: { nif: '599000015' } })).status).toBe(200);
    await h.ctx.usage.flush();
    const totals = (await h.json('GET', '/v1/admin/usage?group_by=key', { key: t.api_key })).body.totals as { client_id: string | null; quantity: number; api_key_id: string }[];
    const byClient = Object.fromEntries(totals.map((r) => [r.client_id ?? r.api_key_id, r.quantity]));
    expect(byClient).toEqual({ [a.client_id]: 2, [b.client_id]: 1, [t.api_key_id]: 1 });
    // per meter (the default): no key columns
    expect((await h.json('GET', '/v1/admin/usage', { key: t.api_key })).body.totals[0].client_id).toBeUndefined();
  });

  test('credential requests refuse fields they do not have: the other rotation\u2019s grace field, a misspelt scopes; blank names', async () => {
    const t = await h.tenant();
    const c = await newClient(t.api_key);
    const fieldsOf = (r: Awaited<ReturnType<typeof h.json>>) => expectError(r, 422, 'validation_failed').fields;
    // the key rotation's field on a client's secret: the old secret is not left working for 24 h
    expect(fieldsOf(await h.json('POST', `/v1/admin/oauth-clients/${c.client_id}/rotate-secret`, { key: t.api_key, body: { grace_days: 0 } }))).toEqual([{ path: 'grace_days', message: 'is not a field of this request' }]);
    expect(await tokenWithLibrary(c.client_id, c.client_secret).then((r) => typeof r.access_token)).toBe('string'); // nothing rotated
    expect(fieldsOf(await h.json('POST', '/v1/admin/keys/rotate', { key: t.api_key, body: { grace_hours: 0 } }))).toEqual([{ path: 'grace_hours', message: 'is not a field of this request' }]);
    expect((await h.json('GET', '/v1/admin/keys', { key: t.api_key })).body.keys).toHaveLength(1); // nothing issued
    // `scope` for `scopes` would have granted every scope of the caller
    expect(fieldsOf(await h.json('POST', '/v1/admin/keys', { key: t.api_key, body: { name: 'batch', scope: ['score'] } }))).toEqual([{ path: 'scope', message: 'is not a field of this request' }]);
    expect(fieldsOf(await h.json('POST', '/v1/admin/oauth-clients', { key: t.api_key, body: { name: 'batch', scope: ['score'] } }))).toEqual([{ path: 'scope', message: 'is not a field of this request' }]);
    expect(fieldsOf(await h.json('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { api_key_id: t.api_key_id, reasn: 'x' } }))).toEqual([{ path: 'reasn', message: 'is not a field of this request' }]);
    // a name of spaces names nothing
    for (const path of ['/v1/admin/keys', '/v1/admin/oauth-clients']) expect(fieldsOf(await h.json('POST', path, { key: t.api_key, body: { name: '   ' } })).map((f: { path: string }) => f.path)).toEqual(['name']);
    expect((await h.json('GET', '/v1/admin/oauth-clients', { key: t.api_key })).body.clients).toHaveLength(1);
  });

  test('a client with a blank name (empty, spaces, or invisible characters only) is 422 validation_failed on name; no client is made', async () => {
    const t = await h.tenant();
    const clients = async () => (await h.json('GET', '/v1/admin/oauth-clients', { key: t.api_key })).body.clients.length;
    for (const [name, message] of BLANK_NAMES) {
      const r = await h.json('POST', '/v1/admin/oauth-clients', { key: t.api_key, body: { name, scopes: ['score'] } });
      const b = expectError(r, 422, 'validation_failed');
      expect([JSON.stringify(name), b.message, b.fields]).toEqual([JSON.stringify(name), 'The request is invalid.', [{ path: 'name', message }]]);
    }
    expect(await clients()).toBe(0);
    // a visible character among them is a name
    expect((await h.json('POST', '/v1/admin/oauth-clients', { key: t.api_key, body: { name: ' \u200bb ', scopes: ['score'] } })).status).toBe(201);
    expect(await clients()).toBe(1);
  });

  test('a token rotating "its own key" is told to name one (422 api_key_id), not a 404 on its principal\u2019s id', async () => {
    const t = await h.tenant();
    const c = await newClient(t.api_key, { name: 'admin', scopes: ['keys:manage'] });
    const tok = (await tokenWithLibrary(c.client_id, c.client_secret)).access_token;
    const r = await h.json('POST', '/v1/admin/keys/rotate', { key: tok, body: {} });
    expect(expectError(r, 422, 'validation_failed').fields).toEqual([{ path: 'api_key_id', message: 'is required with an OAuth access token (it is not an API key)' }]);
    // a key within the client's own scopes, named: rotated
    const narrow = await h.json('POST', '/v1/admin/keys', { key: t.api_key, body: { name: 'narrow', scopes: ['keys:manage'] } });
    const named = await h.json('POST', '/v1/admin/keys/rotate', { key: tok, body: { api_key_id: narrow.body.api_key_id, grace_days: 0 } });
    expect(named.status).toBe(201);
    expect(named.body.rotated_from).toBe(narrow.body.api_key_id);
  });

  test('audited like keys (the rate limit too); a live key lists both environments\u2019 clients, a sandbox key its own', async () => {
    const t = await h.tenant();
    const c = await newClient(t.api_key, { name: 'limited', scopes: ['score'], rate_limit_per_minute: 50 });
    const { db, t: tb } = h.ctx.database;
    const [entry] = await db.select().from(tb.auditLog).where(eq(tb.auditLog.target, c.client_id));
    expect(entry!.details).toMatchObject({ name: 'limited', scopes: ['score'], rate_limit_per_minute: 50 });
    const live = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'live', name: 'prod admin', scopes: ['keys:manage'] });
    const liveClient = await newClient(live.api_key, { name: 'prod', scopes: ['keys:manage'] });
    const ids = async (key: string) => (await h.json('GET', '/v1/admin/oauth-clients', { key })).body.clients.map((x: { client_id: string; env: string }) => `${x.env}:${x.client_id}`).sort();
    expect(await ids(live.api_key)).toEqual([`live:${liveClient.client_id}`, `sandbox:${c.client_id}`].sort());
    expect(await ids(t.api_key)).toEqual([`sandbox:${c.client_id}`]);
    // listing is not managing: a live key still cannot rotate a sandbox client
    expectError(await h.json('POST', `/v1/admin/oauth-clients/${c.client_id}/rotate-secret`, { key: live.api_key, body: {} }), 403, 'cross_environment_forbidden');
  });
});
