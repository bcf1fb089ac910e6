import { recommendationForm, RECOMMENDATION_FORMS, type Recommendation } from './engine';

/**
 * The body of an ESG answer: exactly JSON.stringify(answer) (same keys, same order), as UTF-8.
 * Its recommendations are ~5 KB of catalogue texts in a bounded number of distinct forms
 * (recommendation × language × text variant × basis × priority × impact): each form is serialised
 * and encoded once and reused; the rest of the answer is serialised as usual.
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
/** priorities above this are serialised as they are (the engine returns at most 10) */
const MAX_PRIORITY = 10;
const SLOTS = (MAX_PRIORITY + 1) * 3;

// by form (recommendation × language × text variant × basis: engine.recommendationForm), then
// priority × impact: at most RECOMMENDATION_FORMS × 33 encodings, whatever the traffic
const forms: (Uint8Array | undefined)[][] = Array.from({ length: RECOMMENDATION_FORMS }, () => []);

function recommendationJson(r: Recommendation): Uint8Array {
  const form = recommendationForm(r);
  const slot = r.priority * 3 + IMPACTS[r.impact];
  // only the catalogue's forms at small integer priorities are memoised: anything else is serialised as it is
  if (form < 0 || !Number.isInteger(slot) || slot < 0 || slot >= SLOTS) return utf8.encode(JSON.stringify(r));
  const byRank = forms[form]!;
  return (byRank[slot] ??= utf8.encode(JSON.stringify(r)));
}
