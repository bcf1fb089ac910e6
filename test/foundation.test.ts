import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { eq } from 'drizzle-orm';
import { expectError, makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

let h: TestApp;
beforeAll(async () => {
  h = await makeApp();
});
afterAll(() => h.close());

describe('service pages', () => {
  test('healthz and readyz answer without a key', async () => {
    expect((await h.json('GET', '/healthz')).body).toEqual({ status: 'ok' });
    const r = await h.json('GET', '/readyz');
    expect(r.status).toBe(200);
    expect(r.body.checks.database).toBe('ok');
  });
  test('error catalogue lists every code as HTML anchors and JSON', async () => {
    const htmlRes = await h.call('GET', '/docs/errors');
    const page = await htmlRes.text();
    expect(page).toContain('id="invalid_api_key"');
    const j = await h.json('GET', '/docs/errors', { headers: { accept: 'application/json' } });
    expect(j.body.errors.find((e: any) => e.code === 'validation_failed').status).toBe(422);
  });
  test('docs UI is served from local assets', async () => {
    const page = await (await h.call('GET', '/docs')).text();
    expect(page).toContain('/docs/assets/swagger-ui-bundle.js');
    expect(page).not.toMatch(/https?:\/\/(cdn|unpkg|jsdelivr)/);
    const js = await h.call('GET', '/docs/assets/swagger-ui-bundle.js');
    expect(js.status).toBe(200);
  });
});

describe('authentication (§5)', () => {
  test('missing header → 401 missing_api_key', async () => {
    expectError(await h.json('GET', '/v1/admin/keys'), 401, 'missing_api_key');
  });
  test('malformed header → 401 missing_api_key', async () => {
    expectError(await h.json('GET', '/v1/admin/keys', { headers: { authorization: 'Basic abc' } }), 401, 'missing_api_key');
  });
  test('unknown and malformed keys → 401 invalid_api_key', async () => {
    expectError(await h.json('GET', '/v1/admin/keys', { key: 'sk_test_' + '0'.repeat(28) }), 401, 'invalid_api_key');
    expectError(await h.json('GET', '/v1/admin/keys', { key: 'sk_test_XYZ' }), 401, 'invalid_api_key');
  });
  test('revoked → 401 api_key_revoked; expired → 401 api_key_expired', async () => {
    const t = await h.tenant();
    const k2 = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox' });
    const { apiKeys } = h.ctx.database.t;
    await h.ctx.database.withTx((tx) => tx.update(apiKeys).set({ revokedAt: h.clock.now() }).where(eq(apiKeys.id, k2.api_key_id)));
    expectError(await h.json('GET', '/v1/admin/keys', { key: k2.api_key }), 401, 'api_key_revoked');
    const k3 = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox' });
    await h.ctx.database.withTx((tx) => tx.update(apiKeys).set({ expiresAt: h.clock.now() }).where(eq(apiKeys.id, k3.api_key_id)));
    expectError(await h.json('GET', '/v1/admin/keys', { key: k3.api_key }), 401, 'api_key_expired');
  });
  test('suspended tenant → 403 tenant_suspended, resumed → 200; terminated → 401 invalid_api_key', async () => {
    const t = await h.tenant();
    await h.ctx.tenants.setStatus(t.tenant_id, 'suspended');
    expectError(await h.json('GET', '/v1/admin/keys', { key: t.api_key }), 403, 'tenant_suspended');
    await h.ctx.tenants.setStatus(t.tenant_id, 'active');
    expect((await h.json('GET', '/v1/admin/keys', { key: t.api_key })).status).toBe(200);
    const { tenants } = h.ctx.database.t;
    await h.ctx.database.withTx((tx) => tx.update(tenants).set({ status: 'terminated' }).where(eq(tenants.id, t.tenant_id)));
    expectError(await h.json('GET', '/v1/admin/keys', { key: t.api_key }), 401, 'invalid_api_key');
  });
  test('key without the scope → 403 insufficient_scope (before body validation)', async () => {
    const t = await h.tenant({ name: 'scoped', scopes: ['score'] });
    expectError(await h.json('GET', '/v1/admin/keys', { key: t.api_key }), 403, 'insufficient_scope');
    expectError(await h.json('POST', '/v1/admin/keys/revoke', { key: t.api_key, body: { nonsense: 1 } }), 403, 'insufficient_scope');
    const ok = await h.tenant({ name: 'keys-only', scopes: ['keys:manage'] });
    expect((await h.json('GET', '/v1/admin/keys', { key: ok.api_key })).status).toBe(200);
  });
  test('unauthenticated callers cannot probe schemas: 401 before 422', async () => {
    expectError(await h.json('POST', '/v1/admin/keys/revoke', { body: { api_key_id: 'x' } }), 401, 'missing_api_key');
  });
  test('keys are sk_test_/sk_live_ + 28 lowercase hex, stored only as a hash', async () => {
    const t = await h.tenant({ name: 'live', env: 'live' });
    expect(t.api_key).toMatch(/^sk_live_[0-9a-f]{28}$/);
    const rows = await h.ctx.database.db.select().from(h.ctx.database.t.apiKeys);
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(t.api_key);
    expect(dump).not.toContain(t.api_key.slice(8));
    const mine = rows.find((r) => r.id === t.api_key_id)!;
    expect(mine.keyPrefix).toBe(t.api_key.slice(0, 12));
    expect(mine.keyHash).toMatch(/^[0-9a-f]{64}$/);
  });
  test('last_used_at is coalesced (written by the flush, not per request)', async () => {
    const t = await h.tenant();
    await h.call('GET', '/v1/admin/keys', { key: t.api_key });
    const { apiKeys } = h.ctx.database.t;
    const before = await h.ctx.database.db.select().from(apiKeys).where(eq(apiKeys.id, t.api_key_id));
    expect(before[0]!.lastUsedAt).toBeNull();
    await h.ctx.keyTouches.flush();
    const after = await h.ctx.database.db.select().from(apiKeys).where(eq(apiKeys.id, t.api_key_id));
    expect(after[0]!.lastUsedAt?.toISOString()).toBe(h.clock.now().toISOString());
  });
});

describe('error contract (§2.8)', () => {
  let key: string;
  beforeAll(async () => {
    key = (await h.tenant()).api_key;
  });
  test('unknown route → 404 not_found with X-Request-Id', async () => {
    const r = await h.json('GET', '/v1/nope', { key });
    expectError(r, 404, 'not_found');
    expect(r.headers.get('x-request-id')).toMatch(/^req_/);
  });
  test('a catalog API this deployment does not serve → 404 not_found saying so; /roadmap lists the catalog', async () => {
    // whatever the catalog still lists as not served here (none once every catalog issue is done)
    const { API_CATALOG } = await import('../src/features/system/catalog');
    for (const e of API_CATALOG.filter((x) => !x.servedAs && x.method !== 'WEBHOOK')) {
      const b = expectError(await h.json(e.method, e.path.replace(/\{[^}]+\}/g, 'x'), { key, ...(e.method === 'POST' ? { body: {} } : {}) }), 404, 'not_found');
      expect(b.message).toContain('is in the API catalog');
    }
    expect(expectError(await h.json('GET', '/v1/nope', { key }), 404, 'not_found').message).toBe('No route GET /v1/nope.');
    const page = await (await h.call('GET', '/roadmap')).text();
    for (const p of ['/v1/aml/screen', '/v1/nif/{nif}', '/v1/esg-score', '/v1/bond/issue']) expect(page).toContain(p);
  });
  test('wrong method → 405 method_not_allowed with Allow', async () => {
    const r = await h.json('DELETE', '/v1/admin/keys', { key });
    expectError(r, 405, 'method_not_allowed');
    expect(r.headers.get('allow')).toBe('GET, POST, HEAD');
    const head = await h.call('HEAD', '/v1/admin/keys', { key });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const post = await h.json('PUT', '/v1/admin/keys/revoke', { key });
    expectError(post, 405, 'method_not_allowed');
    expect(post.headers.get('allow')).toBe('POST');
  });
  test('malformed JSON → 400 invalid_json', async () => {
    expectError(
      await h.json('POST', '/v1/admin/keys/revoke', { key, rawBody: '{"api_key_id":', headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_json',
    );
  });
  test('wrong content type → 415 unsupported_media_type', async () => {
    expectError(
      await h.json('POST', '/v1/admin/keys/revoke', { key, rawBody: 'api_key_id=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      415,
      'unsupported_media_type',
    );
  });
  test('body over the limit → 413 payload_too_large', async () => {
    const big = JSON.stringify({ api_key_id: crypto.randomUUID(), reason: 'x'.repeat(1024 * 1024 + 10) });
    expectError(await h.json('POST', '/v1/admin/keys/revoke', { key, rawBody: big, headers: { 'content-type': 'application/json' } }), 413, 'payload_too_large');
  });
  test('a JSON body that is not an object → 422 on (body)', async () => {
    for (const raw of ['[]', '"x"', 'null', '42', 'true']) {
      // routes whose schema accepts an empty object, and routes with required fields (both paths of POST /v1/score)
      for (const [path, headers] of [
        ['/v1/admin/keys/rotate', {}],
        ['/v1/score', {}],
        ['/v1/score', { 'idempotency-key': crypto.randomUUID() }],
        ['/v1/esg', {}],
      ] as const) {
        const b = expectError(await h.json('POST', path, { key, rawBody: raw, headers: { 'content-type': 'application/json', ...headers } }), 422, 'validation_failed');
        expect({ path, raw, fields: b.fields }).toEqual({ path, raw, fields: [{ path: '(body)', message: 'must be a JSON object' }] }); // path and raw: which case failed
      }
    }
  });
  test('a streamed (chunked) body over the limit → 413 with the error body, without reading it all', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream({
      pull(c) {
        if (sent++ > 64) return c.close(); // 4 MiB on offer
        c.enqueue(chunk);
      },
    });
    const res = await h.app.handle(
      new Request('http://localhost/v1/admin/keys/revoke', { method: 'POST', body: stream, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }),
    );
    const body = (await res.json()) as any;
    expectError({ status: res.status, body, headers: res.headers }, 413, 'payload_too_large');
    expect(sent).toBeLessThan(40);
  });
  test('no usable key: 401 before any body error', async () => {
    expectError(await h.json('POST', '/v1/admin/keys/revoke', { rawBody: '{bad', headers: { 'content-type': 'application/json' } }), 401, 'missing_api_key');
    expectError(await h.json('POST', '/v1/admin/keys/revoke', { rawBody: '[]', headers: { 'content-type': 'text/plain', authorization: 'Bearer nope' } }), 401, 'invalid_api_key');
  });
  test('every JSON answer has the same Content-Type: successes, errors, idempotent first answers and replays', async () => {
    const idem = { 'idempotency-key': crypto.randomUUID() };
    const answers = [
      await h.json('GET', '/v1/admin/keys', { key }),
      await h.json('POST', '/v1/score', { key, body: { nif: '599000015' } }),
      await h.json('POST', '/v1/score', { key, body: { nif: '599000015' }, headers: idem }),
      await h.json('POST', '/v1/score', { key, body: { nif: '599000015' }, headers: idem }),
      await h.json('GET', '/v1/admin/keys'),
      await h.json('GET', '/v1/nowhere', { key }),
    ];
    expect(answers[3]!.headers.get('idempotent-replayed')).toBe('true');
    expect(answers.map((r) => r.headers.get('content-type'))).toEqual(answers.map(() => 'application/json;charset=utf-8'));
  });
  test('401 answers carry WWW-Authenticate: Bearer (no error code when no credentials were sent, RFC 6750 §3.1)', async () => {
    const r = await h.json('GET', '/v1/admin/keys');
    expect(r.headers.get('www-authenticate')).toBe('Bearer realm="api"');
  });
  test('every error answer is Cache-Control: no-store, with a usable key too (400, 404, 405, 415)', async () => {
    const { api_key } = await h.tenant();
    const answers = [
      await h.call('POST', '/v1/score', { key: api_key, rawBody: '{bad', headers: { 'content-type': 'application/json' } }),
      await h.call('GET', '/v1/nothing-here', { key: api_key }),
      await h.call('GET', '/v1/score', { key: api_key }),
      await h.call('POST', '/v1/score', { key: api_key, rawBody: 'x', headers: { 'content-type': 'text/plain' } }),
      await h.call('GET', '/v1/admin/keys'),
    ];
    expect(answers.map((r) => [r.status, r.headers.get('cache-control')])).toEqual([[400, 'no-store'], [404, 'no-store'], [405, 'no-store'], [415, 'no-store'], [401, 'no-store']]);
  });
  test('enum and range errors name what is allowed; query errors name the parameter', async () => {
    const b = expectError(await h.json('POST', '/v1/score', { key, body: { nif: '599000015', refresh: 'always' } }), 422, 'validation_failed');
    expect(b.fields).toEqual([{ path: 'refresh', message: 'must be one of: "cached_ok", "force_refresh"' }]);
    const q = expectError(await h.json('GET', '/v1/events?limit=0', { key }), 422, 'validation_failed');
    expect(q.fields).toEqual([{ path: 'query.limit', message: 'must be an integer from 1 to 200' }]);
    const q2 = expectError(await h.json('GET', '/v1/events?limit=abc', { key }), 422, 'validation_failed');
    expect(q2.fields[0].path).toBe('query.limit');
    // a fraction inside the range is refused too (it reached the database as a non-integer: 500)
    for (const limit of ['1.5', '199.9999', '0.5']) {
      const q3 = expectError(await h.json('GET', `/v1/events?limit=${limit}`, { key }), 422, 'validation_failed');
      expect(q3.fields).toEqual([{ path: 'query.limit', message: 'must be an integer from 1 to 200' }]);
    }
    expect((await h.json('GET', '/v1/events?limit=10', { key })).status).toBe(200);
  });
  test('validation → 422 validation_failed listing every field path', async () => {
    const r = await h.json('POST', '/v1/admin/keys/revoke', { key, body: { api_key_id: 'not-a-uuid', reason: 'x'.repeat(300) } });
    const b = expectError(r, 422, 'validation_failed');
    expect(b.fields.map((f: any) => f.path).sort()).toEqual(['api_key_id', 'reason']);
  });
  test('missing required body → 422', async () => {
    const b = expectError(await h.json('POST', '/v1/admin/keys/revoke', { key }), 422, 'validation_failed');
    expect(b.fields.some((f: any) => f.path === 'api_key_id')).toBe(true);
  });
  test('query validation paths are prefixed with query.', async () => {
    const b = expectError(await h.json('GET', '/v1/admin/usage?group_by=week', { key }), 422, 'validation_failed');
    expect(b.fields[0].path).toBe('query.group_by');
  });
  test('unexpected failure → 500 internal_error without stack or SQL', async () => {
    const orig = h.ctx.tenants.listKeys;
    h.ctx.tenants.listKeys = async () => {
      throw new Error('SELECT secret FROM boom');
    };
    try {
      const r = await h.json('GET', '/v1/admin/keys', { key });
      const b = expectError(r, 500, 'internal_error');
      expect(JSON.stringify(b)).not.toContain('SELECT');
    } finally {
      h.ctx.tenants.listKeys = orig;
    }
  });
});

describe('OpenAPI 3.1', () => {
  test('request objects say what the service does with unknown fields: ignored, except where they are refused', async () => {
    const { body: doc } = await h.json('GET', '/openapi.json');
    const { api_key: key } = await h.tenant();
    const schemaOf = (path: string, method = 'post') => {
      const s = doc.paths[path][method].requestBody.content['application/json'].schema;
      return s.$ref ? doc.components.schemas[s.$ref.split('/').at(-1)] : s;
    };
    // ignored (stripped): the document does not claim they are refused
    for (const path of ['/v1/score', '/v1/esg', '/v1/admin/webhooks', '/v1/erp-connector/sync'])
      expect([path, schemaOf(path).additionalProperties]).toEqual([path, undefined]);
    expect((await h.json('POST', '/v1/score', { key, body: { nif: '599000015', unknown_field: 1 } })).status).toBe(200);
    // refused: the document says so, and the service does
    expect(schemaOf('/v1/decision').properties.context.additionalProperties).toBe(false);
    expect(schemaOf('/v1/esg').properties.answers.additionalProperties).toBe(false);
    expect(schemaOf('/v1/admin/credit-policy', 'patch').additionalProperties).toBe(false);
    // the credential requests: a misspelt field would grant more, or keep an old credential working
    for (const path of ['/v1/admin/keys', '/v1/admin/keys/rotate', '/v1/admin/keys/revoke', '/v1/admin/oauth-clients', '/v1/admin/oauth-clients/{id}/rotate-secret'])
      expect([path, schemaOf(path).additionalProperties]).toEqual([path, false]);
    const refused = await h.json('POST', '/v1/decision', { key, body: { nif: '599000015', context: { operation_type: 'factoring', amount_eur: 1000, expected_term_days: 30, insurance_id: 'x' } } });
    expect(expectError(refused, 422, 'validation_failed').fields.map((f: { path: string }) => f.path)).toEqual(['context.insurance_id']);
  });

  test('document has version, both security schemes, error responses on every operation', async () => {
    const { body: doc } = await h.json('GET', '/openapi.json');
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['BearerAuth', 'bearerAuth', 'oauth2']);
    // every scope a client can hold, * included
    expect(Object.keys(doc.components.securitySchemes.oauth2.flows.clientCredentials.scopes)).toContain('*');
    // a replayed stored 4xx carries Idempotent-Replayed too; the key's format is in the document
    const revoke = doc.paths['/v1/admin/keys/revoke'].post;
    expect(Object.keys(revoke.responses['409'].headers)).toContain('Idempotent-Replayed');
    const idem = revoke.parameters.find((x: { name: string }) => x.name === 'Idempotency-Key');
    expect(new RegExp(idem.schema.pattern).test('café')).toBe(false);
    expect(new RegExp(idem.schema.pattern).test('order-42')).toBe(true);
    const ops = Object.entries(doc.paths).flatMap(([p, o]: any) => Object.entries(o).map(([m, op]: any) => ({ p, m, op })));
    // every operation with a JSON body documents the body's errors, whatever its method
    for (const { p, m, op } of ops.filter(({ op }: any) => op.requestBody?.content?.['application/json']))
      expect(Object.keys(op.responses), `${m} ${p}`).toEqual(expect.arrayContaining(['400', '413', '415', '422']));
    // a PDF-only answer documents its media type; a 201 that names what it created documents Location
    expect(Object.keys(doc.paths['/v1/notice/cession/{id}/pdf'].get.responses['200'].content)).toEqual(['application/pdf']);
    for (const [path, status] of [['/v1/factoring/operation', '201'], ['/v1/notice/cession', '201'], ['/v1/gdpr/request', '202'], ['/v1/saft/parse', '202'], ['/v1/erp-connector/sync', '202']])
      expect(doc.paths[path].post.responses[status].headers.Location, path).toBeDefined();
    const deref = (schema: any) => (schema?.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema);
    // the spec's §2 resources are named components, referred to wherever they are used
    for (const name of ['ScoreRequest', 'ScoreResponse', 'EsgRequest', 'EsgResponse', 'ErpOAuthInitiateRequest', 'ErpOAuthInitiateResponse', 'ErpSyncRequest', 'ErpSyncResponse', 'AdminKey', 'WebhookEndpoint'])
      expect(doc.components.schemas[name]?.type, name).toBe('object');
    expect(doc.paths['/v1/score'].post.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ScoreResponse' });
    expect(doc.components.schemas.ListKeysResponse.properties.keys.items).toEqual({ $ref: '#/components/schemas/AdminKey' });
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/(\w+)"/g)].map((m) => m[1]!);
    for (const name of refs) expect(doc.components.schemas[name], name).toBeDefined();
    expect(ops.length).toBeGreaterThan(3);
    for (const { p, m, op } of ops) {
      if (op.security?.length) expect(op.responses['401']?.content['application/json'].schema.$ref, `${m} ${p}`).toBe('#/components/schemas/Error');
      expect(op.responses['500'], `${m} ${p}`).toBeDefined();
      if (op.requestBody) {
        // JSON everywhere but the sandbox consent page's own form (a browser post) and the invoice QR reader (JSON or a file)
        const types =
          p === '/v1/erp-connector/oauth/consent' || p === '/v1/oauth/token' ? ['application/x-www-form-urlencoded'] : p === '/v1/invoice/extract' ? ['application/json', 'image/png', 'image/jpeg', 'application/pdf', 'multipart/form-data'] : p === '/v1/saft/parse' ? ['application/xml', 'text/xml', 'multipart/form-data'] : ['application/json'];
        expect(Object.keys(op.requestBody.content), `${m} ${p}`).toEqual(types);
        if (types[0] !== 'application/xml') expect(deref(op.requestBody.content[types[0]!].schema).type, `${m} ${p}`).toBe('object');
      }
    }
    // every POST that takes a body documents it (those without one: rescore, webhook test, rotate-secret, replay, retry)
    const bodyless = ['/v1/sandbox/rescore', '/v1/admin/webhooks/{id}/test', '/v1/admin/webhooks/{id}/rotate-secret', '/v1/admin/webhooks/{id}/replay', '/v1/admin/webhooks/{id}/deliveries/{delivery_id}/retry'];
    for (const { p, m, op } of ops) if (m === 'post' && !bodyless.includes(p)) expect(op.requestBody, `${m} ${p}`).toBeDefined();
    expect(doc.paths['/v1/admin/keys'].get.security).toEqual([{ bearerAuth: [] }, { oauth2: ['keys:manage'] }]);
    // spec §5.3 rule 3: every admin endpoint under bearerAuth, the rest under BearerAuth
    for (const { p, m, op } of ops) if (p.startsWith('/v1/admin/') && op.security) expect({ p, m, scheme: Object.keys(op.security[0])[0] }).toEqual({ p, m, scheme: 'bearerAuth' });
    expect(doc.paths['/v1/score'].post.security).toEqual([{ BearerAuth: [] }, { oauth2: ['score'] }]);
    // the oauth2 requirement names the scope the route checks; only routes any key may call name none
    const anyKey = ops.filter(({ op }) => op.security?.some((r: Record<string, string[]>) => 'oauth2' in r && !r.oauth2!.length)).map(({ m, p }) => `${m} ${p}`);
    expect(anyKey.sort()).toEqual(['get /v1/catalog', 'post /v1/bond/issue']);
    expect(doc.paths['/v1/admin/usage'].get.security).toEqual([{ bearerAuth: [] }, { oauth2: ['usage:read'] }]);
    expect(doc.paths['/v1/score'].post.requestBody.required).toBe(true);
    expect(doc.paths['/v1/admin/keys/rotate'].post.requestBody.required).toBe(false);
    expect(deref(doc.paths['/v1/score'].post.requestBody.content['application/json'].schema).properties.nif.pattern).toBe('^[0-9]{9}$');
    // the headers the answers carry: language on localised successes, the RFC 6750 challenge on 401s
    for (const path of ['/v1/score', '/v1/esg', '/v1/esg-score']) {
      const op = doc.paths[path].post;
      expect(Object.keys(op.responses['200'].headers), path).toEqual(expect.arrayContaining(['Content-Language', 'Vary', 'X-Request-Id']));
      expect(op.parameters.map((x: { name: string }) => x.name), path).toContain('Accept-Language');
    }
    expect(doc.paths['/v1/admin/keys'].get.responses['200'].headers['Content-Language']).toBeUndefined();
    expect(doc.components.headers['Content-Language'].schema.enum).toEqual(['en', 'pt-PT']);
    for (const { p, m, op } of ops) if (op.responses['401']) expect(Object.keys(op.responses['401'].headers), `${m} ${p}`).toContain('WWW-Authenticate');
    const denied = await h.call('GET', '/v1/admin/keys', { key: 'sk_test_' + 'x'.repeat(40) });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('www-authenticate')).toBe('Bearer realm="api", error="invalid_token", error_description="The API key is not valid."');
  });
});

describe('tenant isolation', () => {
  test('each tenant lists only its own keys', async () => {
    const a = await h.tenant({ name: 'A' });
    const b = await h.tenant({ name: 'B' });
    const la = await h.json('GET', '/v1/admin/keys', { key: a.api_key });
    const lb = await h.json('GET', '/v1/admin/keys', { key: b.api_key });
    expect(la.body.keys.map((k: any) => k.id)).toEqual([a.api_key_id]);
    expect(lb.body.keys.map((k: any) => k.id)).toEqual([b.api_key_id]);
  });
});

describe('transactions roll back on both databases', () => {
  test('a failing withTx leaves nothing behind', async () => {
    const { tenants } = h.ctx.database.t;
    const id = crypto.randomUUID();
    await expect(
      h.ctx.database.withTx(async (tx) => {
        await tx.insert(tenants).values({ id, name: 'ghost', plan: 'free', status: 'active', dailyQuota: 1, createdAt: new Date() });
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await h.ctx.database.db.select().from(tenants).where(eq(tenants.id, id))).toEqual([]);
  });
});
