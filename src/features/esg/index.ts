import { Elysia, t } from 'elysia';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { jsonFastPath } from '../../plugins/fast-path';
import type { AppContext } from '../../context';
import { authed } from '../../plugins/auth';
import { langOf, localised } from '../../plugins/request-state';
import { apiDoc } from '../../lib/api-doc';
import { ApiError, fieldProblems } from '../../lib/errors';
import { EsgAssessment, EsgAssessmentList, EsgAssessmentListQuery, EsgAssessmentParams, EsgRequest, EsgResponse, ESG_OPENAPI_EXAMPLES, Questionnaire, validateEsgBody } from './model';
import { INDICATORS, SECTORS, type AnswerValue } from './questionnaire';
import { EsgAssessments, EsgService } from './service';
import { esgAnswerBody } from './answer-json';
import type { Recommendation } from './engine';

export const esgService = (ctx: AppContext) => new EsgService(ctx.database, ctx.usage, () => ctx.clock.now());

type EsgAnswer = { recommendations: Recommendation[] };
type EsgBody = { nif: string; sector: string; answers: Record<string, AnswerValue>; customer_reference?: string };

/**
 * POST /v1/esg (and its catalog alias) without Elysia's per-request lifecycle
 * (plugins/fast-path.ts): the plain case of a body that passes the whole validation; any other
 * body goes to the Elysia route, which reports every bad field.
 */
export function esgFastPath(ctx: AppContext, service: EsgService, route: '/v1/esg' | '/v1/esg-score') {
  // compiled from a copy: Elysia marks the route's own schema object when it compiles the route.
  // Unknown top-level fields go to the Elysia route, which strips them. The answers are checked by
  // validateEsgBody alone, which accepts nothing the route's answers schema refuses (tested; it is
  // stricter on the one if/then rule TypeBox does not check): compiled, that schema hashes every
  // item of a list answer for uniqueItems (~7 % of a request)
  const body = TypeCompiler.Compile(t.Object({ ...EsgRequest.properties, answers: t.Object({}) }, { additionalProperties: false }));
  const response = TypeCompiler.Compile(EsgResponse);
  return jsonFastPath<EsgBody, object>(ctx, {
    route,
    scope: 'esg',
    // the NIF's check digit is in the schema (format nif)
    accept: (input) => (body.Check(input) && !validateEsgBody(input).length ? (input as EsgBody) : null),
    answer: (caller, b, lang) => service.assess(caller, b, lang),
    serialise(result) {
      if (!response.Check(result)) throw new Error('ESG response does not match its schema');
      return esgAnswerBody(result as EsgAnswer);
    },
  });
}

export function esgRoutes(ctx: AppContext, service: EsgService) {
  const assessments = new EsgAssessments(ctx.database);
  const assess = {
    // Elysia strips unknown keys instead of rejecting them: validate the whole body here first
    // (after auth, before Elysia's own validation) so every bad field is reported at once.
    transform({ body }: { body: unknown }) {
      // the NIF's check digit is one of the fields (its format): invalid_nif when it is the only problem
      const fields = validateEsgBody(body);
      if (fields.length) throw fieldProblems(fields);
    },
    body: EsgRequest,
    response: { 200: EsgResponse },
  };
  const handler = ({
    auth,
    body,
    headers,
    set,
  }: {
    auth: { tenantId: string; keyId: string; env: 'sandbox' | 'live'; requestId: string };
    body: unknown;
    headers: Record<string, string | undefined>;
    set: { headers: Record<string, unknown> };
  }) =>
    service.assess(
      { tenantId: auth.tenantId, keyId: auth.keyId, env: auth.env, requestId: auth.requestId },
      body as { nif: string; sector: string; answers: Record<string, AnswerValue>; customer_reference?: string },
      localised(set, langOf(headers)),
    );
  const doc = (operationId: string, summary: string) => ({
    ...apiDoc({
      summary,
      description:
        'Scores the answers to the published questionnaire (GET /v1/esg/questionnaire) against EFRAG VSME: pillars, overall, tier, alignment (0–27), SDGs and prioritised recommendations (English, or Portuguese with Accept-Language: pt-PT).',
      tag: 'esg',
      security: 'BearerAuth',
      operationId,
      errors: ['invalid_nif'],
      localised: true,
    }),
    'x-examples': ESG_OPENAPI_EXAMPLES,
  });
  return new Elysia({ name: 'esg' })
    .use(authed(ctx, 'esg'))
    .post('/v1/esg', handler, { ...assess, detail: doc('assessEsg', 'ESG assessment of an SME (EFRAG VSME)') })
    .post('/v1/esg-score', handler, { ...assess, detail: doc('assessEsgScore', 'ESG assessment under its catalog name (same operation as POST /v1/esg)') })
    .get('/v1/esg/questionnaire', () => ({ sectors: [...SECTORS], indicators: INDICATORS.map((i) => ({ ...i, sdgs: [...i.sdgs] })) }), {
      response: { 200: Questionnaire },
      detail: apiDoc({ summary: 'The ESG questionnaire: sectors and the 27 indicators', tag: 'esg', security: 'BearerAuth', operationId: 'getEsgQuestionnaire' }),
    })
    .get('/v1/esg/assessments', ({ auth, query, headers, set }) => assessments.list(auth, query, localised(set, langOf(headers))), {
      query: EsgAssessmentListQuery,
      response: { 200: EsgAssessmentList },
      detail: apiDoc({
        summary: 'Stored ESG assessments of a NIF, newest first',
        description: 'Each as POST /v1/esg answered it, with the NIF, sector and answers assessed; recommendations in English, or Portuguese with Accept-Language: pt-PT. Not billed.',
        tag: 'esg',
        security: 'BearerAuth',
        operationId: 'listEsgAssessments',
        localised: true,
      }),
    })
    .get('/v1/esg/assessments/:id', ({ auth, params, headers, set }) => assessments.get(auth, params.id, localised(set, langOf(headers))), {
      params: EsgAssessmentParams,
      response: { 200: EsgAssessment },
      detail: apiDoc({ summary: 'One stored ESG assessment', tag: 'esg', security: 'BearerAuth', operationId: 'getEsgAssessment', errors: ['resource_not_found'], localised: true }),
    });
}
