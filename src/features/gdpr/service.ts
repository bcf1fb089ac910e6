import { and, asc, count, eq, getTableColumns, gt, inArray, isNull, lt, type SQL } from 'drizzle-orm';
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core';
import { CACHE_ASPECTS, type Database, type Db } from '../../db/client';
import type { Schema } from '../../db/schema';
import { randomHex, sha256Hex } from '../../lib/crypto';
import { ApiError } from '../../lib/errors';
import { AdminService, auditLogOfEnv, operatorActor, type Actor } from '../admin/service';
import type { TenantService } from '../tenants/service';
import { EXPORT_ARRAY_CATEGORIES, type EraseResult, type ExportArrayCategory, type ExportManifestBody } from './model';

/**
 * GDPR data-subject requests of a tenant (docs/gdpr.md):
 *
 * - export: one JSON document with every row tied to the tenant in one environment (the calling
 *   key's: a sandbox key never sees live data, nor a live key sandbox data), streamed page by page
 *   (keyset pagination on the primary key) so memory does not grow with the data; the manifest
 *   with the row counts leads the document.
 * - erase (both environments, so a live key or the operator only): in one transaction, revoke every key, anonymise personal data, keep the rows the
 *   anti-money-laundering law requires (Lei 83/2017 art. 51: 7 years) with retain_until set, delete
 *   the rest, terminate the tenant.
 * - purgeExpiredRetention: the periodic job deleting rows whose retain_until has passed.
 *
 * Every query is scoped by tenant_id, uses Drizzle's query builder only (same code on SQLite and
 * PostgreSQL) and every write goes through withTx.
 */

export const EXPORT_FORMAT_VERSION = '1' as const;
export const EXPORT_PAGE_SIZE = 1000;
export const RETENTION_YEARS = 7;
export const LEGAL_BASIS_LAW = 'Lei n.º 83/2017, art. 51.º';
export const GDPR_BASIS = 'GDPR art. 17(3)(b) and art. 6(1)(c)';

type AuditFn = (tx: Db, actor: Actor, action: string, target: string | null, details?: Record<string, unknown>) => Promise<void>;
type Col = AnyPgColumn;

// ---------------------------------------------------------------------------------------------
// Categories
// ---------------------------------------------------------------------------------------------

interface CategorySpec {
  name: ExportArrayCategory;
  table: (s: Schema) => PgTable;
  /** database column names never exported */
  omit?: string[];
  omitReason?: string;
}

/** Tables kept on erasure with retain_until (receivables finance, data-subject requests): exported and purged alike. */
const KEPT_AS_THEY_ARE: { name: ExportArrayCategory; table: (s: Schema) => PgTable }[] = [
  { name: 'finance_operations', table: (s) => s.financeOperations },
  { name: 'assigned_invoices', table: (s) => s.assignedInvoices },
  { name: 'confirming_programmes', table: (s) => s.confirmingProgrammes },
  { name: 'confirming_suppliers', table: (s) => s.confirmingSuppliers },
  { name: 'confirming_payables', table: (s) => s.confirmingPayables },
  { name: 'audit_entries', table: (s) => s.auditEntries },
  { name: 'cession_notices', table: (s) => s.cessionNotices },
  { name: 'insurance_submissions', table: (s) => s.insuranceSubmissions },
  { name: 'gdpr_requests', table: (s) => s.gdprRequests },
];
export const CATEGORIES: readonly CategorySpec[] = [
  { name: 'api_keys', table: (s) => s.apiKeys, omit: ['key_hash'], omitReason: 'hash of the secret key; the plaintext is never stored' },
  { name: 'oauth_clients', table: (s) => s.oauthClients, omit: ['secret_hash', 'previous_secret_hash'], omitReason: 'hashes of the client secrets; the plaintext is never stored' },
  { name: 'usage_records', table: (s) => s.usageRecords },
  { name: 'audit_log', table: (s) => s.auditLog },
  { name: 'score_results', table: (s) => s.scoreResults },
  { name: 'esg_assessments', table: (s) => s.esgAssessments },
  {
    name: 'erp_connections',
    table: (s) => s.erpConnections,
    omit: ['access_token_enc', 'refresh_token_enc', 'state_hash', 'state_expires_at', 'pkce_verifier_enc'],
    omitReason: 'OAuth access/refresh tokens, OAuth state and PKCE verifier are credentials, not data about the tenant',
  },
  { name: 'sync_runs', table: (s) => s.syncRuns },
  { name: 'invoices', table: (s) => s.invoices },
  { name: 'bank_transactions', table: (s) => s.bankTransactions },
  {
    name: 'webhook_endpoints',
    table: (s) => s.webhookEndpoints,
    omit: ['secret_enc', 'previous_secret_enc'],
    omitReason: 'signing secrets (encrypted); secret_prefix identifies the secret',
  },
  { name: 'events', table: (s) => s.events },
  { name: 'webhook_deliveries', table: (s) => s.webhookDeliveries },
  { name: 'credit_decisions', table: (s) => s.creditDecisions },
  { name: 'credit_policies', table: (s) => s.creditPolicies },
  { name: 'aml_screenings', table: (s) => s.amlScreenings },
  { name: 'kyc_verifications', table: (s) => s.kycVerifications },
  { name: 'saft_runs', table: (s) => s.saftRuns, omit: ['public_key_pem'], omitReason: 'the producer\'s public key given for a run: not data about the tenant' },
  ...KEPT_AS_THEY_ARE,
  { name: 'csrd_reports', table: (s) => s.csrdReports },
];
// keep model.ts and this list in step
if (CATEGORIES.map((c) => c.name).join() !== EXPORT_ARRAY_CATEGORIES.join()) throw new Error('gdpr: CATEGORIES and EXPORT_ARRAY_CATEGORIES differ');

export const EXPORT_OMITTED: ExportManifestBody['omitted'] = [
  ...CATEGORIES.filter((c) => c.omit).map((c) => ({ category: c.name, fields: c.omit!, reason: c.omitReason! })),
  {
    category: 'idempotency_keys',
    reason: 'request-replay cache kept at most 24 h; stored responses may contain one-time secrets (a rotated key’s plaintext)',
  },
];

/** Receivables-finance records: contracts and assignments of companies' credits, kept as they are (the audit chains must stay verifiable). */
const FINANCE_CATEGORIES = ['finance_operations', 'assigned_invoices', 'confirming_programmes', 'confirming_suppliers', 'confirming_payables', 'audit_entries', 'cession_notices', 'insurance_submissions'] as const;
/** Kept on erase (anonymised) with retain_until = now + 7 years. */
export const RETAINED_CATEGORIES = [
  'tenant',
  'api_keys',
  'usage_records',
  'audit_log',
  'score_results',
  'esg_assessments',
  'sync_runs',
  'invoices',
  'bank_transactions',
  'credit_decisions',
  'aml_screenings',
  'kyc_verifications',
  ...FINANCE_CATEGORIES,
  'gdpr_requests',
] as const;
/**
 * Deleted on erase: no law requires them. CSRD reports print what the caller typed (a sole
 * trader's name and address) and are drawn from the ESG assessments, which are kept.
 */
export const DELETED_CATEGORIES = ['erp_connections', 'webhook_deliveries', 'webhook_endpoints', 'events', 'idempotency_keys', 'credit_policies', 'saft_runs', 'oauth_clients', 'csrd_reports'] as const;

/** What erase does to the retained rows (also returned in retained_under_legal_basis.anonymised). */
export const ANONYMISED = [
  'tenant.name → "erased-tenant-<first 8 characters of the id>"',
  'api_keys.name → "erased"; revoke_reason → "gdpr_erasure"; revoked_at → now (kept if already revoked)',
  'usage_records.request_ids → null',
  'audit_log.details → {}',
  'score_results.customer_reference → null (also removed from the stored result)',
  'esg_assessments.customer_reference → null (also removed from the stored result)',
  'credit_decisions.customer_reference → null (also removed from the stored response)',
  'aml_screenings.customer_reference → null (also removed from the stored response); the screened name is kept (the AML record itself)',
  'kyc_verifications.customer_reference → null (also removed from the stored response); the checks are kept (the AML record itself)',
  'sync_runs.customer_reference → keyed hash (salt discarded); error_message, cursor → null',
  'invoices.customer_reference → keyed hash; customer_name → null; personal keys inside data (names, e-mail, phone, address, IBAN) → removed; customer_nif kept (tax record of a business counterparty)',
  'bank_transactions.customer_reference → keyed hash; counterparty_name, counterparty_iban, description → null',
  'gdpr_requests.subject (the person\'s identifiers) → {}; result.bundle (the access bundles) → removed; type, dates, status and what was done kept as the record of compliance (art. 5(2))',
  'finance_operations.customer_reference → null; confirming_suppliers: personal keys inside data (contact e-mail, phone) → removed; the other finance records and the audit trails are kept unchanged (business records of companies; their hash chains stay verifiable)',
];

/** Keys removed (at any depth) from the JSON documents kept with invoices. */
export const PERSONAL_JSON_KEYS = new Set([
  'customer_name',
  'customer_email',
  'customer_phone',
  'customer_address',
  'customer_reference',
  'counterparty_name',
  'counterparty_iban',
  'contact',
  'contact_name',
  'email',
  'phone',
  'telephone',
  'mobile',
  'address',
  'iban',
]);

export function redactJson(value: unknown): { value: unknown; changed: boolean } {
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v) => {
      const r = redactJson(v);
      changed ||= r.changed;
      return r.value;
    });
    return { value: out, changed };
  }
  if (value && typeof value === 'object') {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (PERSONAL_JSON_KEYS.has(k.toLowerCase())) {
        changed = true;
        continue;
      }
      const r = redactJson(v);
      changed ||= r.changed;
      out[k] = r.value;
    }
    return { value: out, changed };
  }
  return { value, changed: false };
}

export function addYears(d: Date, years: number): Date {
  const r = new Date(d.getTime());
  r.setUTCFullYear(r.getUTCFullYear() + years);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Table helpers (generic over the tenant-owned tables)
// ---------------------------------------------------------------------------------------------

function columns(table: PgTable) {
  return getTableColumns(table) as unknown as Record<string, Col>;
}

/** select list keyed by database column name (snake_case), without the omitted columns */
function selection(table: PgTable, omit: string[] = []) {
  const sel: Record<string, Col> = {};
  for (const c of Object.values(columns(table))) if (!omit.includes(c.name)) sel[c.name] = c;
  return sel;
}

function col(table: PgTable, prop: string): Col {
  const c = columns(table)[prop];
  if (!c) throw new Error(`gdpr: column ${prop} missing`);
  return c;
}

async function countWhere(db: Db, table: PgTable, where: SQL | undefined): Promise<number> {
  const [row] = await db.select({ n: count() }).from(table).where(where);
  return Number(row?.n ?? 0);
}

// ---------------------------------------------------------------------------------------------
// Export
// ---------------------------------------------------------------------------------------------

/** Which environment's rows an export holds; 'all' only for the operator and tests (no route gives it). */
export type ExportEnv = 'sandbox' | 'live' | 'all';

/**
 * The rows of `table` (category `name`) that belong to environment `env` (undefined: no condition).
 * Most tables carry env. audit_log does not: a record belongs to its acting key's environment; an
 * operator's record (no acting key) to the environment of the key it targets, else to live.
 * webhook_deliveries belong to their event's environment.
 */
function envCondition(database: Database, name: ExportArrayCategory, table: PgTable, tenantId: string, env: ExportEnv): SQL | undefined {
  if (env === 'all') return undefined;
  const { t, db } = database;
  if (name === 'audit_log') return auditLogOfEnv(database, tenantId, env);
  if (name === 'webhook_deliveries') {
    const e = t.events;
    return inArray(t.webhookDeliveries.eventId, db.select({ id: e.id }).from(e).where(and(eq(e.tenantId, tenantId), eq(e.env, env))));
  }
  return eq(col(table, 'env'), env);
}

export interface PreparedExport {
  manifest: ExportManifestBody;
  filename: string;
  /** the JSON document, in pieces (one per page of rows) */
  chunks(): AsyncGenerator<string>;
}

export class GdprService {
  constructor(
    private readonly database: Database,
    private readonly now: () => Date,
    private readonly audit: AuditFn,
    private readonly pageSize = EXPORT_PAGE_SIZE,
  ) {}

  /**
   * Counts every category (the manifest) and returns a generator that streams the document.
   * With an actor, the gdpr.exported audit record is written first, so it is part of the export;
   * an actor's export is always of its own environment.
   */
  async prepareExport(tenantId: string, env: ExportEnv, actor?: Actor): Promise<PreparedExport> {
    const { db, t } = this.database;
    if (actor) {
      if (actor.tenantId !== tenantId) throw new ApiError('cross_tenant_forbidden');
      if (actor.keyId !== null && actor.env !== env) throw new ApiError('cross_environment_forbidden', `A ${actor.env} key can only export ${actor.env} data.`);
      await this.database.withTx((tx) => this.audit(tx, actor, 'gdpr.exported', tenantId, { format_version: EXPORT_FORMAT_VERSION, environment: env }));
    }
    const database = this.database;
    const where = (c: CategorySpec, table: PgTable, extra?: SQL) => and(eq(col(table, 'tenantId'), tenantId), envCondition(database, c.name, table, tenantId, env), extra);
    const tenantSel = selection(t.tenants);
    const [tenant] = await db.select(tenantSel).from(t.tenants).where(eq(t.tenants.id, tenantId));
    if (!tenant) throw new ApiError('resource_not_found', `No tenant ${tenantId}.`);

    const counts: Record<string, number> = { tenant: 1 };
    for (const c of CATEGORIES) {
      const table = c.table(t);
      counts[c.name] = await countWhere(db, table, where(c, table));
    }
    const generatedAt = this.now();
    const manifest: ExportManifestBody = {
      format_version: EXPORT_FORMAT_VERSION,
      generated_at: generatedAt.toISOString(),
      tenant_id: tenantId,
      environments: env === 'all' ? ['sandbox', 'live'] : [env],
      categories: ['tenant', ...CATEGORIES.map((c) => c.name)],
      counts,
      omitted: EXPORT_OMITTED,
      page_size: this.pageSize,
    };
    const pageSize = this.pageSize;
    return {
      manifest,
      filename: `export-${tenantId}${env === 'all' ? '' : `-${env}`}-${generatedAt.toISOString().slice(0, 10)}.json`,
      async *chunks() {
        yield `{\n"manifest": ${JSON.stringify(manifest)},\n"tenant": ${JSON.stringify(tenant)}`;
        const streamed: Record<string, number> = { tenant: 1 };
        for (const c of CATEGORIES) {
          const table = c.table(t);
          const sel = selection(table, c.omit);
          const idCol = col(table, 'id');
          const cap = counts[c.name]!;
          let n = 0;
          let last: string | null = null;
          yield `,\n"${c.name}": [`;
          // never more rows than the manifest announced (rows inserted meanwhile are left out)
          while (n < cap) {
            const want = Math.min(pageSize, cap - n);
            const rows: Record<string, unknown>[] = await db
              .select(sel)
              .from(table)
              .where(where(c, table, last === null ? undefined : gt(idCol, last)))
              .orderBy(asc(idCol))
              .limit(want);
            let text = '';
            for (const row of rows) text += (n++ === 0 ? '\n' : ',\n') + JSON.stringify(row);
            if (text) yield text;
            if (rows.length < want) break;
            last = rows[rows.length - 1]!.id as string;
          }
          streamed[c.name] = n;
          yield n ? '\n]' : ']';
        }
        const matches = Object.keys(counts).every((k) => counts[k] === streamed[k]);
        yield `,\n"end_of_export": ${JSON.stringify({ complete: true, streamed_counts: streamed, matches_manifest: matches })}\n}\n`;
      },
    };
  }

  // -------------------------------------------------------------------------------------------
  // Erase
  // -------------------------------------------------------------------------------------------

  /**
   * Erases the tenant in both environments, so only a live key (or the operator: no key) may: a
   * sandbox key (CI, laptops) gets 403 live_key_required and nothing changes.
   */
  async erase(actor: Actor): Promise<EraseResult> {
    assertMayErase(actor);
    const { withTx, t } = this.database;
    const tenantId = actor.tenantId;
    return withTx(async (tx) => {
      // lock the tenant row (PostgreSQL) so that concurrent admin changes wait for us
      const locked = await tx.update(t.tenants).set({ status: t.tenants.status }).where(eq(t.tenants.id, tenantId)).returning({ id: t.tenants.id, status: t.tenants.status });
      if (!locked.length) throw new ApiError('resource_not_found', `No tenant ${tenantId}.`);
      if (locked[0]!.status === 'terminated') throw new ApiError('invalid_api_key', 'The tenant is already erased.');
      // keys revoked, tenant terminated, scores anonymised: no process may serve them from cache
      for (const aspect of CACHE_ASPECTS) this.database.touchTenant(tenantId, aspect);

      const now = this.now();
      const retainUntil = addYears(now, RETENTION_YEARS);
      // pseudonyms for customer_reference: a hash keyed with a salt that is never stored, so
      // rows stay distinct (unique indexes) but the original reference cannot be recovered
      const salt = randomHex(32);
      const pseudonym = (ref: string) => `erased-${sha256Hex(`${salt}:${ref}`).slice(0, 32)}`;
      const mine = <T extends PgTable>(table: T) => eq(col(table, 'tenantId'), tenantId);

      // --- API keys: all revoked, names and reasons erased --------------------------------
      const k = t.apiKeys;
      await tx.update(k).set({ revokedAt: now }).where(and(eq(k.tenantId, tenantId), isNull(k.revokedAt)));
      const keys = await tx
        .update(k)
        .set({ name: 'erased', revokeReason: 'gdpr_erasure', retainUntil })
        .where(eq(k.tenantId, tenantId))
        .returning({ id: k.id });

      // --- usage (billing records) ----------------------------------------------------------
      const u = t.usageRecords;
      const usage = await tx.update(u).set({ requestIds: null, retainUntil }).where(eq(u.tenantId, tenantId)).returning({ id: u.id });

      // --- audit log: details cleared (the gdpr.erased record is written after, and survives) --
      const a = t.auditLog;
      const audit = await tx.update(a).set({ details: {}, retainUntil }).where(eq(a.tenantId, tenantId)).returning({ id: a.id });

      // --- analyses of counterparties -------------------------------------------------------
      const s = t.scoreResults;
      const scores = await tx.update(s).set({ customerReference: null, retainUntil }).where(eq(s.tenantId, tenantId)).returning({ id: s.id });
      await this.redactJsonColumn(tx, s, 'result', tenantId); // the stored response may echo customer_reference
      const e = t.esgAssessments;
      const esg = await tx.update(e).set({ customerReference: null, retainUntil }).where(eq(e.tenantId, tenantId)).returning({ id: e.id });
      await this.redactJsonColumn(tx, e, 'result', tenantId);
      const cd = t.creditDecisions;
      const decisions = await tx.update(cd).set({ customerReference: null, retainUntil }).where(eq(cd.tenantId, tenantId)).returning({ id: cd.id });
      await this.redactJsonColumn(tx, cd, 'response', tenantId, { text: true });
      const am = t.amlScreenings;
      // kept as AML records, no longer monitored: nothing new is screened or alerted for an erased tenant
      const screenings = await tx.update(am).set({ customerReference: null, monitor: false, retainUntil }).where(eq(am.tenantId, tenantId)).returning({ id: am.id });
      await this.redactJsonColumn(tx, am, 'response', tenantId, { text: true });
      const kv = t.kycVerifications;
      const verifications = await tx.update(kv).set({ customerReference: null, retainUntil }).where(eq(kv.tenantId, tenantId)).returning({ id: kv.id });
      await this.redactJsonColumn(tx, kv, 'response', tenantId, { text: true });

      // --- ERP records: customer_reference pseudonymised per distinct value -----------------
      const pseudonymise = async (table: typeof t.syncRuns | typeof t.invoices | typeof t.bankTransactions) => {
        const refs = await tx.selectDistinct({ ref: table.customerReference }).from(table).where(eq(table.tenantId, tenantId));
        for (const { ref } of refs)
          await tx
            .update(table)
            .set({ customerReference: pseudonym(ref) })
            .where(and(eq(table.tenantId, tenantId), eq(table.customerReference, ref)));
      };
      const sr = t.syncRuns;
      // stop syncs in flight: their next batch no longer owns the run, so it rolls back and writes nothing
      await tx
        .update(sr)
        .set({ status: 'failed', errorCode: 'tenant_terminated', finishedAt: now })
        .where(and(eq(sr.tenantId, tenantId), inArray(sr.status, ['queued', 'running'])));
      await pseudonymise(sr);
      const syncRuns = await tx.update(sr).set({ errorMessage: null, cursor: null, retainUntil }).where(eq(sr.tenantId, tenantId)).returning({ id: sr.id });

      const inv = t.invoices;
      await pseudonymise(inv);
      const invoices = await tx.update(inv).set({ customerName: null, retainUntil }).where(eq(inv.tenantId, tenantId)).returning({ id: inv.id });
      await this.redactJsonColumn(tx, inv, 'data', tenantId); // the provider document repeats names, e-mails…

      const bt = t.bankTransactions;
      await pseudonymise(bt);
      const transactions = await tx
        .update(bt)
        .set({ counterpartyName: null, counterpartyIban: null, description: null, retainUntil })
        .where(eq(bt.tenantId, tenantId))
        .returning({ id: bt.id });

      // --- receivables finance: kept (contracts and assignments between companies) -------------
      const finance: Record<string, number> = {};
      const fo = t.financeOperations;
      finance.finance_operations = (await tx.update(fo).set({ customerReference: null, retainUntil }).where(eq(fo.tenantId, tenantId)).returning({ id: fo.id })).length;
      await this.redactJsonColumn(tx, t.confirmingSuppliers, 'data', tenantId);
      for (const [name, table] of [
        ['assigned_invoices', t.assignedInvoices],
        ['confirming_programmes', t.confirmingProgrammes],
        ['confirming_suppliers', t.confirmingSuppliers],
        ['confirming_payables', t.confirmingPayables],
        ['audit_entries', t.auditEntries],
        ['cession_notices', t.cessionNotices],
        ['insurance_submissions', t.insuranceSubmissions],
      ] as const) {
        finance[name] = (await tx.update(table as typeof t.auditEntries).set({ retainUntil }).where(eq((table as typeof t.auditEntries).tenantId, tenantId)).returning({ id: (table as typeof t.auditEntries).id })).length;
      }

      // --- data-subject requests: the record of compliance (type, dates, outcome) is kept; who asked, and the access bundles, go
      const dsr = t.gdprRequests;
      let subjectRequests = 0;
      for (const r of await tx.select({ id: dsr.id, result: dsr.result }).from(dsr).where(eq(dsr.tenantId, tenantId))) {
        const { bundle: _bundle, ...kept } = (r.result ?? {}) as Record<string, unknown>;
        await tx.update(dsr).set({ subject: {}, result: r.result ? kept : null, retainUntil }).where(eq(dsr.id, r.id));
        subjectRequests++;
      }

      // --- deleted: nothing requires them -------------------------------------------------
      const deleted: Record<string, number> = {};
      const del = async (name: (typeof DELETED_CATEGORIES)[number], table: PgTable) => {
        deleted[name] = await countWhere(tx, table, mine(table));
        await tx.delete(table).where(mine(table));
      };
      await del('erp_connections', t.erpConnections);
      await del('webhook_deliveries', t.webhookDeliveries);
      await del('webhook_endpoints', t.webhookEndpoints);
      await del('events', t.events);
      await del('idempotency_keys', t.idempotencyKeys);
      await del('credit_policies', t.creditPolicies);
      // uploads of runs not parsed yet go with their runs
      await tx.delete(t.saftChunks).where(inArray(t.saftChunks.runId, tx.select({ id: t.saftRuns.id }).from(t.saftRuns).where(eq(t.saftRuns.tenantId, tenantId))));
      await del('saft_runs', t.saftRuns);
      await del('oauth_clients', t.oauthClients); // their principals are among the api_keys, revoked and anonymised above
      await del('csrd_reports', t.csrdReports);

      // --- the tenant ---------------------------------------------------------------------
      await tx
        .update(t.tenants)
        .set({ name: `erased-tenant-${tenantId.slice(0, 8)}`, status: 'terminated', terminatedAt: now, retainUntil })
        .where(eq(t.tenants.id, tenantId));

      const retained: Record<string, number> = {
        tenant: 1,
        api_keys: keys.length,
        usage_records: usage.length,
        audit_log: audit.length + 1,
        score_results: scores.length,
        esg_assessments: esg.length,
        sync_runs: syncRuns.length,
        invoices: invoices.length,
        bank_transactions: transactions.length,
        credit_decisions: decisions.length,
        aml_screenings: screenings.length,
        kyc_verifications: verifications.length,
        ...finance,
        gdpr_requests: subjectRequests,
      };
      await this.audit(tx, actor, 'gdpr.erased', tenantId, { retain_until: retainUntil.toISOString(), retained_counts: retained, deleted_counts: deleted });
      await tx.update(a).set({ retainUntil }).where(and(eq(a.tenantId, tenantId), isNull(a.retainUntil)));

      return {
        erased: true as const,
        tenant_status: 'terminated' as const,
        redacted_api_keys: keys.length,
        redacted_usage_rows: usage.length,
        redacted_audit_rows: audit.length,
        retained_under_legal_basis: {
          law: LEGAL_BASIS_LAW,
          gdpr_basis: GDPR_BASIS,
          years: RETENTION_YEARS,
          retain_until: retainUntil.toISOString(),
          categories: [...RETAINED_CATEGORIES],
          retained_counts: retained,
          deleted_categories: [...DELETED_CATEGORIES],
          deleted_counts: deleted,
          anonymised: ANONYMISED,
        },
        completed_at: now.toISOString(),
      };
    });
  }

  /** Removes PERSONAL_JSON_KEYS from one JSON column of the tenant's rows: pages by id, rewrites changed rows only. */
  /** `text`: the column holds JSON as text (credit_decisions.response) */
  private async redactJsonColumn(tx: Db, table: PgTable, prop: string, tenantId: string, opts: { text?: boolean } = {}) {
    const idCol = col(table, 'id');
    const tenantCol = col(table, 'tenantId');
    const jsonCol = col(table, prop);
    let last: string | null = null;
    for (;;) {
      const page = (await tx
        .select({ id: idCol, value: jsonCol })
        .from(table)
        .where(last === null ? eq(tenantCol, tenantId) : and(eq(tenantCol, tenantId), gt(idCol, last)))
        .orderBy(asc(idCol))
        .limit(this.pageSize)) as { id: string; value: unknown }[];
      for (const row of page) {
        const r = redactJson(opts.text ? JSON.parse(row.value as string) : row.value);
        if (r.changed) await tx.update(table).set({ [prop]: opts.text ? JSON.stringify(r.value) : r.value }).where(eq(idCol, row.id));
      }
      if (page.length < this.pageSize) break;
      last = page[page.length - 1]!.id;
    }
  }
}

/** 403 live_key_required unless the actor is a live key or the operator. */
export function assertMayErase(actor: Pick<Actor, 'keyId' | 'env'>) {
  if (actor.keyId !== null && actor.env !== 'live')
    throw new ApiError('live_key_required', 'Erasing the tenant removes its live (production) data too, so it needs a live (sk_live_) key with the gdpr:manage scope, or the operator CLI (tenant erase). Nothing was changed.');
}

/** The GDPR service over a database, with audit records written by AdminService (the routes and the operator CLI). */
export function createGdprService(database: Database, tenants: TenantService, now: () => Date): GdprService {
  const admin = new AdminService(database, tenants, now);
  return new GdprService(database, now, (tx, actor, action, target, details) => admin.audit(tx, actor, action, target, details));
}

/**
 * The operator's erasure of a tenant (CLI `tenant erase`): the same transaction as the route, with
 * the audit record's actor "operator". Throws resource_not_found for an unknown tenant and
 * invalid_api_key ("already erased") for a terminated one.
 */
export function eraseTenantAsOperator(database: Database, tenants: TenantService, tenantId: string, now: () => Date = () => new Date()): Promise<EraseResult> {
  return createGdprService(database, tenants, now).erase(operatorActor(tenantId, 'live'));
}

// ---------------------------------------------------------------------------------------------
// Purge (periodic job)
// ---------------------------------------------------------------------------------------------

/** tables with a retain_until column, children of tenants (every foreign key points to tenants) */
const RETENTION_TABLES: { name: string; table: (s: Schema) => PgTable }[] = [
  { name: 'oauth_clients', table: (s) => s.oauthClients }, // before api_keys: each points to its principal
  { name: 'api_keys', table: (s) => s.apiKeys },
  { name: 'usage_records', table: (s) => s.usageRecords },
  { name: 'audit_log', table: (s) => s.auditLog },
  { name: 'score_results', table: (s) => s.scoreResults },
  { name: 'esg_assessments', table: (s) => s.esgAssessments },
  { name: 'erp_connections', table: (s) => s.erpConnections },
  { name: 'sync_runs', table: (s) => s.syncRuns },
  { name: 'invoices', table: (s) => s.invoices },
  { name: 'bank_transactions', table: (s) => s.bankTransactions },
  { name: 'events', table: (s) => s.events },
  { name: 'credit_decisions', table: (s) => s.creditDecisions },
  { name: 'aml_screenings', table: (s) => s.amlScreenings },
  { name: 'kyc_verifications', table: (s) => s.kycVerifications },
  ...KEPT_AS_THEY_ARE,
  { name: 'csrd_reports', table: (s) => s.csrdReports },
];
/** tenant tables without retain_until: only removed together with their expired tenant */
const OTHER_TENANT_TABLES: { name: string; table: (s: Schema) => PgTable }[] = [
  { name: 'webhook_deliveries', table: (s) => s.webhookDeliveries },
  { name: 'webhook_endpoints', table: (s) => s.webhookEndpoints },
  { name: 'idempotency_keys', table: (s) => s.idempotencyKeys },
  { name: 'credit_policies', table: (s) => s.creditPolicies },
  { name: 'saft_runs', table: (s) => s.saftRuns },
];

/**
 * Deletes every row whose retain_until is before `now`, in one transaction, and returns the number
 * of rows deleted per table (every table listed, 0 included). Children go first (the deliveries of
 * an expired event go with it); a tenant whose own
 * retain_until passed takes every remaining row of its own with it (rows written after the erasure,
 * rows without a retain_until), then the tenant row goes last, so no foreign key is ever violated.
 */
export async function purgeExpiredRetention(database: Database, now: Date): Promise<Record<string, number>> {
  const { t } = database;
  return database.withTx(async (tx) => {
    const counts: Record<string, number> = {};
    for (const { name } of [...RETENTION_TABLES, ...OTHER_TENANT_TABLES]) counts[name] = 0;
    counts.tenants = 0;

    // deliveries have no retain_until: they go with their expired event
    const expiredEvents = tx.select({ id: t.events.id }).from(t.events).where(lt(t.events.retainUntil, now));
    const deliveriesWhere = inArray(t.webhookDeliveries.eventId, expiredEvents);
    const deliveries = await countWhere(tx, t.webhookDeliveries, deliveriesWhere);
    if (deliveries) await tx.delete(t.webhookDeliveries).where(deliveriesWhere);
    counts.webhook_deliveries! += deliveries;

    for (const { name, table } of RETENTION_TABLES) {
      const tb = table(t);
      const where = lt(col(tb, 'retainUntil'), now);
      const n = await countWhere(tx, tb, where);
      if (n) await tx.delete(tb).where(where);
      counts[name]! += n;
    }

    const expired = (await tx.select({ id: t.tenants.id }).from(t.tenants).where(lt(t.tenants.retainUntil, now))).map((r) => r.id);
    for (let i = 0; i < expired.length; i += 500) {
      const batch = expired.slice(i, i + 500);
      for (const id of batch) for (const aspect of CACHE_ASPECTS) database.touchTenant(id, aspect);
      for (const { name, table } of [...RETENTION_TABLES, ...OTHER_TENANT_TABLES]) {
        const tb = table(t);
        const where = inArray(col(tb, 'tenantId'), batch);
        const n = await countWhere(tx, tb, where);
        if (n) await tx.delete(tb).where(where);
        counts[name]! += n;
      }
      const gone = await tx.delete(t.tenants).where(and(inArray(t.tenants.id, batch), lt(t.tenants.retainUntil, now))).returning({ id: t.tenants.id });
      counts.tenants += gone.length;
    }
    return counts;
  });
}

/** The document as a byte stream: pulls one page at a time (back-pressure from the reader). */
export function exportStream(prepared: PreparedExport): ReadableStream<Uint8Array> {
  const it = prepared.chunks();
  const enc = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await it.next();
        if (done) controller.close();
        else controller.enqueue(enc.encode(value));
      } catch (err) {
        controller.error(err);
      }
    },
    async cancel() {
      await it.return(undefined);
    },
  });
}
