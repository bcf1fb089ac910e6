/**
 * A HEAD answers a GET's status and headers without its body: charged to the rate limits as the GET
 * is, never billed (UsageMeter.withhold). Every metered GET of the catalog, side by side with its GET.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { makeApp, type TestApp } from './helpers';

let h: TestApp;
beforeAll(async () => {
  h = await makeApp();
});
afterAll(() => h.close());

const usageOf = async (tenantId: string) => {
  await h.ctx.usage.flush();
  const u = h.ctx.database.t.usageRecords;
  return (await h.ctx.database.db.select().from(u).where(eq(u.tenantId, tenantId))).map((r) => [r.meter, r.quantity]).sort();
};

describe('HEAD of a metered GET', () => {
  const routes: [string, string][] = [
    ['/v1/credit-limit/599000015?term_days=90', 'credit_limit'],
    ['/v1/index/spreads?tier=B%2B&term_days=90', 'spreads_index'],
    ['/v1/sector-risk/332', 'sector_risk'],
    ['/v1/nif/599000023', 'nif_lookup'],
  ];
  for (const [path, meter] of routes)
    test(`${path}: the GET's status and headers without a body; the GET is billed ${meter}, the HEAD nothing; both spend the budget`, async () => {
      const getter = await h.tenant({ rateLimitPerMinute: 1000 });
      const header = await h.tenant({ rateLimitPerMinute: 1000 });
      const get = await h.call('GET', path, { key: getter.api_key });
      const head = await h.call('HEAD', path, { key: header.api_key });
      expect(get.status).toBe(200);
      expect(head.status).toBe(200);
      expect(await head.text()).toBe('');
      expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
      expect(Number(head.headers.get('x-ratelimit-remaining'))).toBe(Number(get.headers.get('x-ratelimit-remaining')));
      expect(await usageOf(getter.tenant_id)).toEqual([[meter, 1]]);
      expect(await usageOf(header.tenant_id)).toEqual([]);
      // the next GET of the same tenant is billed again: the HEAD's hold ended with its response
      expect((await h.call('GET', path, { key: header.api_key })).status).toBe(200);
      expect(await usageOf(header.tenant_id)).toEqual([[meter, 1]]);
    });
});
