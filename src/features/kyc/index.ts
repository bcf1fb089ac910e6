import { Elysia } from 'elysia';
import type { AppContext } from '../../context';
import { authed, jsonAnswer } from '../../plugins/auth';
import { routeDocs } from '../../lib/api-doc';
import type { AmlService } from '../aml/service';
import type { NifService } from '../nif/service';
import type { ScoreService } from '../score/service';
import { KycIdParams, KycRequest, KycResponse } from './model';
import { KycService } from './service';

/** KYC of a company and its representatives (scope `compliance`). */
export function kycRoutes(ctx: AppContext, deps: { nif: NifService; aml: AmlService; scores: ScoreService }) {
  const service = new KycService(ctx.database, ctx.usage, deps.nif, deps.aml, deps.scores, () => ctx.clock.now());
  const doc = routeDocs('compliance');
  return new Elysia({ name: 'kyc' })
    .use(authed(ctx, 'compliance'))
    .post('/v1/kyc/verify', async ({ auth, body, set }) => jsonAnswer((await service.verify(auth, body)).text, set.headers), {
      body: KycRequest,
      response: { 200: KycResponse },
      detail: doc(
        'Verify a company and its representatives (KYC)',
        'kycVerify',
        ['live_tier_not_available', 'upstream_unavailable', 'service_unavailable'],
        "Checks the NIF, that the holder is a company, that it is registered and active, screens its name and each representative against the sanctions lists, checks the representatives' NIFs, and looks for insolvency and other legal events in the scoring data. Outcome: fail if any check fails, else review if any needs review or could not be made, else pass (docs/kyc.md). Stored 7 years.",
        {
          clean_company: { summary: 'A clean, active sandbox company with its manager: pass', value: { nif: '599000015', representatives: [{ name: 'Ana Rita Costa', birth_date: '1975-04-12', nif: '212345672', nationality: 'PT', role: 'manager' }], customer_reference: 'onb-42' } },
          insolvent_listed: { summary: 'An insolvent company with a listed director: fail', value: { nif: '599000112', representatives: [{ name: 'Eric Badege', birth_date: '1971', role: 'director' }] } },
        },
      ),
    })
    .get('/v1/kyc/verifications/:id', ({ auth, params }) => service.get(auth, params.id), {
      params: KycIdParams,
      response: { 200: KycResponse },
      detail: doc('One stored verification', 'getKycVerification', ['resource_not_found']),
    });
}
