/**
 * The rate limiter across a Redis outage (issue 17 item 12): a 60/min key used up, Redis stopped,
 * then restarted empty, all within the same minute. Before, the in-process fallback started from a
 * full budget and so did the emptied Redis: 3 × 60 requests got through (186 seen from outside).
 * Now the fallback starts from the shared state it last saw and merges what it admitted back into
 * Redis before deciding there again: the key gets its 60, no more (one process; with P processes
 * the bound during an outage is P × the limit, documented).
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, makeApp, startRedis, waitPort, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

describe('rate limit across a Redis restart', () => {
  const port = freePort();
  let dir: string;
  let redis: ReturnType<typeof Bun.spawn>;
  let h: TestApp;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rl-outage-'));
    redis = startRedis(port, dir);
    await waitPort(port, true);
    h = await makeApp({ REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_PREFIX: 'rlo' }, { workers: false });
  }, 30_000);
  afterAll(async () => {
    await h?.close();
    redis?.kill();
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  test('a 60/min key gets 60 in the minute whatever Redis does meanwhile', async () => {
    const t = await h.tenant({ rateLimitPerMinute: 60 });
    const burst = async (n: number) => {
      let ok = 0;
      for (let i = 0; i < n; i++) if ((await h.call('GET', '/v1/admin/keys', { key: t.api_key })).status === 200) ok++;
      return ok;
    };
    const before = await burst(70);
    expect(before).toBe(60);

    redis.kill('SIGKILL');
    await waitPort(port, false);
    h.clock.advance(5_000); // 5 of the minute's 60 budget back
    const during = await burst(30);

    redis = startRedis(port, dir); // back, empty
    await waitPort(port, true);
    h.clock.advance(5_000);
    let after = 0;
    for (let i = 0; i < 40; i++) {
      const r = await h.call('GET', '/v1/admin/keys', { key: t.api_key });
      if (r.status === 200) after++;
      await Bun.sleep(i < 5 ? 200 : 0); // let the scripts' connection come back
    }
    // 10 s of a 60/min budget gave back 10 requests in all, whoever decided them
    expect(during + after).toBeLessThanOrEqual(10);
    expect(during).toBeLessThanOrEqual(5);
    expect(h.ctx.limiter.decisions.fallback).toBeGreaterThan(0);
    expect(h.ctx.limiter.decisions.redis).toBeGreaterThan(0);
  }, 60_000);
});
