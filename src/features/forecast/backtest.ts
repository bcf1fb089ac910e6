import { demoInvoices, demoTransactions } from '../erp/demo-data';
import { balanceOn, forecast, type ForecastInvoice, type ForecastTransaction } from './engine';

/**
 * The forecast against what happened, on the sandbox demo books: from each forecast date t, the
 * forecast of weeks 1…13 is compared with the balance the bank movements show at the end of each
 * week. Reports the mean absolute error of p50 (euros, and relative to the mean absolute balance)
 * and how often the realised balance fell inside the p10–p90 band.
 */
export function backtestOnDemo(o: { seed?: string; invoices?: number; start?: string; origins?: string[]; weeks?: number; paths?: number } = {}) {
  const opts = { seed: o.seed ?? 'backtest:demo', invoices: o.invoices ?? 2000, startDate: o.start ?? '2026-01-05' };
  const inv = [...demoInvoices(opts)].filter((i) => i.status === 'N' && i.document_type !== 'NC');
  const txns: ForecastTransaction[] = [...demoTransactions(opts)].map((t) => ({ date: t.booking_date, amount_cents: t.amount_cents, description: t.description, matched: !!t.matched_invoice_number && t.amount_cents > 0 }));
  const payments = new Map<string, { date: string; amount_cents: number }[]>();
  for (const t of demoTransactions(opts)) if (t.matched_invoice_number && t.amount_cents > 0) payments.set(t.matched_invoice_number, [...(payments.get(t.matched_invoice_number) ?? []), { date: t.booking_date, amount_cents: t.amount_cents }]);
  const weeks = o.weeks ?? 13;
  const origins = o.origins ?? ['2026-04-06', '2026-05-04', '2026-06-01', '2026-06-29', '2026-07-27', '2026-08-24', '2026-09-21'];
  const errorsByWeek = Array.from({ length: weeks }, () => [] as number[]);
  let inside = 0;
  let total = 0;
  let absBalance = 0;
  for (const asOf of origins) {
    const invoices: ForecastInvoice[] = inv
      .filter((i) => i.issue_date <= asOf)
      .map((i) => ({ number: i.number, customer: i.customer_nif, issue_date: i.issue_date, due_date: i.due_date, gross_cents: i.gross_total_cents, payments: payments.get(i.number) ?? [] }));
    const known = txns.filter((t) => t.date <= asOf);
    const r = forecast({ as_of: asOf, weeks, opening_balance_cents: balanceOn(0, known, asOf), invoices, transactions: known, payables: [], paths: o.paths ?? 300 });
    for (const w of r.weeks) {
      const actual = balanceOn(0, txns, w.end);
      errorsByWeek[w.week - 1]!.push(Math.abs(w.balance_p50_cents - actual));
      absBalance += Math.abs(actual);
      total++;
      if (actual >= w.balance_p10_cents && actual <= w.balance_p90_cents) inside++;
    }
  }
  const mae = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
  const all = errorsByWeek.flat();
  return {
    origins: origins.length,
    comparisons: total,
    mae_eur_by_week: errorsByWeek.map((e) => Math.round(mae(e)) / 100),
    mae_eur: Math.round(mae(all)) / 100,
    mean_abs_balance_eur: Math.round(absBalance / Math.max(1, total)) / 100,
    relative_mae: mae(all) / Math.max(1, absBalance / Math.max(1, total)),
    band_coverage: inside / Math.max(1, total),
  };
}
