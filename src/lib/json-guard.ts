/**
 * Checks on a request's JSON before it is parsed or validated, against bodies built to hurt:
 * - nesting: a body nested 50 000 levels deep (100–300 KB) cost seconds and gigabytes in the
 *   validator's error formatting and stalled every request meanwhile; refused beyond
 *   MAX_JSON_DEPTH in one pass over the text, before JSON.parse;
 * - coercion traps: an object with its own `toString` or `valueOf` member where a string is
 *   expected (`{"nif":{"toString":"…"}}`) made the validator's error mapping throw (a 500).
 */
import { validationError, type FieldError } from './errors';

/** the deepest nesting of arrays and objects a request body may have (ours need 4) */
export const MAX_JSON_DEPTH = 32;

/** true when the JSON text nests arrays and objects deeper than `max` (strings skipped); O(length), no allocation */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

const TRAP_KEYS = ['toString', 'valueOf', 'toJSON'];

/**
 * Every problem `check` finds in a parsed body, with its path (a.b.0.c; "(body)" for the whole), at
 * most 20: `check` sees each value, and each member name with the object holding it; it returns a
 * message, or null. A member `check` objects to is not walked into, and each object reports one of those.
 */
function problemsIn(value: unknown, check: (value: unknown, memberOf?: object) => string | null): FieldError[] {
  const out: FieldError[] = [];
  const walk = (v: unknown, path: string) => {
    if (out.length >= 20) return;
    const problem = check(v);
    if (problem) return void out.push({ path: path || '(body)', message: problem });
    if (v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) return v.forEach((x, i) => walk(x, path ? `${path}.${i}` : String(i)));
    let reported = false; // one problem of its member names per object
    for (const [k, x] of Object.entries(v)) {
      const memberProblem = check(k, v);
      if (!memberProblem) walk(x, path ? `${path}.${k}` : k);
      else if (!reported) {
        reported = true;
        out.push({ path: path || '(body)', message: memberProblem });
      }
    }
  };
  walk(value, '');
  return out;
}

/** an own toString, valueOf or toJSON member of an object (reported at the object) */
const coercionTrap = (v: unknown, memberOf?: object) => (memberOf !== undefined && TRAP_KEYS.includes(v as string) ? `must not be an object with a "${v as string}" member` : null);

export const tooDeepError = () => validationError([{ path: '(body)', message: `nested deeper than ${MAX_JSON_DEPTH} levels` }], `JSON nested deeper than ${MAX_JSON_DEPTH} levels is not accepted.`);

/** Throws the §2.8 validation error for a parsed body holding coercion traps (checked only when the text names one). */
export function assertNoCoercionTraps(text: string, value: unknown) {
  if (!text.includes('"toString"') && !text.includes('"valueOf"') && !text.includes('"toJSON"')) return;
  const out = problemsIn(value, coercionTrap);
  if (out.length) throw validationError(out);
}

/** a JSON escape of a UTF-16 surrogate (\uD800–\uDFFF): the only way a lone one reaches a parsed body (UTF-8 cannot carry one) */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** a string, or a member name, that is not well-formed UTF-16 */
const illFormed = (v: unknown, memberOf?: object) =>
  typeof v !== 'string' || v.isWellFormed() ? null : memberOf !== undefined ? 'must not have a member name with unpaired UTF-16 surrogates' : 'must not contain unpaired UTF-16 surrogates';

/** true when the text may hold a lone surrogate (a cheap test of the text, before any walk of the value) */
export const mayHoldLoneSurrogate = (text: string) => SURROGATE_ESCAPE.test(text);

/**
 * Throws the §2.8 validation error for a parsed body with a string that is not well-formed UTF-16
 * (a lone surrogate, sent as a \uD800-style escape): it could not be answered or stored as valid
 * UTF-8, and strict JSON decoders (serde_json, Go's encoding/json in strict mode) refuse it when
 * echoed. Checked only when the text holds such an escape.
 */
export function assertWellFormedStrings(text: string, value: unknown) {
  if (!mayHoldLoneSurrogate(text)) return;
  const out = problemsIn(value, illFormed);
  if (out.length) throw validationError(out);
}

/**
 * Where Elysia's normalisation changed a value's kind without a word (it mirrors a value by the
 * schema: a text by its length, so "" became [] and "x" became {}): the fields, as parsed, holding
 * something else than the list or object the validated body holds there. Used on the validation
 * errors (a text's characters became one error each) and, after validation passed, by the routes'
 * guard: such bodies passed ({"transactions": ""} was an empty list, {"lgd": "x"} no change at all).
 */
export function kindsChangedByNormalisation(parsed: unknown, validated: unknown): FieldError[] {
  const out: FieldError[] = [];
  const walk = (o: unknown, v: unknown, path: string) => {
    if (out.length >= 20 || o === null || typeof o !== 'object') return;
    for (const [k, x] of Object.entries(v as object)) {
      if (x === null || typeof x !== 'object') continue;
      const at = path ? `${path}.${k}` : k;
      const given = (o as Record<string, unknown>)[k];
      if (given === undefined) continue; // a default filled in
      if (Array.isArray(x) !== Array.isArray(given) || given === null || typeof given !== 'object') out.push({ path: at, message: Array.isArray(x) ? 'must be an array' : 'must be an object' });
      else walk(given, x, at);
    }
  };
  if (validated !== null && typeof validated === 'object') walk(parsed, validated, '');
  return out;
}
