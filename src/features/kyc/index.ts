import { Elysia } from 'elysia';
import type { AppContext } from '../../context';
import { authed, jsonAnswer } from '../../plugins/auth';
import { routeDocs } from '../../lib/api-doc';
import { fieldProblems } from '../../lib/errors';
import type { AmlService } from '../aml/service';
import type { NifService } from '../nif/service';
import type { ScoreService } from '../score/service';
import { KycIdParams, KycRequest, KycResponse } from './model';
import { KycService } from './service';
import { kycRequestProblems } from './validate';

/** KYC of a company and its representatives (scope `compliance`). */
export function kycRoutes(ctx: AppContext, deps: { nif: NifService; aml: AmlService; scores: ScoreService }) {
  const service = new KycService(ctx.database, ctx.usage, deps.nif, deps.aml, deps.scores, () => ctx.clock.now());
  const doc = routeDocs('compliance');
  return new Elysia({ name: 'kyc' })
    .use(authed(ctx, 'compliance'))
    .post('/v1/kyc/verify', async ({ auth, body, set }) => jsonAnswer((await service.verify(auth, body)).text, set.headers), {
      // every problem at once, the schema's and the representatives' names and birth dates, in one
      // 422 before anything is stored (after the key is judged, before Elysia's own validation)
      transform({ body }) {
        const fields = kycRequestProblems(body, ctx.clock.now());
        if (fields.length) throw fieldProblems(fields);
      },
      body: KycRequest,
      response: { 200: KycResponse },
      detail: doc(
        'Verify a company and its representatives (KYC)',
        'kycVerify',
        ['live_tier_not_available', 'upstream_unavailable', 'service_unavailable'],
        "Checks the NIF, that the holder is a company, that it is registered and active, that its legal representatives and beneficial owners are identified (Lei n.º 83/2017; RCBE, Lei n.º 89/2017: a beneficial owner is a natural person holding more than 25 % directly or indirectly, or controlling it; if none qualifies, its senior managing officials, role senior_managing_official), screens its name and each representative against the sanctions lists, checks the representatives' NIFs, and looks for insolvency and other legal events in the scoring data. Outcome: fail if any check fails, else review if any needs review or could not be made (no legal representative or no beneficial owner given included), else pass (docs/kyc.md). A request's problems are all listed in one 422. Stored 7 years.",
        {
          clean_company: {
            summary: 'A clean, active sandbox company with its manager and its beneficial owner: pass',
            value: {
              nif: '599000015',
              representatives: [
                { name: 'Ana Rita Costa', birth_date: '1975-04-12', nif: '212345672', nationality: 'PT', role: 'manager', ownership_pct: 60 },
                { name: 'Pedro Nuno Marques', birth_date: '1969', nationality: 'PT', role: 'beneficial_owner', ownership_pct: 40 },
              ],
              customer_reference: 'onb-42',
            },
          },
          no_owner_qualifies: {
            summary: 'A widely held company: no one above 25 %, its senior managing official instead: pass',
            value: { nif: '599000015', representatives: [{ name: 'Ana Rita Costa', birth_date: '1975-04-12', nationality: 'PT', role: 'senior_managing_official' }] },
          },
          owners_missing: { summary: 'Its manager only, no beneficial owner: review (beneficial_owners_identified says what to send)', value: { nif: '599000015', representatives: [{ name: 'Ana Rita Costa', birth_date: '1975-04-12', role: 'gerente' }] } },
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
