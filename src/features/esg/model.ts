import { t } from 'elysia';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { CustomerReference, DateTime, Nif, Int, Page, PageLimit } from '../../lib/schemas';
import { isJsonObject, type FieldError } from '../../lib/errors';
import { RequestProblems } from '../../lib/request-problems';
import { answersSchema, isValidSector, SECTOR_PATTERN, validateAnswers } from './questionnaire';
import { ESG_EXAMPLES } from './examples';

const Sdg = Int({ minimum: 1, maximum: 17 });

/** The documented request: `answers` is generated from the questionnaire table. */
export const EsgRequest = t.Object({
  nif: Nif,
  customer_reference: t.Optional(CustomerReference),
  sector: t.String({ pattern: SECTOR_PATTERN, description: 'NACE Rev. 2 section letter A–U, optionally with one of its own two-digit divisions (e.g. C25)', examples: ['C25', 'J', 'F41'] }),
  answers: answersSchema() as unknown as ReturnType<typeof t.Record<ReturnType<typeof t.String>, ReturnType<typeof t.Unknown>>>,
});

const EsgEnvelope = t.Object({ nif: Nif, customer_reference: t.Optional(CustomerReference), sector: t.String(), answers: t.Object({}) });
// checked compiled; the (slow, generator-walking) error list only for a body that fails
const envelope = TypeCompiler.Compile(EsgEnvelope);

/**
 * Full validation of a request body with every failing field at once: the envelope (TypeBox), the
 * sector, and each answer (unknown key, wrong type, out of range, not_applicable rules).
 */
export function validateEsgBody(body: unknown): FieldError[] {
  // (the envelope's answers are an object of any keys: each answer is the questionnaire's to judge)
  const problems = new RequestProblems(EsgEnvelope, body, { compiled: envelope });
  const b = problems.object;
  if (!b) return problems.done();
  if (typeof b.sector === 'string' && !isValidSector(b.sector))
    problems.add({ path: 'sector', message: 'unknown NACE Rev. 2 code: a section letter A–U, optionally with one of its two-digit divisions (e.g. C25)' });
  if (isJsonObject(b.answers)) for (const f of validateAnswers(b.answers)) problems.add(f);
  // an unknown top-level field is ignored when the rest is valid, and listed beside real problems
  // (it may be a misspelt one), as on every route whose schema is closed
  return problems.done();
}

export const Recommendation = t.Object({
  id: t.String(),
  pillar: t.Union([t.Literal('E'), t.Literal('S'), t.Literal('G')]),
  priority: Int({ minimum: 1 }),
  title: t.String(),
  body: t.String(),
  effort: t.Union([t.Literal('low'), t.Literal('medium'), t.Literal('high')]),
  impact: t.Union([t.Literal('low'), t.Literal('medium'), t.Literal('high')]),
  timeline: t.String(),
  sdgs: t.Array(Sdg),
});

export const EsgResponse = t.Object({
  assessment_id: t.String({ format: 'uuid', description: 'The stored assessment: POST /v1/csrd/report builds a VSME report from it' }),
  overall: Int({ minimum: 0, maximum: 100 }),
  tier: t.Union([t.Literal('leader'), t.Literal('advancer'), t.Literal('developing'), t.Literal('starter'), t.Literal('lagging')]),
  environmental: Int({ minimum: 0, maximum: 100 }),
  social: Int({ minimum: 0, maximum: 100 }),
  governance: Int({ minimum: 0, maximum: 100 }),
  vsme_alignment: Int({ minimum: 0, maximum: 27 }),
  aligned_sdgs: t.Array(Sdg),
  recommendations: t.Array(Recommendation),
  algorithm_version: t.String({ examples: ['esg-1.1.0'] }),
  computed_at: DateTime,
  synthetic: t.Boolean(),
  customer_reference: t.Optional(t.String()),
});

/** A stored assessment: the answer POST /v1/esg gave (recommendations in the asked language), and what was assessed. */
export const EsgAssessment = t.Object({
  ...EsgResponse.properties,
  nif: t.String(),
  sector: t.String(),
  answers: t.Record(t.String(), t.Unknown(), { description: 'The answers as given' }),
});
export const EsgAssessmentList = Page(EsgAssessment);
export const EsgAssessmentListQuery = t.Object({
  nif: Nif,
  limit: PageLimit,
  cursor: t.Optional(t.String({ maxLength: 200, description: 'next_cursor of the previous page' })),
});
export const EsgAssessmentParams = t.Object({ id: t.String({ format: 'uuid', description: 'assessment_id (either case)' }) });

export const Questionnaire = t.Object({
  sectors: t.Array(t.Object({ code: t.String(), name: t.String(), name_pt: t.String({ description: 'as CAE Rev. 3 names the section' }) })),
  indicators: t.Array(
    t.Object({
      key: t.String(),
      pillar: t.Union([t.Literal('E'), t.Literal('S'), t.Literal('G')]),
      vsme_ref: t.String(),
      type: t.Union([t.Literal('number'), t.Literal('integer'), t.Literal('boolean'), t.Literal('string'), t.Literal('string[]')]),
      unit: t.Union([t.String(), t.Null()]),
      min: t.Optional(t.Number()),
      max: t.Optional(t.Number()),
      options: t.Optional(t.Array(t.String())),
      better: t.Union([t.Literal('higher'), t.Literal('lower'), t.Null()]),
      applicability: t.Union([t.String(), t.Null()]),
      sdgs: t.Array(Sdg),
      question: t.Object({ en: t.String(), pt: t.String() }),
    }),
  ),
});

export const ESG_OPENAPI_EXAMPLES = Object.fromEntries(
  Object.entries(ESG_EXAMPLES).map(([name, value]) => [name, { summary: name.replaceAll('_', ' '), value }]),
);
