import { and, eq, gt } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { ApiError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import type { EventService } from '../events/service';
import type { ScoreService, StoredResult } from './service';

const TIER_ORDER = ['A', 'B', 'C', 'D', 'E'];
/** |new − previous| above this many points emits score.updated (§1, §6) */
export const MATERIAL_CHANGE_POINTS = 5;

/**
 * Nightly re-score: every company a tenant scored in the last N days is scored again; the result
 * and its events (score.updated, deterioration.alert) are written in one transaction.
 */
export class RescoreService {
  constructor(
    private readonly database: Database,
    private readonly scores: ScoreService,
    private readonly events: EventService,
    private readonly now: () => Date,
    private readonly lookbackDays: number,
    private readonly log: Logger,
  ) {}

  async rescoreTenant(tenantId: string, env: 'sandbox' | 'live') {
    const s = this.database.t.scoreResults;
    const since = new Date(this.now().getTime() - this.lookbackDays * 86_400_000);
    const rows = await this.database.db
      .selectDistinct({ nif: s.nif })
      .from(s)
      // the companies the tenant itself scored in the window: the job's own re-scores do not keep a
      // company in it, or a company scored once would be re-scored (and its bureau lookup billed) for ever
      .where(and(eq(s.tenantId, tenantId), eq(s.env, env), eq(s.trigger, 'request'), gt(s.computedAt, since)));
    const emitted: { type: string; nif: string; id: string }[] = [];
    let rescored = 0;
    for (const { nif } of rows) {
      const caller = { tenantId, env, keyId: null, requestId: null };
      const previous = await this.scores.latest(caller, nif);
      let evaluated;
      try {
        evaluated = await this.scores.evaluate(caller, nif, 'rescore');
      } catch (err) {
        if (err instanceof ApiError) {
          this.log.warn('rescore skipped a company', { tenantId, nif, code: err.code });
          continue;
        }
        throw err;
      }
      const current = evaluated.result;
      await this.database.withTx(async (tx) => {
        await this.scores.store(tx, caller, nif, evaluated, 'rescore', previous?.customerReference ?? null);
        if (!previous) return;
        const prev = previous.result as StoredResult;
        const ref = previous.customerReference ? { customer_reference: previous.customerReference } : {};
        if (Math.abs(current.score - prev.score) > MATERIAL_CHANGE_POINTS) {
          const id = await this.events.emit(tx, {
            tenantId,
            env,
            type: 'score.updated',
            data: {
              nif,
              ...ref,
              previous: { score: prev.score, tier: prev.tier, computed_at: prev.computed_at },
              current: { score: current.score, tier: current.tier, pd_estimate: current.pd_estimate, computed_at: current.computed_at },
              change: current.score - prev.score,
            },
          });
          emitted.push({ type: 'score.updated', nif, id });
        }
        const prevNegative = new Set(prev.reasons.filter((r) => r.impact === 'negative').map((r) => r.code));
        const newNegative = current.reasons.filter((r) => r.impact === 'negative' && !prevNegative.has(r.code)).map((r) => r.code);
        const tierWorse = TIER_ORDER.indexOf(current.tier) > TIER_ORDER.indexOf(prev.tier);
        if (tierWorse || newNegative.length) {
          const id = await this.events.emit(tx, {
            tenantId,
            env,
            type: 'deterioration.alert',
            data: {
              nif,
              ...ref,
              previous_tier: prev.tier,
              tier: current.tier,
              previous_score: prev.score,
              score: current.score,
              tier_worsened: tierWorse,
              new_negative_reasons: newNegative,
              computed_at: current.computed_at,
            },
          });
          emitted.push({ type: 'deterioration.alert', nif, id });
        }
      });
      // a live re-score looked the company up at the bureau: billed like a request's lookup (#4)
      this.scores.billBureauLookup(caller, evaluated.bureauCostCents);
      rescored++;
    }
    if (emitted.length) this.events.onEmitted();
    return { rescored, events: emitted };
  }

  /**
   * The nightly run for every active tenant and both environments. `runKey` (the local date) makes
   * it run once however many processes or schedulers fire: the first to insert the key runs.
   */
  async nightly(runKey: string): Promise<boolean> {
    const { withTx, db, t } = this.database;
    const claimed = await withTx((tx) =>
      tx.insert(t.appMeta).values({ key: `nightly-rescore:${runKey}`, value: this.now().toISOString() }).onConflictDoNothing().returning({ key: t.appMeta.key }),
    );
    if (!claimed.length) return false;
    const tenants = await db.select({ id: t.tenants.id }).from(t.tenants).where(eq(t.tenants.status, 'active'));
    for (const tenant of tenants)
      for (const env of ['sandbox', 'live'] as const) {
        try {
          await this.rescoreTenant(tenant.id, env);
        } catch (err) {
          this.log.error('nightly rescore failed for a tenant', { tenantId: tenant.id, env, error: (err as Error).message });
        }
      }
    return true;
  }
}

/** YYYY-MM-DD in the scheduler's time zone */
export const localDate = (d: Date, timeZone: string) => new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(d);
