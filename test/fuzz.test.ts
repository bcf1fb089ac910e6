/**
 * Seeded, bounded fuzz of every operation in the OpenAPI document (issue 17 item 8): malformed
 * bodies, wrong types, huge values, deep nesting, prototype keys, NUL bytes and long strings, in
 * bodies, path parameters and queries. The assertion: no 5xx, and every JSON error is the §2.8 body.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { mulberry32 } from '../src/lib/prng';
import { makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

const SEED = Number(process.env.FUZZ_SEED ?? 20261125);
const CASES_PER_OPERATION = 12;

let h: TestApp;
let key: string;
beforeAll(async () => {
  h = await makeApp();
  key = (await h.tenant()).api_key;
});
afterAll(() => h.close());

const rand = mulberry32(SEED);
const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
const nest = (n: number) => JSON.parse('['.repeat(n) + '1' + ']'.repeat(n));
const hostileValues = (): unknown[] => [
  null, true, -1, 0, 1e308, -1e308, 2 ** 53 + 1, 1.5, '', ' ', 'x'.repeat(100_000), '\u0000', 'a\u0000b', '\ud800', '😀'.repeat(1000),
  '599000015', '2026-13-45T99:99:99Z', '../../etc/passwd', "'; drop table tenants; --", '<script>alert(1)</script>',
  [], [1, 'a', null], {}, { toString: 'x' }, { valueOf: 1 }, { __proto__: { admin: true } }, { constructor: { prototype: {} } },
  nest(20), { a: { b: { c: { d: {} } } } },
];
const rawBodies = ['', '{', '[]', 'null', '"text"', '{"a":1,}', '{"__proto__":{"polluted":1}}', '\u0000', '{"nif":"599000015"}x', '['.repeat(100) + ']'.repeat(100)];

function mutate(schema: any): unknown {
  const props = schema?.properties ? Object.keys(schema.properties) : [];
  const body: Record<string, unknown> = {};
  for (const p of props) if (rand() < 0.7) body[p] = pick(hostileValues());
  if (rand() < 0.3) body[pick(['__proto__', 'constructor', 'prototype', 'x'.repeat(300)])] = pick(hostileValues());
  return body;
}

describe('fuzz of every operation', () => {
  test(`seed ${SEED}: no 5xx, every JSON error is the §2.8 body`, async () => {
    const doc = (await h.json('GET', '/openapi.json')).body;
    const failures: string[] = [];
    let calls = 0;
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
        const schema = op.requestBody?.content?.['application/json']?.schema;
        for (let i = 0; i < CASES_PER_OPERATION; i++) {
          const param = () => encodeURIComponent(String(pick(['599000015', 'x'.repeat(5000), '%00', '..', '-1', 'null', '\u0000', '😀', '{}', 'dec_00000000-0000-7000-8000-000000000000'])));
          const concrete = path.replace(/\{[^}]+\}/g, param);
          const query = rand() < 0.5 ? `?${pick(['limit', 'cursor', 'since', 'nif', 'tier', 'term_days', 'group_by', 'from'])}=${param()}&${pick(['a', '__proto__', 'limit'])}=${param()}` : '';
          const opts: Parameters<TestApp['call']>[2] = { key };
          if (method !== 'get' && method !== 'delete') {
            if (rand() < 0.3) opts.rawBody = pick(rawBodies);
            else opts.body = schema ? mutate(schema) : pick(hostileValues());
            opts.headers = { 'content-type': pick(['application/json', 'application/json', 'text/plain', 'application/x-www-form-urlencoded']) };
          }
          const res = await h.call(method.toUpperCase(), concrete + query, opts);
          calls++;
          const text = await res.text();
          const where = `${method.toUpperCase()} ${concrete.slice(0, 80)}${query.slice(0, 60)} ${JSON.stringify(opts.body ?? opts.rawBody ?? '').slice(0, 120)}`;
          // 501 not_yet_available is the documented answer of a roadmap entry (POST /v1/bond/issue), not a fault
          const documented501 = res.status === 501 && text.includes('"code":"not_yet_available"');
          if (res.status >= 500 && !documented501) failures.push(`${res.status} ${where} → ${text.slice(0, 200)}`);
          else if (res.status >= 400 && (res.headers.get('content-type') ?? '').includes('application/json')) {
            let b: any;
            try {
              b = JSON.parse(text);
            } catch {
              failures.push(`unparsable error body ${where}`);
              continue;
            }
            if (typeof b.code !== 'string' || b.status !== res.status || typeof b.message !== 'string' || b.requestId !== res.headers.get('x-request-id'))
              failures.push(`not §2.8 ${res.status} ${where} → ${text.slice(0, 200)}`);
          }
        }
      }
    }
    expect(calls).toBeGreaterThan(300);
    expect(failures).toEqual([]);
  }, 60_000);
});
