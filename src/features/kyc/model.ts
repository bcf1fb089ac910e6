import { t } from 'elysia';
import { CustomerReference, DateTime, NineDigits } from '../../lib/schemas';
import { NifResponse } from '../nif/model';
import { OWNERSHIP_THRESHOLD_PCT, ROLE_ALIASES_TEXT } from './roles';

export const KycRequest = t.Object({
  nif: NineDigits, // a wrong check digit is a failed check of the verification, not a 422
  representatives: t.Array(
    t.Object({
      name: t.String({ minLength: 1, maxLength: 300 }),
      birth_date: t.Optional(t.String({ format: 'date-or-year', description: 'YYYY-MM-DD or YYYY' })),
      nif: t.Optional(t.String({ pattern: '^[0-9]{9}$' })),
      nationality: t.Optional(t.String({ format: 'country', description: 'ISO 3166-1 alpha-2' })),
      role: t.String({
        minLength: 1,
        maxLength: 64,
        description: `Free text; these roles are recognised whatever the case, accents, spaces or hyphens: ${ROLE_ALIASES_TEXT}. Any other role is kept, screened and counted as neither a legal representative nor a beneficial owner (docs/kyc.md).`,
        examples: ['manager', 'director', 'beneficial_owner', 'senior_managing_official'],
      }),
      ownership_pct: t.Optional(
        t.Number({ minimum: 0, maximum: 100, description: `The share of the company the person holds, directly or indirectly, in % (0–100). Above ${OWNERSHIP_THRESHOLD_PCT} the person is a beneficial owner whatever the role given.` }),
      ),
    }),
    {
      maxItems: 20,
      description:
        'The company\'s legal representatives (manager, director, legal_representative) and its beneficial owners (beneficial_owner: each natural person holding more than 25 % directly or indirectly, or controlling it otherwise; if none qualifies, its senior managing officials as senior_managing_official). 0 to 20; without a legal representative or a beneficial owner the outcome is at best review.',
    },
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
