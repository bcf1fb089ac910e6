import { t } from 'elysia';
import { CustomerReference, DateTime, Nif, Page, Int, PageLimit, refusesUnknownFields } from '../../lib/schemas';
import { MODALITIES, NOTCHES, OPERATION_TYPES, TERM_BUCKETS } from './policy';

// written out (not mapped from the lists) so the static types stay literal; checked against the lists below

export const NotchSchema = t.Union([t.Literal('A+'), t.Literal('A'), t.Literal('A-'), t.Literal('B+'), t.Literal('B'), t.Literal('B-'), t.Literal('C+'), t.Literal('C'), t.Literal('C-'), t.Literal('D+'), t.Literal('D'), t.Literal('D-'), t.Literal('E+'), t.Literal('E'), t.Literal('E-')], { description: 'Notched tier (A+ best … E- worst); bands of 12-month PD in docs/credit-policy.md' });
export const ModalitySchema = t.Union([t.Literal('non_recourse'), t.Literal('recourse'), t.Literal('with_insurance'), t.Literal('secured'), t.Literal('unsecured')]);
export const OperationTypeSchema = t.Union([t.Literal('factoring'), t.Literal('confirming'), t.Literal('invoice_discounting'), t.Literal('credit_line'), t.Literal('trade_credit')]);
const Refresh = t.Union([t.Literal('cached_ok'), t.Literal('force_refresh')], {
  default: 'cached_ok',
  description: 'cached_ok uses a score computed in the last 24 h (and after the last ERP sync) if there is one; force_refresh always recomputes',
});

export const DecisionRequest = t.Object({
  nif: Nif,
  country: t.Optional(t.String({ format: 'country', default: 'PT', description: 'ISO 3166-1 alpha-2 country of registration, either case; only PT is supported (another country: 422 unsupported_country; not a code: 422 validation_failed)' })),
  context: refusesUnknownFields(t.Object({
    operation_type: OperationTypeSchema,
    amount_eur: t.Number({ minimum: 0.01, maximum: 1e12, description: 'The exposure asked for, in euros and whole cents' }),
    expected_term_days: Int({ minimum: 1, maximum: 720, description: 'Expected term of the exposure, in days' }),
    insurance_submission_id: t.Optional(t.String({ pattern: '^ins_[0-9a-f-]{36}$', description: 'A credit-insurance submission on this NIF (POST /v1/insurance/submit): with full or partial cover the modality is with_insurance and the limit at least the insured amount' })),
  })),
  customer_reference: t.Optional(CustomerReference),
  refresh: t.Optional(Refresh),
});

export const Signal = t.Object({
  factor: t.String({ description: 'Stable code of the driver (the score reason codes in lower case, erp_* for the tenant\'s own books, esg_* for its ESG assessment)' }),
  weight: t.Union([t.Literal('+'), t.Literal('-')], { description: '+ favours the company, - counts against it' }),
  label: t.String(),
  source: t.String({ description: 'The input it comes from (financial_statements, credit_register, tax_authority, company_registry, legal_events, payment_behaviour, erp:<provider>, esg)' }),
  strength: t.Number({ minimum: 0, maximum: 1, description: 'Share of the score\'s explained movement (signals are sorted by it, strongest first); above 0 since decision-1.1.0 (earlier decisions also listed the tenant\'s books and ESG assessment here at 0, now under observations)' }),
}, { description: 'A driver of the decision: one of the score\'s reasons, weighed in it' });

export const Observation = t.Object({
  factor: t.String({ description: 'Stable code: erp_* for the tenant\'s own books about the company (erp_pays_late, erp_pays_on_time, erp_overdue_balance, erp_revenue_decline, erp_revenue_growth, erp_customer_concentration), esg_strong / esg_weak for its ESG assessment' }),
  label: t.String(),
  source: t.String({ description: 'erp:<provider> or esg' }),
}, { description: 'What the tenant\'s books or ESG assessment show about the company, not weighed in the decision (the books set the score\'s payment input, whose reason is a signal with source erp:<provider>; ESG moves neither the limit nor the spread)' });

export const DecisionResponse = t.Object({
  decision_id: t.String({ examples: ['dec_01936c1e-8a2f-7b3c-9d4e-5f60718293a4'] }),
  nif: t.String(),
  score: Int({ minimum: 0, maximum: 100, description: 'The 0–1000 credit score divided by 10, rounded' }),
  tier: NotchSchema,
  pd_estimate: t.Number({ minimum: 0, maximum: 1, description: '12-month PD the tier is read from (the score\'s PD, or its indicative PD when the data cannot support one)' }),
  breakdown: t.Object({
    financial: t.Union([Int({ minimum: 0, maximum: 100 }), t.Null()], { description: 'Mean of the score\'s financial components, 0–100; null without financial statements (the components then stand at the neutral 0.5)' }),
    behavioral: t.Union([Int({ minimum: 0, maximum: 100 }), t.Null()], { description: 'Mean of the score\'s behavioural components, 0–100; null without payment, credit-register, tax or legal-event data, or the tenant\'s books' }),
    esg: t.Union([Int({ minimum: 0, maximum: 100 }), t.Null()], { description: 'Overall score of the tenant\'s latest ESG assessment of this NIF; null without one' }),
  }),
  recommendation: t.Object({
    approved: t.Boolean(),
    limit_eur: t.Number({ minimum: 0 }),
    suggested_spread_bps: Int({ minimum: 0, description: 'Annual spread over the base rate (GET /v1/index/spreads)' }),
    modality: ModalitySchema,
    basis: t.Array(t.String(), { description: 'How the limit, the approval and the spread were reached, step by step: every step that changes the limit has its line (the figures multiply out to limit_eur), then the index row the spread is (GET /v1/index/spreads) and each step above it' }),
  }),
  signals: t.Array(Signal, { description: 'The drivers, strongest first: the score\'s reasons with their weight, each traceable to its input (source)' }),
  observations: t.Optional(t.Array(Observation, { description: 'The tenant\'s books and ESG assessment beside the drivers, not weighed (always present since decision-1.1.0)' })),
  data_freshness: t.String({ format: 'date-time', description: 'When the oldest input used is as of: the financial statements at 31 December of their fiscal year (00:00 UTC), the score\'s other sources at the score\'s computed_at (they carry no date of their own), the tenant\'s books at their newest synced document, the ESG assessment when made (docs/credit-policy.md §8)' }),
  esg: t.Union([t.Object({ e: Int(), s: Int(), g: Int() }), t.Null()]),
  latency_ms: t.Number({ minimum: 0 }),
  erp_source: t.Union([t.String(), t.Null()], { description: 'The ERP provider whose synced books fed the decision, or null' }),
  context: t.Object({ operation_type: OperationTypeSchema, amount_eur: t.Number(), expected_term_days: Int(), insurance_submission_id: t.Optional(t.String()) }),
  algorithm_version: t.String({ examples: ['decision-1.1.0+score-1.1.0'] }),
  synthetic: t.Boolean(),
  computed_at: DateTime,
  cache: t.Union([t.Literal('fresh'), t.Literal('cached')], {
    description: 'cached: the same request was decided earlier and nothing behind it changed since; the answer (and decision_id) is that decision\'s. GET /v1/decisions holds it once.',
  }),
  customer_reference: t.Optional(t.String()),
  language: t.Optional(t.Union([t.Literal('en'), t.Literal('pt-PT')], { description: 'The language of its basis lines and signal labels (Accept-Language of the request that made it); absent on decisions made before 2026-11-28' })),
}, {
  examples: [
    {
      decision_id: 'dec_01a21087-3235-7188-86af-587e65ebccd2', nif: '599000023', score: 66, tier: 'B', pd_estimate: 0.007543,
      breakdown: { financial: 60, behavioral: 48, esg: null },
      recommendation: { approved: true, limit_eur: 231000, suggested_spread_bps: 135, modality: 'non_recourse', basis: ['notch B (PD 0.75 %)', 'base 30 % of equity €1,350,000.00: €405,000.00', '× 0.7 for notch B', '× 0.8165 for a 90-day term', '= €231,476.78', 'rounded down to the thousand: €231,000.00', 'spread: index B, 90 days, non_recourse: 135 bps'] },
      signals: [
        { factor: 'high_concentration', weight: '-', label: 'High dependence on a single customer', source: 'payment_behaviour', strength: 0.2468 },
        { factor: 'strong_equity', weight: '+', label: 'Strong equity base', source: 'financial_statements', strength: 0.1511 },
      ],
      observations: [],
      data_freshness: '2025-12-31T00:00:00.000Z', esg: null, latency_ms: 1.3, erp_source: null,
      context: { operation_type: 'factoring', amount_eur: 150000, expected_term_days: 90 },
      algorithm_version: 'decision-1.1.0+score-1.1.0', synthetic: true, computed_at: '2026-11-22T10:00:00.000Z', cache: 'fresh', customer_reference: 'deal-2026-118',
    },
  ],
});
export type DecisionResponseBody = typeof DecisionResponse.static;

export const DecisionList = Page(DecisionResponse);
export const DecisionListQuery = t.Object({
  nif: t.Optional(Nif),
  limit: PageLimit,
  cursor: t.Optional(t.String({ pattern: '^dec_[0-9a-f-]{36}$', description: 'next_cursor of the previous page' })),
});
export const DecisionIdParams = t.Object({ id: t.String({ pattern: '^dec_[0-9a-f-]{36}$' }) });

export const CreditLimitParams = t.Object({ buyer_nif: Nif });
export const CreditLimitQuery = t.Object({
  term_days: t.Optional(t.Integer({ minimum: 1, maximum: 720, default: 60 })),
  refresh: t.Optional(Refresh),
});
export const CreditLimitResponse = t.Object({
  buyer_nif: t.String(),
  name: t.String(),
  limit_eur: t.Number({ minimum: 0 }),
  currency: t.Literal('EUR'),
  tier: NotchSchema,
  pd_estimate: t.Number({ minimum: 0, maximum: 1 }),
  term_days: Int(),
  basis: t.Array(t.String()),
  erp_source: t.Union([t.String(), t.Null()]),
  valid_until: DateTime,
  computed_at: DateTime,
  synthetic: t.Boolean(),
});

export const SpreadsQuery = t.Object({
  tier: t.Optional(t.String({ pattern: '^[A-E][+ -]?$', description: 'A notched tier, A+ … E- (URL-encode + as %2B; a + decoded as a space is read as +)' })),
  // an integer in the document (with its values), one of the buckets checked by the route: Elysia
  // coerces a query's integers, not its numeric literals
  term_days: t.Optional(t.Integer({ minimum: 30, maximum: 360, enum: [...TERM_BUCKETS], description: `One of the term buckets, in days: ${TERM_BUCKETS.join(', ')}` })),
  modality: t.Optional(ModalitySchema),
});
export const SpreadsResponse = t.Object({
  as_of: DateTime,
  base_rate: t.Object({ name: t.String(), value_pct: t.Number(), as_of: t.String({ format: 'date' }) }),
  spreads: t.Array(t.Object({ tier: NotchSchema, term_days: Int(), modality: ModalitySchema, spread_bps: Int(), all_in_rate_pct: t.Number() })),
  methodology: t.String({ description: 'How the spreads are priced, in English, or Portuguese with Accept-Language: pt-PT' }),
  methodology_url: t.String(),
});

export const PolicyResponse = t.Object({
  min_tier: NotchSchema,
  max_amount_eur: t.Number(),
  lgd: t.Object(Object.fromEntries(MODALITIES.map((m) => [m, t.Number({ minimum: 0, maximum: 1 })])) as Record<(typeof MODALITIES)[number], ReturnType<typeof t.Number>>),
  margin_bps: Int(),
  is_default: t.Boolean({ description: 'true while the tenant has not changed the documented defaults in this environment' }),
  updated_at: t.Union([DateTime, t.Null()]),
});
export const PolicyPatch = refusesUnknownFields(
  t.Object(
    {
      min_tier: t.Optional(NotchSchema),
      max_amount_eur: t.Optional(t.Number({ minimum: 1000, maximum: 1e12 })),
      lgd: refusesUnknownFields(t.Optional(t.Partial(t.Object(Object.fromEntries(MODALITIES.map((m) => [m, t.Number({ minimum: 0, maximum: 1 })])) as Record<(typeof MODALITIES)[number], ReturnType<typeof t.Number>>), { additionalProperties: false }))),
      margin_bps: t.Optional(Int({ minimum: 0, maximum: 5000 })),
    },
    { additionalProperties: false },
  ),
);

export const SectorRiskParams = t.Object({ naics: t.String({ pattern: '^[0-9]{2,6}$', description: 'NAICS code, 2 to 6 digits' }) });
export const SectorRiskResponse = t.Object({
  naics: t.String(),
  matched_naics: t.String({ description: 'The code whose row answered (a 6-digit industry inherits its subsector\'s figures)' }),
  title: t.String({ description: 'The NAICS title, in English, or European Portuguese with Accept-Language: pt-PT' }),
  level: t.Union([t.Literal('sector'), t.Literal('subsector'), t.Literal('industry_group'), t.Literal('industry'), t.Literal('national_industry')]),
  nace: t.Object({
    section: t.String(),
    division: t.String(),
    section_title: t.String({ description: 'The NACE Rev. 2 section\'s title: Eurostat\'s in English, CAE Rev. 3\'s (INE) with Accept-Language: pt-PT' }),
  }),
  risk_level: t.Union([t.Literal('low'), t.Literal('moderate'), t.Literal('elevated'), t.Literal('high')]),
  default_rate_pct: t.Number(),
  overdue_rate_pct: t.Number(),
  companies_scored: Int({ minimum: 0, description: 'Companies this tenant scored in this environment whose sector is the NACE section of this code' }),
  sources: t.Array(t.String(), { description: 'The concordance and the rates\' source, in the answer\'s language' }),
});

// the literal unions above and the policy's lists must agree
const listed = (schema: { anyOf: { const: string }[] }) => schema.anyOf.map((x) => x.const).join();
if (listed(NotchSchema as never) !== NOTCHES.join() || listed(ModalitySchema as never) !== MODALITIES.join() || listed(OperationTypeSchema as never) !== OPERATION_TYPES.join())
  throw new Error('decision model: literal unions differ from policy.ts');
