import { Elysia, t } from 'elysia';
import { and, eq, inArray } from 'drizzle-orm';
import type { AppContext } from '../../context';
import { authed, replayedJson } from '../../plugins/auth';
import { preferredDocument, refuseUnacceptable } from '../../lib/accept';
import { validationError } from '../../lib/errors';
import { apiDoc } from '../../lib/api-doc';
import { noBooks } from '../erp/util';
import { BooksProvider } from '../erp/model';
import { balanceOn, forecast, type ForecastInvoice, type ForecastResult, type ForecastTransaction } from './engine';
import { langOf, requestState } from '../../plugins/request-state';
import { chartTitle, forecastPng, forecastSvg } from './chart';
import { Int, RequestDate } from '../../lib/schemas';

const Cents = Int({ minimum: -1e13, maximum: 1e13 });
export const ForecastRequest = t.Object({
  source: t.Object({ provider: BooksProvider, customer_reference: t.String({ minLength: 1, maxLength: 128 }) }, { description: 'The company\u2019s books the tenant holds' }),
  as_of: t.Optional(RequestDate({ description: 'The forecast date (default today); data after it is ignored' })),
  weeks: t.Optional(Int({ minimum: 1, maximum: 26, default: 13 })),
  opening_balance_cents: t.Optional(t.Object({ amount: Cents }, { description: 'The bank balance at as_of when you know it (else derived from the movements)' })),
  payables: t.Optional(t.Array(t.Object({ due_date: RequestDate(), amount_cents: Int({ minimum: 1, maximum: 1e12, description: 'At most €10 000 000 000: the 5 000 a request may hold then add up, with the books, to whole cents (below 2^53)' }), counterparty: t.Optional(t.String({ maxLength: 200 })) }), { maxItems: 5000, description: 'Known outflows: supplier invoices, tax instalments…' })),
});
const Week = t.Object({
  week: Int(), start: t.String(), end: t.String(), receipts_p50_cents: Int(), payments_cents: Int(),
  balance_p10_cents: Int(), balance_p50_cents: Int(), balance_p90_cents: Int(), at_risk: t.Boolean({ description: 'p10 or p50 below zero' }),
});
export const ForecastResponse = t.Object({
  as_of: t.String(),
  currency: t.Literal('EUR'),
  source: t.String(),
  opening_balance_cents: Int(),
  opening_balance_source: t.Union([t.Literal('given'), t.Literal('movements')], { description: 'given in the request, or the sum of the bank movements up to as_of' }),
  weeks: t.Array(Week),
  weeks_at_risk: t.Array(Int()),
  assumptions: t.Record(t.String(), t.Unknown(), { description: 'open receivables, delays (the portfolio\u2019s and how many customers have their own), recurring outflows detected, payables, draws' }),
  algorithm_version: t.String(),
});

const CHARTS = ['image/svg+xml', 'image/png'] as const;

/** POST /v1/forecast (scope `erp`): 13 weeks of cash from the books the tenant holds. */
export function forecastRoutes(ctx: AppContext) {
  /** the chart the caller's Accept asks for, or null for JSON */
  const chart = async (request: Request, result: ForecastResult, source: string, headers: Record<string, string>) => {
    const type = preferredDocument(request.headers.get('accept') ?? undefined, CHARTS);
    if (!type) return null;
    // its words and numbers in the caller's language (Accept-Language: pt-PT or en)
    const lang = langOf({ 'accept-language': request.headers.get('accept-language') ?? undefined });
    const title = chartTitle(lang, source, result.as_of);
    const marked = { ...headers, 'content-language': lang === 'pt' ? 'pt-PT' : 'en', vary: 'Accept, Accept-Language' };
    if (type === 'image/svg+xml') return new Response(forecastSvg(result, title, lang), { headers: { ...marked, 'content-type': 'image/svg+xml; charset=utf-8' } });
    return new Response(await forecastPng(result, title, lang), { headers: { ...marked, 'content-type': 'image/png' } });
  };
  return new Elysia({ name: 'forecast' })
    .use(authed(ctx, 'erp'))
    // An Idempotency-Key replay (answered by the guard with the stored JSON) honours the replay's
    // own Accept: the chart is drawn again from the stored forecast (the same numbers, the same chart)
    .onAfterHandle(async ({ request, response }) => {
      const accept = request.headers.get('accept') ?? undefined;
      if (!preferredDocument(accept, CHARTS)) return;
      const replay = await replayedJson<ForecastResult & { source?: string }>(response, 200);
      if (!replay || !Array.isArray(replay.stored.weeks)) return;
      return (await chart(request, replay.stored, replay.stored.source ?? '', replay.headers)) ?? undefined;
    })
    .post(
    '/v1/forecast',
    async ({ auth, body, headers, set, request }) => {
      const { db, t: tb } = ctx.database;
      const asOf = body.as_of ?? ctx.clock.now().toISOString().slice(0, 10);
      const inv = tb.invoices;
      const bt = tb.bankTransactions;
      const scope = (x: typeof inv | typeof bt) => and(eq(x.tenantId, auth.tenantId), eq(x.env, auth.env), eq(x.provider, body.source.provider), eq(x.customerReference, body.source.customer_reference));
      const [invoices, movements] = await Promise.all([
        db.select().from(inv).where(and(scope(inv), eq(inv.status, 'N'), inArray(inv.documentType, ['FT', 'FS', 'FR', 'ND']))).limit(100_000),
        db.select().from(bt).where(scope(bt)).limit(200_000),
      ]);
      if (!invoices.length && !movements.length)
        throw noBooks(body.source);
      // books without a bank feed (TOConline, Moloni): a balance of 0 "from the movements" would be
      // an unknown shown as measured, and the company never at risk. A SAF-T file's receipts are
      // kept with the movements (they settle its invoices) but are no bank statement: no outflows
      const bankFeed = body.source.provider !== 'saft' && movements.length > 0;
      if (!bankFeed && !body.opening_balance_cents)
        throw validationError([{ path: 'opening_balance_cents', message: `is required: these books hold no bank movements to derive the balance from${body.source.provider === 'saft' ? ' (a SAF-T file\'s receipts are not a bank statement)' : ''}` }]);
      // a balance "from the movements" before the first of them is as unknown as none at all
      if (bankFeed && !body.opening_balance_cents && !movements.some((m) => m.bookingDate <= asOf))
        throw validationError([{ path: 'opening_balance_cents', message: `is required: these books hold no bank movement on or before as_of ${asOf} to derive the balance from` }]);
      const paymentsOf = new Map<string, { date: string; amount_cents: number }[]>();
      for (const m of movements) {
        if (!m.matchedInvoiceNumber || Number(m.amountCents) <= 0) continue;
        paymentsOf.set(m.matchedInvoiceNumber, [...(paymentsOf.get(m.matchedInvoiceNumber) ?? []), { date: m.bookingDate, amount_cents: Number(m.amountCents) }]);
      }
      const transactions: ForecastTransaction[] = (bankFeed ? movements : []).map((m) => ({ date: m.bookingDate, amount_cents: Number(m.amountCents), description: m.description ?? m.counterpartyName ?? '', matched: !!m.matchedInvoiceNumber && Number(m.amountCents) > 0 }));
      const opening = body.opening_balance_cents?.amount ?? balanceOn(0, transactions, asOf);
      const result = forecast({
        as_of: asOf,
        weeks: body.weeks ?? 13,
        opening_balance_cents: opening,
        invoices: invoices.map((i): ForecastInvoice => ({ number: i.number, customer: i.customerNif ?? i.customerName ?? 'unknown', issue_date: i.issueDate, due_date: i.dueDate, gross_cents: Number(i.grossTotalCents), payments: paymentsOf.get(i.number) ?? [] })),
        transactions,
        payables: body.payables ?? [],
      });
      ctx.usage.record({ tenantId: auth.tenantId, apiKeyId: auth.keyId, env: auth.env, requestId: auth.requestId, meter: 'forecast' });
      set.headers.vary = 'Accept'; // JSON, SVG or PNG by Accept (a chart's words by Accept-Language too)
      const source = `${body.source.provider}/${body.source.customer_reference}`;
      const json = { ...result, assumptions: result.assumptions as unknown as Record<string, unknown>, currency: 'EUR' as const, source, opening_balance_source: body.opening_balance_cents ? ('given' as const) : ('movements' as const) } satisfies typeof ForecastResponse.static;
      const drawn = await chart(request, result, source, set.headers as Record<string, string>);
      if (!drawn) return json as typeof json & Response;
      // a chart is not what an Idempotency-Key stores: the JSON forecast is (a replay draws the chart again)
      const state = requestState(request);
      if (state.idempotencyClaim) {
        await ctx.idempotency.complete(state.idempotencyClaim, 200, JSON.stringify(json), set.headers);
        state.idempotencyClaim = undefined;
      }
      return drawn;
    },
    {
      // an Accept this route cannot answer is 406, before the Idempotency-Key is looked up or claimed
      transform({ request }) {
        refuseUnacceptable(request.headers.get('accept'), CHARTS);
      },
      body: ForecastRequest,
      response: { 200: ForecastResponse },
      detail: apiDoc({
        summary: '13-week cash-flow forecast from the books the tenant holds (JSON, or a chart as SVG or PNG)',
        description:
          'Direct method: the opening balance (given, or the bank movements summed to as_of), receipts from the open receivables placed by each customer\u2019s observed payment delays (the portfolio\u2019s when a customer has fewer than 3 paid invoices), payables given and the recurring outflows found in the bank data (the same kind of movement in 3 of the last 6 months, within 25 % of its median). Weekly p10, p50 and p90 balances from a seeded Monte Carlo over the delays (the same request gives the same answer); a week is at risk when p10 or p50 is below zero. Accept: image/svg+xml or image/png for the chart. Backtest on the demo books: docs/forecast.md.',
        tag: 'erp',
        security: 'BearerAuth',
        operationId: 'forecast',
        errors: ['resource_not_found', 'not_acceptable'],
        alsoAnswers: { 'image/svg+xml': 'The chart: the p10\u2013p90 band and the p50 line of the weekly balance, weeks at risk shaded', 'image/png': 'The same chart as PNG' },
        examples: { demo: { summary: 'The synced demo books of cliente-1', value: { source: { provider: 'demo', customer_reference: 'cliente-1' }, weeks: 13, payables: [{ due_date: '2026-12-20', amount_cents: 1_500_000, counterparty: 'Fornecedor A' }] } } },
      }),
    },
  );
}
