import { and, count, desc, eq, sql } from 'drizzle-orm';
import type { Database, Db } from '../../db/client';
import { ApiError } from '../../lib/errors';
import { isValidNif } from '../../lib/nif';
import { ReadCache } from '../../lib/read-cache';
import type { UsageMeter } from '../usage/service';
import type { Env } from '../tenants/service';
import { composeLiveProfile, UpstreamError, type LiveAdapters } from './adapters';
import { ALGORITHM_VERSION, REASON_CATALOGUE, scoreCompany, type CompanyProfile, type Lang, type Reason } from './engine';
import { sandboxLookup, SANDBOX_FIXTURES } from './fixtures';
import type { ScoreResponseBody } from './model';
import type { MaybePromise } from '../../lib/maybe-promise';

export const SCORE_CACHE_MS = 24 * 3600_000;

export interface ScoreCaller {
  tenantId: string;
  keyId: string | null;
  env: Env;
  requestId: string | null;
  /** PostgreSQL + Redis: the tenant's score cache generation read by this request (see ReadCache) */
  scoreGeneration?: number;
}

export type StoredResult = Omit<ScoreResponseBody, 'cache' | 'customer_reference'>;
type ScoreRow = Database['t']['scoreResults']['$inferSelect'];

/** Labels are not stored: they are rendered in the caller's language from the catalogue. */
const relabel = (reasons: Reason[], lang: Lang): Reason[] =>
  reasons.map((r) => ({ ...r, label: REASON_CATALOGUE[r.code]?.[lang] ?? r.label }));

export class ScoreService {
  constructor(
    private readonly database: Database,
    private readonly usage: UsageMeter,
    private readonly now: () => Date,
    private readonly liveAdapters: LiveAdapters | null,
    private readonly roadmapUrl: string,
  ) {}

  /** Without a promise when the answer is in the in-process cache (the fast path's common case). */
  score(caller: ScoreCaller, req: ScoreRequestBody, lang: Lang): MaybePromise<ScoreResponseBody> {
    return this.cachedAnswer(caller, req, lang) ?? this.scoreUncached(caller, req, lang);
  }

  private async scoreUncached(caller: ScoreCaller, req: ScoreRequestBody, lang: Lang): Promise<ScoreResponseBody> {
    if (!isValidNif(req.nif)) throw invalidNif();
    if (caller.env === 'live' && !this.liveAdapters)
      throw new ApiError('live_tier_not_available', 'Live scoring is not available yet for this deployment. Test against the sandbox (sk_test_ keys) meanwhile.', {
        body: { roadmap_url: this.roadmapUrl },
      });
    const echo = req.customer_reference !== undefined ? { customer_reference: req.customer_reference } : {};
    if ((req.refresh ?? 'cached_ok') === 'cached_ok') {
      const cached = await this.latest(caller, req.nif, new Date(this.now().getTime() - SCORE_CACHE_MS));
      if (cached) return this.answerFromCache(caller, cached, req, lang);
    }
    const computed = await this.compute(caller, req.nif, 'request', req.customer_reference ?? null);
    this.bill(caller, 'score');
    return { ...computed.result, reasons: relabel(computed.result.reasons, lang), cache: 'fresh' as const, ...echo };
  }

  /** score() from the in-process read cache alone; undefined whenever there is more to do (errors, loads, computing). */
  private cachedAnswer(caller: ScoreCaller, req: ScoreRequestBody, lang: Lang): ScoreResponseBody | undefined {
    if ((req.refresh ?? 'cached_ok') !== 'cached_ok' || (caller.env === 'live' && !this.liveAdapters)) return undefined;
    const row = this.latestCache?.peek(latestKey(caller, req.nif), caller.scoreGeneration);
    // a stored score's NIF passed the check when it was computed: only a miss needs it (scoreUncached)
    if (!row || row.computedAt.getTime() <= this.now().getTime() - SCORE_CACHE_MS) return undefined;
    return this.answerFromCache(caller, row, req, lang);
  }

  private answerFromCache(caller: ScoreCaller, row: ScoreRow, req: ScoreRequestBody, lang: Lang): ScoreResponseBody {
    this.bill(caller, 'score');
    const body = this.cachedBody(row, lang);
    return req.customer_reference !== undefined ? { ...body, customer_reference: req.customer_reference } : body;
  }

  /**
   * The answer for a cached result in one language, built once per stored row and language and
   * shared by the requests that get it (so callers must not mutate it; the fast path also
   * serialises it once). Rows are immutable, and the read cache drops them on any commit.
   */
  private cachedBodies = new WeakMap<ScoreRow, Partial<Record<Lang, ScoreResponseBody>>>();
  private cachedBody(row: ScoreRow, lang: Lang): ScoreResponseBody {
    let byLang = this.cachedBodies.get(row);
    if (!byLang) this.cachedBodies.set(row, (byLang = {}));
    const r = row.result as StoredResult;
    return (byLang[lang] ??= Object.freeze({ ...r, reasons: relabel(r.reasons, lang), cache: 'cached' as const }));
  }

  /** Computes and stores a result (history is kept for the nightly re-score and the GDPR export). */
  async compute(caller: ScoreCaller, nif: string, trigger: 'request' | 'rescore', customerReference: string | null) {
    const evaluated = await this.evaluate(caller, nif, trigger);
    await this.database.withTx((tx) => this.store(tx, caller, nif, evaluated.result, trigger, customerReference));
    this.billBureauLookup(caller, evaluated.bureauCostCents);
    return evaluated;
  }

  /**
   * Profile → engine, no writes. Sandbox: fixture profiles at generation = number of earlier
   * re-scores of this NIF (+1 for a re-score), so the deteriorating fixture worsens each night.
   */
  async evaluate(caller: ScoreCaller, nif: string, trigger: 'request' | 'rescore'): Promise<{ result: StoredResult; bureauCostCents: number | null }> {
    let profile: CompanyProfile;
    let bureauCostCents: number | null = null;
    if (caller.env === 'sandbox') {
      const generation = (await this.rescoreCount(caller, nif)) + (trigger === 'rescore' ? 1 : 0);
      const found = sandboxLookup(nif, generation);
      if (found.kind === 'invalid_nif') throw invalidNif('The tax authority does not recognise this NIF (sandbox fixture invalid_nif_422).');
      if (found.kind === 'not_found')
        throw new ApiError('company_not_found', `No sandbox company with NIF ${nif}. The sandbox knows only its fixtures: GET /v1/sandbox/fixtures lists them.`);
      profile = found.profile;
    } else {
      if (!this.liveAdapters) throw new ApiError('live_tier_not_available');
      let composed;
      try {
        composed = await composeLiveProfile(this.liveAdapters, nif);
      } catch (err) {
        if (err instanceof UpstreamError)
          throw new ApiError('upstream_unavailable', `A data source is unavailable (${err.source}); nothing was billed. Retry later.`, { headers: { 'retry-after': '30' } });
        throw err;
      }
      if (!composed) throw new ApiError('company_not_found', `No company with NIF ${nif} is known to the credit bureau.`);
      profile = composed.profile;
      bureauCostCents = composed.bureauCostCents;
    }
    const engine = scoreCompany(profile, 'en');
    const result: StoredResult = {
      score: engine.score,
      tier: engine.tier,
      pd_estimate: engine.pd,
      components: engine.components,
      reasons: engine.reasons,
      algorithm_version: ALGORITHM_VERSION,
      data_sources: engine.data_sources,
      computed_at: this.now().toISOString(),
      synthetic: caller.env === 'sandbox',
    };
    return { result, bureauCostCents };
  }

  async store(tx: Db, caller: Pick<ScoreCaller, 'tenantId' | 'env'>, nif: string, result: StoredResult, trigger: 'request' | 'rescore', customerReference: string | null) {
    this.database.touchTenant(caller.tenantId, 'scores'); // its latest score changes (read caches)
    await this.database.insertMany(tx, this.database.t.scoreResults, [{
      id: crypto.randomUUID(),
      tenantId: caller.tenantId,
      env: caller.env,
      nif,
      customerReference,
      score: result.score,
      tier: result.tier,
      pd: result.pd_estimate,
      result,
      algorithmVersion: ALGORITHM_VERSION,
      synthetic: result.synthetic,
      trigger,
      computedAt: new Date(result.computed_at),
    }]);
  }

  // hot-path reads, prepared once (Drizzle's query building costs more than the query itself)
  private latestQuery?: { execute(p: Record<string, string>): Promise<ScoreRow[]> };
  private rescoreCountQuery?: { execute(p: Record<string, string>): Promise<{ n: number }[]> };

  private latestCache?: ReadCache<ScoreRow>;

  /** The newest result for this tenant, environment and NIF (computed after notBefore, if given). */
  async latest(caller: Pick<ScoreCaller, 'tenantId' | 'env' | 'scoreGeneration'>, nif: string, notBefore?: Date): Promise<ScoreRow | null> {
    this.latestCache ??= new ReadCache(this.database);
    const row = await this.latestCache.get(latestKey(caller, nif), () => this.readLatest(caller, nif), caller.scoreGeneration);
    if (!row || (notBefore && row.computedAt.getTime() <= notBefore.getTime())) return null;
    return row;
  }

  private async readLatest(caller: Pick<ScoreCaller, 'tenantId' | 'env'>, nif: string): Promise<ScoreRow | null> {
    const s = this.database.t.scoreResults;
    this.latestQuery ??= this.database.db
      .select()
      .from(s)
      .where(and(eq(s.tenantId, sql.placeholder('tenantId')), eq(s.env, sql.placeholder('env')), eq(s.nif, sql.placeholder('nif'))))
      .orderBy(desc(s.computedAt))
      .limit(1)
      .prepare('score_latest');
    const [row] = await this.latestQuery.execute({ tenantId: caller.tenantId, env: caller.env, nif });
    return row ?? null;
  }

  private async rescoreCount(caller: Pick<ScoreCaller, 'tenantId' | 'env'>, nif: string) {
    const s = this.database.t.scoreResults;
    this.rescoreCountQuery ??= this.database.db
      .select({ n: count() })
      .from(s)
      .where(and(eq(s.tenantId, sql.placeholder('tenantId')), eq(s.env, sql.placeholder('env')), eq(s.nif, sql.placeholder('nif')), eq(s.trigger, 'rescore')))
      .prepare('score_rescore_count');
    const [row] = await this.rescoreCountQuery.execute({ tenantId: caller.tenantId, env: caller.env, nif });
    return Number(row?.n ?? 0);
  }

  /** a bureau lookup (live scores, requested or nightly re-scores): usage line bureau_passthrough at cost + 15 % */
  billBureauLookup(caller: ScoreCaller, costCents: number | null) {
    if (costCents !== null) this.bill(caller, 'bureau_passthrough', costCents);
  }

  /** one usage record of this caller's request (one object: this runs on every billed call) */
  private bill(caller: ScoreCaller, meter: string, costCents?: number) {
    this.usage.record({ tenantId: caller.tenantId, apiKeyId: caller.keyId, env: caller.env, requestId: caller.requestId, meter, costCents });
  }

  fixtures() {
    return SANDBOX_FIXTURES.map(({ nif, outcome, description }) => ({ nif, outcome, description }));
  }
}

const latestKey = (caller: Pick<ScoreCaller, 'tenantId' | 'env'>, nif: string) => `${caller.tenantId}|${caller.env}|${nif}`;
type ScoreRequestBody = { nif: string; customer_reference?: string; refresh?: 'cached_ok' | 'force_refresh' };

const invalidNif = (message = 'The NIF fails the mod-11 check digit.') =>
  new ApiError('invalid_nif', message, { fields: [{ path: 'nif', message: 'not a valid NIF' }] });
