import type { Recommendation } from './engine';

/**
 * The body of an ESG answer: exactly JSON.stringify(answer) (same keys, same order), as UTF-8.
 * Its recommendations are ~5 KB of catalogue texts in only a few thousand distinct forms
 * (recommendation × language × basis × priority × impact): each form is serialised and encoded
 * once and reused; the rest of the answer is serialised as usual.
 */
export function esgAnswerBody(answer: { recommendations: Recommendation[] }): Uint8Array {
  // the members before and after `recommendations`, each serialised as an object of its own:
  // JSON.stringify writes an object's members in Object.keys order, so joining them is exact
  const before: Record<string, unknown> = Object.create(null); // a key "__proto__" stays a member
  const after: Record<string, unknown> = Object.create(null);
  let side = before;
  for (const key of Object.keys(answer)) {
    if (key === 'recommendations') side = after;
    else side[key] = (answer as Record<string, unknown>)[key];
  }
  const head = JSON.stringify(before);
  const tail = JSON.stringify(after);
  const open = utf8.encode(head.length > 2 ? `${head.slice(0, -1)},"recommendations":[` : '{"recommendations":[');
  const close = utf8.encode(tail.length > 2 ? `],${tail.slice(1)}` : ']}');
  const parts = answer.recommendations.map(recommendationJson);
  // one buffer written in place (a Blob of the parts cost ~3x as much, measured)
  let size = open.length + close.length + Math.max(0, parts.length - 1);
  for (const p of parts) size += p.length;
  const body = new Uint8Array(size);
  body.set(open, 0);
  let at = open.length;
  for (let i = 0; i < parts.length; i++) {
    if (i) body[at++] = 0x2c; // ,
    body.set(parts[i]!, at);
    at += parts[i]!.length;
  }
  body.set(close, at);
  return body;
}

const IMPACTS = { low: 0, medium: 1, high: 2 } as const;
const utf8 = new TextEncoder();

// by recommendation id, then its body (which holds the language and the basis), then priority × impact
const forms = new Map<string, Map<string, Uint8Array[]>>();

function recommendationJson(r: Recommendation): Uint8Array {
  let byBody = forms.get(r.id);
  if (!byBody) forms.set(r.id, (byBody = new Map()));
  let byRank = byBody.get(r.body);
  if (!byRank) byBody.set(r.body, (byRank = []));
  const slot = r.priority * 3 + IMPACTS[r.impact];
  // only small integers are memoised: anything else is serialised as it is
  if (!Number.isInteger(slot) || slot < 0 || slot > 300) return utf8.encode(JSON.stringify(r));
  return (byRank[slot] ??= utf8.encode(JSON.stringify(r)));
}
