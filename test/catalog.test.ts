/**
 * The catalog itself (issue 22): GET /v1/catalog lists every §4.3 entry with its readiness and where
 * this deployment serves it; POST /v1/bond/issue (roadmap 2027) is 501 not_yet_available with
 * roadmap_url and is in the OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { API_CATALOG } from '../src/features/system/catalog';
import { CatalogResponse } from '../src/features/system/catalog-routes';
import { expectError, makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

let h: TestApp;
beforeAll(async () => {
  h = await makeApp();
});
afterAll(() => h.close());

describe('GET /v1/catalog', () => {
  test('every entry of the spec\u2019s catalog, its readiness, served or not, for any valid key', async () => {
    const narrow = await h.tenant({ scopes: ['usage:read'] });
    const r = await h.json('GET', '/v1/catalog', { key: narrow.api_key });
    expect(r.status).toBe(200);
    expect(Value.Check(CatalogResponse, r.body)).toBe(true);
    expect(r.body.data.length).toBe(API_CATALOG.length);
    expect(r.body.data.find((e: any) => e.path === '/v1/factoring/operation')).toMatchObject({ method: 'POST', readiness: 'live', served: true });
    expect(r.body.data.find((e: any) => e.path === '/v1/basel/capital')).toMatchObject({ served: true, readiness: expect.stringContaining('roadmap') });
    // the spec's label, whatever this deployment serves (§4.3: roadmap, fourth quarter 2026)
    expect(r.body.data.find((e: any) => e.path === '/v1/credit-limit/{buyer_nif}')).toMatchObject({ method: 'GET', served: true, readiness: 'roadmap, fourth quarter 2026' });
    expect(r.body.roadmap_url).toMatch(/\/roadmap$/);
    // a served entry really answers (not 404) at its path
    const doc = (await h.json('GET', '/openapi.json')).body;
    for (const e of r.body.data.filter((x: any) => x.served && x.method !== 'WEBHOOK')) {
      const path = e.path.replace('{nif}', '599000015').replace('{buyer_nif}', '599000015').replace('{naics}', '423').replace('{provider}', 'demo').replace('{operation_id}', 'fop_00000000-0000-7000-8000-000000000000');
      expect({ e: e.path, inDoc: !!doc.paths[e.path] }).toEqual({ e: e.path, inDoc: true });
      const res = await h.call(e.method, path, { key: narrow.api_key, ...(e.method === 'POST' ? { body: {} } : {}) });
      expect({ path, status: res.status }).not.toEqual({ path, status: 404 });
    }
    expectError(await h.json('GET', '/v1/catalog', {}), 401, 'missing_api_key');
  });

  test('POST /v1/bond/issue: 501 not_yet_available with roadmap_url, whatever the body; documented', async () => {
    const t = await h.tenant();
    const r = await h.json('POST', '/v1/bond/issue', { key: t.api_key, body: { amount_eur: 1e6 } });
    expect(expectError(r, 501, 'not_yet_available').roadmap_url).toMatch(/\/roadmap$/);
    expectError(await h.json('POST', '/v1/bond/issue', {}), 401, 'missing_api_key');
    const doc = (await h.json('GET', '/openapi.json')).body;
    expect(doc.paths['/v1/bond/issue'].post.responses['501']).toBeDefined();
    // it never succeeds yet: no success is documented
    expect(Object.keys(doc.paths['/v1/bond/issue'].post.responses).filter((s) => s.startsWith('2'))).toEqual([]);
    // the catalog does not call it served: it answers only to say it is not available yet
    const entry = (await h.json('GET', '/v1/catalog', { key: t.api_key })).body.data.find((e: any) => e.path === '/v1/bond/issue');
    expect(entry).toMatchObject({ served: false, served_as: expect.stringContaining('501 not_yet_available') });
  });
});
