import { and, asc, desc, eq, gt, inArray, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import type { AppContext } from '../../context';
import type { Db } from '../../db/client';
import { ApiError, fieldProblems, NIF_CHECK_DIGIT_FAILS, validationError, type FieldError } from '../../lib/errors';
import { isValidNif } from '../../lib/nif';
import { pageOf } from '../../lib/schemas';
import type { Env } from '../tenants/service';
import { addYears, LEGAL_BASIS_LAW, redactJson, RETENTION_YEARS } from './service';
import type { SubjectBundle } from './model';

/**
 * Data-subject requests (GDPR arts. 15–18): a natural person's rights exercised through the
 * tenant, over the tenant's data in one environment. received → in_progress → completed |
 * partially_completed | rejected, due one month after the request (art. 12(3)). Access, erasure and
 * rectification are carried out by a job; restriction is recorded and completed by the tenant
 * (it is a measure in the tenant's own processing). Erasure follows the tenant erase's rules
 * (docs/gdpr.md) applied to one person: what the law requires is kept, and listed with why.
 */
export const DSR_TYPES = ['access', 'erasure', 'rectification', 'restriction'] as const;
export type DsrType = (typeof DSR_TYPES)[number];
export type DsrStatus = 'received' | 'in_progress' | 'completed' | 'partially_completed' | 'rejected';
export const DSR_JOB = 'gdpr.request';
export const DSR_SWEEP = 'gdpr.request.recover';

export interface Subject {
  nif?: string;
  name?: string;
  birth_date?: string;
  email?: string;
}
export interface DsrCaller {
  tenantId: string;
  env: Env;
  keyId: string | null;
  requestId: string | null;
}
type DsrRow = AppContext['database']['t']['gdprRequests']['$inferSelect'];

/** NIF prefixes of natural persons (REFERENCE §1): 1, 2, 3 and 45 (non-residents). */
export const isPersonNif = (nif: string) => /^[123]/.test(nif) || nif.startsWith('45');

/** Names compared as people write them: no accents, no case, single spaces. */
export const normName = (s: string) =>
  s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();

/** One calendar month later (art. 12(3)); the 31st of a short month gives its last day. */
export function oneMonthAfter(d: Date): Date {
  const r = new Date(d.getTime());
  const day = r.getUTCDate();
  r.setUTCDate(1);
  r.setUTCMonth(r.getUTCMonth() + 1);
  const last = new Date(Date.UTC(r.getUTCFullYear(), r.getUTCMonth() + 1, 0)).getUTCDate();
  r.setUTCDate(Math.min(day, last));
  return r;
}

interface Found {
  category: string;
  id: string;
  row: Record<string, unknown>;
}

export class SubjectRequests {
  constructor(private readonly ctx: AppContext) {}

  private get t() {
    return this.ctx.database.t;
  }

  validate(body: { type: DsrType; subject: Subject; corrections?: { name?: string; email?: string } }): void {
    const s = body.subject;
    const errors: FieldError[] = [];
    if (!s.nif && !s.name && !s.email) errors.push({ path: 'subject', message: 'give at least one identifier: nif, name or email' });
    if (s.nif !== undefined) {
      if (!isValidNif(s.nif)) errors.push({ path: 'subject.nif', message: NIF_CHECK_DIGIT_FAILS });
      else if (!isPersonNif(s.nif)) errors.push({ path: 'subject.nif', message: 'is not a natural person\u2019s NIF (prefixes 1, 2, 3, 45): a company is not a data subject' });
    }
    if (s.name !== undefined && !normName(s.name)) errors.push({ path: 'subject.name', message: 'must contain letters' });
    if (body.type === 'rectification' && !body.corrections?.name && !body.corrections?.email)
      errors.push({ path: 'corrections', message: 'rectification needs the corrected name or email' });
    if (body.type !== 'rectification' && body.corrections !== undefined) errors.push({ path: 'corrections', message: 'applies to rectification only' });
    if (body.type === 'rectification' && body.corrections?.name && !s.name && !s.nif) errors.push({ path: 'subject.name', message: 'give the name (or NIF) the records hold now' });
    if (errors.length) throw fieldProblems(errors);
  }

  async create(caller: DsrCaller, body: { type: DsrType; subject: Subject; requested_at?: string; corrections?: { name?: string; email?: string }; note?: string }) {
    this.validate(body);
    const now = this.ctx.clock.now();
    const requestedAt = body.requested_at ? new Date(body.requested_at) : now;
    if (requestedAt.getTime() > now.getTime() + 60_000) throw validationError([{ path: 'requested_at', message: 'is in the future' }]);
    const id = `dsr_${Bun.randomUUIDv7()}`;
    const subject: Record<string, unknown> = { ...body.subject, ...(body.corrections ? { corrections: body.corrections } : {}), ...(body.note ? { note: body.note } : {}) };
    const [row] = await this.ctx.database.withTx((tx) =>
      tx
        .insert(this.t.gdprRequests)
        .values({ id, tenantId: caller.tenantId, env: caller.env, type: body.type, status: 'received', subject, result: null, reason: null, requestedAt, dueAt: oneMonthAfter(requestedAt), version: 1, createdAt: now, updatedAt: now })
        .returning(),
    );
    await this.enqueue(id);
    return this.view(row!);
  }

  private async enqueue(id: string) {
    try {
      await this.ctx.jobs.enqueue(DSR_JOB, { id }, { jobId: `${id}_${Date.now()}` });
    } catch (err) {
      // stays received: the recovery sweep enqueues it again
      this.ctx.log.error('gdpr request enqueue failed', { id, error: (err as Error).message });
    }
  }

  view(r: DsrRow) {
    const { corrections, note, ...subject } = r.subject as Subject & { corrections?: unknown; note?: string };
    const result = (r.result ?? null) as { found?: unknown; actions?: unknown; retained?: unknown; bundle_url?: string } | null;
    return {
      request_id: r.id,
      type: r.type as DsrType,
      status: r.status as DsrStatus,
      subject,
      corrections: (corrections ?? null) as { name?: string; email?: string } | null,
      note: note ?? null,
      requested_at: r.requestedAt.toISOString(),
      due_at: r.dueAt.toISOString(),
      overdue: !['completed', 'partially_completed', 'rejected'].includes(r.status) && r.dueAt.getTime() < this.ctx.clock.now().getTime(),
      found: (result?.found ?? null) as Record<string, number> | null,
      actions: (result?.actions ?? []) as { category: string; action: string; count: number }[],
      retained: (result?.retained ?? []) as { category: string; count: number; reason: string; retain_until: string | null }[],
      bundle_url: r.type === 'access' && (r.status === 'completed' || r.status === 'partially_completed') && (result as { bundle?: unknown } | null)?.bundle ? `/v1/gdpr/requests/${r.id}/bundle` : null,
      reason: r.reason,
      created_at: r.createdAt.toISOString(),
      updated_at: r.updatedAt.toISOString(),
      completed_at: r.completedAt ? r.completedAt.toISOString() : null,
    };
  }

  private async row(caller: { tenantId: string; env: string }, id: string) {
    const g = this.t.gdprRequests;
    const [r] = await this.ctx.database.db.select().from(g).where(and(eq(g.tenantId, caller.tenantId), eq(g.env, caller.env), eq(g.id, id))).limit(1);
    if (!r) throw new ApiError('resource_not_found', `No data-subject request ${id} for this tenant in this environment.`);
    return r;
  }

  async get(caller: { tenantId: string; env: string }, id: string) {
    return this.view(await this.row(caller, id));
  }

  async bundle(caller: { tenantId: string; env: string }, id: string) {
    const r = await this.row(caller, id);
    if (r.type !== 'access' || !(r.status === 'completed' || r.status === 'partially_completed'))
      throw new ApiError('invalid_transition', `Request ${id} is ${r.type}, ${r.status}: only a completed access request has a bundle.`);
    const result = r.result as { bundle: typeof SubjectBundle.static | null; bundle_deleted_by?: string };
    if (!result.bundle) throw new ApiError('resource_not_found', `The bundle of ${id} was deleted when erasure request ${result.bundle_deleted_by ?? ''} was carried out.`);
    return result.bundle;
  }

  async list(caller: { tenantId: string; env: string }, q: { status?: DsrStatus; type?: DsrType; limit?: number; cursor?: string }) {
    const g = this.t.gdprRequests;
    const limit = q.limit ?? 50;
    const conds = [eq(g.tenantId, caller.tenantId), eq(g.env, caller.env)];
    if (q.status) conds.push(eq(g.status, q.status));
    if (q.type) conds.push(eq(g.type, q.type));
    if (q.cursor) conds.push(lt(g.id, q.cursor));
    const rows = await this.ctx.database.db.select().from(g).where(and(...conds)).orderBy(desc(g.id)).limit(limit + 1);
    return pageOf(rows, limit, (r) => this.view(r), (r) => r.id);
  }

  /** The tenant closes a request itself: a restriction put in place, or a request refused (identity not verified, manifestly unfounded). */
  async close(caller: DsrCaller, id: string, action: 'complete' | 'reject', reason: string | undefined) {
    const r = await this.row(caller, id);
    if (action === 'reject' && !reason) throw validationError([{ path: 'reason', message: 'is required to reject (art. 12(4): the subject is told why)' }]);
    const open = r.status === 'received' || r.status === 'in_progress';
    if (!open || (action === 'complete' && r.type !== 'restriction'))
      throw new ApiError('invalid_transition', `Request ${id} (${r.type}) is ${r.status}: ${action === 'complete' ? 'only an open restriction request is completed by the tenant; the others complete themselves' : 'it is no longer open'}.`);
    const status: DsrStatus = action === 'complete' ? 'completed' : 'rejected';
    const result = action === 'complete' ? { ...(r.result ?? {}), actions: [{ category: 'processing', action: 'restricted by the tenant', count: 1 }] } : r.result;
    return this.finish(r, status, result as Record<string, unknown> | null, reason ?? null);
  }

  /** The request's new status and result, with `work` (the redactions) in the same transaction; `status` may depend on what the work found. */
  private async finish(r: DsrRow, statusOf: DsrStatus | (() => DsrStatus), result: Record<string, unknown> | null, reason: string | null, work?: (tx: Db) => Promise<void>) {
    const g = this.t.gdprRequests;
    const now = this.ctx.clock.now();
    let status = 'received' as DsrStatus;
    const updated = await this.ctx.database.withTx(async (tx) => {
      await work?.(tx);
      status = typeof statusOf === 'function' ? statusOf() : statusOf;
      const [u] = await tx
        .update(g)
        .set({ status, result, reason, version: r.version + 1, updatedAt: now, completedAt: status === 'in_progress' ? null : now })
        .where(and(eq(g.id, r.id), eq(g.version, r.version)))
        .returning();
      if (!u) throw new ApiError('invalid_transition', `Request ${r.id} changed meanwhile; read it again.`);
      if (status !== 'in_progress')
        await this.ctx.events.emit(tx, {
          tenantId: r.tenantId,
          env: r.env,
          type: 'gdpr.request.completed',
          data: { request_id: r.id, type: r.type, status, requested_at: r.requestedAt.toISOString(), due_at: r.dueAt.toISOString(), completed_at: now.toISOString(), on_time: now.getTime() <= r.dueAt.getTime() },
        });
      return u;
    });
    if (status !== 'in_progress') this.ctx.events.onEmitted();
    return this.view(updated);
  }

  // ------------------------------------------------------------------------------------------
  // Finding a person in the tenant's data
  // ------------------------------------------------------------------------------------------

  /** Every row of the tenant's environment that is about the subject, by category. */
  private async find(db: Db, tenantId: string, env: string, s: Subject): Promise<Found[]> {
    const t = this.t;
    const name = s.name ? normName(s.name) : null;
    const email = s.email?.toLowerCase() ?? null;
    const out: Found[] = [];
    const push = (category: string, rows: Record<string, unknown>[]) => {
      for (const row of rows) out.push({ category, id: String(row.id), row });
    };
    const textHas = (column: SQL | unknown, needle: string) => sql`lower(cast(${column} as text)) like ${`%${needle.replace(/[%_\\]/g, '')}%`}`;
    /** stored names of a column that are the subject's, compared as normName */
    const namesIn = async (table: typeof t.invoices | typeof t.bankTransactions | typeof t.amlScreenings, column: typeof t.invoices.customerName | typeof t.bankTransactions.counterpartyName | typeof t.amlScreenings.name, also: Set<string> = new Set()) => {
      if (!name && !also.size) return [];
      const distinct = await db.selectDistinct({ v: column }).from(table).where(and(eq((table as typeof t.invoices).tenantId, tenantId), eq((table as typeof t.invoices).env, env)));
      return distinct.map((d) => d.v).filter((v): v is string => typeof v === 'string' && (normName(v) === name || also.has(normName(v))));
    };

    // invoices: the customer's NIF, name, or e-mail in the provider document
    const inv = t.invoices;
    const invNames = await namesIn(inv, inv.customerName);
    const invConds: SQL[] = [];
    if (s.nif) invConds.push(eq(inv.customerNif, s.nif));
    if (invNames.length) invConds.push(inArray(inv.customerName, invNames));
    if (email) invConds.push(textHas(inv.data, email));
    const invoices = invConds.length ? await db.select().from(inv).where(and(eq(inv.tenantId, tenantId), eq(inv.env, env), or(...invConds))) : [];
    push('invoices', invoices);

    // bank transactions: the counterparty's name, or one of the names on the subject's invoices
    // (found by NIF, the payer's name is theirs), or a payment matched to one of those invoices
    const bt = t.bankTransactions;
    // only invoices that are the person's by NIF: one found by an e-mail in its document may be a
    // company's that names the person as its contact, and its payments are the company's
    const byNif = s.nif ? invoices.filter((i) => i.customerNif === s.nif) : [];
    const btNames = await namesIn(bt, bt.counterpartyName, new Set(byNif.flatMap((i) => (i.customerName ? [normName(i.customerName)] : []))));
    const btConds: SQL[] = [];
    if (btNames.length) btConds.push(inArray(bt.counterpartyName, btNames));
    for (const i of byNif) btConds.push(and(eq(bt.provider, i.provider), eq(bt.customerReference, i.customerReference), eq(bt.matchedInvoiceNumber, i.number))!);
    const transactions = new Map<string, Record<string, unknown>>();
    for (let k = 0; k < btConds.length; k += 200)
      for (const row of await db.select().from(bt).where(and(eq(bt.tenantId, tenantId), eq(bt.env, env), or(...btConds.slice(k, k + 200))))) transactions.set(row.id, row);
    push('bank_transactions', [...transactions.values()]);

    // AML screenings of the person's name; KYC verifications naming them (as a representative) or their NIF
    const am = t.amlScreenings;
    const amNames = await namesIn(am, am.name);
    if (amNames.length) {
      const rows = await db.select().from(am).where(and(eq(am.tenantId, tenantId), eq(am.env, env), inArray(am.name, amNames)));
      // a birth date narrows them to the screenings that recorded none, or the person's (their query's
      // birth date or NIF); the query records `birth_date: null` when none was given
      push('aml_screenings', s.birth_date ? rows.filter((r) => {
        const query = screenedQuery(r);
        return ofSubject(query, s) || !query.birth_date;
      }) : rows);
    }
    // KYC verifications: the company's NIF, or a representative's NIF or name as the verification
    // recorded them (names compared as normName: a substring of the stored text matched "an" in
    // anyone's record and missed the name without its accents)
    const kv = t.kycVerifications;
    if (s.nif || name) {
      const mine: Record<string, unknown>[] = [];
      for (let after = ''; ; ) {
        const page = await db.select().from(kv).where(and(eq(kv.tenantId, tenantId), eq(kv.env, env), gt(kv.id, after))).orderBy(asc(kv.id)).limit(500);
        for (const row of page) {
          const named = kycSubjects(row.response);
          if (row.nif === s.nif || (s.nif && named.nifs.has(s.nif)) || (name && named.names.has(name))) mine.push(row);
        }
        if (page.length < 500) break;
        after = page[page.length - 1]!.id;
      }
      push('kyc_verifications', mine);
    }

    // a sole trader's NIF: scores, ESG assessments and their VSME reports, decisions, receivables finance, insurance
    if (s.nif) {
      for (const [category, table] of [
        ['score_results', t.scoreResults],
        ['esg_assessments', t.esgAssessments],
        ['csrd_reports', t.csrdReports],
        ['credit_decisions', t.creditDecisions],
      ] as const)
        push(category, await db.select().from(table).where(and(eq(table.tenantId, tenantId), eq(table.env, env), eq(table.nif, s.nif))));
      const a = t.assignedInvoices;
      push('assigned_invoices', await db.select().from(a).where(and(eq(a.tenantId, tenantId), eq(a.env, env), or(eq(a.debtorNif, s.nif), eq(a.issuerNif, s.nif)))));
      const ins = t.insuranceSubmissions;
      push('insurance_submissions', await db.select().from(ins).where(and(eq(ins.tenantId, tenantId), eq(ins.env, env), eq(ins.buyerNif, s.nif))));
      // cession notices naming the person as a party (a sole trader as debtor): the parties are in the notice's data
      // (their parties read first, without the PDFs; the whole rows of those that name the person)
      const cn = t.cessionNotices;
      const ids: string[] = [];
      for (let after = ''; ; ) {
        const page = await db.select({ id: cn.id, data: cn.data }).from(cn).where(and(eq(cn.tenantId, tenantId), eq(cn.env, env), gt(cn.id, after))).orderBy(asc(cn.id)).limit(500);
        for (const row of page) {
          const parties = row.data as Record<string, { nif?: string } | undefined>;
          if ([parties.debtor, parties.assignor, parties.factor].some((p) => p?.nif === s.nif)) ids.push(row.id);
        }
        if (page.length < 500) break;
        after = page[page.length - 1]!.id;
      }
      for (let i = 0; i < ids.length; i += 500) push('cession_notices', await db.select().from(cn).where(inArray(cn.id, ids.slice(i, i + 500))));
    }
    return out;
  }

  // ------------------------------------------------------------------------------------------
  // The job
  // ------------------------------------------------------------------------------------------

  /** Carries out a received request (access, erasure, rectification); a restriction waits for the tenant. */
  async process(id: string) {
    const g = this.t.gdprRequests;
    const [r] = await this.ctx.database.db.select().from(g).where(and(eq(g.id, id), eq(g.status, 'received'))).limit(1);
    if (!r) return;
    const subject = r.subject as Subject & { corrections?: { name?: string; email?: string } };
    const found = await this.find(this.ctx.database.db, r.tenantId, r.env, subject);
    const counts: Record<string, number> = {};
    for (const f of found) counts[f.category] = (counts[f.category] ?? 0) + 1;
    const now = this.ctx.clock.now();
    if (r.type === 'restriction') {
      await this.finish(r, 'in_progress', { found: counts, actions: [], retained: [] }, null);
      return;
    }
    if (r.type === 'access') {
      const bundle: Record<string, unknown[]> = {};
      for (const f of found) (bundle[f.category] ??= []).push(jsonRow(f.row));
      await this.finish(r, 'completed', { found: counts, actions: [], retained: [], bundle: { request_id: r.id, generated_at: now.toISOString(), subject: { nif: subject.nif, name: subject.name, birth_date: subject.birth_date, email: subject.email }, categories: bundle } }, null);
      return;
    }
    const retainUntil = addYears(now, RETENTION_YEARS);
    const actions: { category: string; action: string; count: number }[] = [];
    const retained: { category: string; count: number; reason: string; retain_until: string | null }[] = [];
    const ids = (c: string) => found.filter((f) => f.category === c).map((f) => f.id);
    const t = this.t;
    const work = async (tx: Db) => {
      const invIds = ids('invoices');
      const btIds = ids('bank_transactions');
      if (r.type === 'erasure') {
        if (invIds.length) {
          for (const f of found.filter((x) => x.category === 'invoices')) {
            const data = redactJson(f.row.data).value as Record<string, unknown>;
            await tx.update(t.invoices).set({ customerName: null, data }).where(eq(t.invoices.id, f.id));
          }
          actions.push({ category: 'invoices', action: 'customer name and personal keys of the provider document removed', count: invIds.length });
          retained.push({ category: 'invoices', count: invIds.length, reason: 'the invoices themselves, with the customer\u2019s NIF: tax records the tenant must keep (CIVA art. 52: 10 years)', retain_until: null });
        }
        if (btIds.length) {
          await tx.update(t.bankTransactions).set({ counterpartyName: null, counterpartyIban: null, description: null }).where(inArray(t.bankTransactions.id, btIds));
          actions.push({ category: 'bank_transactions', action: 'counterparty name, IBAN and description removed', count: btIds.length });
        }
        for (const [category, table] of [
          ['aml_screenings', t.amlScreenings],
          ['kyc_verifications', t.kycVerifications],
        ] as const) {
          const list = ids(category);
          if (!list.length) continue;
          await tx.update(table).set({ retainUntil }).where(and(inArray(table.id, list), isNull(table.retainUntil)));
          // kept as evidence, no longer processed: the person's monitored screenings stop being
          // re-screened — those tied to them by birth date or NIF (a name alone may be another
          // customer's namesake, whose monitoring the law requires: left on, and counted)
          if (category === 'aml_screenings') {
            const tied = found.filter((f) => f.category === 'aml_screenings' && screenedPerson(f.row, subject)).map((f) => f.id);
            const stopped = tied.length ? await tx.update(t.amlScreenings).set({ monitor: false }).where(and(inArray(t.amlScreenings.id, tied), eq(t.amlScreenings.monitor, true))).returning({ id: t.amlScreenings.id }) : [];
            if (stopped.length) actions.push({ category: 'aml_screenings', action: 'monitoring ended (the screenings are kept as AML evidence, not screened again)', count: stopped.length });
            const namesakes = found.filter((f) => f.category === 'aml_screenings' && !tied.includes(f.id) && (f.row as { monitor?: boolean }).monitor === true).length;
            if (namesakes) actions.push({ category: 'aml_screenings', action: 'still monitored: screenings of the same name that no birth date or NIF ties to the person (give them to end it)', count: namesakes });
          }
          retained.push({ category, count: list.length, reason: `anti-money-laundering record (${LEGAL_BASIS_LAW}): kept ${RETENTION_YEARS} years, then deleted`, retain_until: retainUntil.toISOString() });
        }
        // earlier access bundles are copies of what this erasure removes: deleted with it (a bundle
        // of the same person, or one holding a record this erasure found)
        const foundIds = new Set(found.map((f) => f.id));
        const holdsFound = (bundle: unknown) => Object.values((bundle as { categories?: Record<string, { id?: unknown }[]> }).categories ?? {}).some((rows) => rows.some((row) => foundIds.has(String(row.id))));
        const g = t.gdprRequests;
        const accesses = await tx.select().from(g).where(and(eq(g.tenantId, r.tenantId), eq(g.env, r.env), eq(g.type, 'access'), inArray(g.status, ['completed', 'partially_completed'])));
        let bundles = 0;
        for (const a of accesses) {
          const res = a.result as { bundle?: unknown } | null;
          if (!res?.bundle || !(sameSubject(a.subject as Subject, subject) || holdsFound(res.bundle))) continue;
          await tx.update(g).set({ result: { ...res, bundle: null, bundle_deleted_by: r.id }, updatedAt: now }).where(eq(g.id, a.id));
          bundles++;
        }
        if (bundles) actions.push({ category: 'gdpr_access_bundles', action: 'earlier access bundles of the person deleted', count: bundles });
        // VSME reports print what the caller typed of the person (name, address): nothing requires them
        const reports = ids('csrd_reports');
        if (reports.length) {
          await tx.delete(t.csrdReports).where(inArray(t.csrdReports.id, reports));
          actions.push({ category: 'csrd_reports', action: 'deleted (the ESG assessments they were drawn from are kept with the analyses)', count: reports.length });
        }
        for (const category of ['score_results', 'esg_assessments', 'credit_decisions', 'assigned_invoices', 'insurance_submissions', 'cession_notices']) {
          const n = ids(category).length;
          const contract = category === 'assigned_invoices' || category === 'insurance_submissions' || category === 'cession_notices';
          if (n) retained.push({ category, count: n, reason: contract ? 'contract record of an assignment, its notice to the debtor or a credit-insurance request (a legal claim\u2019s evidence, GDPR art. 17(3)(e))' : 'creditworthiness analysis the tenant must keep as a lender (GDPR art. 17(3)(b))', retain_until: null });
        }
      } else {
        // rectification: the corrected value where the records hold the person's name or e-mail
        const c = subject.corrections ?? {};
        if (c.name) {
          if (invIds.length) await tx.update(t.invoices).set({ customerName: c.name }).where(and(inArray(t.invoices.id, invIds), sql`${t.invoices.customerName} is not null`));
          if (btIds.length) await tx.update(t.bankTransactions).set({ counterpartyName: c.name }).where(inArray(t.bankTransactions.id, btIds));
          if (invIds.length) actions.push({ category: 'invoices', action: 'customer name rectified', count: invIds.length });
          if (btIds.length) actions.push({ category: 'bank_transactions', action: 'counterparty name rectified', count: btIds.length });
        }
        if (c.email && invIds.length) {
          // only documents that held an e-mail of the person: the action says what was done
          let rectified = 0;
          for (const f of found.filter((x) => x.category === 'invoices')) {
            const data = replaceEmail(f.row.data, subject.email ?? null, c.email);
            if (!data.changed) continue;
            await tx.update(t.invoices).set({ data: data.value as Record<string, unknown> }).where(eq(t.invoices.id, f.id));
            rectified++;
          }
          if (rectified) actions.push({ category: 'invoices', action: 'e-mail rectified in the provider documents', count: rectified });
        }
        for (const category of ['aml_screenings', 'kyc_verifications']) {
          const n = ids(category).length;
          if (n) retained.push({ category, count: n, reason: 'a record of a screening or verification as it was made is not rewritten (AML evidence); screen or verify the corrected identity anew', retain_until: null });
        }
      }
    };
    // one transaction: the redactions and the request's answer; partially completed when something is kept
    await this.finish(r, () => (retained.length ? 'partially_completed' : 'completed'), { found: counts, actions, retained }, null, work);
  }

  /** Requests still received after a minute (their job lost with a process) are enqueued again. */
  async recover() {
    const g = this.t.gdprRequests;
    const before = new Date(this.ctx.clock.now().getTime() - 60_000);
    const stuck = await this.ctx.database.db.select({ id: g.id }).from(g).where(and(eq(g.status, 'received'), lt(g.createdAt, before))).orderBy(asc(g.createdAt)).limit(100);
    for (const s of stuck) await this.enqueue(s.id);
    return stuck.length;
  }
}

/** A row as the export writes it: snake_case keys, dates as ISO strings. */
function jsonRow(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    if (k === 'tenantId') continue;
    const key = k.replace(/[A-Z]/g, (m) => `_${m.toLowerCase()}`);
    out[key] = v instanceof Date ? v.toISOString() : key === 'response' && typeof v === 'string' ? JSON.parse(v) : v;
  }
  return out;
}

function replaceEmail(value: unknown, from: string | null, to: string): { value: unknown; changed: boolean } {
  if (typeof value === 'string') return value.includes('@') && (from === null || value.toLowerCase() === from.toLowerCase()) ? { value: to, changed: true } : { value, changed: false };
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v) => {
      const r = replaceEmail(v, from, to);
      changed ||= r.changed;
      return r.value;
    });
    return { value: out, changed };
  }
  if (value && typeof value === 'object') {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (/e-?mail/i.test(k)) {
        const r = replaceEmail(v, from, to);
        changed ||= r.changed;
        out[k] = r.value;
      } else if (v && typeof v === 'object') {
        const r = replaceEmail(v, from, to);
        changed ||= r.changed;
        out[k] = r.value;
      } else out[k] = v;
    }
    return { value: out, changed };
  }
  return { value, changed: false };
}

/**
 * Who a stored KYC verification names: the people and the company it screened and checked (each
 * check's and screening's subject, as normName), and the NIFs its representatives were given
 * (their check's detail starts with "NIF n:").
 */
function kycSubjects(response: string): { names: Set<string>; nifs: Set<string> } {
  const names = new Set<string>();
  const nifs = new Set<string>();
  try {
    const r = JSON.parse(response) as { checks?: { check: string; subject: string | null; detail: string }[]; screenings?: { subject: string }[] };
    for (const c of r.checks ?? []) {
      if (c.subject) names.add(normName(c.subject));
      const given = c.check === 'representative_nif_valid' ? /^NIF (\d{9}):/.exec(c.detail) : null;
      if (given) nifs.add(given[1]!);
    }
    for (const sc of r.screenings ?? []) names.add(normName(sc.subject));
  } catch {
    // a record that does not parse names no one
  }
  return { names, nifs };
}

/** Whether two requests are about the same person: a NIF, a name (as normName) or an e-mail in common. */
function sameSubject(a: Subject, b: Subject): boolean {
  return (!!a.nif && a.nif === b.nif) || (!!a.name && !!b.name && normName(a.name) === normName(b.name)) || (!!a.email && !!b.email && a.email.toLowerCase() === b.email.toLowerCase());
}

/** what a stored screening's query recorded of the person screened (nothing when the record does not parse) */
function screenedQuery(row: Record<string, unknown>): { birth_date?: string | null; nif?: string | null } {
  try {
    return (JSON.parse(String(row.response)) as { query?: { birth_date?: string | null; nif?: string | null } }).query ?? {};
  } catch {
    return {};
  }
}

/** whether a screening's query is of the subject by more than a name: its birth date or NIF */
const ofSubject = (query: ReturnType<typeof screenedQuery>, subject: Subject) =>
  (!!subject.birth_date && query.birth_date === subject.birth_date) || (!!subject.nif && query.nif === subject.nif);
/** whether a stored screening is of the subject by more than a name */
const screenedPerson = (row: Record<string, unknown>, subject: Subject) => ofSubject(screenedQuery(row), subject);
