import { and, desc, eq, max, sql, type SQLWrapper } from 'drizzle-orm';
import type { Database, Db } from '../../db/client';
import { ApiError, errorBody, nifCheckFails, withFieldPath } from '../../lib/errors';
import { isValidNif } from '../../lib/nif';
import { plainCommitsGeneration, ReadCache } from '../../lib/read-cache';
import { TurnReads } from '../../lib/turn-reads';
import type { UsageMeter } from '../usage/service';
import type { Env } from '../tenants/service';
import { composeLiveProfile, UpstreamError, type LiveAdapters } from './adapters';
import { ALGORITHM_VERSION, reasonLabel, scoreCompany, type CompanyProfile, type Lang, type Reason } from './engine';
import { sandboxLookup, SANDBOX_FIXTURES } from './fixtures';
import type { JudgedBatchItem, ScoreResponseBody } from './model';
import type { MaybePromise } from '../../lib/maybe-promise';
import { erpPresence, loadErpObservations, type ErpObservations } from '../erp/observations-store';
import { REFERENCE_DAYS_BEYOND_TERMS, REFERENCE_DSO_DAYS, REFERENCE_TOP_CUSTOMER_SHARE } from './engine';

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

/**
 * Labels are rendered in the caller's language from the catalogue, in the answer's key order
 * (rows stored since 2026-11-27 hold no label; earlier ones an English one, used only for a code
 * the catalogue no longer has).
 */
const relabel = (reasons: (Omit<Reason, 'label'> & { label?: string })[], lang: Lang): Reason[] =>
  reasons.map((r) => ({ code: r.code, label: reasonLabel(r, lang), impact: r.impact, weight: r.weight }));

/** A result as stored: its reasons without labels (~250 of a row's ~1,500 bytes, rendered again on every read). */
const storedResult = (result: StoredResult) => ({ ...result, reasons: result.reasons.map((r) => ({ code: r.code, impact: r.impact, weight: r.weight })) });

export class ScoreService {
  constructor(
    private readonly database: Database,
    private readonly usage: UsageMeter,
    private readonly now: () => Date,
    private readonly liveAdapters: LiveAdapters | null,
    private readonly roadmapUrl: string,
    /** PostgreSQL + Redis: the tenant's `inputs` cache generation as this process knows it (GenerationFeed.inputs) */
    private readonly inputsGeneration: (tenantId: string) => number | undefined = () => undefined,
  ) {}

  /** Without a promise when the answer is in the in-process cache (the fast path's common case). */
  score(caller: ScoreCaller, req: ScoreRequestBody, lang: Lang): MaybePromise<ScoreResponseBody> {
    return this.cachedAnswer(caller, req, lang) ?? this.scoreUncached(caller, req, lang);
  }

  private async scoreUncached(caller: ScoreCaller, req: ScoreRequestBody, lang: Lang): Promise<ScoreResponseBody> {
    this.checkScorable(caller, req.nif);
    const echo = req.customer_reference !== undefined ? { customer_reference: req.customer_reference } : {};
    if ((req.refresh ?? 'cached_ok') === 'cached_ok') {
      const cached = await this.servable(caller, req.nif);
      if (cached) return this.answerFromCache(caller, cached, req, lang);
    }
    const computed = await this.compute(caller, req.nif, req.customer_reference ?? null);
    this.bill(caller, 'score');
    return { ...computed.result, reasons: relabel(computed.result.reasons, lang), cache: 'fresh' as const, ...echo };
  }

  /**
   * A portfolio in one call: every item scored as POST /v1/score would (cache, fixtures, live
   * adapters), its error (the §2.8 body, field paths in the whole request) kept in place of its
   * result. Each distinct NIF is looked up or computed once (a NIF met again is answered from its
   * first item: `duplicate_of`, cache: cached), all new results stored in one transaction, one
   * usage line per item answered 200, one bureau lookup per computation. An outage fails the call.
   * The items come judged (judgeScoreBatch), and the live tier checked, by the route: before it charges the batch.
   */
  async scoreBatch(caller: ScoreCaller, items: JudgedBatchItem[], refresh: 'cached_ok' | 'force_refresh', lang: Lang, docsBase: string) {
    type Item = { index: number; nif: string; status: number; duplicate_of?: number; result: ScoreResponseBody | null; error: ReturnType<typeof errorBody> | null };
    type Outcome = { row: ScoreRow } | { evaluated: Evaluated } | { error: ApiError };
    // each distinct NIF once, at its first valid item; the others are answered from it
    const firstOf = new Map<string, number>();
    const distinct: number[] = [];
    const duplicateOf: (number | undefined)[] = new Array(items.length);
    for (const x of items) {
      if (!('item' in x)) continue;
      const at = firstOf.get(x.item.nif);
      if (at === undefined) {
        firstOf.set(x.item.nif, x.index);
        distinct.push(x.index);
      } else duplicateOf[x.index] = at;
    }
    const outcomes = new Map<number, Outcome>();
    const one = async (index: number) => {
      const nif = (items[index] as { item: { nif: string } }).item.nif;
      try {
        if (refresh === 'cached_ok') {
          const row = await this.servable(caller, nif);
          if (row) return void outcomes.set(index, { row });
        }
        outcomes.set(index, { evaluated: await this.evaluate(caller, nif, 'request') });
      } catch (err) {
        if (!(err instanceof ApiError) || err.status >= 500) throw err; // an outage fails the call (nothing stored or billed), not one item
        outcomes.set(index, { error: err });
      }
    };
    // a few at a time: PostgreSQL answers their reads in parallel (SQLite runs them in turn anyway)
    const IN_FLIGHT = this.database.dialect === 'postgres' ? 16 : 1;
    for (let i = 0; i < distinct.length; i += IN_FLIGHT) await Promise.all(distinct.slice(i, i + IN_FLIGHT).map(one));

    const requestId = caller.requestId ?? '';
    const failed = (index: number, nif: string, err: ApiError, duplicate?: number): Item => ({
      index,
      nif,
      status: err.status,
      ...(duplicate !== undefined ? { duplicate_of: duplicate } : {}),
      result: null,
      error: errorBody(withFieldPath(err, 'nif', `items.${index}.nif`) as ApiError, requestId, docsBase),
    });
    const toStore: { nif: string; evaluated: Evaluated; customerReference: string | null }[] = [];
    const relabelled = new Map<number, Reason[]>();
    const out: Item[] = items.map((x) => {
      if (!('item' in x)) return failed(x.index, x.nif, x.error);
      const { index, item } = x;
      const duplicate = duplicateOf[index];
      const source = duplicate ?? index;
      const got = outcomes.get(source)!;
      const echo = item.customer_reference !== undefined ? { customer_reference: item.customer_reference } : {};
      const dup = duplicate !== undefined ? { duplicate_of: duplicate } : {};
      if ('error' in got) return failed(index, item.nif, got.error, duplicate);
      if ('row' in got) return { index, nif: item.nif, status: 200, ...dup, result: { ...this.cachedBody(got.row, lang), ...echo }, error: null };
      const { result } = got.evaluated;
      let reasons = relabelled.get(source);
      if (!reasons) relabelled.set(source, (reasons = relabel(result.reasons, lang)));
      if (duplicate === undefined) toStore.push({ nif: item.nif, evaluated: got.evaluated, customerReference: item.customer_reference ?? null });
      // a NIF met again: the first item's result, as a second POST /v1/score would get it from the cache
      return { index, nif: item.nif, status: 200, ...dup, result: { ...result, reasons, cache: duplicate === undefined ? ('fresh' as const) : ('cached' as const), ...echo }, error: null };
    });
    if (toStore.length) await this.database.withTx((tx) => this.storeMany(tx, caller, toStore, 'request'));
    for (const x of toStore) this.billBureauLookup(caller, x.evaluated.bureauCostCents);
    const succeeded = out.filter((o) => o.status === 200).length;
    for (let i = 0; i < succeeded; i++) this.bill(caller, 'score');
    return { data: out, summary: { total: out.length, succeeded, failed: out.length - succeeded, computed: toStore.length } };
  }

  /** score() from the in-process read cache alone; undefined whenever there is more to do (errors, loads, computing). */
  private cachedAnswer(caller: ScoreCaller, req: ScoreRequestBody, lang: Lang): ScoreResponseBody | undefined {
    if ((req.refresh ?? 'cached_ok') !== 'cached_ok' || (caller.env === 'live' && !this.liveAdapters)) return undefined;
    const row = this.latestCache?.peek(latestKey(caller, req.nif), caller.scoreGeneration);
    // a stored score's NIF passed the check when it was computed: only a miss needs it (scoreUncached)
    if (!row || row.computedAt.getTime() <= this.now().getTime() - SCORE_CACHE_MS) return undefined;
    // nor one computed before the tenant's last ERP sync (unknown here: the slow path reads it)
    const sync = this.lastSyncCache?.peek(`${caller.tenantId}|${caller.env}`, caller.scoreGeneration);
    if (!sync || (sync.at && row.computedAt.getTime() <= sync.at.getTime())) return undefined;
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

  /** The checks every scoring answer starts with: a valid NIF, and a live tier when the key is live. */
  checkScorable(caller: Pick<ScoreCaller, 'env'>, nif: string) {
    if (!isValidNif(nif)) throw nifCheckFails('nif');
    this.assertLiveTier(caller);
  }

  /** 503 for a live key while the live tier is not configured */
  assertLiveTier(caller: Pick<ScoreCaller, 'env'>) {
    if (caller.env === 'live' && !this.liveAdapters)
      throw new ApiError('live_tier_not_available', 'Live scoring is not available yet for this deployment. Test against the sandbox (sk_test_ keys) meanwhile.', {
        body: { roadmap_url: this.roadmapUrl },
      });
  }

  /**
   * The score and its facts for a credit decision or limit (not billed as a score: the caller
   * bills its own meter). A cached score serves when it is within the cache window, has facts
   * (computed by this version), and no ERP sync of this tenant finished after it.
   */
  async scoreWithFacts(caller: ScoreCaller, nif: string, refresh: 'cached_ok' | 'force_refresh' = 'cached_ok', customerReference: string | null = null): Promise<{ result: StoredResult; facts: ScoreFacts; /** computed by this call (its data sources asked now), not read from the cache */ computed: boolean }> {
    this.checkScorable(caller, nif);
    if (refresh === 'cached_ok') {
      const row = await this.servable(caller, nif);
      if (row?.facts) return { result: row.result as StoredResult, facts: row.facts as unknown as ScoreFacts, computed: false };
    }
    const evaluated = await this.compute(caller, nif, customerReference);
    return { result: evaluated.result, facts: evaluated.facts, computed: true };
  }

  /**
   * The newest stored score that may still serve: within the cache window (24 h) and computed after
   * the tenant's last ERP sync that wrote rows (new books: a score computed before them answers as
   * if they were not there; the sync marks the tenant's scores, so in-process cached answers drop
   * with it). The sync is read only when there is a row to judge.
   */
  private async servable(caller: ScoreCaller, nif: string): Promise<ScoreRow | null> {
    const row = await this.latest(caller, nif, new Date(this.now().getTime() - SCORE_CACHE_MS));
    if (!row) return null;
    const lastSync = await this.lastSyncFinishedAt(caller);
    // (a score computed at the sync's very millisecond counts as before it)
    return lastSync && row.computedAt.getTime() <= lastSync.getTime() ? null : row;
  }

  private lastSyncQuery?: { execute(p: Record<string, string>): Promise<{ at: Date | null }[]> };
  private lastSyncCache?: ReadCache<{ at: Date | null }>;
  /** when an ERP sync of this tenant last succeeded (cached: a finished sync marks the tenant's scores) */
  private async lastSyncFinishedAt(caller: Pick<ScoreCaller, 'tenantId' | 'env' | 'scoreGeneration'>): Promise<Date | null> {
    this.lastSyncCache ??= new ReadCache(this.database);
    const hit = await this.lastSyncCache.get(`${caller.tenantId}|${caller.env}`, async () => ({ at: await this.readLastSync(caller) }), caller.scoreGeneration);
    return hit!.at;
  }

  private async readLastSync(caller: Pick<ScoreCaller, 'tenantId' | 'env'>): Promise<Date | null> {
    const r = this.database.t.syncRuns;
    this.lastSyncQuery ??= this.database.db
      .select({ at: max(r.finishedAt) })
      .from(r)
      // a sync that wrote nothing brought no new books: the scores computed before it still hold
      .where(and(eq(r.tenantId, sql.placeholder('tenantId')), eq(r.env, sql.placeholder('env')), eq(r.status, 'succeeded'), sql`${r.invoicesCount} + ${r.transactionsCount} > 0`))
      .prepare('score_last_sync');
    const [row] = await this.lastSyncQuery.execute({ tenantId: caller.tenantId, env: caller.env });
    const at = row?.at ?? null;
    return at === null ? null : at instanceof Date ? at : new Date(at as unknown as string | number);
  }

  /**
   * Computes and stores a requested result (history is kept for the nightly re-score and the GDPR
   * export), by group commit: one transaction for the results of many concurrent requests. Its
   * tenant's latest score changes (read caches). Re-scores are stored by the re-score job's own
   * transaction: they change the re-score count, which scoreInputs caches as plain-commit data.
   */
  async compute(caller: ScoreCaller, nif: string, customerReference: string | null) {
    const evaluated = await this.evaluate(caller, nif, 'request');
    await this.database.commitRows(this.database.t.scoreResults, [this.resultRow(caller, { nif, evaluated, customerReference }, 'request')], [{ tenantId: caller.tenantId, aspect: 'scores' }]);
    this.billBureauLookup(caller, evaluated.bureauCostCents);
    return evaluated;
  }

  /**
   * Profile → engine, no writes. Sandbox: fixture profiles at generation = number of earlier
   * re-scores of this NIF (+1 for a re-score), so the deteriorating fixture worsens each night.
   */
  async evaluate(caller: ScoreCaller, nif: string, trigger: 'request' | 'rescore'): Promise<Evaluated> {
    let profile: CompanyProfile;
    let bureauCostCents: number | null = null;
    const inputs = await this.scoreInputs(caller, nif);
    if (caller.env === 'sandbox') {
      const generation = inputs.rescores + (trigger === 'rescore' ? 1 : 0);
      const found = sandboxLookup(nif, generation);
      if (found.kind === 'invalid_nif')
        throw new ApiError('invalid_nif', 'The tax authority does not recognise this NIF (sandbox fixture invalid_nif_422).', { fields: [{ path: 'nif', message: 'not recognised by the tax authority' }] });
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
    const erp = await loadErpObservations(this.database, caller.tenantId, caller.env, nif, this.now(), inputs);
    const engine = scoreCompany(withErpObservations(profile, erp), 'en');
    if (erp && usedErp(erp)) engine.data_sources.push(`erp:${erp.provider}`);
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
    return { result, bureauCostCents, facts: factsOf(profile, engine.pd_scale, erp) };
  }

  async store(tx: Db, caller: Pick<ScoreCaller, 'tenantId' | 'env'>, nif: string, evaluated: Pick<Evaluated, 'result' | 'facts'>, trigger: 'request' | 'rescore', customerReference: string | null) {
    await this.storeMany(tx, caller, [{ nif, evaluated, customerReference }], trigger);
  }

  /** Results in one multi-row insert. */
  async storeMany(tx: Db, caller: Pick<ScoreCaller, 'tenantId' | 'env'>, items: { nif: string; evaluated: Pick<Evaluated, 'result' | 'facts'>; customerReference: string | null }[], trigger: 'request' | 'rescore') {
    this.database.touchTenant(caller.tenantId, 'scores'); // its latest score changes (read caches)
    if (trigger === 'rescore') this.database.touchTenant(caller.tenantId, 'inputs'); // and its re-score count
    await this.database.insertMany(tx, this.database.t.scoreResults, items.map((item) => this.resultRow(caller, item, trigger)));
  }

  private resultRow(caller: Pick<ScoreCaller, 'tenantId' | 'env'>, { nif, evaluated: { result, facts }, customerReference }: { nif: string; evaluated: Pick<Evaluated, 'result' | 'facts'>; customerReference: string | null }, trigger: 'request' | 'rescore') {
    return {
      id: Bun.randomUUIDv7(), // time-ordered: each insert lands at the end of the primary-key index (one page per batch, not one per row)
      tenantId: caller.tenantId,
      env: caller.env,
      nif,
      customerReference,
      score: result.score,
      tier: result.tier,
      pd: result.pd_estimate,
      result: storedResult(result),
      algorithmVersion: ALGORITHM_VERSION,
      synthetic: result.synthetic,
      trigger,
      computedAt: new Date(result.computed_at),
      facts: facts as unknown as Record<string, unknown>,
      sector: facts.sector,
    };
  }

  // hot-path reads, prepared once (Drizzle's query building costs more than the query itself)
  private latestQuery?: { execute(p: Record<string, string>): Promise<ScoreRow[]> };

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

  /**
   * What every computed score reads before its profile: the NIF's earlier re-scores (the sandbox
   * fixtures' generation), and whether the tenant's books hold anything about it (most do not, and
   * then the ERP reads are skipped). Only plain transactions change these, never a group commit of
   * new scores, so they stay cached while a tenant refreshes scores: on SQLite under the change
   * signal of plain commits; on PostgreSQL under the tenant's `inputs` generation (CacheAspect),
   * and read, when not cached, with the rest of the turn's in one query (TurnReads).
   */
  private async scoreInputs(caller: Pick<ScoreCaller, 'tenantId' | 'env'>, nif: string): Promise<ScoreInputs> {
    const key = { tenantId: caller.tenantId, env: caller.env, nif };
    this.scoreInputsCache ??= new ReadCache(this.database);
    let read: () => Promise<ScoreInputs>;
    if (this.database.pg) {
      const batch = (this.scoreInputsBatch ??= new TurnReads((keys) => this.readScoreInputsBatch(keys), (k) => `${k.tenantId}|${k.env}|${k.nif}`));
      read = () => batch.get(key);
    } else
      read = async () => {
        const p = (name: string) => sql.placeholder(name);
        this.scoreInputsQuery ??= this.database.db.select(this.inputColumns({ tenantId: p('tenantId'), env: p('env'), nif: p('nif') })).from(sql`(select 1) as one`).prepare('score_inputs') as never;
        return toScoreInputs((await this.scoreInputsQuery!.execute(key))[0]);
      };
    const generation = this.database.pg ? this.inputsGeneration(caller.tenantId) : undefined;
    return (await this.scoreInputsCache.get(`${caller.tenantId}|${caller.env}|${nif}`, read, plainCommitsGeneration(this.database, generation)))!;
  }

  /** PostgreSQL: the inputs of many (tenant, environment, NIF) in one statement, in order. */
  private async readScoreInputsBatch(keys: { tenantId: string; env: string; nif: string }[]): Promise<ScoreInputs[]> {
    this.scoreInputsBatchQuery ??= this.database.db
      .select({ i: sql<number>`k.i`, ...this.inputColumns({ tenantId: sql`k.t`, env: sql`k.e`, nif: sql`k.n` }) })
      .from(sql`json_to_recordset(${sql.placeholder('keys')}::json) as k(i int, t text, e text, n text)`)
      .prepare('score_inputs_batch') as never;
    const rows = await this.scoreInputsBatchQuery!.execute({ keys: JSON.stringify(keys.map((k, i) => ({ i, t: k.tenantId, e: k.env, n: k.nif }))) });
    const out = keys.map(() => toScoreInputs(undefined));
    for (const row of rows) out[row.i] = toScoreInputs(row);
    return out;
  }

  /** The inputs' columns for one (tenant, environment, NIF): placeholders, or a batch's columns. */
  private inputColumns(key: { tenantId: SQLWrapper; env: SQLWrapper; nif: SQLWrapper }) {
    const s = this.database.t.scoreResults;
    return {
      rescores: sql<number>`(select count(*) from ${s} where ${s.tenantId} = ${key.tenantId} and ${s.env} = ${key.env} and ${s.nif} = ${key.nif} and ${s.trigger} = 'rescore')`,
      ...erpPresence(this.database, key),
    };
  }

  private scoreInputsCache?: ReadCache<ScoreInputs>;
  private scoreInputsBatch?: TurnReads<{ tenantId: string; env: string; nif: string }, ScoreInputs>;
  private scoreInputsQuery?: { execute(p: Record<string, string>): Promise<ScoreInputRow[]> };
  private scoreInputsBatchQuery?: { execute(p: Record<string, string>): Promise<(ScoreInputRow & { i: number })[]> };

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

type ScoreInputs = { rescores: number; asBuyer: boolean; own: boolean };
/** as the drivers answer: counts as numbers or text, truths as booleans or 0/1 */
type ScoreInputRow = { rescores: unknown; asBuyer: unknown; own: unknown };
const toScoreInputs = (row: ScoreInputRow | undefined): ScoreInputs => ({ rescores: Number(row?.rescores ?? 0), asBuyer: Boolean(Number(row?.asBuyer ?? 0)), own: Boolean(Number(row?.own ?? 0)) });

/** What a credit decision needs beyond the score's answer, stored with it (score_results.facts). */
export interface ScoreFacts {
  name: string;
  /** NACE Rev. 2 section */
  sector: string;
  revenue_eur: number | null;
  equity_eur: number | null;
  /** the fiscal year of the financial statements used (their date: data_freshness of decisions); null when the data names none, absent in scores stored before decision-1.1.0 (2026-11-28) */
  financials_fiscal_year?: number | null;
  /** the PD the tier is read from (the PD, or the indicative one when the score has none) */
  pd_scale: number;
  /** a default in the last 12 months, write-offs or litigation, insolvency or restructuring */
  adverse: boolean;
  /** legal events and credit-register flags behind `adverse` (absent in scores stored before KYC used them) */
  events?: { insolvency: boolean; restructuring: boolean; recent_default: boolean; written_off_or_litigation: boolean };
  erp: ErpObservations | null;
}

export interface Evaluated {
  result: StoredResult;
  bureauCostCents: number | null;
  facts: ScoreFacts;
}

const usedErp = (erp: ErpObservations) => Boolean(erp.buyer?.sufficient || erp.seller?.sufficient);

/**
 * The profile with the tenant's own books applied: how the company pays the tenant (days beyond
 * terms) when it is a customer in them, its DSO and customer concentration when it is the connected
 * company. Only observations with enough history count (see observations.ts); an input the profile
 * lacks otherwise sits at the engine's reference value, so it adds nothing.
 */
export function withErpObservations(profile: CompanyProfile, erp: ErpObservations | null): CompanyProfile {
  if (!erp || !usedErp(erp)) return profile;
  const pay = { ...(profile.payment_behaviour ?? { dso_days: REFERENCE_DSO_DAYS, days_beyond_terms_avg: REFERENCE_DAYS_BEYOND_TERMS, share_of_receivables_from_top_customer: REFERENCE_TOP_CUSTOMER_SHARE }) };
  if (erp.buyer?.sufficient && erp.buyer.days_beyond_terms !== null) pay.days_beyond_terms_avg = erp.buyer.days_beyond_terms;
  if (erp.seller?.sufficient) {
    if (erp.seller.dso_days !== null) pay.dso_days = erp.seller.dso_days;
    if (erp.seller.top_customer_share !== null) pay.share_of_receivables_from_top_customer = erp.seller.top_customer_share;
  }
  return { ...profile, payment_behaviour: pay };
}

function factsOf(profile: CompanyProfile, pdScale: number, erp: ErpObservations | null): ScoreFacts {
  const crc = profile.credit_register;
  const adverse =
    crc?.default_in_last_12m === true || (crc?.written_off_eur ?? 0) > 0 || (crc?.litigation_eur ?? 0) > 0 ||
    profile.events?.insolvency_proceedings === true || profile.events?.restructuring_proceedings === true;
  return {
    name: profile.name,
    sector: profile.sector,
    revenue_eur: profile.financials ? profile.financials.revenue : null,
    equity_eur: profile.financials ? profile.financials.equity : null,
    ...(profile.financials ? { financials_fiscal_year: profile.financials.fiscal_year ?? null } : {}),
    pd_scale: pdScale,
    adverse,
    // none known without the bureau's events nor the credit register: absent, not "none on record"
    ...(profile.events || crc
      ? {
          events: {
            insolvency: profile.events?.insolvency_proceedings === true,
            restructuring: profile.events?.restructuring_proceedings === true,
            recent_default: crc?.default_in_last_12m === true,
            written_off_or_litigation: (crc?.written_off_eur ?? 0) > 0 || (crc?.litigation_eur ?? 0) > 0,
          },
        }
      : {}),
    erp: erp && usedErp(erp) ? erp : null,
  };
}

const latestKey = (caller: Pick<ScoreCaller, 'tenantId' | 'env'>, nif: string) => `${caller.tenantId}|${caller.env}|${nif}`;
type ScoreRequestBody = { nif: string; customer_reference?: string; refresh?: 'cached_ok' | 'force_refresh' };

