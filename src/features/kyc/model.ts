import { t } from 'elysia';
import { CustomerReference, DateTime, NineDigits } from '../../lib/schemas';
import { NifResponse } from '../nif/model';

export const KycRequest = t.Object({
  nif: NineDigits, // a wrong check digit is a failed check of the verification, not a 422
  representatives: t.Array(
    t.Object({
      name: t.String({ minLength: 1, maxLength: 300 }),
      birth_date: t.Optional(t.String({ format: 'date-or-year', description: 'YYYY-MM-DD or YYYY' })),
      nif: t.Optional(t.String({ pattern: '^[0-9]{9}$' })),
      nationality: t.Optional(t.String({ format: 'country', description: 'ISO 3166-1 alpha-2' })),
      role: t.String({ minLength: 1, maxLength: 64, description: 'e.g. manager (gerente), director (administrador), beneficial_owner' }),
    }),
    { maxItems: 20, description: 'The company\'s legal representatives and beneficial owners (may be empty)' },
  ),
  customer_reference: t.Optional(CustomerReference),
});

const CheckResult = t.Union([t.Literal('pass'), t.Literal('review'), t.Literal('fail'), t.Literal('not_available')]);

export const KycResponse = t.Object({
  verification_id: t.String(),
  outcome: t.Union([t.Literal('pass'), t.Literal('review'), t.Literal('fail')], { description: 'fail if any check fails; else review if any needs review or is not available; else pass' }),
  checks: t.Array(t.Object({ check: t.String(), subject: t.Union([t.String(), t.Null()]), result: CheckResult, detail: t.String() })),
  company: NifResponse,
  screenings: t.Array(t.Object({ subject: t.String(), screening_id: t.String(), status: t.String() })),
  completed_at: DateTime,
  synthetic: t.Boolean(),
  customer_reference: t.Optional(t.String()),
});
export type KycResponseBody = typeof KycResponse.static;
export const KycIdParams = t.Object({ id: t.String({ pattern: '^kyc_[0-9a-f-]{36}$' }) });
