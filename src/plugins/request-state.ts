/** Per-request facts shared by the plugins (request id, timing, raw body, caller), keyed by the Request. */
export interface RequestState {
  id: string;
  start: number;
  tenantId?: string;
  keyId?: string;
  /** the budget that refused this request, when one did (metrics) */
  limitedBy?: 'minute' | 'daily' | 'address';
  /** rate-limit headers computed for this request; copied onto every response */
  rateHeaders?: Record<string, string>;
  /** id of the Idempotency-Key record this request claimed (stored when it completes) */
  idempotencyClaim?: string;
  /** the body, when a fast path read it before handing the request to the Elysia route (null: over the limit) */
  bodyText?: string | null;
  /** the body's bytes are not UTF-8 (read by the fast path, answered by the route) */
  invalidUtf8?: boolean;
  /** the JSON body was valid but not an object (refused by the guard after route transforms) */
  nonObjectBody?: boolean;
  /** the JSON body as parsed, before Elysia's normalisation (validation errors are named on it) */
  parsedBody?: unknown;
  /** the body as sent, where a route's transform gave Elysia another to validate: an Idempotency-Key's fingerprint is taken of it */
  bodyAsSent?: unknown;
  /** a body problem found at parsing, answered once the key has been judged (auth guard) */
  deferredBodyError?: Error;
  /** a query parameter given twice: refused once the key is judged (the auth guard) */
  repeatedQuery?: Error;
}

// kept on the Request itself under a private symbol: a WeakMap entry per request costs the
// garbage collector far more (ephemerons) than a property that dies with its object
const STATE = Symbol('requestState');

export function requestState(request: Request): RequestState {
  const holder = request as Request & { [STATE]?: RequestState };
  return (holder[STATE] ??= { id: 'req_' + crypto.randomUUID().replaceAll('-', ''), start: performance.now() });
}

/**
 * Accept-Language negotiation between the two languages the texts exist in: the supported
 * language with the highest q wins (pt, pt-PT, pt-BR → pt), English by default.
 */
export function langOf(headers: Record<string, string | undefined>): 'en' | 'pt' {
  if (!headers['accept-language']) return 'en';
  let best: { lang: 'en' | 'pt'; q: number } = { lang: 'en', q: 0 };
  for (const part of (headers['accept-language'] ?? '').split(',')) {
    const [tag, ...params] = part.trim().toLowerCase().split(';');
    const lang = tag === 'pt' || tag?.startsWith('pt-') ? 'pt' : tag === 'en' || tag?.startsWith('en-') || tag === '*' ? 'en' : null;
    if (!lang) continue;
    const qParam = params.find((p) => p.trim().startsWith('q='));
    const q = qParam ? Number(qParam.trim().slice(2)) : 1;
    if (Number.isFinite(q) && q > best.q) best = { lang, q };
  }
  return best.lang;
}

/** Marks a localised response: its language, and that it varies with Accept-Language. */
export function localised(set: { headers: Record<string, unknown> }, lang: 'en' | 'pt') {
  set.headers['content-language'] = lang === 'pt' ? 'pt-PT' : 'en';
  set.headers['vary'] = 'Accept-Language';
  return lang;
}
