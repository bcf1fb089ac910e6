/** Per-request facts shared by the plugins (request id, timing, raw body, caller), keyed by the Request. */
export interface RequestState {
  id: string;
  start: number;
  rawBody?: string;
  tenantId?: string;
  keyId?: string;
  /** rate-limit headers computed for this request; copied onto every response */
  rateHeaders?: Record<string, string>;
  /** id of the Idempotency-Key record this request claimed (stored when it completes) */
  idempotencyClaim?: string;
  /** the JSON body was valid but not an object (refused by the guard after route transforms) */
  nonObjectBody?: boolean;
}

const states = new WeakMap<Request, RequestState>();

export function requestState(request: Request): RequestState {
  let s = states.get(request);
  if (!s) {
    s = { id: 'req_' + crypto.randomUUID().replaceAll('-', ''), start: performance.now() };
    states.set(request, s);
  }
  return s;
}

export const langOf = (headers: Record<string, string | undefined>): 'en' | 'pt' =>
  /^\s*pt\b/i.test(headers['accept-language'] ?? '') ? 'pt' : 'en';
