import { Elysia } from 'elysia';
import { publicBaseUrl } from '../../config';
import type { AppContext } from '../../context';
import { authed } from '../../plugins/auth';
import { apiDoc } from '../../lib/api-doc';
import { adaptersFromEnv } from '../score/adapters';
import { NifParams, NifResponse } from './model';
import { NifService } from './service';

export function nifService(ctx: AppContext) {
  const base = publicBaseUrl(ctx.config);
  return new NifService(ctx.database, ctx.usage, ctx.liveAdapters ?? adaptersFromEnv(ctx.config.adapters), ctx.config.roadmapUrl ?? `${base}/roadmap`);
}

/** GET /v1/nif/{nif} (scope `compliance`); a HEAD of it is answered alike, without a body, and is not billed. */
export function nifRoutes(ctx: AppContext, service = nifService(ctx)) {
  return new Elysia({ name: 'nif' })
    .use(authed(ctx, 'compliance'))
    .get('/v1/nif/:nif', ({ auth, params }) => service.lookup(auth, params.nif), {
      params: NifParams,
      response: { 200: NifResponse },
      detail: apiDoc({
        summary: 'Validate a NIF and look up its holder',
        description:
          'The validator (a wrong check digit is 200 with valid: false; anything but 9 digits is 422), the holder type from the prefix, the VAT number, and the registry record when the NIF is a company known to the service. A natural person\'s NIF (prefixes 1–3, 45) never returns personal data. Sandbox: the scoring fixtures and the companies in the tenant\'s synced demo books; live: the credit bureau and the tax authority (503 until configured).',
        tag: 'compliance',
        security: 'BearerAuth',
        operationId: 'lookupNif',
        errors: ['live_tier_not_available', 'upstream_unavailable'],
      }),
    });
}
