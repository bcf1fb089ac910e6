/**
 * Sandbox fixtures for POST /v1/score with an sk_test_ key (spec 4.2.1 rule 1).
 *
 * Pure data plus one pure function. Every NIF below is synthetic: nine digits, prefix 5 (legal
 * person), the pattern 599000nn + check digit. The 599… block sits far above the NIPC ranges
 * issued sequentially to real companies (AT itself uses 599999993 for its demo company), which
 * is why it was chosen over 509… (an issued range). Names are "Sandbox …" and obviously fake.
 */
import type { CompanyProfile } from './engine';
import { isValidNif } from '../../lib/nif';

export interface SandboxFixture {
  nif: string;
  outcome: string;
  description: string;
}

export type SandboxLookupResult =
  | { kind: 'profile'; profile: CompanyProfile }
  | { kind: 'invalid_nif' }
  | { kind: 'not_found' };

export const SANDBOX_FIXTURES: readonly SandboxFixture[] = [
  {
    nif: '599000015',
    outcome: 'tier_a_low_pd',
    description: 'Long-established, well-capitalised and profitable distributor with a clean credit record: tier A, PD well under 0.4 %.',
  },
  {
    nif: '599000023',
    outcome: 'tier_b_concentration',
    description: 'Sound finances but 70 % of receivables owed by one customer: tier B, reasons include HIGH_CONCENTRATION.',
  },
  {
    nif: '599000031',
    outcome: 'tier_c_average',
    description: 'Company close to the reference (average) SME: tier C, PD about 2 %.',
  },
  {
    nif: '599000040',
    outcome: 'tier_d_recent_default',
    description: 'Average finances but a credit default in the last 12 months in the credit register: tier D, reasons include RECENT_DEFAULT.',
  },
  {
    nif: '599000058',
    outcome: 'tier_e_distressed',
    description: 'Negative equity, operating losses, overdue credit and an irregular tax situation: tier E.',
  },
  {
    nif: '599000066',
    outcome: 'invalid_nif_422',
    description: 'Check digit is valid, but the sandbox always answers 422 with code invalid_nif (simulates a NIF the tax authority rejects).',
  },
  {
    nif: '599000074',
    outcome: 'not_found_404',
    description: 'Valid NIF that no source knows: 404 (as for every NIF not in this list).',
  },
  {
    nif: '599000082',
    outcome: 'deteriorating_on_rescore',
    description: 'Tier B at the first score; every nightly re-score is worse (overdue credit from the first re-score, a default from the fourth, irregular tax from the sixth); score drops by more than 5 points per step.',
  },
  {
    nif: '599000090',
    outcome: 'limited_data_no_pd',
    description: 'Only payment behaviour and tax status known (no accounts, no credit register): pd null, tier C at best, reasons include LIMITED_DATA.',
  },
  {
    nif: '599000104',
    outcome: 'no_data_conservative_default',
    description: 'Identity only, no scoring data at all: pd null and the conservative default (indicative PD 10 %, score 501, tier D).',
  },
  {
    nif: '599000112',
    outcome: 'tier_e_insolvency',
    description: 'Otherwise average company with pending insolvency proceedings: tier E, reasons include INSOLVENCY_PROCEEDINGS.',
  },
];

// ---------------------------------------------------------------------------------------------
// Profiles
// ---------------------------------------------------------------------------------------------

const TIER_A: CompanyProfile = {
  nif: '599000015',
  name: 'Sandbox Alfa, Lda.',
  sector: 'G',
  age_years: 28,
  financials: {
    fiscal_year: 2025,
    total_assets: 5_000_000,
    current_assets: 2_600_000,
    cash: 900_000,
    total_liabilities: 1_500_000,
    current_liabilities: 900_000,
    financial_debt: 300_000,
    equity: 3_500_000,
    share_capital: 500_000,
    retained_earnings: 2_200_000,
    revenue: 7_500_000,
    ebit: 700_000,
    ebitda: 900_000,
    interest_expense: 12_000,
  },
  payment_behaviour: { dso_days: 40, days_beyond_terms_avg: 1, share_of_receivables_from_top_customer: 0.12 },
  credit_register: {
    total_exposure_eur: 300_000,
    overdue_eur: 0,
    institutions_count: 2,
    default_in_last_12m: false,
    written_off_eur: 0,
    litigation_eur: 0,
  },
  tax_authority: { status: 'regular', vat_registered: true },
  events: { insolvency_proceedings: false, restructuring_proceedings: false },
};

const TIER_B: CompanyProfile = {
  nif: '599000023',
  name: 'Sandbox Beta, S.A.',
  sector: 'C',
  age_years: 15,
  financials: {
    fiscal_year: 2025,
    total_assets: 3_000_000,
    current_assets: 1_400_000,
    cash: 250_000,
    total_liabilities: 1_650_000,
    current_liabilities: 900_000,
    financial_debt: 700_000,
    equity: 1_350_000,
    share_capital: 250_000,
    retained_earnings: 600_000,
    revenue: 3_600_000,
    ebit: 270_000,
    ebitda: 390_000,
    interest_expense: 30_000,
  },
  payment_behaviour: { dso_days: 75, days_beyond_terms_avg: 4, share_of_receivables_from_top_customer: 0.7 },
  credit_register: {
    total_exposure_eur: 750_000,
    overdue_eur: 0,
    institutions_count: 3,
    default_in_last_12m: false,
    written_off_eur: 0,
    litigation_eur: 0,
  },
  tax_authority: { status: 'regular', vat_registered: true },
};

const TIER_C: CompanyProfile = {
  nif: '599000031',
  name: 'Sandbox Gama, Lda.',
  sector: 'F',
  age_years: 9,
  financials: {
    fiscal_year: 2025,
    total_assets: 1_200_000,
    current_assets: 680_000,
    cash: 40_000,
    total_liabilities: 870_000,
    current_liabilities: 600_000,
    financial_debt: 420_000,
    equity: 330_000,
    share_capital: 50_000,
    retained_earnings: 90_000,
    revenue: 1_150_000,
    ebit: 48_000,
    ebitda: 110_000,
    interest_expense: 22_000,
  },
  payment_behaviour: { dso_days: 70, days_beyond_terms_avg: 14, share_of_receivables_from_top_customer: 0.3 },
  credit_register: {
    total_exposure_eur: 450_000,
    overdue_eur: 0,
    institutions_count: 4,
    default_in_last_12m: false,
    written_off_eur: 0,
    litigation_eur: 0,
  },
  tax_authority: { status: 'regular', vat_registered: true },
};

const TIER_D: CompanyProfile = {
  ...TIER_C,
  nif: '599000040',
  name: 'Sandbox Delta, Lda.',
  sector: 'I',
  age_years: 12,
  payment_behaviour: { dso_days: 55, days_beyond_terms_avg: 20, share_of_receivables_from_top_customer: 0.2 },
  credit_register: {
    total_exposure_eur: 420_000,
    overdue_eur: 0,
    institutions_count: 4,
    default_in_last_12m: true,
    written_off_eur: 0,
    litigation_eur: 0,
  },
};

const TIER_E: CompanyProfile = {
  nif: '599000058',
  name: 'Sandbox Epsilon, Unipessoal Lda.',
  sector: 'F',
  age_years: 6,
  financials: {
    fiscal_year: 2025,
    total_assets: 800_000,
    current_assets: 350_000,
    cash: 10_000,
    total_liabilities: 920_000,
    current_liabilities: 600_000,
    financial_debt: 500_000,
    equity: -120_000,
    share_capital: 100_000,
    retained_earnings: -260_000,
    revenue: 700_000,
    ebit: -30_000,
    ebitda: 10_000,
    interest_expense: 35_000,
  },
  payment_behaviour: { dso_days: 95, days_beyond_terms_avg: 30, share_of_receivables_from_top_customer: 0.35 },
  credit_register: {
    total_exposure_eur: 520_000,
    overdue_eur: 15_000,
    institutions_count: 5,
    default_in_last_12m: false,
    written_off_eur: 0,
    litigation_eur: 0,
  },
  tax_authority: { status: 'irregular', vat_registered: true },
};

const LIMITED_DATA: CompanyProfile = {
  nif: '599000090',
  name: 'Sandbox Eta, Lda.',
  sector: 'M',
  age_years: 4,
  payment_behaviour: { dso_days: 45, days_beyond_terms_avg: 5, share_of_receivables_from_top_customer: 0.3 },
  tax_authority: { status: 'regular', vat_registered: true },
};

const NO_DATA: CompanyProfile = {
  nif: '599000104',
  name: 'Sandbox Teta, Lda.',
  sector: 'N',
  age_years: 2,
};

const INSOLVENCY: CompanyProfile = {
  ...TIER_C,
  nif: '599000112',
  name: 'Sandbox Iota, Lda.',
  sector: 'C',
  age_years: 18,
  events: { insolvency_proceedings: true, restructuring_proceedings: false },
};

/** Generation cap: beyond it every input is already at its winsorisation bound. */
const MAX_GENERATION = 1_000_000;

/**
 * The deteriorating company at re-score generation g (0 = first score). Every input moves in
 * the risk-increasing direction as g grows; from g = 1 overdue credit appears, from g = 4 a
 * default is flagged, from g = 6 the tax situation is irregular. Inputs saturate at the model's winsorisation bounds, so for very large g
 * the score stops falling (non-increasing, never below 0).
 */
function deteriorating(g: number): CompanyProfile {
  return {
    nif: '599000082',
    name: 'Sandbox Zeta, Lda.',
    sector: 'G',
    age_years: 14,
    financials: {
      fiscal_year: 2025,
      total_assets: 2_000_000,
      current_assets: 1_000_000,
      cash: Math.max(0, 150_000 - 15_000 * g),
      total_liabilities: 1_300_000 + 20_000 * g,
      current_liabilities: 720_000 + 20_000 * g,
      financial_debt: 520_000 + 20_000 * g,
      equity: 700_000 - 30_000 * g,
      share_capital: 150_000,
      retained_earnings: 300_000 - 30_000 * g,
      revenue: Math.max(0, 2_500_000 - 50_000 * g),
      ebit: 130_000 - 15_000 * g,
      ebitda: 210_000 - 15_000 * g,
      interest_expense: 26_000 + 1_000 * g,
    },
    payment_behaviour: {
      dso_days: 60 + 4 * g,
      days_beyond_terms_avg: 5 + 8 * g,
      share_of_receivables_from_top_customer: Math.min(1, 0.22 + 0.02 * g),
    },
    credit_register: {
      total_exposure_eur: 560_000,
      overdue_eur: g === 0 ? 0 : Math.min(560_000, 20_000 * g),
      institutions_count: 3,
      default_in_last_12m: g >= 4,
      written_off_eur: 0,
      litigation_eur: 0,
    },
    tax_authority: { status: g >= 6 ? 'irregular' : 'regular', vat_registered: true },
  };
}

/** frozen to the last nested object: lookups hand out the fixture itself, never a copy to spoil */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

const STATIC_PROFILES: Record<string, CompanyProfile> = deepFreeze({
  '599000015': TIER_A,
  '599000023': TIER_B,
  '599000031': TIER_C,
  '599000040': TIER_D,
  '599000058': TIER_E,
  '599000090': LIMITED_DATA,
  '599000104': NO_DATA,
  '599000112': INSOLVENCY,
});

const INVALID_NIF_FIXTURE = '599000066';
const DETERIORATING_FIXTURE = '599000082';

/**
 * What the sandbox returns for `nif` at re-score generation `generation` (0 = first score,
 * 1 = first nightly re-score, …; non-integers are floored, negatives/NaN read as 0).
 * - a NIF that is not 9 digits with a valid check digit, or the invalid_nif_422 fixture → invalid_nif
 * - a fixture with a profile → that profile (frozen, shared; only the deteriorating one depends on g)
 * - anything else (including the not_found_404 fixture) → not_found
 */
export function sandboxLookup(nif: string, generation: number): SandboxLookupResult {
  if (!isValidNif(nif) || nif === INVALID_NIF_FIXTURE) return { kind: 'invalid_nif' };
  if (nif === DETERIORATING_FIXTURE) {
    const g = Number.isFinite(generation) ? Math.min(MAX_GENERATION, Math.max(0, Math.floor(generation))) : generation > 0 ? MAX_GENERATION : 0;
    return { kind: 'profile', profile: deteriorating(g) };
  }
  const p = STATIC_PROFILES[nif];
  // shared (frozen) rather than copied: a copy was ~5 % of a fresh score's CPU, and the engine only reads it
  return p ? { kind: 'profile', profile: p } : { kind: 'not_found' };
}
