import { t } from 'elysia';
import { NifWithOthers, Int, Text, RequestDate, refusesUnknownFieldsDeep } from '../../lib/schemas';

const Party = (what: string) => t.Object({ name: Text(200), nif: NifWithOthers, address: t.Optional(Text(300)) }, { description: what });
/** the assignor or the debtor: with operation_id their NIFs are the operation's (given, they must agree) */
const OperationParty = (what: string) => t.Object({ name: Text(200), nif: t.Optional(NifWithOthers), address: t.Optional(Text(300)) }, { description: `${what}; nif required without operation_id` });
const IsoDate = RequestDate();
const SoleTrader = (who: string) =>
  t.Optional(
    t.Boolean({
      description: `true: the ${who} is an individual entrepreneur (empresário em nome individual) acting in its trade, and its NIF an individual\u2019s (1, 2 or 3), which is refused otherwise; the notice says so beside its name. docs/notice.md`,
    }),
  );

export const NOTICE_MAX_INVOICES = 500;

// closed at every depth (the route refuses a field it does not have: it would be left out of a legal notice)
export const NoticeRequest = refusesUnknownFieldsDeep(t.Object({
  operation_id: t.Optional(t.String({ pattern: '^fop_[0-9a-f-]{36}$', description: 'A factoring operation: the assignor, debtors and invoices come from it' })),
  debtor_nif: t.Optional(NifWithOthers),
  parties: t.Optional(
    t.Object(
      {
        assignor: t.Optional(t.Object({ ...OperationParty('').properties, sole_trader: SoleTrader('assignor') }, { description: 'The seller (cedente): a legal person (NIF starting with 5, 71 or 98), or an individual as a sole trader (sole_trader); nif required without operation_id' })),
        factor: Party('The factor (cessionário): normally you; a legal person (NIF starting with 5, 71 or 98)'),
        debtor: t.Optional(
          t.Object(
            { ...OperationParty('').properties, sole_trader: SoleTrader('debtor') },
            { description: 'The debtor notified: a company, a public body or another business holder; an individual only as a sole trader (sole_trader); nif required without operation_id' },
          ),
        ),
      },
      { description: 'With operation_id only factor is needed (names and addresses given here complete the operation\u2019s); without, all three' },
    ),
  ),
  invoices: t.Optional(
    t.Array(t.Object({ number: Text(60), atcud: t.Optional(Text(100)), issue_date: IsoDate, due_date: IsoDate, amount_cents: Int({ minimum: 1, maximum: 1e13 }) }), {
      minItems: 1,
      maxItems: NOTICE_MAX_INVOICES,
      description: 'Without operation_id: the invoices assigned',
    }),
  ),
  payment: t.Object({
    iban: t.String({ minLength: 15, maxLength: 42, description: 'The account that now discharges the debt (the factor\u2019s); spaces allowed' }),
    bic: t.Optional(t.String({ pattern: '^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$' })),
    account_holder: t.Optional(Text(200, 'Default: the factor')),
  }),
  contract_reference: t.Optional(Text(100)),
  language: t.Optional(t.Union([t.Literal('pt-PT'), t.Literal('en')], { default: 'pt-PT' })),
  place: t.Optional(Text(100, 'Where the notice is issued (e.g. Lisboa)')),
}));

export const NoticeResponse = t.Object({
  notice_id: t.String(),
  operation_id: t.Union([t.String(), t.Null()]),
  debtor_nif: t.String(),
  language: t.Union([t.Literal('pt-PT'), t.Literal('en')]),
  invoices: Int(),
  total_cents: Int(),
  sha256: t.String({ description: 'SHA-256 (hex) of the PDF bytes' }),
  bytes: Int(),
  download_url: t.String(),
  created_at: t.String({ format: 'date-time' }),
});
export const NoticeIdParams = t.Object({ id: t.String({ pattern: '^ntc_[0-9a-f-]{36}$' }) });
export type NoticeBody = typeof NoticeRequest.static;
export type NoticeView = typeof NoticeResponse.static;
