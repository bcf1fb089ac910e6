import { Elysia } from 'elysia';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { AppContext, Metrics } from '../../context';
import { ApiError } from '../../lib/errors';
import { safeEqual } from '../../lib/crypto';
import { bearerToken } from '../../plugins/auth';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5];
type RequestSeries = { labels: { method: string; route: string; status: string }; count: number; sum: number; buckets: number[] };

/**
 * http_requests_total and http_request_duration_seconds, counted on every request: three map
 * lookups by the values at hand and a few additions (prom-client's own metrics hash a label object per
 * call, a measurable share of a cached score). Exposed through the registry in its format.
 */
class RequestMetrics {
  // route → status → method: looked up by values the caller already has, no key string built per call
  private readonly byRoute = new Map<string, Map<number, Map<string, RequestSeries>>>();
  private readonly all: RequestSeries[] = [];

  observe(method: string, route: string, status: number, seconds: number) {
    let byStatus = this.byRoute.get(route);
    if (!byStatus) this.byRoute.set(route, (byStatus = new Map()));
    let byMethod = byStatus.get(status);
    if (!byMethod) byStatus.set(status, (byMethod = new Map()));
    let s = byMethod.get(method);
    if (!s) {
      byMethod.set(method, (s = { labels: { method, route, status: String(status) }, count: 0, sum: 0, buckets: LATENCY_BUCKETS.map(() => 0) }));
      this.all.push(s);
    }
    s.count++;
    s.sum += seconds;
    for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
      if (seconds <= LATENCY_BUCKETS[i]!) {
        s.buckets[i]!++;
        break;
      }
    }
  }

  register(registry: Registry) {
    const series = () => this.all;
    const metric = (name: string, help: string, type: 'counter' | 'histogram', values: () => unknown[]) => ({
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
      reset: () => {
        this.byRoute.clear();
        this.all.length = 0;
      },
    });
    registry.registerMetric(metric('http_requests_total', 'HTTP requests by route and status', 'counter', () => series().map((s) => ({ labels: s.labels, value: s.count }))) as never);
    const latency = 'http_request_duration_seconds';
    registry.registerMetric(
      metric(latency, 'HTTP request latency by route and status', 'histogram', () =>
        series().flatMap((s) => {
          let cumulative = 0;
          return [
            ...LATENCY_BUCKETS.map((le, i) => ({ metricName: `${latency}_bucket`, labels: { ...s.labels, le }, value: (cumulative += s.buckets[i]!) })),
            { metricName: `${latency}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count },
            { metricName: `${latency}_sum`, labels: s.labels, value: s.sum },
            { metricName: `${latency}_count`, labels: s.labels, value: s.count },
          ];
        }),
      ) as never,
    );
  }
}

/** Prometheus metrics of one process (its own registry, so several apps can live in one test run). */
export class PromMetrics implements Metrics {
  readonly registry = new Registry();
  private readonly requests = new RequestMetrics();
  readonly rateLimited = new Counter({ name: 'rate_limit_rejections_total', help: '429 answers by the budget that refused them: minute (a key\'s per-minute limit), daily (its tenant\'s daily quota), address (requests without a valid key, per client address)', labelNames: ['reason'], registers: [this.registry] });
  readonly jobs = new Counter({ name: 'jobs_total', help: 'Background job outcomes', labelNames: ['queue', 'outcome'], registers: [this.registry] });
  readonly webhookDeliveries = new Counter({ name: 'webhook_delivery_attempts_total', help: 'Webhook delivery attempts by outcome', labelNames: ['outcome'], registers: [this.registry] });

  constructor(ctx: Pick<AppContext, 'jobs' | 'database' | 'limiter'>, poolMax: number, feed?: { coherent(): boolean } | null) {
    collectDefaultMetrics({ register: this.registry });
    // counted by the limiter as plain numbers (no label hashing per request), read at each scrape
    const seen = { process: 0, redis: 0, fallback: 0 };
    new Counter({
      name: 'rate_limit_decisions_total',
      help: 'Rate-limit decisions by where they were made: process (the embedded limiter, or requests prepaid in Redis for this process), redis (the shared script, one by one), fallback (in process because Redis failed)',
      labelNames: ['where'],
      registers: [this.registry],
      collect() {
        for (const where of ['process', 'redis', 'fallback'] as const) {
          const now = ctx.limiter.decisions[where];
          this.inc({ where }, now - seen[where]);
          seen[where] = now;
        }
      },
    });
    if (feed)
      new Gauge({
        name: 'generation_feed_coherent',
        help: "1 while this process knows its tenants' cache generations as pushed to it (PostgreSQL + Redis), 0 while it asks Redis on each request instead",
        registers: [this.registry],
        collect() {
          this.set(feed.coherent() ? 1 : 0);
        },
      });
    this.requests.register(this.registry);
    new Gauge({
      name: 'queue_depth',
      help: 'Jobs waiting, delayed or running, per queue',
      labelNames: ['queue'],
      registers: [this.registry],
      async collect() {
        for (const [queue, n] of Object.entries(await ctx.jobs.depth().catch(() => ({})))) this.set({ queue }, n);
      },
    });
    // one read per scrape for both gauges (PostgreSQL: a query on the pool observer's connection)
    let usage: Promise<{ busy: number; open: number } | null> | null = null;
    const poolUsage = () => (usage ??= ctx.database.poolUsage().finally(() => setTimeout(() => (usage = null), 100)));
    const poolGauges: [string, string, 'busy' | 'open'][] = [
      ['db_pool_in_use', "Connections of this process's database pool running a statement or in a transaction (PostgreSQL, as pg_stat_activity shows them; SQLite: its transaction in progress, 0 or 1)", 'busy'],
      ['db_pool_open', "Connections of this process's database pool that are open", 'open'],
    ];
    for (const [name, help, field] of poolGauges)
      new Gauge({
        name,
        help,
        registers: [this.registry],
        async collect() {
          const u = await poolUsage();
          if (u) this.set(u[field]);
        },
      });
    new Gauge({ name: 'db_pool_max', help: 'Database pool size', registers: [this.registry] }).set(poolMax);
  }

  /** `limitedBy`: on a 429, the budget that refused it (a key's minute or its tenant's daily quota, or a client address) */
  observeRequest(method: string, route: string, status: number, ms: number, limitedBy?: 'minute' | 'daily' | 'address') {
    this.requests.observe(method, route, status, ms / 1000);
    if (status === 429) this.rateLimited.inc({ reason: limitedBy ?? 'minute' });
  }
  jobOutcome(queue: string, outcome: 'completed' | 'failed') {
    this.jobs.inc({ queue, outcome });
  }
  webhookAttempt(outcome: 'succeeded' | 'failed' | 'retry') {
    this.webhookDeliveries.inc({ outcome });
  }
}

/**
 * GET /metrics on the main port, only with METRICS_TOKEN (Bearer); otherwise the main port has no
 * /metrics and METRICS_PORT serves it on its own listener (e.g. for a worker process).
 */
export function metricsRoutes(ctx: AppContext, metrics: PromMetrics) {
  return new Elysia({ name: 'metrics' }).get(
    '/metrics',
    async ({ headers }) => {
      const token = ctx.config.metricsToken;
      if (!token) throw new ApiError('not_found', 'No route GET /metrics (set METRICS_TOKEN, or use METRICS_PORT).');
      const given = bearerToken(headers.authorization);
      if (given === null) throw new ApiError('missing_api_key', 'Metrics need "Authorization: Bearer <METRICS_TOKEN>".');
      if (!safeEqual(given, token)) throw new ApiError('invalid_api_key', 'The metrics token is not valid.');
      return new Response(await metrics.registry.metrics(), { headers: { 'content-type': metrics.registry.contentType } });
    },
    { detail: { hide: true } },
  );
}

export function serveMetricsPort(metrics: PromMetrics, port: number) {
  return Bun.serve({
    port,
    hostname: '0.0.0.0',
    async fetch(req) {
      if (new URL(req.url).pathname !== '/metrics') return new Response('not found', { status: 404 });
      return new Response(await metrics.registry.metrics(), { headers: { 'content-type': metrics.registry.contentType } });
    },
  });
}
