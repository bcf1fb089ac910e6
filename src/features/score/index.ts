import { Elysia, t } from 'elysia';
import { publicBaseUrl } from '../../config';
import type { AppContext } from '../../context';
import { authed, chargeMore } from '../../plugins/auth';
import { langOf, localised, requestState } from '../../plugins/request-state';
import { apiDoc } from '../../lib/api-doc';
import { ApiError, validationError } from '../../lib/errors';
import { effectiveRateLimit } from '../tenants/service';
import { adaptersFromEnv } from './adapters';
import { FixturesResponse, judgeScoreBatch, ScoreBatchRequest, ScoreBatchResponse, ScoreRequest, ScoreResponse, type JudgedBatchItem } from './model';
import type { RateDecision } from '../../lib/rate-limiter';
import { ScoreService } from './service';
import type { RescoreService } from './rescore';
import { Int } from '../../lib/schemas';

export function scoreService(ctx: AppContext) {
  const base = publicBaseUrl(ctx.config);
  return new ScoreService(ctx.database, ctx.usage, () => ctx.clock.now(), ctx.liveAdapters ?? adaptersFromEnv(ctx.config.adapters), ctx.config.roadmapUrl ?? `${base}/roadmap`, (tenantId) => ctx.generations?.inputs(tenantId));
}

/** a batch's items as judged by its transform (the handler reads these, not the stand-ins) */
const judgedBatches = new WeakMap<Request, JudgedBatchItem[]>();
/** what an invalid item becomes for Elysia's validation (never scored: the handler reads judgedBatches) */
const STAND_IN_NIF = '599000015';

/** The 429 of a batch its key's budget or its tenant's daily quota cannot hold now (the shape of any 429 of the guard). */
function batchRefused(d: RateDecision, n: number, retryAfter: string): ApiError {
  const headers = { 'retry-after': retryAfter };
  if (d.deniedBy === 'daily')
    return new ApiError(
      'daily_quota_exceeded',
      `The tenant's daily quota of ${d.daily?.quota ?? 0} requests cannot hold this batch: its ${n} items weigh ${n} requests, and ${(d.daily?.remaining ?? 0) + 1} were left with this call. Nothing was scored or billed.`,
      { headers },
    );
  return new ApiError(
    'rate_limited',
    `Rate limit of ${d.limit} requests per minute exceeded for this key: a batch weighs one request per item, and ${n} do not fit in the ${d.remaining + 1} left with this call. Nothing was scored or billed.`,
    { headers },
  );
}

export function scoreRoutes(ctx: AppContext, service: ScoreService, rescore: RescoreService) {
  const docsBase = publicBaseUrl(ctx.config);
  return new Elysia({ name: 'score' })
    .use(authed(ctx, 'score'))
    .post(
      '/v1/score',
      ({ auth, body, headers, set }) =>
        service.score({ tenantId: auth.tenantId, keyId: auth.keyId, env: auth.env, requestId: auth.requestId, scoreGeneration: auth.scoreGeneration }, body, localised(set, langOf(headers))),
      {
        body: ScoreRequest,
        response: { 200: ScoreResponse },
        detail: apiDoc({
          summary: 'Credit-worthiness score of a company by NIF',
          description:
            'Sandbox keys score fixture companies (GET /v1/sandbox/fixtures); live keys compose a credit bureau, the central credit register and the tax authority. Reasons are in English, or Portuguese with Accept-Language: pt-PT.',
          tag: 'score',
          security: 'BearerAuth',
          operationId: 'score',
          errors: ['invalid_nif', 'company_not_found', 'live_tier_not_available', 'upstream_unavailable'],
          localised: true,
        }),
      },
    )
    .post(
      '/v1/score/batch',
      async ({ auth, body, headers, set, request }) => {
        const items = judgedBatches.get(request);
        if (!items) throw new Error('score batch: items not judged'); // (the transform always judges them)
        // a live key without the live tier: 503 before anything is charged (as POST /v1/score answers it)
        service.assertLiveTier(auth);
        // a batch weighs one request per item against the key's rate limit and the tenant's daily
        // quota: more items than either can ever hold is the request's own problem (no retry helps)
        const perMinute = effectiveRateLimit(auth.tenant, auth.key);
        if (items.length > perMinute || items.length > auth.tenant.dailyQuota) {
          const [limit, what] = items.length > perMinute ? [perMinute, "this key's rate limit per minute"] : [auth.tenant.dailyQuota, "the tenant's daily quota"];
          throw validationError([{ path: 'items', message: `a batch weighs one request per item: at most ${limit} items (${what}); send smaller batches` }]);
        }
        // admission charged one, the rest now, all or nothing
        if (items.length > 1) {
          const d = await chargeMore(ctx, request, set, auth, items.length - 1);
          if (!d.allowed) {
            // not stored under its Idempotency-Key (no 429 is): the same key may be sent again later
            const state = requestState(request);
            const claim = state.idempotencyClaim;
            state.idempotencyClaim = undefined;
            if (claim) await ctx.idempotency.complete(claim, 503, ''); // (a 5xx status releases the key)
            // the retry's admission takes one unit before its N − 1: Retry-After is when all N are
            // back (the decision's is for N − 1: a client waiting it was refused again, each time)
            const retryAfter = d.deniedBy === 'daily' ? (state.rateHeaders?.['retry-after'] ?? '1') : String(Math.max(1, Math.ceil((d.retryAfterMs + 60_000 / d.limit) / 1000)));
            set.headers['retry-after'] = retryAfter;
            if (state.rateHeaders) state.rateHeaders['retry-after'] = retryAfter;
            throw batchRefused(d, items.length, retryAfter);
          }
        }
        const caller = { tenantId: auth.tenantId, keyId: auth.keyId, env: auth.env, requestId: auth.requestId, scoreGeneration: auth.scoreGeneration };
        return service.scoreBatch(caller, items, body.refresh ?? 'cached_ok', localised(set, langOf(headers)), docsBase);
      },
      {
        // the envelope judged here (its problems the whole call's 422); each item's own problems
        // become that item's 422, so Elysia's validation sees a stand-in for an invalid item
        transform({ body, request }) {
          const items = judgeScoreBatch(body);
          if (!items) return;
          judgedBatches.set(request, items);
          // Elysia validates a copy of the list with stand-ins; the body as sent (its fingerprint
          // for an Idempotency-Key) keeps the items as they were
          const envelope = body as { items: unknown[] };
          const sent = envelope.items;
          requestState(request).bodyAsSent = { ...envelope, items: sent };
          const checked = sent.slice();
          for (const x of items) if (!('item' in x)) checked[x.index] = { nif: STAND_IN_NIF };
          envelope.items = checked;
        },
        body: ScoreBatchRequest,
        response: { 200: ScoreBatchResponse },
        detail: apiDoc({
          summary: 'Score a portfolio: up to 1,000 NIFs in one call, each item\u2019s result or error in order',
          description:
            'Each item is scored exactly as POST /v1/score would (the 24 h cache with cached_ok, fixtures in the sandbox), and answered in request order with its status: 200 and the result, or the status POST /v1/score would have given it and its error body (§2.8: code, message, status, requestId, docsUrl, and fields with paths in this request, e.g. items.3.nif). Every problem inside an item is that item\u2019s 422 (validation_failed; invalid_nif for a check digit alone), the other items are scored; the whole call is 422 only for the envelope: items missing, not an array, empty, over 1,000, or holding something other than an object, or an unknown refresh \u2014 and for the hostile input every route refuses before its body is read (a NUL character, an unpaired surrogate, an object with its own toString, valueOf or toJSON, nesting deeper than 32), named on its path. Each distinct NIF is looked up or computed once: a NIF met again is answered from its first valid item (duplicate_of; cache: cached), with force_refresh too. A batch weighs one request per item against the key\u2019s per-minute rate limit and the tenant\u2019s daily quota: more items than either can ever hold is 422 on items (send smaller batches); if what is left now cannot hold it, 429 rate_limited or daily_quota_exceeded with Retry-After, nothing scored or billed (the call itself counts one request, as any refused call does). A batch answered 503 (a data source down) keeps what it was charged, as any answered call counts. New results are stored in one transaction; one usage line (meter score) per item answered 200, one bureau lookup per computation. Safe to retry with an Idempotency-Key (a replay weighs one request). An outage of a data source fails the whole call (503), nothing billed.',
          tag: 'score',
          security: 'BearerAuth',
          operationId: 'scoreBatch',
          errors: ['rate_limited', 'daily_quota_exceeded', 'live_tier_not_available', 'upstream_unavailable'],
          localised: true,
          examples: { portfolio: { summary: 'Three sandbox NIFs, one unknown', value: { items: [{ nif: '599000015', customer_reference: 'loan-1' }, { nif: '599000031' }, { nif: '599000074' }], refresh: 'force_refresh' } } },
        }),
      },
    )
    .get(
      '/v1/sandbox/fixtures',
      ({ auth }) => {
        if (auth.env !== 'sandbox') throw new ApiError('sandbox_only', 'Fixtures exist only in the sandbox; use an sk_test_ key.');
        return { fixtures: service.fixtures() };
      },
      {
        response: { 200: FixturesResponse },
        detail: apiDoc({ summary: 'Sandbox fixture companies and their outcomes', tag: 'sandbox', security: 'BearerAuth', operationId: 'listFixtures', errors: ['sandbox_only'] }),
      },
    )
    .post(
      '/v1/sandbox/rescore',
      async ({ auth }) => {
        if (auth.env !== 'sandbox') throw new ApiError('sandbox_only', 'Re-scoring on demand exists only in the sandbox; use an sk_test_ key.');
        return rescore.rescoreTenant(auth.tenantId, 'sandbox');
      },
      {
        response: {
          200: t.Object({
            rescored: Int({ description: 'Companies re-scored (those scored in the last 90 days)' }),
            events: t.Array(t.Object({ id: t.String(), type: t.String(), nif: t.String() })),
          }),
        },
        detail: apiDoc({
          summary: "Run the tenant's nightly re-score now (sandbox)",
          description: 'Re-scores every company this tenant scored in the sandbox in the last 90 days, emitting score.updated and deterioration.alert events as the nightly job does.',
          tag: 'sandbox',
          security: 'BearerAuth',
          operationId: 'sandboxRescore',
          errors: ['sandbox_only'],
        }),
      },
    );
}
