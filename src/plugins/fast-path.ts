import { jsonTooDeep, mayHoldLoneSurrogate } from '../lib/json-guard';
import type { AppContext } from '../context';
import { ApiError, isJsonObject, JSON_UTF8 } from '../lib/errors';
import type { MaybePromise } from '../lib/maybe-promise';
import { turnEnd } from '../lib/turn-end';
import type { Env, Scope } from '../features/tenants/service';
import { admitKey, refusal, verifyKey } from './auth';
import { errorResponder, JSON_CONTENT_TYPE, readJsonText, recordRequest, unexpectedError } from './http-errors';
import { langOf, localised, requestState } from './request-state';

/** who calls, as the route's handler would get it from `auth` */
export interface FastCaller {
  tenantId: string;
  keyId: string;
  env: Env;
  requestId: string;
  scoreGeneration?: number;
}

/**
 * A JSON POST route answered without Elysia's per-request lifecycle (context object, hook chain,
 * header merging), which costs more than the hot routes' own work. Only the plain case: a usable
 * key of an active tenant with the route's scope, a JSON object body within the size limit that
 * `accept` takes, no Idempotency-Key. Anything else returns null *before any budget is charged*
 * (one exception: a key that another process revokes while this request is being admitted), and
 * the Elysia route (the reference, and the source of the OpenAPI document) answers instead,
 * reading the body this path already read. Both use the same guard functions, services, schemas,
 * error renderer and access log; tests assert both paths answer alike.
 */
export interface FastRoute<B, R extends object> {
  /** the route's path, for the access log and metrics */
  route: string;
  scope: Scope;
  /** the body this path answers (it may normalise it), or null to hand the request over */
  accept(input: Record<string, unknown>): B | null;
  answer(caller: FastCaller, body: B, lang: 'en' | 'pt'): MaybePromise<R>;
  /** the answer's JSON, checked against the route's response schema (throw if it does not match) */
  serialise(result: R): Blob | Uint8Array | string;
}

export function jsonFastPath<B, R extends object>(ctx: AppContext, route: FastRoute<B, R>) {
  const respondError = errorResponder(ctx);
  const limit = ctx.config.bodyLimitBytes;

  return async (request: Request): Promise<Response | null> => {
    const h = request.headers;
    // (these routes take no query parameter: one given, repeated or holding a NUL, is the Elysia route's to judge)
    if (h.has('idempotency-key') || request.url.includes('?')) return null;
    const length = h.get('content-length');
    if (Number(length ?? 0) > limit || !JSON_CONTENT_TYPE.test(h.get('content-type') ?? '') || h.has('content-encoding')) return null;
    const now = ctx.clock.now();
    // key, budget and answer without a promise when they are in the in-process caches (the common
    // case): each await below happens only when there is something to wait for
    let verified = verifyKey(ctx, h.get('authorization'), now);
    if (verified instanceof Promise) verified = await verified;
    if (verified instanceof ApiError) return null;
    if (refusal(verified, route.scope)) return null; // the Elysia route answers the 403 (after charging)

    const state = requestState(request);
    const text = await readJsonText(request, limit);
    if (text === undefined) {
      state.invalidUtf8 = true; // the Elysia route answers it (400), once the key is judged
      return null;
    }
    state.bodyText = text;
    if (text === null || jsonTooDeep(text) || text.includes('\\u0000') || mayHoldLoneSurrogate(text)) return null; // the Elysia route answers (refuses) it
    let input: unknown;
    try {
      input = JSON.parse(text);
    } catch {
      return null;
    }
    if (!isJsonObject(input)) return null;
    const body = route.accept(input);
    if (body === null) return null;

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
      const refused = refusal(admitted, route.scope);
      if (refused) throw refused;
      const { key, tenant } = admitted;
      ctx.keyTouches.add(key.id, { keyId: key.id, at: now });
      headers['cache-control'] = 'no-store'; // as the authed plugin sets it
      const lang = localised({ headers }, langOf({ 'accept-language': h.get('accept-language') ?? undefined }));
      const caller: FastCaller = { tenantId: tenant.id, keyId: key.id, env: key.env as Env, requestId: state.id, scoreGeneration: admitted.scoreGeneration };
      ctx.usage.hold(state.id, false); // settled by recordRequest, below, with the answer's status
      let result = route.answer(caller, body, lang);
      if (result instanceof Promise) result = await result;
      const json = route.serialise(result);
      const rate = state.rateHeaders!;
      await turnEnd(); // handed over with the rest of the turn's answers (lib/turn-end.ts)
      // the headers as one new object (Bun copies that into the response's headers faster than
      // the record grown a property at a time while admitting)
      return new Response(json, { status, headers: { 'content-type': JSON_UTF8, 'x-request-id': state.id, ...rate, 'content-language': headers['content-language'] as string, vary: 'Accept-Language', 'cache-control': 'no-store' } });
    } catch (error) {
      const err = error instanceof ApiError ? error : unexpectedError(ctx, request, error);
      status = err.status;
      await turnEnd();
      return respondError(err, request, headers);
    } finally {
      recordRequest(ctx, request, route.route, status);
    }
  };
}
