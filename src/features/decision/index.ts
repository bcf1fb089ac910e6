import { Elysia } from 'elysia';
import { publicBaseUrl } from '../../config';
import type { AppContext } from '../../context';
import { authed, jsonAnswer, scoreGenerationNow } from '../../plugins/auth';
import { langOf, localised, requestState } from '../../plugins/request-state';
import { routeDocs } from '../../lib/api-doc';
import { isJsonObject, unknownFields, validationError } from '../../lib/errors';
import { isWholeCents, WHOLE_CENTS, wholeCents } from '../../lib/schemas';
import { MODALITIES } from './policy';
import { actorOf, AdminService } from '../admin/service';
import type { ScoreService } from '../score/service';
import {
  CreditLimitParams, CreditLimitQuery, CreditLimitResponse, DecisionIdParams, DecisionList, DecisionListQuery, DecisionRequest,
  DecisionResponse, PolicyPatch, PolicyResponse, SectorRiskParams, SectorRiskResponse, SpreadsQuery, SpreadsResponse,
} from './model';
import { DecisionService } from './service';

const SCORE_ERRORS = ['invalid_nif', 'company_not_found', 'live_tier_not_available', 'upstream_unavailable'] as const;

export function decisionService(ctx: AppContext, scores: ScoreService) {
  const base = publicBaseUrl(ctx.config);
  return new DecisionService(ctx.database, scores, ctx.usage, () => ctx.clock.now(), ctx.config.baseRate, base, (tenantId) => scoreGenerationNow(ctx, tenantId));
}

const NOT_A_CONTEXT_FIELD = `is not a field of context (${Object.keys(DecisionRequest.properties.context.properties).join(', ')}): a misspelt one would change the decision without a word`;

/** Credit decisions, limits, the spreads index and sector risk (scope `score`); the tenant's credit policy (scope `policy:manage`). */
export function decisionRoutes(ctx: AppContext, service: DecisionService) {
  const doc = routeDocs('decisions');
  const admin = new AdminService(ctx.database, ctx.tenants, () => ctx.clock.now());

  const credit = new Elysia({ name: 'decisions' })
    .use(authed(ctx, 'score'))
    .post('/v1/decision', async ({ auth, body, set, headers, request }) => {
      // unknown fields are ignored elsewhere, but not in the operation's context: a misspelt
      // insurance_submission_id would be dropped and the decision priced without the cover (as a
      // misspelt ESG answer would score 0)
      const sent = requestState(request).parsedBody;
      const context = isJsonObject(sent) && isJsonObject(sent.context) ? sent.context : {};
      const contextFields = DecisionRequest.properties.context.properties;
      const stray = Object.keys(context).filter((k) => !Object.hasOwn(contextFields, k)).slice(0, 50);
      // and one of context's fields sent beside it, not in it (an insurance id at the top level)
      const misplaced = isJsonObject(sent) ? Object.keys(sent).filter((k) => Object.hasOwn(contextFields, k)) : [];
      if (stray.length || misplaced.length)
        throw validationError([
          ...stray.map((k) => ({ path: `context.${k}`, message: NOT_A_CONTEXT_FIELD })),
          ...misplaced.map((k) => ({ path: k, message: `belongs inside context (context.${k})` })),
          ...unknownFields(sent, DecisionRequest.properties).filter((f) => !misplaced.includes(f.path)),
        ]);
      return jsonAnswer((await service.decide(auth, body, performance.now(), localised(set, langOf(headers)))).text, set.headers);
    }, {
      body: DecisionRequest,
      response: { 200: DecisionResponse },
      detail: doc(
        'Credit decision: approve, how much, at what spread and modality',
        'decide',
        [...SCORE_ERRORS, 'unsupported_country'],
        'One answer a lender can act on: notched tier, limit, spread and modality from the tenant\'s credit policy (GET /v1/admin/credit-policy), the drivers as signals and the basis lines (in English, or Portuguese with Accept-Language: pt-PT), and the tenant\'s own ERP books about the company when it has synced them. Stored as answered (GET /v1/decisions). Formulas and a worked example: /docs/credit-policy.',
        {
          approved_factoring: { summary: 'Sandbox tier B fixture, factoring €150 000 over 90 days: approved, limit €231 000, 135 bps', value: { nif: '599000023', context: { operation_type: 'factoring', amount_eur: 150000, expected_term_days: 90 }, customer_reference: 'deal-2026-118' } },
          declined_distressed: { summary: 'Sandbox tier E fixture: declined, limit 0', value: { nif: '599000058', context: { operation_type: 'trade_credit', amount_eur: 5000, expected_term_days: 60 } } },
          other_country: { summary: 'A Spanish company: 422 unsupported_country', value: { nif: '599000023', country: 'ES', context: { operation_type: 'credit_line', amount_eur: 20000, expected_term_days: 360 } } },
        },
        { localised: true },
      ),
    })
    .get('/v1/decisions', ({ auth, query }) => service.list(auth, query), {
      query: DecisionListQuery,
      response: { 200: DecisionList },
      detail: doc('Past decisions, newest first (optionally of one NIF)', 'listDecisions'),
    })
    .get('/v1/decisions/:id', async ({ auth, params, set }) => {
      const decision = await service.get(auth, params.id);
      if (decision.language) set.headers['content-language'] = decision.language; // the stored decision's, whatever the reader's Accept-Language
      return decision;
    }, {
      params: DecisionIdParams,
      response: { 200: DecisionResponse },
      detail: doc('One stored decision', 'getDecision', ['resource_not_found']),
    })
    .get('/v1/credit-limit/:buyer_nif', ({ auth, params, query, headers, set }) => service.creditLimit(auth, params.buyer_nif, query.term_days ?? 60, query.refresh ?? 'cached_ok', localised(set, langOf(headers))), {
      params: CreditLimitParams,
      query: CreditLimitQuery,
      response: { 200: CreditLimitResponse },
      detail: doc('Trade-credit limit for a buyer', 'creditLimit', [...SCORE_ERRORS], 'What a supplier may safely sell this buyer on credit over term_days (default 60): the decision\'s limit policy, with the tenant\'s own payment experience of the buyer when its ERP books hold it; the basis lines in English, or Portuguese with Accept-Language: pt-PT.', undefined, { localised: true }),
    })
    .get('/v1/index/spreads', ({ auth, query, headers, set }) => service.spreads(auth, query, localised(set, langOf(headers))), {
      query: SpreadsQuery,
      response: { 200: SpreadsResponse },
      detail: doc('The spreads index decisions price from', 'spreadsIndex', [], 'Every notched tier × term bucket (30, 60, 90, 180, 360 days) × modality, under this tenant\'s credit policy. Never lower for a worse tier or a longer term. The methodology in English, or Portuguese with Accept-Language: pt-PT.', undefined, { localised: true }),
    })
    .get('/v1/sector-risk/:naics', ({ auth, params, headers, set }) => service.sectorRisk(auth, params.naics, localised(set, langOf(headers))), {
      params: SectorRiskParams,
      response: { 200: SectorRiskResponse },
      detail: doc('Risk of a sector by NAICS code', 'sectorRisk', ['sector_not_found'], 'NAICS (2–6 digits) → NACE Rev. 2, one-year default and overdue rates, risk level, and how many companies this tenant scored in that sector. Titles and sources in English, or European Portuguese with Accept-Language: pt-PT (the NACE section as CAE Rev. 3 names it). Table and sources: /docs/sector-risk.', undefined, { localised: true }),
    });

  const adminDoc = routeDocs('decisions', 'bearerAuth'); // an admin endpoint (spec §5.3)
  const policy = new Elysia({ name: 'credit-policy' })
    .use(authed(ctx, 'policy:manage'))
    .get('/v1/admin/credit-policy', async ({ auth }) => service.policyView(await service.policy(auth)), {
      response: { 200: PolicyResponse },
      detail: adminDoc('This tenant\'s credit policy in the key\'s environment', 'getCreditPolicy'),
    })
    .patch(
      '/v1/admin/credit-policy',
      ({ auth, body }) => {
        if (Object.keys(body).length === 0 || (body.lgd && Object.keys(body.lgd).length === 0 && Object.keys(body).length === 1))
          throw validationError([{ path: '(body)', message: 'must set at least one of: min_tier, max_amount_eur, lgd, margin_bps' }]);
        if (body.max_amount_eur !== undefined && !isWholeCents(body.max_amount_eur)) throw validationError([{ path: 'max_amount_eur', message: WHOLE_CENTS }]);
        return service.updatePolicy({ ...actorOf(auth), env: auth.env }, body.max_amount_eur === undefined ? body : { ...body, max_amount_eur: wholeCents(body.max_amount_eur) }, admin);
      },
      {
        // a setting misspelt would be dropped by the normalisation while the rest is saved (200):
        // a change of policy names only what it has
        transform({ body }) {
          if (!isJsonObject(body)) return;
          const unknown = Object.keys(body).filter((k) => !Object.hasOwn(PolicyPatch.properties, k)).map((k) => ({ path: k, message: `is not a setting of the credit policy (${Object.keys(PolicyPatch.properties).join(', ')})` }));
          if (isJsonObject(body.lgd)) for (const k of Object.keys(body.lgd)) if (!(MODALITIES as readonly string[]).includes(k)) unknown.push({ path: `lgd.${k}`, message: `is not a modality (${MODALITIES.join(', ')})` });
          if (unknown.length) throw validationError(unknown);
        },
        body: PolicyPatch,
        response: { 200: PolicyResponse },
        detail: adminDoc('Change the credit policy (appetite, maximum per company, LGD by modality, margin)', 'updateCreditPolicy', [], 'Applies to this key\'s environment only; audited as credit_policy.updated.', {
          stricter: { summary: 'Approve down to C- only, higher LGD without recourse, 80 bps margin', value: { min_tier: 'C-', lgd: { non_recourse: 0.5 }, margin_bps: 80 } },
        }),
      },
    );

  return new Elysia({ name: 'decision-feature' }).use(credit).use(policy);
}
