import { t } from 'elysia';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { CustomerReference, DateTime, Nif, Int } from '../../lib/schemas';
import { NIF_SHAPE } from '../../lib/nif';
import { type ApiError, fieldProblems, isJsonObject, validationError } from '../../lib/errors';
import { RequestProblems } from '../../lib/request-problems';

export const ScoreRequest = t.Object({
  nif: Nif,
  customer_reference: t.Optional(CustomerReference),
  refresh: t.Optional(
    t.Union([t.Literal('cached_ok'), t.Literal('force_refresh')], {
      default: 'cached_ok',
      description: 'cached_ok returns a result computed in the last 24 h if there is one; force_refresh always recomputes',
    }),
  ),
});

export const Reason = t.Object({
  code: t.String({ description: 'Stable reason code; catalogue in docs/scoring.md' }),
  label: t.String({ description: 'English, or Portuguese with Accept-Language: pt-PT' }),
  impact: t.Union([t.Literal('positive'), t.Literal('negative')]),
  weight: t.Number({ minimum: 0, maximum: 1 }),
});

export const ScoreResponse = t.Object({
  score: Int({ minimum: 0, maximum: 1000 }),
  tier: t.Union([t.Literal('A'), t.Literal('B'), t.Literal('C'), t.Literal('D'), t.Literal('E')]),
  pd_estimate: t.Union([t.Number({ minimum: 0, maximum: 1 }), t.Null()], { description: '12-month probability of default; null when the data cannot support a PD' }),
  components: t.Record(t.String(), t.Number({ minimum: 0, maximum: 1 }), {
    description:
      'financial_strength, profitability, liquidity, leverage, payment_behaviour, credit_history, tax_compliance, company_maturity, legal_events (each 0–1, 1 = best; 0.5 = the reference company or input absent)',
  }),
  reasons: t.Array(Reason),
  algorithm_version: t.String({ examples: ['score-1.1.0'] }),
  data_sources: t.Array(t.String()),
  computed_at: DateTime,
  cache: t.Union([t.Literal('fresh'), t.Literal('cached')]),
  synthetic: t.Boolean(),
  customer_reference: t.Optional(t.String()),
});

export const FixturesResponse = t.Object({
  fixtures: t.Array(t.Object({ nif: t.String(), outcome: t.String(), description: t.String() })),
});

export type ScoreResponseBody = typeof ScoreResponse.static;

/** One item of POST /v1/score/batch: what POST /v1/score takes, but for refresh (the batch's). */
export const ScoreBatchItem = t.Object({
  nif: t.String({
    pattern: NIF_SHAPE.source,
    format: 'nif',
    description: 'A NIF (9 digits, the last its mod-11 check digit). Judged per item: a NIF of another shape or type, or missing, is that item\u2019s 422 validation_failed; a wrong check digit its 422 invalid_nif',
    examples: ['599000015'],
  }),
  customer_reference: t.Optional(t.String({ maxLength: 128, description: 'Your own reference, echoed back (max 128 characters); a longer one (or not a string) is that item\u2019s 422 validation_failed' })),
});
export const MAX_BATCH_ITEMS = 1000;
export const ScoreBatchRequest = t.Object({
  items: t.Array(ScoreBatchItem, {
    minItems: 1,
    maxItems: MAX_BATCH_ITEMS,
    description:
      'Up to 1,000 objects. A problem inside an object is that item\u2019s 422 (the others are scored); the whole call is 422 only when items is missing, not an array, empty, longer than 1,000, or holds something other than an object',
  }),
  refresh: t.Optional(t.Union([t.Literal('cached_ok'), t.Literal('force_refresh')], { default: 'cached_ok', description: 'For every item, as in POST /v1/score' })),
});

/** An item's error: the §2.8 body POST /v1/score would have answered for it, its field paths in this request (items.3.nif). */
export const ScoreBatchItemError = t.Object(
  {
    code: t.String(),
    message: t.String(),
    status: Int({ description: 'The HTTP status POST /v1/score would have answered for this item (§2.8: the same as the item\u2019s status)' }),
    requestId: t.String({ description: 'The batch request\u2019s id (X-Request-Id)' }),
    docsUrl: t.Optional(t.String({ format: 'uri' })),
    fields: t.Optional(t.Array(t.Object({ path: t.String({ description: 'Path in the whole request, e.g. items.3.nif' }), message: t.String() }))),
  },
  { description: 'The error body (§2.8) of this item' },
);

export const ScoreBatchResponse = t.Object({
  data: t.Array(
    t.Object({
      index: Int({ description: 'The item\u2019s position in the request' }),
      nif: t.String({ description: 'The item\u2019s nif as sent when it is a string (one longer than 64 characters cut to its first 64 and \u2026), else ""' }),
      status: Int({ description: '200, or the status POST /v1/score would have answered for this item' }),
      duplicate_of: t.Optional(Int({ description: 'The index of the first valid item with the same NIF, when this one is not it: this item is answered from that item\u2019s result or error (computed once; cache: cached)' })),
      result: t.Union([ScoreResponse, t.Null()]),
      error: t.Union([ScoreBatchItemError, t.Null()]),
    }),
  ),
  summary: t.Object({ total: Int(), succeeded: Int(), failed: Int(), computed: Int({ description: 'results computed now (the others from the 24 h cache or from an earlier item of the batch)' }) }),
});

export type ScoreBatchItemBody = typeof ScoreBatchItem.static;
/** an item as judged before scoring: valid, or its own 422 */
export type JudgedBatchItem = { index: number; item: ScoreBatchItemBody } | { index: number; nif: string; error: ApiError };

const ScoreBatchEnvelope = t.Object({
  items: t.Array(t.Object({}), { minItems: 1, maxItems: MAX_BATCH_ITEMS }),
  refresh: ScoreBatchRequest.properties.refresh,
});
const compiledEnvelope = TypeCompiler.Compile(ScoreBatchEnvelope);
const compiledItem = TypeCompiler.Compile(ScoreBatchItem);

/**
 * The batch judged before anything is charged or scored: the envelope's problems are the whole
 * call's 422 (thrown); every problem inside an item that is an object is that item's own 422
 * (validation_failed with its fields at items.<i>.…, or invalid_nif when its only problem is the
 * NIF's check digit, as POST /v1/score answers), unknown fields of an item ignored unless it has
 * a real problem (then listed beside it, as everywhere).
 */
export function judgeScoreBatch(body: unknown): JudgedBatchItem[] | null {
  if (!isJsonObject(body)) return null; // refused by the guard, as on every route
  if (!compiledEnvelope.Check(body)) {
    const fields = new RequestProblems(ScoreBatchEnvelope, body).done();
    if (fields.length) throw validationError(fields);
  }
  return (body.items as Record<string, unknown>[]).map((item, index) => {
    if (compiledItem.Check(item)) return { index, item: item as ScoreBatchItemBody };
    const at = `items.${index}`;
    const fields = new RequestProblems(ScoreBatchItem, item).done().map((f) => ({ path: f.path === '(body)' ? at : `${at}.${f.path}`, message: f.message }));
    const nif = typeof item.nif === 'string' ? (item.nif.length > 64 ? `${item.nif.slice(0, 64)}\u2026` : item.nif) : '';
    return { index, nif, error: fields.length ? fieldProblems(fields, 'The item is invalid; see fields.') : validationError([{ path: at, message: 'is not valid' }], 'The item is invalid; see fields.') };
  });
}
