import { t, type Static } from 'elysia';
import { RequestProblems } from '../../lib/request-problems';
import { DateTime, isRequestDate, Nif, Int, RequestDate, refusesUnknownFieldsDeep } from '../../lib/schemas';
import { isJsonObject, type FieldError } from '../../lib/errors';
import { Recommendation } from '../esg/model';

const Sdg = Int({ minimum: 1, maximum: 17 });
const Pillar = t.Union([t.Literal('E'), t.Literal('S'), t.Literal('G')]);
const Language = t.Union([t.Literal('pt-PT'), t.Literal('en')], { description: 'Language of the report (labels, texts, number format). Default: Accept-Language when it names pt or en, else pt-PT.' });
const DateOnly = RequestDate({ description: 'A calendar date, YYYY-MM-DD', examples: ['2026-01-01'] });

export const ReportingPeriod = t.Object(
  { start: DateOnly, end: DateOnly },
  { description: 'The period the report covers: a financial year (start ≤ end, at most 24 months, starting no later than today). Default: the calendar year in which the assessment was made.' },
);

export const CompanyDetails = t.Object(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200, examples: ['Metalúrgica Exemplo, Lda.'] })),
    address: t.Optional(t.String({ minLength: 1, maxLength: 300, examples: ['Rua da Indústria 12, 3800-055 Aveiro'] })),
    legal_form: t.Optional(t.String({ minLength: 1, maxLength: 100, examples: ['Sociedade por quotas'] })),
    country: t.Optional(t.String({ format: 'country', description: 'ISO 3166-1 alpha-2 code of the country of primary operations', examples: ['PT'] })),
    turnover_eur: t.Optional(t.Number({ minimum: 0, maximum: 1e12, description: 'Turnover in euros (B1); with the intensities it also gives total energy (B3) and water withdrawal (B6)' })),
    balance_sheet_eur: t.Optional(t.Number({ minimum: 0, maximum: 1e12, description: 'Balance sheet total in euros (B1)' })),
    employees: t.Optional(Int({ minimum: 0, maximum: 10_000_000, description: 'Number of employees, headcount (B1)' })),
  },
  { description: 'Optional details for the cover and B1, as the caller states them (not checked against a registry).' },
);

/**
 * The documented request. The cross-field rules (exactly one of assessment_id and nif; start ≤ end) are
 * checked by validateReportBody. A field it does not have is refused at any depth (a misspelt
 * `turnover_eur` would silently drop the derived B3/B6 totals): additionalProperties false in /openapi.json.
 */
export const CsrdReportRequest = refusesUnknownFieldsDeep(t.Object(
  {
    assessment_id: t.Optional(t.String({ format: 'uuid', description: 'An ESG assessment of this tenant and environment (assessment_id of POST /v1/esg; either case). Give this or nif, not both.' })),
    nif: t.Optional(
      t.String({ pattern: '^[0-9]{9}$', format: 'nif', description: 'Use the latest ESG assessment of this NIF in this tenant and environment (9 digits, valid check digit). Give this or assessment_id, not both.', examples: ['505201348'] }),
    ),
    language: t.Optional(Language),
    reporting_period: t.Optional(ReportingPeriod),
    company: t.Optional(CompanyDetails),
  },
  { description: 'Exactly one of assessment_id and nif. Fields it does not have are refused (422), at any depth.' },
));

const DatapointValue = t.Union([t.Number(), t.Boolean(), t.String(), t.Array(t.String()), t.Null()]);
const Status = t.Union([t.Literal('reported'), t.Literal('not_reported'), t.Literal('not_applicable')]);

export const ReportDatapoint = t.Object({
  id: t.String({ examples: ['b3_scope1'] }),
  label: t.String(),
  value: DatapointValue,
  display: t.String({ description: 'The value as printed in the PDF' }),
  unit: t.Union([t.String(), t.Null()]),
  vsme_reference: t.String({ examples: ['B3 §30'] }),
  status: Status,
  source: t.Union([t.Literal('assessment'), t.Literal('company'), t.Literal('derived'), t.Literal('report')]),
  indicator: t.Union([t.String(), t.Null()], { description: 'The questionnaire indicator behind the datapoint' }),
});

export const ReportDisclosure = t.Object({
  code: t.String({ examples: ['B3'] }),
  title: t.String(),
  datapoints: t.Array(ReportDatapoint),
});

export const CsrdReport = t.Object({
  report_id: t.String({ pattern: '^rep_[0-9a-f-]{36}$', examples: ['rep_0b7f3c52-8d0e-4a47-9d55-2f1f6a9d0c11'] }),
  assessment_id: t.String(),
  nif: Nif,
  language: Language,
  reporting_period: ReportingPeriod,
  sector: t.String({ examples: ['C25'] }),
  company: CompanyDetails,
  scores: t.Object({
    overall: Int({ minimum: 0, maximum: 100 }),
    environmental: Int({ minimum: 0, maximum: 100 }),
    social: Int({ minimum: 0, maximum: 100 }),
    governance: Int({ minimum: 0, maximum: 100 }),
    tier: t.Union([t.Literal('leader'), t.Literal('advancer'), t.Literal('developing'), t.Literal('starter'), t.Literal('lagging')]),
    vsme_alignment: Int({ minimum: 0, maximum: 27, description: 'Indicators the report discloses (answered, or not applicable where VSME allows it): the assessment\'s count less any "not applicable" the report\'s headcount refuses (B8 turnover rate from 50 employees)' }),
    weights: t.Object({ E: t.Number(), S: t.Number(), G: t.Number() }, { description: 'Pillar weights of the sector (fractions)' }),
    algorithm_version: t.String(),
    assessed_at: DateTime,
  }),
  disclosures: t.Array(ReportDisclosure, { description: 'VSME Basic module B1–B11' }),
  comprehensive_disclosures: t.Array(ReportDisclosure, { description: 'The Comprehensive-module datapoints the questionnaire collects (C3, C5–C9)' }),
  indicators: t.Array(
    t.Object({
      key: t.String(),
      pillar: Pillar,
      label: t.String(),
      value: DatapointValue,
      display: t.String(),
      unit: t.Union([t.String(), t.Null()]),
      status: Status,
      vsme_reference: t.String(),
      sdgs: t.Array(Sdg),
    }),
    { description: 'The 27 questionnaire indicators (the PDF indicator table)' },
  ),
  recommendations: t.Array(Recommendation),
  sdgs: t.Array(
    t.Object({
      goal: Sdg,
      title: t.String(),
      aligned: t.Boolean({ description: 'Aligned per the assessment (docs/esg.md §6)' }),
      pillars: t.Array(Pillar),
      indicators: t.Array(t.String(), { description: 'The reported indicators linked to the goal' }),
      targets: t.Array(t.String(), { description: 'The SDG targets those indicators address (docs/csrd.md §4)' }),
    }),
  ),
  sha256: t.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the PDF bytes (hex)' }),
  pdf_url: t.String({ examples: ['/v1/csrd/reports/rep_0b7f3c52-8d0e-4a47-9d55-2f1f6a9d0c11/pdf'] }),
  synthetic: t.Boolean({ description: 'Made with a sandbox key' }),
  created_at: DateTime,
});
export type CsrdReportBody = Static<typeof CsrdReport>;
export type CsrdReportInput = Static<typeof CsrdReportRequest>;

export const ReportIdParams = t.Object({ id: t.String({ maxLength: 64, description: 'report_id (rep_…)' }) });

/** the longest reporting period: a financial year, a first or changed one included */
const MAX_PERIOD_MONTHS = 24;

/** Every failing field at once: the schema, exactly one of assessment_id/nif, real dates, start ≤ end, a period of at most 24 months that has begun. */
export function validateReportBody(body: unknown, today: string): FieldError[] {
  const problems = new RequestProblems(CsrdReportRequest, body, { refuseUnknown: true });
  if (!problems.object) return problems.fields;
  const b = problems.object;
  const hasId = b.assessment_id !== undefined;
  const hasNif = b.nif !== undefined;
  if (hasId === hasNif) {
    const message = hasId ? 'give assessment_id or nif, not both' : 'give assessment_id or nif (exactly one)';
    for (const path of ['assessment_id', 'nif']) if (!problems.has(path)) problems.add({ path, message });
  }
  const period = b.reporting_period as Record<string, unknown> | undefined;
  if (isJsonObject(period)) {
    // (each date's own form is the schema's: format date)
    if (typeof period.start === 'string' && typeof period.end === 'string' && isRequestDate(period.start) && isRequestDate(period.end) && period.start > period.end)
      problems.add({ path: 'reporting_period.end', message: 'must not be before reporting_period.start' });
    // a report is of a financial year that has begun: a period of decades, or one that starts in the
    // future, is a typo that would be printed on the report as its period
    else if (typeof period.start === 'string' && typeof period.end === 'string' && isRequestDate(period.start) && isRequestDate(period.end)) {
      if (period.start > today) problems.add({ path: 'reporting_period.start', message: `is after today (${today}): a report covers a period that has begun` });
      const [y, m, d] = period.start.split('-').map(Number) as [number, number, number];
      const latestEnd = new Date(Date.UTC(y, m - 1 + MAX_PERIOD_MONTHS, d - 1)).toISOString().slice(0, 10);
      if (period.end > latestEnd) problems.add({ path: 'reporting_period.end', message: `is more than ${MAX_PERIOD_MONTHS} months after reporting_period.start (at most ${latestEnd}): a report covers one financial year` });
    }
  }
  return problems.done();
}
