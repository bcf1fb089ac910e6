/**
 * A 13-week cash-flow forecast, direct method (REFERENCE §13): opening balance + receipts from the
 * open receivables, placed by each customer's observed payment delays, − payables and the recurring
 * outflows found in the bank data = closing balance per week, with p10/p50/p90 bands from the
 * spread of the delays (a seeded Monte Carlo: the same input gives the same answer). Pure: data in,
 * result out, no clock, no I/O.
 */
import { fnv1a32, mulberry32 } from '../../lib/prng';
export const FORECAST_ALGORITHM_VERSION = 'forecast-1.0.0';
const DAY_MS = 86_400_000;
const day = (iso: string) => Math.floor(Date.parse(`${iso.slice(0, 10)}T00:00:00Z`) / DAY_MS);
const iso = (d: number) => new Date(d * DAY_MS).toISOString().slice(0, 10);

export interface ForecastInvoice {
  number: string;
  customer: string; // NIF or name: whose payment habits apply
  issue_date: string;
  due_date: string | null;
  gross_cents: number;
  /** payments matched to it (bank transactions), as of the forecast date */
  payments: { date: string; amount_cents: number }[];
}
export interface ForecastTransaction {
  date: string;
  amount_cents: number;
  description: string;
  /** it pays one of the invoices (its receipt is forecast from the invoice, not from history) */
  matched?: boolean;
}
export interface ForecastInput {
  as_of: string;
  weeks: number;
  opening_balance_cents: number;
  invoices: ForecastInvoice[];
  transactions: ForecastTransaction[];
  payables: { due_date: string; amount_cents: number; counterparty?: string }[];
  /** draws of the Monte Carlo */
  paths?: number;
}
export interface RecurringOutflow {
  label: string;
  amount_cents: number;
  day_of_month: number;
  occurrences: number;
}
export interface ForecastWeek {
  week: number;
  start: string;
  end: string;
  receipts_p50_cents: number;
  payments_cents: number;
  balance_p10_cents: number;
  balance_p50_cents: number;
  balance_p90_cents: number;
  at_risk: boolean;
}
export interface ForecastResult {
  as_of: string;
  opening_balance_cents: number;
  weeks: ForecastWeek[];
  weeks_at_risk: number[];
  assumptions: {
    open_receivables: number;
    open_receivables_cents: number;
    /** the share of invoices paid at all, as the books show it */
    collection_rate: number;
    presumed_unpaid: number;
    /** receipts from invoices not issued yet: the last 13 weeks' average, phased in by the issue-to-payment lag */
    new_business_weekly_cents: number;
    customers_with_own_delays: number;
    portfolio_delay_days: { p10: number; p50: number; p90: number; observations: number };
    default_terms_days: number;
    recurring_outflows: RecurringOutflow[];
    /** the weekly movement neither the invoices nor the recurring outflows explain, over the last 26 weeks */
    unexplained_weekly_cents: { p10: number; p50: number; p90: number };
    payables: number;
    paths: number;
    never_collected_after_days: number;
  };
  algorithm_version: string;
}

/** receivables unpaid this long after their due date are not expected any more */
export const NEVER_COLLECTED_AFTER_DAYS = 180;
/** an invoice unpaid this many days after its due date is presumed not to be paid when estimating collection rates */
export const PRESUMED_UNPAID_DAYS = 90;
/** a customer needs this many paid invoices for delays of its own; else the portfolio's */
export const MIN_OWN_OBSERVATIONS = 3;
const DEFAULT_TERMS_DAYS = 30;
/** the portfolio's delays when the books show none at all */
const FALLBACK_DELAYS = [0, 0, 5, 10, 15, 30, 45, 60];

const q = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;

/** Days paid after the due date, per customer, from the invoices paid in full by the forecast date. */
function observedDelays(invoices: ForecastInvoice[], asOf: number) {
  const byCustomer = new Map<string, number[]>();
  const all: number[] = [];
  /** days from issue to full payment, of the paid invoices */
  const lags: number[] = [];
  /** days past due of the invoices still unpaid */
  const unpaidAges: number[] = [];
  /** invoices due long enough ago to know whether they get paid: the delay, or null when unpaid */
  const matured: (number | null)[] = [];
  for (const inv of invoices) {
    const due = inv.due_date ? day(inv.due_date) : day(inv.issue_date) + DEFAULT_TERMS_DAYS;
    let paid = 0;
    let on: number | null = null;
    for (const p of [...inv.payments].sort((a, b) => (a.date < b.date ? -1 : 1))) {
      if (day(p.date) > asOf) break;
      paid += p.amount_cents;
      if (paid >= inv.gross_cents) {
        on = day(p.date);
        break;
      }
    }
    const isMatured = inv.due_date !== null && due <= asOf - PRESUMED_UNPAID_DAYS;
    if (on === null) {
      if (asOf > due && day(inv.issue_date) <= asOf) unpaidAges.push(asOf - due);
      if (isMatured) matured.push(null);
      continue;
    }
    const delay = on - due;
    if (isMatured) matured.push(delay);
    lags.push(on - day(inv.issue_date));
    all.push(delay);
    byCustomer.set(inv.customer, [...(byCustomer.get(inv.customer) ?? []), delay]);
  }
  return { byCustomer, all: all.sort((a, b) => a - b), lags: lags.sort((a, b) => a - b), unpaidAges, matured };
}

const labelOf = (description: string) => description.toUpperCase().replace(/[0-9/.,:-]+/g, ' ').replace(/\s+/g, ' ').trim().split(' ').slice(0, 3).join(' ');

/**
 * The rest of the bank's movement, week by week over the last 26 weeks: what neither the invoices'
 * payments nor the recurring outflows explain (card settlements, supplier payments, refunds…). Its
 * weeks are drawn into each path, so the band carries the uncertainty the model does not explain.
 */
export function residualWeeks(transactions: ForecastTransaction[], asOf: number, recurring: RecurringOutflow[]): number[] {
  const labels = new Set(recurring.map((r) => r.label));
  const weeks = new Array<number>(26).fill(0);
  for (const t of transactions) {
    const d = day(t.date);
    if (d > asOf || d <= asOf - 26 * 7 || t.matched || (t.amount_cents < 0 && labels.has(labelOf(t.description)))) continue;
    weeks[Math.floor((asOf - d) / 7)]! += t.amount_cents;
  }
  return weeks;
}

/** Outflows that come back each month: the same kind of description, a similar amount, in at least 3 of the last 6 months. */
export function recurringOutflows(transactions: ForecastTransaction[], asOf: number): RecurringOutflow[] {
  const since = asOf - 183;
  const groups = new Map<string, { day: number; amount: number; month: string }[]>();
  for (const t of transactions) {
    const d = day(t.date);
    if (t.amount_cents >= 0 || d > asOf || d < since) continue;
    const label = labelOf(t.description);
    if (!label) continue;
    const list = groups.get(label) ?? [];
    list.push({ day: Number(t.date.slice(8, 10)), amount: -t.amount_cents, month: t.date.slice(0, 7) });
    groups.set(label, list);
  }
  const out: RecurringOutflow[] = [];
  for (const [label, list] of groups) {
    const months = new Set(list.map((x) => x.month));
    if (months.size < 3) continue;
    // one movement per month (the month's total) keeps a split payment from looking like two
    const perMonth = [...months].map((m) => list.filter((x) => x.month === m));
    const totals = perMonth.map((xs) => xs.reduce((s, x) => s + x.amount, 0)).sort((a, b) => a - b);
    const median = q(totals, 0.5);
    const similar = totals.filter((x) => Math.abs(x - median) <= 0.25 * median).length;
    if (similar < 3) continue;
    const days = perMonth.map((xs) => xs[0]!.day).sort((a, b) => a - b);
    out.push({ label, amount_cents: median, day_of_month: q(days, 0.5), occurrences: list.length });
  }
  return out.sort((a, b) => b.amount_cents - a.amount_cents || a.label.localeCompare(b.label));
}

export function forecast(input: ForecastInput): ForecastResult {
  const asOf = day(input.as_of);
  const horizon = input.weeks * 7;
  const paths = input.paths ?? 500;
  const { byCustomer, all, lags, unpaidAges, matured } = observedDelays(input.invoices, asOf);
  const portfolio = all.length ? all : FALLBACK_DELAYS;
  // the chance an invoice overdue by d days is still paid: among the invoices due long enough ago to
  // know (PRESUMED_UNPAID_DAYS), of those that waited past d, the share that was paid
  const presumedUnpaid = matured.filter((d) => d === null).length;
  const collectProbability = (overdue: number) => {
    const paidLater = matured.filter((d) => d !== null && d > overdue).length;
    return paidLater + presumedUnpaid === 0 ? 1 : paidLater / (paidLater + presumedUnpaid);
  };
  // invoices not issued yet: the recent weekly collections, arriving as the issue-to-payment lag allows
  const recentWeeks = 13;
  const recentReceipts = input.transactions.filter((t) => t.matched && day(t.date) <= asOf && day(t.date) > asOf - recentWeeks * 7).reduce((s, t) => s + t.amount_cents, 0);
  const weeklyRunRate = recentReceipts / recentWeeks;
  const lagShare = (days: number) => (lags.length ? lags.filter((l) => l <= days).length / lags.length : 0);

  // what is still open at the forecast date, and when it is due
  // documents with no due date (FS, FR) are settled when issued: by transfer, or in cash or by card outside the bank's books
  const open = input.invoices
    .filter((inv) => inv.due_date !== null)
    .map((inv) => {
      const paid = inv.payments.filter((p) => day(p.date) <= asOf).reduce((s, p) => s + p.amount_cents, 0);
      const due = inv.due_date ? day(inv.due_date) : day(inv.issue_date) + DEFAULT_TERMS_DAYS;
      return { inv, remaining: inv.gross_cents - paid, due };
    })
    .filter((o) => o.remaining > 0 && day(o.inv.issue_date) <= asOf && asOf - o.due <= NEVER_COLLECTED_AFTER_DAYS);

  // the outflows: payables on their due dates, recurring items on their day of each month
  const outflowByDay = new Map<number, number>();
  const addOut = (d: number, cents: number) => {
    if (d > asOf && d <= asOf + horizon) outflowByDay.set(d, (outflowByDay.get(d) ?? 0) + cents);
  };
  for (const p of input.payables) addOut(Math.max(asOf + 1, day(p.due_date)), p.amount_cents);
  const recurring = recurringOutflows(input.transactions, asOf);
  for (const r of recurring) {
    const start = new Date(asOf * DAY_MS);
    for (let m = 0; m <= Math.ceil(input.weeks / 4) + 1; m++) {
      const y = start.getUTCFullYear();
      const mo = start.getUTCMonth() + m;
      const last = new Date(Date.UTC(y, mo + 1, 0)).getUTCDate();
      addOut(Math.floor(Date.UTC(y, mo, Math.min(r.day_of_month, last)) / DAY_MS), r.amount_cents);
    }
  }
  const weekOf = (d: number) => Math.floor((d - asOf - 1) / 7); // day asOf+1 is week 0
  const paymentsPerWeek = new Array<number>(input.weeks).fill(0);
  for (const [d, cents] of outflowByDay) paymentsPerWeek[weekOf(d)]! += cents;

  // Monte Carlo over the receipts: each open invoice is paid its customer's delay (a draw) after its due date
  const rand = mulberry32(fnv1a32(open.map((o) => o.inv.number).join('|')) ^ asOf);
  const balances: number[][] = Array.from({ length: input.weeks }, () => new Array<number>(paths));
  const receipts: number[][] = Array.from({ length: input.weeks }, () => new Array<number>(paths));
  const delaysOf = (customer: string) => {
    const own = byCustomer.get(customer);
    return own && own.length >= MIN_OWN_OBSERVATIONS ? own : portfolio;
  };
  const residuals = residualWeeks(input.transactions, asOf, recurring);
  const hasHistory = input.transactions.some((t) => day(t.date) <= asOf - 26 * 7);
  for (let p = 0; p < paths; p++) {
    const inWeek = new Array<number>(input.weeks).fill(0);
    for (const o of open) {
      const delays = delaysOf(o.inv.customer);
      const overdue = asOf - o.due;
      // not paid by today: its delay is longer than what it has already waited (a draw among those;
      // a delay before today cannot be, even for an invoice not yet due that others pay early)
      const longer = delays.filter((d) => d > overdue);
      if (!longer.length) continue; // later than anything observed: not expected in the horizon
      if (rand() >= collectProbability(overdue)) continue; // this path: never paid
      const delay = longer[Math.floor(rand() * longer.length)]!;
      const w = weekOf(Math.max(asOf + 1, o.due + delay));
      if (w < input.weeks) inWeek[w]! += o.remaining;
    }
    let balance = input.opening_balance_cents;
    for (let w = 0; w < input.weeks; w++) {
      // a past week's unexplained movement (of the weeks the data covers)
      const residual = residuals[Math.floor(rand() * (hasHistory ? 26 : Math.max(1, Math.ceil((asOf - Math.min(asOf, ...input.transactions.map((t) => day(t.date)))) / 7)))) % 26]!;
      const fresh = Math.round(weeklyRunRate * lagShare(7 * (w + 1) - 3));
      inWeek[w]! += fresh;
      balance += inWeek[w]! - paymentsPerWeek[w]! + residual;
      balances[w]![p] = balance;
      receipts[w]![p] = inWeek[w]!;
    }
  }
  const weeks: ForecastWeek[] = [];
  for (let w = 0; w < input.weeks; w++) {
    const b = balances[w]!.sort((x, y) => x - y);
    const r = receipts[w]!.sort((x, y) => x - y);
    const p10 = q(b, 0.1);
    const p50 = q(b, 0.5);
    weeks.push({
      week: w + 1,
      start: iso(asOf + 1 + 7 * w),
      end: iso(asOf + 7 * (w + 1)),
      receipts_p50_cents: q(r, 0.5),
      payments_cents: paymentsPerWeek[w]!,
      balance_p10_cents: p10,
      balance_p50_cents: p50,
      balance_p90_cents: q(b, 0.9),
      at_risk: p10 < 0 || p50 < 0,
    });
  }
  return {
    as_of: input.as_of,
    opening_balance_cents: input.opening_balance_cents,
    weeks,
    weeks_at_risk: weeks.filter((w) => w.at_risk).map((w) => w.week),
    assumptions: {
      open_receivables: open.length,
      open_receivables_cents: open.reduce((s, o) => s + o.remaining, 0),
      collection_rate: Math.round(collectProbability(-10_000) * 1000) / 1000,
      presumed_unpaid: presumedUnpaid,
      new_business_weekly_cents: Math.round(weeklyRunRate),
      customers_with_own_delays: [...byCustomer.values()].filter((d) => d.length >= MIN_OWN_OBSERVATIONS).length,
      portfolio_delay_days: { p10: q(portfolio, 0.1), p50: q(portfolio, 0.5), p90: q(portfolio, 0.9), observations: all.length },
      default_terms_days: DEFAULT_TERMS_DAYS,
      recurring_outflows: recurring,
      unexplained_weekly_cents: { p10: q([...residuals].sort((a, b) => a - b), 0.1), p50: q([...residuals].sort((a, b) => a - b), 0.5), p90: q([...residuals].sort((a, b) => a - b), 0.9) },
      payables: input.payables.length,
      paths,
      never_collected_after_days: NEVER_COLLECTED_AFTER_DAYS,
    },
    algorithm_version: FORECAST_ALGORITHM_VERSION,
  };
}

/** The bank balance on a date from the movements: the opening balance plus every movement up to it. */
export const balanceOn = (opening: number, transactions: ForecastTransaction[], date: string) => opening + transactions.filter((t) => t.date <= date).reduce((s, t) => s + t.amount_cents, 0);
