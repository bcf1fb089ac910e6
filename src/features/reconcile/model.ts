import { t } from 'elysia';
import { BooksProvider } from '../erp/model';
import { Int, RequestDate } from '../../lib/schemas';

const Money = t.Number({ minimum: -1e12, maximum: 1e12, description: 'euros (two decimals)' });
const Day = RequestDate({ description: 'YYYY-MM-DD' });

export const ReconcileRequest = t.Object({
  transactions: t.Optional(
    t.Array(
      t.Object({
        id: t.String({ minLength: 1, maxLength: 128 }),
        date: Day,
        amount: Money,
        description: t.String({ maxLength: 500 }),
        counterparty: t.Optional(t.Union([t.String({ maxLength: 300 }), t.Null()])),
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
