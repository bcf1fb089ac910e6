import Redis from 'ioredis';
import type { Config } from './config';
import { openDatabase, type Database } from './db/client';
import { SecretBox } from './lib/crypto';
import { createLogger, type Logger } from './lib/log';
import { announceTenantChanges, generationKey } from './lib/cache-generations';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from './lib/rate-limiter';
import { RedisScripts } from './lib/redis-scripts';
import { GenerationFeed } from './lib/generation-feed';
import { FlushBuffer } from './lib/flush-buffer';
import { TenantService } from './features/tenants/service';
import { UsageMeter } from './features/usage/service';
import { IdempotencyService } from './features/idempotency/service';
import { eq, and, or, isNull, lt } from 'drizzle-orm';
import { loadOrCreateEncryptionKey } from './lib/encryption-key';
import { BullJobQueue, MemoryJobQueue, type JobQueue } from './lib/jobs';
import { EventService } from './features/events/service';
import { PromMetrics } from './features/metrics';

export interface Clock {
  now(): Date;
}

export interface Metrics {
  observeRequest(method: string, route: string, status: number, ms: number): void;
  jobOutcome(queue: string, outcome: 'completed' | 'failed'): void;
  webhookAttempt(outcome: 'succeeded' | 'failed' | 'retry'): void;
}

/** Everything a feature needs, built once per process (and once per test app). */
export interface AppContext {
  config: Config;
  database: Database;
  log: Logger;
  clock: Clock;
  redis: Redis | null;
  limiter: RateLimiter;
  tenants: TenantService;
  usage: UsageMeter;
  idempotency: IdempotencyService;
  secretBox: SecretBox;
  /** coalesced last_used_at writes: at most one per key per flush interval */
  keyTouches: FlushBuffer<{ keyId: string; at: Date }>;
  /** background work: BullMQ when REDIS_URL is set, in-process otherwise */
  jobs: JobQueue;
  events: EventService;
  /** periodic sweeps of worker processes (outbox dispatch, recovery, purges): name → fn */
  sweeps: Map<string, { everyMs: number; run: () => Promise<unknown> }>;
  metrics: import('./features/metrics').PromMetrics;
  /** PostgreSQL + Redis: this process's feed of tenants' cache generations (cache-generations.ts) */
  generations: GenerationFeed | null;
  /** feature services built by createApp (tests and jobs reach them here) */
  services?: import('./workers').Services;
  /** OAuth access tokens (set by createApp): verifies the Bearer JWTs that are not API keys */
  oauth?: import('./features/oauth/tokens').OAuthTokens;
  /** live-tier data sources; tests inject fakes, otherwise built from the environment */
  liveAdapters?: import('./features/score/adapters').LiveAdapters | null;
  /** shutdown hooks run in reverse order of registration */
  onClose(fn: () => Promise<void> | void): void;
  close(): Promise<void>;
}

/** ioredis options for BullMQ's own connections (it needs maxRetriesPerRequest: null) */
export function redisConnectionOptions(url: string) {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    db: Number(u.pathname.slice(1) || 0),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
  };
}

export async function createContext(config: Config, opts: { clock?: Clock; log?: Logger } = {}): Promise<AppContext> {
  const log = opts.log ?? createLogger(config.logLevel);
  const clock = opts.clock ?? { now: () => new Date() };
  const now = () => clock.now();
  const closers: (() => Promise<void> | void)[] = [];
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, sqliteBusyTimeoutMs: config.sqliteBusyTimeoutMs, sqliteWalRestartBytes: config.sqliteWalRestartBytes });
  closers.push(() => database.close());

  let redis: Redis | null = null;
  const memoryLimiter = new MemoryRateLimiter();
  let limiter: RateLimiter = memoryLimiter;
  let feed: GenerationFeed | null = null;
  if (config.redisUrl) {
    // fail fast while disconnected (no offline queue): the limiter then falls back to in-process limits
    // auto-pipelining: the commands of one event-loop tick share one write (a syscall per request otherwise)
    redis = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true, connectTimeout: 2000, enableAutoPipelining: true });
    redis.on('error', (err) => log.throttled('redis-error', 60_000, 'error', 'redis connection error', { error: err.message }));
    // wait for the first connection so the shared limits apply from the first request; if Redis is
    // down the service still starts (fail open) and ioredis keeps reconnecting in the background
    await redis.connect().catch((err) => log.error('redis unreachable at start; continuing with in-process limits', { error: err.message }));
    const scripts = new RedisScripts(config.redisUrl, log);
    await scripts.connect().catch(() => {}); // unreachable: logged above, retried by the first calls
    closers.push(() => scripts.close());
    // tenants' cache generations pushed to this process (PostgreSQL: SQLite's caches see every commit by themselves)
    const pushed = (feed = database.changeEpoch() === null ? new GenerationFeed(config.redisUrl, config.redisPrefix, redis, log) : null);
    await pushed?.start();
    const redisLimiter = new RedisRateLimiter(redis, scripts, memoryLimiter, log, `${config.redisPrefix}:rl:`, (aspect, id) => generationKey(config.redisPrefix, aspect, id), pushed);
    limiter = redisLimiter;
    database.tenantsChanged = announceTenantChanges(redis, config.redisPrefix, log, pushed ?? undefined, scripts);
    const r = redis;
    closers.push(() => void r.disconnect());
    if (pushed) closers.push(() => pushed.close());
    closers.push(() => redisLimiter.close());
  }

  const encryptionKey = config.encryptionKey ?? (config.databaseUrl ? null : loadOrCreateEncryptionKey(config.dataDir));
  if (!encryptionKey) throw new Error('configuration: ENCRYPTION_KEY is required with DATABASE_URL (live mode stores OAuth tokens and webhook secrets encrypted)');

  const secretBox = new SecretBox(encryptionKey);
  const usage = new UsageMeter(database, now, log);
  usage.start();
  closers.push(() => usage.stop());

  const keyTouches = new FlushBuffer<{ keyId: string; at: Date }>(
    async (items) => {
      const k = database.t.apiKeys;
      await database.withTx(async (tx) => {
        for (const { keyId, at } of items)
          await tx.update(k).set({ lastUsedAt: at }).where(and(eq(k.id, keyId), or(isNull(k.lastUsedAt), lt(k.lastUsedAt, at))));
      });
    },
    { intervalMs: 60_000, maxItems: 10_000, onError: (err) => log.error('last_used_at flush failed', { error: String(err) }) },
  );
  keyTouches.start();
  closers.push(() => keyTouches.stop());

  const jobs: JobQueue = config.redisUrl
    ? new BullJobQueue(redisConnectionOptions(config.redisUrl), log, config.redisPrefix)
    : new MemoryJobQueue(log);
  // wait for running jobs only while Redis (if any) is reachable: with it gone nothing can finish
  closers.push(() => jobs.stop(!redis || redis.status === 'ready' ? 10_000 : 200));
  const metrics = new PromMetrics({ jobs, database, limiter }, database.dialect === 'postgres' ? 10 : 1, feed);
  jobs.onOutcome = (queue, outcome) => metrics.jobOutcome(queue, outcome);

  const ctx: AppContext = {
    config,
    database,
    log,
    clock,
    redis,
    limiter,
    tenants: new TenantService(database, now, config.defaultDailyQuota),
    usage,
    idempotency: new IdempotencyService(database, now, secretBox),
    secretBox,
    keyTouches,
    jobs,
    events: new EventService(database, now),
    sweeps: new Map(),
    metrics,
    generations: feed,
    onClose: (fn) => void closers.push(fn),
    async close() {
      for (const fn of closers.reverse()) {
        try {
          await fn();
        } catch (err) {
          log.error('shutdown step failed', { error: String(err) });
        }
      }
    },
  };
  return ctx;
}
