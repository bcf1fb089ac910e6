import { and, asc, desc, eq, gt, gte, sql } from 'drizzle-orm';
import type { AppContext } from '../../context';
import { iso, pageOf } from '../../lib/schemas';
import { ApiError } from '../../lib/errors';
import type { AnyProvider, ConnectionBody, InvoiceBody, SyncRunBody, TransactionBody } from './model';
import { OAuthService, TokenManager, type ConnectionRow } from './oauth';
import { erpSettingsFromEnv, type Env, type ErpSettings } from './providers/registry';
import type { PagingLimits } from './providers/types';
import { SyncService, type RunRow } from './sync';
import type { ErpCaller } from './util';
import { afterTimeCursor, decodePageCursor, encodePageCursor, timeCursorOf } from '../../lib/page-cursor';

type InvoiceRow = AppContext['database']['t']['invoices']['$inferSelect'];
type TxnRow = AppContext['database']['t']['bankTransactions']['$inferSelect'];

export const runBody = (r: RunRow): SyncRunBody => ({
  run_id: r.id,
  provider: r.provider,
  customer_reference: r.customerReference,
  mode: r.mode as 'incremental' | 'full',
  since: iso(r.since),
  status: r.status as SyncRunBody['status'],
  attempts: r.attempts,
  invoices_count: r.invoicesCount,
  transactions_count: r.transactionsCount,
  error_code: r.errorCode,
  error_message: r.errorMessage,
  created_at: r.createdAt.toISOString(),
  started_at: iso(r.startedAt),
  finished_at: iso(r.finishedAt),
});

/** Never tokens, state or PKCE material. */
export const connectionBody = (c: ConnectionRow): ConnectionBody => ({
  id: c.id,
  provider: c.provider,
  customer_reference: c.customerReference,
  status: c.status as ConnectionBody['status'],
  created_at: c.createdAt.toISOString(),
  connected_at: iso(c.connectedAt),
  company_nif: c.companyNif ?? null,
  token_expires_at: iso(c.tokenExpiresAt),
  status_reason: c.statusReason ?? null,
});

const invoiceBody = (r: InvoiceRow): InvoiceBody => {
  const data = (r.data ?? {}) as { vat_breakdown?: InvoiceBody['vat_breakdown']; references?: string[] };
  return {
    id: r.id,
    provider: r.provider,
    customer_reference: r.customerReference,
    provider_document_id: r.providerDocumentId,
    document_type: r.documentType,
    number: r.number,
    atcud: r.atcud,
    issue_date: r.issueDate,
    due_date: r.dueDate,
    customer_nif: r.customerNif,
    customer_name: r.customerName,
    currency: r.currency,
    net_total_cents: Number(r.netTotalCents),
    tax_total_cents: Number(r.taxTotalCents),
    gross_total_cents: Number(r.grossTotalCents),
    vat_breakdown: data.vat_breakdown ?? [],
    status: r.status,
    references: data.references ?? [],
    updated_at: r.sourceUpdatedAt,
    synced_at: r.syncedAt.toISOString(),
  };
};

const txnBody = (r: TxnRow): TransactionBody => ({
  id: r.id,
  provider: r.provider,
  customer_reference: r.customerReference,
  provider_transaction_id: r.providerTransactionId,
  booking_date: r.bookingDate,
  amount_cents: Number(r.amountCents),
  currency: r.currency,
  description: r.description,
  counterparty_name: r.counterpartyName,
  counterparty_iban: r.counterpartyIban,
  matched_invoice_number: r.matchedInvoiceNumber,
  updated_at: r.sourceUpdatedAt,
  synced_at: r.syncedAt.toISOString(),
});

const isoParam = (v: string | undefined) => (v ? new Date(v).toISOString() : null);

/**
 * The ERP connector of one process: OAuth, sync runs and the read side. Every query is scoped by
 * tenant and environment; another tenant's id is simply not found (404, nothing leaked).
 */
export class ErpService {
  readonly tokens: TokenManager;
  readonly oauth: OAuthService;
  readonly sync: SyncService;

  constructor(
    private readonly ctx: AppContext,
    readonly settings: ErpSettings,
  ) {
    this.tokens = new TokenManager(ctx);
    this.oauth = new OAuthService(ctx, settings);
    this.sync = new SyncService(ctx, settings, this.tokens);
  }

  private get db() {
    return this.ctx.database.db;
  }
  private get t() {
    return this.ctx.database.t;
  }

  /**
   * Newest first, for any table scoped by tenant and environment that has provider,
   * customer_reference, created_at and id; cursor = (created_at, id) of the last item.
   */
  private async newestFirst<Row extends { createdAt: Date; id: string }, Body>(
    table: typeof this.t.erpConnections | typeof this.t.syncRuns,
    body: (row: Row) => Body,
    caller: ErpCaller,
    q: { limit?: number; cursor?: string; provider?: AnyProvider; customer_reference?: string },
  ) {
    const c = table as typeof this.t.syncRuns; // the columns used below exist on both tables
    const limit = q.limit ?? 50;
    const conds = [eq(c.tenantId, caller.tenantId), eq(c.env, caller.env)];
    if (q.provider) conds.push(eq(c.provider, q.provider));
    if (q.customer_reference) conds.push(eq(c.customerReference, q.customer_reference));
    const rows = (await this.db.select().from(c).where(and(...conds, afterTimeCursor(c.createdAt, c.id, q.cursor))).orderBy(desc(c.createdAt), desc(c.id)).limit(limit + 1)) as unknown as Row[];
    return pageOf(rows, limit, body, (last) => timeCursorOf(last.createdAt, last.id));
  }

  listConnections(caller: ErpCaller, q: { limit?: number; cursor?: string; provider?: AnyProvider; customer_reference?: string }) {
    return this.newestFirst(this.t.erpConnections, connectionBody, caller, q);
  }

  async getConnection(caller: ErpCaller, id: string) {
    const c = this.t.erpConnections;
    const [row] = await this.db.select().from(c).where(and(eq(c.id, id), eq(c.tenantId, caller.tenantId), eq(c.env, caller.env))).limit(1);
    if (!row) throw new ApiError('resource_not_found', 'No ERP connection with this id in this environment.');
    return connectionBody(row);
  }

  /** status disconnected (a denied or failed link keeps its final status: the record that consent was refused), tokens / state / verifier wiped; idempotent */
  async disconnect(caller: ErpCaller, id: string) {
    const c = this.t.erpConnections;
    const scope = and(eq(c.id, id), eq(c.tenantId, caller.tenantId), eq(c.env, caller.env));
    const [row] = await this.ctx.database.withTx((tx) => {
      this.ctx.database.touchTenant(caller.tenantId, 'inputs'); // an active connection names a NIF that scores read
      return tx
        .update(c)
        .set({
          status: sql<string>`case when ${c.status} in ('denied', 'error') then ${c.status} else 'disconnected' end`,
          statusReason: sql<string | null>`case when ${c.status} in ('denied', 'error') then ${c.statusReason} else 'disconnected by the tenant (DELETE)' end`,
          accessTokenEnc: null,
          refreshTokenEnc: null,
          tokenExpiresAt: null,
          stateHash: null,
          pkceVerifierEnc: null,
          updatedAt: this.ctx.clock.now(),
        })
        .where(scope)
        .returning();
    });
    if (!row) throw new ApiError('resource_not_found', 'No ERP connection with this id in this environment.');
    return connectionBody(row);
  }

  async getRun(caller: ErpCaller, runId: string) {
    const r = this.t.syncRuns;
    const [row] = await this.db
      .select()
      .from(r)
      .where(and(eq(r.id, runId), eq(r.tenantId, caller.tenantId), eq(r.env, caller.env)))
      .limit(1);
    if (!row) throw new ApiError('resource_not_found', 'No sync run with this id in this environment.');
    return runBody(row);
  }

  listRuns(caller: ErpCaller, q: { limit?: number; cursor?: string; provider?: AnyProvider; customer_reference?: string }) {
    return this.newestFirst(this.t.syncRuns, runBody, caller, q);
  }

  /** Synced rows oldest first by id (time-ordered UUIDv7: insertion order); cursor = last id. */
  private async syncedRows<Row extends { id: string }, Body>(
    table: typeof this.t.invoices | typeof this.t.bankTransactions,
    body: (row: Row) => Body,
    caller: ErpCaller,
    provider: string,
    q: SyncedQuery,
  ) {
    const t = table as typeof this.t.invoices; // the columns used below exist on both tables
    const limit = q.limit ?? 50;
    const conds = [eq(t.tenantId, caller.tenantId), eq(t.env, caller.env), eq(t.provider, provider)];
    if (q.customer_reference) conds.push(eq(t.customerReference, q.customer_reference));
    const since = isoParam(q.since);
    if (since) conds.push(gte(t.sourceUpdatedAt, since));
    const syncedSince = isoParam(q.synced_since);
    if (syncedSince) {
      // the change feed: oldest change first, paged by (synced_at, id), so a row changed while the
      // pages are read (its id low, its synced_at new) comes on a later page, not behind the reader
      conds.push(gte(t.syncedAt, new Date(syncedSince)));
      const after = afterTimeCursor(t.syncedAt, t.id, q.cursor, 'asc');
      if (after) conds.push(after);
      const rows = (await this.db.select().from(t).where(and(...conds)).orderBy(asc(t.syncedAt), asc(t.id)).limit(limit + 1)) as unknown as (Row & { syncedAt: Date })[];
      return pageOf(rows, limit, body, (last) => timeCursorOf(last.syncedAt, last.id));
    }
    const cur = decodePageCursor<[string]>(q.cursor, ['string']);
    if (cur) conds.push(gt(t.id, cur[0]));
    const rows = (await this.db.select().from(t).where(and(...conds)).orderBy(asc(t.id)).limit(limit + 1)) as unknown as Row[];
    return pageOf(rows, limit, body, (last) => encodePageCursor([last.id]));
  }

  listInvoices(caller: ErpCaller, provider: string, q: SyncedQuery) {
    return this.syncedRows(this.t.invoices, invoiceBody, caller, provider, q);
  }

  listTransactions(caller: ErpCaller, provider: string, q: SyncedQuery) {
    return this.syncedRows(this.t.bankTransactions, txnBody, caller, provider, q);
  }
}

type SyncedQuery = { limit?: number; cursor?: string; customer_reference?: string; since?: string; synced_since?: string };

// ---------------------------------------------------------------------------------------------
// One service per AppContext. Settings come from the validated configuration's ERP_* variables
// unless configureErp() was called (tests pointing providers at fakes).
// ---------------------------------------------------------------------------------------------

const services = new WeakMap<AppContext, ErpService>();

export function erpService(ctx: AppContext): ErpService {
  let s = services.get(ctx);
  if (!s) {
    s = new ErpService(ctx, erpSettingsFromEnv(ctx.config.erpEnv));
    services.set(ctx, s);
  }
  return s;
}

/** Replaces the ERP settings of this context with ones read from `env` (e.g. fake provider URLs in tests), and the paging caps if given. */
export function configureErp(ctx: AppContext, env: Env, limits?: PagingLimits): ErpService {
  const s = new ErpService(ctx, erpSettingsFromEnv(env, limits));
  services.set(ctx, s);
  return s;
}
