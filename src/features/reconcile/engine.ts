/**
 * Bank reconciliation, pure and deterministic: bank credits against open invoices, by the rules a
 * bookkeeper applies, most certain first (docs/reconcile.md):
 *   1. reference — the invoice number or ATCUD printed in the description (FT 2026/123, FT2026/123,
 *      CSDF7T5H-123); one payment may name several invoices, several payments one invoice;
 *   2. sequence — only the number's sequence printed ("FACT 123"), confirmed by the payer's name
 *      and the amount;
 *   3. amount_date — no reference: the one open invoice of the payer with that amount (within the
 *      fee tolerance) issued before the payment and not long overdue;
 *   4. combination — one payment for several invoices of the payer (a bounded subset search).
 * Amounts are integer cents. An ambiguous case is left unmatched: precision first.
 */
import { tokens } from '../aml/matcher';

export interface BankTransaction {
  id: string;
  date: string; // YYYY-MM-DD
  amount_cents: number; // > 0 credit
  description: string;
  counterparty?: string | null;
}

export interface OpenInvoice {
  id: string;
  number: string; // 'FT 2026/123'
  atcud?: string | null;
  customer_nif?: string | null;
  customer_name?: string | null;
  issue_date: string;
  due_date?: string | null;
  amount_open_cents: number;
}

export type Rule = 'reference' | 'sequence' | 'amount_date' | 'combination' | 'partial';

export interface ReconMatch {
  transaction_ids: string[];
  invoice_ids: string[];
  amount_cents: number;
  confidence: number;
  rule: Rule;
  explanation: string;
}

export interface ReconOptions {
  /** a payment may fall short of (or exceed) the invoice by this much (bank fees), in cents */
  fee_tolerance_cents: number;
  /** a payment without reference is looked for among invoices due at most this many days before it */
  max_days_overdue: number;
}

export const DEFAULT_RECON_OPTIONS: ReconOptions = { fee_tolerance_cents: 250, max_days_overdue: 180 };

const DAY = 86_400_000;
const day = (d: string) => Math.floor(Date.parse(d.slice(0, 10) + 'T00:00:00Z') / DAY);
// a document number is "CODE SERIES/N" (SAF-T InvoiceNo: the code is the producer's own, e.g. FT,
// 1T, 11T, 1TR): each "/N" of a description is tried with the one and the two words before it,
// written with or without their space ("FT A/12", "FTA/12", "1T 1/6")
const SLASH_NUMBER_RE = /\/\s?(\d{1,10})(?!\d)/g;
const WORDS_BEFORE_RE = /([A-Z0-9][A-Z0-9._-]*)?\s*([A-Z0-9][A-Z0-9._-]*)\s?$/;
const ATCUD_RE = /\b([A-Z0-9]{8,70})-(\d{1,10})\b/g;
const SEQ_RE = /\b(?:FACT|FAT|FATURA|FACTURA|FT|DOC|REF)\.?\s?N?[º°O]?\s?(\d{1,10})\b/g;

/** a document number without its spaces, its sequence without leading zeros: "FT A/0012" → "FTA/12" */
const compactNumber = (n: string) => {
  const m = /^(.*?)\s?\/\s?(\d+)\s*$/.exec(n.toUpperCase());
  return m ? `${m[1]!.replace(/\s+/g, '')}/${Number(m[2])}` : n.replace(/\s+/g, '').toUpperCase();
};
/** the document numbers a description may name, compacted as compactNumber does */
function numbersIn(desc: string): string[] {
  const out: string[] = [];
  for (const m of desc.matchAll(SLASH_NUMBER_RE)) {
    const before = WORDS_BEFORE_RE.exec(desc.slice(Math.max(0, m.index! - 60), m.index!));
    if (!before) continue;
    const seq = Number(m[1]);
    // a word may carry a prefix glued by - . or _ ("PAG-FT 2026/123", "TRF.FT2026/124"): each of
    // its tails is tried too
    for (const last of tails(before[2]!)) {
      // one word: only with a type code of its own (FT2026/12); a producer's code run into its
      // series ("1T1/1") is as likely a receipt's number as an invoice's
      if (KNOWN_TYPE_PREFIX.test(last)) out.push(`${last}/${seq}`);
      if (before[1] && last === before[2]) for (const first of tails(before[1])) out.push(`${first}${last}/${seq}`);
    }
  }
  return out;
}
/** SAF-T InvoiceTypes a printed number starts with when its code and series are run together */
const KNOWN_TYPE_PREFIX = /^(FT|FR|FS|NC|ND|FA|VD)[A-Z0-9]/;
const tails = (word: string) => [word, ...[...word.matchAll(/[-._]/g)].map((m) => word.slice(m.index! + 1)).filter(Boolean)];
const seqOf = (n: string) => Number(/\/\s?(\d+)\s*$/.exec(n)?.[1] ?? NaN);

/** The payer's name and an invoice's customer: the bank prints it upper-case, accents removed, cut at 22 characters. */
export function samePayer(counterparty: string | null | undefined, customer: string | null | undefined): boolean {
  if (!counterparty || !customer) return false;
  const a = tokens(counterparty);
  const b = tokens(customer);
  if (!a.length || !b.length) return false;
  const joinedB = b.join(' ');
  const joinedA = a.join(' ');
  // the bank's truncated name is a prefix of the customer's (the last token may be cut short)
  if (joinedB.startsWith(joinedA) || joinedA.startsWith(joinedB)) return true;
  const setB = new Set(b);
  const shared = a.filter((t, i) => setB.has(t) || (i === a.length - 1 && b.some((x) => x.startsWith(t))));
  return shared.length >= Math.min(2, a.length) && shared.length >= a.length - 1;
}

export interface ReconResult {
  matches: ReconMatch[];
  unmatched_transactions: string[];
  unmatched_invoices: string[];
  /** invoices a payment matched but did not settle: what was paid here and what stays open */
  partially_paid_invoices: { invoice_id: string; paid_cents: number; remaining_cents: number }[];
  summary: { transactions: number; invoices: number; matched_transactions: number; matched_invoices: number; amount_matched_cents: number; match_rate: number };
}

export function reconcile(transactions: BankTransaction[], invoices: OpenInvoice[], options: Partial<ReconOptions> = {}): ReconResult {
  const opt = { ...DEFAULT_RECON_OPTIONS, ...options };
  const tol = opt.fee_tolerance_cents;
  // deterministic order: by date, then id
  const txns = [...transactions].sort((a, b) => a.date.localeCompare(b.date) || a.id.localeCompare(b.id));
  const invs = [...invoices].sort((a, b) => a.issue_date.localeCompare(b.issue_date) || a.id.localeCompare(b.id));
  const open = new Map(invs.map((i) => [i.id, i.amount_open_cents]));
  const byNumber = new Map<string, OpenInvoice>();
  const byAtcud = new Map<string, OpenInvoice>();
  const bySeq = new Map<number, OpenInvoice[]>();
  for (const i of invs) {
    byNumber.set(compactNumber(i.number), i);
    if (i.atcud) byAtcud.set(i.atcud.toUpperCase(), i);
    const s = seqOf(i.number);
    if (Number.isFinite(s)) (bySeq.get(s) ?? bySeq.set(s, []).get(s)!).push(i);
  }
  // invoices by payer name (first normalised token) for the rules without a reference
  const byFirstToken = new Map<string, OpenInvoice[]>();
  for (const i of invs) {
    const t = i.customer_name ? tokens(i.customer_name)[0] : undefined;
    if (t) (byFirstToken.get(t) ?? byFirstToken.set(t, []).get(t)!).push(i);
  }
  const matches: ReconMatch[] = [];
  const matchedTxns = new Set<string>();
  const allocate = (t: BankTransaction, list: OpenInvoice[], rule: Rule, confidence: number, explanation: string) => {
    let left = t.amount_cents;
    for (const i of list) {
      const take = Math.min(left, open.get(i.id)!);
      open.set(i.id, open.get(i.id)! - take);
      left -= take;
    }
    matches.push({ transaction_ids: [t.id], invoice_ids: list.map((i) => i.id), amount_cents: t.amount_cents, confidence, rule, explanation });
    matchedTxns.add(t.id);
  };
  const openOf = (i: OpenInvoice) => open.get(i.id)!;
  const inWindow = (t: BankTransaction, i: OpenInvoice) => {
    const d = day(t.date);
    return d >= day(i.issue_date) && d <= day(i.due_date ?? i.issue_date) + opt.max_days_overdue;
  };
  const credits = txns.filter((t) => t.amount_cents > 0);

  // 1. reference: invoice numbers or ATCUDs in the description
  for (const t of credits) {
    const desc = t.description.toUpperCase();
    const found: OpenInvoice[] = [];
    for (const n of numbersIn(desc)) {
      const i = byNumber.get(n);
      if (i && !found.includes(i)) found.push(i);
    }
    for (const m of desc.matchAll(ATCUD_RE)) {
      const i = byAtcud.get(`${m[1]}-${m[2]}`);
      if (i && !found.includes(i)) found.push(i);
    }
    if (!found.length) continue;
    const due = found.reduce((n, i) => n + openOf(i), 0);
    if (due <= 0) continue; // already settled: not this payment's invoice (or a duplicate payment)
    const names = found.map((i) => i.number).join(', ');
    if (Math.abs(t.amount_cents - due) <= tol) allocate(t, found, found.length > 1 ? 'combination' : 'reference', 0.99, `the description names ${names}; the amount settles ${found.length > 1 ? 'them' : 'it'}`);
    else if (t.amount_cents < due) allocate(t, found, 'partial', 0.95, `the description names ${names}; a partial payment of ${(t.amount_cents / 100).toFixed(2)} of ${(due / 100).toFixed(2)} open`);
    else allocate(t, found, 'reference', 0.9, `the description names ${names}; the amount exceeds what is open by ${((t.amount_cents - due) / 100).toFixed(2)}`);
  }

  // 2. sequence only ("FACT 123"), confirmed by payer and amount
  for (const t of credits) {
    if (matchedTxns.has(t.id)) continue;
    const desc = t.description.toUpperCase();
    for (const m of desc.matchAll(SEQ_RE)) {
      const cands = (bySeq.get(Number(m[1])) ?? []).filter((i) => openOf(i) > 0 && Math.abs(openOf(i) - t.amount_cents) <= tol && samePayer(t.counterparty, i.customer_name));
      if (cands.length === 1) {
        allocate(t, cands, 'sequence', 0.93, `the description names number ${m[1]}: ${cands[0]!.number} of the same payer, same amount`);
        break;
      }
    }
  }

  // 3. amount_date: the payer's only open invoice with that amount, in the date window
  const payerInvoices = (t: BankTransaction) => {
    const first = t.counterparty ? tokens(t.counterparty)[0] : undefined;
    return first ? (byFirstToken.get(first) ?? []).filter((i) => samePayer(t.counterparty, i.customer_name)) : [];
  };
  for (const t of credits) {
    if (matchedTxns.has(t.id)) continue;
    const cands = payerInvoices(t).filter((i) => openOf(i) > 0 && Math.abs(openOf(i) - t.amount_cents) <= tol && inWindow(t, i));
    if (cands.length === 1) allocate(t, cands, 'amount_date', 0.9, `${cands[0]!.number} is the payer's only open invoice of that amount issued before the payment`);
  }

  // 4. combination: several open invoices of the payer summing to the payment (2 to 4 of at most 12)
  for (const t of credits) {
    if (matchedTxns.has(t.id)) continue;
    const cands = payerInvoices(t).filter((i) => openOf(i) > 0 && openOf(i) < t.amount_cents && inWindow(t, i)).slice(0, 12);
    if (cands.length < 2) continue;
    const solutions: OpenInvoice[][] = [];
    const search = (start: number, chosen: OpenInvoice[], sum: number) => {
      if (solutions.length > 1) return;
      if (chosen.length >= 2 && Math.abs(sum - t.amount_cents) <= tol) solutions.push([...chosen]);
      if (chosen.length === 4) return;
      for (let k = start; k < cands.length; k++) {
        const next = sum + openOf(cands[k]!);
        if (next > t.amount_cents + tol) continue;
        chosen.push(cands[k]!);
        search(k + 1, chosen, next);
        chosen.pop();
      }
    };
    search(0, [], 0);
    if (solutions.length === 1) allocate(t, solutions[0]!, 'combination', 0.8, `the payment equals the sum of ${solutions[0]!.map((i) => i.number).join(' + ')}, all of the same payer`);
  }

  const matchedInvoices = new Set(matches.flatMap((m) => m.invoice_ids));
  const creditCount = credits.length;
  return {
    matches,
    unmatched_transactions: txns.filter((t) => !matchedTxns.has(t.id)).map((t) => t.id),
    unmatched_invoices: invs.filter((i) => !matchedInvoices.has(i.id)).map((i) => i.id),
    partially_paid_invoices: invs
      .filter((i) => matchedInvoices.has(i.id) && openOf(i) > tol)
      .map((i) => ({ invoice_id: i.id, paid_cents: i.amount_open_cents - openOf(i), remaining_cents: openOf(i) })),
    summary: {
      transactions: transactions.length,
      invoices: invoices.length,
      matched_transactions: matchedTxns.size,
      matched_invoices: matchedInvoices.size,
      amount_matched_cents: matches.reduce((n, m) => n + m.amount_cents, 0),
      match_rate: creditCount ? Math.round((matchedTxns.size / creditCount) * 1000) / 1000 : 0,
    },
  };
}
