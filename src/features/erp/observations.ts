/**
 * What a tenant's synced books say about a company, for scoring and credit decisions. Pure: the
 * documents and their matched payments in, the observations out (observations-store.ts loads them).
 */

export interface ObservedDocument {
  issue_date: string; // YYYY-MM-DD
  due_date: string | null;
  gross_cents: number;
  /** bank payments matched to the document: booking date and amount */
  payments: { date: string; amount_cents: number }[];
  /**
   * How far the bank data of the document's books reaches (YYYY-MM-DD), when known: past it a
   * payment may exist that was not synced yet, so a document falling due later is not judged.
   */
  payments_known_until?: string | null;
}

/** Paid more than this many days after the due date counts as paid late (bank value-date slack). */
export const LATE_GRACE_DAYS = 5;
/** An unpaid document's days beyond terms stop counting here (the engine's own cap). */
export const MAX_DAYS_BEYOND_TERMS = 180;
/** Enough to act on: at least this many documents past due, over at least this many months. */
export const MIN_DUE_DOCUMENTS = 3;
export const MIN_MONTHS_OBSERVED = 3;

export interface BuyerBehaviour {
  documents: number;
  due_documents: number;
  months_observed: number;
  /** over documents paid in full: days between the due date and the payment completing it (≥ 0) */
  days_late_avg: number | null;
  days_late_p90: number | null;
  share_paid_late: number | null;
  /** unpaid balance of documents past due, in euros */
  overdue_eur: number;
  /** over documents past due: days late when paid, days since due (capped) when not */
  days_beyond_terms: number | null;
  sufficient: boolean;
}

const DAY_MS = 86_400_000;
const dayNumber = (isoDate: string) => Math.floor(Date.parse(isoDate.slice(0, 10) + 'T00:00:00Z') / DAY_MS);
const round1 = (x: number) => Math.round(x * 10) / 10;

/** The date the payments reach the document's gross amount, or null while it is not paid in full. */
function paidInFullOn(doc: ObservedDocument): { day: number | null; paidCents: number } {
  let paid = 0;
  const sorted = [...doc.payments].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
  for (const p of sorted) {
    paid += p.amount_cents;
    if (paid >= doc.gross_cents) return { day: dayNumber(p.date), paidCents: paid };
  }
  return { day: null, paidCents: paid };
}

function percentile(sorted: number[], q: number): number {
  // nearest rank: the smallest value with at least q of the values at or below it
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1]!;
}

/**
 * How a buyer pays the tenant's books (documents where it is the customer), as of `asOf`
 * (YYYY-MM-DD), or of each document's `payments_known_until` when earlier.
 */
export function buyerBehaviour(docs: readonly ObservedDocument[], asOf: string): BuyerBehaviour {
  const asOfDay = dayNumber(asOf);
  const lateDays: number[] = [];
  const beyond: number[] = [];
  let overdueCents = 0;
  let dueCount = 0;
  const months = new Set<string>();
  for (const doc of docs) {
    months.add(doc.issue_date.slice(0, 7));
    if (!doc.due_date) continue;
    const today = doc.payments_known_until ? Math.min(asOfDay, dayNumber(doc.payments_known_until)) : asOfDay;
    const due = dayNumber(doc.due_date);
    const { day: paidDay, paidCents } = paidInFullOn(doc);
    if (paidDay !== null) {
      const late = Math.max(0, paidDay - due);
      lateDays.push(late);
      if (due < today) {
        dueCount++;
        beyond.push(Math.min(MAX_DAYS_BEYOND_TERMS, late));
      }
    } else if (due < today) {
      dueCount++;
      beyond.push(Math.min(MAX_DAYS_BEYOND_TERMS, today - due));
      overdueCents += Math.max(0, doc.gross_cents - paidCents);
    }
  }
  lateDays.sort((a, b) => a - b);
  const avg = (xs: number[]) => (xs.length ? round1(xs.reduce((s, x) => s + x, 0) / xs.length) : null);
  return {
    documents: docs.length,
    due_documents: dueCount,
    months_observed: months.size,
    days_late_avg: avg(lateDays),
    days_late_p90: lateDays.length ? percentile(lateDays, 0.9) : null,
    share_paid_late: lateDays.length ? Math.round((lateDays.filter((d) => d > LATE_GRACE_DAYS).length / lateDays.length) * 1000) / 1000 : null,
    overdue_eur: Math.round(overdueCents) / 100,
    days_beyond_terms: avg(beyond),
    sufficient: dueCount >= MIN_DUE_DOCUMENTS && months.size >= MIN_MONTHS_OBSERVED,
  };
}

export interface SellerDocument extends ObservedDocument {
  customer_nif: string | null;
  net_cents: number;
  /** credit notes reduce revenue */
  credit: boolean;
}

export interface SellerBooks {
  documents: number;
  revenue_last_12m_eur: number;
  revenue_prior_12m_eur: number;
  /** last 12 months over the 12 before, minus 1; null without a prior year */
  revenue_trend: number | null;
  /** the largest customer's share of the last 12 months' invoicing */
  top_customer_share: number | null;
  /** open receivables / last 12 months' invoicing × 365 */
  dso_days: number | null;
  sufficient: boolean;
}

/** The connected company's own books: revenue trend, customer concentration, DSO, as of `asOf`. */
export function sellerBooks(docs: readonly SellerDocument[], asOf: string): SellerBooks {
  const today = dayNumber(asOf);
  let last = 0;
  let prior = 0;
  let grossLast = 0;
  let open = 0;
  const byCustomer = new Map<string, number>();
  const months = new Set<string>();
  for (const d of docs) {
    const age = today - dayNumber(d.issue_date);
    if (age < 0) continue;
    const sign = d.credit ? -1 : 1;
    if (age < 365) {
      last += sign * d.net_cents;
      grossLast += sign * d.gross_cents;
      months.add(d.issue_date.slice(0, 7));
      const key = d.customer_nif ?? '(none)';
      byCustomer.set(key, (byCustomer.get(key) ?? 0) + sign * d.net_cents);
    } else if (age < 730) prior += sign * d.net_cents;
    if (!d.credit) open += Math.max(0, d.gross_cents - d.payments.reduce((s, p) => s + p.amount_cents, 0));
  }
  const top = Math.max(0, ...byCustomer.values());
  return {
    documents: docs.length,
    revenue_last_12m_eur: Math.round(last) / 100,
    revenue_prior_12m_eur: Math.round(prior) / 100,
    revenue_trend: prior > 0 ? Math.round((last / prior - 1) * 1000) / 1000 : null,
    top_customer_share: last > 0 ? Math.round(Math.min(1, top / last) * 1000) / 1000 : null,
    dso_days: grossLast > 0 ? round1((open / grossLast) * 365) : null,
    sufficient: months.size >= MIN_MONTHS_OBSERVED && last > 0,
  };
}
