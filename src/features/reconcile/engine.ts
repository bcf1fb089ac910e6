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
 * Amounts are integer cents. An ambiguous case is left unmatched, with the reason: precision first.
 *
 * Cost is bounded whatever the input (the engine runs on the event loop): invoices are indexed by
 * number, ATCUD, payer (the whole normalised name, never a word of it) and, per payer, by sequence,
 * open amount and issue date; every rule looks at no more than SCAN_LIMIT invoices for one
 * transaction, and a search it cannot finish within that is reported as ambiguous, not guessed.
 * `work` counts the steps taken (a test bounds it).
 */
import anyAscii from 'any-ascii';
import { formWordsAtEnd, PRINT_FORM_LETTERS } from '../../lib/company-form';

export interface BankTransaction {
  id: string;
  date: string; // YYYY-MM-DD
  amount_cents: number; // > 0 credit
  description: string;
  counterparty?: string | null;
  /** ISO 4217; absent = the reconciliation's currency */
  currency?: string | null;
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
  /** ISO 4217; absent = the reconciliation's currency */
  currency?: string | null;
}

export type Rule = 'reference' | 'sequence' | 'amount_date' | 'combination' | 'partial';

export interface ReconMatch {
  transaction_ids: string[];
  invoice_ids: string[];
  amount_cents: number;
  /** the payment less what its invoices had open: < 0 short (a fee within the tolerance, or a partial payment), > 0 over */
  difference_cents: number;
  confidence: number;
  rule: Rule;
  explanation: string;
}

/** Why a credit a rule looked at was left unmatched (precision first). */
export type UnmatchedCode = 'ambiguous_reference' | 'before_issue' | 'other_currency' | 'ambiguous_payer' | 'ambiguous_amount' | 'ambiguous_combination';
export interface UnmatchedReason {
  transaction_id: string;
  code: UnmatchedCode;
  /** the invoices in question (those the description names, or the payer's candidates seen) */
  invoice_ids: string[];
  explanation: string;
}

export interface ReconOptions {
  /** a payment may fall short of (or exceed) the invoice by this much (bank fees), in cents */
  fee_tolerance_cents: number;
  /** a payment without reference is looked for among invoices due at most this many days before it */
  max_days_overdue: number;
  /** the currency of the reconciliation: items in another are never matched */
  currency: string;
}

export const DEFAULT_RECON_OPTIONS: ReconOptions = { fee_tolerance_cents: 250, max_days_overdue: 180, currency: 'EUR' };

/**
 * A payment naming an invoice may be booked up to this many days before the invoice's date: an
 * advance paid on a pro-forma is invoiced on receipt (CIVA art. 36(1)(b)), which the seller may
 * date some days after the bank booked it (5, as the fifth working day art. 36(1)(a) allows an
 * invoice). Matched, less certain; earlier than that it is not that invoice's payment.
 */
export const EARLY_PAYMENT_DAYS = 5;
/** invoices one rule examines for one transaction at most; past it the case is ambiguous */
export const SCAN_LIMIT = 200;
/** a combination without reference: 2 to COMBINATION_MAX_SIZE of at most COMBINATION_MAX_INVOICES candidates */
export const COMBINATION_MAX_INVOICES = 12;
const COMBINATION_MAX_SIZE = 4;
/**
 * A counterparty printed at least this long may be the bank's cut of a longer name (banks print 18
 * to 70 characters of it; 22 is common in Portugal); a shorter one is the payer's whole name.
 */
const MIN_CUT_NAME = 18;
/** invoices an unmatched reason names at most */
const REASON_INVOICES = 10;

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

interface PayerName {
  /** as a bank prints it: ASCII upper case, punctuation as spaces */
  printed: string;
  /**
   * printed without the company forms at its end ("S A" too): the payer's identity. "Lda", "S.A.",
   * "Unipessoal" say nothing of who pays; a bank's capitals have lost the shape that tells "SA" from
   * Sá, so both sides are read by the letters alone (src/lib/company-form.ts)
   */
  core: string;
}
function payerName(name: string): PayerName {
  const printed = (/^[\x20-\x7e]*$/.test(name) ? name : anyAscii(name))
    .toUpperCase()
    .replace(/\bL\.DA\b/g, 'LDA')
    .replace(/[^A-Z0-9&]+/g, ' ')
    .replace(/\s*&\s*/g, ' & ')
    .trim();
  const words = printed ? printed.split(' ') : [];
  // a form spelt in letters at the end is one word, as a bank runs it together ("S P A" is "SPA")
  let run = words.length;
  while (run > 0 && words[run - 1]!.length === 1) run--;
  if (words.length - run > 1 && run > 0) words.splice(run, words.length - run, words.slice(run).join(''));
  return { printed, core: words.slice(0, words.length - formWordsAtEnd(words, PRINT_FORM_LETTERS)).join(' ') };
}

/**
 * The payer's name and an invoice's customer name the same company: the same name once the
 * company form is set aside ("SANDBOX BETA SA" is "Sandbox Beta, S.A."), or the bank's cut of it
 * ("DISTRIBUICAO DO MONDEG" is "Distribuição do Mondego, S.A."). A name sharing only some words
 * is another company ("FARMACIA CENTRAL PORTO" is not "Farmácia Central de Braga"). The engine
 * also refuses a cut name that could be several of the invoices' customers.
 */
export function samePayer(counterparty: string | null | undefined, customer: string | null | undefined): boolean {
  if (!counterparty || !customer) return false;
  const a = payerName(counterparty);
  const b = payerName(customer);
  if (!a.core || !b.core) return false;
  return a.core === b.core || isCut(a, b.printed);
}
/** the bank's cut of a longer printed name: long enough to have been cut, and its beginning */
const isCut = (a: PayerName, printed: string) => a.printed.length >= MIN_CUT_NAME && printed.length > a.printed.length && printed.startsWith(a.printed);

export interface ReconResult {
  matches: ReconMatch[];
  unmatched_transactions: string[];
  unmatched_invoices: string[];
  /** invoices a payment matched but did not settle: what was paid here and what stays open */
  partially_paid_invoices: { invoice_id: string; paid_cents: number; remaining_cents: number }[];
  /** why some unmatched credits were left so (a rule found a candidate but could not be sure) */
  unmatched_reasons: UnmatchedReason[];
  summary: { transactions: number; invoices: number; matched_transactions: number; matched_invoices: number; amount_matched_cents: number; match_rate: number };
  /** steps taken (index look-ups, invoices examined, subset-search nodes): bounded by the input's size */
  work: number;
}

interface Txn {
  t: BankTransaction;
  day: number;
  ownCurrency: boolean;
  matched: boolean;
  /** left unmatched on purpose by a rule: the later rules do not guess it */
  settled: boolean;
  reason?: UnmatchedReason;
}
interface Inv {
  i: OpenInvoice;
  issue: number;
  due: number;
  open: number;
  matched: boolean;
  /** the open amount the amount index was built with (rule 3) */
  indexed: number;
  payer?: Payer;
}
/** the open invoices of one customer (one normalised name) */
interface Payer {
  core: string;
  /** in issue date then id order */
  invoices: Inv[];
  /** the longest issue-to-due span, in days: bounds the backward scan of rule 4 */
  span: number;
  bySeq: Map<number, Inv[]>;
  /** open invoices by open amount (rule 3), built when rule 3 starts */
  byAmount: Inv[];
}
/** the invoices holding one number or ATCUD: all, those in the reconciliation's currency, those of them open */
interface Holders {
  all: Inv[];
  own: Inv[];
  open: Inv[];
}
type Resolved = { payer: Payer } | { ambiguous: string[] } | null;

const byKey = <T extends { id: string }>(a: T, b: T, ka: string, kb: string) => (ka < kb ? -1 : ka > kb ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const euros = (c: number) => (c / 100).toFixed(2);
const upperCurrency = (c: string | null | undefined, dflt: string) => (c ? c.toUpperCase() : dflt);

/** Reconciles at once (tests, benchmarks, small inputs). */
export function reconcile(transactions: BankTransaction[], invoices: OpenInvoice[], options: Partial<ReconOptions> = {}): ReconResult {
  const run = steps(transactions, invoices, options);
  for (;;) {
    const r = run.next();
    if (r.done) return r.value;
  }
}

/**
 * The same answer, giving the event loop back every `sliceMs` of work: a request of 20 000 + 20 000
 * items takes a few hundred milliseconds, which other requests would otherwise wait out. The state
 * is the call's own, so what else runs in between cannot change the answer.
 */
export async function reconcileAsync(transactions: BankTransaction[], invoices: OpenInvoice[], options: Partial<ReconOptions> = {}, sliceMs = 10): Promise<ReconResult> {
  const run = steps(transactions, invoices, options);
  let started = performance.now();
  for (;;) {
    const r = run.next();
    if (r.done) return r.value;
    if (performance.now() - started >= sliceMs) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      started = performance.now();
    }
  }
}

/** every YIELD_EVERY transactions a rule looks at, the engine may pause (reconcileAsync) */
const YIELD_EVERY = 128;

function* steps(transactions: BankTransaction[], invoices: OpenInvoice[], options: Partial<ReconOptions>): Generator<void, ReconResult, void> {
  const opt = { ...DEFAULT_RECON_OPTIONS, ...options };
  const tol = opt.fee_tolerance_cents;
  const currency = opt.currency.toUpperCase();
  let work = 0;
  let tick = 0;
  // deterministic order: by date, then id (code-unit order: the same on every machine)
  const txns: Txn[] = [...transactions]
    .sort((a, b) => byKey(a, b, a.date, b.date))
    .map((t) => ({ t, day: day(t.date), ownCurrency: upperCurrency(t.currency, currency) === currency, matched: false, settled: false }));
  const invs: Inv[] = [...invoices]
    .sort((a, b) => byKey(a, b, a.issue_date, b.issue_date))
    .map((i) => ({ i, issue: day(i.issue_date), due: day(i.due_date ?? i.issue_date), open: i.amount_open_cents, matched: false, indexed: -1 }));
  const ownCurrency = (x: Inv) => upperCurrency(x.i.currency, currency) === currency;
  yield;

  // indexes: by number and ATCUD (every holder: a number may be held twice)
  const byNumber = new Map<string, Holders>();
  const byAtcud = new Map<string, Holders>();
  const hold = (m: Map<string, Holders>, key: string, x: Inv) => {
    const h = m.get(key) ?? m.set(key, { all: [], own: [], open: [] }).get(key)!;
    h.all.push(x);
    if (ownCurrency(x)) h.own.push(x);
    if (ownCurrency(x) && x.i.amount_open_cents > 0) h.open.push(x);
  };
  for (const x of invs) {
    hold(byNumber, compactNumber(x.i.number), x);
    if (x.i.atcud) hold(byAtcud, x.i.atcud.toUpperCase(), x);
  }
  yield;
  // by payer: built when a rule first needs it (most payments name their invoice)
  const payers = new Map<string, Payer>();
  const names = new Map<string, PayerName>();
  const nameOf = (s: string) => names.get(s) ?? names.set(s, payerName(s)).get(s)!;
  /** the customers' printed names in order: a bank's cut name finds the names it begins */
  let printedNames: { printed: string; core: string }[] | undefined;
  const indexPayers = () => {
    if (printedNames) return printedNames;
    for (const x of invs) {
      if (!x.i.customer_name || !ownCurrency(x)) continue;
      const core = nameOf(x.i.customer_name).core;
      if (!core) continue;
      const p = payers.get(core) ?? payers.set(core, { core, invoices: [], span: 0, bySeq: new Map(), byAmount: [] }).get(core)!;
      x.payer = p;
      p.invoices.push(x);
      p.span = Math.max(p.span, x.due - x.issue);
      const s = seqOf(x.i.number);
      if (Number.isFinite(s)) (p.bySeq.get(s) ?? p.bySeq.set(s, []).get(s)!).push(x);
    }
    work += invs.length;
    const distinct = new Map(invs.flatMap((x) => (x.payer ? [[nameOf(x.i.customer_name!).printed, x.payer.core] as const] : [])));
    printedNames = [...distinct].map(([printed, core]) => ({ printed, core })).sort((a, b) => (a.printed < b.printed ? -1 : a.printed > b.printed ? 1 : 0));
    return printedNames;
  };

  const resolved = new Map<string, Resolved>();
  /** the one customer the counterparty names, or the several it could be */
  const payerOf = (t: BankTransaction): Resolved => {
    if (!t.counterparty) return null;
    const hit = resolved.get(t.counterparty);
    if (hit !== undefined) return hit;
    const printedNames = indexPayers();
    const n = nameOf(t.counterparty);
    let r: Resolved = null;
    const exact = n.core ? payers.get(n.core) : undefined;
    work++;
    // two customers of one name (different NIFs) are one payer to a bank statement: the amount
    // still has to single out one invoice, and a combination keeps to one NIF
    if (exact) r = { payer: exact };
    else if (n.core && n.printed.length >= MIN_CUT_NAME) {
      // the names beginning with it: one customer, or ambiguous at the second
      let lo = 0;
      let hi = printedNames.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        work++;
        if (printedNames[mid]!.printed < n.printed) lo = mid + 1;
        else hi = mid;
      }
      const cores: string[] = [];
      for (let k = lo; k < printedNames.length && printedNames[k]!.printed.startsWith(n.printed) && cores.length < 2; k++) {
        work++;
        // (names differing only by their forms, "X LDA" and "X UNIPESSOAL LDA", are one core: bounded too)
        if (k - lo >= SCAN_LIMIT) cores.push('…');
        else if (printedNames[k]!.printed.length > n.printed.length && !cores.includes(printedNames[k]!.core)) cores.push(printedNames[k]!.core);
      }
      r = cores.length === 1 ? { payer: payers.get(cores[0]!)! } : cores.length ? { ambiguous: cores } : null;
    }
    resolved.set(t.counterparty, r);
    return r;
  };

  const matches: ReconMatch[] = [];
  /** the first reason a rule gives is kept; `final`: the later rules do not guess the payment either */
  const leave = (x: Txn, code: UnmatchedCode, list: Inv[], explanation: string, final = true) => {
    // (a few of the invoices in question: a number held by thousands would list thousands)
    x.reason ??= { transaction_id: x.t.id, code, invoice_ids: list.slice(0, REASON_INVOICES).map((i) => i.i.id), explanation };
    if (final) x.settled = true;
  };
  const allocate = (x: Txn, list: Inv[], rule: Rule, confidence: number, explanation: string) => {
    let left = x.t.amount_cents;
    const owed = list.reduce((sum, i) => sum + i.open, 0);
    for (const i of list) {
      const take = Math.min(left, i.open);
      i.open -= take;
      left -= take;
      i.matched = true;
    }
    matches.push({ transaction_ids: [x.t.id], invoice_ids: list.map((i) => i.i.id), amount_cents: x.t.amount_cents, difference_cents: x.t.amount_cents - owed, confidence, rule, explanation });
    x.matched = true;
  };
  /** days the payment precedes the invoice's date (≤ 0: on or after it) */
  const early = (x: Txn, i: Inv) => i.issue - x.day;
  const earlyNote = (days: number) => (days > 0 ? `; paid ${days} day${days === 1 ? '' : 's'} before the invoice's date (an advance?)` : '');
  /** invoices of one customer: not two companies' that share a name */
  const oneNif = (list: Inv[]) => new Set(list.flatMap((i) => (i.i.customer_nif ? [i.i.customer_nif] : []))).size <= 1;
  const inWindow = (x: Txn, i: Inv) => x.day >= i.issue && x.day <= i.due + opt.max_days_overdue;
  const credits = txns.filter((x) => x.t.amount_cents > 0);
  const open = (x: Txn) => !x.matched && !x.settled;

  for (const x of credits)
    if (!x.ownCurrency) leave(x, 'other_currency', [], `in ${upperCurrency(x.t.currency, currency)}: this reconciliation is in ${currency}`);

  // 1. reference: invoice numbers or ATCUDs in the description
  for (const x of credits) {
    if (++tick % YIELD_EVERY === 0) yield;
    if (!open(x)) continue;
    const desc = x.t.description.toUpperCase();
    const found: Inv[] = [];
    let disambiguated = false;
    let stop = false;
    const named = (h: Holders | undefined, atcud?: string) => {
      work++;
      if (!h || stop) return;
      const printed = atcud ?? h.all[0]!.i.number;
      if (!h.own.length) return leave(x, 'other_currency', h.all, `the description names ${printed}, an invoice in ${upperCurrency(h.all[0]!.i.currency, currency)}: this reconciliation is in ${currency}`);
      // a number held by several open invoices: the payer's own if only one is, else ambiguous
      let held = h.open;
      if (held.length > 1) {
        // (a number held by more than a few open invoices is ambiguous whoever pays)
        const p = held.length <= REASON_INVOICES ? payerOf(x.t) : null;
        const mine = p && 'payer' in p ? held.filter((i) => i.payer === p.payer) : [];
        if (p) work += held.length;
        if (mine.length !== 1) {
          stop = true;
          return leave(x, 'ambiguous_reference', held, `the description names ${printed}, held by ${held.length} open invoices${mine.length > 1 ? ` (${mine.length} of them the payer's)` : ''}: not told apart`);
        }
        held = mine;
        disambiguated = true;
      }
      const i = held[0] ?? h.own[0]!;
      if (!found.includes(i)) found.push(i);
    };
    for (const n of numbersIn(desc)) named(byNumber.get(n));
    for (const m of desc.matchAll(ATCUD_RE)) named(byAtcud.get(`${m[1]}-${m[2]}`), `${m[1]}-${m[2]}`);
    if (stop || !found.length) continue;
    // a payment cannot be for an invoice issued well after it
    const tooEarly = found.filter((i) => early(x, i) > EARLY_PAYMENT_DAYS);
    if (tooEarly.length) {
      leave(x, 'before_issue', tooEarly, `the description names ${tooEarly.map((i) => i.i.number).join(', ')}, issued ${tooEarly.map((i) => i.i.issue_date).join(', ')}: more than ${EARLY_PAYMENT_DAYS} days after this payment`);
      continue;
    }
    const due = found.reduce((n, i) => n + i.open, 0);
    if (due <= 0) continue; // already settled: not this payment's invoice (or a duplicate payment)
    const names = found.map((i) => i.i.number).join(', ');
    const ahead = Math.max(...found.map((i) => early(x, i)));
    // an early payment, or a number another customer's invoice holds too: less certain
    const lower = (c: number) => Math.round((ahead > 0 ? c - 0.09 : disambiguated ? Math.min(c, 0.95) : c) * 100) / 100;
    const note = earlyNote(ahead) + (disambiguated ? '; another open invoice holds that number, this one is the payer\'s' : '');
    if (Math.abs(x.t.amount_cents - due) <= tol) allocate(x, found, found.length > 1 ? 'combination' : 'reference', lower(0.99), `the description names ${names}; the amount settles ${found.length > 1 ? 'them' : 'it'}${note}`);
    else if (x.t.amount_cents < due) allocate(x, found, 'partial', lower(0.95), `the description names ${names}; a partial payment of ${euros(x.t.amount_cents)} of ${euros(due)} open${note}`);
    else allocate(x, found, 'reference', lower(0.9), `the description names ${names}; the amount exceeds what is open by ${euros(x.t.amount_cents - due)}${note}`);
  }

  // 2. sequence only ("FACT 123"), confirmed by payer and amount
  for (const x of credits) {
    if (++tick % YIELD_EVERY === 0) yield;
    if (!open(x)) continue;
    const desc = x.t.description.toUpperCase();
    let p: Resolved | undefined;
    // every sequence the description prints, the payer's invoices of each: SCAN_LIMIT in all
    let budget = SCAN_LIMIT;
    const tried = new Set<number>();
    for (const m of desc.matchAll(SEQ_RE)) {
      p ??= payerOf(x.t);
      if (!p || !('payer' in p)) break;
      const seq = Number(m[1]);
      work++;
      if (tried.has(seq)) continue;
      tried.add(seq);
      const list = p.payer.bySeq.get(seq) ?? [];
      if (list.length > budget) break;
      budget -= list.length;
      const cands: Inv[] = [];
      for (let k = 0; k < list.length && cands.length < 2; k++) {
        const i = list[k]!;
        work++;
        if (i.open > 0 && Math.abs(i.open - x.t.amount_cents) <= tol && early(x, i) <= EARLY_PAYMENT_DAYS) cands.push(i);
      }
      if (cands.length === 1) {
        const ahead = early(x, cands[0]!);
        allocate(x, cands, 'sequence', ahead > 0 ? 0.84 : 0.93, `the description names number ${m[1]}: ${cands[0]!.i.number} of the same payer, same amount${earlyNote(ahead)}`);
        break;
      }
    }
  }

  // 3. amount_date: the payer's only open invoice with that amount, in the date window
  if (credits.some((x) => open(x) && x.t.counterparty)) indexPayers();
  for (const p of payers.values()) {
    p.byAmount = p.invoices.filter((i) => i.open > 0);
    for (const i of p.byAmount) i.indexed = i.open;
    p.byAmount.sort((a, b) => a.indexed - b.indexed || a.issue - b.issue || (a.i.id < b.i.id ? -1 : a.i.id > b.i.id ? 1 : 0));
    work += p.byAmount.length;
  }
  for (const x of credits) {
    if (++tick % YIELD_EVERY === 0) yield;
    if (!open(x)) continue;
    const r = payerOf(x.t);
    if (r && 'ambiguous' in r) {
      leave(x, 'ambiguous_payer', [], `the counterparty ${JSON.stringify(x.t.counterparty)} is the beginning of ${r.ambiguous.length} customers' names (${r.ambiguous.join('; ')}): not matched by amount`);
      continue;
    }
    if (!r) continue;
    const list = r.payer.byAmount;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      work++;
      if (list[mid]!.indexed < x.t.amount_cents - tol) lo = mid + 1;
      else hi = mid;
    }
    const cands: Inv[] = [];
    let seen = 0;
    for (let k = lo; k < list.length && list[k]!.indexed <= x.t.amount_cents + tol && cands.length < 2 && seen <= SCAN_LIMIT; k++, seen++) {
      const i = list[k]!;
      work++;
      // paid since the index was built (by this rule): no longer that amount
      if (i.open === i.indexed && inWindow(x, i)) cands.push(i);
    }
    if (cands.length === 1 && seen <= SCAN_LIMIT) allocate(x, cands, 'amount_date', 0.9, `${cands[0]!.i.number} is the payer's only open invoice of that amount issued before the payment`);
    else if (cands.length > 1) leave(x, 'ambiguous_amount', cands, `several open invoices of the payer have that amount (${cands.map((i) => i.i.number).join(', ')}…)`, false);
    else if (seen > SCAN_LIMIT) leave(x, 'ambiguous_amount', [], `more than ${SCAN_LIMIT} open invoices of the payer are near that amount: not told apart`, false);
  }

  // 4. combination: several open invoices of the payer summing to the payment (2 to 4 of at most 12)
  for (const x of credits) {
    if (++tick % YIELD_EVERY === 0) yield;
    if (!open(x)) continue;
    const r = payerOf(x.t);
    if (!r || !('payer' in r)) continue;
    const p = r.payer;
    // the payer's invoices issued by the payment's day, newest first, until none older can be in
    // the window (issued before the longest issue-to-due span and the overdue allowance)
    let hi = p.invoices.length;
    let lo = 0;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      work++;
      if (p.invoices[mid]!.issue <= x.day) lo = mid + 1;
      else hi = mid;
    }
    const cands: Inv[] = [];
    let seen = 0;
    let tooMany = false;
    for (let k = lo - 1; k >= 0; k--) {
      const i = p.invoices[k]!;
      if (i.issue + p.span + opt.max_days_overdue < x.day) break;
      work++;
      if (++seen > SCAN_LIMIT) {
        tooMany = true;
        break;
      }
      if (i.open > 0 && i.open < x.t.amount_cents && inWindow(x, i)) cands.push(i);
      if (cands.length > COMBINATION_MAX_INVOICES) {
        tooMany = true;
        break;
      }
    }
    if (tooMany) {
      leave(x, 'ambiguous_combination', [], `more than ${COMBINATION_MAX_INVOICES} open invoices of the payer could make up the payment: not searched`, false);
      continue;
    }
    if (cands.length < 2) continue;
    cands.reverse(); // date order
    const solutions: Inv[][] = [];
    const search = (start: number, chosen: Inv[], sum: number) => {
      work++;
      if (solutions.length > 1) return;
      if (chosen.length >= 2 && Math.abs(sum - x.t.amount_cents) <= tol && oneNif(chosen)) solutions.push([...chosen]);
      if (chosen.length === COMBINATION_MAX_SIZE) return;
      for (let k = start; k < cands.length; k++) {
        const next = sum + cands[k]!.open;
        if (next > x.t.amount_cents + tol) continue;
        chosen.push(cands[k]!);
        search(k + 1, chosen, next);
        chosen.pop();
      }
    };
    search(0, [], 0);
    if (solutions.length === 1) allocate(x, solutions[0]!, 'combination', 0.8, `the payment equals the sum of ${solutions[0]!.map((i) => i.i.number).join(' + ')}, all of the same payer`);
    else if (solutions.length > 1) leave(x, 'ambiguous_combination', solutions.flat(), `several sets of the payer's open invoices sum to the payment (${solutions.map((s) => s.map((i) => i.i.number).join(' + ')).join('; ')})`, false);
  }

  const creditCount = credits.length;
  const matchedTxns = txns.filter((x) => x.matched).length;
  return {
    matches,
    unmatched_transactions: txns.filter((x) => !x.matched).map((x) => x.t.id),
    unmatched_invoices: invs.filter((x) => !x.matched).map((x) => x.i.id),
    partially_paid_invoices: invs
      .filter((x) => x.matched && x.open > tol)
      .map((x) => ({ invoice_id: x.i.id, paid_cents: x.i.amount_open_cents - x.open, remaining_cents: x.open })),
    unmatched_reasons: txns.flatMap((x) => (!x.matched && x.reason ? [x.reason] : [])),
    summary: {
      transactions: transactions.length,
      invoices: invoices.length,
      matched_transactions: matchedTxns,
      matched_invoices: invs.filter((x) => x.matched).length,
      amount_matched_cents: matches.reduce((n, m) => n + m.amount_cents, 0),
      match_rate: creditCount ? Math.round((matchedTxns / creditCount) * 1000) / 1000 : 0,
    },
    work,
  };
}
