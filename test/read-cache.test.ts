/**
 * ReadCache's shared loads: callers missing the same key under the same tag share the load in
 * flight; a caller that comes after a commit (another tag) never gets a load that began before it.
 */
import { describe, expect, test } from 'bun:test';
import { ReadCache } from '../src/lib/read-cache';

/** a database whose change signal the test moves by hand */
function signal(initial: number | null = 1) {
  const s = { epoch: initial as number | null, unmarked: null as number | null };
  return { s, db: { changeEpoch: () => s.epoch, unmarkedEpoch: () => s.unmarked } };
}

/** a load the test finishes by hand, counting how many were started */
function loads<V>() {
  const started: { resolve: (v: V | null) => void; reject: (e: unknown) => void }[] = [];
  const load = () => new Promise<V | null>((resolve, reject) => started.push({ resolve, reject }));
  return { started, load };
}

describe('ReadCache: concurrent misses of one key', () => {
  test('40 callers under the same signal share one load and all get its value; the value is then cached', async () => {
    const { db } = signal();
    const cache = new ReadCache<{ v: number }>(db);
    const { started, load } = loads<{ v: number }>();
    const all = Array.from({ length: 40 }, () => cache.get('k', load));
    expect(started.length).toBe(1);
    started[0]!.resolve({ v: 7 });
    const values = await Promise.all(all);
    expect(values.every((v) => v?.v === 7)).toBe(true);
    expect(await cache.get('k', load)).toEqual({ v: 7 });
    expect(started.length).toBe(1);
  });

  test('a caller that comes after a commit does not share a load begun before it: it loads again and gets the newer value', async () => {
    const { s, db } = signal();
    const cache = new ReadCache<string>(db);
    const { started, load } = loads<string>();
    const before = cache.get('k', load);
    s.epoch = 2; // a commit lands while the first load is in flight
    const after = cache.get('k', load);
    expect(started.length).toBe(2);
    started[0]!.resolve('old');
    started[1]!.resolve('new');
    expect(await before).toBe('old');
    expect(await after).toBe('new');
    // the first load began before the commit: not cached; the second is
    expect(await cache.get('k', load)).toBe('new');
    expect(started.length).toBe(2);
  });

  test('different keys are loaded apart', async () => {
    const { db } = signal();
    const cache = new ReadCache<string>(db);
    const { started, load } = loads<string>();
    const a = cache.get('a', load);
    const b = cache.get('b', load);
    expect(started.length).toBe(2);
    started[0]!.resolve('A');
    started[1]!.resolve('B');
    expect([await a, await b]).toEqual(['A', 'B']);
  });

  test('a failed load fails every caller that shared it, and the next caller loads again', async () => {
    const { db } = signal();
    const cache = new ReadCache<string>(db);
    const { started, load } = loads<string>();
    const shared = [cache.get('k', load), cache.get('k', load)];
    expect(started.length).toBe(1);
    started[0]!.reject(new Error('database down'));
    const settled = await Promise.allSettled(shared);
    expect(settled.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : r.status))).toEqual(['database down', 'database down']);
    const next = cache.get('k', load);
    expect(started.length).toBe(2);
    started[1]!.resolve('back');
    expect(await next).toBe('back');
  });

  test('with a generation from Redis (PostgreSQL): the same generation shares, another does not', async () => {
    const { db } = signal(null);
    const cache = new ReadCache<string>(db);
    const { started, load } = loads<string>();
    const a = cache.get('k', load, 5);
    const b = cache.get('k', load, 5);
    const c = cache.get('k', load, 6);
    expect(started.length).toBe(2);
    started[0]!.resolve('gen5');
    started[1]!.resolve('gen6');
    expect([await a, await b, await c]).toEqual(['gen5', 'gen5', 'gen6']);
  });

  test('without any signal or generation nothing is shared (nor cached): each caller reads', async () => {
    const { db } = signal(null);
    const cache = new ReadCache<string>(db);
    const { started, load } = loads<string>();
    const a = cache.get('k', load);
    const b = cache.get('k', load);
    expect(started.length).toBe(2);
    started.forEach((s, i) => s.resolve(`v${i}`));
    expect([await a, await b]).toEqual(['v0', 'v1']);
  });

  test('load() (a caller that needs its own load, e.g. a decision that stores and bills) is never shared', async () => {
    const { db } = signal();
    const cache = new ReadCache<string>(db);
    const { started, load } = loads<string>();
    const a = cache.load('k', load);
    const b = cache.load('k', load);
    const c = cache.get('k', load);
    expect(started.length).toBe(3);
    started.forEach((s, i) => s.resolve(`v${i}`));
    expect([await a, await b, await c]).toEqual(['v0', 'v1', 'v2']);
  });
});
