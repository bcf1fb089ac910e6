import { Elysia, t } from 'elysia';
import { publicBaseUrl } from '../../config';
import type { AppContext } from '../../context';
import { authed } from '../../plugins/auth';
import { apiDoc } from '../../lib/api-doc';
import { ApiError } from '../../lib/errors';
import { API_CATALOG } from './catalog';

export const CatalogResponse = t.Object({
  data: t.Array(
    t.Object({
      method: t.String(),
      path: t.String(),
      readiness: t.String({ description: 'The spec\u2019s label: live, beta, or roadmap with its date' }),
      served: t.Boolean({ description: 'whether this deployment serves it' }),
      served_as: t.Union([t.String(), t.Null()], { description: 'where, when served; for an entry routed only to say it is not available yet (501), what it answers' }),
    }),
  ),
  roadmap_url: t.String(),
});

/** GET /v1/catalog (any valid key) and the catalog's not-yet entries (501 with roadmap_url). */
export function catalogRoutes(ctx: AppContext) {
  const roadmapUrl = ctx.config.roadmapUrl ?? `${publicBaseUrl(ctx.config)}/roadmap`;
  return new Elysia({ name: 'catalog' })
    .use(authed(ctx, null))
    .get(
      '/v1/catalog',
      () => ({
        data: API_CATALOG.map((e) => ({ method: e.method, path: e.path, readiness: e.readiness, served: !!e.servedAs && !e.answersOnly, served_as: e.servedAs ?? null })),
        roadmap_url: roadmapUrl,
      }),
      {
        response: { 200: CatalogResponse },
        detail: apiDoc({ summary: 'The API catalog (spec \u00a74.3): every entry, its readiness, and whether this deployment serves it', description: 'Any valid key, whatever its scopes. /roadmap shows the same list as a page.', tag: 'system', security: 'BearerAuth', operationId: 'getCatalog' }),
      },
    )
    .post(
      '/v1/bond/issue',
      () => {
        throw new ApiError('not_yet_available', 'POST /v1/bond/issue is on the roadmap for 2027 and not available yet; roadmap_url says when.', { body: { roadmap_url: roadmapUrl } });
      },
      {
        body: t.Optional(t.Record(t.String(), t.Unknown(), { description: 'Not accepted yet: any JSON object' })),
        detail: apiDoc({
          summary: 'Bond issuance (roadmap 2027): 501 not_yet_available until then',
          description: 'In the catalog with readiness "roadmap 2027". Answers 501 not_yet_available with roadmap_url, whatever the body, for any valid key.',
          tag: 'system',
          security: 'BearerAuth',
          operationId: 'bondIssue',
          errors: ['not_yet_available'],
          responses: {}, // it never succeeds yet: no 2xx is documented
        }),
      },
    );
}
