import { and, asc, desc, eq, inArray, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import type { AppContext } from '../../context';
import type { Database, Db } from '../../db/client';
import { ApiError, validationError } from '../../lib/errors';
import { endpointWants } from '../events/service';
import { canonicalJson } from '../../lib/canonical-json';
import { demoInvoices, demoTransactions, type SyncedInvoice, type SyncedTransaction } from './demo-data';
import type { AnyProvider, ErpProvider } from './model';
import { assertLiveProvider, type ConnectionRow, type TokenManager } from './oauth';
import { UpstreamError } from './providers/http';
import { PROVIDER_DEFAULTS, type ErpSettings } from './providers/registry';
import { isoUtc } from './providers/types';
import { emptyCursor, excludedSet, isAfter, maxPosition, median, parseSyncCursor, type ErpCaller, type StreamPosition, type SyncCursor } from './util';

export type RunRow = Database['t']['syncRuns']['$inferSelect'];
export const SYNC_JOB = 'erp.sync';
export const RECOVER_SWEEP = 'erp.sync.recover';
export const RECOVER_EVERY_MS = 5_000;

/** A newer claim took the run over (this worker was considered stalled): stop without writing. */
export class LostOwnership extends Error {}

type Kind = 'invoices' | 'transactions';
interface Source<T> {
  kind: Kind;
  /** rows arrive in (updated_at, id) order: the cursor may be checkpointed after every batch */
  ordered: boolean;
  pages: AsyncIterable<T[]> | Iterable<T[]>;
  idOf(row: T): string;
}
type AnySource = Source<SyncedInvoice> | Source<SyncedTransaction>;

function* chunks<T>(rows: Iterable<T>, size: number): Generator<T[]> {
  let buf: T[] = [];
  for (const r of rows) {
    buf.push(r);
    if (buf.length >= size) {
      yield buf;
      buf = [];
    }
  }
  if (buf.length) yield buf;
}

/** how far before its position an incremental run of an unordered source reads rows again (documents entered late, or changed without their updated_at moving) */
const INCREMENTAL_LOOKBACK_MS = 35 * 86_400_000;
/** pages in a row holding only rows this run already read, after which the provider's paging is taken as stuck */
const STALE_PAGES_MAX = 3;

const INVOICE_UPDATE = [
  'documentType', 'number', 'atcud', 'issueDate', 'dueDate', 'customerNif', 'customerName', 'currency',
  'netTotalCents', 'taxTotalCents', 'grossTotalCents', 'status', 'data', 'sourceUpdatedAt', 'syncedAt',
];
const TXN_UPDATE = [
  'bookingDate', 'amountCents', 'currency', 'description', 'counterpartyName', 'counterpartyIban', 'matchedInvoiceNumber', 'sourceUpdatedAt', 'syncedAt',
];

/**
 * Sync runs: the request (202 + a queued run), the job that pulls and upserts, and the recovery
 * sweep. Durable state is the sync_runs row; the queue only carries run ids.
 *
 * Run states: queued → running → succeeded | failed. A worker claims a run with a conditional
 * update (queued → running, or a stalled running → running), attempts + 1, and proves it still
 * owns the run on every write (status running and attempts unchanged), so a worker that was
 * presumed dead cannot overwrite a newer attempt.
 */
export class SyncService {
  constructor(
    private readonly ctx: AppContext,
    private readonly settings: ErpSettings,
    private readonly tokens: TokenManager,
  ) {}

  private get t() {
    return this.ctx.database.t;
  }
  private now() {
    return this.ctx.clock.now();
  }

  // ------------------------------------------------------------------------------------------
  // POST /v1/erp-connector/sync
  // ------------------------------------------------------------------------------------------

  async request(caller: ErpCaller, body: { provider: AnyProvider; customer_reference: string; since?: string; mode?: 'incremental' | 'full' }) {
    const { db, withTx } = this.ctx.database;
    const r = this.t.syncRuns;
    const mode = body.mode ?? 'incremental';
    const since = mode === 'incremental' && body.since ? new Date(body.since) : null;
    if (since && since.getTime() > this.now().getTime()) throw validationError([{ path: 'since', message: 'must not be in the future: nothing has been updated after it yet' }]);
    // both environments need the customer's consent: an active connection (the sandbox's comes from
    // its consent page), so integrators can test their handling of a denied or missing link
    if (caller.env === 'live') assertLiveProvider(this.settings, body.provider);
    const conn = await this.connectionFor(caller, body.provider, body.customer_reference);
    if (!conn || conn.status !== 'active')
      throw new ApiError(
        'erp_not_connected',
        conn?.status === 'relink_required'
          ? `The ${body.provider} connection of "${body.customer_reference}" needs to be linked again (the provider refused our tokens). Run the OAuth flow again.`
          : `No active ${body.provider} connection for "${body.customer_reference}" in the ${caller.env}. Run POST /v1/erp-connector/oauth/initiate and approve the consent first.`,
      );
    const connectionId = conn.id;

    const now = this.now();
    const staleBefore = now.getTime() - this.settings.stallMs;
    const inflight = await db
      .select()
      .from(r)
      .where(
        and(
          eq(r.tenantId, caller.tenantId),
          eq(r.env, caller.env),
          eq(r.provider, body.provider),
          eq(r.customerReference, body.customer_reference),
          eq(r.mode, mode),
          inArray(r.status, ['queued', 'running']),
        ),
      )
      .orderBy(desc(r.createdAt))
      .limit(10);
    // from the runs finished before this one: once enqueued, a short run can finish before these queries
    const [estimate, webhook] = await Promise.all([this.estimateSeconds(caller, body.provider), this.webhookWillFire(caller)]);
    const joined = inflight.find(
      (x) => (x.since?.getTime() ?? null) === (since?.getTime() ?? null) && (x.status === 'queued' || (x.heartbeatAt?.getTime() ?? 0) >= staleBefore),
    );

    let runId: string;
    let status: 'queued' | 'running';
    if (joined) {
      runId = joined.id;
      status = joined.status as 'queued' | 'running';
    } else {
      runId = Bun.randomUUIDv7();
      status = 'queued';
      await withTx((tx) =>
        tx.insert(r).values({
          id: runId,
          tenantId: caller.tenantId,
          env: caller.env,
          provider: body.provider,
          customerReference: body.customer_reference,
          connectionId,
          mode,
          since,
          status: 'queued',
          attempts: 0,
          invoicesCount: 0,
          transactionsCount: 0,
          createdAt: now,
        }),
      );
      await this.enqueue(runId, 0);
      // billed once a run: a request that joins one in flight is not a second pull
      this.ctx.usage.record({ tenantId: caller.tenantId, apiKeyId: caller.keyId, env: caller.env, meter: 'erp_sync', requestId: caller.requestId });
    }
    return { run_id: runId, status, estimated_duration_seconds: estimate, webhook_will_fire: webhook };
  }

  private connectionFor(caller: ErpCaller, provider: string, customerReference: string): Promise<ConnectionRow | null> {
    return liveConnection(this.ctx.database, caller, provider, customerReference);
  }


  /** median duration of the tenant's last (up to 50) succeeded runs for the provider, in whole seconds (rounded up) */
  async estimateSeconds(caller: Pick<ErpCaller, 'tenantId' | 'env'>, provider: string): Promise<number | null> {
    const r = this.t.syncRuns;
    const rows = await this.ctx.database.db
      .select({ startedAt: r.startedAt, finishedAt: r.finishedAt })
      .from(r)
      .where(and(eq(r.tenantId, caller.tenantId), eq(r.env, caller.env), eq(r.provider, provider), eq(r.status, 'succeeded'), isNotNull(r.finishedAt)))
      .orderBy(desc(r.finishedAt))
      .limit(50);
    const durations = rows.filter((x) => x.startedAt && x.finishedAt).map((x) => Math.max(0, x.finishedAt!.getTime() - x.startedAt!.getTime()));
    const m = median(durations);
    return m === null ? null : Math.ceil(m / 1000);
  }

  async webhookWillFire(caller: Pick<ErpCaller, 'tenantId' | 'env'>): Promise<boolean> {
    const w = this.t.webhookEndpoints;
    const rows = await this.ctx.database.db
      .select({ enabledEvents: w.enabledEvents })
      .from(w)
      .where(and(eq(w.tenantId, caller.tenantId), eq(w.env, caller.env), eq(w.status, 'active')));
    // whatever the run's outcome: its completion and its failure each reach an active endpoint
    // (a disabled or failed endpoint holds them until it is re-enabled: the caller should poll)
    const wants = (type: string) => rows.some((x) => endpointWants(x.enabledEvents ?? [], type));
    return wants('erp.sync.completed') && wants('erp.sync.failed');
  }

  async enqueue(runId: string, attempts: number) {
    try {
      await this.ctx.jobs.enqueue(SYNC_JOB, { runId }, { jobId: `${runId}_a${attempts}` });
    } catch (err) {
      // the run stays queued in the database; the recovery sweep enqueues it again
      this.ctx.log.error('erp sync enqueue failed', { runId, error: (err as Error).message });
    }
  }

  // ------------------------------------------------------------------------------------------
  // The job
  // ------------------------------------------------------------------------------------------

  private owner(run: Pick<RunRow, 'id' | 'attempts'>) {
    const r = this.t.syncRuns;
    return and(eq(r.id, run.id), eq(r.status, 'running'), eq(r.attempts, run.attempts));
  }

  private isStalled(run: RunRow, now = this.now()) {
    return run.status === 'running' && (!run.heartbeatAt || run.heartbeatAt.getTime() < now.getTime() - this.settings.stallMs);
  }

  /**
   * The 'erp.sync' job. It never throws: a failure before the claim leaves the run queued (the
   * sweep enqueues it again), a failure after it is recorded on the run, and a crash leaves a
   * stale heartbeat that the sweep retries.
   */
  async handle(data: { runId: string }): Promise<void> {
    const r = this.t.syncRuns;
    let claimed: RunRow | null;
    try {
      const [run] = await this.ctx.database.db.select().from(r).where(eq(r.id, data.runId)).limit(1);
      if (!run) return;
      claimed = await this.claim(run);
    } catch (err) {
      this.ctx.log.error('erp sync claim failed; the recovery sweep will retry', { runId: data.runId, error: (err as Error).message });
      return;
    }
    if (!claimed) return;
    try {
      await this.work(claimed);
    } catch (err) {
      // e.g. the database went away while recording the outcome: the heartbeat goes stale and the sweep retries
      this.ctx.log.error('erp sync could not record its outcome', { runId: claimed.id, error: (err as Error).message });
    }
  }

  private async work(claimed: RunRow): Promise<void> {
    const r = this.t.syncRuns;
    const log = this.ctx.log;
    const beatEvery = Math.max(50, Math.min(10_000, Math.floor(this.settings.stallMs / 3)));
    const timer = setInterval(() => void this.beat(claimed).catch(() => {}), beatEvery);
    const used = { connectionId: claimed.connectionId };
    try {
      const result = await this.pull(claimed, used);
      await this.finish(claimed, { status: 'succeeded', ...result });
    } catch (err) {
      if (err instanceof LostOwnership) return;
      let errorCode = 'internal_error';
      let errorMessage = 'Unexpected error while syncing; quote the run_id to support.';
      if (err instanceof UpstreamError || err instanceof ApiError) {
        errorCode = err.code;
        errorMessage = err.message;
      } else log.error('erp sync failed', { runId: claimed.id, error: (err as Error)?.message, stack: (err as Error)?.stack?.split('\n').slice(0, 5).join(' | ') });
      if (errorCode === 'relink_required' && used.connectionId) await this.tokens.markRelinkRequired(used.connectionId, errorMessage);
      const [latest] = await this.ctx.database.db.select().from(r).where(eq(r.id, claimed.id)).limit(1);
      await this.finish(claimed, {
        status: 'failed',
        counts: { invoices: latest?.invoicesCount ?? claimed.invoicesCount, transactions: latest?.transactionsCount ?? claimed.transactionsCount },
        cursor: null,
        errorCode,
        errorMessage,
      });
    } finally {
      clearInterval(timer);
    }
  }

  /** queued → running, or stalled running → running (attempts + 1); a stalled run out of attempts fails 'stalled'. */
  private async claim(run: RunRow): Promise<RunRow | null> {
    const r = this.t.syncRuns;
    const now = this.now();
    let cond;
    if (run.status === 'queued') cond = and(eq(r.id, run.id), eq(r.status, 'queued'), eq(r.attempts, run.attempts));
    else if (this.isStalled(run, now)) {
      if (run.attempts >= this.settings.maxAttempts) {
        if (await this.failStalled(run)) this.ctx.events.onEmitted();
        return null;
      }
      const staleBefore = new Date(now.getTime() - this.settings.stallMs);
      cond = and(eq(r.id, run.id), eq(r.status, 'running'), eq(r.attempts, run.attempts), or(isNull(r.heartbeatAt), lt(r.heartbeatAt, staleBefore)));
    } else return null;
    const cursor = run.cursor ?? JSON.stringify(await this.startCursor(run));
    const [claimed] = await this.ctx.database.withTx((tx) =>
      tx
        .update(r)
        .set({ status: 'running', attempts: run.attempts + 1, startedAt: run.startedAt ?? now, heartbeatAt: now, cursor })
        .where(cond)
        .returning(),
    );
    return claimed ?? null;
  }

  /** full: from the start; incremental: from `since` (inclusive), else where the last succeeded run stopped */
  private async startCursor(run: RunRow): Promise<SyncCursor> {
    if (run.mode === 'full') return emptyCursor();
    if (run.since) {
      const pos: StreamPosition = { updated_at: run.since.toISOString(), id: '' };
      return { invoices: pos, transactions: pos };
    }
    return this.lastSucceededCursor(run);
  }

  /** where the customer's last succeeded run stopped: the next incremental run starts there */
  private async lastSucceededCursor(run: RunRow): Promise<SyncCursor> {
    const r = this.t.syncRuns;
    const [last] = await this.ctx.database.db
      .select({ cursor: r.cursor })
      .from(r)
      .where(
        and(
          eq(r.tenantId, run.tenantId),
          eq(r.env, run.env),
          eq(r.provider, run.provider),
          eq(r.customerReference, run.customerReference),
          eq(r.status, 'succeeded'),
          isNotNull(r.cursor),
        ),
      )
      .orderBy(desc(r.finishedAt), desc(r.id)) // (runs finishing in the same millisecond: the later-made one; ids are UUIDv7)
      .limit(1);
    return parseSyncCursor(last?.cursor ?? null) ?? emptyCursor();
  }

  private async beat(run: RunRow) {
    await this.ctx.database.withTx((tx) => tx.update(this.t.syncRuns).set({ heartbeatAt: this.now() }).where(this.owner(run)));
  }

  private async sources(run: RunRow, used: { connectionId: string | null }): Promise<AnySource[]> {
    const batch = this.settings.batchSize;
    const info = run.env === 'live' ? this.settings.providers[run.provider as ErpProvider] : null;
    if (run.env === 'live' && !info?.client) throw new ApiError('oauth_credentials_not_configured', `Live OAuth for ${run.provider} is not configured on this deployment.`);
    const c = this.t.erpConnections;
    let [conn] = run.connectionId ? await this.ctx.database.db.select().from(c).where(eq(c.id, run.connectionId)).limit(1) : [];
    if (conn?.status !== 'active') {
      // relinked since the request? use the customer's current link
      const current = await this.connectionFor({ tenantId: run.tenantId, env: run.env as 'live', keyId: null, requestId: null }, run.provider, run.customerReference);
      if (current?.status === 'active') conn = current;
    }
    if (!conn || conn.status === 'disconnected' || conn.status === 'pending' || conn.status === 'denied' || conn.status === 'error')
      throw new UpstreamError('erp_not_connected', 'the connection was disconnected before the run started');
    used.connectionId = conn.id;
    if (conn.status !== 'active') throw new UpstreamError('relink_required', 'the connection needs to be linked again');
    if (run.env === 'sandbox') {
      const opts = { seed: run.customerReference, invoices: this.settings.demoInvoices, startDate: this.settings.demoStartDate, provider: run.provider };
      const traits = run.provider === 'demo' ? null : PROVIDER_DEFAULTS[run.provider as ErpProvider];
      // what the provider's API cannot give, the sandbox does not either (as live): a document list
      // without VAT breakdowns and references, no bank transactions
      const documents = traits && !traits.documentDetails ? withoutDetails(demoInvoices(opts)) : demoInvoices(opts);
      const invoices: AnySource = { kind: 'invoices', ordered: true, pages: chunks(documents, batch), idOf: (x: SyncedInvoice) => x.provider_document_id };
      if (traits && !traits.bankTransactions) return [invoices];
      return [invoices, { kind: 'transactions', ordered: true, pages: chunks(demoTransactions(opts), batch), idOf: (x: SyncedTransaction) => x.provider_transaction_id }];
    }
    const session = this.tokens.session(conn, info!.client!);
    const client = info!.client!;
    const out: AnySource[] = [{ kind: 'invoices', ordered: false, pages: client.invoices(session), idOf: (x: SyncedInvoice) => x.provider_document_id }];
    if (client.transactions)
      out.push({ kind: 'transactions', ordered: false, pages: client.transactions(session), idOf: (x: SyncedTransaction) => x.provider_transaction_id });
    return out;
  }

  /**
   * Pulls every source and upserts rows after the start cursor, batchSize rows per transaction.
   * Each batch also writes the counts, the heartbeat and (ordered sources) the cursor, in the
   * same transaction, so a retried run resumes where the last committed batch ended.
   */
  private async pull(run: RunRow, used: { connectionId: string | null }): Promise<{ counts: { invoices: number; transactions: number }; cursor: SyncCursor }> {
    const start = parseSyncCursor(run.cursor) ?? emptyCursor();
    const persisted: SyncCursor = { ...start };
    const final: SyncCursor = { ...start };
    const counts = { invoices: run.invoicesCount, transactions: run.transactionsCount };
    const { withTx } = this.ctx.database;
    const r = this.t.syncRuns;
    for (const src of await this.sources(run, used)) {
      const from = start[src.kind];
      // a provider's pages come in no order the cursor can follow (sources not `ordered`): rows at
      // or before the position are read again within the look-back, and taken if new or changed
      const lookback = !src.ordered && from ? { updated_at: new Date(Date.parse(from.updated_at) - INCREMENTAL_LOOKBACK_MS).toISOString(), id: '' } : null;
      // what this run took of an unordered source: a row listed again (pages shifting under the
      // walk) is not written and counted twice; pages of nothing new, in a row, are a provider
      // whose paging does not advance (it would be walked to the page cap, counted as rows)
      const taken = new Set<string>();
      let stalePages = 0;
      let high = from;
      let buf: { row: SyncedInvoice | SyncedTransaction; updatedAt: string }[] = [];
      const flush = async () => {
        if (!buf.length) return;
        const rows = buf;
        buf = [];
        const checkpoint = src.ordered ? { ...persisted, [src.kind]: high } : persisted;
        const next = { ...counts, [src.kind]: counts[src.kind] + rows.length };
        await withTx(async (tx) => {
          // a page fetched before the customer disconnected is not stored after it (consent withdrawn)
          await this.assertStillConnected(tx, used.connectionId);
          if (src.kind === 'invoices') await this.upsertInvoices(tx, run, rows as { row: SyncedInvoice; updatedAt: string }[]);
          else await this.upsertTransactions(tx, run, rows as { row: SyncedTransaction; updatedAt: string }[]);
          const ok = await tx
            .update(r)
            .set({ invoicesCount: next.invoices, transactionsCount: next.transactions, heartbeatAt: this.now(), cursor: JSON.stringify(checkpoint) })
            .where(this.owner(run))
            .returning({ id: r.id });
          if (!ok.length) throw new LostOwnership();
        });
        counts[src.kind] = next[src.kind];
        Object.assign(persisted, checkpoint);
        // bun:sqlite resolves queries without leaving the microtask queue: yield to timers and
        // I/O between batches so HTTP requests (and heartbeats) are served during a long run
        await new Promise<void>((resolve) => setImmediate(resolve));
      };
      for await (const page of src.pages as AsyncIterable<(SyncedInvoice | SyncedTransaction)[]>) {
        const recheck: { row: SyncedInvoice | SyncedTransaction; updatedAt: string; id: string }[] = [];
        let unseen = 0;
        for (const row of page) {
          const updatedAt = isoUtc(row.updated_at);
          if (!updatedAt) continue;
          const id = (src.idOf as (x: SyncedInvoice | SyncedTransaction) => string)(row);
          if (!src.ordered) {
            if (taken.has(id)) continue;
            taken.add(id);
            unseen++;
          }
          if (!isAfter(updatedAt, id, from)) {
            if (lookback && isAfter(updatedAt, id, lookback)) recheck.push({ row, updatedAt, id });
            continue;
          }
          buf.push({ row, updatedAt });
          high = maxPosition(high, updatedAt, id);
          if (buf.length >= this.settings.batchSize) await flush();
        }
        for (const x of await this.newOrChanged(src.kind, run, recheck)) {
          buf.push(x);
          if (buf.length >= this.settings.batchSize) await flush();
        }
        if (!src.ordered && page.length) {
          stalePages = unseen ? 0 : stalePages + 1;
          if (stalePages >= STALE_PAGES_MAX)
            throw new UpstreamError('upstream_rejected', `${src.kind}: the provider answered ${stalePages} pages in a row with only rows already read (its paging does not advance)`);
        }
      }
      await flush();
      final[src.kind] = high;
    }
    if (run.since) {
      // a run from `since` is a window: it moves the incremental position only when it covered it
      // (since at or before that position). A later since (the future, or past the newest row)
      // left rows between the two unread: they stay for the next incremental run to take.
      const previous = await this.lastSucceededCursor(run);
      const since: StreamPosition = { updated_at: run.since.toISOString(), id: '' }; // (start may be a retry's checkpoint)
      for (const kind of ['invoices', 'transactions'] as const) {
        const reached = final[kind]!; // the newest row taken, or `since` itself
        const covered = !isAfter(since.updated_at, since.id, previous[kind]);
        final[kind] = covered && isAfter(reached.updated_at, reached.id, previous[kind]) ? reached : previous[kind];
      }
    }
    return { counts, cursor: final };
  }

  private async assertStillConnected(tx: Db, connectionId: string | null) {
    if (!connectionId) return;
    const c = this.t.erpConnections;
    const [conn] = await tx.select({ status: c.status }).from(c).where(eq(c.id, connectionId)).limit(1);
    if (conn?.status !== 'active') throw new UpstreamError('erp_not_connected', 'the connection was disconnected during the run; nothing after that was stored');
  }

  /** a synced row's own id and whose it is (tenant, environment, provider, customer) */
  private rowOwner(run: RunRow) {
    return { id: Bun.randomUUIDv7(), tenantId: run.tenantId, env: run.env, provider: run.provider, customerReference: run.customerReference };
  }

  private invoiceRow(run: RunRow, x: SyncedInvoice, updatedAt: string, now: Date) {
    return {
      ...this.rowOwner(run),
      providerDocumentId: x.provider_document_id,
      documentType: x.document_type,
      number: x.number,
      atcud: x.atcud || null,
      issueDate: x.issue_date,
      dueDate: x.due_date,
      customerNif: x.customer_nif || null,
      customerName: x.customer_name || null,
      currency: x.currency,
      netTotalCents: x.net_total_cents,
      taxTotalCents: x.tax_total_cents,
      grossTotalCents: x.gross_total_cents,
      status: x.status,
      data: { vat_breakdown: x.vat_breakdown, references: x.references },
      sourceUpdatedAt: updatedAt,
      syncedAt: now,
    };
  }

  private transactionRow(run: RunRow, x: SyncedTransaction, updatedAt: string, now: Date) {
    return {
      ...this.rowOwner(run),
      providerTransactionId: x.provider_transaction_id,
      bookingDate: x.booking_date,
      amountCents: x.amount_cents,
      currency: x.currency,
      description: x.description || null,
      counterpartyName: x.counterparty_name,
      counterpartyIban: x.counterparty_iban,
      matchedInvoiceNumber: x.matched_invoice_number,
      sourceUpdatedAt: updatedAt,
      syncedAt: now,
    };
  }

  private async upsertInvoices(tx: Db, run: RunRow, rows: { row: SyncedInvoice; updatedAt: string }[]) {
    const t = this.t.invoices;
    const now = this.now();
    await tx
      .insert(t)
      .values(rows.map(({ row, updatedAt }) => this.invoiceRow(run, row, updatedAt, now)))
      .onConflictDoUpdate({
        target: [t.tenantId, t.env, t.provider, t.customerReference, t.providerDocumentId],
        set: excludedSet(t as unknown as Record<string, unknown>, INVOICE_UPDATE, this.ctx.database.dialect),
      });
  }

  private async upsertTransactions(tx: Db, run: RunRow, rows: { row: SyncedTransaction; updatedAt: string }[]) {
    const t = this.t.bankTransactions;
    const now = this.now();
    await tx
      .insert(t)
      .values(rows.map(({ row, updatedAt }) => this.transactionRow(run, row, updatedAt, now)))
      .onConflictDoUpdate({
        target: [t.tenantId, t.env, t.provider, t.customerReference, t.providerTransactionId],
        set: excludedSet(t as unknown as Record<string, unknown>, TXN_UPDATE, this.ctx.database.dialect),
      });
  }

  /**
   * Of rows at or before the incremental position (read again within the look-back), those not
   * stored yet or stored otherwise: a provider's document that arrives late, with an older date, or
   * changes without its updated_at moving (or with none: its date stands in for it) is taken; one
   * unchanged is not written again (nor counted).
   */
  private async newOrChanged(kind: 'invoices' | 'transactions', run: RunRow, rows: { row: SyncedInvoice | SyncedTransaction; updatedAt: string; id: string }[]) {
    if (!rows.length) return [];
    const now = this.now();
    const table = kind === 'invoices' ? this.t.invoices : this.t.bankTransactions;
    const idColumn = kind === 'invoices' ? this.t.invoices.providerDocumentId : this.t.bankTransactions.providerTransactionId;
    const compared = (kind === 'invoices' ? INVOICE_UPDATE : TXN_UPDATE).filter((f) => f !== 'syncedAt');
    const stored = new Map<string, Record<string, unknown>>();
    const ids = rows.map((r) => r.id);
    for (let i = 0; i < ids.length; i += 500) {
      const found = await this.ctx.database.db
        .select()
        .from(table)
        .where(and(eq(table.tenantId, run.tenantId), eq(table.env, run.env), eq(table.provider, run.provider), eq(table.customerReference, run.customerReference), inArray(idColumn, ids.slice(i, i + 500))));
      for (const f of found as Record<string, unknown>[]) stored.set(String(kind === 'invoices' ? f.providerDocumentId : f.providerTransactionId), f);
    }
    const same = (a: unknown, b: unknown) =>
      a instanceof Date || b instanceof Date
        ? new Date(a as Date).getTime() === new Date(b as Date).getTime()
        : typeof a === 'object' && a !== null
          ? canonicalJson(a) === canonicalJson(b) // (PostgreSQL's jsonb reorders keys)
          : String(a ?? null) === String(b ?? null); // (a bigint column may come back as text)
    return rows.filter(({ row, updatedAt, id }) => {
      const before = stored.get(id);
      if (!before) return true;
      const next = kind === 'invoices' ? this.invoiceRow(run, row as SyncedInvoice, updatedAt, now) : this.transactionRow(run, row as SyncedTransaction, updatedAt, now);
      return compared.some((f) => !same((next as Record<string, unknown>)[f], before[f]));
    });
  }

  /** The final state and its event, in one transaction (the outbox), then a nudge to the dispatcher. */
  private async finish(
    run: RunRow,
    res: { status: 'succeeded' | 'failed'; counts: { invoices: number; transactions: number }; cursor: SyncCursor | null; errorCode?: string; errorMessage?: string },
  ) {
    const r = this.t.syncRuns;
    const now = this.now();
    const done = await this.ctx.database.withTx(async (tx) => {
      const ok = await tx
        .update(r)
        .set({
          status: res.status,
          invoicesCount: res.counts.invoices,
          transactionsCount: res.counts.transactions,
          ...(res.cursor ? { cursor: JSON.stringify(res.cursor) } : {}),
          errorCode: res.errorCode ?? null,
          errorMessage: res.errorMessage ?? null,
          finishedAt: now,
          heartbeatAt: now,
        })
        .where(this.owner(run))
        .returning({ id: r.id });
      if (!ok.length) return false;
      // new books: decisions must not reuse a score computed before them (cached reads of the last
      // sync), and the books a score reads change (also when the run failed after storing some)
      if (res.status === 'succeeded' && res.counts.invoices + res.counts.transactions > 0) this.ctx.database.touchTenant(run.tenantId, 'scores');
      this.ctx.database.touchTenant(run.tenantId, 'inputs');
      await this.emitFinished(tx, run, res.status, res.counts, res.errorCode);
      return true;
    });
    if (done) this.ctx.events.onEmitted();
  }

  private emitFinished(tx: Db, run: RunRow, status: 'succeeded' | 'failed', counts: { invoices: number; transactions: number }, errorCode?: string) {
    return this.ctx.events.emit(tx, {
      tenantId: run.tenantId,
      env: run.env,
      type: status === 'succeeded' ? 'erp.sync.completed' : 'erp.sync.failed',
      data: {
        run_id: run.id,
        provider: run.provider,
        customer_reference: run.customerReference,
        status,
        invoices_count: counts.invoices,
        transactions_count: counts.transactions,
        ...(errorCode ? { error_code: errorCode } : {}),
      },
    });
  }

  /** A stalled run that used up its attempts: failed 'stalled' (only if still stalled and unchanged). */
  private async failStalled(run: RunRow): Promise<boolean> {
    const r = this.t.syncRuns;
    const now = this.now();
    const staleBefore = new Date(now.getTime() - this.settings.stallMs);
    return this.ctx.database.withTx(async (tx) => {
      const ok = await tx
        .update(r)
        .set({
          status: 'failed',
          errorCode: 'stalled',
          errorMessage: `The worker stopped reporting progress ${run.attempts} times; giving up.`,
          finishedAt: now,
        })
        .where(and(eq(r.id, run.id), eq(r.status, 'running'), eq(r.attempts, run.attempts), or(isNull(r.heartbeatAt), lt(r.heartbeatAt, staleBefore))))
        .returning({ id: r.id });
      if (!ok.length) return false;
      this.ctx.database.touchTenant(run.tenantId, 'inputs'); // what it stored before it stalled
      await this.emitFinished(tx, run, 'failed', { invoices: run.invoicesCount, transactions: run.transactionsCount }, 'stalled');
      return true;
    });
  }

  // ------------------------------------------------------------------------------------------
  // Recovery sweep (every 5 s in worker processes)
  // ------------------------------------------------------------------------------------------

  /**
   * Re-enqueues queued runs (an enqueue may have been lost with its process or Redis) and stalled
   * running runs (heartbeat older than ERP_SYNC_STALL_MS); a stalled run that was already claimed
   * maxAttempts times is failed with error_code 'stalled'. Job ids carry the attempt number, so a
   * duplicate enqueue of the same attempt is dropped by the queue.
   */
  async recover(): Promise<{ requeued: number; failed: number }> {
    const r = this.t.syncRuns;
    const db = this.ctx.database.db;
    const now = this.now();
    const staleBefore = new Date(now.getTime() - this.settings.stallMs);
    const queued = await db.select({ id: r.id, attempts: r.attempts }).from(r).where(eq(r.status, 'queued')).orderBy(asc(r.createdAt)).limit(500);
    for (const q of queued) await this.enqueue(q.id, q.attempts);
    const stalled = await db
      .select()
      .from(r)
      .where(and(eq(r.status, 'running'), or(isNull(r.heartbeatAt), lt(r.heartbeatAt, staleBefore))))
      .limit(500);
    let failed = 0;
    let requeued = queued.length;
    for (const s of stalled) {
      if (s.attempts >= this.settings.maxAttempts) {
        if (await this.failStalled(s)) failed++;
      } else {
        await this.enqueue(s.id, s.attempts);
        requeued++;
      }
    }
    if (failed) this.ctx.events.onEmitted();
    if (failed || stalled.length) this.ctx.log.warn('erp sync recovery', { stalled: stalled.length, failed });
    return { requeued, failed };
  }
}

/**
 * The connection a (provider, customer_reference) stands for: the newest live one (active, else
 * relink_required), as a sync uses it and as receivables finance reads whose books they are.
 */
export async function liveConnection(database: Database, scope: Pick<ErpCaller, 'tenantId' | 'env'>, provider: string, customerReference: string): Promise<ConnectionRow | null> {
  const c = database.t.erpConnections;
  const rows = await database.db
    .select()
    .from(c)
    .where(
      and(
        eq(c.tenantId, scope.tenantId),
        eq(c.env, scope.env),
        eq(c.provider, provider),
        eq(c.customerReference, customerReference),
        inArray(c.status, ['active', 'relink_required']),
      ),
    )
    .orderBy(desc(c.createdAt))
    .limit(5);
  return rows.find((x) => x.status === 'active') ?? rows[0] ?? null;
}

/** documents as a list API without their VAT breakdown and references gives them */
function* withoutDetails(invoices: Iterable<SyncedInvoice>): Generator<SyncedInvoice> {
  for (const invoice of invoices) yield { ...invoice, vat_breakdown: [], references: [] };
}
