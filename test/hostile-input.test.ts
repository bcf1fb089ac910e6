/**
 * Hostile request bodies (issue 17 items 6 and 7): deep nesting is refused in time linear in the
 * body, before parsing and validation; objects that break string coercion where a string is
 * expected are a 422 with the field's path, never a 500.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { jsonTooDeep, MAX_JSON_DEPTH } from '../src/lib/json-guard';
import { expectError, makeApp, type TestApp } from './helpers';
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
  test('in a JSON string (also on the score fast path) or in the URL: 422 on both databases, nothing stored', async () => {
    for (const [path, body] of [
      ['/v1/score', { nif: '599000015', customer_reference: 'a\u0000b' }],
      ['/v1/decision', { nif: '599000015', customer_reference: 'a\u0000b', context: { operation_type: 'factoring', amount_eur: 1, expected_term_days: 1 } }],
      ['/v1/admin/webhooks', { url: 'https://example.com/\u0000', enabled_events: ['*'] }],
    ] as const) {
      const b = expectError(await h.json('POST', path, { key, body }), 422, 'validation_failed');
      expect(b.fields).toEqual([{ path: '(body)', message: 'must not contain NUL characters' }]);
    }
    for (const url of ['/v1/erp-connector/sync/%00', '/v1/erp-connector/connections/%00', '/v1/decisions?nif=%00']) {
      const method = url.includes('connections') ? 'DELETE' : 'GET';
      expect(expectError(await h.json(method, url, { key }), 422, 'validation_failed').fields[0].path).toBe('(url)');
    }
  });
});
