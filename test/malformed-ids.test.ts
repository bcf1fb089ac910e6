// A malformed resource id in a path is answered as an unknown one: 404 resource_not_found with the
// §2.8 body, on every route that takes one (docs/decisions.md, "Cross-tenant access"); path
// parameters that are enumerations or lookup keys (provider, action, a NIF, a NAICS code) stay 422.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { expectError, makeApp, type TestApp } from './helpers';

let h: TestApp;
let key: string;
let other: { api_key: string };
beforeAll(async () => {
  h = await makeApp({}, { workers: false });
  key = (await h.tenant()).api_key;
  other = await h.tenant();
});
afterAll(() => h.close());

const uuid = () => crypto.randomUUID();
const prefixed = (prefix: string) => () => `${prefix}_${uuid()}`;
const IBAN = 'PT50000201231234567890154';
const payable = { supplier_nif: '599000015', number: 'FT 1/1', issue_date: '2026-11-01', due_date: '2027-01-30', amount_cents: 100_000 };

interface Row {
  method: string;
  /** Elysia's route path (`:name` for each parameter) */
  path: string;
  /** a well-formed id of each id parameter (none of them exists) */
  ids: Record<string, () => string>;
  /** the value of each other path parameter (an enumeration) */
  others?: Record<string, string>;
  /** a valid body and query, so that a well-formed unknown id reaches the handler (404) */
  body?: unknown;
  query?: string;
}

/** Every route with a resource id in its path. */
const ROUTES: Row[] = [
  { method: 'GET', path: '/v1/decisions/:id', ids: { id: prefixed('dec') } },
  { method: 'GET', path: '/v1/aml/screenings/:id', ids: { id: prefixed('scr') } },
  { method: 'GET', path: '/v1/kyc/verifications/:id', ids: { id: prefixed('kyc') } },
  { method: 'GET', path: '/v1/esg/assessments/:id', ids: { id: uuid } },
  { method: 'GET', path: '/v1/csrd/reports/:id', ids: { id: uuid } },
  { method: 'GET', path: '/v1/csrd/reports/:id/pdf', ids: { id: uuid } },
  { method: 'GET', path: '/v1/erp-connector/connections/:id', ids: { id: uuid } },
  { method: 'DELETE', path: '/v1/erp-connector/connections/:id', ids: { id: uuid } },
  { method: 'GET', path: '/v1/erp-connector/sync/:run_id', ids: { run_id: uuid } },
  { method: 'GET', path: '/v1/saft/parse/:id', ids: { id: prefixed('saft') } },
  { method: 'GET', path: '/v1/audit/:operation_id', ids: { operation_id: prefixed('fop') } },
  { method: 'GET', path: '/v1/factoring/operation/:id', ids: { id: prefixed('fop') } },
  { method: 'POST', path: '/v1/factoring/operation/:id/:action', ids: { id: prefixed('fop') }, others: { action: 'approve' }, body: {} },
  { method: 'GET', path: '/v1/notice/cession/:id', ids: { id: prefixed('ntc') } },
  { method: 'GET', path: '/v1/notice/cession/:id/pdf', ids: { id: prefixed('ntc') } },
  { method: 'GET', path: '/v1/insurance/submissions/:id', ids: { id: prefixed('ins') } },
  { method: 'GET', path: '/v1/confirming/anchor/:id', ids: { id: prefixed('cfp') } },
  { method: 'POST', path: '/v1/confirming/anchor/:id/suppliers', ids: { id: prefixed('cfp') }, body: { supplier_nif: '599000015', name: 'Fornecedor, Lda', iban: IBAN } },
  { method: 'GET', path: '/v1/confirming/anchor/:id/suppliers', ids: { id: prefixed('cfp') } },
  { method: 'POST', path: '/v1/confirming/anchor/:id/payables', ids: { id: prefixed('cfp') }, body: { payables: [payable] } },
  { method: 'GET', path: '/v1/confirming/anchor/:id/payables', ids: { id: prefixed('cfp') } },
  { method: 'GET', path: '/v1/confirming/payables/:id', ids: { id: prefixed('cpy') } },
  { method: 'POST', path: '/v1/confirming/payables/:id/:action', ids: { id: prefixed('cpy') }, others: { action: 'accept' }, body: {} },
  { method: 'POST', path: '/v1/admin/oauth-clients/:id/rotate-secret', ids: { id: () => `oc_${uuid().replaceAll('-', '').slice(0, 24)}` }, body: {} },
  { method: 'DELETE', path: '/v1/admin/oauth-clients/:id', ids: { id: () => `oc_${uuid().replaceAll('-', '').slice(0, 24)}` } },
  { method: 'GET', path: '/v1/gdpr/requests/:id', ids: { id: prefixed('dsr') } },
  { method: 'GET', path: '/v1/gdpr/requests/:id/bundle', ids: { id: prefixed('dsr') } },
  { method: 'POST', path: '/v1/gdpr/requests/:id/:action', ids: { id: prefixed('dsr') }, others: { action: 'complete' }, body: {} },
  { method: 'GET', path: '/v1/admin/webhooks/:id', ids: { id: uuid } },
  { method: 'PATCH', path: '/v1/admin/webhooks/:id', ids: { id: uuid }, body: { description: 'renamed' } },
  { method: 'DELETE', path: '/v1/admin/webhooks/:id', ids: { id: uuid } },
  { method: 'POST', path: '/v1/admin/webhooks/:id/test', ids: { id: uuid }, body: {} },
  { method: 'POST', path: '/v1/admin/webhooks/:id/rotate-secret', ids: { id: uuid }, body: {} },
  { method: 'POST', path: '/v1/admin/webhooks/:id/replay', ids: { id: uuid }, query: 'since=2026-11-21T00:00:00Z', body: {} },
  { method: 'POST', path: '/v1/admin/webhooks/:id/deliveries/:delivery_id/retry', ids: { id: uuid, delivery_id: uuid }, body: {} },
  { method: 'GET', path: '/v1/admin/webhooks/:id/deliveries', ids: { id: uuid } },
];

/** Path parameters that are not resource ids: checked as fields (422 on path.<name>). */
const ENUMERATIONS: { method: string; path: string; param: string; good: string }[] = [
  { method: 'GET', path: '/v1/erp/:provider/invoices', param: 'provider', good: 'demo' },
  { method: 'GET', path: '/v1/erp/:provider/transactions', param: 'provider', good: 'demo' },
  { method: 'POST', path: '/v1/factoring/operation/:id/:action', param: 'action', good: 'approve' },
  { method: 'POST', path: '/v1/confirming/payables/:id/:action', param: 'action', good: 'accept' },
  { method: 'POST', path: '/v1/gdpr/requests/:id/:action', param: 'action', good: 'complete' },
];
/** Lookup keys with a documented form of their own (a NIF is 422 on its path, a NAICS code too). */
const LOOKUP_KEYS: { path: string; param: string }[] = [
  { path: '/v1/nif/:nif', param: 'nif' },
  { path: '/v1/credit-limit/:buyer_nif', param: 'buyer_nif' },
  { path: '/v1/sector-risk/:naics', param: 'naics' },
];

const MALFORMED = ['not-an-id', 'xyz', '%21%21', '123', '!', 'x'.repeat(300), '%C3%A9t%C3%A9', 'a%20b', "'%20OR%201=1--"];
/** well-formed except in case, or an id of another resource */
const nearMisses = (id: string) => [id.toUpperCase(), id.startsWith('oc_') || /^[0-9a-f-]{36}$/.test(id) ? `${id}0` : `zzz_${id.slice(id.indexOf('_') + 1)}`, `${id}x`];

const fill = (row: Row, values: Record<string, string>) => {
  let path = row.path;
  for (const [name, value] of Object.entries({ ...row.others, ...values })) path = path.replace(`:${name}`, value);
  return path + (row.query ? `?${row.query}` : '');
};
const send = (row: Row, values: Record<string, string>, k: string | null = key) => h.json(row.method, fill(row, values), { key: k ?? undefined, body: row.body });
const wellFormed = (row: Row) => Object.fromEntries(Object.entries(row.ids).map(([n, make]) => [n, make()]));

/** The 404 an unknown id gets: the §2.8 body, no fields. */
function expectUnknown(res: Awaited<ReturnType<typeof send>>, label: string) {
  try {
    const body = expectError(res, 404, 'resource_not_found');
    expect(Object.keys(body).sort()).toEqual(['code', 'docsUrl', 'message', 'requestId', 'status']);
    expect(body.docsUrl).toEndWith('/docs/errors#resource_not_found');
    expect(res.headers.get('content-type')).toBe('application/json;charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(body.message.length).toBeLessThan(200);
  } catch (err) {
    throw new Error(`${label}: ${(err as Error).message}`);
  }
}

describe('malformed resource ids in paths', () => {
  test('the table names every route with a path parameter, and every such parameter is classified', () => {
    const routes = (h.app.routes as { method: string; path: string }[]).filter((r) => r.path.startsWith('/v1/') && r.path.includes(':'));
    const key = (m: string, p: string) => `${m} ${p}`;
    const classified = new Set([...ROUTES.map((r) => key(r.method, r.path)), ...ENUMERATIONS.map((e) => key(e.method, e.path)), ...LOOKUP_KEYS.map((l) => key('GET', l.path))]);
    expect(routes.map((r) => key(r.method, r.path)).filter((k) => !classified.has(k))).toEqual([]);
    for (const r of routes) {
      const names = [...r.path.matchAll(/:([^/]+)/g)].map((m) => m[1]!);
      const row = ROUTES.find((x) => x.method === r.method && x.path === r.path);
      for (const name of names) {
        const kind = row?.ids[name] ? 'id' : ENUMERATIONS.some((e) => e.path === r.path && e.param === name) ? 'enum' : LOOKUP_KEYS.some((l) => l.path === r.path && l.param === name) ? 'lookup' : 'unclassified';
        expect(`${r.method} ${r.path} :${name} ${kind}`).not.toEndWith('unclassified');
      }
    }
  });

  test.each(ROUTES.map((r) => [`${r.method} ${r.path}`, r] as const))('%s: a malformed id is answered as an unknown one', async (_, row) => {
    // the reference: a well-formed id that does not exist
    expectUnknown(await send(row, wellFormed(row)), 'well-formed unknown id');
    for (const name of Object.keys(row.ids)) {
      const good = wellFormed(row);
      for (const bad of [...MALFORMED, ...nearMisses(good[name]!)]) expectUnknown(await send(row, { ...good, [name]: bad }), `:${name} = ${bad.slice(0, 40)}`);
    }
    // as for an unknown id: no key is 401 first, another tenant's key finds nothing either
    const malformed = { ...wellFormed(row), [Object.keys(row.ids)[0]!]: 'not-an-id' };
    expectError(await send(row, malformed, null), 401, 'missing_api_key');
    expectUnknown(await send(row, malformed, other.api_key), 'other tenant');
  });

  test('another tenant\u2019s webhook endpoint, a malformed id and an unknown one get the same answer', async () => {
    const created = await h.json('POST', '/v1/admin/webhooks', { key: other.api_key, body: { url: 'https://example.com/hook', enabled_events: ['*'] } });
    expect(created.status).toBe(201);
    const answers = await Promise.all([created.body.id, uuid(), 'not-an-id'].map((id) => h.json('GET', `/v1/admin/webhooks/${id}`, { key })));
    for (const a of answers) expectUnknown(a, 'webhook');
    expect(new Set(answers.map((a) => JSON.stringify({ ...a.body, requestId: undefined, message: undefined }))).size).toBe(1);
  });

  test.each(ENUMERATIONS.map((e) => [`${e.method} ${e.path} :${e.param}`, e] as const))('%s: a value not listed is 422 on its path', async (_, e) => {
    const row = ROUTES.find((r) => r.method === e.method && r.path === e.path);
    const ids = row ? wellFormed(row) : {};
    const path = Object.entries({ ...ids, [e.param]: 'nope' }).reduce((p, [n, v]) => p.replace(`:${n}`, v), e.path);
    const body = expectError(await h.json(e.method, path, { key, body: e.method === 'GET' ? undefined : {} }), 422, 'validation_failed');
    expect(body.fields.map((f: { path: string }) => f.path)).toEqual([`path.${e.param}`]);
    expect(body.fields[0].message).toStartWith('must be one of: ');
    if (row) {
      // beside a malformed id too, only the enumeration is named (an unknown id would not be either)
      const both = Object.entries({ ...ids, id: 'not-an-id', [e.param]: 'nope' }).reduce((p, [n, v]) => p.replace(`:${n}`, v), e.path);
      const b = expectError(await h.json(e.method, both, { key, body: {} }), 422, 'validation_failed');
      expect(b.fields.map((f: { path: string }) => f.path)).toEqual([`path.${e.param}`]);
    }
  });

  test.each(LOOKUP_KEYS.map((l) => [l.path, l] as const))('%s: a malformed lookup key is still 422 on its path', async (_, l) => {
    const body = expectError(await h.json('GET', l.path.replace(`:${l.param}`, 'abc'), { key }), 422, 'validation_failed');
    expect(body.fields.map((f: { path: string }) => f.path)).toEqual([`path.${l.param}`]);
  });

  test('the document says so: each id parameter, 404; a 422 only for what else could fail (a query parameter given twice, on every API route)', async () => {
    const doc = await h.json('GET', '/openapi.json');
    for (const row of ROUTES) {
      const op = doc.body.paths[row.path.replace(/:([^/]+)/g, '{$1}')][row.method.toLowerCase()];
      expect(op.responses['404'].description, `${row.method} ${row.path}`).toContain('resource_not_found');
      for (const name of Object.keys(row.ids)) expect(op.parameters.find((p: { name: string; in: string }) => p.in === 'path' && p.name === name).description).toContain('404 resource_not_found');
      // (the id never makes a 422: a malformed one is 404; the 422 is the query's, refused when repeated)
      expect(Object.keys(op.responses), `${row.method} ${row.path}`).toContain('422');
    }
    expect(Object.keys(doc.body.paths['/v1/erp/{provider}/invoices'].get.responses)).toContain('422');
  });
});
