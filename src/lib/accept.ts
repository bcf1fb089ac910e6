import { ApiError } from './errors';

/** how specifically a media range names a type: `*∕*`, `type/*`, the type itself */
const Named = { Any: 0, Type: 1, Exactly: 2 } as const;
type Named = (typeof Named)[keyof typeof Named];
/**
 * a weight, read as clients send it: RFC 9110 §12.4.2's qvalue, and also what common clients write
 * beside it (Java's default Accept has `q=.2`; spaces around `=`), capped to 0–1
 */
const WEIGHT = /^q\s*=\s*(\d*\.?\d*)$/;

/**
 * Content negotiation for the routes that answer JSON or a document (a PDF, a chart), RFC 9110
 * §12.5.1: each type's weight is that of the most specific range naming it (`application/json;q=0,
 * *∕*` refuses JSON and accepts the PDF; `image/*` accepts both charts); q=0 is "not acceptable"; a
 * part whose weight is not a number (`q=high`) counts for nothing. The highest weight
 * wins; at equal weight JSON wins unless the document was named more specifically than JSON
 * (`*∕*` alone, or `application/*`, is JSON; `application/pdf, application/json` the PDF, as named
 * first by the route's own order of preference). `acceptable`: JSON or a document may be answered;
 * `document`: the document preferred (null: JSON, or nothing acceptable). No Accept (or only empty
 * elements): JSON.
 */
export function negotiate(accept: string | null | undefined, documents: readonly string[]): { acceptable: boolean; document: string | null } {
  const weights = new Map<string, { q: number; named: Named }>();
  const offered = ['application/json', ...documents];
  let any = false;
  for (const part of (accept ?? '').split(',')) {
    const [range = '', ...params] = part.trim().toLowerCase().split(';').map((x) => x.trim());
    if (!range) continue;
    any = true;
    const weight = params.find((p) => p.startsWith('q') && !/^q[a-z]/.test(p));
    const given = weight === undefined ? null : WEIGHT.exec(weight)?.[1];
    if (given !== null && !/\d/.test(given ?? '')) continue; // not a number: the part counts for nothing
    const q = given === null ? 1 : Math.min(1, Number(given));
    const named: Named = range === '*/*' ? Named.Any : range.endsWith('/*') ? Named.Type : Named.Exactly;
    for (const type of offered) {
      const covers = named === Named.Any || (named === Named.Type ? type.startsWith(range.slice(0, -1)) : type === range);
      if (!covers) continue;
      const had = weights.get(type);
      if (!had || named > had.named || (named === had.named && q > had.q)) weights.set(type, { q, named });
    }
  }
  if (!any) return { acceptable: true, document: null };
  const json: { q: number; named: Named } = weights.get('application/json') ?? { q: 0, named: Named.Any };
  let best: string | null = null;
  for (const type of documents) {
    const w = weights.get(type);
    if (!w || w.q <= 0) continue;
    if (w.q < json.q || (w.q === json.q && w.named <= json.named && !(w.named === Named.Exactly && json.named === Named.Exactly))) continue;
    if (best === null || w.q > weights.get(best)!.q) best = type;
  }
  return { acceptable: json.q > 0 || best !== null, document: best };
}

/** The document of `documents` the Accept header prefers to JSON, or null (JSON: also when nothing offered is acceptable, which refuseUnacceptable answers first). */
export const preferredDocument = (accept: string | null | undefined, documents: readonly string[]) => negotiate(accept, documents).document;

/** Whether an Accept header lets a route that answers JSON or one of `documents` answer at all. */
export const acceptsJsonOr = (accept: string | null | undefined, documents: readonly string[]) => negotiate(accept, documents).acceptable;

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
