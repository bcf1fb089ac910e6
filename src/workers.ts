import { Elysia } from 'elysia';
import { cron } from '@elysiajs/cron';
import type { AppContext } from './context';
import { BullJobQueue } from './lib/jobs';
import { localDate, RescoreService } from './features/score/rescore';
import type { ScoreService } from './features/score/service';
import type { WebhookService } from './features/webhooks/service';
import { gdprRetentionSweep } from './features/gdpr';
import { registerErpWorkers } from './features/erp';

export interface Services {
  scores: ScoreService;
  webhooks: WebhookService;
  rescore: RescoreService;
}

/**
 * Registers job handlers and periodic sweeps. Every process registers handlers (so that API
 * processes can enqueue into BullMQ); only processes with role all or worker run them
 * (`startWorkers`).
 */
export function registerJobs(ctx: AppContext, s: Services) {
  const deliver = async ({ deliveryId }: { deliveryId: string }) => {
    const next = await s.webhooks.attempt(deliveryId);
    if (next) await ctx.jobs.enqueue('webhook.deliver', { deliveryId }, { jobId: `${deliveryId}:${Date.now()}`, delayMs: next.retryInMs });
  };
  const dispatch = async () => {
    for (const deliveryId of await ctx.events.dispatchPending()) await ctx.jobs.enqueue('webhook.deliver', { deliveryId }, { jobId: `${deliveryId}:0` });
  };
  ctx.jobs.register('webhook.deliver', deliver, { concurrency: 8 });
  ctx.jobs.register('events.dispatch', dispatch, { concurrency: 1 });
  ctx.jobs.register('rescore.nightly', async () => {
    await s.rescore.nightly(localDate(ctx.clock.now(), ctx.config.rescoreTz));
  });
  ctx.events.onEmitted = () => void ctx.jobs.enqueue('events.dispatch', {}, { jobId: 'dispatch' }).catch(() => {});

  // backstops: the outbox and due deliveries are swept even if a kick or a worker was lost
  ctx.sweeps.set('events.dispatch', { everyMs: 1000, run: dispatch });
  // every second (an indexed query): a delivery whose worker died resumes about a second after its lock expires
  ctx.sweeps.set('webhooks.recover', {
    everyMs: 1000,
    run: async () => {
      for (const deliveryId of await s.webhooks.dueDeliveries()) await ctx.jobs.enqueue('webhook.deliver', { deliveryId }, { jobId: `${deliveryId}:sweep` });
    },
  });
  ctx.sweeps.set('idempotency.purge', { everyMs: 10 * 60_000, run: () => ctx.idempotency.purgeExpired() });
  ctx.sweeps.set('gdpr.retention-purge', gdprRetentionSweep(ctx));
  registerErpWorkers(ctx);
}

/** Starts the workers, the sweeps and the nightly schedule (roles all and worker). */
export async function startWorkers(ctx: AppContext) {
  await ctx.jobs.start();
  const timers: ReturnType<typeof setInterval>[] = [];
  for (const [name, sweep] of ctx.sweeps) {
    let busy = false;
    const timer = setInterval(async () => {
      if (busy) return;
      busy = true;
      try {
        await sweep.run();
      } catch (err) {
        ctx.log.throttled(`sweep-${name}`, 60_000, 'error', 'sweep failed', { sweep: name, error: (err as Error).message });
      } finally {
        busy = false;
      }
    }, sweep.everyMs);
    timers.push(timer);
  }
  let stopCron = () => {};
  if (ctx.jobs instanceof BullJobQueue) {
    // one job per tick across every process; not awaited, so a Redis outage does not block the start
    ctx.jobs.schedule('rescore.nightly', ctx.config.rescoreCron, ctx.config.rescoreTz).catch((err) =>
      ctx.log.error('could not register the nightly schedule', { error: (err as Error).message }),
    );
  } else {
    const scheduler = new Elysia().use(
      cron({ name: 'nightly-rescore', pattern: ctx.config.rescoreCron, timezone: ctx.config.rescoreTz, run: () => void ctx.jobs.enqueue('rescore.nightly', {}) }),
    );
    stopCron = () => (scheduler.store as { cron: Record<string, { stop(): void }> }).cron['nightly-rescore']?.stop();
  }
  ctx.onClose(() => {
    for (const t of timers) clearInterval(t);
    stopCron();
  });
}
