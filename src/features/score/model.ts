import { t } from 'elysia';
import { CustomerReference, DateTime, Nif, Int } from '../../lib/schemas';

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

export const ScoreBatchRequest = t.Object({
  items: t.Array(t.Object({ nif: t.String({ maxLength: 64, description: 'A NIF (9 digits). Judged per item: another shape is that item\u2019s 422 validation_failed, a wrong check digit its 422 invalid_nif' }), customer_reference: t.Optional(CustomerReference) }), {
    minItems: 1,
    maxItems: 1000,
  }),
  refresh: t.Optional(t.Union([t.Literal('cached_ok'), t.Literal('force_refresh')], { default: 'cached_ok', description: 'For every item, as in POST /v1/score' })),
});
export const ScoreBatchResponse = t.Object({
  data: t.Array(
    t.Object({
      index: Int({ description: 'The item\u2019s position in the request' }),
      nif: t.String(),
      status: Int({ description: '200, or the status POST /v1/score would have answered for this item' }),
      result: t.Union([ScoreResponse, t.Null()]),
      error: t.Union([t.Object({ code: t.String(), message: t.String() }), t.Null()]),
    }),
  ),
  summary: t.Object({ total: Int(), succeeded: Int(), failed: Int(), computed: Int({ description: 'results computed now (the others from the 24 h cache)' }) }),
});
