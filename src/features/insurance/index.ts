import { Elysia } from 'elysia';
import type { AppContext } from '../../context';
import { authed } from '../../plugins/auth';
import { routeDocs } from '../../lib/api-doc';
import { fieldProblems } from '../../lib/errors';
import type { AuditTrail } from '../audit/service';
import type { DecisionService } from '../decision/service';
import { Submission, SubmissionList, SubmissionParams, SubmissionQuery, SubmitRequest, submitProblems } from './model';
import { InsuranceService } from './service';

export { InsuranceService } from './service';

/** POST /v1/insurance/submit and the stored submissions (scope `finance`). */
export function insuranceRoutes(ctx: AppContext, service: InsuranceService) {
  const doc = routeDocs('finance');
  return new Elysia({ name: 'insurance' })
    .use(authed(ctx, 'finance'))
    .post(
      '/v1/insurance/submit',
      async ({ auth, body, set }) => {
        const r = await service.submit(auth, body);
        set.status = 201;
        set.headers.location = `/v1/insurance/submissions/${r.submission_id}`;
        return r;
      },
      {
        // every problem at once, the schema's and the seller being the buyer, in one 422 (alone, a
        // NIF failing its check digit is invalid_nif), before anything is asked or stored
        transform({ body }) {
          const fields = submitProblems(body);
          if (fields.length) throw fieldProblems(fields);
        },
        body: SubmitRequest,
        response: { 201: Submission },
        detail: doc(
          'Ask a credit insurer for a limit on a buyer',
          'insuranceSubmit',
          ['invalid_nif', 'company_not_found', 'insurer_not_configured', 'upstream_unavailable'],
          'The buyer, the limit asked and the terms go to the credit insurer (live: the one configured with INSURER_URL, else 503 insurer_not_configured; sandbox: a simulated insurer deciding from the scoring fixtures — full, partial or refused, docs/insurance.md). Stored with its answer (GET /v1/insurance/submissions/{id}) and an audit trail; a decision can refer to it (context.insurance_submission_id: modality with_insurance).',
          {
            full: { summary: 'A tier A buyer, €150,000 at 60 days: full cover', value: { buyer_nif: '599000015', requested_limit_cents: 15_000_000, terms: { payment_terms_days: 60 } } },
            partial: { summary: 'A tier C buyer: half', value: { buyer_nif: '599000031', requested_limit_cents: 5_000_000, terms: { payment_terms_days: 90, operation_type: 'factoring' } } },
          },
          { created: 'The stored submission' },
        ),
      },
    )
    .get('/v1/insurance/submissions/:id', ({ auth, params }) => service.get(auth, params.id), {
      params: SubmissionParams,
      response: { 200: Submission },
      detail: doc('One submission and the insurer\u2019s answer', 'getInsuranceSubmission', ['resource_not_found']),
    })
    .get('/v1/insurance/submissions', ({ auth, query }) => service.list(auth, query), {
      query: SubmissionQuery,
      response: { 200: SubmissionList },
      detail: doc('Submissions, newest first, by buyer or status', 'listInsuranceSubmissions'),
    });
}

export const insuranceService = (ctx: AppContext, decisions: DecisionService, audit: AuditTrail) => new InsuranceService(ctx, decisions, audit);
