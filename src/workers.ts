import { Elysia } from 'elysia';
import { cron } from '@elysiajs/cron';
import type { AppContext } from './context';
import { BullJobQueue } from './lib/jobs';
import { localDate, RescoreService } from './features/score/rescore';
import type { ScoreService } from './features/score/service';
import type { WebhookService } from './features/webhooks/service';
import { gdprRetentionSweep } from './features/gdpr';
import { registerErpWorkers } from './features/erp';
import { refreshLists } from './features/aml';
import { DSR_JOB, DSR_SWEEP, SubjectRequests } from './features/gdpr/subject-requests';
import { processSaftRun, recoverSaftRuns, SAFT_RECOVER_SWEEP } from './features/saft';

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
  // an endpoint's backlog (held deliveries after an outage, a re-enable or a replay), in event order
  const drain = async ({ endpointId }: { endpointId: string }) => {
    for (let i = 0; i < 200; i++) {
      const r = await s.webhooks.drainNext(endpointId);
      if (!r) return;
      // a failed attempt pauses the backlog; its retry runs as usual and the sweep resumes the drain after it
      if (r.retryInMs !== null) return void (await ctx.jobs.enqueue('webhook.deliver', { deliveryId: r.deliveryId }, { jobId: `${r.deliveryId}:${Date.now()}`, delayMs: r.retryInMs }));
    }
    await ctx.jobs.enqueue('webhook.drain', { endpointId }, { jobId: `drain:${endpointId}:${Date.now()}` }); // more: give other endpoints a turn
  };
  ctx.jobs.register('webhook.deliver', deliver, { concurrency: 8 });
  ctx.jobs.register('webhook.drain', drain, { concurrency: 4 });
  ctx.jobs.register('events.dispatch', dispatch, { concurrency: 1 });
  ctx.jobs.register('rescore.nightly', async () => {
    await s.rescore.nightly(localDate(ctx.clock.now(), ctx.config.rescoreTz));
  });
  ctx.jobs.register('saft.parse', ({ runId }: { runId: string }) => processSaftRun(ctx, runId), { concurrency: 1 });
  ctx.sweeps.set(SAFT_RECOVER_SWEEP, { everyMs: 5_000, run: () => recoverSaftRuns(ctx) });
  ctx.jobs.register('aml.refresh', async () => {
    await refreshLists(ctx);
  });
  ctx.events.onEmitted = () => void ctx.jobs.enqueue('events.dispatch', {}, { jobId: 'dispatch' }).catch(() => {});

  // backstops: the outbox and due deliveries are swept even if a kick or a worker was lost
  ctx.sweeps.set('events.dispatch', { everyMs: 1000, run: dispatch });
  // every second (an indexed query): a delivery whose worker died resumes about a second after its lock expires
  ctx.sweeps.set('webhooks.recover', {
    everyMs: 1000,
    run: async () => {
      for (const deliveryId of await s.webhooks.dueDeliveries()) await ctx.jobs.enqueue('webhook.deliver', { deliveryId }, { jobId: `${deliveryId}:sweep` });
      for (const endpointId of await s.webhooks.drainableEndpoints()) await ctx.jobs.enqueue('webhook.drain', { endpointId }, { jobId: `drain:${endpointId}` });
    },
  });
  ctx.sweeps.set('idempotency.purge', { everyMs: 10 * 60_000, run: () => ctx.idempotency.purgeExpired() });
  ctx.sweeps.set('gdpr.retention-purge', gdprRetentionSweep(ctx));
  const subjectRequests = new SubjectRequests(ctx);
  ctx.jobs.register(DSR_JOB, ({ id }: { id: string }) => subjectRequests.process(id), { concurrency: 1 });
  ctx.sweeps.set(DSR_SWEEP, { everyMs: 30_000, run: () => subjectRequests.recover() });
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
    ctx.jobs.schedule('aml.refresh', ctx.config.amlRefreshCron, 'UTC').catch((err) =>
      ctx.log.error('could not register the sanctions list refresh', { error: (err as Error).message }),
    );
  } else {
    const scheduler = new Elysia()
      .use(cron({ name: 'nightly-rescore', pattern: ctx.config.rescoreCron, timezone: ctx.config.rescoreTz, run: () => void ctx.jobs.enqueue('rescore.nightly', {}) }))
      .use(cron({ name: 'aml-refresh', pattern: ctx.config.amlRefreshCron, timezone: 'UTC', run: () => void ctx.jobs.enqueue('aml.refresh', {}) }));
    const crons = () => (scheduler.store as { cron: Record<string, { stop(): void }> }).cron;
    stopCron = () => {
      crons()['nightly-rescore']?.stop();
      crons()['aml-refresh']?.stop();
    };
  }
  ctx.onClose(() => {
    for (const t of timers) clearInterval(t);
    stopCron();
  });
}
