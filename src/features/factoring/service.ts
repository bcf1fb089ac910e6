import { and, desc, eq, inArray, lt, ne, sql } from 'drizzle-orm';
import type { AppContext } from '../../context';
import { isUniqueViolation, type Db } from '../../db/client';
import { aboutField, ApiError, fieldProblems, isJsonObject, NIF_CHECK_DIGIT_FAILS, nifProblems, validationError, type FieldError } from '../../lib/errors';
import { RequestProblems } from '../../lib/request-problems';
import { isValidNif } from '../../lib/nif';
import { pageOf } from '../../lib/schemas';
import type { AuditActor, AuditTrail } from '../audit/service';
import type { DecisionService } from '../decision/service';
import { spreadForModality, type CreditPolicy, type Modality, type Notch } from '../decision/policy';
import type { Env } from '../tenants/service';
import { daysBetween, discountCents, shareCents, sharesBps, sumCents } from '../finance/money';
import { assignmentKey, normaliseInvoiceNumber } from '../finance/assignment-key';
import { committedTo, lockExposure } from '../finance/exposure';
import { liveConnection } from '../erp/sync';
import { RECEIVABLE_DOCUMENT_TYPES } from '../erp/document-types';
import { CreateOperationRequest, OperationInvoiceInput, type CreateOperationBody, type OperationView, type Pricing } from './model';
import { actionsToday, allowedActions, holdsInvoices, nextStatus, type OperationAction, type OperationStatus } from './states';

export type { FinanceCaller } from '../finance/caller';
import type { FinanceCaller } from '../finance/caller';

/** Commission on the face value, by modality: without recourse it also pays for the credit-risk cover. */
export const SERVICE_FEE_BPS = { recourse: 50, non_recourse: 100 } as const;
export const DEFAULT_ADVANCE_RATE_BPS = { recourse: 9000, non_recourse: 8000 } as const;

type OperationRow = AppContext['database']['t']['financeOperations']['$inferSelect'];
/** what the row's data column holds: the view less what has columns of its own */
type StoredData = Omit<OperationView, 'operation_id' | 'status' | 'modality' | 'currency' | 'reason' | 'allowed_actions' | 'created_at' | 'updated_at' | 'customer_reference'>;

interface ResolvedInvoice {
  index: number;
  number: string;
  atcud: string | null;
  debtor_nif: string;
  debtor_name: string | null;
  debtor_address: string | null;
  issue_date: string;
  due_date: string;
  amount_cents: number;
  source: string;
}

const isoDay = (d: Date) => d.toISOString().slice(0, 10);
/** the longest term of an invoice factored (short-term receivables, DL 171/95) */
const MAX_TERM_DAYS = 365;
const RECEIVABLE_TYPES = new Set<string>(RECEIVABLE_DOCUMENT_TYPES);
const DOCUMENT_KINDS: Record<string, string> = { NC: 'a credit note', FR: 'an invoice-receipt (paid when issued)', FS: 'a simplified invoice (paid when issued)' };

/** Prices invoices as of a date: the advance, then interest on it at base + the debtor's spread to the due date. */
export function priceInvoices(
  invoices: { amount_cents: number; due_date: string; debtor_nif: string }[],
  o: { asOf: string; advanceRateBps: number; baseRate: { name: string; bps: number; as_of: string }; spreadBps: (debtorNif: string) => number; serviceFeeBps: number },
): { perInvoice: { days_to_due: number; advance_cents: number; discount_fee_cents: number }[]; pricing: Pricing } {
  const perInvoice = invoices.map((inv) => {
    const days = Math.max(0, daysBetween(o.asOf, inv.due_date));
    const advance = shareCents(inv.amount_cents, o.advanceRateBps);
    return { days_to_due: days, advance_cents: advance, discount_fee_cents: discountCents(advance, o.baseRate.bps + o.spreadBps(inv.debtor_nif), days) };
  });
  const face = sumCents(invoices.map((i) => i.amount_cents));
  const advance = sumCents(perInvoice.map((p) => p.advance_cents));
  const discount = sumCents(perInvoice.map((p) => p.discount_fee_cents));
  const serviceFee = shareCents(face, o.serviceFeeBps);
  return {
    perInvoice,
    pricing: {
      priced_at: o.asOf,
      day_count: 'actual/360',
      face_cents: face,
      advance_rate_bps: o.advanceRateBps,
      advance_cents: advance,
      base_rate: o.baseRate,
      discount_fee_cents: discount,
      service_fee_bps: o.serviceFeeBps,
      service_fee_cents: serviceFee,
      net_to_seller_cents: Math.max(0, advance - discount - serviceFee),
      reserve_cents: face - advance,
    },
  };
}

/**
 * Factoring operations: the seller's invoices on its debtors, a credit decision per debtor, the
 * price, and the lifecycle the factor's back office drives (states.ts). Every change is one
 * transaction with its audit entry and its event; a transition is a compare-and-set on `version`,
 * so two back-office clicks or two replicas' sweeps cannot both apply.
 */
export class FactoringService {
  constructor(
    private readonly ctx: AppContext,
    private readonly decisions: DecisionService,
    private readonly audit: AuditTrail,
  ) {}

  private get t() {
    return this.ctx.database.t;
  }
  private now() {
    return this.ctx.clock.now();
  }
  private baseRate() {
    const b = this.ctx.config.baseRate;
    return { name: b.name, bps: Math.round(b.valuePct * 100), as_of: b.asOf };
  }

  // ------------------------------------------------------------------------------------------
  // Creation
  // ------------------------------------------------------------------------------------------

  /**
   * Every problem of a create request at once (the route's `transform`): the schema's, then the
   * invoices' own (as `resolveInvoices` finds them) for the invoices and seller whose fields have
   * their types. A field the request does not have is refused: a misspelt advance_rate_bps or
   * auto_approve would have priced or approved the operation otherwise.
   */
  async createProblems(caller: FinanceCaller, body: unknown): Promise<FieldError[]> {
    const problems = new RequestProblems(CreateOperationRequest, body, { refuseUnknown: true });
    const b = problems.object;
    if (!problems.fields.length || !b || !Array.isArray(b.invoices)) return problems.done();
    const seller = (problems.typedFields(CreateOperationRequest, b, '').seller_nif as string | undefined) ?? null;
    // each invoice judged on its fields that passed the schema (one that failed is left out: its
    // problem is the schema's, and a wrong value must not make others of the same invoice)
    const typed = (b.invoices as unknown[]).slice(0, 200).flatMap((given, index) => {
      if (!isJsonObject(given) || problems.has(`invoices.${index}`)) return [];
      const kept = problems.typedFields(OperationInvoiceInput, given, `invoices.${index}`);
      // (what the invoice is, and where it is read from: nothing to say of it without them)
      if (typeof kept.number !== 'string' || ('erp' in given && !('erp' in kept))) return [];
      return [{ index, given: kept as CreateOperationBody['invoices'][number] }];
    });
    const found: FieldError[] = [];
    await this.resolveInvoices(caller, seller, typed, isoDay(this.now()), found);
    for (const f of found) problems.add(f);
    return problems.done();
  }

  /**
   * The request's invoices in full: from the body, or from the tenant's ERP / SAF-T data. Every
   * problem at once: into `errors` when given, else thrown (422). A null seller (its own field
   * failed) is not compared.
   */
  private async resolveInvoices(caller: FinanceCaller, sellerNif: string | null, invoices: { index: number; given: CreateOperationBody['invoices'][number] }[], today: string, found?: FieldError[]): Promise<ResolvedInvoice[]> {
    const errors: FieldError[] = found ?? [];
    if (sellerNif !== null) errors.push(...nifProblems({ seller_nif: sellerNif }));
    const body = { seller_nif: sellerNif };
    const out: ResolvedInvoice[] = [];
    const seen = new Map<string, number>();
    const inv = this.t.invoices;
    for (const { index, given } of invoices) {
      const at = (field: string) => `invoices.${index}.${field}`;
      let r: Partial<ResolvedInvoice> & { number: string } = { number: given.number, source: 'request' };
      if (given.erp) {
        const books = and(eq(inv.tenantId, caller.tenantId), eq(inv.env, caller.env), eq(inv.provider, given.erp.provider), eq(inv.customerReference, given.erp.customer_reference));
        let row: typeof inv.$inferSelect | undefined = (await this.ctx.database.db.select().from(inv).where(and(books, eq(inv.number, given.number))).limit(1))[0];
        if (!row) {
          // as assignments compare numbers (assignmentKey): "ft 2026/1" is the books' "FT 2026/1"
          const wanted = normaliseInvoiceNumber(given.number);
          const near = await this.ctx.database.db
            .select()
            .from(inv)
            // spaces of every kind a document may print (no-break, narrow no-break) set aside in SQL
            .where(and(books, eq(sql`upper(replace(replace(replace(${inv.number}, ' ', ''), ${'\u00a0'}, ''), ${'\u202f'}, ''))`, wanted.replaceAll(' ', ''))))
            .limit(20);
          row = near.find((c) => normaliseInvoiceNumber(c.number) === wanted);
        }
        if (!row) {
          errors.push({ path: at('number'), message: `no invoice ${given.number} in the ${given.erp.provider} data under customer_reference ${given.erp.customer_reference}` });
          continue;
        }
        if (row.status === 'A' || row.status === 'F') errors.push({ path: at('number'), message: `invoice ${given.number} is cancelled in the ERP data` });
        // a receivable is an invoice (FT) or a debit note (ND): a credit note owes nothing, and an
        // invoice-receipt or simplified invoice was paid when issued
        if (!RECEIVABLE_TYPES.has(row.documentType)) errors.push({ path: at('number'), message: `${given.number} is ${DOCUMENT_KINDS[row.documentType] ?? `a ${row.documentType} document`}: only invoices (FT) and debit notes (ND) are receivables to assign` });
        // the books are one company's: only it can assign their invoices
        const owner = given.erp.provider === 'saft' ? (((row.data as { company_nif?: string | null } | null)?.company_nif ?? null)) : await this.booksOwner(caller, given.erp.provider, given.erp.customer_reference);
        if (owner && body.seller_nif !== null && owner !== body.seller_nif) errors.push({ path: at('erp'), message: `these books are company ${owner}'s (${given.erp.provider === 'saft' ? "the SAF-T file's TaxRegistrationNumber" : "the ERP connection's company_nif"}): seller_nif ${body.seller_nif} cannot assign their invoices` });
        // what the books say is what is assigned: a request may fill what they lack, not change it
        // (a later due date would have made an overdue invoice assignable)
        const fromBooks = { debtor_nif: row.customerNif, issue_date: row.issueDate, due_date: row.dueDate, amount_cents: Number(row.grossTotalCents) } as const;
        for (const f of ['debtor_nif', 'issue_date', 'due_date', 'amount_cents'] as const)
          if (given[f] !== undefined && fromBooks[f] !== null && given[f] !== fromBooks[f]) errors.push({ path: at(f), message: `differs from the ERP data (${fromBooks[f]}): an invoice read from the books is assigned as they say` });
        r = {
          ...r,
          number: row.number, // as the books print it
          source: `erp:${given.erp.provider}`,
          atcud: row.atcud,
          debtor_nif: row.customerNif ?? undefined,
          debtor_name: row.customerName,
          issue_date: row.issueDate,
          due_date: row.dueDate ?? undefined,
          amount_cents: Number(row.grossTotalCents),
        };
      }
      // fields given in the request fill or override what the ERP data says
      r = {
        ...r,
        ...(given.atcud !== undefined ? { atcud: given.atcud } : {}),
        ...(given.debtor_nif !== undefined ? { debtor_nif: given.debtor_nif } : {}),
        ...(given.debtor_name !== undefined ? { debtor_name: given.debtor_name } : {}),
        ...(given.debtor_address !== undefined ? { debtor_address: given.debtor_address } : {}),
        ...(given.issue_date !== undefined ? { issue_date: given.issue_date } : {}),
        ...(given.due_date !== undefined ? { due_date: given.due_date } : {}),
        ...(given.amount_cents !== undefined ? { amount_cents: given.amount_cents } : {}),
      };
      // each check with the fields it reads (one left out by `createProblems` has its own problem)
      const missing = (['debtor_nif', 'issue_date', 'due_date', 'amount_cents'] as const).filter((field) => r[field] === undefined || r[field] === null);
      for (const field of missing) errors.push({ path: at(field), message: given.erp ? 'not in the ERP data: give it in the request' : 'is required (or give erp to read the invoice from ERP data)' });
      const { debtor_nif: debtor, amount_cents: amount, issue_date: issued, due_date: due } = r;
      if (debtor != null && !isValidNif(debtor)) errors.push({ path: at('debtor_nif'), message: NIF_CHECK_DIGIT_FAILS });
      if (debtor != null && debtor === body.seller_nif) errors.push({ path: at('debtor_nif'), message: 'is the seller: a company cannot be its own debtor' });
      if (amount != null && !(amount > 0)) errors.push({ path: at('amount_cents'), message: 'must be above 0' });
      if (issued != null && issued > today) errors.push({ path: at('issue_date'), message: 'is in the future' });
      if (due != null && issued != null && due < issued) errors.push({ path: at('due_date'), message: 'is before the issue date' });
      else if (due != null && due <= today) errors.push({ path: at('due_date'), message: due < today ? 'has passed: an overdue invoice cannot be assigned' : 'is today: there is nothing to advance on an invoice due today' });
      // factoring buys short-term trade receivables (DL 171/95): a due date years away was priced
      // at a discount many times the invoice
      else if (due != null && (daysBetween(today, due) > MAX_TERM_DAYS || (issued != null && daysBetween(issued, due) > MAX_TERM_DAYS)))
        errors.push({ path: at('due_date'), message: `is more than ${MAX_TERM_DAYS} days after ${daysBetween(today, due) > MAX_TERM_DAYS ? 'today' : 'the issue date'}: factoring takes short-term receivables` });
      const key = normaliseInvoiceNumber(r.number);
      if (seen.has(key)) errors.push({ path: at('number'), message: `repeats invoices.${seen.get(key)}` });
      else seen.set(key, index);
      if (missing.length) continue;
      out.push({ ...(r as ResolvedInvoice), index, atcud: r.atcud ?? null, debtor_name: r.debtor_name ?? null, debtor_address: r.debtor_address ?? null });
    }
    if (errors.length && !found) throw fieldProblems(errors, 'Some invoices cannot be assigned; see fields.');
    return out;
  }

  /**
   * The company whose books an ERP connection holds, when the tenant said so (company_nif): the
   * newest live link's (as a sync reads it), not a pending, denied or disconnected one. A SAF-T
   * import's invoices carry their file's company instead.
   */
  private async booksOwner(caller: FinanceCaller, provider: string, customerReference: string): Promise<string | null> {
    return (await liveConnection(this.ctx.database, caller, provider, customerReference))?.companyNif ?? null;
  }

  /**
   * A new operation. Its usage lines (each debtor's credit decision, the bureau lookup of a live
   * score computed for one) are recorded only if it succeeds: a debtor not found, an invoice already
   * assigned, any failure after a decision bills nothing (UsageMeter.hold).
   */
  async create(caller: FinanceCaller, body: CreateOperationBody): Promise<OperationView> {
    const now = this.now();
    const today = isoDay(now);
    const invoices = await this.resolveInvoices(caller, body.seller_nif, body.invoices.map((given, index) => ({ index, given })), today);

    // one credit decision per debtor, for its share of the operation over its longest term
    const byDebtor = new Map<string, ResolvedInvoice[]>();
    for (const inv of invoices) byDebtor.set(inv.debtor_nif, [...(byDebtor.get(inv.debtor_nif) ?? []), inv]);
    const face = sumCents(invoices.map((i) => i.amount_cents));
    const debtors: OperationView['debtors'] = [];
    let policy: CreditPolicy | undefined;
    for (const [nif, list] of byDebtor) {
      const debtorFace = sumCents(list.map((i) => i.amount_cents));
      const term = Math.max(1, ...list.map((i) => daysBetween(today, i.due_date)));
      let decision;
      try {
        decision = (await this.decisions.decide(caller, { nif, context: { operation_type: 'factoring', amount_eur: debtorFace / 100, expected_term_days: Math.min(720, term) } }, performance.now())).body;
      } catch (err) {
        if (err instanceof ApiError) throw aboutField(err, `invoices.${list[0]!.index}.debtor_nif`, `Debtor ${nif}`);
        throw err;
      }
      const limitCents = Math.round(decision.recommendation.limit_eur * 100);
      // priced for the operation's modality: without recourse the factor bears the debtor's loss
      policy ??= (await this.decisions.policy(caller)).policy;
      // (never below the debtor's own expected loss at the operation's LGD, as the decision's own spread)
      const spreadBps = spreadForModality(decision.tier as Notch, decision.context.expected_term_days, body.modality, { modality: decision.recommendation.modality as Modality, spreadBps: decision.recommendation.suggested_spread_bps }, policy, decision.pd_estimate);
      const first = list[0]!;
      debtors.push({
        nif,
        name: list.find((i) => i.debtor_name)?.debtor_name ?? null,
        address: list.find((i) => i.debtor_address)?.debtor_address ?? first.debtor_address,
        invoices_count: list.length,
        face_cents: debtorFace,
        share_of_operation_bps: 0, // below, once every debtor's face is known
        other_exposure_cents: 0, // and within_limit: read in the transaction that stores the operation
        decision: {
          decision_id: decision.decision_id,
          approved: decision.recommendation.approved,
          tier: decision.tier,
          limit_cents: limitCents,
          spread_bps: spreadBps,
          algorithm_version: decision.algorithm_version,
        },
        within_limit: false,
      });
    }

    sharesBps(debtors.map((d) => d.face_cents)).forEach((bps, i) => (debtors[i]!.share_of_operation_bps = bps));
    const spreads = new Map(debtors.map((d) => [d.nif, d.decision.spread_bps]));
    const advanceRateBps = body.advance_rate_bps ?? DEFAULT_ADVANCE_RATE_BPS[body.modality];
    const { perInvoice, pricing } = priceInvoices(invoices, { asOf: today, advanceRateBps, baseRate: this.baseRate(), spreadBps: (n) => spreads.get(n)!, serviceFeeBps: SERVICE_FEE_BPS[body.modality] });

    const id = `fop_${Bun.randomUUIDv7()}`;
    const lastDue = invoices.map((i) => i.due_date).sort().at(-1)!;
    const actor = this.actor(caller);
    let autoApprove = false;
    const row = await this.withAssignments(invoices, body.seller_nif, async (tx) => {
      // what the tenant has committed to each debtor elsewhere (other operations, its programmes'
      // limits), read under the debtors' exposure locks in the transaction that commits this
      // operation: concurrent operations cannot each fit a limit alone
      await lockExposure(this.ctx.database, tx, caller, debtors.map((d) => d.nif));
      for (const d of debtors) {
        const committed = await committedTo(this.ctx.database, caller, d.nif, tx);
        d.other_exposure_cents = committed.factoring_cents + committed.confirming_cents;
        d.within_limit = d.face_cents + d.other_exposure_cents <= d.decision.limit_cents;
      }
      const reviewReasons: string[] = [];
      for (const d of debtors) {
        if (!d.decision.approved) reviewReasons.push(`debtor ${d.nif}: the credit decision declines (tier ${d.decision.tier})`);
        else if (!d.within_limit) reviewReasons.push(`debtor ${d.nif}: €${((d.face_cents + d.other_exposure_cents) / 100).toFixed(2)} with the other live operations exceeds the limit of €${(d.decision.limit_cents / 100).toFixed(2)}`);
      }
      autoApprove = (body.auto_approve ?? true) && reviewReasons.length === 0;
      if (!(body.auto_approve ?? true)) reviewReasons.push('auto_approve is false: the back office decides');
      const history: OperationView['history'] = [{ status: 'submitted', at: now.toISOString(), reason: null }];
      if (autoApprove) history.push({ status: 'approved', at: now.toISOString(), reason: 'every debtor approved within its limit' });
      const data: StoredData = {
        seller: { nif: body.seller_nif, name: body.seller_name ?? null, address: body.seller_address ?? null },
        contract_reference: body.contract_reference ?? null,
        debtors,
        invoices: invoices.map((inv, i) => ({
          number: inv.number,
          atcud: inv.atcud,
          debtor_nif: inv.debtor_nif,
          issue_date: inv.issue_date,
          due_date: inv.due_date,
          amount_cents: inv.amount_cents,
          source: inv.source,
          ...perInvoice[i]!,
        })),
        pricing,
        approval: { automatic: autoApprove, review_reasons: autoApprove ? [] : reviewReasons },
        funding: null,
        settlement: null,
        default: null,
        history,
      };
      const status: OperationStatus = autoApprove ? 'approved' : 'submitted';
      const [inserted] = await tx
        .insert(this.t.financeOperations)
        .values({
          id,
          tenantId: caller.tenantId,
          env: caller.env,
          sellerNif: body.seller_nif,
          sellerName: body.seller_name ?? null,
          modality: body.modality,
          status,
          currency: 'EUR',
          faceCents: face,
          data: data as unknown as Record<string, unknown>,
          lastDueDate: lastDue,
          reason: null,
          customerReference: body.customer_reference ?? null,
          version: 1,
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      await this.assign(tx, caller, id, body.seller_nif, invoices);
      await this.audit.append(tx, actor, id, 'operation.created', {
        seller_nif: body.seller_nif,
        modality: body.modality,
        face_cents: face,
        invoices: invoices.map((i) => ({ number: i.number, debtor_nif: i.debtor_nif, amount_cents: i.amount_cents, due_date: i.due_date, source: i.source })),
        pricing,
      });
      for (const d of debtors) await this.audit.append(tx, actor, id, 'decision.recorded', { debtor_nif: d.nif, ...d.decision, other_exposure_cents: d.other_exposure_cents, within_limit: d.within_limit });
      if (autoApprove) {
        await this.audit.append(tx, actor, id, 'operation.approved', { automatic: true, from: 'submitted' });
        await this.emitApproved(tx, caller, inserted!, data, true);
      }
      return inserted!;
    });
    if (autoApprove) this.ctx.events.onEmitted();
    return this.view(row);
  }

  /** Runs `fn` (which assigns the invoices); a live assignment of one of them, found first or by the unique index, is 409. */
  private async withAssignments<R>(invoices: { number: string; index: number }[], issuerNif: string, fn: (tx: Db) => Promise<R>): Promise<R> {
    try {
      return await this.ctx.database.withTx(fn);
    } catch (err) {
      if (err instanceof ApiError) throw err;
      if (isUniqueViolation(err))
        throw new ApiError('invoice_already_assigned', `An invoice of seller ${issuerNif} was assigned by another operation at the same time; nothing was stored.`, {
          fields: invoices.map((i) => ({ path: `invoices.${i.index}.number`, message: 'may be assigned in another live operation' })),
        });
      throw err;
    }
  }

  private async assign(tx: Db, caller: FinanceCaller, holderId: string, issuerNif: string, invoices: ResolvedInvoice[]) {
    const a = this.t.assignedInvoices;
    const keys = invoices.map((i) => assignmentKey(issuerNif, i.number));
    const taken = await tx
      .select({ key: a.assignmentKey, holder: a.holderId })
      .from(a)
      .where(and(eq(a.tenantId, caller.tenantId), eq(a.env, caller.env), inArray(a.assignmentKey, keys)));
    if (taken.length) {
      const holders = new Map(taken.map((r) => [r.key!, r.holder]));
      throw new ApiError('invoice_already_assigned', `${taken.length} invoice(s) are already assigned in a live operation or programme (the first notified assignment prevails, Civil Code art. 584); nothing was stored.`, {
        fields: invoices.filter((i) => holders.has(assignmentKey(issuerNif, i.number))).map((i) => ({ path: `invoices.${i.index}.number`, message: `${i.number} is held by ${holders.get(assignmentKey(issuerNif, i.number))}` })),
      });
    }
    const now = this.now();
    await tx.insert(a).values(
      invoices.map((i) => ({ id: `asg_${Bun.randomUUIDv7()}`, tenantId: caller.tenantId, env: caller.env, holderId, issuerNif, debtorNif: i.debtor_nif, number: i.number, assignmentKey: assignmentKey(issuerNif, i.number), createdAt: now })),
    );
  }

  private actor(caller: Pick<FinanceCaller, 'tenantId' | 'env' | 'keyId' | 'requestId'>): AuditActor {
    return { tenantId: caller.tenantId, env: caller.env, keyId: caller.keyId, requestId: caller.requestId };
  }

  private async emitApproved(tx: Db, caller: { tenantId: string; env: string }, row: OperationRow, data: StoredData, automatic: boolean) {
    await this.ctx.events.emit(tx, {
      tenantId: caller.tenantId,
      env: caller.env,
      type: 'operation.approved',
      data: {
        operation_id: row.id,
        seller_nif: row.sellerNif,
        modality: row.modality,
        face_cents: Number(row.faceCents),
        advance_cents: data.pricing.advance_cents,
        net_to_seller_cents: data.pricing.net_to_seller_cents,
        debtors: data.debtors.map((d) => d.nif),
        automatic,
      },
    });
  }

  // ------------------------------------------------------------------------------------------
  // Reading
  // ------------------------------------------------------------------------------------------

  view(row: OperationRow): OperationView {
    const d = row.data as unknown as StoredData;
    const status = row.status as OperationStatus;
    return {
      operation_id: row.id,
      status,
      modality: row.modality as OperationView['modality'],
      currency: 'EUR',
      seller: d.seller,
      contract_reference: d.contract_reference,
      customer_reference: row.customerReference,
      debtors: d.debtors,
      invoices: d.invoices,
      pricing: d.pricing,
      approval: d.approval,
      funding: d.funding,
      settlement: d.settlement,
      default: d.default,
      reason: row.reason,
      allowed_actions: actionsToday(status, d.invoices.map((i) => i.due_date), isoDay(this.now())),
      history: d.history,
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
    };
  }

  private async row(caller: { tenantId: string; env: string }, id: string): Promise<OperationRow> {
    const o = this.t.financeOperations;
    const [row] = await this.ctx.database.db.select().from(o).where(and(eq(o.tenantId, caller.tenantId), eq(o.env, caller.env), eq(o.id, id))).limit(1);
    if (!row) throw new ApiError('resource_not_found', `No factoring operation ${id} for this tenant in this environment.`);
    return row;
  }

  async get(caller: { tenantId: string; env: string }, id: string) {
    return this.view(await this.row(caller, id));
  }

  async list(caller: { tenantId: string; env: string }, q: { status?: OperationStatus; seller_nif?: string; debtor_nif?: string; limit?: number; cursor?: string }) {
    const o = this.t.financeOperations;
    const limit = q.limit ?? 50;
    const conds = [eq(o.tenantId, caller.tenantId), eq(o.env, caller.env)];
    if (q.status) conds.push(eq(o.status, q.status));
    if (q.seller_nif) conds.push(eq(o.sellerNif, q.seller_nif));
    if (q.cursor) conds.push(lt(o.id, q.cursor));
    if (q.debtor_nif) {
      const a = this.t.assignedInvoices;
      const holders = this.ctx.database.db.selectDistinct({ id: a.holderId }).from(a).where(and(eq(a.tenantId, caller.tenantId), eq(a.env, caller.env), eq(a.debtorNif, q.debtor_nif)));
      conds.push(inArray(o.id, holders));
    }
    const rows = await this.ctx.database.db.select().from(o).where(and(...conds)).orderBy(desc(o.id)).limit(limit + 1);
    return pageOf(rows, limit, (r) => this.view(r), (r) => r.id);
  }

  /** What a notice of assignment needs of an operation (src/features/notice). */
  async forNotice(caller: { tenantId: string; env: string }, id: string) {
    const o = this.t.financeOperations;
    const [row] = await this.ctx.database.db.select().from(o).where(and(eq(o.tenantId, caller.tenantId), eq(o.env, caller.env), eq(o.id, id))).limit(1);
    if (!row) return null;
    const v = this.view(row);
    return {
      operation_id: v.operation_id,
      status: v.status,
      contract_reference: v.contract_reference,
      seller: v.seller,
      debtors: v.debtors.map((d) => ({ nif: d.nif, name: d.name, address: d.address })),
      invoices: v.invoices.map((i) => ({ number: i.number, atcud: i.atcud, issue_date: i.issue_date, due_date: i.due_date, amount_cents: i.amount_cents, debtor_nif: i.debtor_nif })),
    };
  }

  // ------------------------------------------------------------------------------------------
  // Transitions
  // ------------------------------------------------------------------------------------------

  async transition(caller: FinanceCaller, id: string, action: OperationAction, body?: { reason?: string; collected_cents?: number }): Promise<OperationView>;
  /** the default sweep's: null when another replica moved the operation first */
  async transition(caller: FinanceCaller, id: string, action: OperationAction, body: { reason?: string; collected_cents?: number }, automatic: true): Promise<OperationView | null>;
  async transition(caller: FinanceCaller, id: string, action: OperationAction, body: { reason?: string; collected_cents?: number } = {}, automatic = false): Promise<OperationView | null> {
    const row = await this.row(caller, id);
    const from = row.status as OperationStatus;
    const to = nextStatus(from, action);
    if (!to) {
      const allowed = allowedActions(from);
      throw new ApiError('invalid_transition', `Operation ${id} is ${from}: ${action} does not apply (${allowed.length ? `allowed: ${allowed.join(', ')}` : 'no action applies any more'}).`);
    }
    const now = this.now();
    const data = structuredClone(row.data as unknown as StoredData);
    const fallenDue = action === 'fund' ? data.invoices.filter((i) => i.due_date < isoDay(now)) : [];
    if (fallenDue.length)
      throw new ApiError(
        'invalid_transition',
        `Operation ${id} cannot be funded: ${fallenDue.map((i) => `invoice ${i.number} fell due on ${i.due_date}`).join(', ')} (an overdue invoice is not funded; cancel the operation and submit the invoices still to fall due).`,
      );
    if ((action === 'reject' || action === 'cancel' || action === 'write_off' || (action === 'default' && !automatic)) && !body.reason)
      throw validationError([{ path: 'reason', message: `is required to ${action}` }]);
    if (action !== 'settle' && body.collected_cents !== undefined) throw validationError([{ path: 'collected_cents', message: 'applies to settle only' }]);
    const face = Number(row.faceCents);
    const auditData: Record<string, unknown> = { from, to, ...(body.reason ? { reason: body.reason } : {}) };
    if (action === 'fund') {
      // repriced from the funding date: the days to due date are fewer than at creation
      const spreads = new Map(data.debtors.map((d) => [d.nif, d.decision.spread_bps]));
      const { pricing } = priceInvoices(data.invoices, { asOf: isoDay(now), advanceRateBps: data.pricing.advance_rate_bps, baseRate: data.pricing.base_rate, spreadBps: (n) => spreads.get(n) ?? 0, serviceFeeBps: data.pricing.service_fee_bps });
      data.funding = { funded_at: now.toISOString(), pricing };
      auditData.net_to_seller_cents = pricing.net_to_seller_cents;
      auditData.advance_cents = pricing.advance_cents;
    }
    if (action === 'settle') {
      const collected = body.collected_cents ?? face;
      if (collected > face) throw validationError([{ path: 'collected_cents', message: `exceeds the face value (${face})` }]);
      const p = data.funding?.pricing ?? data.pricing;
      // the fees were taken from the advance at funding (net_to_seller): what the debtors paid over
      // the advance is the seller's reserve
      const released = Math.max(0, collected - p.advance_cents);
      data.settlement = { settled_at: now.toISOString(), collected_cents: collected, reserve_released_cents: released, shortfall_cents: face - collected };
      Object.assign(auditData, data.settlement);
    }
    if (action === 'default') {
      const daysPastDue = Math.max(0, daysBetween(row.lastDueDate, isoDay(now)));
      data.default = { flagged_at: now.toISOString(), days_past_due: daysPastDue, outstanding_cents: face, automatic };
      Object.assign(auditData, data.default);
    }
    data.history.push({ status: to, at: now.toISOString(), reason: body.reason ?? null });
    const o = this.t.financeOperations;
    const updated = await this.ctx.database.withTx(async (tx) => {
      const [u] = await tx
        .update(o)
        .set({ status: to, data: data as unknown as Record<string, unknown>, reason: body.reason ?? row.reason, version: row.version + 1, updatedAt: now })
        .where(and(eq(o.id, id), eq(o.version, row.version)))
        .returning();
      if (!u) return null; // someone else moved it first
      if (!holdsInvoices(to)) await tx.update(this.t.assignedInvoices).set({ assignmentKey: null }).where(eq(this.t.assignedInvoices.holderId, id));
      await this.audit.append(tx, this.actor(caller), id, `operation.${to}`, { ...auditData, automatic });
      if (to === 'approved') await this.emitApproved(tx, caller, u, data, false);
      if (to === 'settled')
        await this.ctx.events.emit(tx, { tenantId: caller.tenantId, env: caller.env, type: 'settlement.completed', data: { operation_id: id, kind: 'factoring', seller_nif: row.sellerNif, ...data.settlement! } });
      if (to === 'defaulted')
        await this.ctx.events.emit(tx, {
          tenantId: caller.tenantId,
          env: caller.env,
          type: 'default.flagged',
          data: { operation_id: id, kind: 'factoring', seller_nif: row.sellerNif, modality: row.modality, debtors: data.debtors.map((d) => d.nif), ...data.default!, reason: body.reason ?? null },
        });
      return u;
    });
    if (!updated) {
      if (automatic) return null; // another replica's sweep flagged it first
      const current = await this.row(caller, id);
      throw new ApiError('invalid_transition', `Operation ${id} changed while this request ran (now ${current.status}); read it and try again if ${action} still applies.`);
    }
    if (to === 'approved' || to === 'settled' || to === 'defaulted') this.ctx.events.onEmitted();
    return this.view(updated);
  }

  /**
   * The default sweep: funded operations still unpaid FACTORING_DEFAULT_AFTER_DAYS after their last
   * due date are defaulted (not an erased tenant's). Safe on every replica at once: the compare-and-set lets one win.
   */
  async flagDefaults(): Promise<number> {
    const o = this.t.financeOperations;
    const cutoff = isoDay(new Date(this.now().getTime() - this.ctx.config.factoringDefaultAfterDays * 86_400_000));
    const due = await this.ctx.database.db
      .select({ id: o.id, tenantId: o.tenantId, env: o.env })
      .from(o)
      // an erased tenant's operations are kept as its AML record only: never processed again
      .innerJoin(this.t.tenants, and(eq(this.t.tenants.id, o.tenantId), ne(this.t.tenants.status, 'terminated')))
      .where(and(eq(o.status, 'funded'), lt(o.lastDueDate, cutoff)))
      .limit(200);
    let flagged = 0;
    for (const r of due) {
      const caller = { tenantId: r.tenantId, env: r.env as Env, keyId: null, requestId: null };
      try {
        const after = await this.transition(caller, r.id, 'default', { reason: `unpaid ${this.ctx.config.factoringDefaultAfterDays} days after the last due date` }, true);
        if (after) flagged++;
      } catch (err) {
        // another replica's sweep (or a caller) moved it after this one listed it
        if (!(err instanceof ApiError && err.code === 'invalid_transition')) throw err;
      }
    }
    return flagged;
  }
}

