import { and, desc, eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { ApiError } from '../../lib/errors';
import { pageOf } from '../../lib/schemas';
import { afterTimeCursor, timeCursorOf } from '../../lib/page-cursor';
import type { UsageMeter } from '../usage/service';
import type { ScoreCaller } from '../score/service';
import { assessEsg, ESG_ALGORITHM_VERSION, recommendationRef, renderRecommendation, type Recommendation, type RecommendationRef } from './engine';
import type { AnswerValue } from './questionnaire';
import type { EsgResponse } from './model';

type EsgAnswer = typeof EsgResponse.static;

/** Runs the pure engine, stores the assessment (inputs and result) and meters it. */
export class EsgService {
  constructor(
    private readonly database: Database,
    private readonly usage: UsageMeter,
    private readonly now: () => Date,
  ) {}

  async assess(caller: ScoreCaller, body: { nif: string; customer_reference?: string; sector: string; answers: Record<string, AnswerValue> }, lang: 'en' | 'pt') {
    const result = assessEsg({ sector: body.sector, answers: body.answers }, lang);
    const computedAt = this.now();
    const id = Bun.randomUUIDv7(); // time-ordered: inserts land at the end of the primary-key index
    const response = {
      assessment_id: id,
      ...result,
      algorithm_version: ESG_ALGORITHM_VERSION,
      computed_at: computedAt.toISOString(),
      synthetic: caller.env === 'sandbox',
      ...(body.customer_reference !== undefined ? { customer_reference: body.customer_reference } : {}),
    };
    // by group commit (one transaction for many requests); decisions read the latest assessment through a cache
    await this.database.commitRows(
      this.database.t.esgAssessments,
      [{
        id,
        tenantId: caller.tenantId,
        env: caller.env,
        nif: body.nif,
        customerReference: body.customer_reference ?? null,
        sector: body.sector,
        answers: body.answers,
        // the answer, its recommendations as references to the catalogue (renderRecommendation),
        // each with the variant of its text the answers chose
        result: { ...response, recommendations: response.recommendations.map(recommendationRef) },
        algorithmVersion: ESG_ALGORITHM_VERSION,
        synthetic: response.synthetic,
        computedAt,
      }],
      [{ tenantId: caller.tenantId, aspect: 'scores' }],
    );
    this.usage.record({ tenantId: caller.tenantId, apiKeyId: caller.keyId, env: caller.env, meter: 'esg', requestId: caller.requestId });
    return response;
  }
}

type AssessmentRow = Database['t']['esgAssessments']['$inferSelect'];

/**
 * A stored assessment's recommendations in a language: recomputed by the same engine while the
 * assessment's algorithm is the current one (identical ids, order, numbers and text variants, which
 * the engine picks from the answers alone; only the language follows the request), else rendered
 * from what was stored with the catalogue of the assessment's version.
 */
export function recommendationsOf(row: Pick<AssessmentRow, 'algorithmVersion' | 'sector' | 'answers' | 'result'>, lang: 'en' | 'pt'): Recommendation[] {
  if (row.algorithmVersion === ESG_ALGORITHM_VERSION) return assessEsg({ sector: row.sector, answers: row.answers as Record<string, AnswerValue> }, lang).recommendations;
  return storedRecommendations((row.result as { recommendations: (Recommendation | RecommendationRef)[] }).recommendations, lang, row.algorithmVersion);
}

/** A stored assessment as POST /v1/esg answered it (recommendations in `lang`), with what was assessed. */
export function assessmentView(row: AssessmentRow, lang: 'en' | 'pt') {
  const stored = row.result as Omit<EsgAnswer, 'recommendations'>;
  // (the id and time from their columns: results stored before they carried them have neither)
  return {
    ...stored,
    assessment_id: row.id,
    computed_at: row.computedAt.toISOString(),
    recommendations: recommendationsOf(row, lang),
    nif: row.nif,
    sector: row.sector,
    answers: row.answers as Record<string, AnswerValue>,
  };
}

/** Stored assessments of one tenant and environment: newest first, and one by its id. */
export class EsgAssessments {
  constructor(private readonly database: Database) {}

  /** one NIF's, by time: the index the decisions' latest-assessment read uses (tenant, env, nif, computed_at) serves it */
  async list(caller: Pick<ScoreCaller, 'tenantId' | 'env'>, q: { nif: string; limit?: number; cursor?: string }, lang: 'en' | 'pt') {
    const e = this.database.t.esgAssessments;
    const limit = q.limit ?? 50;
    const where = and(eq(e.tenantId, caller.tenantId), eq(e.env, caller.env), eq(e.nif, q.nif), afterTimeCursor(e.computedAt, e.id, q.cursor));
    const rows = await this.database.db.select().from(e).where(where).orderBy(desc(e.computedAt), desc(e.id)).limit(limit + 1);
    return pageOf(rows, limit, (r) => assessmentView(r, lang), (r) => timeCursorOf(r.computedAt, r.id));
  }

  async get(caller: Pick<ScoreCaller, 'tenantId' | 'env'>, id: string, lang: 'en' | 'pt') {
    const e = this.database.t.esgAssessments;
    const [row] = await this.database.db.select().from(e).where(and(eq(e.tenantId, caller.tenantId), eq(e.env, caller.env), eq(e.id, id.toLowerCase()))).limit(1);
    if (!row) throw new ApiError('resource_not_found', `No ESG assessment ${id} in this tenant and environment.`);
    return assessmentView(row, lang);
  }
}

/**
 * The recommendations of a stored assessment, in a language: references are rendered from the
 * catalogue of the assessment's algorithm version (esg-1.0.0: the default texts; later: the variant
 * each reference names); assessments stored with their texts (before references) keep them.
 */
export function storedRecommendations(stored: (Recommendation | RecommendationRef)[], lang: 'en' | 'pt', version: string = ESG_ALGORITHM_VERSION): Recommendation[] {
  return stored.flatMap((r) => ('title' in r ? [r] : (renderRecommendation(r, lang, version) ?? [])));
}
