import { RedisClient } from 'bun';
import type { Logger } from './log';

/**
 * Lua scripts on a Redis connection of their own, through Bun's native client: the rate limiter
 * sends one script call per event-loop turn on every keyed request's path, and the native client
 * encodes and parses in native code (measured against ioredis at 15 k req/s: the p99 ~11 → ~9 ms;
 * docs/benchmarks.md), and so do the announcements of group commits (cache-generations.ts) while
 * it is connected. Everything else (queues, health checks) stays on ioredis.
 *
 * Never queues while disconnected: a call then fails at once (the limiter falls back to in-process
 * limits) and a reconnection is attempted in the background, at most once a second.
 */
export class RedisScripts {
  private readonly client: RedisClient;
  private readonly shas = new Map<string, string>();
  private connecting: Promise<void> | null = null;
  private lastAttempt = 0;

  constructor(
    url: string,
    private readonly log: Logger,
  ) {
    // its own reconnection retried a refused connection for ~30 s inside connect(): reconnecting
    // is done here instead, on demand (run)
    this.client = new RedisClient(url, { enableOfflineQueue: false, autoReconnect: false, connectionTimeout: 2000 });
  }

  /** the first connection (awaited at start, so the shared limits apply from the first request) */
  connect(): Promise<void> {
    this.lastAttempt = Date.now();
    this.connecting ??= this.client.connect().finally(() => (this.connecting = null));
    return this.connecting;
  }

  /** whether a call would be sent now (it is never queued) */
  get connected(): boolean {
    return this.client.connected;
  }

  /** EVALSHA, loading the script once per connection if Redis does not know it (NOSCRIPT) */
  async run(script: string, keys: string[], argv: (string | number)[]): Promise<unknown> {
    if (!this.client.connected && !this.connecting && Date.now() - this.lastAttempt >= 1000) {
      this.connect().catch((err) => this.log.throttled('redis-scripts', 60_000, 'error', 'redis (scripts) unreachable', { error: (err as Error).message }));
    }
    let sha = this.shas.get(script);
    if (!sha) this.shas.set(script, (sha = new Bun.CryptoHasher('sha1').update(script).digest('hex')));
    const args = [sha, String(keys.length), ...keys, ...argv.map(String)];
    try {
      return await this.client.send('EVALSHA', args);
    } catch (err) {
      if (!(err as Error).message?.startsWith('NOSCRIPT')) throw err;
      await this.client.send('SCRIPT', ['LOAD', script]);
      return this.client.send('EVALSHA', args);
    }
  }

  /** a round trip on this connection (connecting first if it is down): health checks */
  async ping(): Promise<void> {
    if (!this.client.connected) await this.connect();
    await this.client.send('PING', []);
  }

  close() {
    this.client.close();
  }
}
