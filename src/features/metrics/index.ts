import { Elysia } from 'elysia';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { AppContext, Metrics } from '../../context';
import { ApiError } from '../../lib/errors';
import { safeEqual } from '../../lib/crypto';

/** Prometheus metrics of one process (its own registry, so several apps can live in one test run). */
export class PromMetrics implements Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests by route and status', labelNames: ['method', 'route', 'status'], registers: [this.registry] });
  private readonly latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5],
    registers: [this.registry],
  });
  readonly rateLimited = new Counter({ name: 'rate_limit_rejections_total', help: '429 answers by reason', labelNames: ['reason'], registers: [this.registry] });
  readonly jobs = new Counter({ name: 'jobs_total', help: 'Background job outcomes', labelNames: ['queue', 'outcome'], registers: [this.registry] });
  readonly webhookDeliveries = new Counter({ name: 'webhook_delivery_attempts_total', help: 'Webhook delivery attempts by outcome', labelNames: ['outcome'], registers: [this.registry] });

  constructor(ctx: Pick<AppContext, 'jobs' | 'database'>, poolMax: number) {
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: 'queue_depth',
      help: 'Jobs waiting, delayed or running, per queue',
      labelNames: ['queue'],
      registers: [this.registry],
      async collect() {
        for (const [queue, n] of Object.entries(await ctx.jobs.depth().catch(() => ({})))) this.set({ queue }, n);
      },
    });
    new Gauge({
      name: 'db_pool_in_use',
      help: 'Database transactions in progress (SQLite: 0 or 1, writes are serialised)',
      registers: [this.registry],
      collect() {
        this.set(ctx.database.inFlight());
      },
    });
    new Gauge({ name: 'db_pool_max', help: 'Database pool size', registers: [this.registry] }).set(poolMax);
  }

  observeRequest(method: string, route: string, status: number, ms: number) {
    const labels = { method, route, status: String(status) };
    this.requests.inc(labels);
    this.latency.observe(labels, ms / 1000);
    if (status === 429) this.rateLimited.inc({ reason: 'limit' });
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
      const m = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? '');
      if (!m || !safeEqual(m[1]!, token)) throw new ApiError('missing_api_key', 'Metrics need "Authorization: Bearer <METRICS_TOKEN>".');
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
