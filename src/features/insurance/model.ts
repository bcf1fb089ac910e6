import { t } from 'elysia';
import { CustomerReference, Nif, Page, Int, PageLimit, refusesUnknownFieldsDeep } from '../../lib/schemas';
import type { FieldError } from '../../lib/errors';
import { RequestProblems } from '../../lib/request-problems';

// closed (refusesUnknownFields): a misspelt field of a cover request would be dropped and the cover asked without it
export const SubmitRequest = refusesUnknownFieldsDeep(t.Object({
  buyer_nif: Nif,
  seller_nif: t.Optional(Nif),
  requested_limit_cents: Int({ minimum: 100_000, maximum: 1e13, description: 'The credit limit asked on the buyer, euro cents (at least €1,000)' }),
  currency: t.Optional(t.Literal('EUR', { default: 'EUR' })),
  terms: t.Object({
    payment_terms_days: Int({ minimum: 1, maximum: 365 }),
    operation_type: t.Optional(t.Union([t.Literal('factoring'), t.Literal('confirming'), t.Literal('trade_credit')], { default: 'trade_credit' })),
  }),
  customer_reference: t.Optional(CustomerReference),
}));

const Status = t.Union([t.Literal('full'), t.Literal('partial'), t.Literal('refused'), t.Literal('pending')]);
export const Submission = t.Object({
  submission_id: t.String(),
  buyer_nif: t.String(),
  seller_nif: t.Union([t.String(), t.Null()]),
  status: Status,
  requested_limit_cents: Int(),
  granted_limit_cents: t.Union([Int(), t.Null()]),
  currency: t.Literal('EUR'),
  terms: t.Object({ payment_terms_days: Int(), operation_type: t.String() }),
  insurer: t.String(),
  insurer_reference: t.String(),
  reasons: t.Array(t.String()),
  valid_until: t.Union([t.String(), t.Null()]),
  synthetic: t.Boolean({ description: 'true in the sandbox (a simulated insurer)' }),
  customer_reference: t.Union([t.String(), t.Null()]),
  created_at: t.String({ format: 'date-time' }),
  decided_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
});
export const SubmissionList = Page(Submission);
export const SubmissionQuery = t.Object({
  buyer_nif: t.Optional(Nif),
  status: t.Optional(Status),
  limit: PageLimit,
  cursor: t.Optional(t.String({ pattern: '^ins_[0-9a-f-]{36}$' })),
});
export const SubmissionParams = t.Object({ id: t.String({ pattern: '^ins_[0-9a-f-]{36}$' }) });
export type SubmitBody = typeof SubmitRequest.static;

/**
 * Every problem of a submission at once (the route's `transform`, before Elysia's validation, as
 * the CSRD report and ESG do): the schema's, worded as every route's (a NIF's check digit among
 * them), and the seller being the buyer. One message per path, the schema's first.
 */
export function submitProblems(body: unknown): FieldError[] {
  const problems = new RequestProblems(SubmitRequest, body, { refuseUnknown: true });
  const b = problems.object;
  if (b && typeof b.seller_nif === 'string' && b.seller_nif === b.buyer_nif) problems.add({ path: 'seller_nif', message: 'is the buyer: a company does not insure its credit on itself' });
  return problems.done();
}
export type SubmissionView = typeof Submission.static;
