import { Elysia } from 'elysia';
import type { AppContext } from '../../context';
import { authed } from '../../plugins/auth';
import { apiDoc } from '../../lib/api-doc';
import type { ScoreService } from '../score/service';
import { CapitalRequest, CapitalResponse } from './model';
import { CapitalService } from './service';

/** POST /v1/basel/capital (scope `score`). */
export function capitalRoutes(ctx: AppContext, scores: ScoreService) {
  const service = new CapitalService(scores, ctx.usage, () => ctx.clock.now());
  return new Elysia({ name: 'capital' }).use(authed(ctx, 'score')).post('/v1/basel/capital', ({ auth, body }) => service.compute(auth, body), {
    body: CapitalRequest,
    response: { 200: CapitalResponse },
    detail: apiDoc({
      summary: 'Pillar 1 capital of corporate exposures: IRB foundation or standardised, CRR2 or CRR3',
      description:
        'One exposure or a portfolio (up to 10 000 lines). PD given, or read from the scoring engine for a NIF (with its turnover when not given); LGD given or the supervisory F-IRB value. Per line: correlation with the SME firm-size adjustment, maturity adjustment, K, risk weight, RWA before and after the SME supporting factor (CRR art. 501), capital at 8 %, expected loss; totals. The regimes differ in one table of parameters (returned as parameters): the 1.06 scaling factor, the PD floor, the F-IRB LGD, the standardised weight of unrated SME corporates. docs/capital.md.',
      tag: 'score',
      security: 'BearerAuth',
      operationId: 'baselCapital',
      errors: ['invalid_nif', 'company_not_found', 'live_tier_not_available', 'upstream_unavailable'],
      examples: {
        one_exposure: { summary: 'One SME loan, PD 1 %, CRR3', value: { exposures: [{ id: 'loan-1', pd: 0.01, ead_eur: 1000000, maturity_years: 3, turnover_eur: 20000000 }] } },
        portfolio: {
          summary: 'Two sandbox obligors by NIF and one standardised retail line, CRR2',
          value: { regime: 'crr2', exposures: [{ nif: '599000015', ead_eur: 2500000 }, { nif: '599000031', ead_eur: 750000, seniority: 'subordinated' }, { pd: 0.03, ead_eur: 200000, turnover_eur: 1500000, approach: 'standardised', retail: true }] },
        },
      },
    }),
  });
}
