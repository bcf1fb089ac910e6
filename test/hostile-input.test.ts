/**
 * Hostile request bodies (issue 17 items 6 and 7): deep nesting is refused in time linear in the
 * body, before parsing and validation; objects that break string coercion where a string is
 * expected are a 422 with the field's path, never a 500.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { jsonTooDeep, MAX_JSON_DEPTH } from '../src/lib/json-guard';
import { expectError, makeApp, type TestApp, ROOT } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

let h: TestApp;
let key: string;
beforeAll(async () => {
  h = await makeApp();
  key = (await h.tenant()).api_key;
});
afterAll(() => h.close());

const nested = (levels: number, inner = '"x"') => '['.repeat(levels) + inner + ']'.repeat(levels);

describe('JSON nesting', () => {
  test('the scanner: depth counted outside strings only, exactly at the limit', () => {
    expect(jsonTooDeep(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonTooDeep(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(jsonTooDeep(`{"a":"${'['.repeat(1000)}"}`)).toBe(false);
    expect(jsonTooDeep(`{"a":"\\\\\\"${'{'.repeat(100)}"}`)).toBe(false);
    expect(jsonTooDeep(`{"a":"\\"","b":${nested(40)}}`)).toBe(true);
  });

  test('50 000 levels in a string field: 422 at once, on every kind of route, and the service keeps serving', async () => {
    const deep = nested(50_000);
    const bodies: [string, string][] = [
      ['/v1/score', `{"nif":${deep}}`],
      ['/v1/decision', `{"nif":"599000015","context":{"operation_type":"factoring","amount_eur":1,"expected_term_days":1},"customer_reference":${deep}}`],
      ['/v1/admin/webhooks', `{"url":${deep},"enabled_events":["*"]}`],
      ['/v1/erp-connector/sync', `{"provider":"demo","customer_reference":${nested(50_000, '{}')}}`],
      ['/v1/esg', `{"nif":"599000015","sector":"C","answers":${nested(50_000, '{}')}}`],
    ];
    for (const [path, text] of bodies) {
      const started = performance.now();
      const r = await h.json('POST', path, { key, rawBody: text, headers: { 'content-type': 'application/json' } });
      const ms = performance.now() - started;
      const b = expectError(r, 422, 'validation_failed');
      expect(b.fields).toEqual([{ path: '(body)', message: `nested deeper than ${MAX_JSON_DEPTH} levels` }]);
      expect(ms).toBeLessThan(1000); // bounded, not a timing benchmark: it took 2.8–6.6 s before
    }
    expect((await h.json('POST', '/v1/score', { key, body: { nif: '599000015' } })).status).toBe(200);
  });
});

describe('a string field given an object', () => {
  test.each([
    ['/v1/score', { nif: { toString: '599000015' } }, 'nif'],
    ['/v1/score', { nif: '599000015', customer_reference: { valueOf: 1 } }, 'customer_reference'],
    ['/v1/decision', { nif: { toString: '599000015' }, context: { operation_type: 'factoring', amount_eur: 1, expected_term_days: 1 } }, 'nif'],
    ['/v1/admin/webhooks', { url: { toString: 'https://example.com' }, enabled_events: ['*'] }, 'url'],
    ['/v1/erp-connector/sync', { provider: 'demo', customer_reference: { toString: 'x' } }, 'customer_reference'],
    ['/v1/admin/keys/revoke', { api_key_id: { toString: 'x' } }, 'api_key_id'],
    ['/v1/admin/webhooks', { url: 'https://example.com', enabled_events: [{ toJSON: 1 }] }, 'enabled_events.0'],
  ] as const)('%s %j → 422 on the field', async (path, body, field) => {
    const b = expectError(await h.json('POST', path, { key, body }), 422, 'validation_failed');
    expect(b.fields.map((f: any) => f.path)).toContain(field);
  });

  test('plain objects and arrays in string fields are 422 with the path too', async () => {
    for (const nif of [{ a: 1 }, ['599000015'], 599000015, null, true]) {
      const b = expectError(await h.json('POST', '/v1/score', { key, body: { nif } }), 422, 'validation_failed');
      expect(b.fields.map((f: any) => f.path)).toContain('nif');
    }
  });
});

describe('NUL characters', () => {
  test('in a JSON string (also on the score fast path) or in a query: 422 on the field, on both databases, nothing stored; in a path: 404', async () => {
    for (const [path, body, field] of [
      ['/v1/score', { nif: '599000015', customer_reference: 'a\u0000b' }, 'customer_reference'],
      ['/v1/decision', { nif: '599000015', customer_reference: 'a\u0000b', context: { operation_type: 'factoring', amount_eur: 1, expected_term_days: 1 } }, 'customer_reference'],
      ['/v1/admin/webhooks', { url: 'https://example.com/\u0000', enabled_events: ['*'] }, 'url'],
      ['/v1/score/batch', { items: [{ nif: '599000015' }, { nif: '5990\u000000015' }] }, 'items.1.nif'],
      ['/v1/score', { nif: '599000015', ['x\u0000']: 1 }, 'x\\0'],
    ] as const) {
      const b = expectError(await h.json('POST', path, { key, body }), 422, 'validation_failed');
      expect(b.fields).toEqual([{ path: field, message: 'must not contain NUL characters' }]);
    }
    const q = expectError(await h.json('GET', '/v1/decisions?limit=5&nif=%00', { key }), 422, 'validation_failed');
    expect(q.fields).toEqual([{ path: 'query.nif', message: 'must not contain NUL characters' }]);
    for (const url of ['/v1/erp-connector/sync/%00', '/v1/erp-connector/connections/%00', '/v1/decisions/dec_x%00y', '/v1/zzz%00']) {
      const method = url.includes('connections') ? 'DELETE' : 'GET';
      expectError(await h.json(method, url, { key }), 404, 'resource_not_found');
    }
    // a text's own backslash followed by u0000 is not a NUL: accepted as it is
    const literal = await h.call('POST', '/v1/score', { key, rawBody: '{"nif":"599000015","customer_reference":"C:\\\\u0000x"}', headers: { 'content-type': 'application/json' } });
    expect(literal.status).toBe(200);
    expect(((await literal.json()) as { customer_reference: string }).customer_reference).toBe('C:\\u0000x');
    // a page a person's browser opens answers as a page
    for (const url of ['/v1/erp-connector/oauth/consent?state=%00', '/v1/erp-connector/oauth/callback?state=%00&code=x', '/portal/p?t=%00']) {
      const res = await h.call('GET', url, {});
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(await res.text()).toContain('This link is not valid');
    }
  });
});

describe('unpaired UTF-16 surrogates', () => {
  // sent as a JSON escape (UTF-8 cannot carry one): refused like NUL, never stored nor echoed
  const raw = (path: string, text: string) => h.call('POST', path, { key, rawBody: text, headers: { 'content-type': 'application/json' } });

  test.each([
    ['/v1/score', '{"nif":"599000015","customer_reference":"a\\ud800b"}', 'customer_reference'],
    ['/v1/score', '{"nif":"599000015","customer_reference":"\\udc00"}', 'customer_reference'],
    ['/v1/aml/screen', '{"name":"Erik \\ud83d Badege","type":"person"}', 'name'],
    ['/v1/decision', '{"nif":"599000015","context":{"operation_type":"factoring","amount_eur":1,"expected_term_days":1},"customer_reference":"x\\uDBFF"}', 'customer_reference'],
  ] as const)('%s %s → 422 on the field, on both databases (the score fast path too)', async (path, text, field) => {
    const res = await raw(path, text);
    const b = expectError({ status: res.status, body: await res.json(), headers: res.headers }, 422, 'validation_failed');
    expect(b.fields).toEqual([{ path: field, message: 'must not contain unpaired UTF-16 surrogates' }]);
  });

  test('a surrogate pair (an emoji), escaped or not, and an escaped backslash before "ud800" are accepted', async () => {
    for (const text of ['{"nif":"599000015","customer_reference":"\\ud83d\\ude00"}', '{"nif":"599000015","customer_reference":"\u{1F600}"}', '{"nif":"599000015","customer_reference":"\\\\ud800"}']) {
      const res = await raw('/v1/score', text);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { customer_reference: string };
      expect(body.customer_reference).toBe(JSON.parse(text).customer_reference);
    }
  });
});

describe('a whole number sent as text', () => {
  test.each([
    ['/v1/insurance/submit', { buyer_nif: '599000015', requested_limit_cents: '15000000', terms: { payment_terms_days: 60 } }, 'requested_limit_cents'],
    ['/v1/insurance/submit', { buyer_nif: '599000015', requested_limit_cents: '10', terms: { payment_terms_days: 60 } }, 'requested_limit_cents'],
    ['/v1/decision', { nif: '599000015', context: { operation_type: 'factoring', amount_eur: 1000, expected_term_days: '30' } }, 'context.expected_term_days'],
    ['/v1/confirming/anchor', { anchor_nif: '599000015', limit_cents: '10', payment_terms_days: 90 }, 'limit_cents'],
  ] as const)('%s %j → 422 on that field (a JSON number is expected, as for every number)', async (path, body, field) => {
    const b = expectError(await h.json('POST', path, { key, body }), 422, 'validation_failed');
    expect(b.fields).toEqual([{ path: field, message: expect.stringMatching(/^must be an integer from \d+ to \d+$/) }]);
  });

  test('PATCH credit policy: margin_bps "85" is refused, not stored', async () => {
    const t = await h.tenant();
    const before = (await h.json('GET', '/v1/admin/credit-policy', { key: t.api_key })).body;
    const b = expectError(await h.json('PATCH', '/v1/admin/credit-policy', { key: t.api_key, body: { margin_bps: '85' } }), 422, 'validation_failed');
    expect(b.fields).toEqual([{ path: 'margin_bps', message: 'must be an integer from 0 to 5000' }]);
    expect((await h.json('GET', '/v1/admin/credit-policy', { key: t.api_key })).body).toEqual(before);
  });

  test('PATCH credit policy: lgd given as text (or a list) is refused with the rest, not dropped while margin_bps is saved', async () => {
    const t = await h.tenant();
    const before = (await h.json('GET', '/v1/admin/credit-policy', { key: t.api_key })).body;
    for (const lgd of ['x', '', 5, [0.4]]) {
      const b = expectError(await h.json('PATCH', '/v1/admin/credit-policy', { key: t.api_key, body: { margin_bps: 50, lgd } }), 422, 'validation_failed');
      expect(b.fields).toEqual([{ path: 'lgd', message: 'must be an object' }]);
    }
    // a misspelt setting is refused with the rest, not dropped while the rest is saved
    const misspelt = expectError(await h.json('PATCH', '/v1/admin/credit-policy', { key: t.api_key, body: { margin_bps: 50, lgd: { 'non-recourse': 0.6 }, foo: 1 } }), 422, 'validation_failed');
    expect(misspelt.fields).toEqual([
      { path: 'foo', message: expect.stringContaining('is not a setting of the credit policy') },
      { path: 'lgd.non-recourse', message: expect.stringContaining('is not a modality') },
    ]);
    expect((await h.json('GET', '/v1/admin/credit-policy', { key: t.api_key })).body).toEqual(before);
  });
});

describe('a list field given text, an object or a number', () => {
  test.each([
    ['/v1/kyc/verify', { nif: '599000015', representatives: 'Ana' }, 'representatives'],
    ['/v1/kyc/verify', { nif: '599000015', representatives: { name: 'Ana', role: 'manager' } }, 'representatives'],
    ['/v1/kyc/verify', { nif: '599000015', representatives: 5 }, 'representatives'],
    ['/v1/score/batch', { items: '599000015' }, 'items'],
    ['/v1/reconcile', { transactions: 'none', invoices: [] }, 'transactions'],
    ['/v1/admin/oauth-clients', { name: 'x', scopes: 'score' }, 'scopes'],
    // an empty text was taken for an empty list by Elysia's normalisation, and passed
    ['/v1/kyc/verify', { nif: '599000015', representatives: '' }, 'representatives'],
    ['/v1/reconcile', { transactions: '', invoices: [] }, 'transactions'],
    ['/v1/score/batch', { items: '' }, 'items'],
    ['/v1/forecast', { payables: '', source: { provider: 'demo', customer_reference: 'x' } }, 'payables'],
  ] as const)('%s %j → 422 "must be an array" on the field itself, not one error per character', async (path, body, field) => {
    const b = expectError(await h.json('POST', path, { key, body }), 422, 'validation_failed');
    expect(b.fields).toContainEqual({ path: field, message: 'must be an array' });
    expect(b.fields.filter((f: any) => f.path.startsWith(`${field}.`))).toEqual([]);
  });
});

describe('a JSON body that is not UTF-8', () => {
  test('400 invalid_json on the fast path and the routes alike, nothing stored (it was read as U+FFFD and kept)', async () => {
    const bytes = (text: string, bad: number[]) => {
      const [head, tail] = text.split('@');
      return new Uint8Array([...new TextEncoder().encode(head), ...bad, ...new TextEncoder().encode(tail)]);
    };
    const t = await h.tenant();
    for (const [path, text] of [
      ['/v1/score', '{"nif":"599000015","customer_reference":"caf@"}'],
      ['/v1/admin/keys', '{"name":"caf@","env":"sandbox"}'],
    ] as const) {
      const r = await h.json('POST', path, { key: t.api_key, rawBody: bytes(text, [0xe9, 0x20, 0xff]) as never, headers: { 'content-type': 'application/json' } });
      expect(expectError(r, 400, 'invalid_json').message).toContain('UTF-8');
    }
    expect((await h.json('GET', '/v1/admin/keys', { key: t.api_key })).body.keys.map((k: any) => k.name)).not.toContain('caf\uFFFD \uFFFD');
    // the same text in UTF-8 (with an emoji) is fine
    expect((await h.json('POST', '/v1/admin/keys', { key: t.api_key, rawBody: new TextEncoder().encode('{"name":"café 🚀","env":"sandbox"}') as never, headers: { 'content-type': 'application/json' } })).status).toBe(201);
    // without a usable key: 401 first, as for any unreadable body
    expectError(await h.json('POST', '/v1/score', { key: 'sk_test_' + 'x'.repeat(40), rawBody: bytes('{"nif":"@"}', [0xff]) as never, headers: { 'content-type': 'application/json' } }), 401, 'invalid_api_key');
  });
});

describe('a compressed JSON body', () => {
  test('415 naming the coding, with Accept-Encoding: identity, on the fast path and the routes alike (it was 400 "not UTF-8")', async () => {
    const t = await h.tenant();
    for (const [path, body] of [['/v1/score', { nif: '599000015' }], ['/v1/decision', { nif: '599000015', context: { operation_type: 'factoring', amount_eur: 1000, expected_term_days: 30 } }]] as const) {
      const r = await h.json('POST', path, { key: t.api_key, rawBody: Bun.gzipSync(JSON.stringify(body)) as never, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
      expect(expectError(r, 415, 'unsupported_media_type').message).toContain('Content-Encoding gzip');
      expect(r.headers.get('accept-encoding')).toBe('identity');
    }
    // identity is no coding at all
    expect((await h.json('POST', '/v1/score', { key: t.api_key, rawBody: JSON.stringify({ nif: '599000015' }), headers: { 'content-type': 'application/json', 'content-encoding': 'identity' } })).status).toBe(200);
  });
});

describe('null where an optional field is absent', () => {
  test('POST /v1/score refresh: null is 422 on the field (on the fast path it was taken for the default)', async () => {
    const b = expectError(await h.json('POST', '/v1/score', { key, body: { nif: '599000015', refresh: null } }), 422, 'validation_failed');
    expect(b.fields).toEqual([{ path: 'refresh', message: 'must be one of: "cached_ok", "force_refresh"' }]);
  });
});

describe('a huge wrong body with a list field of the wrong kind after 256 other problems', () => {
  test('still one 422 validation_failed with field paths (the walk for the list field stops at its bound)', async () => {
    const transactions = Array.from({ length: 300 }, () => ({}));
    const started = performance.now();
    const b = expectError(await h.json('POST', '/v1/reconcile', { key, body: { transactions, invoices: 'none' } }), 422, 'validation_failed');
    expect(performance.now() - started).toBeLessThan(5000);
    expect(b.fields.length).toBeGreaterThan(0);
    for (const f of b.fields) {
      expect(typeof f.path).toBe('string');
      expect(typeof f.message).toBe('string');
    }
    expect(b.fields.some((f: any) => f.path.startsWith('transactions.'))).toBe(true);
  });
});

describe('a list of the right kind with several problems', () => {
  test('every one is listed: the list\u2019s own rule (unique items) and a bad element alike', async () => {
    const b = expectError(await h.json('POST', '/v1/admin/oauth-clients', { key, body: { name: 'x', scopes: ['score', 'score', 'bogus'] } }), 422, 'validation_failed');
    expect(b.fields.map((f: any) => f.path).sort()).toEqual(['scopes', 'scopes.2']);
  });
});

describe('an empty file upload', () => {
  // over HTTP an empty body is no body at all (Content-Length: 0): answered as empty, whatever the transport
  const send = (path: string, type: string, body?: string) =>
    h.call('POST', path, { key, ...(body === undefined ? {} : { rawBody: body }), headers: { 'content-type': type, ...(body === undefined ? {} : { 'content-length': '0' }) } });
  test.each([undefined, ''])('POST /v1/saft/parse, application/xml, body %j → 422 on (body), nothing parsed', async (body) => {
    const b = expectError(await h.json('POST', '/v1/saft/parse', { key, ...(body === undefined ? {} : { rawBody: body }), headers: { 'content-type': 'application/xml', ...(body === undefined ? {} : { 'content-length': '0' }) } }), 422, 'validation_failed');
    expect(b.fields).toEqual([{ path: '(body)', message: expect.stringContaining('is empty') }]);
  });
  test.each(['application/pdf', 'image/png'])('POST /v1/invoice/extract, %s, no body → 422 image_unreadable, as an empty file', async (type) => {
    const res = await send('/v1/invoice/extract', type);
    expectError({ status: res.status, body: await res.json(), headers: res.headers }, 422, 'image_unreadable');
  });
});

describe('the key is judged before the body', () => {
  const send = (k: string, path: string, body: string, type = 'application/json') => h.call('POST', path, { key: k, rawBody: body, headers: { 'content-type': type } });
  const errorOf = async (res: Response) => {
    const body = (await res.json()) as { code: string };
    return expectError({ status: res.status, body, headers: res.headers }, res.status, body.code); // a §2.8 body, whatever its code
  };
  test('an unknown or expired key with unreadable JSON or a wrong type: 401; a key without the scope: 403; a usable key: the body error', async () => {
    const unknown = `sk_test_${'0'.repeat(28)}`;
    for (const [body, type] of [['{bad', 'application/json'], ['x', 'text/plain']]) {
      const r = await send(unknown, '/v1/score', body, type);
      expect([r.status, (await errorOf(r)).code]).toEqual([401, 'invalid_api_key']);
    }
    const t = await h.tenant();
    const expiring = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', expiresAt: new Date(h.clock.now().getTime() + 1000) });
    h.clock.advance(2000);
    const expired = await send(expiring.api_key, '/v1/score', '{bad');
    expect([expired.status, (await errorOf(expired)).code]).toEqual([401, 'api_key_expired']);
    const narrow = await h.ctx.tenants.createKey({ tenantId: t.tenant_id, env: 'sandbox', scopes: ['score'] });
    const scoped = await send(narrow.api_key, '/v1/esg', '{bad');
    expect([scoped.status, (await errorOf(scoped)).code]).toEqual([403, 'insufficient_scope']);
    const bad = await send(key, '/v1/esg', '{bad');
    expect([bad.status, (await errorOf(bad)).code]).toEqual([400, 'invalid_json']);
    const wrongType = await send(key, '/v1/esg', 'x', 'text/plain');
    expect([wrongType.status, (await errorOf(wrongType)).code]).toEqual([415, 'unsupported_media_type']);
  });

  test('every API route that takes a body answers unreadable JSON with 400 once the key is judged (none loses it); a route that takes a file only, 415', async () => {
    // the token endpoint and the ERP consent page authenticate otherwise and read their own forms
    const routes = (h.app.routes as { method: string; path: string }[]).filter(
      (r) => ['POST', 'PATCH', 'PUT'].includes(r.method) && r.path.startsWith('/v1/') && !r.path.startsWith('/v1/oauth/') && r.path !== '/v1/erp-connector/oauth/consent',
    );
    expect(routes.length).toBeGreaterThan(30);
    const wrong: string[] = [];
    for (const r of routes) {
      const path = r.path.replace(/:[^/]+/g, '00000000-0000-0000-0000-000000000000');
      const res = await h.call(r.method, path, { key, rawBody: '{bad', headers: { 'content-type': 'application/json' } });
      const text = await res.text();
      const code = text.startsWith('{') ? (JSON.parse(text) as { code?: string }).code : text.slice(0, 40);
      const [status, expected] = r.path === '/v1/saft/parse' ? [415, 'unsupported_media_type'] : [400, 'invalid_json'];
      if (res.status !== status || code !== expected) wrong.push(`${r.method} ${r.path} → ${res.status} ${code}`);
    }
    expect(wrong).toEqual([]);
    // a SAF-T file sent as JSON (the AT's files are Windows-1252): its type is refused, not its bytes as JSON
    const demo = await Bun.file(`${ROOT}/fixtures/saft/saft_idemo599999999.xml`).bytes();
    const asJson = await h.call('POST', '/v1/saft/parse', { key, rawBody: demo as never, headers: { 'content-type': 'application/json' } });
    expect([asJson.status, ((await asJson.json()) as { code: string }).code]).toEqual([415, 'unsupported_media_type']);
  });
});

describe('text a document prints, and the wording of the remaining schema errors', () => {
  const notice = (assignorName: string) => ({
    parties: { assignor: { name: assignorName, nif: '599000031' }, factor: { name: 'Factor Exemplo, S.A.', nif: '599000015' }, debtor: { name: 'Distribuidora Alfa, S.A.', nif: '599000023' } },
    invoices: [{ number: 'FT 2026/118', issue_date: '2026-11-02', due_date: '2099-01-31', amount_cents: 100 }],
    payment: { iban: 'PT50000201231234567890154' },
  });
  test.each(['   ', '\u202e\u200b', 'Line1\nLine2', 'Tab\there'])('a party name %j on a notice → 422 on its path (it would name no one, or break its line)', async (name) => {
    const b = expectError(await h.json('POST', '/v1/notice/cession', { key, body: notice(name) }), 422, 'validation_failed');
    expect(b.fields).toEqual([{ path: 'parties.assignor.name', message: 'must contain visible characters and no control characters (line breaks, tabs)' }]);
  });
  test('an empty one: "must be at least 1 character"', async () => {
    expect(expectError(await h.json('POST', '/v1/notice/cession', { key, body: notice('') }), 422, 'validation_failed').fields).toEqual([{ path: 'parties.assignor.name', message: 'must be at least 1 character' }]);
  });
  test('a nullable date, a bare pattern and an ESG answer out of range are worded as the rest', async () => {
    const rec = expectError(await h.json('POST', '/v1/reconcile', { key, body: { transactions: [], invoices: [{ id: 'i', number: 'FT 1', issue_date: '2026-01-01', due_date: '2026-02-29', amount_open: 1 }] } }), 422, 'validation_failed');
    expect(rec.fields).toEqual([{ path: 'invoices.0.due_date', message: 'must be a calendar date (YYYY-MM-DD) from 1900 to 2199' }]);
    const embed = expectError(await h.json('GET', '/v1/supplier-portal/embed?programme_id=nope&supplier_nif=599000015', { key }), 422, 'validation_failed');
    expect(embed.fields[0]).toEqual({ path: 'query.programme_id', message: 'must be an id of the form cfp_<UUID>' });
    const amount = expectError(await h.json('POST', '/v1/decision', { key, body: { nif: '599000015', context: { operation_type: 'factoring', amount_eur: 0, expected_term_days: 30 } } }), 422, 'validation_failed');
    expect(amount.fields).toEqual([{ path: 'context.amount_eur', message: 'must be at least 0.01' }]);
    const lgd = expectError(await h.json('POST', '/v1/basel/capital', { key, body: { exposures: [{ pd: 0.01, lgd: 0, ead_eur: 100 }] } }), 422, 'validation_failed');
    expect(lgd.fields).toEqual([{ path: 'exposures.0.lgd', message: 'must be above 0' }]);
    const items = expectError(await h.json('POST', '/v1/score/batch', { key, body: { items: [] } }), 422, 'validation_failed');
    expect(items.fields).toEqual([{ path: 'items', message: 'must have at least 1 item' }]);
    const esg = expectError(await h.json('POST', '/v1/esg', { key, body: { nif: '599000015', answers: { renewable_energy_pct: 150, min_wage_compliance: 'yes' } } }), 422, 'validation_failed');
    expect(esg.fields).toEqual(expect.arrayContaining([
      { path: 'answers.renewable_energy_pct', message: 'must be at most 100' },
      { path: 'answers.min_wage_compliance', message: expect.stringMatching(/^must be true or false/) },
    ]));
  });
});

describe('unknown fields', () => {
  test('ignored when the rest of the body is valid, on a route with a closed schema and on the CSRD report alike', async () => {
    expect((await h.json('POST', '/v1/reconcile', { key, body: { transactions: [], invoices: [], zzz_unknown: 1 } })).status).toBe(200);
    expect((await h.json('POST', '/v1/reconcile', { key, body: { transactions: [], invoices: [], lang: 'en' } })).status).not.toBe(422);
  });
  test('beside a real problem: listed (it may be a misspelt field), worded as ignored, not as the fault', async () => {
    const b = expectError(await h.json('POST', '/v1/kyc/verify', { key, body: { nif: '599000015', representative: [] } }), 422, 'validation_failed');
    expect(b.fields).toContainEqual({ path: 'representatives', message: 'is required' });
    expect(b.fields).toContainEqual({ path: 'representative', message: 'is not a field of this request (ignored)' });
  });
  test('refused on the money and legal requests, where a misspelt field would change the answer (insurance, factoring, confirming, notices)', async () => {
    const b = expectError(await h.json('POST', '/v1/insurance/submit', { key, body: { buyer_nif: '599000015', requested_limit_cents: 15_000_000, terms: { payment_terms_days: 60 }, zzz_unknown: 1 } }), 422, 'validation_failed');
    expect(b.fields).toEqual([{ path: 'zzz_unknown', message: 'is not a field of this request' }]);
  });
});

describe('impossible calendar dates', () => {
  // the same fault, the same answer on every route: a pattern alone had let 1971-99-99 through (and
  // an AML screening stored it as agreeing with a list entry)
  const inv = { number: 'FT 1', issue_date: '2026-11-02', due_date: '2027-01-31', amount_cents: 100 };
  test.each([
    ['/v1/aml/screen', { name: 'Erik Badege', type: 'person', birth_date: '1971-99-99' }, 'birth_date', 'must be a calendar date (YYYY-MM-DD) or a year (YYYY), from 1900 to 2199'],
    ['/v1/kyc/verify', { nif: '599000015', representatives: [{ name: 'Ana', role: 'manager', birth_date: '1975-13-40' }] }, 'representatives.0.birth_date', 'must be a calendar date (YYYY-MM-DD) or a year (YYYY), from 1900 to 2199'],
    ['/v1/reconcile', { transactions: [{ id: 't1', date: '2026-02-30', amount: 10 }], invoices: [] }, 'transactions.0.date', 'must be a calendar date (YYYY-MM-DD) from 1900 to 2199'],
    ['/v1/reconcile', { transactions: [], invoices: [{ number: 'FT 1', issue_date: '2026-13-45', amount: 10 }] }, 'invoices.0.issue_date', 'must be a calendar date (YYYY-MM-DD) from 1900 to 2199'],
    ['/v1/factoring/operation', { seller_nif: '599000031', debtor_nif: '599000023', modality: 'recourse', invoices: [{ ...inv, due_date: '2026-02-30' }] }, 'invoices.0.due_date', 'must be a calendar date (YYYY-MM-DD) from 1900 to 2199'],
    ['/v1/gdpr/request', { type: 'access', subject: { name: 'Ana', birth_date: '1980-02-30' } }, 'subject.birth_date', 'must be a calendar date (YYYY-MM-DD) from 1900 to 2199'],
  ] as const)('%s %j → 422 on the field, worded alike', async (path, body, field, message) => {
    const b = expectError(await h.json('POST', path, { key, body }), 422, 'validation_failed');
    expect(b.fields).toContainEqual({ path: field, message });
  });

  test.each([
    ['/v1/kyc/verify', { nif: '599000015', representatives: [{ name: 'Ana', role: 'manager', birth_date: '9999-12-31' }] }, 'representatives.0.birth_date'],
    ['/v1/aml/screen', { name: 'Erik Badege', birth_date: '0001' }, 'birth_date'],
    ['/v1/reconcile', { transactions: [{ id: 't1', date: '0000-01-01', amount: 10 }], invoices: [] }, 'transactions.0.date'],
    ['/v1/csrd/report', { assessment_id: '01a21e2a-d08a-7000-8000-000000000000', reporting_period: { start: '0000-01-01', end: '9999-12-31' } }, 'reporting_period.start'],
  ] as const)('a year outside 1900–2199 is no date of this API: %s', async (path, body, field) => {
    const b = expectError(await h.json('POST', path, { key, body }), 422, 'validation_failed');
    expect(b.fields).toContainEqual({ path: field, message: expect.stringContaining('from 1900 to 2199') });
  });

  test('a stored date outside those years is answered as it is (the years bound what a request gives, not what books hold)', async () => {
    const t = await h.tenant();
    const { db, t: tb } = h.ctx.database;
    const now = h.ctx.clock.now();
    await db.insert(tb.invoices).values({ id: crypto.randomUUID(), tenantId: t.tenant_id, env: 'sandbox', provider: 'saft', customerReference: 'old-books', providerDocumentId: 'FT 1/1', documentType: 'FT', number: 'FT 1/1', atcud: null, issueDate: '1880-05-01', dueDate: '2300-01-01', customerNif: '599000015', customerName: 'Alfa', currency: 'EUR', netTotalCents: 100, taxTotalCents: 23, grossTotalCents: 123, status: 'N', data: {}, sourceUpdatedAt: now.toISOString(), syncedAt: now } as never);
    const r = await h.json('GET', '/v1/erp/saft/invoices?customer_reference=old-books', { key: t.api_key });
    expect(r.status).toBe(200);
    expect(r.body.data[0]).toMatchObject({ issue_date: '1880-05-01', due_date: '2300-01-01' });
  });

  test('a year alone and a real date are birth dates; 29 February only in a leap year', async () => {
    // past validation (no list is loaded in this app: 503, not 422)
    for (const birth_date of ['1971', '1972-02-29']) expect((await h.json('POST', '/v1/aml/screen', { key, body: { name: 'Erik Badege', type: 'person', birth_date } })).status).not.toBe(422);
    expect(expectError(await h.json('POST', '/v1/aml/screen', { key, body: { name: 'Erik Badege', type: 'person', birth_date: '1971-02-29' } }), 422, 'validation_failed').fields[0].path).toBe('birth_date');
  });
});

describe('a NIF in the path failing its check digit', () => {
  test('GET /v1/credit-limit/{buyer_nif}: invalid_nif at path.buyer_nif, as a malformed one is named', async () => {
    expect(expectError(await h.json('GET', '/v1/credit-limit/599000016', { key }), 422, 'invalid_nif').fields).toEqual([{ path: 'path.buyer_nif', message: 'fails the NIF check digit' }]);
    expect(expectError(await h.json('GET', '/v1/credit-limit/59900001', { key }), 422, 'validation_failed').fields[0].path).toBe('path.buyer_nif');
  });

  test('GET /v1/supplier-portal/embed: a supplier NIF failing its check digit is invalid_nif, not "not in the programme"', async () => {
    const url = '/v1/supplier-portal/embed?programme_id=cfp_00000000-0000-0000-0000-000000000000&supplier_nif=599000032';
    expect(expectError(await h.json('GET', url, { key }), 422, 'invalid_nif').fields).toEqual([{ path: 'query.supplier_nif', message: 'fails the NIF check digit' }]);
  });
});

describe('a NIF failing its check digit beside other problems', () => {
  // the schema's NIF format: listed with the rest in one answer, not found only on the next try
  test.each([
    ['/v1/score', { nif: '599000011', customer_reference: 'x'.repeat(200) }, ['nif', 'customer_reference']],
    ['/v1/esg', { nif: '599000011', answers: { not_an_indicator: 1 } }, ['nif']],
    ['/v1/confirming/anchor', { anchor_nif: '599000016', limit_cents: 1 }, ['anchor_nif', 'payment_terms_days']],
    ['/v1/decision', { nif: '599000011', context: { operation_type: 'factoring', amount_eur: -1, expected_term_days: 30 } }, ['nif', 'context.amount_eur']],
  ] as const)('%s %j → 422 validation_failed naming the NIF too', async (path, body, expected) => {
    const b = expectError(await h.json('POST', path, { key, body }), 422, 'validation_failed');
    const paths = b.fields.map((f: { path: string }) => f.path);
    for (const p of expected) expect(paths).toContain(p);
    expect(b.fields).toContainEqual({ path: expected[0], message: 'fails the NIF check digit' });
  });

  test('alone, it is still invalid_nif (one field), on the fast path and the routes alike', async () => {
    for (const [path, body, field] of [
      ['/v1/score', { nif: '599000011' }, 'nif'],
      ['/v1/decision', { nif: '599000011', context: { operation_type: 'factoring', amount_eur: 1000, expected_term_days: 30 } }, 'nif'],
      ['/v1/insurance/submit', { buyer_nif: '599000011', requested_limit_cents: 15_000_000, terms: { payment_terms_days: 60 } }, 'buyer_nif'],
    ] as const)
      expect(expectError(await h.json('POST', path, { key, body }), 422, 'invalid_nif').fields).toEqual([{ path: field, message: 'fails the NIF check digit' }]);
  });
});
