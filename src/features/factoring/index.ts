import { Elysia } from 'elysia';
import type { AppContext } from '../../context';
import { authed } from '../../plugins/auth';
import { routeDocs } from '../../lib/api-doc';
import { fieldProblems } from '../../lib/errors';
import { closedBody } from '../../lib/request-problems';
import type { AuditTrail } from '../audit/service';
import type { DecisionService } from '../decision/service';
import { CreateOperationRequest, OperationIdParams, OperationList, OperationListQuery, OperationResponse, TransitionBody, TransitionParams } from './model';
import { FactoringService } from './service';

export { FactoringService } from './service';
export const FACTORING_DEFAULT_SWEEP = 'factoring.defaults';

export const factoringService = (ctx: AppContext, decisions: DecisionService, audit: AuditTrail) => new FactoringService(ctx, decisions, audit);

const SCORE_ERRORS = ['invalid_nif', 'company_not_found', 'live_tier_not_available', 'upstream_unavailable'] as const;

/** Factoring operations (scope `finance`). */
export function factoringRoutes(ctx: AppContext, service: FactoringService) {
  const doc = routeDocs('finance');
  return new Elysia({ name: 'factoring' })
    .use(authed(ctx, 'finance'))
    .post(
      '/v1/factoring/operation',
      async ({ auth, body, set }) => {
        const op = await service.create(auth, body);
        set.status = 201;
        set.headers.location = `/v1/factoring/operation/${op.operation_id}`;
        ctx.usage.record({ tenantId: auth.tenantId, apiKeyId: auth.keyId, env: auth.env, requestId: auth.requestId, meter: 'factoring_operation' });
        return op;
      },
      {
        // every problem at once, the schema's and the invoices' (after the key, before Elysia's own validation)
        async transform({ body, auth }) {
          const fields = await service.createProblems(auth, body);
          if (fields.length) throw fieldProblems(fields, 'Some invoices cannot be assigned; see fields.');
        },
        body: CreateOperationRequest,
        response: { 201: OperationResponse },
        detail: doc(
          'Submit a factoring operation: the seller\u2019s invoices, a credit decision per debtor, the price',
          'createFactoringOperation',
          [...SCORE_ERRORS, 'invoice_already_assigned'],
          'The assignor (seller_nif), its invoices on one or more debtors (in full, or by number from the tenant\u2019s ERP or SAF-T data), modality and advance rate. Each debtor gets a credit decision (POST /v1/decision, operation_type factoring); the operation is approved at once when every debtor is approved within its limit counting the tenant\u2019s other live operations (the concentration limit), else it waits in submitted with the reasons. Pricing in integer cents: advance, discount fee (base rate + the debtor\u2019s spread, actual/360, to each due date), service fee, net to the seller, reserve. An invoice already held by a live operation or confirming programme is 409 invoice_already_assigned. docs/factoring.md.',
          {
            two_debtors: {
              summary: 'Two invoices on two sandbox debtors, with recourse: approved at once',
              value: {
                seller_nif: '599000031',
                seller_name: 'Metalomecânica Exemplo, Lda',
                modality: 'recourse',
                contract_reference: 'CF-2026-0042',
                invoices: [
                  { number: 'FT 2026/118', atcud: 'JJ4FGTXK-118', debtor_nif: '599000015', debtor_name: 'Distribuidora Alfa, S.A.', issue_date: '2026-11-02', due_date: '2027-01-31', amount_cents: 1845000 },
                  { number: 'FT 2026/121', debtor_nif: '599000023', issue_date: '2026-11-10', due_date: '2027-02-08', amount_cents: 950000 },
                ],
              },
            },
          },
          { created: 'The operation' },
        ),
      },
    )
    .get('/v1/factoring/operation/:id', ({ auth, params }) => service.get(auth, params.id), {
      params: OperationIdParams,
      response: { 200: OperationResponse },
      detail: doc('One factoring operation', 'getFactoringOperation', ['resource_not_found']),
    })
    .get('/v1/factoring/operations', ({ auth, query }) => service.list(auth, query), {
      query: OperationListQuery,
      response: { 200: OperationList },
      detail: doc('Factoring operations, newest first, by status, seller or debtor', 'listFactoringOperations'),
    })
    .post('/v1/factoring/operation/:id/:action', ({ auth, params, body }) => service.transition(auth, params.id, params.action, body ?? {}), {
      // a misspelt field (reson, collected) would be dropped and the transition made without it
      transform: closedBody(TransitionBody),
      params: TransitionParams,
      body: TransitionBody,
      response: { 200: OperationResponse },
      detail: doc(
        'Move an operation through its lifecycle: approve, reject, fund, settle, default, write_off, cancel',
        'transitionFactoringOperation',
        ['resource_not_found', 'invalid_transition'],
        'submitted \u2192 approved | rejected | cancelled; approved \u2192 funded | cancelled; funded \u2192 settled | defaulted; defaulted \u2192 settled (the debtors paid after all: a recovery) | written_off (the loss taken: the invoices and the debtor\u2019s exposure are released). Anything else is 409 invalid_transition naming the actions that apply. reject, cancel, default and write_off need a reason; settle takes collected_cents (default the face value). fund reprices from its own date. Events: operation.approved, settlement.completed, default.flagged. Each transition is in the audit trail (GET /v1/audit/{operation_id}).',
        {
          fund: { summary: 'fund (no body needed)', value: {} },
          settle_short: { summary: 'settle with a shortfall', value: { collected_cents: 2700000 } },
          reject: { summary: 'reject, with the reason', value: { reason: 'debtor disputes the invoices' } },
        },
      ),
    });
}
