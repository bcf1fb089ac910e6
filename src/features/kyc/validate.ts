import { isJsonObject, type FieldError } from '../../lib/errors';
import { RequestProblems } from '../../lib/request-problems';
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
  // a list past its 20 items is judged on its first 21 (enough for "at most 20 items")
  const reps = isJsonObject(body) ? body.representatives : undefined;
  const judged = Array.isArray(reps) && reps.length > 21 ? { ...(body as object), representatives: reps.slice(0, 21) } : body;
  const problems = new RequestProblems(KycRequest, body, { judged });
  if (Array.isArray(reps))
    reps.slice(0, 20).forEach((r: unknown, i) => {
      if (!isJsonObject(r) || typeof r.name !== 'string') return;
      const birth = typeof r.birth_date === 'string' && !problems.has(`representatives.${i}.birth_date`) ? r.birth_date : undefined;
      for (const p of queryProblems({ name: r.name, birth_date: birth }, now, { fieldPath: `representatives.${i}.name`, birthDatePath: `representatives.${i}.birth_date` })) problems.add(p);
    });
  return problems.done();
}
