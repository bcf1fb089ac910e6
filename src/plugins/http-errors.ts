import { dependencyDown } from '../lib/dependency-down';
import { publicBaseUrl } from '../config';
import { assertNoCoercionTraps, assertWellFormedStrings, jsonTooDeep, kindsChangedByNormalisation, tooDeepError } from '../lib/json-guard';
import { Elysia } from 'elysia';
import { ValueErrorType } from '@sinclair/typebox/errors';
import { ApiError, errorBody, fieldProblems, IGNORED_FIELD, isJsonObject, isResourceIdParam, JSON_UTF8, NIF_CHECK_DIGIT_FAILS, notAnObject, unknownResource, validationError, type FieldError } from '../lib/errors';
import { NIF_SHAPE, NIF_SHAPE_MESSAGE } from '../lib/nif';
import { HTTP_URL, HTTP_URL_MESSAGE, VISIBLE_TEXT, VISIBLE_TEXT_MESSAGE } from '../lib/schemas';
import type { AppContext } from '../context';
import { bearerChallenge } from '../lib/text';
import { requestState } from './request-state';
import { redactSecrets } from '../lib/log';
import { unservedCatalogEntry } from '../features/system/catalog';
import { chargeKey, hasKeyShapedBearer, limitAnonymous, peekAnonymous, verifyKey } from './auth';
import { fieldPath, isMultipart, partsAfterFileError, readMultipartFile, sniffType, type PartAfterFile } from '../lib/multipart';
import { DATE_YEARS } from '../lib/schemas';
import { errorPage } from '../features/erp/consent';

/** A body stream read whole, or null as soon as it exceeds `limit` bytes (the rest is not read). */
async function readStreamCapped(body: ReadableStream<Uint8Array>, limit: number): Promise<Buffer | null> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** The body as text, or null as soon as it exceeds `limit` bytes (chunked bodies are not read to the end). */
export async function readCapped(request: Request, limit: number): Promise<string | null> {
  // a declared length within the limit is read in one go (the common case, and before touching
  // request.body, which makes Bun build a stream); one over it is not read at all (a 200 MB form
  // body to the token endpoint was read whole before being refused)
  if (request.headers.has('content-length')) return Number(request.headers.get('content-length')) > limit ? null : request.text();
  if (!request.body) return '';
  const bytes = await readStreamCapped(request.body, limit);
  return bytes === null ? null : bytes.toString('utf8');
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
/**
 * A JSON body's text: JSON is UTF-8 (RFC 8259 §8.1), and bytes that are not were read as U+FFFD and
 * stored so (an API key named "caf\uFFFD"). null: over the limit; undefined: not UTF-8.
 */
export async function readJsonText(request: Request, limit: number): Promise<string | null | undefined> {
  const bytes = request.headers.has('content-length') ? await request.bytes() : await readCappedBytes(request, limit);
  if (bytes === null) return null;
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}
export const notUtf8 = () => new ApiError('invalid_json', 'The request body is not valid UTF-8 (JSON is UTF-8, RFC 8259).');

/** The body as bytes, or null as soon as it exceeds `limit` bytes. */
export async function readCappedBytes(request: Request, limit: number): Promise<Uint8Array | null> {
  if (Number(request.headers.get('content-length') ?? '0') > limit) return null;
  if (!request.body) return new Uint8Array();
  const bytes = await readStreamCapped(request.body, limit);
  return bytes === null ? null : new Uint8Array(bytes);
}

/**
 * Routes that also take a binary body (an image or a PDF) with a limit of their own; the route
 * gets `{ binary, contentType }` as its body. Every other route takes JSON only.
 */
export function binaryBodies(config: Pick<AppContext['config'], 'saftMaxBytes'>): Record<string, { types: RegExp; /** named in a 415 */ accepted: string; limit: number; stream?: true; /** false: a file only, no JSON body (415 for one) */ json?: false }> {
  return {
    '/v1/invoice/extract': { types: /^(image\/png|image\/jpeg|application\/pdf)\b/i, accepted: 'application/json, application/pdf, image/png, image/jpeg or multipart/form-data', limit: 10 * 1024 * 1024 },
    // streamed to the route unread (a SAF-T file can be hundreds of MB); the route enforces the limit
    '/v1/saft/parse': { types: /^(application|text)\/xml\b/i, accepted: 'application/xml, text/xml or multipart/form-data', limit: config.saftMaxBytes, stream: true, json: false },
  };
}
export interface BinaryBody {
  binary: Uint8Array;
  contentType: string;
  /** a multipart upload's text fields (sent before the file part) */
  fields?: Record<string, string>;
}
export interface StreamBody {
  stream: ReadableStream<Uint8Array>;
  contentType: string;
  contentEncoding: string | null;
  /** the declared Content-Length, if any (of the whole multipart body for an upload) */
  length: number | null;
  /** a multipart upload's text fields (sent before the file part) */
  fields?: Record<string, string>;
  /** a multipart upload's parts sent after the file part, known once the body is read (the route refuses them) */
  afterFile?: Promise<PartAfterFile[]>;
}
/** room for a multipart body's boundaries and part headers over the file's own limit */
const MULTIPART_OVERHEAD = 64 * 1024;

/** application/json and its +json variants */
export const JSON_CONTENT_TYPE = /^application\/([\w.+-]*\+)?json\b/i;


/** service pages (probes, metrics, docs): not authenticated, never limited (their rate-limit headers only report) */
export const isServicePath = (path: string) => /^\/(healthz|readyz|metrics|openapi\.json|docs|roadmap|\.well-known)(\/|$)/.test(path);
/** where a parsed body holds a NUL character (in a text or a field's name), as field paths; at most 20 */
function nulPaths(value: unknown, path = '', out: string[] = []): string[] {
  if (out.length >= 20) return out;
  if (typeof value === 'string') {
    if (value.includes('\0')) out.push(path || '(body)');
  } else if (Array.isArray(value)) value.forEach((v, i) => nulPaths(v, path ? `${path}.${i}` : String(i), out));
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      const at = path ? `${path}.${fieldPath(k)}` : fieldPath(k);
      if (k.includes('\0')) out.push(at);
      else nulPaths(v, at, out);
    }
  return out;
}
const safeDecode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** the path of an absolute request URL, without parsing it whole */
const pathOf = (url: string) => {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  const q = url.indexOf('?', start);
  return start < 0 ? '/' : url.slice(start, q < 0 ? undefined : q);
};

/**
 * Renders an ApiError as the §2.8 response (status, headers given plus the error's own, body);
 * completes a claimed Idempotency-Key with it. Shared by the error hook and the score fast path.
 */
export function errorResponder(ctx: AppContext) {
  const docsBase = publicBaseUrl(ctx.config);
  return async (err: ApiError, request: Request, headers: Record<string, unknown>) => {
    const state = requestState(request);
    ctx.usage.settle(state.id, false); // a failed call is billed nothing
    for (const [k, v] of Object.entries(err.extra.headers ?? {})) headers[k] = v;
    // RFC 6750 §3.1: no error code when the request carried no credentials at all
    if (err.status === 401 && !err.extra.headers?.['www-authenticate']) headers['www-authenticate'] = err.code === 'missing_api_key' ? 'Bearer realm="api"' : bearerChallenge('invalid_token', err.message);
    // an error is never for a cache to keep (most are about the caller's key or its budget)
    headers['cache-control'] = 'no-store';
    // error messages are English whatever Accept-Language asked (a localised route set pt-PT before it failed)
    if (headers['content-language'] !== undefined) headers['content-language'] = 'en';
    const text = JSON.stringify(errorBody(err, state.id, docsBase));
    if (state.idempotencyClaim) {
      // the handler ran and failed: a 4xx is its final answer (stored), a 5xx releases the key
      await ctx.idempotency.complete(state.idempotencyClaim, err.status, text);
      state.idempotencyClaim = undefined;
    }
    return new Response(text, { status: err.status, headers: { ...(headers as Record<string, string>), 'content-type': JSON_UTF8 } });
  };
}


/** seconds a caller should wait after a 503 for a dependency that is down */
export const DEPENDENCY_RETRY_AFTER_S = 5;

export const serviceUnavailable = () =>
  new ApiError('service_unavailable', 'A dependency of the service (database or cache) is unreachable; nothing was done. Retry after Retry-After.', {
    headers: { 'retry-after': String(DEPENDENCY_RETRY_AFTER_S) },
  });

/**
 * An unexpected exception: logged with the request id (never sent). A database or Redis outage is
 * 503 service_unavailable with Retry-After; anything else 500 internal_error.
 */
export function unexpectedError(ctx: AppContext, request: Request, error: unknown) {
  const down = dependencyDown(error);
  ctx.log.error(down ? 'dependency unavailable' : 'unhandled error', {
    requestId: requestState(request).id,
    error: error instanceof Error ? error.message : String(error),
    ...(down ? { code: String((error as { code?: unknown })?.code ?? '') } : { stack: error instanceof Error ? error.stack?.split('\n').slice(0, 6).join(' | ') : undefined }),
  });
  if (down) return serviceUnavailable();
  return new ApiError('internal_error', 'Something went wrong on our side. Quote the requestId to support.');
}

/**
 * The server's last resort (Bun.serve's `error`, and native routes that throw): the §2.8 body,
 * never the runtime's HTML page with source and parameters, whatever NODE_ENV says.
 */
export function lastResort(ctx: AppContext, request: Request | null, error: unknown): Response {
  const err = request ? unexpectedError(ctx, request, error) : dependencyDown(error) ? serviceUnavailable() : new ApiError('internal_error', 'Something went wrong on our side.');
  if (!request) ctx.log.error('unhandled server error', { error: error instanceof Error ? error.message : String(error) });
  const id = request ? requestState(request).id : `req_${crypto.randomUUID().replaceAll('-', '')}`;
  const docsBase = publicBaseUrl(ctx.config);
  return new Response(JSON.stringify(errorBody(err, id, docsBase)), {
    status: err.status,
    headers: { 'content-type': JSON_UTF8, 'x-request-id': id, ...(err.extra.headers ?? {}) },
  });
}

/** Metrics and the access log line of one answered request (`path` is logged when no route matched). */
export function recordRequest(ctx: AppContext, request: Request, route: string | undefined, status: number, path?: string) {
  const s = requestState(request);
  ctx.usage.settle(s.id, status < 400); // whatever no earlier step settled (UsageMeter.hold)
  const ms = performance.now() - s.start;
  ctx.metrics.observeRequest(request.method, route || 'unmatched', status, ms, s.limitedBy);
  if (!ctx.log.enabled('info')) return;
  ctx.log.info('request', {
    requestId: s.id,
    method: request.method,
    route: route || (path && redactSecrets(path)),
    status,
    durationMs: Math.round(ms * 100) / 100,
    tenantId: s.tenantId,
    keyId: s.keyId,
  });
}

/**
 * JSON routes whose documented lists need more than BODY_LIMIT_BYTES: POST /v1/reconcile takes up
 * to 20 000 transactions and 20 000 invoices (~8 MB of ordinary items), which 1 MiB refused at ~4 000;
 * POST /v1/basel/capital up to 10 000 lines (~190 bytes each with every field: ~2 MB).
 */
export const LARGE_JSON_BODIES: Record<string, number> = { '/v1/reconcile': 16 * 1024 * 1024, '/v1/basel/capital': 8 * 1024 * 1024 };

/**
 * The integer query parameters of this API's routes. Elysia reads them with Number(), so `1e2`,
 * `0x10`, `5.0` or ` 7` passed as 100, 16, 5 and 7; a value Number() takes but that is not written
 * in digits is refused here (anything else is the route schema's to word).
 */
const QUERY_INTEGERS = ['limit', 'term_days'] as const;

/** the pages a person's browser opens (their errors are HTML pages, not the API's JSON) */
const BROWSER_PAGES = /^\/v1\/erp-connector\/oauth\/(consent|callback)\/?$|^\/portal\//;

/**
 * Request plumbing shared by every route: request id, JSON-only body parsing with a size limit,
 * the §2.8 error body for every failure (validation, parse, 404/405, unexpected), and the access log.
 */
export function httpPlumbing(ctx: AppContext, routeTable: () => { method: string; path: string }[]) {
  let matchers: { method: string; re: RegExp }[] | null = null;
  const allowedMethods = (path: string) => {
    matchers ??= routeTable().map((r) => ({
      method: r.method,
      re: new RegExp('^' + r.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+') + '/?$'),
    }));
    const methods = new Set(matchers.filter((m) => m.re.test(path)).map((m) => m.method));
    if (methods.has('GET')) methods.add('HEAD'); // the server answers HEAD wherever it answers GET
    return [...methods];
  };

  const respond = errorResponder(ctx);
  const bodies = binaryBodies(ctx.config);

  /** The body of a request as the route will get it (the API's JSON, or a file); throws its problems. */
  const parseBody = async ({ request, contentType, path }: { request: Request; contentType: string; path: string }): Promise<unknown> => {
    // no usable key: leave the body unread, so the caller gets 401 rather than a body error
    if (path.startsWith('/v1/') && !hasKeyShapedBearer(request.headers.get('authorization'))) return {};
    // the supplier portal's pages and the OAuth token endpoint read their own forms (not the API's
    // JSON), whatever Authorization header comes along (an HTTP client's default Bearer key)
    if (path.startsWith('/portal/') || path.startsWith('/v1/oauth/')) return {};
    const binary = bodies[path];
    if (binary && isMultipart(contentType)) {
      if (Number(request.headers.get('content-length') ?? '0') > binary.limit + MULTIPART_OVERHEAD) throw new ApiError('payload_too_large', `The request body exceeds ${binary.limit} bytes.`);
      const part = await readMultipartFile(request, 'file', binary.limit + MULTIPART_OVERHEAD);
      const declared = request.headers.get('content-length');
      if (binary.stream) {
        const gzip = /^application\/(x-)?gzip$/.test(part.contentType) || /\.gz$/i.test(part.filename ?? '');
        return { stream: part.stream, contentType: part.contentType || 'application/octet-stream', contentEncoding: gzip ? 'gzip' : null, length: declared === null ? null : Number(declared), fields: part.fields, afterFile: part.afterFile } satisfies StreamBody;
      }
      const bytes = await readStreamCapped(part.stream, binary.limit);
      if (bytes === null) throw new ApiError('payload_too_large', `The file exceeds ${binary.limit} bytes.`);
      // the file read whole: the parts after it are known, and refused as the streamed uploads refuse them
      const late = partsAfterFileError(await part.afterFile);
      if (late) throw late;
      const head = new Uint8Array(bytes.slice(0, 16));
      // a part labelled with no type, or octet-stream, is what its bytes say; one labelled with another
      // type is refused for it, as a body of that type is (a PNG labelled image/gif is mislabelled)
      const generic = !part.contentType || /^application\/octet-stream$/i.test(part.contentType);
      const type = binary.types.test(part.contentType) ? part.contentType : generic ? (sniffType(head) ?? part.contentType) : part.contentType;
      if (!binary.types.test(type)) throw new ApiError('unsupported_media_type', `The file part's type ${part.contentType || 'none'} is not accepted here.`);
      return { binary: new Uint8Array(bytes), contentType: type, fields: part.fields } satisfies BinaryBody;
    }
    if (binary?.stream && binary.types.test(contentType ?? '')) {
      if (Number(request.headers.get('content-length') ?? '0') > binary.limit) throw new ApiError('payload_too_large', `The request body exceeds ${binary.limit} bytes.`);
      const declared = request.headers.get('content-length');
      return {
        stream: request.body ?? new ReadableStream(),
        contentType: contentType!.split(';')[0]!.trim().toLowerCase(),
        contentEncoding: request.headers.get('content-encoding'),
        length: declared === null ? null : Number(declared),
      } satisfies StreamBody;
    }
    if (binary && binary.types.test(contentType ?? '')) {
      const bytes = await readCappedBytes(request, binary.limit);
      if (bytes === null) throw new ApiError('payload_too_large', `The request body exceeds ${binary.limit} bytes.`);
      return { binary: bytes, contentType: contentType!.split(';')[0]!.trim().toLowerCase() } satisfies BinaryBody;
    }
    let limit = ctx.config.bodyLimitBytes;
    const large = LARGE_JSON_BODIES[path] ?? 0;
    if (large > limit) {
      // the larger limit only for a key that verifies: an anonymous caller's 16 MiB is not read
      let found = verifyKey(ctx, request.headers.get('authorization'), ctx.clock.now());
      if (found instanceof Promise) found = await found;
      if (!(found instanceof ApiError)) limit = large;
    }
    const wrongType = () => new ApiError('unsupported_media_type', `Content-Type must be ${binary?.accepted ?? 'application/json'} (got ${contentType || 'none'}).`);
    // a route that takes a file only: a JSON (or any other) body is refused by its type, unread (a
    // SAF-T file sent as application/json had been 400 "not valid UTF-8", or a validation error)
    if (binary?.json === false && contentType) throw wrongType();
    // a route that takes files refuses a body of another type by its type, whatever its bytes: a GIF
    // or an octet-stream PNG had been "not valid UTF-8" (400) or too large for JSON (413)
    const refusedType = binary !== undefined && !JSON_CONTENT_TYPE.test(contentType ?? '');
    const tooLarge = () => (refusedType ? wrongType() : new ApiError('payload_too_large', `The request body exceeds ${limit} bytes.`));
    if (Number(request.headers.get('content-length') ?? '0') > limit) throw tooLarge();
    // a compressed JSON body (RFC 9110 §8.4.1, RFC 7694): refused by name, not read as text that is not UTF-8
    const coding = request.headers.get('content-encoding');
    if (coding && coding.trim().toLowerCase() !== 'identity')
      throw new ApiError('unsupported_media_type', `Content-Encoding ${coding.slice(0, 40)} is not accepted on JSON bodies: send the body uncompressed.`, { headers: { 'accept-encoding': 'identity' } });
    const state0 = requestState(request);
    if (state0.invalidUtf8) throw notUtf8();
    const stashed = state0.bodyText;
    const text = stashed !== undefined ? stashed : await readJsonText(request, limit);
    if (text === undefined) throw refusedType ? wrongType() : notUtf8();
    if (text === null) throw tooLarge();
    if (text.trim() === '') return {};
    if (!JSON_CONTENT_TYPE.test(contentType ?? '')) throw wrongType();
    if (jsonTooDeep(text)) throw tooDeepError();
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new ApiError('invalid_json', 'The request body is not valid JSON.');
    }
    // (a raw NUL is not JSON; the escape may be a text's own backslash and "u0000": the values tell)
    if (text.includes('\\u0000')) {
      const paths = nulPaths(value);
      if (paths.length) throw validationError(paths.map((path) => ({ path, message: 'must not contain NUL characters' })));
    }
    assertNoCoercionTraps(text, value);
    assertWellFormedStrings(text, value);
    // every body of this API is a JSON object; the guard refuses others once the route's own
    // checks had their say (GDPR erase answers confirmation_required to anything else)
    const state = requestState(request);
    if (!isJsonObject(value)) state.nonObjectBody = true;
    else state.parsedBody = value;
    return value;
  };

  return new Elysia({ name: 'http-plumbing' })
    // a repeated query parameter on an API route without a key (the OAuth token endpoint): refused
    // here; a keyed route's guard has refused it already, once the key was judged
    .onBeforeHandle({ as: 'global' }, ({ request }) => {
      const repeated = requestState(request).repeatedQuery;
      if (repeated) throw repeated;
    })
    .onRequest(async ({ request, set, server }) => {
      const state = requestState(request);
      set.headers['x-request-id'] = state.id;
      // NUL cannot be stored in PostgreSQL text (a 500 there, silently kept by SQLite): refused
      // everywhere alike, in the URL here and in JSON bodies at parsing
      if (request.url.includes('%00')) {
        const path = pathOf(request.url);
        // a page a person's browser opens answers as a page
        if (BROWSER_PAGES.test(path)) return errorPage(400, 'This link is not valid', 'The link holds a character no link of this service has. Nothing was changed.');
        // in the path: no route or resource has such a name (a malformed id is 404, as an unknown one)
        if (path.includes('%00')) throw unknownResource(fieldPath(safeDecode(path.slice(path.lastIndexOf('/') + 1))));
        const names = [...new URLSearchParams(request.url.slice(request.url.indexOf('?') + 1))].filter(([k, v]) => k.includes('\0') || v.includes('\0')).map(([k]) => fieldPath(k));
        if (names.length) throw validationError([...new Set(names)].map((name) => ({ path: `query.${name}`, message: 'must not contain NUL characters' })));
      }
      const query = request.url.indexOf('?');
      if (query >= 0) {
        const params = new URLSearchParams(request.url.slice(query + 1));
        // no API parameter takes several values: a repeated one would be read as its last value
        // (a filter ?nif=A&nif=B answering B's rows alone), so it is refused rather than guessed —
        // once the key is judged (the auth guard throws it: a caller without one learns nothing else)
        const path = pathOf(request.url);
        if (path.startsWith('/v1/') && !BROWSER_PAGES.test(path)) {
          const seen = new Set<string>();
          const repeated = new Set<string>();
          for (const name of params.keys()) (seen.has(name) ? repeated : seen).add(name);
          if (repeated.size) state.repeatedQuery = validationError([...repeated].map((name) => ({ path: `query.${name}`, message: 'is given more than once (every parameter takes one value)' })));
        }
        for (const name of QUERY_INTEGERS)
          for (const v of params.getAll(name))
            if (Number.isInteger(Number(v)) && v.trim() !== '' && !/^-?[0-9]+$/.test(v)) throw validationError([{ path: `query.${name}`, message: 'must be an integer written in digits (e.g. 50)' }]);
      }
      if (isServicePath(pathOf(request.url))) await peekAnonymous(ctx, request, server as never, set);
    })
    .onParse({ as: 'global' }, async (c) => {
      try {
        return await parseBody(c);
      } catch (err) {
        // a key-shaped bearer on an API route: its key is judged first (401, 429, 403, in the auth
        // guard, which then throws this), as for a body that parses but fails validation
        if (err instanceof ApiError && c.path.startsWith('/v1/') && !c.path.startsWith('/v1/oauth/')) {
          requestState(c.request).deferredBodyError = err;
          return {};
        }
        throw err;
      }
    })
    .onError({ as: 'global' }, async ({ code, error, request, set, path, server }) => {
      let err: ApiError;
      const cause = (error as { cause?: unknown })?.cause;
      if (error instanceof ApiError) err = error;
      else if (code === 'PARSE' && cause instanceof ApiError) err = cause;
      // an answer failing its own schema is this service's failure (or an upstream's data it let
      // through), never the caller's: a 500 with the request id, logged, not a 422 naming the answer's fields
      else if (code === 'VALIDATION' && (error as { type?: string }).type === 'response') err = unexpectedError(ctx, request, error);
      else if (code === 'VALIDATION') err = fromValidation(error as never, request);
      // the validator's own error formatting failing on a hostile value (json-guard refuses the
      // known ones first): still the caller's input, not our failure
      else if (error instanceof TypeError && /\bValidationError\b|mapValueError/.test(error.stack ?? '')) err = validationError([{ path: '(body)', message: 'is not valid' }]);
      else if (code === 'NOT_FOUND') {
        const allow = allowedMethods(path);
        if (allow.length) {
          err = new ApiError('method_not_allowed', `${request.method} is not allowed here; use ${allow.join(', ')}.`, {
            headers: { allow: allow.join(', ') },
          });
        } else {
          const catalogued = unservedCatalogEntry(path);
          err = new ApiError(
            'not_found',
            catalogued
              ? `${catalogued.method} ${catalogued.path} is in the API catalog (${catalogued.readiness}) but not served by this deployment; /roadmap lists what is.`
              : `No route ${request.method} ${path}.`,
          );
        }
      } else if (code === 'PARSE') err = new ApiError('invalid_json');
      else err = unexpectedError(ctx, request, error);
      const state = requestState(request);
      if (!state.rateHeaders && !isServicePath(path)) {
        // the key was not checked (body error, unknown route…): a valid key pays from its own
        // budget, anything else from the caller's address
        const over = (await chargeKey(ctx, request, set)) ?? (state.rateHeaders ? null : await limitAnonymous(ctx, request, server as never, set));
        if (over) err = over;
      }
      if (state.rateHeaders) for (const [k, v] of Object.entries(state.rateHeaders)) set.headers[k] = v;
      set.status = err.status;
      return respond(err, request, set.headers);
    })
    // a keyed request's usage is settled once its answer is final: after the handler, its
    // Idempotency-Key record and the response's schema (a failure of any of them is an error,
    // settled unbilled by the error responder); recordRequest settles whatever is left
    .mapResponse({ as: 'global' }, (c) => {
      const response = (c as { responseValue?: unknown }).responseValue;
      const status = response instanceof Response ? response.status : typeof c.set.status === 'number' ? c.set.status : 200;
      ctx.usage.settle(requestState(c.request).id, status < 400);
    })
    .onAfterResponse({ as: 'global' }, (c) => {
      const { request, set, route, path } = c;
      // a handler may return its own Response (HTML pages, redirects): its status is the real one
      const own = (c as { responseValue?: unknown }).responseValue;
      recordRequest(ctx, request, route, own instanceof Response ? own.status : Number(set.status ?? 200), path);
    });
}

interface ValidationLike {
  type: string;
  /** the value validated: after Elysia's normalisation */
  value?: unknown;
  all: { type?: number; path: string; message: string; summary?: string; schema?: Record<string, unknown>; value?: unknown }[];
  validator?: { minimum?: number; maximum?: number; type?: string };
}

const FORMAT_MESSAGES: Record<string, string> = {
  'date-time': `must be a date-time with its time zone (RFC 3339), e.g. 2026-11-01T00:00:00Z, from ${DATE_YEARS.min} to ${DATE_YEARS.max}`,
  date: `must be a calendar date (YYYY-MM-DD) from ${DATE_YEARS.min} to ${DATE_YEARS.max}`,
  nif: NIF_CHECK_DIGIT_FAILS,
  country: 'must be an ISO 3166-1 alpha-2 country code (e.g. PT)',
  printable: 'must contain visible characters and no control characters (line breaks, tabs)',
  'date-or-year': `must be a calendar date (YYYY-MM-DD) or a year (YYYY), from ${DATE_YEARS.min} to ${DATE_YEARS.max}`,
  uuid: 'must be a UUID',
  email: 'must be an e-mail address',
  uri: 'must be an absolute URI',
};

/** patterns whose rule is said better than any field's description says it */
const PATTERN_MESSAGES: Record<string, string> = {
  [NIF_SHAPE.source]: NIF_SHAPE_MESSAGE,
  [HTTP_URL]: HTTP_URL_MESSAGE,
  [VISIBLE_TEXT]: VISIBLE_TEXT_MESSAGE,
};

/** A validation error worded for the caller: names what is allowed (TypeBox says "Expected union value" for enums). */
export function describe(e: ValidationLike['all'][number]): string {
  // an unknown field is ignored when the rest of the body is valid (Elysia strips it): it is listed
  // beside the real problems (it may be a misspelt one) but must not read as one of them
  if (e.type === ValueErrorType.ObjectAdditionalProperties) return IGNORED_FIELD;
  // a field that fails while absent is a required one ("Expected array" says nothing of that)
  if (e.value === undefined && e.path !== '') return 'is required';
  const any = e.schema?.anyOf as Record<string, unknown>[] | undefined;
  // a nullable string: name its length rule rather than "should be one of: 'string', 'null'"
  const str = (any?.find((o) => o.type === 'string') ?? (e.schema?.type === 'string' ? e.schema : undefined)) as { maxLength?: number; minLength?: number } | undefined;
  if (str && typeof e.value === 'string') {
    if (str.maxLength !== undefined && e.value.length > str.maxLength) return `must be at most ${str.maxLength} characters`;
    if (str.minLength !== undefined && e.value.length < str.minLength) return `must be at least ${str.minLength} character${str.minLength === 1 ? '' : 's'}`;
  }
  // a format says what it wants (a string may have a pattern too, for the document's readers), also
  // when the field may be null ("should be one of: 'date', 'null'" otherwise)
  // (a request date's year range is a pattern beside its format: worded as the format)
  const format =
    e.type === ValueErrorType.StringFormat || (e.type === ValueErrorType.StringPattern && (e.schema?.format === 'date' || e.schema?.format === 'date-time'))
      ? e.schema?.format
      : typeof e.value === 'string'
        ? any?.find((o) => o.type === 'string' && typeof o.format === 'string')?.format
        : undefined;
  if (typeof e.value === 'string' && typeof format === 'string' && format in FORMAT_MESSAGES) return FORMAT_MESSAGES[format]!;
  // a pattern reads badly as a message ("Expected string to match '^(score\.updated|…'"): the
  // schema's own description says what is expected, where it has one
  const described = e.schema as { pattern?: string; description?: string } | undefined;
  if (described?.pattern && described.pattern in PATTERN_MESSAGES && typeof e.value === 'string') return PATTERN_MESSAGES[described.pattern]!;
  if (described?.pattern && typeof e.value === 'string') {
    // ids and cursors: their form, not the field's whole description
    if (described.description?.startsWith('next_cursor')) return 'must be the next_cursor of a previous page of this list';
    const id = /^\^([a-z]+)_\[0-9a-f-?\]\{(32|36)\}\$$/.exec(described.pattern);
    if (id) return `must be an id of the form ${id[1]}_<${id[2] === '36' ? 'UUID' : '32 hexadecimal digits'}>`;
    if (described.description) return `must match: ${described.description}`;
  }
  if (any?.length && any.every((o) => 'const' in o)) return `must be one of: ${any.map((o) => JSON.stringify(o.const)).join(', ')}`;
  // a number with listed values: those values, not its range ("from 30 to 360" read as any of them)
  const listed = ((e.schema as { enum?: unknown[] } | undefined)?.enum ?? any?.find((o) => Array.isArray(o.enum))?.enum) as unknown[] | undefined;
  if (Array.isArray(listed) && listed.length) return `must be one of: ${listed.map((v) => JSON.stringify(v)).join(', ')}`;
  // a boolean query parameter (Elysia's boolean-or-text union): "should be one of: 'boolean', 'boolean'" otherwise
  if (any?.some((o) => o.type === 'boolean') || e.schema?.type === 'boolean') return 'must be true or false';
  if (any?.some((o) => o.type === 'integer' || o.type === 'number')) {
    const num = any.find((o) => o.type === 'integer' || o.type === 'number')!;
    const range = num.minimum !== undefined && num.maximum !== undefined ? ` from ${num.minimum} to ${num.maximum}` : '';
    return `must be ${num.type === 'integer' ? 'an integer' : 'a number'}${range}`;
  }
  return byType(e) ?? e.summary ?? e.message;
}

/**
 * The plain schema errors in the words of the rest ("must be …"): TypeBox's own say "Expected
 * integer" or, through Elysia, "Expected property 'nif' to be string but found: 599000015" (the
 * value echoed back), and differed between routes for the same fault.
 */
function byType(e: ValidationLike['all'][number]): string | undefined {
  const s = (e.schema ?? {}) as { minimum?: number; maximum?: number; exclusiveMinimum?: number; exclusiveMaximum?: number; minItems?: number; maxItems?: number; type?: string };
  const range = s.minimum !== undefined && s.maximum !== undefined ? ` from ${s.minimum} to ${s.maximum}` : '';
  switch (e.type) {
    case ValueErrorType.String:
      return 'must be a string';
    case ValueErrorType.Integer:
      return `must be an integer${range}`;
    case ValueErrorType.Number:
      return `must be a number${range}`;
    case ValueErrorType.Array:
      return 'must be an array';
    case ValueErrorType.Object:
      return 'must be an object';
    case ValueErrorType.Null:
      return 'must be null';
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberMaximum:
      return `must be at most ${s.maximum}`;
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberMinimum:
      return `must be at least ${s.minimum}`;
    case ValueErrorType.IntegerExclusiveMaximum:
    case ValueErrorType.NumberExclusiveMaximum:
      return `must be below ${s.exclusiveMaximum}`;
    case ValueErrorType.IntegerExclusiveMinimum:
    case ValueErrorType.NumberExclusiveMinimum:
      return `must be above ${s.exclusiveMinimum}`;
    case ValueErrorType.ArrayMaxItems:
      return `must have at most ${s.maxItems} items`;
    case ValueErrorType.ArrayMinItems:
      return `must have at least ${s.minItems} item${s.minItems === 1 ? '' : 's'}`;
    case ValueErrorType.ArrayUniqueItems:
      return 'must not repeat an item';
    case ValueErrorType.StringPattern:
      return `must match the pattern ${(e.schema as { pattern?: string }).pattern}`;
    case ValueErrorType.Literal:
      return `must be ${JSON.stringify((e.schema as { const?: unknown }).const)}`;
    case ValueErrorType.Boolean:
      return 'must be true or false';
    default:
      return undefined;
  }
}

function fromValidation(error: ValidationLike, request: Request): ApiError {
  // a query number that fails after coercion loses its name ("property" errors): find it in the URL
  if (error.type === 'property') {
    const { minimum, maximum, type, enum: listed } = (error.validator ?? {}) as { minimum?: number; maximum?: number; type?: string; enum?: unknown[] };
    const integer = type === 'integer';
    const params = [...new URL(request.url).searchParams.entries()];
    const fails = ([, v]: [string, string]) => {
      const n = Number(v);
      return Number.isNaN(n) || (integer && !Number.isInteger(n)) || (minimum !== undefined && n < minimum) || (maximum !== undefined && n > maximum);
    };
    // the API's number parameters first: a NIF of nine digits is "out of range" of limit's 1–200 too
    const hit = params.find((p) => (QUERY_INTEGERS as readonly string[]).includes(p[0]) && fails(p)) ?? params.find(fails);
    return validationError([{ path: hit ? `query.${hit[0]}` : 'query', message: numberMessage({ minimum, maximum, integer, listed }, hit?.[1]) }]);
  }
  // a malformed resource id is an unknown one (404, no fields), so the form of what was asked for
  // tells nothing apart; a problem of another path parameter (an enumeration) is still listed alone,
  // as it is beside a well-formed id that does not exist
  if (error.type === 'params') {
    const all = error.all ?? [];
    const isId = (e: ValidationLike['all'][number]) => isResourceIdParam(e.path.replace(/^\//, '').split('/')[0] ?? '', e.schema);
    const malformed = all.find(isId);
    if (malformed) {
      const others = all.filter((e) => !isId(e));
      if (!others.length) return unknownResource(malformed.value);
      error = { ...error, all: others };
    }
  }
  // a body that is not a JSON object fails a route's schema on whatever it checks first (a
  // required field, "Expected object"): named the same way on every route instead
  if (error.type === 'body' && requestState(request).nonObjectBody) return notAnObject();
  const where = error.type === 'query' ? 'query.' : error.type === 'params' ? 'path.' : error.type === 'headers' ? 'header.' : '';
  // Elysia's normalisation runs before validation and mirrors a value of the wrong kind into the
  // schema's (a text became one empty object per character, "" an empty list): such a field is
  // named by its kind, and the errors under it (every character's fields) are dropped
  const parsed = error.type === 'body' ? requestState(request).parsedBody : undefined;
  const fields: FieldError[] = parsed === undefined ? [] : kindsChangedByNormalisation(parsed, error.value);
  const mangled = fields.map((f) => f.path);
  const seen = new Set<string>(mangled);
  for (const e of error.all ?? []) {
    const path = where + (e.path.replace(/^\//, '').replaceAll('/', '.') || '(body)');
    if (seen.has(path) || mangled.some((m) => path.startsWith(`${m}.`))) continue; // first (most specific) message per path
    seen.add(path);
    fields.push({ path, message: describe(e) });
  }
  // a query number beside another problem: its text passes the schema's text branch, so it is
  // judged here as it is alone (the "property" error above), and every problem is named at once
  if (error.type === 'query' && error.value && typeof error.value === 'object')
    for (const [name, schema] of Object.entries((error.validator as { schema?: { properties?: Record<string, QueryNumberSchema> } } | undefined)?.schema?.properties ?? {})) {
      const raw = (error.value as Record<string, unknown>)[name];
      const numeric = schema.anyOf?.find((b) => b.type === 'integer' || b.type === 'number');
      if (typeof raw !== 'string' || !numeric || seen.has(`query.${name}`)) continue;
      const n = Number(raw);
      const integer = numeric.type === 'integer';
      if (raw.trim() === '' || Number.isNaN(n) || (integer && !Number.isInteger(n)) || (numeric.minimum !== undefined && n < numeric.minimum) || (numeric.maximum !== undefined && n > numeric.maximum) || (Array.isArray(numeric.enum) && !numeric.enum.includes(n)))
        fields.push({ path: `query.${name}`, message: numberMessage({ minimum: numeric.minimum, maximum: numeric.maximum, integer, listed: numeric.enum }, raw) });
    }
  // NIFs failing their check digit and nothing else: invalid_nif, as the routes' own checks answer
  return fieldProblems(fields);
}
type QueryNumberSchema = { anyOf?: { type?: string; minimum?: number; maximum?: number; enum?: unknown[] }[] };

/** what a query number must be: its listed values, or its kind and range */
function numberMessage(o: { minimum?: number; maximum?: number; integer: boolean; listed?: unknown[] }, value: string | undefined): string {
  const range = o.minimum !== undefined && o.maximum !== undefined ? ` from ${o.minimum} to ${o.maximum}` : '';
  // a number with listed values: those, not its range (which reads as any number within it)
  return Array.isArray(o.listed) && o.listed.length && value !== undefined && !Number.isNaN(Number(value)) ? `must be one of: ${o.listed.join(', ')}` : `must be ${o.integer ? 'an integer' : 'a number'}${range}`;
}
