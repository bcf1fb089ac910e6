import { Elysia } from 'elysia';
import type { AppContext } from '../../context';
import { authed } from '../../plugins/auth';
import { langOf } from '../../plugins/request-state';
import { apiDoc } from '../../lib/api-doc';
import { ApiError } from '../../lib/errors';
import { adaptersFromEnv } from './adapters';
import { FixturesResponse, ScoreRequest, ScoreResponse } from './model';
import { ScoreService } from './service';

export function scoreService(ctx: AppContext) {
  const base = ctx.config.publicBaseUrl ?? `http://localhost:${ctx.config.port}`;
  return new ScoreService(ctx.database, ctx.usage, () => ctx.clock.now(), ctx.liveAdapters ?? adaptersFromEnv(ctx.config.adapters), ctx.config.roadmapUrl ?? `${base}/roadmap`);
}

export function scoreRoutes(ctx: AppContext, service: ScoreService) {
  return new Elysia({ name: 'score' })
    .use(authed(ctx, 'score'))
    .post(
      '/v1/score',
      ({ auth, body, headers }) => service.score({ tenantId: auth.tenantId, keyId: auth.keyId, env: auth.env, requestId: auth.requestId }, body, langOf(headers)),
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
    );
}
