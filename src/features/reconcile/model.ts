import { t } from 'elysia';
import { BooksProvider } from '../erp/model';
import { Int, RequestDate } from '../../lib/schemas';

const Money = t.Number({ minimum: -1e12, maximum: 1e12, description: 'euros (two decimals)' });
const Day = RequestDate({ description: 'YYYY-MM-DD' });
// the API is in euros (amounts, answers): another currency is refused rather than matched as euros
const Currency = t.Optional(t.Literal('EUR', { default: 'EUR', description: 'ISO 4217: EUR only (amounts are euros)' }));

export const ReconcileRequest = t.Object({
  transactions: t.Optional(
    t.Array(
      t.Object({
        id: t.String({ minLength: 1, maxLength: 128 }),
        date: Day,
        amount: Money,
        description: t.String({ maxLength: 500 }),
        counterparty: t.Optional(t.Union([t.String({ maxLength: 300 }), t.Null()])),
        currency: Currency,
      }),
      { maxItems: 20_000, description: 'Bank transactions (credits are matched; debits are reported unmatched)' },
    ),
  ),
  invoices: t.Optional(
    t.Array(
      t.Object({
        id: t.String({ minLength: 1, maxLength: 128 }),
        number: t.String({ minLength: 1, maxLength: 60, description: 'e.g. FT 2026/123' }),
        atcud: t.Optional(t.Union([t.String({ maxLength: 80 }), t.Null()])),
        customer_nif: t.Optional(t.Union([t.String({ pattern: '^[0-9]{9}$' }), t.Null()])),
        customer_name: t.Optional(t.Union([t.String({ maxLength: 300 }), t.Null()])),
        issue_date: Day,
        due_date: t.Optional(t.Union([Day, t.Null()])),
        amount_open: t.Number({ minimum: 0, maximum: 1e12 }),
        currency: Currency,
      }),
      { maxItems: 20_000 },
    ),
  ),
  source: t.Optional(
    t.Object({
      provider: BooksProvider,
      customer_reference: t.String({ minLength: 1, maxLength: 128 }),
      from: t.Optional(Day),
      to: t.Optional(Day),
    }),
  ),
  fee_tolerance: t.Optional(t.Number({ minimum: 0, maximum: 100, default: 2.5, description: 'euros a payment may differ from the invoice by (bank fees); default 2.50' })),
  max_days_overdue: t.Optional(Int({ minimum: 0, maximum: 3650, default: 180 })),
});

export const ReconcileResponse = t.Object({
  matches: t.Array(
    t.Object({
      transaction_ids: t.Array(t.String()),
      invoice_ids: t.Array(t.String()),
      amount: t.Number(),
      difference: t.Number({ description: 'the payment less what its invoices had open before it, in euros: below 0 it fell short (a bank fee within fee_tolerance, or a partial payment: see partially_paid_invoices), above 0 it paid more' }),
      confidence: t.Number({ minimum: 0, maximum: 1 }),
      rule: t.Union([t.Literal('reference'), t.Literal('sequence'), t.Literal('amount_date'), t.Literal('combination'), t.Literal('partial')]),
      explanation: t.String(),
    }),
  ),
  unmatched_transactions: t.Array(t.String()),
  unmatched_invoices: t.Array(t.String()),
  partially_paid_invoices: t.Array(
    t.Object({ invoice_id: t.String(), paid: t.Number({ description: 'paid by the matched payments of this request' }), remaining: t.Number({ description: 'still open after them' }) }),
    { description: 'Invoices a payment matched without settling them (a partial payment): in a match, not in unmatched_invoices, and still open by remaining' },
  ),
  unmatched_reasons: t.Array(
    t.Object({
      transaction_id: t.String(),
      code: t.Union(
        [t.Literal('ambiguous_reference'), t.Literal('before_issue'), t.Literal('other_currency'), t.Literal('ambiguous_payer'), t.Literal('ambiguous_amount'), t.Literal('ambiguous_combination')],
        { description: 'ambiguous_reference: the number or ATCUD named is held by several open invoices; before_issue: the invoice named is dated more than 5 days after the payment; other_currency: the payment or the invoice named is not in euros (stored books); ambiguous_payer: the counterparty is the beginning of several customers\' names; ambiguous_amount / ambiguous_combination: several of the payer\'s invoices (or sets of them) fit, or too many to tell' },
      ),
      invoice_ids: t.Array(t.String(), { description: 'the invoices in question (at most 10)' }),
      explanation: t.String(),
    }),
    { description: 'Why some unmatched credits were left unmatched: those a rule found candidates for but could not tell apart or refused' },
  ),
  summary: t.Object({
    transactions: Int(),
    invoices: Int(),
    matched_transactions: Int(),
    matched_invoices: Int(),
    amount_matched: t.Number(),
    match_rate: t.Number({ description: 'matched credits / credits' }),
  }),
  source: t.Union([t.Literal('body'), t.String()], { description: 'body, or provider/customer_reference of the stored data used' }),
});
