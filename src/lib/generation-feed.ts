import Redis from 'ioredis';
import type { CacheAspect } from '../db/client';
import type { Logger } from './log';
import { generationKey, LUA_NOW_US } from './cache-generations';

/**
 * Tenants' cache generations (cache-generations.ts) pushed to every process, so that a process can
 * know them without asking Redis on each request, and still honour a change committed by any other
 * process on the very next request. How:
 *
 * - Every process registers itself in Redis with each heartbeat (a sorted set, entries expiring
 *   REGISTERED_MS after the last one, on Redis's clock).
 * - Every change of generations is published, by the same Redis script that makes it, on one
 *   channel that every process subscribes to; the script also returns the registered processes. A
 *   process applies it (the highest value wins) and acknowledges it on the announcer's own channel.
 * - The announcer answers its caller only once every registered process, and as many as Redis
 *   delivered the message to, have acknowledged, or after ANNOUNCE_WAIT_MS, whichever comes first
 *   (the registry can be lost on its own, FLUSHALL; a subscription can be dropped before its
 *   process knows).
 * - A process trusts its own copy only while it is *coherent*: its subscription is up and it has
 *   received, on that subscription, a heartbeat it published at most COHERENT_MS ago. Redis delivers
 *   a connection's messages in the order it ran the PUBLISHes, so such a heartbeat proves that every
 *   change published before that heartbeat has been applied. A process that did not acknowledge
 *   (stalled, cut off, its subscription dropped without it knowing yet) and is still coherent when
 *   the announcer answers got a heartbeat run after the change (ANNOUNCE_WAIT_MS > COHERENT_MS), or
 *   one run before it, while registered: then it was waited for. Otherwise it asks Redis again (the
 *   rate-limit script returns the generations, as before).
 * - Losing the subscription forgets every copy; values learned from a script call are kept only if
 *   the subscription was up, unbroken, from before that call was sent to after its answer came.
 * Only durations measured on each process's own monotonic clock, or Redis's, are compared.
 */
export const COHERENT_MS = 400;
export const ANNOUNCE_WAIT_MS = 500;
const HEARTBEAT_MS = 100;
export const REGISTERED_MS = 2000;

// KEYS: the registry. ARGV: this process, its heartbeat channel, the heartbeat. Registered (and
// the long gone pruned) in the same step as the heartbeat is published.
const BEAT = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + ${REGISTERED_MS}, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ${REGISTERED_MS * 10})
return redis.call('PUBLISH', ARGV[2], ARGV[3])
`;
type Beater = Redis & { feedBeat(numKeys: number, ...args: string[]): Promise<number> };

// KEYS: one generation. Its value, created as the rate-limit script creates a missing one (Redis's
// clock in µs: never a value it had before it was lost).
// (built when first used: cache-generations.ts imports this module, and this one imports it back)
const readGenerationScript = () => `
if redis.replicate_commands then redis.replicate_commands() end
${LUA_NOW_US}
local v = redis.call('GET', KEYS[1])
if not v then
  v = string.format('%d', now_us())
  redis.call('SET', KEYS[1], v)
end
return v
`;
type Reader = Redis & { readGeneration(numKeys: number, key: string): Promise<string> };
const MAX_TENANTS = 100_000;

interface Waiter {
  /** the processes that acknowledged */
  acked: Set<string>;
  /** re-evaluated on each acknowledgement once the announcement's answer is known */
  check: () => void;
}

export interface Generations {
  access: number;
  scores: number;
  /** learned on demand (inputs()), not from the rate-limit script: 0 until then */
  inputs: number;
}

/** the channel every process listens on for changes of generations */
export const generationChannel = (redisPrefix: string) => `${redisPrefix}:gen:changes`;
/** the processes that follow it (a sorted set: process → registered until, ms on Redis's clock) */
export const feedRegistry = (redisPrefix: string) => `${redisPrefix}:gen:followers`;

export class GenerationFeed {
  /** this process, in channel names and message ids */
  readonly id = crypto.randomUUID().replaceAll('-', '').slice(0, 16);
  readonly channel: string;
  /** where this process's announcements are acknowledged */
  readonly ackChannel: string;
  private readonly beatChannel: string;
  private readonly registry: string;
  private readonly sub: Redis;
  /** moves on whenever the subscription is lost: what was learned under an older one is void */
  private epoch = 0;
  private subscribed = false;
  private lastBeat = -Infinity;
  private readonly tenants = new Map<string, Generations>();
  private readonly redisPrefix: string;
  /** tenants whose `inputs` generation is being read from Redis */
  private readonly fetching = new Set<string>();
  private readonly waiters = new Map<string, Waiter>();
  private sequence = 0;
  private timer: ReturnType<typeof setInterval> | null = null;
  private closed = false;

  constructor(
    url: string,
    redisPrefix: string,
    /** publishes heartbeats and acknowledgements (a command connection, not the subscriber) */
    private readonly redis: Redis,
    private readonly log: Pick<Logger, 'throttled'>,
  ) {
    this.channel = generationChannel(redisPrefix);
    this.ackChannel = `${this.channel}:ack:${this.id}`;
    this.beatChannel = `${this.channel}:beat:${this.id}`;
    this.registry = feedRegistry(redisPrefix);
    this.redisPrefix = redisPrefix;
    if (!('feedBeat' in redis)) redis.defineCommand('feedBeat', { lua: BEAT });
    if (!('readGeneration' in redis)) redis.defineCommand('readGeneration', { lua: readGenerationScript() });
    // subscriptions are made again by hand on each connection (below), so that the moment they
    // are up is known
    this.sub = new Redis(url, { lazyConnect: true, autoResubscribe: false, enableOfflineQueue: true, maxRetriesPerRequest: null, connectTimeout: 2000, connectionName: `feed:${this.id}` });
    this.sub.on('error', (err) => this.log.throttled('generation-feed', 60_000, 'error', 'generation feed: redis connection error', { error: err.message }));
    this.sub.on('close', () => this.lost());
    this.sub.on('ready', () => void this.subscribe());
    this.sub.on('message', (channel: string, message: string) => this.received(channel, message));
  }

  /** connects and starts the heartbeats; resolves once subscribed (or at once if Redis is down) */
  async start(): Promise<void> {
    this.timer = setInterval(() => this.beat(), HEARTBEAT_MS);
    this.timer.unref?.();
    await this.sub.connect().catch(() => {}); // retried by ioredis; the process asks Redis meanwhile
    for (let i = 0; i < 20 && !this.subscribed && this.sub.status === 'ready'; i++) await Bun.sleep(5);
    this.beat();
  }

  async close() {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.lost();
    // announcements in progress are not cut short: they wait their time out (nothing acknowledges now)
    this.sub.disconnect();
    if (this.redis.status === 'ready') await this.redis.zrem(this.registry, this.id).catch(() => {});
  }

  /** The tenant's generations if this process knows them as current (coherent), else undefined. */
  current(tenantId: string): Generations | undefined {
    if (!this.coherent()) return undefined;
    const g = this.tenants.get(tenantId);
    return g && g.access > 0 && g.scores > 0 ? g : undefined;
  }

  /**
   * The tenant's `inputs` generation if this process knows it as current, else undefined; the
   * first ask for a tenant reads it from Redis in the background (learned as a script's answer is,
   * see learn), so the requests after it can cache under it.
   */
  inputs(tenantId: string): number | undefined {
    if (!this.coherent()) return undefined;
    const known = this.tenants.get(tenantId)?.inputs;
    if (known) return known;
    if (!this.fetching.has(tenantId) && this.redis.status === 'ready') {
      this.fetching.add(tenantId);
      const mark = this.mark();
      (this.redis as Reader)
        .readGeneration(1, generationKey(this.redisPrefix, 'inputs', tenantId))
        .then((v) => {
          if (mark === null || mark !== this.epoch || !this.subscribed) return;
          const g = this.entry(tenantId);
          if (Number(v) > g.inputs) g.inputs = Number(v);
        })
        .catch(() => {}) // asked again by the next request
        .finally(() => this.fetching.delete(tenantId));
    }
    return undefined;
  }

  /** the tenant's entry, created unknown (0) */
  private entry(tenantId: string): Generations {
    let g = this.tenants.get(tenantId);
    if (!g) {
      if (this.tenants.size >= MAX_TENANTS) this.forget();
      this.tenants.set(tenantId, (g = { access: 0, scores: 0, inputs: 0 }));
    }
    return g;
  }

  /** Whether current() can answer at all now. */
  coherent() {
    return this.subscribed && performance.now() - this.lastBeat <= COHERENT_MS;
  }

  /** To be taken before a script call whose answer carries generations (learn). */
  mark(): number | null {
    return this.subscribed ? this.epoch : null;
  }

  /** Generations read by a script call sent under `mark`: kept if the subscription held throughout. */
  learn(mark: number | null, tenantId: string, access: number, scores: number) {
    if (mark === null || mark !== this.epoch || !this.subscribed) return;
    const g = this.entry(tenantId);
    if (access > g.access) g.access = access;
    if (scores > g.scores) g.scores = scores;
  }

  /**
   * A message id for an announcement, its acknowledgements collected from now on (they can arrive
   * before the script's answer: another connection), and awaited: resolves once every process
   * named has acknowledged and at least `receivers` have, or after ANNOUNCE_WAIT_MS, with how many
   * were missing then. `cancel` if the announcement was not sent.
   */
  expect(): { id: string; wait: (processes: string[], receivers: number) => Promise<number>; cancel: () => void } {
    const id = `${this.id}.${++this.sequence}`;
    const waiter: Waiter = { acked: new Set(), check: () => {} };
    this.waiters.set(id, waiter);
    return {
      id,
      cancel: () => void this.waiters.delete(id),
      wait: (processes, receivers) =>
        new Promise<number>((resolve) => {
          const missing = () => Math.max(processes.filter((p) => !waiter.acked.has(p)).length, receivers - waiter.acked.size);
          const finish = () => {
            clearTimeout(timer);
            this.waiters.delete(id);
            resolve(missing());
          };
          // after shutdown nothing is collected: wait the time out, as a process without a feed does
          const timer = setTimeout(finish, ANNOUNCE_WAIT_MS);
          waiter.check = () => {
            if (missing() <= 0) finish();
          };
          if (!this.closed || (!processes.length && !receivers)) waiter.check();
        }),
    };
  }

  private async subscribe() {
    const epoch = this.epoch;
    try {
      await this.sub.subscribe(this.channel, this.ackChannel, this.beatChannel);
      if (epoch === this.epoch && !this.closed) {
        this.subscribed = true;
        this.beat();
      }
    } catch (err) {
      this.log.throttled('generation-feed', 60_000, 'error', 'generation feed: subscription failed', { error: (err as Error).message });
    }
  }

  private lost() {
    this.subscribed = false;
    this.lastBeat = -Infinity;
    this.forget();
  }

  /** every copy dropped; answers of script calls already sent are not learned (their mark is void) */
  private forget() {
    this.epoch++;
    this.tenants.clear();
  }

  private beat() {
    if (!this.subscribed || this.redis.status !== 'ready') return;
    (this.redis as Beater).feedBeat(1, this.registry, this.id, this.beatChannel, `${this.epoch} ${performance.now()}`).catch(() => {});
  }

  private received(channel: string, message: string) {
    if (channel === this.beatChannel) {
      const [epoch, sent] = message.split(' ');
      if (Number(epoch) === this.epoch && Number(sent) > this.lastBeat) this.lastBeat = Number(sent);
    } else if (channel === this.ackChannel) {
      // "<message id> <process>"
      const space = message.indexOf(' ');
      const w = this.waiters.get(message.slice(0, space));
      if (!w || this.closed) return;
      w.acked.add(message.slice(space + 1));
      w.check();
    } else if (channel === this.channel) {
      this.applyChange(message);
    }
  }

  /** "<ack channel> <id> <aspect>:<tenant>=<value> …" (see cache-generations.ts) */
  private applyChange(message: string) {
    const parts = message.split(' ');
    for (let i = 2; i < parts.length; i++) {
      const eq = parts[i]!.lastIndexOf('=');
      const colon = parts[i]!.indexOf(':');
      if (eq < 0 || colon < 0) continue;
      const aspect = parts[i]!.slice(0, colon) as CacheAspect;
      const tenantId = parts[i]!.slice(colon + 1, eq);
      const value = Number(parts[i]!.slice(eq + 1));
      // remembered even while unknown: a script answer read before this change may come after it
      const g = this.entry(tenantId);
      if (value > g[aspect]) g[aspect] = value;
    }
    // this process's own announcement: applied just above, so acknowledged here, without a PUBLISH
    // back to itself (a Redis round trip and a message per group commit)
    if (parts[0] === this.ackChannel) {
      const w = this.waiters.get(parts[1] ?? '');
      if (w && !this.closed) {
        w.acked.add(this.id);
        w.check();
      }
      return;
    }
    // '-': announced by a process without a feed (the CLI), which waits instead
    if (parts[0] && parts[0] !== '-' && parts[1] && this.redis.status === 'ready') this.redis.publish(parts[0], `${parts[1]} ${this.id}`).catch(() => {});
  }
}
