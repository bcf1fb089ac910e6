import { and, desc, eq, lt, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { sha256Hex } from '../../lib/crypto';
import { ApiError, validationError, withFieldPath } from '../../lib/errors';
import { GroupCommit } from '../../lib/group-commit';
import { ReadCache } from '../../lib/read-cache';
import { isWholeCents, pageOf, WHOLE_CENTS, wholeCents } from '../../lib/schemas';
import type { Actor } from '../admin/service';
import type { AdminService } from '../admin/service';
import type { UsageMeter } from '../usage/service';
import type { Env } from '../tenants/service';
import { LATE_GRACE_DAYS } from '../erp/observations';
import { reasonLabel } from '../score/engine';
import { SCORE_CACHE_MS, type ScoreCaller, type ScoreFacts, type ScoreService, type StoredResult } from '../score/service';
import { lookupNaics, naceSectionTitle, riskLevel, sectorSources, sectorTitle } from '../sector-risk/table';
import type { DecisionResponseBody } from './model';
import {
  creditLimit, decide, DEFAULT_POLICY, eur, indexSpread, MODALITIES, NOTCHES, spreadAtModality, TERM_BUCKETS,
  type BasisLang, type CreditPolicy, type Modality, type Notch, type OperationType,
} from './policy';

/**
 * 1.1.0 (2026-11-29): data_freshness is the oldest input's own date (the financial statements' year
 * end), not the score's time; the spread never below the company's own expected loss; the basis
 * names every step of the limit and the spread; one money format; signals only what is weighed.
 */
export const DECISION_POLICY_VERSION = 'decision-1.1.0';
/** a credit limit stays valid as long as the score behind it is served from cache */
const LIMIT_VALID_MS = 24 * 3600_000;

type Signal = DecisionResponseBody['signals'][number];
type Observation = NonNullable<DecisionResponseBody['observations']>[number];

/** Where each score reason's input comes from (ERP-fed payment reasons are re-attributed below). */
const REASON_SOURCE: Record<string, string> = {
  STRONG_EQUITY: 'financial_statements', WEAK_EQUITY: 'financial_statements', NEGATIVE_EQUITY: 'financial_statements', EQUITY_BELOW_HALF_CAPITAL: 'financial_statements',
  ACCUMULATED_LOSSES: 'financial_statements', LOW_RETAINED_EARNINGS: 'financial_statements', STRONG_RETAINED_EARNINGS: 'financial_statements',
  LOSS_MAKING: 'financial_statements', WEAK_PROFITABILITY: 'financial_statements', STRONG_PROFITABILITY: 'financial_statements',
  LOW_ASSET_TURNOVER: 'financial_statements', HIGH_ASSET_TURNOVER: 'financial_statements', WEAK_LIQUIDITY: 'financial_statements',
  STRONG_LIQUIDITY: 'financial_statements', HIGH_LEVERAGE: 'financial_statements', LOW_LEVERAGE: 'financial_statements',
  SLOW_PAYER: 'payment_behaviour', PROMPT_PAYER: 'payment_behaviour', SLOW_COLLECTION: 'payment_behaviour', FAST_COLLECTION: 'payment_behaviour',
  HIGH_CONCENTRATION: 'payment_behaviour', DIVERSIFIED_CUSTOMERS: 'payment_behaviour',
  RECENT_DEFAULT: 'credit_register', WRITTEN_OFF_OR_LITIGATION: 'credit_register', OVERDUE_CREDIT: 'credit_register', CLEAN_CREDIT_HISTORY: 'credit_register', MANY_LENDERS: 'credit_register',
  TAX_IRREGULAR: 'tax_authority', TAX_COMPLIANT: 'tax_authority', NOT_VAT_REGISTERED: 'tax_authority',
  YOUNG_COMPANY: 'company_registry', ESTABLISHED_COMPANY: 'company_registry', LIMITED_DATA: 'company_registry',
  INSOLVENCY_PROCEEDINGS: 'legal_events', RESTRUCTURING_PROCEEDINGS: 'legal_events',
};
const BUYER_REASONS = new Set(['SLOW_PAYER', 'PROMPT_PAYER']);
const SELLER_REASONS = new Set(['SLOW_COLLECTION', 'FAST_COLLECTION', 'HIGH_CONCENTRATION', 'DIVERSIFIED_CUSTOMERS']);

/** the score's data sources behind its behavioural components (the tenant's own books, erp:…, too) */
const BEHAVIOURAL_SOURCES = new Set(['payment_behaviour', 'credit_register', 'tax_authority', 'legal_events']);

const mean100 = (components: Record<string, number>, names: string[]) =>
  Math.round((names.reduce((s, n) => s + (components[n] ?? 0.5), 0) / names.length) * 100);

/**
 * The drivers of a decision, strongest first (`signals`: the score's reasons, each with its share of
 * the score's movement), and what the tenant's books and ESG assessment show beside them
 * (`observations`: not weighed in this decision, so not presented as drivers).
 */
export function signalsOf(result: StoredResult, facts: ScoreFacts, esg: { overall: number } | null, lang: 'en' | 'pt' = 'en'): { signals: Signal[]; observations: Observation[] } {
  const pt = lang === 'pt';
  const erp = facts.erp;
  const signals: Signal[] = result.reasons.filter((r) => r.weight > 0).map((r) => {
    let source = REASON_SOURCE[r.code] ?? 'company_registry';
    if (erp && BUYER_REASONS.has(r.code) && erp.buyer?.sufficient) source = `erp:${erp.provider}`;
    if (erp && SELLER_REASONS.has(r.code) && erp.seller?.sufficient) source = `erp:${erp.provider}`;
    return { factor: r.code.toLowerCase(), weight: r.impact === 'positive' ? '+' : '-', label: reasonLabel(r, lang), source, strength: r.weight };
  });
  const out: Observation[] = [];
  if (erp) {
    const source = `erp:${erp.provider}`;
    const b = erp.buyer;
    if (b?.sufficient && b.days_late_avg !== null) {
      const late = b.days_late_avg > LATE_GRACE_DAYS;
      out.push({
        factor: late ? 'erp_pays_late' : 'erp_pays_on_time',
        label: pt
          ? `Paga as suas faturas ${b.days_late_avg} dias após o vencimento, em média (percentil 90: ${b.days_late_p90}; ${Math.round((b.share_paid_late ?? 0) * 100)} % pagas em atraso; ${b.months_observed} meses observados)`
          : `Pays your invoices ${b.days_late_avg} days after the due date on average (90th percentile ${b.days_late_p90}; ${Math.round((b.share_paid_late ?? 0) * 100)} % paid late; ${b.months_observed} months observed)`,
        source,
      });
    }
    if (b?.sufficient && b.overdue_eur > 0)
      out.push({ factor: 'erp_overdue_balance', label: pt ? `${eur(b.overdue_eur, 'pt')} em dívida vencida nas suas faturas` : `${eur(b.overdue_eur, 'en')} overdue on your invoices`, source });
    const s = erp.seller;
    if (s?.sufficient && s.revenue_trend !== null && Math.abs(s.revenue_trend) >= 0.1)
      out.push({
        factor: s.revenue_trend < 0 ? 'erp_revenue_decline' : 'erp_revenue_growth',
        label: pt
          ? `Faturação ${s.revenue_trend < 0 ? 'a descer' : 'a subir'} ${Math.abs(Math.round(s.revenue_trend * 100))} % face aos 12 meses anteriores`
          : `Invoicing ${s.revenue_trend < 0 ? 'down' : 'up'} ${Math.abs(Math.round(s.revenue_trend * 100))} % on the prior 12 months`,
        source,
      });
    if (s?.sufficient && s.top_customer_share !== null && s.top_customer_share > 0.5)
      out.push({ factor: 'erp_customer_concentration', label: pt ? `O maior cliente representa ${Math.round(s.top_customer_share * 100)} % da faturação` : `Largest customer takes ${Math.round(s.top_customer_share * 100)} % of invoicing`, source });
  }
  if (esg) {
    const label = `${pt ? 'Avaliação ESG' : 'ESG assessment'} ${esg.overall}/100`;
    if (esg.overall >= 60) out.push({ factor: 'esg_strong', label, source: 'esg' });
    else if (esg.overall < 40) out.push({ factor: 'esg_weak', label, source: 'esg' });
  }
  // a signal carries weight in the decision (the score's reasons, sorted by it); the books' details
  // and the ESG line are no input of the score's weights (the books set its payment input, whose
  // reason is the signal, re-attributed to erp:<provider> above; ESG does not move the price or the
  // limit), so a reviewer reads them as observations, not as drivers
  return { signals, observations: out };
}

/**
 * When each input of a decision is as of, in ms (data_freshness is the oldest; all of them go into
 * the repeated decision's content): the financial statements at their fiscal year's end (31 December
 * of the year the data names: the score's sources give the year, not the balance-sheet date); the
 * score's other sources (credit register, bureau, tax authority, legal events) as they were read,
 * at the score's computed_at (they carry no date of their own); the tenant's books at their newest
 * synced document; the ESG assessment when it was made.
 */
export function inputTimes(result: Pick<StoredResult, 'computed_at' | 'data_sources'>, facts: Pick<ScoreFacts, 'financials_fiscal_year' | 'erp'>, esg: { computedAt: Date } | null): number[] {
  const times = [Date.parse(result.computed_at)];
  const year = facts.financials_fiscal_year;
  if (typeof year === 'number' && result.data_sources.includes('financial_statements')) times.push(Date.UTC(year, 11, 31));
  if (esg) times.push(esg.computedAt.getTime());
  if (facts.erp) times.push(Date.parse(facts.erp.synced_at));
  return times;
}

export interface DecisionBody {
  nif: string;
  country?: string;
  context: { operation_type: OperationType; amount_eur: number; expected_term_days: number; insurance_submission_id?: string };
  customer_reference?: string;
  refresh?: 'cached_ok' | 'force_refresh';
}

type PolicyRow = Database['t']['creditPolicies']['$inferSelect'];
type EsgRow = { result: Record<string, unknown>; computedAt: Date };

type DecisionRow = Database['t']['creditDecisions']['$inferInsert'];

export class DecisionService {
  /** decisions are stored before they are answered, many per transaction under load */
  private readonly decisionWrites = new GroupCommit<DecisionRow>((rows) => this.database.appendRows(this.database.t.creditDecisions, rows), { maxBatch: 250 });

  constructor(
    private readonly database: Database,
    private readonly scores: ScoreService,
    private readonly usage: UsageMeter,
    private readonly now: () => Date,
    private readonly baseRate: { name: string; valuePct: number; asOf: string },
    private readonly docsBase: string,
    /** the tenant's score cache generation as this process knows it now (PostgreSQL + Redis; undefined otherwise) */
    private readonly scoreGenerationNow: (tenantId: string) => number | undefined = () => undefined,
  ) {}

  /**
   * The decision, stored before it is returned; `text` is its JSON, stored and answered as it is.
   * The same request again (NIF, context, customer_reference) while nothing behind it changed
   * (the score still within its cache window, the policy, the ESG assessment, the ERP books) is the
   * same decision: answered from memory with `cache: "cached"` and the same decision_id, billed
   * again, not stored again. `refresh: "force_refresh"` always decides anew. `lang`: the signals'
   * labels (the score's reasons, the books' observations), stored as answered.
   */
  async decide(caller: ScoreCaller, body: DecisionBody, startedAt: number, lang: 'en' | 'pt' = 'en'): Promise<{ body: DecisionResponseBody; text: string }> {
    if (!isWholeCents(body.context.amount_eur)) throw validationError([{ path: 'context.amount_eur', message: WHOLE_CENTS }]);
    // decided, stored and echoed as the cents it is (0.30000000000000004 is 0.3: binary noise of a
    // client's sum); copied only then (a repeated decision is on the hot path)
    const amount = wholeCents(body.context.amount_eur);
    if (amount !== body.context.amount_eur) body = { ...body, context: { ...body.context, amount_eur: amount } };
    const country = body.country ?? 'PT';
    if (country.toUpperCase() !== 'PT')
      throw new ApiError('unsupported_country', `Only companies registered in Portugal can be decided on (country "${country.slice(0, 8)}").`, {
        fields: [{ path: 'country', message: 'must be PT' }],
      });
    const ctx = body.context;
    const key = `${caller.tenantId}|${caller.env}|${body.nif}|${ctx.operation_type}|${ctx.amount_eur}|${ctx.expected_term_days}|${body.customer_reference ?? ''}|${ctx.insurance_submission_id ?? ''}|${lang}`;
    if (body.refresh === 'force_refresh') return this.decideFresh(caller, body, startedAt, lang, { key, reuse: false });
    this.answers ??= new ReadCache(this.database);
    const hit = this.answers.peek(key, caller.scoreGeneration);
    if (hit && hit.scoreComputedAtMs > this.now().getTime() - SCORE_CACHE_MS) {
      this.bill(caller, 'decision');
      return hit.cached;
    }
    // the same request arriving while it is being decided waits for that decision (one stored, the
    // others answered it as cached), rather than deciding and storing it again
    const flying = this.deciding.get(key);
    if (flying) {
      const decided = await flying;
      this.bill(caller, 'decision');
      return decided.cached;
    }
    const flight = this.decideOnce(caller, body, startedAt, lang, key);
    this.deciding.set(key, flight);
    try {
      return (await flight).fresh;
    } finally {
      this.deciding.delete(key);
    }
  }

  private readonly deciding = new Map<string, Promise<{ fresh: { body: DecisionResponseBody; text: string }; cached: { body: DecisionResponseBody; text: string } }>>();
  /**
   * The last decision stored for each request in this process, with a hash of its content apart from its id,
   * time and latency: a request decided again after the cache above dropped it (any score of the
   * tenant drops it) that comes to the same content is that decision, not a new one (docs/credit-policy.md §8)
   */
  private readonly lastDecided = new Map<string, { content: string; cached: { body: DecisionResponseBody; text: string } }>();

  private async decideOnce(caller: ScoreCaller, body: DecisionBody, startedAt: number, lang: 'en' | 'pt', key: string) {
    // the score first (computed and committed if it is not cached): an answer loaded before that
    // commit would be cached under the state before it, stale at once, and the same request next
    // would decide again. On PostgreSQL the request's generation is then the one after the commit.
    // The answer's own reads come after (its load), so that nothing committed meanwhile is missed;
    // when the feed cannot tell the generation now, they and the answer are not cached at all (the
    // one from before the commit would serve the score's earlier state: computed again).
    await this.scores.scoreWithFacts(caller, body.nif, 'cached_ok', body.customer_reference ?? null);
    const current = caller.scoreGeneration === undefined ? caller : { ...caller, scoreGeneration: this.scoreGenerationNow(caller.tenantId) };
    let decided: Awaited<ReturnType<DecisionService['decideFresh']>> | undefined;
    await this.answers!.load(
      key,
      async () => {
        const d = (decided = await this.decideFresh(current, body, startedAt, lang, { key, reuse: true }));
        return { scoreComputedAtMs: d.scoreComputedAtMs, cached: d.cached };
      },
      current.scoreGeneration,
    );
    return { fresh: decided!, cached: decided!.cached };
  }

  /**
   * A credit-insurance answer on the buyer (POST /v1/insurance/submit): full or partial cover that
   * reaches the operation (not lapsed, terms as long as its term, a notch within min_tier) makes the
   * modality with_insurance, priced at its LGD, the limit at least the insured amount (up to the
   * policy maximum), and approves an amount the cover meets; otherwise the basis says why not.
   */
  private async withInsurance(caller: Pick<ScoreCaller, 'tenantId' | 'env'>, nif: string, id: string, ctx: { amountEur: number; termDays: number; operationType: OperationType; pd: number }, outcome: { notch: Notch; declined: boolean; approved: boolean; limit_eur: number; modality: Modality; spread_bps: number; basis: string[] }, policy: CreditPolicy, lang: BasisLang) {
    const T = INSURANCE_BASIS[lang];
    const s = this.database.t.insuranceSubmissions;
    const [row] = await this.database.db.select().from(s).where(and(eq(s.tenantId, caller.tenantId), eq(s.env, caller.env), eq(s.id, id))).limit(1);
    if (!row) throw new ApiError('validation_failed', `No insurance submission ${id} for this tenant in this environment.`, { fields: [{ path: 'context.insurance_submission_id', message: 'unknown submission' }] });
    if (row.buyerNif !== nif) throw new ApiError('validation_failed', `Insurance submission ${id} is on ${row.buyerNif}, not ${nif}.`, { fields: [{ path: 'context.insurance_submission_id', message: `covers buyer ${row.buyerNif}` }] });
    const granted = row.grantedCents === null ? 0 : Number(row.grantedCents) / 100;
    const cover = T.cover(row.insurer, id);
    if (!((row.status === 'full' || row.status === 'partial') && granted > 0)) return void outcome.basis.push(T.noCover(cover, row.status));
    // credit insurance covers trade receivables (sold, assigned, discounted or paid early), not a loan
    if (ctx.operationType === 'credit_line') return void outcome.basis.push(T.notReceivables(cover));
    const terms = row.data as { valid_until?: string | null; terms?: { payment_terms_days?: number; operation_type?: string } } | null;
    // a cover is underwritten for one kind of operation: trade-credit cover insures the seller's
    // receivables, financed or not (its indemnity assignable to a factor); factoring cover the
    // receivables a factor buys or discounts; confirming cover the buyer's payables a bank pays early
    const coverType = terms?.terms?.operation_type ?? 'trade_credit';
    if (!COVER_REACH[coverType]?.includes(ctx.operationType)) return void outcome.basis.push(T.otherOperation(cover, coverType, ctx.operationType));
    // cover that does not reach this operation is no cover: lapsed, or shorter terms than its term
    const validUntil = terms?.valid_until ?? null;
    const today = this.now().toISOString().slice(0, 10);
    if (validUntil !== null && validUntil < today) return void outcome.basis.push(T.lapsed(cover, validUntil));
    const coveredDays = terms?.terms?.payment_terms_days;
    if (coveredDays !== undefined && coveredDays < ctx.termDays)
      return void outcome.basis.push(T.shortTerms(cover, coveredDays, ctx.termDays));
    // insurance lowers the loss given default, not the tenant's appetite: a notch below min_tier stays declined
    if (outcome.declined) return void outcome.basis.push(T.belowMinTier(cover, row.status, granted));
    const insured = Math.min(granted, policy.max_amount_eur);
    if (insured > outcome.limit_eur) outcome.limit_eur = insured;
    if (!outcome.approved && ctx.amountEur <= insured) outcome.approved = true;
    // priced as an insured operation: the with_insurance LGD at the same notch and term for the
    // insured part; a part above the cover keeps the uninsured modality's spread (the two blended by
    // amount: partial cover does not make the whole exposure a 10 % loss)
    const insuredSpread = spreadAtModality(outcome.notch, ctx.termDays, 'with_insurance', policy, ctx.pd);
    const share = Math.min(1, insured / ctx.amountEur);
    const uninsured = { modality: outcome.modality, spread: outcome.spread_bps };
    outcome.spread_bps = share >= 1 ? insuredSpread : Math.round(share * insuredSpread + (1 - share) * uninsured.spread);
    outcome.modality = 'with_insurance';
    outcome.basis.push(T.insured(cover, row.status, granted, outcome.approved && ctx.amountEur <= insured));
    if (share < 1) outcome.basis.push(T.blended(insured, Math.round((ctx.amountEur - insured) * 100) / 100, uninsured.modality, insuredSpread, uninsured.spread, outcome.spread_bps));
  }

  /** answers of recent decisions, while their inputs are current (see decide) */
  private answers?: ReadCache<{ scoreComputedAtMs: number; cached: { body: DecisionResponseBody; text: string } }>;

  /** `request.key`: the request's (lastDecided); `reuse`: a decision of the same content as the last one stored for it is that one (not with force_refresh) */
  private async decideFresh(caller: ScoreCaller, body: DecisionBody, startedAt: number, lang: 'en' | 'pt', request: { key: string; reuse: boolean }): Promise<{ body: DecisionResponseBody; text: string; scoreComputedAtMs: number; /** the same decision answered again */ cached: { body: DecisionResponseBody; text: string } }> {
    const { result, facts } = await this.scores.scoreWithFacts(caller, body.nif, body.refresh ?? 'cached_ok', body.customer_reference ?? null);
    const [esgRow, policy] = await Promise.all([this.latestEsg(caller, body.nif), this.policy(caller)]);
    const esg = esgRow ? (esgRow.result as { overall: number; environmental: number; social: number; governance: number }) : null;
    const ctx = body.context;
    const outcome = decide({ pd: facts.pd_scale, revenue_eur: facts.revenue_eur, equity_eur: facts.equity_eur, adverse: facts.adverse, operation_type: ctx.operation_type, amount_eur: ctx.amount_eur, term_days: ctx.expected_term_days }, policy.policy, lang);
    if (ctx.insurance_submission_id) await this.withInsurance(caller, body.nif, ctx.insurance_submission_id, { amountEur: ctx.amount_eur, termDays: ctx.expected_term_days, operationType: ctx.operation_type, pd: facts.pd_scale }, outcome, policy.policy, lang);
    const computedAt = this.now();
    const inputs = inputTimes(result, facts, esgRow);
    const id = `dec_${Bun.randomUUIDv7()}`;
    const response: DecisionResponseBody = {
      decision_id: id,
      nif: body.nif,
      score: Math.round(result.score / 10),
      tier: outcome.notch,
      pd_estimate: facts.pd_scale,
      breakdown: {
        // null without their inputs: the components then stand at the neutral 0.5, which read as "average"
        financial: result.data_sources.includes('financial_statements') ? mean100(result.components, ['financial_strength', 'profitability', 'liquidity', 'leverage']) : null,
        behavioral: result.data_sources.some((d) => BEHAVIOURAL_SOURCES.has(d) || d.startsWith('erp:')) ? mean100(result.components, ['payment_behaviour', 'credit_history', 'tax_compliance', 'legal_events']) : null,
        esg: esg ? esg.overall : null,
      },
      recommendation: { approved: outcome.approved, limit_eur: outcome.limit_eur, suggested_spread_bps: outcome.spread_bps, modality: outcome.modality, basis: outcome.basis },
      ...signalsOf(result, facts, esg, lang),
      data_freshness: new Date(Math.min(...inputs)).toISOString(),
      esg: esg ? { e: esg.environmental, s: esg.social, g: esg.governance } : null,
      latency_ms: 0,
      erp_source: facts.erp?.provider ?? null,
      context: { operation_type: ctx.operation_type, amount_eur: ctx.amount_eur, expected_term_days: ctx.expected_term_days, ...(ctx.insurance_submission_id ? { insurance_submission_id: ctx.insurance_submission_id } : {}) },
      algorithm_version: `${DECISION_POLICY_VERSION}+${result.algorithm_version}`,
      synthetic: caller.env === 'sandbox',
      computed_at: computedAt.toISOString(),
      cache: 'fresh',
      ...(body.customer_reference !== undefined ? { customer_reference: body.customer_reference } : {}),
      // stored with it: a list of decisions made in either language tells each one's
      language: lang === 'pt' ? 'pt-PT' : 'en',
    };
    // the inputs' own times too: data_freshness is only the oldest (a new score beside the same
    // financial statements, or an older ESG assessment, leaves it; the decision is then a new one)
    const content = sha256Hex(JSON.stringify([inputs, { ...response, decision_id: '', computed_at: '', latency_ms: 0 }]));
    const last = request.reuse ? this.lastDecided.get(request.key) : undefined;
    if (last && last.content === content) {
      this.bill(caller, 'decision');
      return { ...last.cached, scoreComputedAtMs: Date.parse(result.computed_at), cached: last.cached };
    }
    response.latency_ms = Math.round((performance.now() - startedAt) * 10) / 10;
    const text = JSON.stringify(response);
    await this.decisionWrites.add({
        id,
        tenantId: caller.tenantId,
        env: caller.env,
        nif: body.nif,
        customerReference: body.customer_reference ?? null,
        operationType: ctx.operation_type,
        amountEur: ctx.amount_eur,
        termDays: ctx.expected_term_days,
        approved: outcome.approved,
        tier: outcome.notch,
        limitEur: outcome.limit_eur,
        spreadBps: outcome.spread_bps,
        response: text,
        algorithmVersion: response.algorithm_version,
        synthetic: response.synthetic,
        createdAt: computedAt,
      });
    const cachedBody = { ...response, cache: 'cached' as const };
    const cached = { body: cachedBody, text: JSON.stringify(cachedBody) };
    this.lastDecided.delete(request.key);
    this.lastDecided.set(request.key, { content, cached });
    // bounded: the oldest requests' entries go first (Map keeps insertion order)
    if (this.lastDecided.size > LAST_DECIDED_MAX) this.lastDecided.delete(this.lastDecided.keys().next().value!);
    this.bill(caller, 'decision');
    return { body: response, text, scoreComputedAtMs: Date.parse(result.computed_at), cached };
  }

  async list(caller: Pick<ScoreCaller, 'tenantId' | 'env'>, q: { nif?: string; limit?: number; cursor?: string }) {
    const d = this.database.t.creditDecisions;
    const limit = q.limit ?? 50;
    const conds = [eq(d.tenantId, caller.tenantId), eq(d.env, caller.env)];
    if (q.nif) conds.push(eq(d.nif, q.nif));
    if (q.cursor) conds.push(lt(d.id, q.cursor));
    const rows = await this.database.db.select({ id: d.id, response: d.response }).from(d).where(and(...conds)).orderBy(desc(d.id)).limit(limit + 1);
    return pageOf(rows, limit, (r) => JSON.parse(r.response) as DecisionResponseBody, (r) => r.id);
  }

  async get(caller: Pick<ScoreCaller, 'tenantId' | 'env'>, id: string) {
    const d = this.database.t.creditDecisions;
    const [row] = await this.database.db.select({ response: d.response }).from(d).where(and(eq(d.tenantId, caller.tenantId), eq(d.env, caller.env), eq(d.id, id))).limit(1);
    if (!row) throw new ApiError('resource_not_found', `No decision ${id} for this tenant in this environment.`);
    return JSON.parse(row.response) as DecisionResponseBody;
  }

  /**
   * A buyer as the sandbox insurer sees it: its notch and the limit the default policy gives it over
   * the terms (not the tenant's policy: an insurer does not share the bank's appetite). Nothing
   * stored or billed; the score's errors name `buyer_nif`.
   */
  async buyerForInsurer(caller: ScoreCaller, buyerNif: string, termDays: number) {
    const { facts } = await this.scores.scoreWithFacts(caller, buyerNif).catch((err) => {
      throw withFieldPath(err, 'nif', 'buyer_nif');
    });
    const limit = creditLimit({ pd: facts.pd_scale, revenue_eur: facts.revenue_eur, equity_eur: facts.equity_eur, adverse: facts.adverse }, termDays, DEFAULT_POLICY);
    return { tier: limit.notch, limit_cents: Math.round(limit.limit_eur * 100) };
  }

  async creditLimit(caller: ScoreCaller, buyerNif: string, termDays: number, refresh: 'cached_ok' | 'force_refresh', lang: BasisLang = 'en') {
    const { result, facts } = await this.scores.scoreWithFacts(caller, buyerNif, refresh).catch((err) => {
      throw withFieldPath(err, 'nif', 'path.buyer_nif'); // the NIF is the path's parameter here
    });
    const policy = (await this.policy(caller)).policy;
    const limit = creditLimit({ pd: facts.pd_scale, revenue_eur: facts.revenue_eur, equity_eur: facts.equity_eur, adverse: facts.adverse }, termDays, policy, lang);
    if (facts.erp?.buyer?.sufficient) {
      const b = facts.erp.buyer;
      limit.basis.push(
        lang === 'pt'
          ? `os seus registos ${facts.erp.provider}: paga em média com ${String(b.days_late_avg).replace('.', ',')} dias de atraso, ${eur(b.overdue_eur, 'pt')} em atraso (no comportamento de pagamento do score)`
          : `your ${facts.erp.provider} books: paid ${b.days_late_avg} days late on average, ${eur(b.overdue_eur, 'en')} overdue (in the score's payment behaviour)`,
      );
    }
    this.bill(caller, 'credit_limit');
    return {
      buyer_nif: buyerNif,
      name: facts.name,
      limit_eur: limit.limit_eur,
      currency: 'EUR' as const,
      tier: limit.notch,
      pd_estimate: facts.pd_scale,
      term_days: termDays,
      basis: limit.basis,
      erp_source: facts.erp?.provider ?? null,
      valid_until: new Date(Date.parse(result.computed_at) + LIMIT_VALID_MS).toISOString(),
      computed_at: this.now().toISOString(),
      synthetic: caller.env === 'sandbox',
    };
  }

  /** `lang`: the methodology's (Accept-Language); the figures are the same in both */
  async spreads(caller: ScoreCaller, q: { tier?: string; term_days?: number; modality?: Modality }, lang: BasisLang = 'en') {
    if (q.term_days !== undefined && !(TERM_BUCKETS as readonly number[]).includes(q.term_days)) throw validationError([{ path: 'query.term_days', message: `must be one of: ${TERM_BUCKETS.join(', ')}` }]);
    const tierFilter = q.tier?.replace(' ', '+');
    const policy = (await this.policy(caller)).policy;
    const spreads = [];
    for (const tier of NOTCHES) {
      if (tierFilter && tierFilter !== tier) continue;
      for (const term of TERM_BUCKETS) {
        if (q.term_days !== undefined && q.term_days !== term) continue;
        for (const modality of MODALITIES) {
          if (q.modality && q.modality !== modality) continue;
          const spread = indexSpread(tier, term, modality, policy);
          spreads.push({ tier, term_days: term, modality, spread_bps: spread, all_in_rate_pct: Math.round((this.baseRate.valuePct + spread / 100) * 100) / 100 });
        }
      }
    }
    this.bill(caller, 'spreads_index');
    return {
      as_of: this.now().toISOString(),
      base_rate: { name: this.baseRate.name, value_pct: this.baseRate.valuePct, as_of: this.baseRate.asOf },
      spreads,
      methodology: SPREADS_METHODOLOGY[lang],
      methodology_url: `${this.docsBase}/docs/credit-policy`,
    };
  }

  /** `lang`: the titles' and sources' (Accept-Language); codes and figures are the same in both */
  async sectorRisk(caller: ScoreCaller, naics: string, lang: BasisLang = 'en') {
    const found = lookupNaics(naics);
    if (!found) throw new ApiError('sector_not_found', `NAICS ${naics} is not in the sector table (docs/sector-risk.md lists the codes).`);
    const { row } = found;
    const s = this.database.t.scoreResults;
    const scored = await this.database.db
      .selectDistinct({ nif: s.nif })
      .from(s)
      .where(and(eq(s.tenantId, caller.tenantId), eq(s.env, caller.env), eq(s.sector, row.nace.section)));
    this.bill(caller, 'sector_risk');
    const levels = ['sector', 'subsector', 'industry_group', 'industry', 'national_industry'] as const;
    return {
      naics,
      matched_naics: row.naics,
      title: sectorTitle(row, lang),
      level: levels[row.naics.length - 2]!,
      nace: { ...row.nace, section_title: naceSectionTitle(row.nace.section, lang) },
      risk_level: riskLevel(row.default_rate_pct),
      default_rate_pct: row.default_rate_pct,
      overdue_rate_pct: row.overdue_rate_pct,
      companies_scored: scored.length,
      sources: sectorSources(lang),
    };
  }

  // --- the tenant's credit policy ------------------------------------------------------------

  // hot reads of every decision: prepared once, and cached until the tenant's scores are marked
  // (a policy change, an ESG assessment, a finished sync; SQLite: any commit but the appends)
  private policyCache?: ReadCache<{ row: PolicyRow | null }>;
  private esgCache?: ReadCache<{ row: EsgRow | null }>;
  private policyQuery?: { execute(p: Record<string, string>): Promise<PolicyRow[]> };
  private esgQuery?: { execute(p: Record<string, string>): Promise<EsgRow[]> };

  async policy(caller: Pick<ScoreCaller, 'tenantId' | 'env' | 'scoreGeneration'>): Promise<{ policy: CreditPolicy; row: PolicyRow | null }> {
    const p = this.database.t.creditPolicies;
    this.policyQuery ??= this.database.db.select().from(p).where(eq(p.id, sql.placeholder('id'))).limit(1).prepare('credit_policy');
    const id = `${caller.tenantId}:${caller.env}`;
    this.policyCache ??= new ReadCache(this.database);
    const { row } = (await this.policyCache.get(id, async () => ({ row: (await this.policyQuery!.execute({ id }))[0] ?? null }), caller.scoreGeneration))!;
    if (!row) return { policy: DEFAULT_POLICY, row: null };
    const stored = row.policy as unknown as Partial<CreditPolicy>;
    return { policy: { ...DEFAULT_POLICY, ...stored, lgd: { ...DEFAULT_POLICY.lgd, ...stored.lgd } }, row };
  }

  policyView(p: { policy: CreditPolicy; row: PolicyRow | null }) {
    return { ...p.policy, lgd: { ...p.policy.lgd }, is_default: p.row === null, updated_at: p.row ? p.row.updatedAt.toISOString() : null };
  }

  async updatePolicy(caller: Actor & { tenantId: string; env: Env }, patch: Partial<Omit<CreditPolicy, 'lgd'>> & { lgd?: Partial<Record<Modality, number>> }, admin: AdminService) {
    const current = await this.policy(caller);
    const next: CreditPolicy = { ...current.policy, ...patch, lgd: { ...current.policy.lgd, ...patch.lgd } } as CreditPolicy;
    const now = this.now();
    const p = this.database.t.creditPolicies;
    await this.database.withTx(async (tx) => {
      this.database.touchTenant(caller.tenantId, 'scores'); // decisions read the policy through a cache
      await tx
        .insert(p)
        .values({ id: `${caller.tenantId}:${caller.env}`, tenantId: caller.tenantId, env: caller.env, policy: next as unknown as Record<string, unknown>, updatedAt: now })
        .onConflictDoUpdate({ target: p.id, set: { policy: next as unknown as Record<string, unknown>, updatedAt: now } });
      await admin.audit(tx, caller, 'credit_policy.updated', `${caller.env}`, { changes: patch, env: caller.env });
    });
    return this.policyView(await this.policy(caller));
  }

  private async latestEsg(caller: Pick<ScoreCaller, 'tenantId' | 'env' | 'scoreGeneration'>, nif: string): Promise<EsgRow | null> {
    const e = this.database.t.esgAssessments;
    this.esgQuery ??= this.database.db
      .select({ result: e.result, computedAt: e.computedAt })
      .from(e)
      .where(and(eq(e.tenantId, sql.placeholder('tenantId')), eq(e.env, sql.placeholder('env')), eq(e.nif, sql.placeholder('nif'))))
      .orderBy(desc(e.computedAt))
      .limit(1)
      .prepare('esg_latest');
    const params = { tenantId: caller.tenantId, env: caller.env, nif };
    this.esgCache ??= new ReadCache(this.database);
    const hit = await this.esgCache.get(`${caller.tenantId}|${caller.env}|${nif}`, async () => ({ row: (await this.esgQuery!.execute(params))[0] ?? null }), caller.scoreGeneration);
    return hit!.row;
  }

  private bill(caller: ScoreCaller, meter: string) {
    this.usage.record({ tenantId: caller.tenantId, apiKeyId: caller.keyId, env: caller.env, requestId: caller.requestId, meter });
  }
}


/** the decision operations a credit-insurance cover of each kind reaches (withInsurance) */
const COVER_REACH: Record<string, readonly OperationType[]> = {
  trade_credit: ['trade_credit', 'factoring', 'invoice_discounting'],
  factoring: ['factoring', 'invoice_discounting'],
  confirming: ['confirming'],
};

/** requests whose last decision a process remembers (DecisionService.lastDecided) */
const LAST_DECIDED_MAX = 2_000;

/** How the spreads index is priced (GET /v1/index/spreads `methodology`), in English or Portuguese (decimal comma). */
const SPREADS_METHODOLOGY: Record<BasisLang, string> = {
  en: 'Annual spread = expected loss (PD × LGD) + 10 % cost of capital on the IRB capital (CRR art. 153(1), maturity = term) + this tenant\'s margin, rounded up to a basis point; each tier priced at the geometric middle of its PD band, LGD by modality from the tenant\'s credit policy. Never lower for a worse tier or a longer term. A decision is priced at its notch\'s row at its modality, or at a better notch\'s row where that is higher (a factoring operation below B- moves to recourse, whose lower LGD would otherwise price it under B- without recourse), and never below the company\'s own expected loss (its PD × LGD) plus the margin; its basis names the row and each step above it.',
  pt: 'Spread anual = perda esperada (PD × LGD) + custo de capital de 10 % sobre o capital IRB (CRR, artigo 153.º, n.º 1, com prazo de vencimento = prazo da operação) + a margem deste cliente, arredondado por excesso ao ponto base; cada nível é avaliado no ponto médio geométrico do seu intervalo de PD, com a LGD de cada modalidade definida na política de crédito do cliente. Nunca inferior para um nível pior ou um prazo mais longo. Uma decisão é avaliada na linha do seu nível e modalidade, ou na linha de um nível melhor quando esta é mais alta (uma operação de factoring abaixo de B- passa a ter recurso, cuja LGD mais baixa a avaliaria abaixo de B- sem recurso), e nunca abaixo da perda esperada da própria empresa (a sua PD × LGD) mais a margem; a sua base indica a linha e cada passo acima dela.',
};

/** an insurer's answer, in Portuguese (insurance submissions' statuses) */
const PT_STATUS: Record<string, string> = { full: 'total', partial: 'parcial', refused: 'recusada', pending: 'pendente' };

/** The basis lines of a credit-insurance cover, in English or Portuguese. */
const INSURANCE_BASIS = {
  en: {
    cover: (insurer: string, id: string) => `credit insurance (${insurer}, ${id})`,
    noCover: (cover: string, status: string) => `${cover}: ${status}, no cover; the decision stands on its own`,
    lapsed: (cover: string, date: string) => `${cover}: the cover lapsed on ${date}; the decision stands on its own`,
    notReceivables: (cover: string) => `${cover}: covers trade receivables, not a credit line; the decision stands on its own`,
    otherOperation: (cover: string, coverType: string, operation: string) => `${cover}: underwritten for ${coverType}, which does not reach ${operation}; the decision stands on its own`,
    shortTerms: (cover: string, covered: number, term: number) => `${cover}: covers payment terms up to ${covered} days, this operation runs ${term}; the decision stands on its own`,
    belowMinTier: (cover: string, status: string, granted: number) => `${cover}: ${status} cover of ${eur(granted, 'en')}, but the notch is below the minimum tier; declined`,
    insured: (cover: string, status: string, granted: number, within: boolean) => `${cover}: ${status} cover of ${eur(granted, 'en')}; modality with_insurance, priced at its LGD, limit at least the insured amount${within ? ', the amount within it' : ''}`,
    blended: (insured: number, rest: number, modality: string, insuredBps: number, restBps: number, bps: number) =>
      `${eur(insured, 'en')} insured at ${insuredBps} bps, the uninsured ${eur(rest, 'en')} at ${modality}'s ${restBps} bps: ${bps} bps by amount`,
  },
  pt: {
    cover: (insurer: string, id: string) => `seguro de crédito (${insurer}, ${id})`,
    noCover: (cover: string, status: string) => `${cover}: ${PT_STATUS[status] ?? status}, sem cobertura; a decisão vale por si`,
    lapsed: (cover: string, date: string) => `${cover}: a cobertura caducou em ${date}; a decisão vale por si`,
    notReceivables: (cover: string) => `${cover}: cobre créditos comerciais, não uma linha de crédito; a decisão vale por si`,
    otherOperation: (cover: string, coverType: string, operation: string) => `${cover}: subscrito para ${coverType}, que não abrange ${operation}; a decisão vale por si`,
    shortTerms: (cover: string, covered: number, term: number) => `${cover}: cobre prazos de pagamento até ${covered} dias, esta operação tem ${term}; a decisão vale por si`,
    belowMinTier: (cover: string, status: string, granted: number) => `${cover}: cobertura ${PT_STATUS[status] ?? status} de ${eur(granted, 'pt')}, mas o nível está abaixo do mínimo; recusado`,
    insured: (cover: string, status: string, granted: number, within: boolean) => `${cover}: cobertura ${PT_STATUS[status] ?? status} de ${eur(granted, 'pt')}; modalidade with_insurance, ao LGD desta, limite de pelo menos o montante seguro${within ? ', o montante dentro dele' : ''}`,
    blended: (insured: number, rest: number, modality: string, insuredBps: number, restBps: number, bps: number) =>
      `${eur(insured, 'pt')} seguros a ${insuredBps} pb, os ${eur(rest, 'pt')} sem seguro a ${restBps} pb (${modality}): ${bps} pb ponderados pelo montante`,
  },
} as const;
