import { TurnQueue } from './turn-end';

/**
 * Reads of one event-loop turn answered by one query (one round trip, one socket write): for hot
 * reads on PostgreSQL, where each query costs this process a write and a read on its socket (tens
 * of µs of kernel time on a loopback) whatever the query. Calls with the same key share a row.
 * `read` gets the distinct keys of the turn and answers one value per key, in order.
 */
export class TurnReads<K, V> {
  private readonly queue: TurnQueue<{ key: K; resolve: (v: V) => void; reject: (e: unknown) => void }>;

  constructor(
    read: (keys: K[]) => Promise<V[]>,
    id: (key: K) => string,
    maxKeys = 500,
  ) {
    this.queue = new TurnQueue((items) => {
      const byId = new Map<string, { key: K; waiters: typeof items }>();
      for (const item of items) {
        const k = id(item.key);
        const group = byId.get(k);
        if (group) group.waiters.push(item);
        else byId.set(k, { key: item.key, waiters: [item] });
      }
      const groups = [...byId.values()];
      for (let i = 0; i < groups.length; i += maxKeys) {
        const chunk = groups.slice(i, i + maxKeys);
        read(chunk.map((g) => g.key)).then(
          (values) => chunk.forEach((g, j) => g.waiters.forEach((w) => w.resolve(values[j]!))),
          (err) => chunk.forEach((g) => g.waiters.forEach((w) => w.reject(err))),
        );
      }
    });
  }

  get(key: K): Promise<V> {
    return new Promise<V>((resolve, reject) => this.queue.push({ key, resolve, reject }));
  }
}
