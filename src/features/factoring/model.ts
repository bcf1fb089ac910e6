import { t } from 'elysia';
import { CustomerReference, Nif, NifWithOthers, NineDigits, Page, Int, Text, RequestDate, PageLimit, refusesUnknownFieldsDeep } from '../../lib/schemas';

const IsoDate = RequestDate({ description: 'YYYY-MM-DD' });
const Cents = (description: string) => Int({ minimum: 0, maximum: 1e13, description });
const Nullable = <S extends Parameters<typeof t.Union>[0][number]>(s: S) => t.Union([s, t.Null()]);

export const ModalitySchema = t.Union([t.Literal('recourse'), t.Literal('non_recourse')], {
  description: 'recourse (com recurso): the seller answers for an unpaid invoice; non_recourse (sem recurso): the factor bears the debtor\u2019s insolvency risk',
});
export const StatusSchema = t.Union([t.Literal('submitted'), t.Literal('approved'), t.Literal('rejected'), t.Literal('funded'), t.Literal('settled'), t.Literal('defaulted'), t.Literal('written_off'), t.Literal('cancelled')]);
export const ActionSchema = t.Union([t.Literal('approve'), t.Literal('reject'), t.Literal('fund'), t.Literal('settle'), t.Literal('default'), t.Literal('write_off'), t.Literal('cancel')]);

export const OperationInvoiceInput = t.Object(
  {
    number: Text(60, 'The invoice number as printed (e.g. FT 2026/118)'),
    erp: t.Optional(
      t.Object(
        { provider: Text(32, 'An ERP provider or saft (an imported SAF-T file)'), customer_reference: Text(128) },
        { description: 'Take the invoice from the tenant\u2019s synced ERP data (or an imported SAF-T file) by number: the fields below are then read from it' },
      ),
    ),
    debtor_nif: t.Optional(NineDigits), // its check digit is judged with the invoice's other problems (service)
    debtor_name: t.Optional(Text(200)),
    debtor_address: t.Optional(Text(300)),
    atcud: t.Optional(Text(100)),
    issue_date: t.Optional(IsoDate),
    due_date: t.Optional(IsoDate),
    amount_cents: t.Optional(Int({ minimum: 1, maximum: 1e13, description: 'The amount assigned, in euro cents' })),
  },
  { description: 'An invoice given in full (debtor_nif, issue_date, due_date, amount_cents), or by reference to ERP data (erp + number)' },
);

// closed at every depth (the route lists strays with every other problem): a misspelt field of a
// money request would be dropped and the operation priced or approved without it
export const CreateOperationRequest = refusesUnknownFieldsDeep(t.Object({
  seller_nif: NifWithOthers,
  seller_name: t.Optional(Text(200)),
  seller_address: t.Optional(Text(300)),
  modality: ModalitySchema,
  advance_rate_bps: t.Optional(Int({ minimum: 1000, maximum: 10000, description: 'Share of the face value advanced at funding, in basis points (default 9000 with recourse, 8000 without)' })),
  contract_reference: t.Optional(Text(100, 'The factoring contract (DL 171/95 art. 7: in writing)')),
  invoices: t.Array(OperationInvoiceInput, { minItems: 1, maxItems: 200 }),
  auto_approve: t.Optional(t.Boolean({ default: true, description: 'Approve at once when every debtor\u2019s decision approves within its limit (else the operation waits in submitted for the back office)' })),
  customer_reference: t.Optional(CustomerReference),
}));

const DebtorView = t.Object({
  nif: t.String(),
  name: Nullable(t.String()),
  address: Nullable(t.String()),
  invoices_count: Int(),
  face_cents: Int(),
  share_of_operation_bps: Int({ description: 'This debtor\u2019s share of the operation\u2019s face value' }),
  other_exposure_cents: Int({ description: 'What the tenant has committed to the debtor elsewhere: its invoices in other live or defaulted operations, and the limits of its active confirming programmes (as anchor)' }),
  decision: t.Object({
    decision_id: t.String(),
    approved: t.Boolean(),
    tier: t.String(),
    limit_cents: Int(),
    spread_bps: Int(),
    algorithm_version: t.String(),
  }),
  within_limit: t.Boolean({ description: 'face_cents + other_exposure_cents \u2264 the decision\u2019s limit (the concentration limit)' }),
});

const InvoiceView = t.Object({
  number: t.String(),
  atcud: Nullable(t.String()),
  debtor_nif: t.String(),
  issue_date: t.String(),
  due_date: t.String(),
  amount_cents: Int(),
  source: t.String({ description: 'request, or erp:<provider>' }),
  days_to_due: Int(),
  advance_cents: Int(),
  discount_fee_cents: Int(),
});

export const PricingView = t.Object({
  priced_at: t.String({ format: 'date', description: 'The date the days to due date run from (creation; funding reprices from its own date)' }),
  day_count: t.Literal('actual/360'),
  face_cents: Int(),
  advance_rate_bps: Int(),
  advance_cents: Int(),
  base_rate: t.Object({ name: t.String(), bps: Int(), as_of: t.String() }),
  discount_fee_cents: Int({ description: 'Interest on each invoice\u2019s advance at base rate + its debtor\u2019s spread, for its days to due date' }),
  service_fee_bps: Int(),
  service_fee_cents: Int({ description: 'Commission on the face value (collection and, without recourse, the credit-risk cover)' }),
  net_to_seller_cents: Int({ description: 'Paid to the seller at funding: advance \u2212 discount fee \u2212 service fee' }),
  reserve_cents: Int({ description: 'Face \u2212 advance: held until the debtors pay' }),
});

export const OperationResponse = t.Object({
  operation_id: t.String({ examples: ['fop_01936c1e-8a2f-7b3c-9d4e-5f60718293a4'] }),
  status: StatusSchema,
  modality: ModalitySchema,
  currency: t.Literal('EUR'),
  seller: t.Object({ nif: t.String(), name: Nullable(t.String()), address: Nullable(t.String()) }),
  contract_reference: Nullable(t.String()),
  customer_reference: Nullable(t.String()),
  debtors: t.Array(DebtorView),
  invoices: t.Array(InvoiceView),
  pricing: PricingView,
  approval: t.Object({ automatic: t.Boolean(), review_reasons: t.Array(t.String()) }),
  funding: Nullable(t.Object({ funded_at: t.String({ format: 'date-time' }), pricing: PricingView })),
  settlement: Nullable(
    t.Object({
      settled_at: t.String({ format: 'date-time' }),
      collected_cents: Int(),
      reserve_released_cents: Int({ description: 'Paid to the seller at settlement: collected \u2212 advance \u2212 fees, not below 0' }),
      shortfall_cents: Int({ description: 'What the debtors did not pay of the face value' }),
    }),
  ),
  default: Nullable(t.Object({ flagged_at: t.String({ format: 'date-time' }), days_past_due: Int(), outstanding_cents: Int(), automatic: t.Boolean() })),
  reason: Nullable(t.String({ description: 'The reason given with the last reject, cancel or default' })),
  allowed_actions: t.Array(ActionSchema),
  history: t.Array(t.Object({ status: StatusSchema, at: t.String({ format: 'date-time' }), reason: Nullable(t.String()) })),
  created_at: t.String({ format: 'date-time' }),
  updated_at: t.String({ format: 'date-time' }),
});

export const OperationIdParams = t.Object({ id: t.String({ pattern: '^fop_[0-9a-f-]{36}$' }) });
export const TransitionParams = t.Object({ id: t.String({ pattern: '^fop_[0-9a-f-]{36}$' }), action: ActionSchema });
export const TransitionBody = refusesUnknownFieldsDeep(t.Optional(
  t.Object({
    reason: t.Optional(Text(500, 'Why (kept in the operation and its audit trail); required to reject, cancel or default')),
    collected_cents: t.Optional(Int({ minimum: 0, maximum: 1e13, description: 'settle: what the debtors paid (default: the face value)' })),
  }),
));
export const OperationList = Page(OperationResponse);
export const OperationListQuery = t.Object({
  status: t.Optional(StatusSchema),
  seller_nif: t.Optional(Nif),
  debtor_nif: t.Optional(Nif),
  limit: PageLimit,
  cursor: t.Optional(t.String({ pattern: '^fop_[0-9a-f-]{36}$', description: 'next_cursor of the previous page' })),
});

export type CreateOperationBody = typeof CreateOperationRequest.static;
export type OperationView = typeof OperationResponse.static;
export type Pricing = typeof PricingView.static;
