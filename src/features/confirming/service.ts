import { Value } from '@sinclair/typebox/value';
import { and, desc, eq, inArray, lt, ne } from 'drizzle-orm';
import { electronicFormatIBAN, isValidIBAN } from 'ibantools';
import type { AppContext } from '../../context';
import { isUniqueViolation, type Db } from '../../db/client';
import { aboutField, ApiError, fieldProblems, isJsonObject, NIF_CHECK_DIGIT_FAILS, validationError, type FieldError } from '../../lib/errors';
import { RequestProblems } from '../../lib/request-problems';
import { isValidNif } from '../../lib/nif';
import { pageOf } from '../../lib/schemas';
import type { AuditActor, AuditTrail } from '../audit/service';
import type { DecisionService } from '../decision/service';
import { daysBetween, discountCents, sumCents } from '../finance/money';
import { assignmentKey } from '../finance/assignment-key';
import { committedTo, lockExposure } from '../finance/exposure';
import type { Env } from '../tenants/service';
import { PayablesRequest, ProgrammeParams, type OfferT, type PayableViewT, type ProgrammeBody } from './model';

type PayableInput = (typeof PayablesRequest.static)['payables'][number];
import { LIMIT_STATUSES, nextPayableStatus, payableActions, payableActionsToday, payableHoldsInvoice, type PayableAction, type PayableStatus } from './states';

export type { FinanceCaller } from '../finance/caller';
import type { FinanceCaller } from '../finance/caller';
type ProgrammeRow = AppContext['database']['t']['confirmingProgrammes']['$inferSelect'];
type PayableRow = AppContext['database']['t']['confirmingPayables']['$inferSelect'];
interface ProgrammeData {
  anchor_name: string | null;
  payment_terms_days: number;
  base_rate_bps: number;
  funding_spread_bps: number;
  decision_id: string;
  frame_ancestors: string[];
}
interface PayableData {
  atcud: string | null;
  issue_date: string;
  accepted_offer: OfferT | null;
  history: PayableViewT['history'];
}

/** days past a programme's payment terms a payable may still fall due ("90 days, end of month") */
const TERMS_GRACE_DAYS = 30;
const isoDay = (d: Date) => d.toISOString().slice(0, 10);

/** The early-payment offer on a payable as of a date: (base + spread) × days / 360 off the amount. */
export function offerFor(amountCents: number, dueDate: string, rateBps: number, asOf: string): OfferT {
  const days = Math.max(0, daysBetween(asOf, dueDate));
  const discount = discountCents(amountCents, rateBps, days);
  return { rate_bps: rateBps, days, discount_cents: discount, net_cents: amountCents - discount, computed_on: asOf };
}

/**
 * Confirming (reverse factoring): an anchor buyer's programme priced from its credit decision, its
 * suppliers, the approved payables it uploads with their early-payment offers, and their
 * lifecycle. Payables take the invoices out of circulation (assigned_invoices, shared with
 * factoring: CC art. 584); every change is audited on the payable and on its programme.
 */
export class ConfirmingService {
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
  private actor(c: Pick<FinanceCaller, 'tenantId' | 'env' | 'keyId' | 'requestId'>): AuditActor {
    return { tenantId: c.tenantId, env: c.env, keyId: c.keyId, requestId: c.requestId };
  }

  // --- programmes ---------------------------------------------------------------------------------

  /**
   * A new programme. The anchor's decision (and the bureau lookup of a live score computed for it)
   * is billed only if the programme is stored: a limit beyond the decision's bills nothing (UsageMeter.hold).
   */
  async createProgramme(caller: FinanceCaller, body: ProgrammeBody) {
    let decision;
    try {
      decision = (await this.decisions.decide(caller, { nif: body.anchor_nif, context: { operation_type: 'confirming', amount_eur: body.limit_cents / 100, expected_term_days: body.payment_terms_days } }, performance.now())).body;
    } catch (err) {
      if (err instanceof ApiError) throw aboutField(err, 'anchor_nif', `Anchor ${body.anchor_nif}`);
      throw err;
    }
    const now = this.now();
    const id = `cfp_${Bun.randomUUIDv7()}`;
    const data: ProgrammeData = {
      anchor_name: body.anchor_name ?? null,
      payment_terms_days: body.payment_terms_days,
      base_rate_bps: Math.round(this.ctx.config.baseRate.valuePct * 100),
      funding_spread_bps: decision.recommendation.suggested_spread_bps,
      decision_id: decision.decision_id,
      frame_ancestors: body.frame_ancestors ?? [],
    };
    const [row] = await this.ctx.database.withTx(async (tx) => {
      // the decision's limit is the anchor's, whatever the product: its other programmes' limits and
      // its invoices in factoring operations use it too. Read under the anchor's exposure lock, in
      // the transaction that commits the programme: concurrent programmes cannot each fit it alone
      await lockExposure(this.ctx.database, tx, caller, [body.anchor_nif]);
      const committed = await committedTo(this.ctx.database, caller, body.anchor_nif, tx);
      const elsewhere = committed.factoring_cents + committed.confirming_cents;
      const anchorLimit = Math.max(0, Math.round(decision.recommendation.limit_eur * 100) - elsewhere);
      if (!decision.recommendation.approved || body.limit_cents > anchorLimit)
        throw new ApiError('limit_exceeded', `The anchor's credit decision (${decision.decision_id}, tier ${decision.tier}) allows at most €${(anchorLimit / 100).toFixed(2)} for this programme${elsewhere ? ` (€${(elsewhere / 100).toFixed(2)} of its limit is committed in other programmes and factoring operations)` : ''}${decision.recommendation.approved ? '' : ' and does not approve it'}.`, {
          fields: [{ path: 'limit_cents', message: `at most ${anchorLimit}` }],
        });
      const r = await tx.insert(this.t.confirmingProgrammes).values({ id, tenantId: caller.tenantId, env: caller.env, anchorNif: body.anchor_nif, status: 'active', limitCents: body.limit_cents, data: data as unknown as Record<string, unknown>, version: 1, createdAt: now, updatedAt: now }).returning();
      await this.audit.append(tx, this.actor(caller), id, 'programme.created', { anchor_nif: body.anchor_nif, limit_cents: body.limit_cents, ...data, decision: { tier: decision.tier, algorithm_version: decision.algorithm_version } });
      return r;
    });
    return this.programmeView(row!, 0);
  }

  private async used(db: Db, programmeId: string): Promise<number> {
    const p = this.t.confirmingPayables;
    const rows = await db.select({ amount: p.amountCents }).from(p).where(and(eq(p.programmeId, programmeId), inArray(p.status, [...LIMIT_STATUSES])));
    return sumCents(rows.map((r) => Number(r.amount)));
  }

  programmeView(r: ProgrammeRow, used: number) {
    const d = r.data as unknown as ProgrammeData;
    return {
      programme_id: r.id,
      anchor_nif: r.anchorNif,
      anchor_name: d.anchor_name,
      status: 'active' as const,
      limit_cents: Number(r.limitCents),
      used_cents: used,
      available_cents: Number(r.limitCents) - used,
      payment_terms_days: d.payment_terms_days,
      base_rate_bps: d.base_rate_bps,
      funding_spread_bps: d.funding_spread_bps,
      decision_id: d.decision_id,
      frame_ancestors: d.frame_ancestors,
      created_at: r.createdAt.toISOString(),
    };
  }

  async programmeRow(caller: { tenantId: string; env: string }, id: string) {
    const p = this.t.confirmingProgrammes;
    const [row] = await this.ctx.database.db.select().from(p).where(and(eq(p.tenantId, caller.tenantId), eq(p.env, caller.env), eq(p.id, id))).limit(1);
    if (!row) throw new ApiError('resource_not_found', `No confirming programme ${id} for this tenant in this environment.`);
    return row;
  }

  async getProgramme(caller: { tenantId: string; env: string }, id: string) {
    const row = await this.programmeRow(caller, id);
    return this.programmeView(row, await this.used(this.ctx.database.db, id));
  }

  async listProgrammes(caller: { tenantId: string; env: string }, q: { limit?: number; cursor?: string }) {
    const p = this.t.confirmingProgrammes;
    const limit = q.limit ?? 50;
    const conds = [eq(p.tenantId, caller.tenantId), eq(p.env, caller.env)];
    if (q.cursor) conds.push(lt(p.id, q.cursor));
    const rows = await this.ctx.database.db.select().from(p).where(and(...conds)).orderBy(desc(p.id)).limit(limit + 1);
    const page = pageOf(rows, limit, (r) => r, (r) => r.id);
    return { data: await Promise.all(page.data.map(async (r) => this.programmeView(r, await this.used(this.ctx.database.db, r.id)))), next_cursor: page.next_cursor };
  }

  // --- suppliers ----------------------------------------------------------------------------------

  async addSupplier(caller: FinanceCaller, programmeId: string, body: { supplier_nif: string; name: string; iban: string; email?: string }) {
    const programme = await this.programmeRow(caller, programmeId);
    if (body.supplier_nif === programme.anchorNif) throw validationError([{ path: 'supplier_nif', message: 'is the programme\'s anchor: a company does not pay itself early' }]);
    const iban = electronicFormatIBAN(body.iban) ?? '';
    if (!isValidIBAN(iban)) throw new ApiError('invalid_iban', `${body.iban.slice(0, 42)} is not a valid IBAN.`, { fields: [{ path: 'iban', message: 'fails the IBAN format or check digits' }] });
    const now = this.now();
    const data = { name: body.name, iban, email: body.email ?? null };
    try {
      await this.ctx.database.withTx(async (tx) => {
        await tx.insert(this.t.confirmingSuppliers).values({ id: crypto.randomUUID(), tenantId: caller.tenantId, env: caller.env, programmeId, supplierNif: body.supplier_nif, data, createdAt: now });
        await this.audit.append(tx, this.actor(caller), programmeId, 'supplier.onboarded', { supplier_nif: body.supplier_nif, name: body.name, iban });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new ApiError('already_exists', `Supplier ${body.supplier_nif} is already in programme ${programmeId}.`, { fields: [{ path: 'supplier_nif', message: 'already onboarded' }] });
      throw err;
    }
    return { supplier_nif: body.supplier_nif, ...data, created_at: now.toISOString() };
  }

  async suppliers(caller: { tenantId: string; env: string }, programmeId: string) {
    await this.programmeRow(caller, programmeId);
    const s = this.t.confirmingSuppliers;
    const rows = await this.ctx.database.db.select().from(s).where(and(eq(s.programmeId, programmeId), eq(s.tenantId, caller.tenantId))).orderBy(s.createdAt);
    return { data: rows.map((r) => ({ supplier_nif: r.supplierNif, ...(r.data as { name: string; iban: string; email: string | null }), created_at: r.createdAt.toISOString() })) };
  }

  async supplier(caller: { tenantId: string; env: string }, programmeId: string, supplierNif: string) {
    const s = this.t.confirmingSuppliers;
    const [row] = await this.ctx.database.db.select().from(s).where(and(eq(s.programmeId, programmeId), eq(s.tenantId, caller.tenantId), eq(s.env, caller.env), eq(s.supplierNif, supplierNif))).limit(1);
    return row ? { supplier_nif: row.supplierNif, ...(row.data as { name: string; iban: string; email: string | null }) } : null;
  }

  // --- payables -----------------------------------------------------------------------------------

  /**
   * Every problem of an upload at once (the route's `transform`): the schema's, a field a payable
   * does not have among them, then the payables' own (`payableProblems`) on the fields that passed.
   */
  async uploadProblems(caller: FinanceCaller, programmeId: string, body: unknown): Promise<FieldError[]> {
    const problems = new RequestProblems(PayablesRequest, body, { refuseUnknown: true });
    const b = problems.object;
    // (the programme is read only under an id that can be one: the route's params are judged after this)
    if (!problems.fields.length || !b || !Array.isArray(b.payables) || !Value.Check(ProgrammeParams.properties.id, programmeId)) return problems.done();
    const items = (b.payables as unknown[]).slice(0, 500).flatMap((p, index) => {
      if (!isJsonObject(p) || problems.has(`payables.${index}`)) return [];
      const kept = problems.typedFields(PayablesRequest.properties.payables.items, p, `payables.${index}`);
      return [{ index, p: kept as Partial<PayableInput> }];
    });
    for (const f of await this.payableProblems(caller, await this.programmeRow(caller, programmeId), items)) problems.add(f);
    return problems.done();
  }

  /** A programme's payables' own problems (the schema's aside): each check with the fields it reads. */
  private async payableProblems(caller: FinanceCaller, programme: ProgrammeRow, items: { index: number; p: Partial<PayableInput> }[]): Promise<FieldError[]> {
    const pd = programme.data as unknown as ProgrammeData;
    const today = isoDay(this.now());
    const s = this.t.confirmingSuppliers;
    const onboarded = new Set((await this.ctx.database.db.select({ nif: s.supplierNif }).from(s).where(and(eq(s.programmeId, programme.id), eq(s.tenantId, caller.tenantId)))).map((r) => r.nif));
    const errors: FieldError[] = [];
    const seen = new Set<string>();
    for (const { index: i, p } of items) {
      const { supplier_nif: supplier, issue_date: issued, due_date: due, number } = p;
      // the check digit here, with the payables' other problems (the schema checks the shape only)
      if (supplier !== undefined && !isValidNif(supplier)) errors.push({ path: `payables.${i}.supplier_nif`, message: NIF_CHECK_DIGIT_FAILS });
      else if (supplier !== undefined && !onboarded.has(supplier)) errors.push({ path: `payables.${i}.supplier_nif`, message: 'is not a supplier of this programme (POST …/suppliers first)' });
      if (issued !== undefined && issued > today) errors.push({ path: `payables.${i}.issue_date`, message: 'is in the future: an invoice not issued yet is not payable' });
      if (due !== undefined && issued !== undefined && due < issued) errors.push({ path: `payables.${i}.due_date`, message: 'is before the issue date' });
      else if (due !== undefined && due <= today) errors.push({ path: `payables.${i}.due_date`, message: 'has passed or is today: nothing to pay early' });
      // the programme pays on its terms (its spread was decided for them): a due date beyond them,
      // and a month's grace for "N days, end of month", would be priced and carried past them
      else if (due !== undefined && issued !== undefined && daysBetween(issued, due) > pd.payment_terms_days + TERMS_GRACE_DAYS)
        errors.push({ path: `payables.${i}.due_date`, message: `is more than the programme's payment terms (${pd.payment_terms_days} days, and ${TERMS_GRACE_DAYS} of grace) after the issue date` });
      if (supplier === undefined || number === undefined) continue;
      const k = assignmentKey(supplier, number);
      if (seen.has(k)) errors.push({ path: `payables.${i}.number`, message: 'repeats an earlier payable of the same supplier' });
      seen.add(k);
    }
    return errors;
  }

  async uploadPayables(caller: FinanceCaller, programmeId: string, body: { payables: PayableInput[] }) {
    const programme = await this.programmeRow(caller, programmeId);
    const pd = programme.data as unknown as ProgrammeData;
    const today = isoDay(this.now());
    const errors = await this.payableProblems(caller, programme, body.payables.map((p, index) => ({ index, p })));
    if (errors.length) throw fieldProblems(errors, 'Some payables cannot be uploaded; see fields.');
    const now = this.now();
    const rate = pd.base_rate_bps + pd.funding_spread_bps;
    const rows = body.payables.map((p) => ({
      id: `cpy_${Bun.randomUUIDv7()}`,
      tenantId: caller.tenantId,
      env: caller.env,
      programmeId,
      supplierNif: p.supplier_nif,
      number: p.number,
      status: 'approved',
      amountCents: p.amount_cents,
      dueDate: p.due_date,
      data: { atcud: p.atcud ?? null, issue_date: p.issue_date, accepted_offer: null, history: [{ status: 'approved', at: now.toISOString(), by: 'api', reason: null }] } satisfies PayableData as unknown as Record<string, unknown>,
      version: 1,
      createdAt: now,
      updatedAt: now,
    }));
    const a = this.t.assignedInvoices;
    const inserted = await this.withAssignments(async (tx) => {
      // the limit, under the programme row's lock (a concurrent upload waits)
      await tx.update(this.t.confirmingProgrammes).set({ version: programme.version }).where(eq(this.t.confirmingProgrammes.id, programmeId));
      const used = await this.used(tx, programmeId);
      const adding = sumCents(rows.map((r) => r.amountCents));
      if (used + adding > Number(programme.limitCents))
        throw new ApiError('limit_exceeded', `The programme's limit is €${(Number(programme.limitCents) / 100).toFixed(2)}; €${(used / 100).toFixed(2)} is in use and these payables add €${(adding / 100).toFixed(2)}. Nothing was uploaded.`);
      const cp = this.t.confirmingPayables;
      // numbers compared as the assignment index compares them ("ft 1" is FT 1): settled or
      // cancelled payables hold no key there, and would otherwise be paid again
      const existing = await tx.select({ supplier: cp.supplierNif, number: cp.number, id: cp.id, status: cp.status }).from(cp).where(and(eq(cp.programmeId, programmeId), inArray(cp.supplierNif, [...new Set(rows.map((r) => r.supplierNif))])));
      const byKey = new Map(existing.map((x) => [assignmentKey(x.supplier, x.number), x]));
      const clash = rows.flatMap((r, i) => {
        const e = byKey.get(assignmentKey(r.supplierNif, r.number));
        return e ? [{ path: `payables.${i}.number`, message: `${r.number} is already payable ${e.id} (${e.status}) of this programme` }] : [];
      });
      if (clash.length) throw new ApiError('already_exists', `${clash.length} payable(s) are already in this programme; nothing was uploaded.`, { fields: clash });
      const keys = rows.map((r) => assignmentKey(r.supplierNif, r.number));
      const taken = await tx.select({ key: a.assignmentKey, holder: a.holderId }).from(a).where(and(eq(a.tenantId, caller.tenantId), eq(a.env, caller.env), inArray(a.assignmentKey, keys)));
      if (taken.length) {
        const held = new Map(taken.map((x) => [x.key!, x.holder]));
        throw new ApiError('invoice_already_assigned', `${taken.length} invoice(s) are already assigned in a live operation or programme (Civil Code art. 584); nothing was uploaded.`, {
          fields: rows.flatMap((r, i) => (held.has(assignmentKey(r.supplierNif, r.number)) ? [{ path: `payables.${i}.number`, message: `${r.number} is held by ${held.get(assignmentKey(r.supplierNif, r.number))}` }] : [])),
        });
      }
      const out = await tx.insert(this.t.confirmingPayables).values(rows).returning();
      await tx.insert(a).values(rows.map((r) => ({ id: `asg_${Bun.randomUUIDv7()}`, tenantId: caller.tenantId, env: caller.env, holderId: r.id, issuerNif: r.supplierNif, debtorNif: programme.anchorNif, number: r.number, assignmentKey: assignmentKey(r.supplierNif, r.number), createdAt: now })));
      for (const r of rows) await this.audit.append(tx, this.actor(caller), r.id, 'payable.approved', { programme_id: programmeId, supplier_nif: r.supplierNif, number: r.number, amount_cents: r.amountCents, due_date: r.dueDate });
      await this.audit.append(tx, this.actor(caller), programmeId, 'payables.uploaded', { count: rows.length, total_cents: adding, payable_ids: rows.map((r) => r.id) });
      return out;
    });
    return { data: inserted.map((r) => this.payableView(r, rate, today)) };
  }

  private async withAssignments<R>(fn: (tx: Db) => Promise<R>): Promise<R> {
    try {
      return await this.ctx.database.withTx(fn);
    } catch (err) {
      if (!(err instanceof ApiError) && isUniqueViolation(err)) throw new ApiError('invoice_already_assigned', 'An invoice was assigned by another operation at the same time; nothing was uploaded.');
      throw err;
    }
  }

  payableView(r: PayableRow, rateBps: number, today: string): PayableViewT {
    const d = r.data as unknown as PayableData;
    const status = r.status as PayableStatus;
    return {
      payable_id: r.id,
      programme_id: r.programmeId,
      supplier_nif: r.supplierNif,
      number: r.number,
      atcud: d.atcud,
      issue_date: d.issue_date,
      due_date: r.dueDate,
      amount_cents: Number(r.amountCents),
      status,
      offer: status === 'approved' && r.dueDate > today ? offerFor(Number(r.amountCents), r.dueDate, rateBps, today) : null,
      accepted_offer: d.accepted_offer,
      funding: fundingOf(d),
      allowed_actions: payableActionsToday(status, r.dueDate, today),
      history: d.history,
      created_at: r.createdAt.toISOString(),
      updated_at: r.updatedAt.toISOString(),
    };
  }

  private rateOf(p: ProgrammeRow) {
    const d = p.data as unknown as ProgrammeData;
    return d.base_rate_bps + d.funding_spread_bps;
  }

  async payableRow(caller: { tenantId: string; env: string }, id: string) {
    const p = this.t.confirmingPayables;
    const [row] = await this.ctx.database.db.select().from(p).where(and(eq(p.tenantId, caller.tenantId), eq(p.env, caller.env), eq(p.id, id))).limit(1);
    if (!row) throw new ApiError('resource_not_found', `No payable ${id} for this tenant in this environment.`);
    return row;
  }

  async getPayable(caller: { tenantId: string; env: string }, id: string) {
    const row = await this.payableRow(caller, id);
    return this.payableView(row, this.rateOf(await this.programmeRow(caller, row.programmeId)), isoDay(this.now()));
  }

  async listPayables(caller: { tenantId: string; env: string }, programmeId: string, q: { status?: string; supplier_nif?: string; limit?: number; cursor?: string }) {
    const programme = await this.programmeRow(caller, programmeId);
    const p = this.t.confirmingPayables;
    const limit = q.limit ?? 50;
    const conds = [eq(p.programmeId, programmeId), eq(p.tenantId, caller.tenantId)];
    if (q.status) conds.push(eq(p.status, q.status));
    if (q.supplier_nif) conds.push(eq(p.supplierNif, q.supplier_nif));
    if (q.cursor) conds.push(lt(p.id, q.cursor));
    const rows = await this.ctx.database.db.select().from(p).where(and(...conds)).orderBy(desc(p.id)).limit(limit + 1);
    const today = isoDay(this.now());
    return pageOf(rows, limit, (r) => this.payableView(r, this.rateOf(programme), today), (r) => r.id);
  }

  /**
   * A transition, as a compare-and-set on the version: `by` is api (the bank or the anchor),
   * portal (the supplier accepting) or sweep. Accepting fixes the offer of that day.
   */
  async transition(caller: FinanceCaller, id: string, action: PayableAction, o: { reason?: string; by: 'api' | 'portal' | 'sweep' }) {
    const row = await this.payableRow(caller, id);
    const programme = await this.programmeRow(caller, row.programmeId);
    const from = row.status as PayableStatus;
    const to = nextPayableStatus(from, action);
    if (!to) {
      const allowed = payableActions(from);
      throw new ApiError('invalid_transition', `Payable ${id} is ${from}: ${action} does not apply (${allowed.length ? `allowed: ${allowed.join(', ')}` : 'no action applies any more'}).`);
    }
    const now = this.now();
    const today = isoDay(now);
    if (!payableActionsToday(from, row.dueDate, today).includes(action))
      throw new ApiError(
        'invalid_transition',
        action === 'accept'
          ? `Payable ${id} falls due on ${row.dueDate}: early payment is accepted only before the due date; the anchor pays it at maturity (settle).`
          : `Payable ${id} fell due on ${row.dueDate} unfunded: an early payment is funded no later than the due date; cancel it, and the anchor pays at maturity.`,
      );
    if ((action === 'cancel' || action === 'write_off' || (action === 'default' && o.by !== 'sweep')) && !o.reason) throw validationError([{ path: 'reason', message: `is required to ${action}` }]);
    const d = structuredClone(row.data as unknown as PayableData);
    if (action === 'accept') d.accepted_offer = offerFor(Number(row.amountCents), row.dueDate, this.rateOf(programme), today);
    d.history.push({ status: to, at: now.toISOString(), by: o.by, reason: o.reason ?? null });
    const p = this.t.confirmingPayables;
    const actor = this.actor(caller);
    const updated = await this.ctx.database.withTx(async (tx) => {
      const [u] = await tx.update(p).set({ status: to, data: d as unknown as Record<string, unknown>, version: row.version + 1, updatedAt: now }).where(and(eq(p.id, id), eq(p.version, row.version))).returning();
      if (!u) return null;
      if (!payableHoldsInvoice(to)) await tx.update(this.t.assignedInvoices).set({ assignmentKey: null }).where(eq(this.t.assignedInvoices.holderId, id));
      const entry = { from, to, by: o.by, ...(o.reason ? { reason: o.reason } : {}), ...(action === 'accept' ? { offer: d.accepted_offer } : {}) };
      await this.audit.append(tx, actor, id, `payable.${to}`, entry);
      await this.audit.append(tx, actor, row.programmeId, `payable.${to}`, { payable_id: id, ...entry });
      const base = { payable_id: id, programme_id: row.programmeId, kind: 'confirming', anchor_nif: programme.anchorNif, supplier_nif: row.supplierNif, number: row.number, amount_cents: Number(row.amountCents) };
      if (to === 'settled') await this.ctx.events.emit(tx, { tenantId: caller.tenantId, env: caller.env, type: 'settlement.completed', data: { ...base, settled_at: now.toISOString(), early_payment: !!d.accepted_offer } });
      if (to === 'defaulted') await this.ctx.events.emit(tx, { tenantId: caller.tenantId, env: caller.env, type: 'default.flagged', data: { ...base, due_date: row.dueDate, days_past_due: Math.max(0, daysBetween(row.dueDate, today)), automatic: o.by === 'sweep', reason: o.reason ?? null } });
      return u;
    });
    if (!updated) {
      if (o.by === 'sweep') return null;
      throw new ApiError('invalid_transition', `Payable ${id} changed while this request ran; read it and try again.`);
    }
    if (to === 'settled' || to === 'defaulted') this.ctx.events.onEmitted();
    return this.payableView(updated, this.rateOf(programme), today);
  }

  /** Funded payables still unpaid FACTORING_DEFAULT_AFTER_DAYS after their due date are defaulted (once, across replicas). */
  async flagDefaults(): Promise<number> {
    const p = this.t.confirmingPayables;
    const cutoff = isoDay(new Date(this.now().getTime() - this.ctx.config.factoringDefaultAfterDays * 86_400_000));
    const tn = this.t.tenants;
    const due = await this.ctx.database.db
      .select({ id: p.id, tenantId: p.tenantId, env: p.env })
      .from(p)
      // an erased tenant's payables are kept as its AML record only: never processed again
      .innerJoin(tn, and(eq(tn.id, p.tenantId), ne(tn.status, 'terminated')))
      .where(and(eq(p.status, 'funded'), lt(p.dueDate, cutoff)))
      .limit(200);
    let n = 0;
    for (const r of due) {
      try {
        const done = await this.transition({ tenantId: r.tenantId, env: r.env as Env, keyId: null, requestId: null }, r.id, 'default', { by: 'sweep', reason: `unpaid ${this.ctx.config.factoringDefaultAfterDays} days after the due date` });
        if (done) n++;
      } catch (err) {
        // another replica's sweep (or a caller) moved it after this one listed it
        if (!(err instanceof ApiError && err.code === 'invalid_transition')) throw err;
      }
    }
    return n;
  }
}

/** The early payment a payable's history records (the funded step), at its accepted offer's net amount. */
function fundingOf(d: PayableData): PayableViewT['funding'] {
  const funded = d.history.find((h) => h.status === 'funded');
  if (!funded || !d.accepted_offer) return null;
  return { funded_at: funded.at, paid_cents: d.accepted_offer.net_cents, discount_cents: d.accepted_offer.discount_cents };
}
