import type { Database } from '../db/client';

/**
 * An in-process cache of hot reads (the key lookup, the latest score) that never serves a value
 * older than the last commit that changed it. Each entry is tagged with the epoch it was loaded
 * under, and is served only while that epoch is current:
 * - SQLite: the database's change signal (`changeEpoch`), which moves on every commit of any
 *   connection or process, so any commit drops every entry.
 * - PostgreSQL (no such signal): the caller passes the epoch, i.e. the tenant's cache generation
 *   that this very request read from Redis with its rate-limit decision (cache-generations.ts).
 *   Without one (no Redis, Redis failing, or a caller outside a request), nothing is cached.
 * A value may be tagged with an epoch only if its load started after that epoch was read.
 */
export type Epoch = number | null;

export class ReadCache<V> {
  private entries = new Map<string, { value: V; epoch: number; loadedAtMs: number }>();

  constructor(
    private readonly database: Pick<Database, 'changeEpoch'>,
    private readonly maxEntries = 10_000,
    /** a backstop for caller-given generations (an announcement still failing, Redis restored from an old snapshot) */
    private readonly maxAgeMs = 10_000,
  ) {}

  /** The epoch a read is checked against: the database's own signal where it has one, else the caller's. */
  private epoch(given: Epoch | undefined): Epoch {
    return this.database.changeEpoch() ?? given ?? null;
  }

  /** The cached value if it is current for `epoch` (undefined: not cached). Synchronous. */
  peek(key: string, epoch?: Epoch): V | undefined {
    const local = this.database.changeEpoch();
    const e = local ?? epoch ?? null;
    if (e === null) return undefined;
    const entry = this.entries.get(key);
    if (!entry || entry.epoch !== e) return undefined;
    // the age backstop is for caller-given generations only: the local signal cannot miss a commit
    return local !== null || Date.now() - entry.loadedAtMs < this.maxAgeMs ? entry.value : undefined;
  }

  /**
   * The cached value and the epoch it was loaded under, whether or not that epoch is still current:
   * for a read that learns the current epoch only later in the request (the key lookup comes before
   * the rate-limit call that returns the tenant's generation), and must then confirm it.
   */
  candidate(key: string): { value: V; epoch: number } | undefined {
    const entry = this.entries.get(key);
    return entry && Date.now() - entry.loadedAtMs < this.maxAgeMs ? entry : undefined;
  }

  async get(key: string, load: () => Promise<V | null>, epoch?: Epoch): Promise<V | null> {
    const hit = this.peek(key, epoch);
    if (hit !== undefined) return hit;
    return this.load(key, load, epoch);
  }

  /** Loads and caches whatever is cached now (for an entry the caller found current but too old for its own rule). */
  async load(key: string, load: () => Promise<V | null>, epoch?: Epoch): Promise<V | null> {
    const before = this.epoch(epoch);
    const value = await load();
    // never cache a miss; with the database's own signal, only if nothing was committed meanwhile
    if (value !== null && before !== null && this.epoch(epoch) === before) {
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(key, { value, epoch: before, loadedAtMs: Date.now() });
    }
    return value;
  }
}
