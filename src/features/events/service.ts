import { and, asc, desc, eq, inArray, isNull, lt } from 'drizzle-orm';
import type { Database, Db } from '../../db/client';
import { pageOf } from '../../lib/schemas';

/**
 * Events: an outbox. `emit` writes the event in the caller's transaction, together with the change
 * that causes it; the dispatcher later turns each undispatched event into one delivery per
 * subscribed webhook endpoint, whatever the endpoint's state (unique per event and endpoint, so
 * concurrent dispatchers are harmless). A delivery to an endpoint that is disabled or failed, or
 * that still has a backlog to catch up, is created `held`: the endpoint's drain sends it, in event
 * order, once the endpoint is active (WebhookService.drainNext).
 */
export const EVENT_TYPES = [
  'score.updated',
  'deterioration.alert',
  'operation.approved',
  'settlement.completed',
  'default.flagged',
  'erp.sync.completed',
  'erp.sync.failed',
  'webhook.test',
  'aml.alert',
  'gdpr.request.completed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface EventEnvelope {
  id: string;
  type: string;
  created_at: string;
  environment: 'sandbox' | 'live';
  data: Record<string, unknown>;
}

type EventRow = Database['t']['events']['$inferSelect'];

export const envelopeOf = (e: EventRow): EventEnvelope => ({
  id: e.id,
  type: e.type,
  created_at: e.createdAt.toISOString(),
  environment: e.env as 'sandbox' | 'live',
  data: e.data,
});

export const endpointWants = (enabled: string[], type: string) => enabled.includes('*') || enabled.includes(type);

export class EventService {
  /** called after a commit that emitted events, to dispatch them without waiting for the poll */
  onEmitted: () => void = () => {};
  /** called when a delivery was queued behind an active endpoint's backlog (kicks its drain) */
  onBacklog: (endpointId: string) => void = () => {};

  constructor(
    private readonly database: Database,
    private readonly now: () => Date,
  ) {}

  /** Writes an event inside the caller's transaction (the outbox). Returns its id (evt_ + UUIDv7, time-ordered). */
  async emit(tx: Db, e: { tenantId: string; env: string; type: EventType; data: Record<string, unknown> }): Promise<string> {
    const id = `evt_${Bun.randomUUIDv7().replaceAll('-', '')}`;
    await tx.insert(this.database.t.events).values({ id, tenantId: e.tenantId, env: e.env, type: e.type, data: e.data, createdAt: this.now() });
    return id;
  }

  /**
   * Creates deliveries for undispatched events. Returns the ids of the deliveries created due now
   * (not held), for the caller to enqueue.
   */
  async dispatchPending(limit = 200): Promise<string[]> {
    const { db, withTx, t } = this.database;
    const pending = await db.select().from(t.events).where(isNull(t.events.dispatchedAt)).orderBy(asc(t.events.id)).limit(limit);
    const created: string[] = [];
    const backlogged = new Set<string>();
    for (const ev of pending) {
      await withTx(async (tx) => {
        const claimed = await tx
          .update(t.events)
          .set({ dispatchedAt: this.now() })
          .where(and(eq(t.events.id, ev.id), isNull(t.events.dispatchedAt)))
          .returning({ id: t.events.id });
        if (!claimed.length) return;
        // every subscribed endpoint, active or not: a disabled endpoint's events wait for it (held)
        const endpoints = await tx
          .select()
          .from(t.webhookEndpoints)
          .where(and(eq(t.webhookEndpoints.tenantId, ev.tenantId), eq(t.webhookEndpoints.env, ev.env)));
        for (const ep of endpoints) {
          if (!endpointWants(ep.enabledEvents, ev.type)) continue;
          const d = t.webhookDeliveries;
          // behind a backlog the new event queues too, so the endpoint receives it after the older ones
          const backlog = ep.status === 'active' && (await tx.select({ id: d.id }).from(d).where(and(eq(d.endpointId, ep.id), eq(d.status, 'held'))).limit(1)).length > 0;
          const held = ep.status !== 'active' || backlog;
          const id = crypto.randomUUID();
          const now = this.now();
          const rows = await tx
            .insert(d)
            .values({ id, tenantId: ev.tenantId, eventId: ev.id, endpointId: ep.id, status: held ? 'held' : 'pending', attempts: 0, nextAttemptAt: held ? null : now, createdAt: now, updatedAt: now })
            .onConflictDoNothing()
            .returning({ id: d.id });
          if (rows.length && !held) created.push(id);
          if (rows.length && backlog) backlogged.add(ep.id);
        }
      });
    }
    for (const id of backlogged) this.onBacklog(id); // after the commit, so the drain sees the rows
    return created;
  }

  /** GET /v1/events: newest first, cursor = the last id seen */
  async list(tenantId: string, env: string, opts: { limit: number; cursor?: string; types?: string[] }) {
    const e = this.database.t.events;
    const conds = [eq(e.tenantId, tenantId), eq(e.env, env)];
    if (opts.cursor) conds.push(lt(e.id, opts.cursor));
    if (opts.types?.length) conds.push(inArray(e.type, opts.types));
    const rows = await this.database.db.select().from(e).where(and(...conds)).orderBy(desc(e.id)).limit(opts.limit + 1);
    return pageOf(rows, opts.limit, envelopeOf, (e) => e.id);
  }
}
