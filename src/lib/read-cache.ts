import type { Database } from '../db/client';

/**
 * An in-process cache of hot reads (the key lookup, the latest score) that never serves a value
 * older than the last commit that changed it. Each entry is tagged with what it was loaded under,
 * and is served only while that is current:
 * - SQLite without a caller generation: the database's change signal (`changeEpoch`), which moves
 *   on every commit of any connection or process, so any commit drops the entry.
 * - SQLite with a caller generation (Database.localGeneration: the tenant's count of group commits
 *   that marked it, or plainCommitsGeneration): the change signal without those group commits
 *   (`unmarkedEpoch`) and that generation, so a batch of new scores drops only what it marked.
 * - PostgreSQL (no such signal): the caller passes the epoch, i.e. the tenant's cache generation
 *   that this very request read from Redis with its rate-limit decision (cache-generations.ts).
 *   Without one (no Redis, Redis failing, or a caller outside a request), nothing is cached.
 * A value may be tagged only with what was current before its load started.
 */
export type Epoch = number | null;

/**
 * The generation for reads that only plain transactions change, never a group commit (keys and
 * tenants, books, re-score counts): on SQLite they stay cached across group commits (under
 * `unmarkedEpoch` alone); on PostgreSQL only under a generation the caller read from Redis.
 */
export function plainCommitsGeneration(database: Pick<Database, 'unmarkedEpoch'>, given?: Epoch): Epoch | undefined {
  return given ?? (database.unmarkedEpoch() !== null ? 0 : undefined);
}

type Entry<V> = { value: V; /** SQLite: changeEpoch, or unmarkedEpoch with gen */ epoch: number | null; gen: number | null; loadedAtMs: number };

export class ReadCache<V> {
  private entries = new Map<string, Entry<V>>();
  /** loads in flight, by key, with the tag they began under (shared by get) */
  private loading = new Map<string, { epoch: number | null; gen: number | null; promise: Promise<V | null> }>();

  constructor(
    private readonly database: Pick<Database, 'changeEpoch' | 'unmarkedEpoch'>,
    private readonly maxEntries = 10_000,
    /** a backstop for caller-given generations (an announcement still failing, Redis restored from an old snapshot) */
    private readonly maxAgeMs = 10_000,
  ) {}

  /** what an entry loaded now would be tagged with; null: not cacheable */
  private tag(given: Epoch | undefined): { epoch: number | null; gen: number | null } | null {
    const gen = given ?? null;
    if (gen !== null) {
      const unmarked = this.database.unmarkedEpoch();
      return { epoch: unmarked, gen };
    }
    const local = this.database.changeEpoch();
    return local === null ? null : { epoch: local, gen: null };
  }

  /** The cached value if it is current for `epoch` (undefined: not cached). Synchronous. */
  peek(key: string, epoch?: Epoch): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    const gen = epoch ?? null;
    if (gen === null) {
      // without a generation only the full signal can vouch for it (nothing at all committed since)
      const local = this.database.changeEpoch();
      return local !== null && entry.gen === null && entry.epoch === local ? entry.value : undefined;
    }
    if (entry.gen !== gen) return undefined;
    const unmarked = this.database.unmarkedEpoch();
    if (unmarked !== null) return entry.epoch === unmarked ? entry.value : undefined;
    // the age backstop is for generations from Redis only: the local signal cannot miss a commit
    return Date.now() - entry.loadedAtMs < this.maxAgeMs ? entry.value : undefined;
  }

  /**
   * The cached value and the generation it was loaded under, whether or not that is still current
   * (PostgreSQL): for a read that learns the current generation only later in the request (the key
   * lookup comes before the rate-limit call that returns the tenant's generation), and must then
   * confirm it.
   */
  candidate(key: string): { value: V; epoch: number } | undefined {
    const entry = this.entries.get(key);
    return entry && entry.gen !== null && Date.now() - entry.loadedAtMs < this.maxAgeMs ? { value: entry.value, epoch: entry.gen } : undefined;
  }

  /**
   * The cached value if current, else loaded. Callers that miss the same key under the same tag
   * while a load of it is in flight share that load: it began after everything that tag vouches
   * for, so it is as current for them. (After a commit, every request of a busy turn used to miss
   * at once: ~40 reads of one key.) `load` must be a plain read: a shared one runs once.
   */
  get(key: string, load: () => Promise<V | null>, epoch?: Epoch): Promise<V | null> {
    const hit = this.peek(key, epoch);
    if (hit !== undefined) return Promise.resolve(hit);
    const before = this.tag(epoch);
    if (before === null) return this.loadAndKeep(key, load, epoch, before);
    const shared = this.loading.get(key);
    if (shared && shared.epoch === before.epoch && shared.gen === before.gen) return shared.promise;
    const promise = this.loadAndKeep(key, load, epoch, before);
    const done = () => {
      if (this.loading.get(key)?.promise === promise) this.loading.delete(key);
    };
    promise.then(done, done);
    this.loading.set(key, { ...before, promise });
    return promise;
  }

  /** Loads and caches whatever is cached now (for an entry the caller found current but too old for its own rule); never shared. */
  load(key: string, load: () => Promise<V | null>, epoch?: Epoch): Promise<V | null> {
    return this.loadAndKeep(key, load, epoch, this.tag(epoch));
  }

  private async loadAndKeep(key: string, load: () => Promise<V | null>, epoch: Epoch | undefined, before: { epoch: number | null; gen: number | null } | null): Promise<V | null> {
    const value = await load();
    // never cache a miss; with the database's own signal, only if nothing was committed meanwhile
    if (value !== null && before !== null) {
      const after = this.tag(epoch);
      if (after && after.epoch === before.epoch) {
        if (this.entries.size >= this.maxEntries) this.entries.clear();
        this.entries.set(key, { value, epoch: before.epoch, gen: before.gen, loadedAtMs: Date.now() });
      }
    }
    return value;
  }
}
