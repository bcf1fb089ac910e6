import { t } from 'elysia';
import { Int, NineDigits } from '../../lib/schemas';

const Regime = t.Union([t.Literal('crr2'), t.Literal('crr3')], { description: 'crr3 (Regulation (EU) 2024/1623, in force from 2025-01-01) by default; crr2 for comparison' });
const Approach = t.Union([t.Literal('irb_foundation'), t.Literal('standardised')]);

export const Exposure = t.Object({
  id: t.Optional(t.String({ minLength: 1, maxLength: 64, description: 'Your reference for the line, echoed' })),
  nif: t.Optional(NineDigits), // the check digit is judged with the lines' other problems (service)
  pd: t.Optional(t.Number({ minimum: 0, maximum: 1, description: '12-month PD; required without nif under the IRB approach, optional under the standardised one (floored at the regime\u2019s PD floor). 1: an exposure in default (F-IRB risk weight 0, its expected loss LGD \u00d7 EAD; standardised 150 %)' })),
  lgd: t.Optional(t.Number({ exclusiveMinimum: 0, maximum: 1, description: 'Loss given default; default the supervisory F-IRB value for the seniority' })),
  seniority: t.Optional(t.Union([t.Literal('senior_unsecured'), t.Literal('subordinated')], { default: 'senior_unsecured' })),
  ead_eur: t.Number({ minimum: 0.01, maximum: 1e12, description: 'Exposure at default, euros and whole cents' }),
  maturity_years: t.Optional(t.Number({ minimum: 1, maximum: 5, default: 2.5, description: 'Effective maturity M (F-IRB default 2.5)' })),
  turnover_eur: t.Optional(t.Number({ minimum: 0, maximum: 1e13, description: 'Annual turnover: \u2264 \u20ac50 m makes the obligor an SME (firm-size adjustment, supporting factor)' })),
  approach: t.Optional(Approach),
  retail: t.Optional(t.Boolean({ description: 'standardised: part of a retail portfolio (75 % when the group owes at most \u20ac1 m)' })),
  group_exposure_eur: t.Optional(t.Number({ minimum: 0.01, maximum: 1e12, description: 'Total owed by the obligor\u2019s group, for the supporting factor\u2019s \u20ac2.5 m and retail\u2019s \u20ac1 m; at least ead_eur (default: the ead_eur of this portfolio\u2019s lines with the same nif, or this line\u2019s)' })),
  sme_supporting_factor: t.Optional(t.Boolean({ default: true, description: 'Apply CRR art. 501 to an SME (default true)' })),
});

export const CapitalRequest = t.Object({
  regime: t.Optional(Regime),
  approach: t.Optional(t.Union([Approach], { description: 'For every line that does not say (default irb_foundation)' })),
  exposures: t.Array(Exposure, { minItems: 1, maxItems: 10_000 }),
});

const Nullable = <S extends Parameters<typeof t.Union>[0][number]>(s: S) => t.Union([s, t.Null()]);
export const CapitalLine = t.Object({
  index: Int(),
  id: Nullable(t.String()),
  nif: Nullable(t.String()),
  approach: Approach,
  pd_source: Nullable(t.String({ description: 'input; the scoring engine\u2019s algorithm version (its PD estimate); that version followed by " indicative" when the engine gives no PD estimate (limited data) and its tier\u2019s indicative PD is used; null for a standardised line given neither pd nor nif' })),
  pd_used: Nullable(t.Number({ description: 'the PD after the regime\u2019s floor; null for a standardised line without one' })),
  pd_floored: t.Boolean(),
  lgd_source: t.Union([t.Literal('input'), t.Literal('supervisory_f_irb')]),
  lgd_used: t.Number(),
  ead_eur: t.Number(),
  maturity_years: t.Number(),
  turnover_eur: Nullable(t.Number()),
  is_sme: t.Boolean(),
  correlation: Nullable(t.Number({ description: 'R, after the SME firm-size adjustment' })),
  sme_size_adjustment: t.Number({ description: 'subtracted from R (0 when not an SME)' }),
  maturity_b: Nullable(t.Number()),
  maturity_adjustment: Nullable(t.Number()),
  k: Nullable(t.Number({ description: 'capital requirement per euro of EAD (IRB)' })),
  risk_weight: t.Number({ description: 'RWA per euro of EAD before the supporting factor (K \u00d7 12.5 \u00d7 the regime\u2019s scaling factor under IRB)' }),
  rwa_before_supporting_factor_eur: t.Number(),
  supporting_factor: t.Number({ description: '1 when not applied' }),
  rwa_eur: t.Number(),
  capital_eur: t.Number({ description: '8 % of RWA' }),
  expected_loss_eur: Nullable(t.Number({ description: 'PD \u00d7 LGD \u00d7 EAD; null without a PD' })),
});

export const CapitalResponse = t.Object({
  regime: Regime,
  parameters: t.Object({
    scaling_factor: t.Number(),
    pd_floor: t.Number(),
    lgd_senior_unsecured: t.Number(),
    lgd_subordinated: t.Number(),
    sa_corporate_sme: t.Number(),
    capital_ratio: t.Number(),
    supporting_factor: t.Object({ threshold_eur: t.Number(), up_to: t.Number(), above: t.Number() }),
  }),
  lines: t.Array(CapitalLine),
  totals: t.Object({ exposures: Int(), ead_eur: t.Number(), rwa_eur: t.Number(), capital_eur: t.Number(), expected_loss_eur: t.Number({ description: 'of the lines with a PD' }), average_risk_weight: t.Number({ description: 'total RWA / total EAD' }) }),
  algorithm_version: t.String(),
  computed_at: t.String({ format: 'date-time' }),
});

export type CapitalBody = typeof CapitalRequest.static;
export type CapitalAnswer = typeof CapitalResponse.static;
