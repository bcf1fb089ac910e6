import { t } from 'elysia';
import { Nif, NineDigits, Page, Int, Text, RequestDate, PageLimit, refusesUnknownFieldsDeep } from '../../lib/schemas';
import { PAYABLE_STATUSES } from './states';

const IsoDate = RequestDate();
const Nullable = <S extends Parameters<typeof t.Union>[0][number]>(s: S) => t.Union([s, t.Null()]);

// the requests are closed (refusesUnknownFields; each route lists strays with every other problem):
// a misspelt field of a money request would be dropped and the programme or payable made without it
export const ProgrammeRequest = refusesUnknownFieldsDeep(t.Object({
  anchor_nif: Nif,
  anchor_name: t.Optional(Text(200)),
  limit_cents: Int({ minimum: 100_000, maximum: 1e13, description: 'The programme limit: payables in use (approved, accepted, funded) never exceed it' }),
  payment_terms_days: Int({ minimum: 1, maximum: 360, description: 'The anchor\u2019s payment terms to its suppliers' }),
  frame_ancestors: t.Optional(t.Array(t.String({ pattern: '^https://[A-Za-z0-9.-]+(:[0-9]+)?$', description: 'an https origin' }), { maxItems: 10, description: 'Origins allowed to embed the supplier portal in an iframe (none: it cannot be embedded)' })),
}));
export const ProgrammeView = t.Object({
  programme_id: t.String(),
  anchor_nif: t.String(),
  anchor_name: Nullable(t.String()),
  status: t.Literal('active'),
  limit_cents: Int(),
  used_cents: Int(),
  available_cents: Int(),
  payment_terms_days: Int(),
  base_rate_bps: Int(),
  funding_spread_bps: Int({ description: 'From the anchor\u2019s credit decision (operation_type confirming)' }),
  decision_id: t.String(),
  frame_ancestors: t.Array(t.String()),
  created_at: t.String({ format: 'date-time' }),
});
export const SupplierRequest = refusesUnknownFieldsDeep(t.Object({ supplier_nif: Nif, name: Text(200), iban: t.String({ minLength: 15, maxLength: 42 }), email: t.Optional(t.String({ format: 'email', maxLength: 254 })) }));
export const SupplierView = t.Object({ supplier_nif: t.String(), name: t.String(), iban: t.String(), email: Nullable(t.String()), created_at: t.String({ format: 'date-time' }) });
export const PayablesRequest = refusesUnknownFieldsDeep(t.Object({
  payables: t.Array(t.Object({ supplier_nif: NineDigits, number: Text(60), atcud: t.Optional(Text(100)), issue_date: IsoDate, due_date: IsoDate, amount_cents: Int({ minimum: 1, maximum: 1e13 }) }), { minItems: 1, maxItems: 500 }),
}));
const Offer = t.Object({
  rate_bps: Int({ description: 'Base rate + the programme\u2019s funding spread, annual' }),
  days: Int({ description: 'From computed_on to the due date' }),
  discount_cents: Int({ description: 'amount \u00d7 rate \u00d7 days / 360' }),
  net_cents: Int({ description: 'What the supplier receives if it takes early payment' }),
  computed_on: t.String({ format: 'date' }),
});
export const PayableView = t.Object({
  payable_id: t.String(),
  programme_id: t.String(),
  supplier_nif: t.String(),
  number: t.String(),
  atcud: Nullable(t.String()),
  issue_date: t.String(),
  due_date: t.String(),
  amount_cents: Int(),
  status: t.Union([t.Literal('approved'), t.Literal('accepted'), t.Literal('funded'), t.Literal('settled'), t.Literal('defaulted'), t.Literal('written_off'), t.Literal('cancelled')]),
  offer: Nullable(Offer),
  accepted_offer: Nullable(Offer),
  funding: Nullable(
    t.Object(
      {
        funded_at: t.String({ format: 'date-time' }),
        paid_cents: Int({ description: 'Paid to the supplier: the accepted offer’s net amount' }),
        discount_cents: Int({ description: 'Kept by the bank: the accepted offer’s discount' }),
      },
      { description: 'The early payment made to the supplier, once funded (null before, and for a payable left to maturity)' },
    ),
  ),
  allowed_actions: t.Array(t.String()),
  history: t.Array(t.Object({ status: t.String(), at: t.String({ format: 'date-time' }), by: t.String({ description: 'api, portal or sweep' }), reason: Nullable(t.String()) })),
  created_at: t.String({ format: 'date-time' }),
  updated_at: t.String({ format: 'date-time' }),
});
export const ProgrammeParams = t.Object({ id: t.String({ pattern: '^cfp_[0-9a-f-]{36}$' }) });
export const PayableParams = t.Object({ id: t.String({ pattern: '^cpy_[0-9a-f-]{36}$' }) });
export const PayableActionParams = t.Object({ id: t.String({ pattern: '^cpy_[0-9a-f-]{36}$' }), action: t.Union([t.Literal('accept'), t.Literal('fund'), t.Literal('settle'), t.Literal('default'), t.Literal('write_off'), t.Literal('cancel')]) });
export const PayableActionBody = refusesUnknownFieldsDeep(t.Optional(t.Object({ reason: t.Optional(Text(500)) })));
export const PayableListQuery = t.Object({
  status: t.Optional(t.Union(PAYABLE_STATUSES.map((s) => t.Literal(s)))),
  supplier_nif: t.Optional(Nif),
  limit: PageLimit,
  cursor: t.Optional(t.String({ pattern: '^cpy_[0-9a-f-]{36}$' })),
});
export const ProgrammeList = Page(ProgrammeView);
export const PayableList = Page(PayableView);
export type ProgrammeBody = typeof ProgrammeRequest.static;
export type PayableViewT = typeof PayableView.static;
export type OfferT = typeof Offer.static;
