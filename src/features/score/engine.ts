/**
 * Credit-scoring engine (algorithm `score-1.1.0`). See docs/scoring.md for the model, the
 * coefficient table, the master scale and the reason catalogue.
 *
 * PURE: no I/O, no clock, no randomness, no framework imports. The same profile and language
 * always give a deep-equal result.
 *
 * Model in one paragraph: every input is turned into a winsorised feature x_i; each feature
 * contributes c_i = β_i · (x_i − ref_i) log-odds of default relative to a reference ("average")
 * company whose 12-month PD is 2 %. z = logit(2 %) + Σ c_i (+ limited-data penalties);
 * PD = 1 / (1 + e^−z), floored at 0.03 % and capped at 99.99 %. Score = PDO scaling of the PD,
 * tier = master scale of the PD. Every β has the sign that makes the PD non-decreasing in
 * every risk driver, so the score is monotone by construction.
 */

// Version policy (docs/scoring.md): bump on ANY change that could change a result for the same
// profile and language: coefficients, references, winsorisation bounds, penalties, floors and
// caps, score scaling, master scale, component mapping, reason rules, codes or labels,
// data_sources names. Patch = labels/wording only; minor = calibration; major = new features
// or a changed result shape. Changing only the sandbox fixtures' data does not bump it.
export const ALGORITHM_VERSION = 'score-1.1.0';

export type Lang = 'en' | 'pt';
export type Tier = 'A' | 'B' | 'C' | 'D' | 'E';
export type Impact = 'positive' | 'negative';

export interface Reason {
  code: string;
  label: string;
  impact: Impact;
  weight: number;
}

/** Annual accounts (IES / SAF-T based), amounts in EUR for the last closed fiscal year. */
export interface Financials {
  /** Informational only; not used by the model. */
  fiscal_year?: number;
  total_assets: number;
  current_assets: number;
  /** Cash and bank deposits (part of current_assets). */
  cash: number;
  total_liabilities: number;
  current_liabilities: number;
  /** Interest-bearing debt (loans, leases, overdrafts, bonds). Part of total_liabilities. */
  financial_debt: number;
  /** Book equity (capitais próprios). May be negative. */
  equity: number;
  /** Subscribed share capital (capital social). */
  share_capital: number;
  /** Retained earnings (resultados transitados); negative = accumulated losses. */
  retained_earnings: number;
  /** Sales and services rendered (volume de negócios). */
  revenue: number;
  ebit: number;
  ebitda: number;
  interest_expense: number;
}

/** Trade behaviour (bureau / trade-payment data or the company's own ledgers). */
export interface PaymentBehaviour {
  /** Days sales outstanding: how long the company's customers take to pay it. */
  dso_days: number;
  /** Average days beyond agreed terms with which the company pays its suppliers. */
  days_beyond_terms_avg: number;
  /** Share of trade receivables owed by the largest customer, 0..1. */
  share_of_receivables_from_top_customer: number;
}

/** Banco de Portugal Central de Responsabilidades de Crédito (CRC), latest monthly map. */
export interface CreditRegister {
  /** Effective exposure across all institutions, EUR (includes overdue_eur). */
  total_exposure_eur: number;
  /** Overdue amount (vencido), EUR. */
  overdue_eur: number;
  /** Number of reporting institutions. */
  institutions_count: number;
  /** Any exposure in default in the last 12 months. */
  default_in_last_12m: boolean;
  /** Amount written off (abatido ao ativo), EUR. */
  written_off_eur: number;
  /** Amount in litigation (em contencioso), EUR. */
  litigation_eur: number;
}

/** Tax-authority (AT) validation. */
export interface TaxAuthority {
  /** 'regular' = situação tributária regularizada; anything else is treated as irregular. */
  status: 'regular' | 'irregular';
  vat_registered: boolean;
}

/** Court / insolvency-register events. */
export interface LegalEvents {
  /** Pending or declared insolvency (CIRE). */
  insolvency_proceedings: boolean;
  /** PER / RERE restructuring proceedings. Absent = false. */
  restructuring_proceedings?: boolean;
}

export interface CompanyProfile {
  /** 9-digit NIF/NIPC. Informational for the engine (validated by the caller). */
  nif: string;
  name: string;
  /** NACE Rev.2 section letter (A–U). Recorded, not used by score-1.1.0. */
  sector: string;
  /** Company age in years at the scoring date (the engine has no clock). */
  age_years: number;
  financials?: Financials;
  payment_behaviour?: PaymentBehaviour;
  credit_register?: CreditRegister;
  tax_authority?: TaxAuthority;
  events?: LegalEvents;
}

export interface ScoreResult {
  /** 12-month PD in [0.0003, 0.9999]; null when neither financials nor credit register exist. */
  pd: number | null;
  /** the PD the score and tier are read from: pd, or the indicative floor when pd is null */
  pd_scale: number;
  /** Integer 0..1000. */
  score: number;
  tier: Tier;
  /** Each of COMPONENT_NAMES, in [0,1], 1 = best, 0.5 = reference company / input absent. */
  components: Record<string, number>;
  /** At most MAX_REASONS, weight desc (ties by code). */
  reasons: Reason[];
  /** Sources whose data was used, in DATA_SOURCE_NAMES order. */
  data_sources: string[];
}

// ---------------------------------------------------------------------------------------------
// Score scaling and master scale
// ---------------------------------------------------------------------------------------------

/** Score 600 at good:bad odds of 50:1; 40 points to double the odds (REFERENCE §6). */
export const SCORE_ANCHOR = 600;
export const SCORE_ANCHOR_ODDS = 50;
export const SCORE_PDO = 40;
export const SCORE_FACTOR = SCORE_PDO / Math.LN2; // 57.7078…
export const SCORE_OFFSET = SCORE_ANCHOR - SCORE_FACTOR * Math.log(SCORE_ANCHOR_ODDS); // 374.2463…

/** PD published by the model is kept within these bounds (0.03 % = top of the AAA–AA band). */
export const PD_FLOOR = 0.0003;
export const PD_CAP = 0.9999;

/** Master scale: tier = first row whose max_pd ≥ PD (upper bounds inclusive). */
export const MASTER_SCALE: readonly { tier: Tier; max_pd: number }[] = [
  { tier: 'A', max_pd: 0.004 },
  { tier: 'B', max_pd: 0.015 },
  { tier: 'C', max_pd: 0.05 },
  { tier: 'D', max_pd: 0.2 },
  { tier: 'E', max_pd: 1 },
];

export function tierForPd(pd: number): Tier {
  if (typeof pd !== 'number' || Number.isNaN(pd)) return 'E';
  for (const row of MASTER_SCALE) if (pd <= row.max_pd) return row.tier;
  return 'E';
}

export function scoreForPd(pd: number): number {
  if (typeof pd !== 'number' || Number.isNaN(pd)) return 0;
  if (pd <= 0) return 1000;
  if (pd >= 1) return 0;
  const s = Math.round(SCORE_OFFSET + SCORE_FACTOR * Math.log((1 - pd) / pd));
  return Math.min(1000, Math.max(0, s));
}

// ---------------------------------------------------------------------------------------------
// Model specification
// ---------------------------------------------------------------------------------------------

export const COMPONENT_NAMES = [
  'financial_strength',
  'profitability',
  'liquidity',
  'leverage',
  'payment_behaviour',
  'credit_history',
  'tax_compliance',
  'company_maturity',
  'legal_events',
] as const;
export type ComponentName = (typeof COMPONENT_NAMES)[number];
// (scoreCompany writes the components as a literal in this order)
if (COMPONENT_NAMES.join() !== 'financial_strength,profitability,liquidity,leverage,payment_behaviour,credit_history,tax_compliance,company_maturity,legal_events') throw new Error('scoreCompany: components literal out of date');

export const DATA_SOURCE_NAMES = [
  'company_registry',
  'financial_statements',
  'payment_behaviour',
  'credit_register',
  'tax_authority',
  'legal_events',
] as const;

/** Log-odds of default of the reference company: logit(2 %). */
export const PD_REFERENCE = 0.02;
/** the reference company's payment inputs (contribution 0): what an absent input stands for */
export const REFERENCE_DSO_DAYS = 60;
export const REFERENCE_DAYS_BEYOND_TERMS = 10;
export const REFERENCE_TOP_CUSTOMER_SHARE = 0.25;
export const Z_REFERENCE = Math.log(PD_REFERENCE / (1 - PD_REFERENCE));

/** Added to z when a block is absent (its features then sit at their reference values). */
export const MISSING_FINANCIALS_PENALTY = 0.5;
export const MISSING_CREDIT_REGISTER_PENALTY = 0.25;

/** pd = null: the indicative PD behind score and tier is floored at these values. */
export const NO_PD_FLOOR_WITH_DATA = 0.02;
export const NO_PD_FLOOR_NO_DATA = 0.1;

/** Component = 1 / (1 + exp(COMPONENT_SLOPE · Σ group contributions)). */
export const COMPONENT_SLOPE = 1.5;
export const MAX_REASONS = 6;
/** A driver becomes a reason only if its weight is at least this. */
export const MIN_REASON_WEIGHT = 0.01;

export interface FeatureSpec {
  /** Coefficient in log-odds of default per unit of the feature (positive = riskier). */
  beta: number;
  /** Reference value (the "average company"; for 0/1 flags its prevalence). */
  ref: number;
  /** Winsorisation bounds of the feature. */
  lo: number;
  hi: number;
  group: ComponentName;
}

export const FEATURES = {
  // financial_statements --------------------------------------------------------------------
  wc_to_assets: { beta: -1.2, ref: 0.1, lo: -1, hi: 1, group: 'liquidity' }, // Altman X1
  current_ratio: { beta: -0.1, ref: 1.3, lo: 0, hi: 5, group: 'liquidity' },
  retained_earnings_to_assets: { beta: -0.6, ref: 0.1, lo: -1, hi: 1, group: 'financial_strength' }, // X2
  ebit_to_assets: { beta: -4.0, ref: 0.05, lo: -0.5, hi: 0.5, group: 'profitability' }, // X3
  equity_to_liabilities: { beta: -0.25, ref: 0.5, lo: -1, hi: 4, group: 'financial_strength' }, // X4
  sales_to_assets: { beta: -0.1, ref: 1.0, lo: 0, hi: 5, group: 'profitability' },
  equity_ratio: { beta: -1.3, ref: 0.33, lo: -1, hi: 1, group: 'financial_strength' },
  log_interest_cover: { beta: -0.25, ref: Math.log(6), lo: 0, hi: Math.log(51), group: 'leverage' },
  net_debt_to_ebitda: { beta: 0.08, ref: 2.5, lo: 0, hi: 10, group: 'leverage' },
  negative_equity: { beta: 0.5, ref: 0.1, lo: 0, hi: 1, group: 'financial_strength' },
  equity_below_half_capital: { beta: 0.3, ref: 0.15, lo: 0, hi: 1, group: 'financial_strength' },
  operating_loss: { beta: 0.3, ref: 0.2, lo: 0, hi: 1, group: 'profitability' },
  // payment_behaviour -------------------------------------------------------------------------
  dso_days: { beta: 0.004, ref: REFERENCE_DSO_DAYS, lo: 0, hi: 365, group: 'payment_behaviour' },
  days_beyond_terms: { beta: 0.015, ref: REFERENCE_DAYS_BEYOND_TERMS, lo: 0, hi: 180, group: 'payment_behaviour' },
  top_customer_share: { beta: 1.2, ref: REFERENCE_TOP_CUSTOMER_SHARE, lo: 0, hi: 1, group: 'payment_behaviour' },
  // credit_register ---------------------------------------------------------------------------
  overdue_share: { beta: 2.5, ref: 0.02, lo: 0, hi: 1, group: 'credit_history' },
  any_overdue: { beta: 0.8, ref: 0.1, lo: 0, hi: 1, group: 'credit_history' },
  default_last_12m: { beta: 2.2, ref: 0.03, lo: 0, hi: 1, group: 'credit_history' },
  written_off_or_litigation: { beta: 1.2, ref: 0.03, lo: 0, hi: 1, group: 'credit_history' },
  lenders_above_four: { beta: 0.08, ref: 0, lo: 0, hi: 11, group: 'credit_history' },
  // tax_authority -----------------------------------------------------------------------------
  tax_irregular: { beta: 0.8, ref: 0.08, lo: 0, hi: 1, group: 'tax_compliance' },
  not_vat_registered: { beta: 0.3, ref: 0.05, lo: 0, hi: 1, group: 'tax_compliance' },
  // company_registry --------------------------------------------------------------------------
  log_age: { beta: -0.35, ref: Math.log(11), lo: 0, hi: Math.log(51), group: 'company_maturity' },
  // legal_events ------------------------------------------------------------------------------
  insolvency: { beta: 5.0, ref: 0, lo: 0, hi: 1, group: 'legal_events' },
  restructuring: { beta: 1.5, ref: 0, lo: 0, hi: 1, group: 'legal_events' },
} as const satisfies Record<string, FeatureSpec>;
export type FeatureName = keyof typeof FEATURES;
const FEATURE_NAMES = Object.keys(FEATURES) as FeatureName[];
// features by index: an evaluation keeps its values and contributions in typed arrays (keyed
// reads and writes of ~30 names on plain objects were a third of an evaluation)
const I = Object.fromEntries(FEATURE_NAMES.map((name, i) => [name, i])) as Record<FeatureName, number>;
const SPEC = (k: 'beta' | 'lo' | 'hi' | 'ref') => Float64Array.from(FEATURE_NAMES, (name) => (FEATURES[name] as FeatureSpec)[k]);
const BETA = SPEC('beta');
const LO = SPEC('lo');
const HI = SPEC('hi');
const REF = SPEC('ref');
const N_FEATURES = FEATURE_NAMES.length;
const RAW = new Float64Array(N_FEATURES);
const CONTRIB = new Float64Array(N_FEATURES);
const GROUP_MEMBERS: readonly (readonly FeatureName[])[] = COMPONENT_NAMES.map((g) =>
  FEATURE_NAMES.filter((name) => FEATURES[name].group === g),
);
const GROUP_INDEXES: readonly (readonly number[])[] = GROUP_MEMBERS.map((members) => members.map((name) => I[name]));

// ---------------------------------------------------------------------------------------------
// Reason catalogue
// ---------------------------------------------------------------------------------------------

export const REASON_CATALOGUE: Record<string, { en: string; pt: string; impact: Impact }> = {
  STRONG_EQUITY: { en: 'Strong equity base', pt: 'Capitais próprios sólidos', impact: 'positive' },
  WEAK_EQUITY: { en: 'Weak equity base', pt: 'Capitais próprios reduzidos', impact: 'negative' },
  NEGATIVE_EQUITY: { en: 'Negative equity', pt: 'Capitais próprios negativos', impact: 'negative' },
  EQUITY_BELOW_HALF_CAPITAL: {
    en: 'Equity below half of share capital (CSC art. 35)',
    pt: 'Capitais próprios inferiores a metade do capital social (art. 35.º do CSC)',
    impact: 'negative',
  },
  STRONG_RETAINED_EARNINGS: { en: 'Substantial retained earnings', pt: 'Resultados transitados robustos', impact: 'positive' },
  LOW_RETAINED_EARNINGS: { en: 'Low retained earnings', pt: 'Resultados transitados reduzidos', impact: 'negative' },
  ACCUMULATED_LOSSES: { en: 'Accumulated losses', pt: 'Prejuízos acumulados', impact: 'negative' },
  HIGH_LEVERAGE: {
    en: 'High debt burden relative to earnings',
    pt: 'Endividamento elevado face aos resultados',
    impact: 'negative',
  },
  LOW_LEVERAGE: {
    en: 'Low debt burden relative to earnings',
    pt: 'Endividamento reduzido face aos resultados',
    impact: 'positive',
  },
  STRONG_PROFITABILITY: { en: 'Strong operating profitability', pt: 'Rendibilidade operacional elevada', impact: 'positive' },
  WEAK_PROFITABILITY: { en: 'Weak operating profitability', pt: 'Rendibilidade operacional fraca', impact: 'negative' },
  LOSS_MAKING: { en: 'Operating losses', pt: 'Resultados operacionais negativos', impact: 'negative' },
  HIGH_ASSET_TURNOVER: { en: 'High sales relative to assets', pt: 'Vendas elevadas face ao ativo', impact: 'positive' },
  LOW_ASSET_TURNOVER: { en: 'Low sales relative to assets', pt: 'Vendas reduzidas face ao ativo', impact: 'negative' },
  STRONG_LIQUIDITY: { en: 'Strong short-term liquidity', pt: 'Liquidez de curto prazo sólida', impact: 'positive' },
  WEAK_LIQUIDITY: { en: 'Weak short-term liquidity', pt: 'Liquidez de curto prazo insuficiente', impact: 'negative' },
  HIGH_CONCENTRATION: {
    en: 'High dependence on a single customer',
    pt: 'Elevada dependência de um único cliente',
    impact: 'negative',
  },
  DIVERSIFIED_CUSTOMERS: { en: 'Diversified customer base', pt: 'Carteira de clientes diversificada', impact: 'positive' },
  SLOW_PAYER: { en: 'Pays suppliers late', pt: 'Paga aos fornecedores com atraso', impact: 'negative' },
  PROMPT_PAYER: { en: 'Pays suppliers on time', pt: 'Paga aos fornecedores dentro do prazo', impact: 'positive' },
  SLOW_COLLECTION: {
    en: 'Long collection period (DSO)',
    pt: 'Prazo médio de recebimentos elevado',
    impact: 'negative',
  },
  FAST_COLLECTION: {
    en: 'Short collection period (DSO)',
    pt: 'Prazo médio de recebimentos reduzido',
    impact: 'positive',
  },
  RECENT_DEFAULT: {
    en: 'Credit default in the last 12 months',
    pt: 'Incumprimento de crédito nos últimos 12 meses',
    impact: 'negative',
  },
  OVERDUE_CREDIT: {
    en: 'Overdue credit in the Central Credit Register',
    pt: 'Crédito vencido na Central de Responsabilidades de Crédito',
    impact: 'negative',
  },
  WRITTEN_OFF_OR_LITIGATION: {
    en: 'Credit written off or in litigation',
    pt: 'Crédito abatido ao ativo ou em contencioso',
    impact: 'negative',
  },
  MANY_LENDERS: { en: 'Borrowing from many institutions', pt: 'Crédito junto de muitas instituições', impact: 'negative' },
  CLEAN_CREDIT_HISTORY: {
    en: 'No overdue, defaulted or written-off credit',
    pt: 'Sem crédito vencido, em incumprimento ou abatido ao ativo',
    impact: 'positive',
  },
  TAX_IRREGULAR: { en: 'Tax situation not regularised', pt: 'Situação tributária não regularizada', impact: 'negative' },
  TAX_COMPLIANT: { en: 'Tax situation regularised', pt: 'Situação tributária regularizada', impact: 'positive' },
  NOT_VAT_REGISTERED: { en: 'Not registered for VAT', pt: 'Sem registo para efeitos de IVA', impact: 'negative' },
  YOUNG_COMPANY: { en: 'Young company with a short track record', pt: 'Empresa recente com histórico curto', impact: 'negative' },
  ESTABLISHED_COMPANY: { en: 'Long-established company', pt: 'Empresa com longo historial', impact: 'positive' },
  INSOLVENCY_PROCEEDINGS: { en: 'Insolvency proceedings', pt: 'Processo de insolvência', impact: 'negative' },
  RESTRUCTURING_PROCEEDINGS: {
    en: 'Restructuring proceedings (PER/RERE)',
    pt: 'Processo de revitalização ou reestruturação (PER/RERE)',
    impact: 'negative',
  },
  LIMITED_DATA: { en: 'Limited data available', pt: 'Dados disponíveis limitados', impact: 'negative' },
};

/**
 * A reason's label in a language: the catalogue's; for a code the catalogue no longer has, the
 * label stored with it (rows from before labels were left out), else the code itself.
 */
export const reasonLabel = (r: { code: string; label?: string }, lang: Lang): string => REASON_CATALOGUE[r.code]?.[lang] ?? r.label ?? r.code;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const BIG = 1e15;

/** Non-finite or non-number inputs: NaN/undefined → 0, ±Infinity → ±1e15. */
function num(x: unknown): number {
  if (typeof x !== 'number' || Number.isNaN(x)) return 0;
  if (x === Infinity) return BIG;
  if (x === -Infinity) return -BIG;
  return Math.min(BIG, Math.max(-BIG, x));
}

function clamp(x: number, lo: number, hi: number): number {
  return x < lo ? lo : x > hi ? hi : x;
}

function round(x: number, digits: number): number {
  const m = 10 ** digits;
  return Math.round(x * m) / m;
}

function logistic(z: number): number {
  return 1 / (1 + Math.exp(-z));
}

/** raw feature values by index (I); NaN: the input is absent */
type Values = Float64Array;

/** Raw (pre-winsorisation) feature values of the financial block. */
function financialFeatures(f: Financials, out: Values): void {
  const ta = Math.max(num(f.total_assets), 1);
  const ca = Math.max(num(f.current_assets), 0);
  const cl = Math.max(num(f.current_liabilities), 0);
  const tl = Math.max(num(f.total_liabilities), 0);
  const eq = num(f.equity);
  const ebit = num(f.ebit);
  const ebitda = num(f.ebitda);
  const interest = Math.max(num(f.interest_expense), 0);
  const netDebt = Math.max(num(f.financial_debt), 0) - Math.max(num(f.cash), 0);

  // X4 is not monotone in liabilities when equity is negative (E/TL → 0⁻ as TL grows), so
  // negative equity is measured against total assets instead; both branches are 0 at E = 0.
  const eqToLiab = eq < 0 ? eq / ta : tl > 0 ? eq / tl : eq > 0 ? Infinity : 0;
  const currentRatio = cl > 0 ? ca / cl : Infinity;
  const cover = ebitda <= 0 ? 0 : interest === 0 ? Infinity : ebitda / interest;
  const ndEbitda = netDebt <= 0 ? 0 : ebitda <= 0 ? Infinity : netDebt / ebitda;

  out[I.wc_to_assets] = (ca - cl) / ta;
  out[I.current_ratio] = currentRatio;
  out[I.retained_earnings_to_assets] = num(f.retained_earnings) / ta;
  out[I.ebit_to_assets] = ebit / ta;
  out[I.equity_to_liabilities] = eqToLiab;
  out[I.sales_to_assets] = Math.max(num(f.revenue), 0) / ta;
  out[I.equity_ratio] = eq / ta;
  out[I.log_interest_cover] = Math.log1p(Math.min(cover, 50));
  out[I.net_debt_to_ebitda] = ndEbitda;
  out[I.negative_equity] = eq < 0 ? 1 : 0;
  out[I.equity_below_half_capital] = eq < 0.5 * Math.max(num(f.share_capital), 0) ? 1 : 0;
  out[I.operating_loss] = ebit < 0 ? 1 : 0;
}

function paymentFeatures(p: PaymentBehaviour, out: Values): void {
  out[I.dso_days] = num(p.dso_days);
  out[I.days_beyond_terms] = num(p.days_beyond_terms_avg);
  out[I.top_customer_share] = num(p.share_of_receivables_from_top_customer);
}

function creditFeatures(c: CreditRegister, out: Values): void {
  const exposure = Math.max(num(c.total_exposure_eur), 0);
  const overdue = Math.max(num(c.overdue_eur), 0);
  const share = exposure > 0 ? overdue / exposure : overdue > 0 ? 1 : 0;
  const woLit = Math.max(num(c.written_off_eur), 0) + Math.max(num(c.litigation_eur), 0);
  out[I.overdue_share] = share;
  out[I.any_overdue] = overdue > 0 ? 1 : 0;
  out[I.default_last_12m] = c.default_in_last_12m === true ? 1 : 0;
  out[I.written_off_or_litigation] = woLit > 0 ? 1 : 0;
  out[I.lenders_above_four] = num(c.institutions_count) - 4;
}

function taxFeatures(t: TaxAuthority, out: Values): void {
  out[I.tax_irregular] = t.status === 'regular' ? 0 : 1;
  out[I.not_vat_registered] = t.vat_registered === true ? 0 : 1;
}

function eventFeatures(e: LegalEvents, out: Values): void {
  out[I.insolvency] = e.insolvency_proceedings === true ? 1 : 0;
  out[I.restructuring] = e.restructuring_proceedings === true ? 1 : 0;
}

interface Driver {
  /** Reason code when the contribution is risk-increasing (> 0) / risk-reducing (< 0); null = unlabelled. */
  up: string | null;
  down: string | null;
  c: number;
}

// ---------------------------------------------------------------------------------------------
// Engine
// ---------------------------------------------------------------------------------------------

export function scoreCompany(profile: CompanyProfile, lang: Lang): ScoreResult {
  const fin = profile.financials;
  const pay = profile.payment_behaviour;
  const crc = profile.credit_register;
  const tax = profile.tax_authority;
  const ev = profile.events;

  // (the blocks write into one object: spreading one object per block was ~10 % of an evaluation)
  // scratch arrays of the module, reused: an evaluation runs to its end without yielding, and
  // nothing of them leaves it (allocating two typed arrays a call cost more than filling them)
  const raw: Values = RAW.fill(NaN);
  raw[I.log_age] = Math.log1p(clamp(num(profile.age_years), 0, 50));
  if (fin) financialFeatures(fin, raw);
  if (pay) paymentFeatures(pay, raw);
  if (crc) creditFeatures(crc, raw);
  if (tax) taxFeatures(tax, raw);
  if (ev) eventFeatures(ev, raw);

  // Contributions (absent features sit at their reference value: contribution 0).
  const c = CONTRIB;
  for (let i = 0; i < N_FEATURES; i++) {
    const v = raw[i]!;
    c[i] = v !== v ? 0 : BETA[i]! * (clamp(v, LO[i]!, HI[i]!) - REF[i]!);
  }

  let penalty = 0;
  if (!fin) penalty += MISSING_FINANCIALS_PENALTY;
  if (!crc) penalty += MISSING_CREDIT_REGISTER_PENALTY;

  let z = Z_REFERENCE + penalty;
  for (let i = 0; i < N_FEATURES; i++) z += c[i]!;

  const pdModel = round(clamp(logistic(z), PD_FLOOR, PD_CAP), 6);
  const hasPd = fin !== undefined || crc !== undefined;
  let pdForScale = pdModel;
  if (!hasPd) {
    const anyOther = pay !== undefined || tax !== undefined || ev !== undefined;
    pdForScale = Math.max(pdModel, anyOther ? NO_PD_FLOOR_WITH_DATA : NO_PD_FLOOR_NO_DATA);
  }

  // Components.
  // (an object literal of the names in order: one shape, no keyed writes)
  const g = (i: number) => {
    let sum = 0;
    for (const k of GROUP_INDEXES[i]!) sum += c[k]!;
    return round(1 / (1 + Math.exp(COMPONENT_SLOPE * sum)), 4);
  };
  const components: Record<ComponentName, number> = {
    financial_strength: g(0),
    profitability: g(1),
    liquidity: g(2),
    leverage: g(3),
    payment_behaviour: g(4),
    credit_history: g(5),
    tax_compliance: g(6),
    company_maturity: g(7),
    legal_events: g(8),
  };

  // Drivers → reasons.
  const drivers: Driver[] = [];
  const add = (up: string | null, down: string | null, value: number) => drivers.push({ up, down, c: value });

  if (fin) {
    const eqNeg = raw[I.negative_equity] === 1;
    const half = raw[I.equity_below_half_capital] === 1;
    const loss = raw[I.operating_loss] === 1;
    let equity = c[I.equity_to_liabilities]! + c[I.equity_ratio]! + c[I.negative_equity]!;
    if (half) add('EQUITY_BELOW_HALF_CAPITAL', null, c[I.equity_below_half_capital]!);
    else equity += c[I.equity_below_half_capital]!;
    add(eqNeg ? 'NEGATIVE_EQUITY' : 'WEAK_EQUITY', 'STRONG_EQUITY', equity);
    const re = raw[I.retained_earnings_to_assets]!;
    add(re < 0 ? 'ACCUMULATED_LOSSES' : 'LOW_RETAINED_EARNINGS', 'STRONG_RETAINED_EARNINGS', c[I.retained_earnings_to_assets]!);
    add(loss ? 'LOSS_MAKING' : 'WEAK_PROFITABILITY', 'STRONG_PROFITABILITY', c[I.ebit_to_assets]! + c[I.operating_loss]!);
    add('LOW_ASSET_TURNOVER', 'HIGH_ASSET_TURNOVER', c[I.sales_to_assets]!);
    add('WEAK_LIQUIDITY', 'STRONG_LIQUIDITY', c[I.wc_to_assets]! + c[I.current_ratio]!);
    add('HIGH_LEVERAGE', 'LOW_LEVERAGE', c[I.net_debt_to_ebitda]! + c[I.log_interest_cover]!);
  }
  if (pay) {
    add('SLOW_PAYER', 'PROMPT_PAYER', c[I.days_beyond_terms]!);
    add('SLOW_COLLECTION', 'FAST_COLLECTION', c[I.dso_days]!);
    add('HIGH_CONCENTRATION', 'DIVERSIFIED_CUSTOMERS', c[I.top_customer_share]!);
  }
  if (crc) {
    const adverse: [FeatureName, string][] = [
      ['default_last_12m', 'RECENT_DEFAULT'],
      ['written_off_or_litigation', 'WRITTEN_OFF_OR_LITIGATION'],
    ];
    let clean = 0;
    let clear = true;
    for (const [name, code] of adverse) {
      if (raw[I[name]] === 1) {
        add(code, null, c[I[name]]!);
        clear = false;
      } else clean += c[I[name]]!;
    }
    const overdue = c[I.overdue_share]! + c[I.any_overdue]!;
    if (raw[I.any_overdue] === 1) {
      add('OVERDUE_CREDIT', null, overdue);
      clear = false;
    } else clean += overdue;
    // The favourable part of a record that is not clean is kept (unlabelled) in the denominator.
    add(null, clear ? 'CLEAN_CREDIT_HISTORY' : null, clean);
    add('MANY_LENDERS', null, c[I.lenders_above_four]!);
  }
  if (tax) {
    add(raw[I.tax_irregular] === 1 ? 'TAX_IRREGULAR' : 'NOT_VAT_REGISTERED', 'TAX_COMPLIANT', c[I.tax_irregular]! + c[I.not_vat_registered]!);
  }
  const age = clamp(num(profile.age_years), 0, 50);
  add(age < 5 ? 'YOUNG_COMPANY' : null, age >= 10 ? 'ESTABLISHED_COMPANY' : null, c[I.log_age]!);
  if (ev) {
    add('INSOLVENCY_PROCEEDINGS', null, c[I.insolvency]!);
    add('RESTRUCTURING_PROCEEDINGS', null, c[I.restructuring]!);
  }
  // Limited data: the penalties, plus (pd = null) whatever the floor adds to the indicative PD.
  const lift = hasPd ? 0 : Math.max(0, logit(pdForScale) - z);
  add('LIMITED_DATA', null, penalty + lift);

  let total = 0;
  for (const d of drivers) total += Math.abs(d.c);
  const reasons: Reason[] = [];
  if (total > 0) {
    for (const d of drivers) {
      const code = d.c > 0 ? d.up : d.c < 0 ? d.down : null;
      if (code === null) continue;
      const weight = round(Math.abs(d.c) / total, 4);
      if (weight < MIN_REASON_WEIGHT) continue;
      const entry = REASON_CATALOGUE[code]!;
      reasons.push({ code, label: lang === 'pt' ? entry.pt : entry.en, impact: entry.impact, weight });
    }
  }
  reasons.sort((a, b) => b.weight - a.weight || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
  reasons.length = Math.min(reasons.length, MAX_REASONS);

  const data_sources: string[] = ['company_registry'];
  if (fin) data_sources.push('financial_statements');
  if (pay) data_sources.push('payment_behaviour');
  if (crc) data_sources.push('credit_register');
  if (tax) data_sources.push('tax_authority');
  if (ev) data_sources.push('legal_events');

  return {
    pd: hasPd ? pdModel : null,
    pd_scale: pdForScale,
    score: scoreForPd(pdForScale),
    tier: tierForPd(pdForScale),
    components,
    reasons,
    data_sources,
  };
}

function logit(p: number): number {
  return Math.log(p / (1 - p));
}
