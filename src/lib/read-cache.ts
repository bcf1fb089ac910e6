import type { Database } from '../db/client';

/**
 * An in-process cache of hot reads (the key lookup, the latest score) that is exact: every entry
 * is dropped as soon as anything is committed to the database, by this process or any other
 * (`changeEpoch`). On PostgreSQL the epoch is unknown, so nothing is cached there.
 */
export class ReadCache<V> {
  private entries = new Map<string, V>();
  private epoch: number | null = null;

  constructor(
    private readonly database: Pick<Database, 'changeEpoch'>,
    private readonly maxEntries = 10_000,
  ) {}

  /** The cached value, without loading (undefined: not cached, or caching is off). Synchronous. */
  peek(key: string): V | undefined {
    const epoch = this.database.changeEpoch();
    if (epoch === null) return undefined;
    if (epoch !== this.epoch) {
      this.entries.clear();
      this.epoch = epoch;
      return undefined;
    }
    return this.entries.get(key);
  }

  async get(key: string, load: () => Promise<V | null>): Promise<V | null> {
    const hit = this.peek(key);
    if (hit !== undefined) return hit;
    const epoch = this.epoch; // as peek just read it; null when caching is off
    const value = await load();
    // only store if nothing was committed while loading, and never cache a miss
    if (value !== null && epoch !== null && this.database.changeEpoch() === epoch) {
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(key, value);
    }
    return value;
  }
}
