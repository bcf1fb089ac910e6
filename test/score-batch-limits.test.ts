/**
 * POST /v1/score/batch against the key's per-minute rate limit and the tenant's daily quota: a batch
 * of N items weighs N requests (admission charges one, the handler the other N − 1, all or
 * nothing); refused, it is the guard's 429 (same code, body and headers), nothing scored or billed,
 * and its Idempotency-Key is not spent. On the in-process limiter and on the Redis one (with
 * leases on PostgreSQL), on either database (TEST_DB).
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { and, eq } from 'drizzle-orm';
import { expectError, makeApp, REDIS_TEST_URL, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

const HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit', 'ratelimit-policy', 'retry-after'];
const nifs = ['599000015', '599000023', '599000031'];
const itemsOf = (n: number) => Array.from({ length: n }, (_, i) => ({ nif: nifs[i % nifs.length]! }));

for (const limiter of ['in-process', 'redis'] as const) {
  describe(`POST /v1/score/batch weighs its items (${limiter} limiter)`, () => {
    let h: TestApp;
    beforeAll(async () => {
      h = await makeApp(limiter === 'redis' ? { REDIS_URL: REDIS_TEST_URL } : {}, { workers: false });
    });
    afterAll(() => h.close());
    const batch = (key: string, body: unknown, headers: Record<string, string> = {}) => h.json('POST', '/v1/score/batch', { key, body, headers });
    const remaining = (r: { headers: Headers }) => r.headers.get('x-ratelimit-remaining');
    /** what the tenant has stored and been billed for */
    const footprint = async (tenantId: string) => {
      const { db, t: tb } = h.ctx.database;
      await h.ctx.usage.flush();
      const rows = await db.select().from(tb.scoreResults).where(eq(tb.scoreResults.tenantId, tenantId));
      const usage = await db.select().from(tb.usageRecords).where(and(eq(tb.usageRecords.tenantId, tenantId), eq(tb.usageRecords.meter, 'score')));
      return { stored: rows.length, billed: usage.reduce((n, u) => n + u.quantity, 0) };
    };

    test('per-minute limit: N items consume N; a batch the budget cannot hold is 429 rate_limited, the guard\'s shape, nothing scored or billed', async () => {
      const t = await h.tenant({ rateLimitPerMinute: 10 });
      const ok = await batch(t.api_key, { items: itemsOf(4), refresh: 'force_refresh' });
      expect(ok.status).toBe(200);
      expect(remaining(ok)).toBe('6');
      expect(ok.headers.get('ratelimit')).toStartWith('"minute";r=6;');
      expect(ok.headers.get('retry-after')).toBeNull();
      const before = await footprint(t.tenant_id);
      expect(before).toEqual({ stored: 3, billed: 4 });

      // 7 items with 6 left: refused whole; the call itself counts one, as any refused call does
      const refused = await batch(t.api_key, { items: itemsOf(7), refresh: 'force_refresh' });
      const body = expectError(refused, 429, 'rate_limited');
      expect(body.message).toContain('a batch weighs one request per item');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(remaining(refused)).toBe('5');
      expect(refused.headers.get('x-ratelimit-limit')).toBe('10');
      expect(await footprint(t.tenant_id)).toEqual(before);

      // the same shape as a single call's 429: same body fields, same headers
      const five = await batch(t.api_key, { items: itemsOf(5) });
      expect(five.status).toBe(200);
      expect(remaining(five)).toBe('0');
      const single = await h.json('POST', '/v1/score', { key: t.api_key, body: { nif: '599000015' } });
      const singleBody = expectError(single, 429, 'rate_limited');
      expect(Object.keys(body).sort()).toEqual(Object.keys(singleBody).sort());
      for (const name of HEADERS) expect([name, refused.headers.get(name) !== null]).toEqual([name, single.headers.get(name) !== null]);

      // more items than the limit can ever take: the request's own problem (422, no Retry-After), nothing charged past the call
      h.clock.advance(60_000);
      const tooManyRes = await batch(t.api_key, { items: itemsOf(11) });
      const tooMany = expectError(tooManyRes, 422, 'validation_failed');
      expect(tooMany.fields).toEqual([{ path: 'items', message: "a batch weighs one request per item: at most 10 items (this key's rate limit per minute); send smaller batches" }]);
      expect(tooManyRes.headers.get('retry-after')).toBeNull();
      // the whole budget (one was taken by the refused call)
      h.clock.advance(60_000);
      const full = await batch(t.api_key, { items: itemsOf(10) });
      expect(full.status).toBe(200);
      expect(remaining(full)).toBe('0');
      expect(full.body.summary.succeeded).toBe(10);
      // decided where this block says
      if (limiter === 'redis') expect([h.ctx.limiter.decisions.redis > 0, h.ctx.limiter.decisions.fallback]).toEqual([true, 0]);
      else expect(h.ctx.limiter.decisions.redis).toBe(0);
    });

    test('a client that waits the 429\'s Retry-After and sends the same batch again gets it through (the retry\'s admission unit counted)', async () => {
      const t = await h.tenant({ rateLimitPerMinute: 10 });
      expect((await batch(t.api_key, { items: itemsOf(2) })).status).toBe(200); // 8 left
      const refused = await batch(t.api_key, { items: itemsOf(10) }); // its admission: 7 left, 9 more asked
      expectError(refused, 429, 'rate_limited');
      const wait = Number(refused.headers.get('retry-after'));
      expect(wait).toBeGreaterThanOrEqual(1);
      h.clock.advance(wait * 1000);
      const again = await batch(t.api_key, { items: itemsOf(10) });
      expect(again.status).toBe(200);
      expect(again.body.summary.succeeded).toBe(10);
    });

    test('daily quota: N items count N; a batch the day cannot hold is 429 daily_quota_exceeded with Retry-After to UTC midnight, nothing scored or billed', async () => {
      const t = await h.tenant({ dailyQuota: 10 });
      const ok = await batch(t.api_key, { items: itemsOf(6) });
      expect(ok.status).toBe(200);
      // fewer requests left of the quota than of the minute: the trio describes the quota
      expect([ok.headers.get('x-ratelimit-limit'), remaining(ok)]).toEqual(['10', '4']);
      expect(ok.headers.get('ratelimit')).toContain('"daily";r=4;');
      const before = await footprint(t.tenant_id);

      const refused = await batch(t.api_key, { items: itemsOf(5), refresh: 'force_refresh' });
      const body = expectError(refused, 429, 'daily_quota_exceeded');
      expect(body.message).toContain('cannot hold this batch');
      const midnight = Date.UTC(2026, 10, 23) / 1000;
      expect(Number(refused.headers.get('retry-after'))).toBe(Math.ceil(midnight - h.clock.ms / 1000));
      expect([refused.headers.get('x-ratelimit-limit'), remaining(refused)]).toEqual(['10', '3']); // the refused call's one
      expect(refused.headers.get('ratelimit')).toContain('"daily";r=3;');
      expect(await footprint(t.tenant_id)).toEqual(before);

      const rest = await batch(t.api_key, { items: itemsOf(3) });
      expect(rest.status).toBe(200);
      expect(remaining(rest)).toBe('0');
      const single = expectError(await h.json('POST', '/v1/score', { key: t.api_key, body: { nif: '599000015' } }), 429, 'daily_quota_exceeded');
      expect(Object.keys(body).sort()).toEqual(Object.keys(single).sort());
      // larger than the whole quota: 422, said so
      const other = await h.tenant({ dailyQuota: 5 });
      expect(expectError(await batch(other.api_key, { items: itemsOf(6) }), 422, 'validation_failed').fields).toEqual([
        { path: 'items', message: "a batch weighs one request per item: at most 5 items (the tenant's daily quota); send smaller batches" },
      ]);
    });

    test('a refused batch does not spend its Idempotency-Key; a replay weighs one request, an envelope 422 one', async () => {
      const t = await h.tenant({ rateLimitPerMinute: 10 });
      const body = { items: itemsOf(3), refresh: 'force_refresh' };
      const first = await batch(t.api_key, body, { 'idempotency-key': 'b-1' });
      expect(first.status).toBe(200);
      expect(remaining(first)).toBe('7');
      const replay = await batch(t.api_key, body, { 'idempotency-key': 'b-1' });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(remaining(replay)).toBe('6');
      expectError(await batch(t.api_key, { items: [] }), 422, 'validation_failed');
      const after422 = await batch(t.api_key, { items: itemsOf(1) });
      expect(remaining(after422)).toBe('4');
      // 9 items with 4 left: 429, and the key is free for the same batch later
      const big = { items: itemsOf(9) };
      expectError(await batch(t.api_key, big, { 'idempotency-key': 'b-2' }), 429, 'rate_limited');
      h.clock.advance(60_000);
      const later = await batch(t.api_key, big, { 'idempotency-key': 'b-2' });
      expect(later.status).toBe(200);
      expect(later.headers.get('idempotent-replayed')).toBeNull();
      expect(later.body.summary.succeeded).toBe(9);
    });

    test('a key far from its limits (leased on the Redis limiter with PostgreSQL): the headers count every unit exactly', async () => {
      const t = await h.tenant({ rateLimitPerMinute: 1000, dailyQuota: 100_000 });
      for (let i = 0; i < 5; i++) expect((await h.call('POST', '/v1/score', { key: t.api_key, body: { nif: '599000015' } })).status).toBe(200);
      const ok = await batch(t.api_key, { items: itemsOf(300) });
      expect(ok.status).toBe(200);
      expect(remaining(ok)).toBe('695');
      const next = await h.call('POST', '/v1/score', { key: t.api_key, body: { nif: '599000015' } });
      expect(next.headers.get('x-ratelimit-remaining')).toBe('694');
      const refused = await batch(t.api_key, { items: itemsOf(800) });
      expectError(refused, 429, 'rate_limited');
      expect(remaining(refused)).toBe('693');
      const fits = await batch(t.api_key, { items: itemsOf(693) });
      expect(fits.status).toBe(200);
      expect(remaining(fits)).toBe('0');
    });
  });
}
