import { Value } from '@sinclair/typebox/value';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { isJsonObject, NOT_AN_OBJECT, unknownFields, type FieldError } from '../../lib/errors';
import { describe } from '../../plugins/http-errors';
import { queryProblems } from '../aml/service';
import { KycRequest } from './model';

/**
 * Every problem of a verification request at once (validated in the route's `transform`, before
 * Elysia's own validation, as the CSRD report and ESG do): the schema's, worded as every route's,
 * and the service's own checks of each representative that the schema cannot make (a name that
 * names no one, a birth date after today: `queryProblems`, as AML screening), on the
 * representatives whose fields have the right types. One message per path, the schema's first.
 * A NIF's check digit is not among them: a wrong one is a failed check of the verification.
 */
export function kycRequestProblems(body: unknown, now: Date): FieldError[] {
  if (!isJsonObject(body)) return [NOT_AN_OBJECT];
  const fields: FieldError[] = [];
  const seen = new Set<string>();
  const add = (f: FieldError) => {
    if (seen.has(f.path)) return;
    seen.add(f.path);
    fields.push(f);
  };
  // at most 256 schema errors, and a list past its 20 items judged on its first 21 (enough for
  // "must have at most 20 items"): a hostile body (100 000 items, as many unknown keys) is not walked whole
  const errors: ValueError[] = [];
  const reps = body.representatives;
  const judged = Array.isArray(reps) && reps.length > 21 ? { ...body, representatives: reps.slice(0, 21) } : body;
  for (const e of Value.Errors(KycRequest, judged)) if (errors.push(e) >= 256) break;
  // unknown fields are ignored when the rest is valid; listed beside real problems (they may be misspelt ones)
  const real = errors.filter((e) => e.type !== ValueErrorType.ObjectAdditionalProperties);
  for (const e of real.length ? errors : []) add({ path: e.path.replace(/^\//, '').replaceAll('/', '.') || '(body)', message: describe(e) });
  if (Array.isArray(reps))
    reps.slice(0, 20).forEach((r: unknown, i) => {
      if (!isJsonObject(r) || typeof r.name !== 'string') return;
      const birth = typeof r.birth_date === 'string' && !seen.has(`representatives.${i}.birth_date`) ? r.birth_date : undefined;
      for (const p of queryProblems({ name: r.name, birth_date: birth }, now, { fieldPath: `representatives.${i}.name`, birthDatePath: `representatives.${i}.birth_date` })) add(p);
    });
  if (fields.length) for (const f of unknownFields(body, KycRequest.properties)) add(f);
  return fields;
}
