import { Elysia } from 'elysia';
import { PageLimit } from '../../lib/schemas';
import type { AppContext } from '../../context';
import { authed } from '../../plugins/auth';
import { routeDocs } from '../../lib/api-doc';
import { fieldProblems } from '../../lib/errors';
import { closedBody } from '../../lib/request-problems';
import type { AuditTrail } from '../audit/service';
import type { DecisionService } from '../decision/service';
import {
  PayableActionBody, PayableActionParams, PayableList, PayableListQuery, PayableParams, PayablesRequest, PayableView, ProgrammeList, ProgrammeParams, ProgrammeRequest,
  ProgrammeView, SupplierRequest, SupplierView,
} from './model';
import { ConfirmingService } from './service';
import { t } from 'elysia';

export { ConfirmingService } from './service';
export const CONFIRMING_DEFAULT_SWEEP = 'confirming.defaults';
export const confirmingService = (ctx: AppContext, decisions: DecisionService, audit: AuditTrail) => new ConfirmingService(ctx, decisions, audit);

/** Confirming programmes, suppliers and payables (scope `finance`). */
export function confirmingRoutes(ctx: AppContext, service: ConfirmingService) {
  const doc = routeDocs('finance');
  return new Elysia({ name: 'confirming' })
    .use(authed(ctx, 'finance'))
    .post(
      '/v1/confirming/anchor',
      async ({ auth, body, set }) => {
        const r = await service.createProgramme(auth, body);
        set.status = 201;
        set.headers.location = `/v1/confirming/anchor/${r.programme_id}`;
        return r;
      },
      {
        transform: closedBody(ProgrammeRequest),
        body: ProgrammeRequest,
        response: { 201: ProgrammeView },
        detail: doc(
          'Create a confirming (reverse factoring) programme for an anchor buyer',
          'createConfirmingProgramme',
          ['invalid_nif', 'company_not_found', 'limit_exceeded', 'live_tier_not_available', 'upstream_unavailable'],
          'The anchor gets a credit decision (operation_type confirming, the programme limit over its payment terms): the programme limit must be within the decision\u2019s limit (else 409 limit_exceeded), and the decision\u2019s spread over the base rate prices every early payment. Then: suppliers (POST …/suppliers), approved payables (POST …/payables) with their offers, accepted by suppliers in the portal (GET /v1/supplier-portal/embed) or by the API, funded, settled. docs/confirming.md.',
          { programme: { summary: 'A tier A anchor, €500,000 at 90 days, embeddable on one site', value: { anchor_nif: '599000015', anchor_name: 'Distribuidora Alfa, S.A.', limit_cents: 50_000_000, payment_terms_days: 90, frame_ancestors: ['https://fornecedores.alfa.pt'] } } },
          { created: 'The programme' },
        ),
      },
    )
    .get('/v1/confirming/anchor/:id', ({ auth, params }) => service.getProgramme(auth, params.id), {
      params: ProgrammeParams,
      response: { 200: ProgrammeView },
      detail: doc('A programme with its limit in use', 'getConfirmingProgramme', ['resource_not_found']),
    })
    .get('/v1/confirming/anchors', ({ auth, query }) => service.listProgrammes(auth, query), {
      query: t.Object({ limit: PageLimit, cursor: t.Optional(t.String({ pattern: '^cfp_[0-9a-f-]{36}$' })) }),
      response: { 200: ProgrammeList },
      detail: doc('Confirming programmes, newest first', 'listConfirmingProgrammes'),
    })
    .post(
      '/v1/confirming/anchor/:id/suppliers',
      async ({ auth, params, body, set }) => {
        set.status = 201;
        return service.addSupplier(auth, params.id, body);
      },
      {
        params: ProgrammeParams,
        transform: closedBody(SupplierRequest),
        body: SupplierRequest,
        response: { 201: SupplierView },
        detail: doc('Onboard a supplier (its IBAN checked)', 'addConfirmingSupplier', ['resource_not_found', 'invalid_nif', 'invalid_iban', 'already_exists']),
      },
    )
    .get('/v1/confirming/anchor/:id/suppliers', ({ auth, params }) => service.suppliers(auth, params.id), {
      params: ProgrammeParams,
      response: { 200: t.Object({ data: t.Array(SupplierView) }) },
      detail: doc('The programme\u2019s suppliers', 'listConfirmingSuppliers', ['resource_not_found']),
    })
    .post(
      '/v1/confirming/anchor/:id/payables',
      async ({ auth, params, body, set }) => {
        set.status = 201;
        return service.uploadPayables(auth, params.id, body);
      },
      {
        params: ProgrammeParams,
        // every problem at once, the schema's and the payables' own (after the key, before Elysia's own validation)
        async transform({ auth, params, body }) {
          const fields = await service.uploadProblems(auth, params.id, body);
          if (fields.length) throw fieldProblems(fields, 'Some payables cannot be uploaded; see fields.');
        },
        body: PayablesRequest,
        response: { 201: t.Object({ data: t.Array(PayableView) }) },
        detail: doc(
          'Upload approved payables (up to 500, all or nothing): each gets its early-payment offer',
          'uploadConfirmingPayables',
          ['resource_not_found', 'limit_exceeded', 'invoice_already_assigned', 'already_exists', 'invalid_nif'],
          'The anchor\u2019s approved invoices of onboarded suppliers, due after today and within the programme\u2019s payment terms (plus 30 days) of their issue; a number the programme already has is 409 already_exists. Their total with the payables in use must fit the programme limit (409 limit_exceeded); an invoice already held by a live factoring operation or payable is 409 invoice_already_assigned. Offer: amount \u00d7 (base rate + the programme\u2019s spread) \u00d7 days to due date / 360, recomputed each day until accepted.',
        ),
      },
    )
    .get('/v1/confirming/anchor/:id/payables', ({ auth, params, query }) => service.listPayables(auth, params.id, query), {
      params: ProgrammeParams,
      query: PayableListQuery,
      response: { 200: PayableList },
      detail: doc('The programme\u2019s payables, newest first, by status or supplier', 'listConfirmingPayables', ['resource_not_found']),
    })
    .get('/v1/confirming/payables/:id', ({ auth, params }) => service.getPayable(auth, params.id), {
      params: PayableParams,
      response: { 200: PayableView },
      detail: doc('One payable: its offer or the accepted one, and its history', 'getConfirmingPayable', ['resource_not_found']),
    })
    .post('/v1/confirming/payables/:id/:action', async ({ auth, params, body }) => (await service.transition(auth, params.id, params.action, { reason: body?.reason, by: 'api' }))!, {
      params: PayableActionParams,
      transform: closedBody(PayableActionBody),
      body: PayableActionBody,
      response: { 200: PayableView },
      detail: doc(
        'Move a payable: accept (the supplier takes the offer), fund, settle, default, write_off, cancel',
        'transitionConfirmingPayable',
        ['resource_not_found', 'invalid_transition'],
        'approved \u2192 accepted | settled (paid at maturity) | cancelled; accepted \u2192 funded | cancelled; funded \u2192 settled | defaulted; defaulted \u2192 settled (the anchor paid after all) | written_off (the loss taken: the programme\u2019s limit and the invoice are released). Anything else is 409 invalid_transition. cancel, default and write_off need a reason. Events settlement.completed and default.flagged; each step in the payable\u2019s and the programme\u2019s audit trails.',
      ),
    });
}
