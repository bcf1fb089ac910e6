import { Elysia } from 'elysia';
import { and, eq, gte, inArray, lte } from 'drizzle-orm';
import type { AppContext } from '../../context';
import { authed } from '../../plugins/auth';
import { apiDoc } from '../../lib/api-doc';
import { fieldProblems, NIF_CHECK_DIGIT_FAILS, repeatedIds, unknownFields, type FieldError } from '../../lib/errors';
import { requestState } from '../../plugins/request-state';
import { noBooks } from '../erp/util';
import { reconcileAsync, type BankTransaction, type OpenInvoice } from './engine';
import { ReconcileRequest, ReconcileResponse } from './model';
import { isWholeCents, WHOLE_CENTS } from '../../lib/schemas';
import { isValidNif } from '../../lib/nif';

const cents = (euros: number) => Math.round(euros * 100);
type Body = typeof ReconcileRequest.static;


/** POST /v1/reconcile (scope `erp`): bank transactions against open invoices, from the body or from the tenant's synced data. */
export function reconcileRoutes(ctx: AppContext) {
  const load = async (auth: { tenantId: string; env: string }, src: NonNullable<Body['source']>) => {
    const { db, t } = ctx.database;
    const inv = t.invoices;
    const bt = t.bankTransactions;
    const invConds = [eq(inv.tenantId, auth.tenantId), eq(inv.env, auth.env), eq(inv.provider, src.provider), eq(inv.customerReference, src.customer_reference), eq(inv.status, 'N'), inArray(inv.documentType, ['FT', 'FR', 'FS', 'ND'])];
    const txConds = [eq(bt.tenantId, auth.tenantId), eq(bt.env, auth.env), eq(bt.provider, src.provider), eq(bt.customerReference, src.customer_reference)];
    if (src.to) invConds.push(lte(inv.issueDate, src.to));
    if (src.from) txConds.push(gte(bt.bookingDate, src.from));
    if (src.to) txConds.push(lte(bt.bookingDate, src.to));
    const [invoices, transactions] = await Promise.all([
      db.select().from(inv).where(and(...invConds)).limit(50_000),
      db.select().from(bt).where(and(...txConds)).limit(50_000),
    ]);
    // nothing in the dates asked is an answer; no books at all under that source is a mistake (as POST /v1/forecast says)
    if (!invoices.length && !transactions.length) {
      const books = (x: typeof inv | typeof bt) => db.select({ id: x.id }).from(x).where(and(eq(x.tenantId, auth.tenantId), eq(x.env, auth.env), eq(x.provider, src.provider), eq(x.customerReference, src.customer_reference))).limit(1);
      const [anyInvoice, anyMovement] = await Promise.all([books(inv), books(bt)]);
      if (!anyInvoice.length && !anyMovement.length)
        throw noBooks(src);
    }
    return {
      // books may hold other currencies: the engine leaves those unmatched (the answer is in euros)
      invoices: invoices.map((i): OpenInvoice => ({ id: i.id, number: i.number, atcud: i.atcud, customer_nif: i.customerNif, customer_name: i.customerName, issue_date: i.issueDate, due_date: i.dueDate, amount_open_cents: Number(i.grossTotalCents), currency: i.currency })),
      transactions: transactions.map((x): BankTransaction => ({ id: x.id, date: x.bookingDate, amount_cents: Number(x.amountCents), description: x.description ?? '', counterparty: x.counterpartyName, currency: x.currency })),
    };
  };

  /** what the schema cannot say of an item: whole cents, a due date on or after the issue date, a NIF's check digit */
  const itemProblems = (transactions: NonNullable<Body['transactions']>, invoices: NonNullable<Body['invoices']>): FieldError[] => [
    ...transactions.flatMap((x, i) => (isWholeCents(x.amount) ? [] : [{ path: `transactions.${i}.amount`, message: WHOLE_CENTS }])),
    ...invoices.flatMap((x, i) => [
      ...(isWholeCents(x.amount_open) ? [] : [{ path: `invoices.${i}.amount_open`, message: WHOLE_CENTS }]),
      ...(x.due_date && x.due_date < x.issue_date ? [{ path: `invoices.${i}.due_date`, message: `is before the issue date (${x.issue_date})` }] : []),
      ...(x.customer_nif && !isValidNif(x.customer_nif) ? [{ path: `invoices.${i}.customer_nif`, message: NIF_CHECK_DIGIT_FAILS }] : []),
    ]),
  ];
  return new Elysia({ name: 'reconcile' })
    .use(authed(ctx, 'erp'))
    .post(
      '/v1/reconcile',
      async ({ auth, body, request }) => {
        // every problem at once: fee_tolerance's beside the structural ones and the items', and the
        // unknown top-level fields (a misspelt `transaction` is why `transactions` is missing); a
        // NIF failing its check digit alone is invalid_nif, as on every route
        const fee: FieldError[] = body.fee_tolerance !== undefined && !isWholeCents(body.fee_tolerance) ? [{ path: 'fee_tolerance', message: WHOLE_CENTS }] : [];
        const refuse = (fields: FieldError[]) => fieldProblems([...fields, ...fee, ...unknownFields(requestState(request).parsedBody, ReconcileRequest.properties)]);
        const inline = body.transactions !== undefined || body.invoices !== undefined;
        if (inline === (body.source !== undefined))
          throw refuse([inline ? { path: 'source', message: 'give either transactions and invoices, or source (not both)' } : { path: '(body)', message: 'give transactions and invoices, or source' }]);
        if (inline && (body.transactions === undefined || body.invoices === undefined))
          throw refuse([{ path: body.transactions === undefined ? 'transactions' : 'invoices', message: 'required with the other' }]);
        if (body.source?.from && body.source.to && body.source.from > body.source.to) throw refuse([{ path: 'source.from', message: `is after source.to (${body.source.to})` }]);
        // a match names ids: two items under one id could not be told apart in the answer
        const problems = inline ? [...repeatedIds('transactions', body.transactions!), ...repeatedIds('invoices', body.invoices!), ...itemProblems(body.transactions!, body.invoices!)] : [];
        if (problems.length || fee.length) throw refuse(problems);
        const data = inline
          ? {
              transactions: body.transactions!.map((x): BankTransaction => ({ id: x.id, date: x.date, amount_cents: cents(x.amount), description: x.description, counterparty: x.counterparty ?? null, currency: x.currency })),
              invoices: body.invoices!.map(({ amount_open, ...i }): OpenInvoice => ({ ...i, amount_open_cents: cents(amount_open) })),
            }
          : await load(auth, body.source!);
        // the engine gives the event loop back while it works: other requests are not held up
        const r = await reconcileAsync(data.transactions, data.invoices, {
          ...(body.fee_tolerance !== undefined ? { fee_tolerance_cents: cents(body.fee_tolerance) } : {}),
          ...(body.max_days_overdue !== undefined ? { max_days_overdue: body.max_days_overdue } : {}),
        });
        ctx.usage.record({ tenantId: auth.tenantId, apiKeyId: auth.keyId, env: auth.env, requestId: auth.requestId, meter: 'reconcile' });
        return {
          matches: r.matches.map(({ amount_cents, difference_cents, ...m }) => ({ ...m, amount: amount_cents / 100, difference: difference_cents / 100 })),
          unmatched_transactions: r.unmatched_transactions,
          unmatched_invoices: r.unmatched_invoices,
          partially_paid_invoices: r.partially_paid_invoices.map((p) => ({ invoice_id: p.invoice_id, paid: p.paid_cents / 100, remaining: p.remaining_cents / 100 })),
          unmatched_reasons: r.unmatched_reasons,
          summary: {
            transactions: r.summary.transactions,
            invoices: r.summary.invoices,
            matched_transactions: r.summary.matched_transactions,
            matched_invoices: r.summary.matched_invoices,
            amount_matched: r.summary.amount_matched_cents / 100,
            match_rate: r.summary.match_rate,
          },
          source: inline ? 'body' : `${body.source!.provider}/${body.source!.customer_reference}`,
        };
      },
      {
        body: ReconcileRequest,
        response: { 200: ReconcileResponse },
        detail: apiDoc({
          summary: 'Reconcile bank transactions with open invoices',
          description:
            'Rules, most certain first: the invoice number or ATCUD in the description (reference; partial payments and several invoices per payment), the sequence only confirmed by payer and amount (sequence), the payer\'s only open invoice of that amount (amount_date), several invoices of that one customer summing to the payment (combination). Ambiguous cases stay unmatched, and unmatched_reasons says why (a number several open invoices hold, a payment well before the invoice\'s date, another currency, a payer name several customers\' names begin with, several candidates). Amounts in euros (a currency other than EUR is refused). Deterministic. docs/reconcile.md.',
          tag: 'erp',
          security: 'BearerAuth',
          operationId: 'reconcile',
          errors: ['resource_not_found'],
          examples: {
            inline: {
              summary: 'Two payments, three invoices',
              value: {
                transactions: [
                  { id: 't1', date: '2026-03-02', amount: 123.0, description: 'TRF FT 2026/17 METALURGICA DO VOUGA', counterparty: 'METALURGICA DO VOUGA' },
                  { id: 't2', date: '2026-03-05', amount: 369.0, description: 'TRF SEPA SANDBOX BETA SA', counterparty: 'SANDBOX BETA SA' },
                ],
                invoices: [
                  { id: 'i1', number: 'FT 2026/17', customer_name: 'Metalúrgica do Vouga, Lda.', issue_date: '2026-02-01', due_date: '2026-03-03', amount_open: 123.0 },
                  { id: 'i2', number: 'FT 2026/20', customer_name: 'Sandbox Beta, S.A.', issue_date: '2026-02-05', due_date: '2026-03-07', amount_open: 246.0 },
                  { id: 'i3', number: 'FT 2026/21', customer_name: 'Sandbox Beta, S.A.', issue_date: '2026-02-06', due_date: '2026-03-08', amount_open: 123.0 },
                ],
              },
            },
            stored: { summary: 'The tenant\'s synced demo books', value: { source: { provider: 'demo', customer_reference: 'cliente-1' } } },
          },
        }),
      },
    );
}
