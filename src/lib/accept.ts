import { ApiError } from './errors';

/**
 * Content negotiation for the routes that answer JSON or a document (a PDF, a chart): the media
 * type of `documents` the Accept header prefers, or null for JSON. A document needs its own type
 * named with a q above 0 (RFC 9110 §12.4.2: q=0 is "not acceptable") and not below JSON's, which
 * `application/json`, `application/*` and `*∕*` give (the wildcards a hair less than JSON named);
 * a wildcard alone never picks a document. No Accept, or nothing acceptable offered: JSON.
 */
export function preferredDocument(accept: string | null | undefined, documents: readonly string[]): string | null {
  if (!accept) return null;
  const q = new Map<string, number>();
  let json = 0;
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.trim().toLowerCase().split(';').map((s) => s.trim());
    const qp = params.find((p) => p.startsWith('q='));
    const value = qp ? Number(qp.slice(2)) : 1;
    if (!Number.isFinite(value)) continue;
    if (type === 'application/json') json = Math.max(json, value);
    else if (type === 'application/*' || type === '*/*') json = Math.max(json, value - 0.0001);
    else if (documents.includes(type)) q.set(type, Math.max(q.get(type) ?? 0, value));
  }
  let best: string | null = null;
  for (const type of documents) if ((q.get(type) ?? 0) > 0 && (q.get(type) ?? 0) >= json && (best === null || q.get(type)! > q.get(best)!)) best = type;
  return best;
}

/**
 * Whether an Accept header lets a route that answers JSON or one of `documents` answer at all:
 * no header, or a part with q above 0 naming JSON, one of the documents, their `type/*` or `*∕*`.
 */
export function acceptsJsonOr(accept: string | null | undefined, documents: readonly string[]): boolean {
  if (!accept || !accept.trim()) return true;
  const offered = ['application/json', ...documents];
  return accept.split(',').some((part) => {
    const [type = '', ...params] = part.trim().toLowerCase().split(';').map((x) => x.trim());
    const q = params.find((x) => x.startsWith('q='));
    if (q !== undefined && !(Number(q.slice(2)) > 0)) return false;
    return type === '*/*' || offered.some((o) => o === type || (type.endsWith('/*') && o.startsWith(type.slice(0, -1))));
  });
}

/**
 * The guard of a route that answers JSON or `documents` by Accept: 406 not_acceptable (with
 * `Vary: Accept`) for an Accept that allows none of them, before the route does anything.
 */
export function refuseUnacceptable(accept: string | null | undefined, documents: readonly string[]) {
  if (acceptsJsonOr(accept, documents)) return;
  const types = ['application/json', ...documents];
  throw new ApiError('not_acceptable', `The Accept header names none of ${types.join(', ')} (nor their type/* or */*): this route answers only those.`, { headers: { vary: 'Accept' } });
}

/** Whether the caller prefers the PDF to JSON. */
export const wantsPdf = (accept: string | null | undefined) => preferredDocument(accept, ['application/pdf']) !== null;

/**
 * A conditional GET of a stored document (RFC 9110 §13.1.2): 304 without the bytes when
 * If-None-Match names its ETag (or `*`), with the ETag and the caller's other headers; else null.
 */
export function notModified(request: Request, etag: string, headers: Record<string, unknown>): Response | null {
  const given = request.headers.get('if-none-match');
  if (!given) return null;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  if (given.trim() !== '*' && !given.split(',').some((tag) => opaque(tag) === opaque(etag))) return null;
  return new Response(null, { status: 304, headers: { ...(headers as Record<string, string>), etag } });
}
