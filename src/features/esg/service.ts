import type { Database } from '../../db/client';
import type { UsageMeter } from '../usage/service';
import type { ScoreCaller } from '../score/service';
import { assessEsg, ESG_ALGORITHM_VERSION, recommendationRef, renderRecommendation, type Recommendation, type RecommendationRef } from './engine';
import type { AnswerValue } from './questionnaire';

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
        // the answer, its recommendations as references to the catalogue (renderRecommendation)
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

/**
 * The recommendations of a stored assessment, in a language: references are rendered from the
 * catalogue; assessments stored with their texts (before references) keep them.
 */
export function storedRecommendations(stored: (Recommendation | RecommendationRef)[], lang: 'en' | 'pt'): Recommendation[] {
  return stored.flatMap((r) => ('title' in r ? [r] : (renderRecommendation(r, lang) ?? [])));
}
