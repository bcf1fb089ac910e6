import { and, desc, eq, lt } from 'drizzle-orm';
import type { AppContext } from '../../context';
import { ApiError } from '../../lib/errors';
import { pageOf } from '../../lib/schemas';
import type { AuditTrail } from '../audit/service';
import type { DecisionService } from '../decision/service';
import type { ScoreCaller } from '../score/service';
import { httpInsurer, simulateInsurer, type InsurerAnswer, type InsurerRequest } from './adapters';
import type { SubmissionView, SubmitBody } from './model';

type Row = AppContext['database']['t']['insuranceSubmissions']['$inferSelect'];

/** Buyer-limit requests to a credit insurer: the sandbox simulates one from the scoring fixtures; live goes to the configured insurer. */
export class InsuranceService {
  constructor(
    private readonly ctx: AppContext,
    private readonly decisions: DecisionService,
    private readonly audit: AuditTrail,
  ) {}

  async submit(caller: ScoreCaller, body: SubmitBody): Promise<SubmissionView> {
    // the request's problems (the seller being the buyer among them) were all listed by the route (submitProblems)
    const live = caller.env === 'live';
    const insurer = live ? (this.ctx.config.insurer ? httpInsurer(this.ctx.config.insurer) : null) : null;
    if (live && !insurer) throw new ApiError('insurer_not_configured', 'No credit insurer is configured for live submissions (INSURER_URL); the sandbox simulates one.');
    const id = `ins_${Bun.randomUUIDv7()}`;
    const req: InsurerRequest = {
      submission_id: id,
      buyer_nif: body.buyer_nif,
      seller_nif: body.seller_nif ?? null,
      requested_limit_cents: body.requested_limit_cents,
      currency: 'EUR',
      payment_terms_days: body.terms.payment_terms_days,
      operation_type: body.terms.operation_type ?? 'trade_credit',
    };
    const now = this.ctx.clock.now();
    let answer: InsurerAnswer;
    if (insurer) answer = await insurer.submit(req, now.toISOString().slice(0, 10));
    else {
      // the sandbox insurer looks at the buyer's score under the default policy (fixtures: 404 and 422 as the score's)
      answer = simulateInsurer(req, await this.decisions.buyerForInsurer(caller, body.buyer_nif, body.terms.payment_terms_days), now.toISOString().slice(0, 10));
    }
    const insurerName = insurer?.name ?? 'sandbox';
    const data = { seller_nif: req.seller_nif, terms: { payment_terms_days: req.payment_terms_days, operation_type: req.operation_type }, insurer_reference: answer.insurer_reference, reasons: answer.reasons, valid_until: answer.valid_until, synthetic: !live, customer_reference: body.customer_reference ?? null };
    const actor = { tenantId: caller.tenantId, env: caller.env, keyId: caller.keyId, requestId: caller.requestId };
    const [row] = await this.ctx.database.withTx(async (tx) => {
      const inserted = await tx
        .insert(this.ctx.database.t.insuranceSubmissions)
        .values({ id, tenantId: caller.tenantId, env: caller.env, buyerNif: body.buyer_nif, status: answer.status, requestedCents: body.requested_limit_cents, grantedCents: answer.granted_limit_cents, insurer: insurerName, data, createdAt: now, decidedAt: answer.status === 'pending' ? null : now })
        .returning();
      await this.audit.append(tx, actor, id, 'insurance.submitted', { buyer_nif: body.buyer_nif, requested_limit_cents: body.requested_limit_cents, terms: data.terms, insurer: insurerName });
      if (answer.status !== 'pending') await this.audit.append(tx, actor, id, 'insurance.decided', { status: answer.status, granted_limit_cents: answer.granted_limit_cents, insurer_reference: answer.insurer_reference, reasons: answer.reasons });
      return inserted;
    });
    this.ctx.usage.record({ tenantId: caller.tenantId, apiKeyId: caller.keyId, env: caller.env, requestId: caller.requestId, meter: 'insurance_submit' });
    return this.view(row!);
  }

  view(r: Row): SubmissionView {
    const d = r.data as { seller_nif: string | null; terms: { payment_terms_days: number; operation_type: string }; insurer_reference: string; reasons: string[]; valid_until: string | null; synthetic: boolean; customer_reference: string | null };
    return {
      submission_id: r.id,
      buyer_nif: r.buyerNif,
      seller_nif: d.seller_nif,
      status: r.status as SubmissionView['status'],
      requested_limit_cents: Number(r.requestedCents),
      granted_limit_cents: r.grantedCents === null ? null : Number(r.grantedCents),
      currency: 'EUR',
      terms: d.terms,
      insurer: r.insurer,
      insurer_reference: d.insurer_reference,
      reasons: d.reasons,
      valid_until: d.valid_until,
      synthetic: d.synthetic,
      customer_reference: d.customer_reference,
      created_at: r.createdAt.toISOString(),
      decided_at: r.decidedAt ? r.decidedAt.toISOString() : null,
    };
  }

  async get(caller: { tenantId: string; env: string }, id: string) {
    const s = this.ctx.database.t.insuranceSubmissions;
    const [row] = await this.ctx.database.db.select().from(s).where(and(eq(s.tenantId, caller.tenantId), eq(s.env, caller.env), eq(s.id, id))).limit(1);
    if (!row) throw new ApiError('resource_not_found', `No insurance submission ${id} for this tenant in this environment.`);
    return this.view(row);
  }

  async list(caller: { tenantId: string; env: string }, q: { buyer_nif?: string; status?: string; limit?: number; cursor?: string }) {
    const s = this.ctx.database.t.insuranceSubmissions;
    const limit = q.limit ?? 50;
    const conds = [eq(s.tenantId, caller.tenantId), eq(s.env, caller.env)];
    if (q.buyer_nif) conds.push(eq(s.buyerNif, q.buyer_nif));
    if (q.status) conds.push(eq(s.status, q.status));
    if (q.cursor) conds.push(lt(s.id, q.cursor));
    const rows = await this.ctx.database.db.select().from(s).where(and(...conds)).orderBy(desc(s.id)).limit(limit + 1);
    return pageOf(rows, limit, (r) => this.view(r), (r) => r.id);
  }
}
