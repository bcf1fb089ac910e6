import { Elysia, t } from 'elysia';
import type { AppContext } from '../../context';
import { authed } from '../../plugins/auth';
import { langOf, localised } from '../../plugins/request-state';
import { apiDoc } from '../../lib/api-doc';
import { ApiError } from '../../lib/errors';
import { adaptersFromEnv } from './adapters';
import { FixturesResponse, ScoreBatchRequest, ScoreBatchResponse, ScoreRequest, ScoreResponse } from './model';
import { ScoreService } from './service';
import type { RescoreService } from './rescore';
import { Int } from '../../lib/schemas';

export function scoreService(ctx: AppContext) {
  const base = ctx.config.publicBaseUrl ?? `http://localhost:${ctx.config.port}`;
  return new ScoreService(ctx.database, ctx.usage, () => ctx.clock.now(), ctx.liveAdapters ?? adaptersFromEnv(ctx.config.adapters), ctx.config.roadmapUrl ?? `${base}/roadmap`, (tenantId) => ctx.generations?.inputs(tenantId));
}

export function scoreRoutes(ctx: AppContext, service: ScoreService, rescore: RescoreService) {
  return new Elysia({ name: 'score' })
    .use(authed(ctx, 'score'))
    .post(
      '/v1/score',
      ({ auth, body, headers, set }) =>
        service.score({ tenantId: auth.tenantId, keyId: auth.keyId, env: auth.env, requestId: auth.requestId, scoreGeneration: auth.scoreGeneration }, body, localised(set, langOf(headers))),
      {
        body: ScoreRequest,
        response: { 200: ScoreResponse },
        detail: apiDoc({
          summary: 'Credit-worthiness score of a company by NIF',
          description:
            'Sandbox keys score fixture companies (GET /v1/sandbox/fixtures); live keys compose a credit bureau, the central credit register and the tax authority. Reasons are in English, or Portuguese with Accept-Language: pt-PT.',
          tag: 'score',
          security: 'BearerAuth',
          operationId: 'score',
          errors: ['invalid_nif', 'company_not_found', 'live_tier_not_available', 'upstream_unavailable'],
          localised: true,
        }),
      },
    )
    .post(
      '/v1/score/batch',
      ({ auth, body, headers, set }) =>
        service.scoreBatch({ tenantId: auth.tenantId, keyId: auth.keyId, env: auth.env, requestId: auth.requestId, scoreGeneration: auth.scoreGeneration }, body.items, body.refresh ?? 'cached_ok', localised(set, langOf(headers))),
      {
        body: ScoreBatchRequest,
        response: { 200: ScoreBatchResponse },
        detail: apiDoc({
          summary: 'Score a portfolio: up to 1,000 NIFs in one call, each item\u2019s result or error in order',
          description:
            'Each item is scored exactly as POST /v1/score would (the 24 h cache with cached_ok, fixtures in the sandbox), and answered in request order with its status: 200 and the result, or the status and code POST /v1/score would have given it (422 validation_failed for a NIF not of 9 digits, 422 invalid_nif, 404 company_not_found). With cached_ok a NIF met again in the batch is answered from its first item (cache: cached), as a second POST /v1/score would be. New results are stored in one transaction; one usage line (meter score) per scored item. Safe to retry with an Idempotency-Key. An outage of a data source fails the whole call (503), nothing billed.',
          tag: 'score',
          security: 'BearerAuth',
          operationId: 'scoreBatch',
          errors: ['live_tier_not_available', 'upstream_unavailable'],
          localised: true,
          examples: { portfolio: { summary: 'Three sandbox NIFs, one unknown', value: { items: [{ nif: '599000015', customer_reference: 'loan-1' }, { nif: '599000031' }, { nif: '599000074' }], refresh: 'force_refresh' } } },
        }),
      },
    )
    .get(
      '/v1/sandbox/fixtures',
      ({ auth }) => {
        if (auth.env !== 'sandbox') throw new ApiError('sandbox_only', 'Fixtures exist only in the sandbox; use an sk_test_ key.');
        return { fixtures: service.fixtures() };
      },
      {
        response: { 200: FixturesResponse },
        detail: apiDoc({ summary: 'Sandbox fixture companies and their outcomes', tag: 'sandbox', security: 'BearerAuth', operationId: 'listFixtures', errors: ['sandbox_only'] }),
      },
    )
    .post(
      '/v1/sandbox/rescore',
      async ({ auth }) => {
        if (auth.env !== 'sandbox') throw new ApiError('sandbox_only', 'Re-scoring on demand exists only in the sandbox; use an sk_test_ key.');
        return rescore.rescoreTenant(auth.tenantId, 'sandbox');
      },
      {
        response: {
          200: t.Object({
            rescored: Int({ description: 'Companies re-scored (those scored in the last 90 days)' }),
            events: t.Array(t.Object({ id: t.String(), type: t.String(), nif: t.String() })),
          }),
        },
        detail: apiDoc({
          summary: "Run the tenant's nightly re-score now (sandbox)",
          description: 'Re-scores every company this tenant scored in the sandbox in the last 90 days, emitting score.updated and deterioration.alert events as the nightly job does.',
          tag: 'sandbox',
          security: 'BearerAuth',
          operationId: 'sandboxRescore',
          errors: ['sandbox_only'],
        }),
      },
    );
}
