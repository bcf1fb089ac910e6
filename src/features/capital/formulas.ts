/**
 * Pillar 1 credit-risk capital for corporate exposures (REFERENCE §11): the IRB risk-weight
 * function of CRR art. 153 with the SME firm-size adjustment, the standardised weights, the SME
 * supporting factor of art. 501, expected loss. Pure: numbers in, numbers out.
 */
import { normalCdf, normalInverse } from '../../lib/normal';

/** Where the two regimes differ, in one table. */
export const REGIMES = {
  /** Regulation (EU) 575/2013 as amended by CRR2 (2019/876) */
  crr2: { scaling_factor: 1.06, pd_floor: 0.0003, lgd_senior_unsecured: 0.45, lgd_subordinated: 0.75, sa_corporate_sme: 1.0 },
  /** CRR3, Regulation (EU) 2024/1623, applicable from 2025-01-01: no 1.06, PD floor 5 bp, F-IRB senior LGD 40 % for non-financial corporates, unrated SME corporates 85 % */
  crr3: { scaling_factor: 1.0, pd_floor: 0.0005, lgd_senior_unsecured: 0.4, lgd_subordinated: 0.75, sa_corporate_sme: 0.85 },
} as const;
export type Regime = keyof typeof REGIMES;
export const REGIME_IN_FORCE: Regime = 'crr3';

export const CAPITAL_RATIO = 0.08;
export const SME_TURNOVER_MAX_EUR = 50_000_000;
export const SUPPORTING_FACTOR = { threshold_eur: 2_500_000, up_to: 0.7619, above: 0.85 } as const;
export const SA_WEIGHTS = { corporate: 1.0, retail_sme: 0.75, retail_max_exposure_eur: 1_000_000, defaulted: 1.5 } as const;

// --- the IRB risk-weight function ------------------------------------------------------------------

/**
 * K per euro of EAD for a PD, LGD and effective maturity (CRR art. 153(1)), with `sizeAdjustment`
 * subtracted from the correlation (the SME firm-size adjustment, art. 153(4)). No floor or clamp:
 * callers apply their own (the regime's PD floor and M in [1, 5] here; the pricing's raw term in
 * decision/policy.ts).
 */
export function irbK(pd: number, lgd: number, maturityYears: number, sizeAdjustment = 0) {
  const w = (1 - Math.exp(-50 * pd)) / (1 - Math.exp(-50));
  const r = 0.12 * w + 0.24 * (1 - w) - sizeAdjustment;
  const b = (0.11852 - 0.05478 * Math.log(pd)) ** 2;
  const ma = (1 + (maturityYears - 2.5) * b) / (1 - 1.5 * b);
  const conditional = normalCdf(normalInverse(pd) / Math.sqrt(1 - r) + Math.sqrt(r / (1 - r)) * normalInverse(0.999));
  return { r, b, ma, k: Math.max(0, (lgd * conditional - pd * lgd) * ma) };
}

// --- one exposure ---------------------------------------------------------------------------------

export interface ExposureInput {
  /** null only under the standardised approach */
  pd: number | null;
  lgd: number;
  ead_eur: number;
  maturity_years: number;
  /** annual turnover; null when unknown (no SME treatment) */
  turnover_eur: number | null;
  approach: 'irb_foundation' | 'standardised';
  /** standardised: a retail exposure (part of a retail portfolio) */
  retail: boolean;
  /** the total owed by the obligor group, for the supporting factor's €2.5 m and retail's €1 m (default: this exposure) */
  group_exposure_eur: number | null;
  apply_supporting_factor: boolean;
}

export interface ExposureResult {
  /** null: a standardised line without a PD (its risk weight needs none) */
  pd_used: number | null;
  pd_floored: boolean;
  lgd_used: number;
  is_sme: boolean;
  correlation: number | null;
  sme_size_adjustment: number;
  maturity_b: number | null;
  maturity_adjustment: number | null;
  k: number | null;
  risk_weight: number;
  rwa_before_supporting_factor_eur: number;
  supporting_factor: number;
  rwa_eur: number;
  capital_eur: number;
  /** null without a PD */
  expected_loss_eur: number | null;
}

/** The SME supporting factor's blended multiplier (art. 501): 0.7619 up to €2.5 m of the group's exposure, 0.85 above. */
export function supportingFactor(groupExposureEur: number): number {
  if (groupExposureEur <= 0) return SUPPORTING_FACTOR.up_to;
  const upTo = Math.min(groupExposureEur, SUPPORTING_FACTOR.threshold_eur);
  const above = Math.max(0, groupExposureEur - SUPPORTING_FACTOR.threshold_eur);
  return (upTo * SUPPORTING_FACTOR.up_to + above * SUPPORTING_FACTOR.above) / groupExposureEur;
}

export function capitalFor(e: ExposureInput, regime: Regime = REGIME_IN_FORCE): ExposureResult {
  const p = REGIMES[regime];
  const isSme = e.turnover_eur !== null && e.turnover_eur <= SME_TURNOVER_MAX_EUR;
  const group = e.group_exposure_eur ?? e.ead_eur;
  if (e.pd === null && e.approach !== 'standardised') throw new Error('capitalFor: the IRB approach needs a PD');
  const pdUsed = e.pd === null ? null : Math.max(e.pd, p.pd_floor);
  const el = pdUsed === null ? null : pdUsed * e.lgd * e.ead_eur;
  let rw: number;
  let irb: Pick<ExposureResult, 'correlation' | 'sme_size_adjustment' | 'maturity_b' | 'maturity_adjustment' | 'k'> = { correlation: null, sme_size_adjustment: 0, maturity_b: null, maturity_adjustment: null, k: null };
  // an exposure in default (PD 1): the standardised weight of CRR art. 127 (150 %: no specific credit
  // risk adjustments are known here, and 100 % needs them at 20 % of the unsecured part); under
  // F-IRB art. 153(1)(ii) with the best estimate of expected loss equal to the supervisory LGD, a
  // weight of 0 — its loss is the expected loss, LGD × EAD, which provisions cover
  const defaulted = pdUsed !== null && pdUsed >= 1;
  if (e.approach === 'standardised') {
    rw = defaulted ? SA_WEIGHTS.defaulted : e.retail && isSme && group <= SA_WEIGHTS.retail_max_exposure_eur ? SA_WEIGHTS.retail_sme : isSme ? p.sa_corporate_sme : SA_WEIGHTS.corporate;
  } else if (defaulted) {
    rw = 0;
    irb = { correlation: null, sme_size_adjustment: 0, maturity_b: null, maturity_adjustment: null, k: 0 };
  } else {
    const adj = isSme ? 0.04 * (1 - (Math.min(50, Math.max(5, e.turnover_eur! / 1e6)) - 5) / 45) : 0;
    const { r, b, ma, k } = irbK(pdUsed!, e.lgd, Math.min(5, Math.max(1, e.maturity_years)), adj);
    rw = k * 12.5 * p.scaling_factor;
    irb = { correlation: r, sme_size_adjustment: adj, maturity_b: b, maturity_adjustment: ma, k };
  }
  const rwaBefore = rw * e.ead_eur;
  const sf = isSme && e.apply_supporting_factor ? supportingFactor(group) : 1;
  const rwa = rwaBefore * sf;
  return {
    pd_used: pdUsed,
    pd_floored: pdUsed !== null && pdUsed !== e.pd,
    lgd_used: e.lgd,
    is_sme: isSme,
    ...irb,
    risk_weight: rw,
    rwa_before_supporting_factor_eur: rwaBefore,
    supporting_factor: sf,
    rwa_eur: rwa,
    capital_eur: rwa * CAPITAL_RATIO,
    expected_loss_eur: el,
  };
}
