import { and, eq, gte, lt } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { FlushBuffer } from '../../lib/flush-buffer';
import { clientIdsByKey } from '../tenants/service';
import type { Logger } from '../../lib/log';

/**
 * Metered usage. Prices per meter line in euro cents (live keys only; sandbox usage is recorded
 * as not billable). bureau_passthrough has no list price: each record carries the bureau's
 * reported cost × 1.15.
 */
export const PRICES_CENTS: Record<string, number | null> = {
  score: 50,
  esg: 30,
  erp_sync: 20,
  decision: 75,
  credit_limit: 40,
  spreads_index: 5,
  sector_risk: 5,
  nif_lookup: 5,
  aml_screen: 10,
  kyc_verify: 50,
  reconcile: 20,
  invoice_extract: 5,
  saft_parse: 50,
  factoring_operation: 100,
  basel_capital: 1,
  cession_notice: 50,
  insurance_submit: 100,
  forecast: 30,
  csrd_report: 100,
  bureau_passthrough: null,
};
export const BUREAU_MARKUP = 1.15;
export const METERS = Object.keys(PRICES_CENTS);

export interface UsageEvent {
  tenantId: string;
  apiKeyId: string | null;
  env: 'sandbox' | 'live';
  meter: string;
  quantity?: number;
  /** for pass-through meters: the upstream cost of one unit in cents, before markup */
  costCents?: number;
  requestId: string | null;
}

// small and frequent: a flush's work on the event loop (building the batch) showed in the p99
// (at 17 k req/s, 200 → 25 ms: SQLite ~8 → ~5 ms, PostgreSQL ~14 → ~10 ms)
const FLUSH_EVERY_MS = 25;

type UsageRow = Database['t']['usageRecords']['$inferInsert'] & { quantity: number };

/**
 * The billing ledger. Calls alike (same tenant, key, environment, meter and unit price) within
 * the same UTC second are counted in one row: its quantity, its amount, the second as created_at
 * and the calls' request ids. A row per call cost more CPU (the insert and its two index entries,
 * ~5–9 µs a call on this machine) than the cached score it billed (docs/decisions.md).
 */
export class UsageMeter {
  private readonly buffer: FlushBuffer<UsageRow>;

  constructor(
    private readonly database: Database,
    private readonly now: () => Date,
    log: Logger,
  ) {
    this.buffer = new FlushBuffer<UsageRow>(
      (rows) => database.appendRows(database.t.usageRecords, rows),
      { intervalMs: FLUSH_EVERY_MS, maxItems: 5000, onError: (err, rows) => log.error('usage flush failed; will retry', { error: String(err), rows: rows.length }) },
    );
  }

  // the rows still open to more calls: by key (or tenant, for calls without a key), then meter;
  // looked up by strings that live on cached records, whose hashes are computed once
  private open = new Map<string, Map<string, UsageRow>>();
  private openEpoch = 0;

  /**
   * Nothing is billed for a failed call: the lines of a request (by its id) are held from its key's
   * admission until its answer, then recorded if it succeeded (status < 400) and dropped otherwise,
   * whichever service recorded them on the way (a decision and the bureau lookup of a score computed
   * for a factoring debtor, before the second debtor is not found). A HEAD's own meters are never
   * recorded (it answers a GET without what was asked for), its pass-through costs are when it
   * succeeds. Lines recorded after the answer (a job's, with the request's id) are recorded as ever.
   * Bounded: a request whose answer is never seen loses its lines past 10 000 held.
   */
  private readonly held = new Map<string, { head: boolean; lines: UsageEvent[] | null }>();
  hold(requestId: string, head: boolean) {
    if (this.held.size >= 10_000) this.held.delete(this.held.keys().next().value!);
    this.held.set(requestId, { head, lines: null });
  }
  /** the answer of a held request is known: its lines recorded (succeeded) or dropped; once */
  settle(requestId: string, succeeded: boolean) {
    const h = this.held.get(requestId);
    if (!h) return;
    this.held.delete(requestId);
    if (succeeded && h.lines) for (const e of h.lines) this.record(e);
  }

  record(e: UsageEvent) {
    if (this.held.size && e.requestId !== null) {
      const h = this.held.get(e.requestId);
      if (h) {
        if (!h.head || e.meter === 'bureau_passthrough') (h.lines ??= []).push(e);
        return;
      }
    }
    const quantity = e.quantity ?? 1;
    const unit = e.costCents !== undefined ? Math.round(e.costCents * BUREAU_MARKUP * 10000) / 10000 : (PRICES_CENTS[e.meter] ?? null);
    const billable = e.env === 'live';
    const secondMs = Math.floor(this.now().getTime() / 1000) * 1000;
    if (this.openEpoch !== this.buffer.epoch) {
      // the buffer was flushed: its rows are being written and can take no more calls
      this.open.clear();
      this.openEpoch = this.buffer.epoch;
    }
    const who = e.apiKeyId ?? e.tenantId;
    let byMeter = this.open.get(who);
    if (!byMeter) this.open.set(who, (byMeter = new Map()));
    let row = byMeter.get(e.meter);
    if (!row || row.createdAt.getTime() !== secondMs || row.unitAmountCents !== unit || row.apiKeyId !== e.apiKeyId || row.tenantId !== e.tenantId || row.env !== e.env) {
      // time-ordered ids: appending to the primary-key index dirties far fewer pages than random
      // ones; a row keeps its id if a flush is retried, so a retry never counts its calls twice
      row = { id: Bun.randomUUIDv7(), tenantId: e.tenantId, apiKeyId: e.apiKeyId, env: e.env, meter: e.meter, quantity: 0, unitAmountCents: unit, amountCents: null, billable, requestIds: null, createdAt: new Date(secondMs) };
      byMeter.set(e.meter, row);
      this.buffer.push(row);
    }
    row.quantity += quantity;
    row.amountCents = unit === null ? null : billable ? Math.round(unit * row.quantity * 10000) / 10000 : 0;
    if (e.requestId) row.requestIds = row.requestIds ? `${row.requestIds} ${e.requestId}` : e.requestId;
  }

  start() {
    this.buffer.start();
  }
  flush() {
    return this.buffer.flush();
  }
  stop() {
    return this.buffer.stop();
  }

  /** totals per meter (and per UTC day, or per API key, when grouped so) for one tenant and environment */
  async summary(tenantId: string, env: string, from: Date, to: Date, groupBy: 'day' | 'meter' | 'key') {
    await this.flush();
    const t = this.database.t.usageRecords;
    const rows = await this.database.db
      .select({ meter: t.meter, quantity: t.quantity, amountCents: t.amountCents, billable: t.billable, createdAt: t.createdAt, apiKeyId: t.apiKeyId })
      .from(t)
      .where(and(eq(t.tenantId, tenantId), eq(t.env, env), gte(t.createdAt, from), lt(t.createdAt, to)));
    const groups = new Map<string, { day?: string; api_key_id?: string | null; meter: string; quantity: number; amount_cents: number; billable_quantity: number }>();
    for (const r of rows) {
      const day = groupBy === 'day' ? r.createdAt.toISOString().slice(0, 10) : undefined;
      const key = groupBy === 'key' ? { api_key_id: r.apiKeyId } : {};
      const k = `${day ?? ''}|${groupBy === 'key' ? (r.apiKeyId ?? '-') : ''}|${r.meter}`;
      const g = groups.get(k) ?? { ...(day ? { day } : {}), ...key, meter: r.meter, quantity: 0, amount_cents: 0, billable_quantity: 0 };
      g.quantity += r.quantity;
      g.amount_cents = Math.round((g.amount_cents + (r.amountCents ?? 0)) * 10000) / 10000;
      if (r.billable) g.billable_quantity += r.quantity;
      groups.set(k, g);
    }
    const totals = [...groups.values()].sort((a, b) => (a.day ?? '').localeCompare(b.day ?? '') || (a.api_key_id ?? '').localeCompare(b.api_key_id ?? '') || a.meter.localeCompare(b.meter));
    if (groupBy !== 'key') return totals;
    // usage of an OAuth client's tokens is named by its client_id (its principal key id is in no list)
    const clientOf = await clientIdsByKey(this.database, tenantId, totals.map((g) => g.api_key_id ?? null));
    return totals.map((g) => ({ ...g, client_id: (g.api_key_id && clientOf.get(g.api_key_id)) || null }));
  }
}
