import { jsonTooDeep } from '../../lib/json-guard';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { t } from 'elysia';
import type { AppContext } from '../../context';
import { ApiError, isJsonObject, JSON_UTF8 } from '../../lib/errors';
import { admitKey, refusal, verifyKey } from '../../plugins/auth';
import { errorResponder, JSON_CONTENT_TYPE, readCapped, recordRequest, unexpectedError } from '../../plugins/http-errors';
import { langOf, localised, requestState } from '../../plugins/request-state';
import { turnEnd } from '../../lib/turn-end';
import type { Env } from '../tenants/service';
import { ScoreRequest, ScoreResponse } from './model';
import type { ScoreService } from './service';

const ROUTE = '/v1/score';

/**
 * POST /v1/score served without Elysia's per-request lifecycle, because its throughput is a
 * target (#4, #8) and that lifecycle (context object, hook chain, header merging) costs more than
 * the cached score itself.
 *
 * It answers only the plain case: a usable key of an active tenant with the `score` scope, a JSON
 * object body within the size limit that passes the route's schema, no Idempotency-Key. Anything
 * else returns null *before any budget is charged* (one exception: a key that another process
 * revokes while this request is being admitted), and the Elysia route (the reference, and the
 * source of the OpenAPI document) answers instead, reading the body this path already read. Both
 * use the same guard functions, service, schemas, error renderer and access log; the test suite
 * sends every request through this dispatcher, and a test asserts both paths answer alike.
 */
export function scoreFastPath(ctx: AppContext, service: ScoreService) {
  // unknown fields go to the Elysia route, which strips them (its normalisation); compiled from a
  // copy because Elysia marks the route's own schema object when it compiles the route
  const body = TypeCompiler.Compile(t.Object(ScoreRequest.properties, { additionalProperties: false }));
  const response = TypeCompiler.Compile(ScoreResponse);
  const respondError = errorResponder(ctx);
  const limit = ctx.config.bodyLimitBytes;
  // a cached result is one shared, frozen object per stored row and language (ScoreService):
  // checked against the schema and serialised once, into an immutable Blob that every answer of it
  // shares (a string body is copied into each Response: ~1 KB more garbage per request)
  const serialised = new WeakMap<object, Blob>();

  return async (request: Request): Promise<Response | null> => {
    const h = request.headers;
    if (h.has('idempotency-key')) return null;
    const length = h.get('content-length');
    if (Number(length ?? 0) > limit || !JSON_CONTENT_TYPE.test(h.get('content-type') ?? '')) return null;
    const now = ctx.clock.now();
    // key, budget and score answer without a promise when they are in the in-process caches (the
    // common case): each await below happens only when there is something to wait for
    let verified = verifyKey(ctx, h.get('authorization'), now);
    if (verified instanceof Promise) verified = await verified;
    if (verified instanceof ApiError) return null;
    if (refusal(verified, 'score')) return null; // the Elysia route answers the 403 (after charging)

    const state = requestState(request);
    const text = (state.bodyText = length !== null ? await request.text() : await readCapped(request, limit));
    if (text === null || jsonTooDeep(text) || text.includes('\\u0000')) return null; // the Elysia route answers (refuses) it
    let input: unknown;
    try {
      input = JSON.parse(text);
    } catch {
      return null;
    }
    if (!isJsonObject(input)) return null;
    const req = input as { nif: string; customer_reference?: string; refresh?: 'cached_ok' | 'force_refresh' };
    req.refresh ??= 'cached_ok';
    if (!body.Check(req)) return null;

    const headers: Record<string, string> = { 'x-request-id': state.id };
    let status = 200;
    let admitted: ReturnType<typeof admitKey>;
    try {
      admitted = admitKey(ctx, request, { headers }, verified, now);
      if (admitted instanceof Promise) admitted = await admitted;
    } catch (error) {
      admitted = unexpectedError(ctx, request, error);
    }
    // a key found unusable once re-read (PostgreSQL, changed by another process): the Elysia route
    // answers the 401 as for any bad key (the caller's address pays, as there)
    if (admitted instanceof ApiError && admitted.status === 401) return null;

    // from here on this path answers, whatever happens
    try {
      if (admitted instanceof ApiError) throw admitted;
      // the key may have been re-read while being admitted (PostgreSQL, changed meanwhile)
      const refused = refusal(admitted, 'score');
      if (refused) throw refused;
      const { key, tenant } = admitted;
      ctx.keyTouches.add(key.id, { keyId: key.id, at: now });
      const lang = localised({ headers }, langOf({ 'accept-language': h.get('accept-language') ?? undefined }));
      const caller = { tenantId: tenant.id, keyId: key.id, env: key.env as Env, requestId: state.id, scoreGeneration: admitted.scoreGeneration };
      let result = service.score(caller, req, lang);
      if (result instanceof Promise) result = await result;
      let json = serialised.get(result);
      if (json === undefined) {
        if (!response.Check(result)) throw new Error('score response does not match its schema');
        serialised.set(result, (json = new Blob([JSON.stringify(result)])));
      }
      const rate = state.rateHeaders!;
      await turnEnd(); // handed over with the rest of the turn's answers (lib/turn-end.ts)
      // the headers as one new object (Bun copies that into the response's headers faster than
      // the record grown a property at a time while admitting)
      return new Response(json, { status, headers: { 'content-type': JSON_UTF8, 'x-request-id': state.id, ...rate, 'content-language': headers['content-language'] as string, vary: 'Accept-Language' } });
    } catch (error) {
      const err = error instanceof ApiError ? error : unexpectedError(ctx, request, error);
      status = err.status;
      await turnEnd();
      return respondError(err, request, headers);
    } finally {
      recordRequest(ctx, request, ROUTE, status);
    }
  };
}
