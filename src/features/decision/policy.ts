/**
 * The credit policy: notched tier, limit, modality and spread from a PD and a company's size.
 * Pure (data in, result out: no clock, no I/O); docs/credit-policy.md states every formula and
 * works an example, and test/decision-policy.test.ts checks the monotonicity it promises.
 */
import { irbK } from '../capital/formulas';
import { money } from '../finance/money';
import { PD_FLOOR } from '../score/engine';

export const NOTCHES = ['A+', 'A', 'A-', 'B+', 'B', 'B-', 'C+', 'C', 'C-', 'D+', 'D', 'D-', 'E+', 'E', 'E-'] as const;
export type Notch = (typeof NOTCHES)[number];

/** Upper PD bound (inclusive) of each notch; the five tiers' bounds (0.4 %, 1.5 %, 5 %, 20 %) are the score's master scale. */
export const NOTCH_MAX_PD: Readonly<Record<Notch, number>> = {
  'A+': 0.001, A: 0.002, 'A-': 0.004,
  'B+': 0.007, B: 0.01, 'B-': 0.015,
  'C+': 0.025, C: 0.035, 'C-': 0.05,
  'D+': 0.075, D: 0.12, 'D-': 0.2,
  'E+': 0.35, E: 0.6, 'E-': 1,
};

export const notchIndex = (n: Notch) => NOTCHES.indexOf(n);
export const isNotch = (s: string): s is Notch => (NOTCHES as readonly string[]).includes(s);

export function notchForPd(pd: number): Notch {
  if (!(pd >= 0)) return 'E-'; // NaN or negative: the worst, never the best
  for (const n of NOTCHES) if (pd <= NOTCH_MAX_PD[n]) return n;
  return 'E-';
}

/** The PD a notch stands for when it is priced (the index): the geometric middle of its band. */
export function notchPd(n: Notch): number {
  const i = notchIndex(n);
  const lo = i === 0 ? PD_FLOOR : NOTCH_MAX_PD[NOTCHES[i - 1]!];
  const hi = Math.min(NOTCH_MAX_PD[n], 0.9999);
  return Math.sqrt(lo * hi);
}

export const OPERATION_TYPES = ['factoring', 'confirming', 'invoice_discounting', 'credit_line', 'trade_credit'] as const;
export type OperationType = (typeof OPERATION_TYPES)[number];
export const MODALITIES = ['non_recourse', 'recourse', 'with_insurance', 'secured', 'unsecured'] as const;
export type Modality = (typeof MODALITIES)[number];

/**
 * The modality offered per operation: the better tiers (A, B) get the lighter structure, the
 * weaker ones (C and below) the protected one (recourse to the seller, credit insurance, a guarantee).
 */
export const MODALITY_TABLE: Readonly<Record<OperationType, { strong: Modality; weak: Modality }>> = {
  factoring: { strong: 'non_recourse', weak: 'recourse' },
  confirming: { strong: 'non_recourse', weak: 'with_insurance' },
  invoice_discounting: { strong: 'recourse', weak: 'recourse' },
  credit_line: { strong: 'unsecured', weak: 'secured' },
  trade_credit: { strong: 'unsecured', weak: 'with_insurance' },
};
export const modalityFor = (op: OperationType, n: Notch): Modality => (notchIndex(n) <= notchIndex('B-') ? MODALITY_TABLE[op].strong : MODALITY_TABLE[op].weak);

export interface CreditPolicy {
  /** the worst notch still approved */
  min_tier: Notch;
  /** the most this tenant lends to one company, in euros */
  max_amount_eur: number;
  /** loss given default by modality (0–1) */
  lgd: Record<Modality, number>;
  /** added to every spread, in basis points (funding, operations, profit) */
  margin_bps: number;
}

export const DEFAULT_POLICY: Readonly<CreditPolicy> = Object.freeze({
  min_tier: 'D-' as Notch,
  max_amount_eur: 1_000_000,
  lgd: Object.freeze({ non_recourse: 0.45, recourse: 0.3, with_insurance: 0.1, secured: 0.25, unsecured: 0.45 }) as Record<Modality, number>,
  margin_bps: 50,
});

/** Share of the size base lent at each notch (E notches are only reached by a tenant that accepts them). */
export const LIMIT_MULTIPLIERS: Readonly<Record<Notch, number>> = {
  'A+': 1, A: 0.95, 'A-': 0.9, 'B+': 0.8, B: 0.7, 'B-': 0.6, 'C+': 0.5, C: 0.4, 'C-': 0.3,
  'D+': 0.2, D: 0.15, 'D-': 0.1, 'E+': 0.05, E: 0.03, 'E-': 0.01,
};
/** the size base: the larger of 10 % of revenue and 30 % of equity (a company with accounts) */
export const REVENUE_SHARE = 0.1;
export const EQUITY_SHARE = 0.3;
/** size base of a company without published accounts */
export const THIN_FILE_BASE_EUR = 10_000;
/** an approved tier is never offered less than this */
export const MIN_LIMIT_EUR = 1_000;
/** the term the size base is calibrated for; longer terms get less: × √(60 / term) */
export const REFERENCE_TERM_DAYS = 60;
/** adverse public events (default, insolvency, litigation) halve the limit */
export const ADVERSE_FACTOR = 0.5;
/** cost of capital charged on the capital an exposure consumes */
export const HURDLE_RATE = 0.1;
export const TERM_BUCKETS = [30, 60, 90, 180, 360] as const;

export interface CompanyFacts {
  /** probability of default over 12 months (the score's, or its indicative PD when it has none) */
  pd: number;
  revenue_eur: number | null;
  equity_eur: number | null;
  adverse: boolean;
}

export interface LimitResult {
  notch: Notch;
  declined: boolean;
  limit_eur: number;
  basis: string[];
}

/** a number as the language writes it (a decimal comma in Portuguese) */
const num = (x: number | string, lang: BasisLang) => (lang === 'pt' ? String(x).replace('.', ',') : String(x));
/**
 * Euros as the product writes them everywhere (the notice PDF, the supplier portal): €1,350,000.00 /
 * 1 350 000,00 €, always with cents, in every basis line.
 */
export const eur = (euros: number, lang: BasisLang) => money(Math.round(euros * 100), lang === 'pt' ? 'pt-PT' : 'en');
export type BasisLang = 'en' | 'pt';

/** The basis lines of a limit and a decision, in English or Portuguese (Accept-Language, as the signals). */
export const BASIS = {
  en: {
    notch: (n: Notch, pdPct: string) => `notch ${n} (PD ${pdPct} %)`,
    belowMinTier: (min: string) => `declined: below the minimum tier ${min}`,
    thinFile: (base: number) => `no published accounts: base ${eur(base, 'en')}`,
    revenueBase: (rev: number, base: number) => `base 10 % of revenue ${eur(rev, 'en')}: ${eur(base, 'en')}`,
    equityBase: (eq: number, base: number) => `base 30 % of equity ${eur(eq, 'en')}: ${eur(base, 'en')}`,
    notchFactor: (m: number, n: Notch) => `× ${m} for notch ${n}`,
    termFactor: (f: string, days: number) => `× ${f} for a ${days}-day term`,
    adverse: () => '× 0.5 for adverse events',
    product: (x: number) => `= ${eur(x, 'en')}`,
    capped: (max: number) => `capped at the policy maximum: ${eur(max, 'en')}`,
    thousand: (x: number) => `rounded down to the thousand: ${eur(x, 'en')}`,
    minimum: (min: number) => `raised to the minimum limit: ${eur(min, 'en')}`,
    aboveLimit: (amount: number, limit: number) => `declined: amount ${eur(amount, 'en')} above the limit ${eur(limit, 'en')}`,
    indexRow: (n: Notch, term: number, m: Modality, bps: number) => `spread: index ${n}, ${term} days, ${m}: ${bps} bps`,
    floor: (n: Notch, term: number, m: Modality, bps: number) => `not below the better notch's index ${n}, ${term} days, ${m}: ${bps} bps`,
    ownLoss: (pdPct: string, lgd: number, el: number, margin: number, bps: number) => `not below the company's own expected loss: PD ${pdPct} % × LGD ${lgd} = ${el} bps, + ${margin} bps margin: ${bps} bps`,
  },
  pt: {
    notch: (n: Notch, pdPct: string) => `nível ${n} (PD ${num(pdPct, 'pt')} %)`,
    belowMinTier: (min: string) => `recusado: abaixo do nível mínimo ${min}`,
    thinFile: (base: number) => `sem contas publicadas: base de ${eur(base, 'pt')}`,
    revenueBase: (rev: number, base: number) => `base: 10 % do volume de negócios de ${eur(rev, 'pt')}: ${eur(base, 'pt')}`,
    equityBase: (eq: number, base: number) => `base: 30 % dos capitais próprios de ${eur(eq, 'pt')}: ${eur(base, 'pt')}`,
    notchFactor: (m: number, n: Notch) => `× ${num(m, 'pt')} pelo nível ${n}`,
    termFactor: (f: string, days: number) => `× ${num(f, 'pt')} por um prazo de ${days} dias`,
    adverse: () => '× 0,5 por eventos adversos',
    product: (x: number) => `= ${eur(x, 'pt')}`,
    capped: (max: number) => `limitado ao máximo da política: ${eur(max, 'pt')}`,
    thousand: (x: number) => `arredondado por defeito ao milhar: ${eur(x, 'pt')}`,
    minimum: (min: number) => `elevado ao limite mínimo: ${eur(min, 'pt')}`,
    aboveLimit: (amount: number, limit: number) => `recusado: montante de ${eur(amount, 'pt')} acima do limite de ${eur(limit, 'pt')}`,
    indexRow: (n: Notch, term: number, m: Modality, bps: number) => `spread: índice ${n}, ${term} dias, ${m}: ${bps} pb`,
    floor: (n: Notch, term: number, m: Modality, bps: number) => `não inferior ao índice do nível melhor ${n}, ${term} dias, ${m}: ${bps} pb`,
    ownLoss: (pdPct: string, lgd: number, el: number, margin: number, bps: number) => `não inferior à perda esperada da própria empresa: PD ${num(pdPct, 'pt')} % × LGD ${num(lgd, 'pt')} = ${el} pb, + ${margin} pb de margem: ${bps} pb`,
  },
} as const;

const termFactor = (termDays: number) => Math.min(1, Math.sqrt(REFERENCE_TERM_DAYS / Math.max(1, termDays)));

/** The most this tenant should lend the company over `termDays`: 0 exactly when its notch is declined. */
export function creditLimit(facts: CompanyFacts, termDays: number, policy: CreditPolicy = DEFAULT_POLICY, lang: BasisLang = 'en'): LimitResult {
  const notch = notchForPd(facts.pd);
  const B = BASIS[lang];
  const basis: string[] = [B.notch(notch, (facts.pd * 100).toFixed(2))];
  if (notchIndex(notch) > notchIndex(policy.min_tier)) {
    basis.push(B.belowMinTier(policy.min_tier));
    return { notch, declined: true, limit_eur: 0, basis };
  }
  const revenue = facts.revenue_eur !== null && facts.revenue_eur > 0 ? facts.revenue_eur : 0;
  const equity = facts.equity_eur !== null && facts.equity_eur > 0 ? facts.equity_eur : 0;
  let base: number;
  if (facts.revenue_eur === null && facts.equity_eur === null) {
    base = THIN_FILE_BASE_EUR;
    basis.push(B.thinFile(THIN_FILE_BASE_EUR));
  } else {
    base = Math.max(revenue * REVENUE_SHARE, equity * EQUITY_SHARE);
    basis.push(revenue * REVENUE_SHARE >= equity * EQUITY_SHARE ? B.revenueBase(revenue, base) : B.equityBase(equity, base));
  }
  let limit = base * LIMIT_MULTIPLIERS[notch];
  basis.push(B.notchFactor(LIMIT_MULTIPLIERS[notch], notch));
  const tf = termFactor(termDays);
  if (tf < 1) {
    limit *= tf;
    basis.push(B.termFactor(tf.toFixed(4), termDays));
  }
  if (facts.adverse) {
    limit *= ADVERSE_FACTOR;
    basis.push(B.adverse());
  }
  // every step after the product that changes the figure has its line, so the lines multiply out to limit_eur
  basis.push(B.product(limit));
  if (limit > policy.max_amount_eur) {
    limit = policy.max_amount_eur;
    basis.push(B.capped(limit));
  }
  const thousands = Math.floor(limit / 1000) * 1000;
  if (thousands >= MIN_LIMIT_EUR && thousands !== limit) basis.push(B.thousand(thousands));
  // (policy.max_amount_eur ≥ MIN_LIMIT_EUR: the minimum never passes the maximum)
  if (thousands < MIN_LIMIT_EUR) basis.push(B.minimum(MIN_LIMIT_EUR));
  return { notch, declined: false, limit_eur: Math.max(MIN_LIMIT_EUR, thousands), basis };
}

/**
 * IRB capital per euro of exposure (CRR art. 153(1)), with the effective maturity M = term in years
 * taken as it is (not floored at 1 year as the CRR does) so that a shorter term prices lower.
 */
export function irbCapital(pd: number, lgd: number, maturityYears: number): number {
  return irbK(Math.min(Math.max(pd, 0.0003), 0.9999), lgd, maturityYears).k;
}

/** Annual spread in bps: expected loss (PD × LGD) + the hurdle rate on IRB capital + the margin. */
export function spreadFor(pd: number, termDays: number, lgd: number, marginBps: number): number {
  const expectedLoss = pd * lgd;
  const capitalCharge = HURDLE_RATE * irbCapital(pd, lgd, termDays / 365);
  return Math.ceil((expectedLoss + capitalCharge) * 10_000 + marginBps - 1e-9);
}

/** The index's spread for a notch, term and modality (priced at the notch's PD). */
export const indexSpread = (n: Notch, termDays: number, modality: Modality, policy: CreditPolicy = DEFAULT_POLICY) =>
  spreadFor(notchPd(n), termDays, policy.lgd[modality], policy.margin_bps);

export interface DecisionInput extends CompanyFacts {
  operation_type: OperationType;
  amount_eur: number;
  term_days: number;
}

export interface PolicyDecision extends LimitResult {
  approved: boolean;
  modality: Modality;
  spread_bps: number;
  lgd: number;
}

/**
 * The price of a notch as the index and the decisions have it: the notch's own index row, never
 * below the row of a better notch (each at the modality `modalityOf` gives it: a weaker notch may
 * move to a protected modality with a lower LGD). `row` names the index row the price is: the
 * notch's own, or the better notch's that floors it (GET /v1/index/spreads lists both).
 */
export function notchPrice(notch: Notch, termDays: number, modalityOf: (n: Notch) => Modality, policy: CreditPolicy): { spread: number; own: { notch: Notch; modality: Modality; spread: number }; row: { notch: Notch; modality: Modality; spread: number } } {
  const own = { notch, modality: modalityOf(notch), spread: indexSpread(notch, termDays, modalityOf(notch), policy) };
  let row = own;
  for (let i = notchIndex(notch) - 1; i >= 0; i--) {
    const n = NOTCHES[i]!;
    const spread = indexSpread(n, termDays, modalityOf(n), policy);
    if (spread > row.spread) row = { notch: n, modality: modalityOf(n), spread };
  }
  return { spread: row.spread, own, row };
}

/**
 * The company's own annual expected loss plus the margin, in bps: no spread is below it. A notch is
 * priced at the middle of its PD band, so a company near the top of a wide band (D- and worse; the
 * open-ended E- above all) would otherwise pay less than the loss it is expected to cause. The PD is
 * the one the decision reads its notch from (the score's, or its indicative PD).
 */
export const ownLossSpread = (pd: number, lgd: number, marginBps: number) => Math.ceil(Math.min(Math.max(pd, 0), 1) * lgd * 10_000 + marginBps - 1e-9);

/**
 * The spread of an operation whose modality is the caller's (a factoring operation without recourse
 * on a debtor the decision would take with recourse, or with recourse on one it would take without):
 * the decision's own when the modalities agree, else the index's for the operation's modality at the
 * same notch and term (its LGD: higher without recourse, lower with it), never below the company's
 * own expected loss at that LGD when its PD is given.
 */
export const spreadForModality = (notch: Notch, termDays: number, modality: Modality, decision: { modality: Modality; spreadBps: number }, policy: CreditPolicy = DEFAULT_POLICY, pd?: number) =>
  modality === decision.modality ? decision.spreadBps : spreadAtModality(notch, termDays, modality, policy, pd);

/**
 * The index's spread for a notch and term at one modality (never below a better notch's at it): an
 * insured amount's price, the with_insurance LGD at the same notch, even where the decision's own
 * modality is already with_insurance (trade credit below B-) and its spread the floor of better
 * notches taken unsecured; never below the company's own expected loss at that LGD when `pd` is given.
 */
export const spreadAtModality = (notch: Notch, termDays: number, modality: Modality, policy: CreditPolicy = DEFAULT_POLICY, pd?: number) =>
  Math.max(notchPrice(notch, termDays, () => modality, policy).spread, pd === undefined ? 0 : ownLossSpread(pd, policy.lgd[modality], policy.margin_bps));

/**
 * The decision: approved when the notch is within appetite and the amount within the limit.
 * The spread is the index's for the notch (priced at the notch's PD, as GET /v1/index/spreads) at
 * the exact term and the notch's modality, never below what a better notch would pay (a weaker
 * notch may move to a protected modality with a lower LGD: that notch's index row), and never
 * below the company's own expected loss plus the margin. The basis names the index row and each
 * step above it.
 */
export function decide(input: DecisionInput, policy: CreditPolicy = DEFAULT_POLICY, lang: BasisLang = 'en'): PolicyDecision {
  const limit = creditLimit(input, input.term_days, policy, lang);
  const B = BASIS[lang];
  const modality = modalityFor(input.operation_type, limit.notch);
  const price = notchPrice(limit.notch, input.term_days, (n) => modalityFor(input.operation_type, n), policy);
  const approved = !limit.declined && input.amount_eur <= limit.limit_eur;
  if (!limit.declined && !approved) limit.basis.push(B.aboveLimit(input.amount_eur, limit.limit_eur));
  limit.basis.push(B.indexRow(price.own.notch, input.term_days, price.own.modality, price.own.spread));
  if (price.row !== price.own) limit.basis.push(B.floor(price.row.notch, input.term_days, price.row.modality, price.row.spread));
  let spread = price.spread;
  const lgd = policy.lgd[modality];
  const ownLoss = ownLossSpread(input.pd, lgd, policy.margin_bps);
  if (ownLoss > spread) {
    spread = ownLoss;
    limit.basis.push(B.ownLoss((input.pd * 100).toFixed(2), lgd, Math.round(input.pd * lgd * 10_000), policy.margin_bps, ownLoss));
  }
  return { ...limit, approved, modality, spread_bps: spread, lgd };
}
