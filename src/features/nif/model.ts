import { t } from 'elysia';

export const NifParams = t.Object({ nif: t.String({ pattern: '^[0-9]{9}$', description: 'Exactly 9 digits (a wrong check digit is answered, with valid: false)' }) });

export const NifResponse = t.Object(
  {
    nif: t.String(),
    valid: t.Boolean({ description: 'check digit right, prefix assigned to a holder type, and (sandbox) not the fixture the tax authority does not recognise' }),
    check_digit_ok: t.Boolean(),
    entity_type: t.Object({ code: t.String(), label_en: t.String(), label_pt: t.String() }),
    vat_number: t.Union([t.String(), t.Null()], { description: '"PT" + NIF (the EU VAT number, for VIES); null when the NIF is not valid' }),
    company: t.Union(
      [
        t.Object({
          name: t.String(),
          legal_form: t.Union([t.String(), t.Null()]),
          address: t.Union([t.String(), t.Null()]),
          cae: t.Union([t.String(), t.Null()], { description: 'CAE Rev. 4 subclass (5 digits) when known' }),
          nace: t.Union([t.Object({ section: t.String(), division: t.Union([t.String(), t.Null()]) }), t.Null()]),
          status: t.Union([t.Literal('active'), t.Literal('ceased'), t.Literal('insolvent'), t.Null()], { description: 'null when the record does not say (a company known only from the tenant\u2019s books: an invoice says nothing of its registration)' }),
          incorporation_date: t.Union([t.String({ format: 'date' }), t.Null()]),
          source: t.String({ description: 'sandbox_registry, erp:<provider> (the tenant\'s synced books), or credit_bureau' }),
          as_of: t.String({ description: 'date (or date-time) of the record' }),
        }),
        t.Null(),
      ],
      { description: 'The registry record of a company known to the service; null otherwise, and always null for a natural person' },
    ),
    synthetic: t.Boolean(),
  },
  {
    examples: [
      {
        nif: '599000023', valid: true, check_digit_ok: true,
        entity_type: { code: 'legal_person', label_en: 'Legal person (company or organisation)', label_pt: 'Pessoa coletiva' },
        vat_number: 'PT599000023',
        company: { name: 'Sandbox Beta, S.A.', legal_form: 'Sociedade anónima', address: 'Zona Industrial de Aveiro, Lote 7, 3800-055 Aveiro', cae: '25110', nace: { section: 'C', division: '25' }, status: 'active', incorporation_date: '2011-06-15', source: 'sandbox_registry', as_of: '2026-11-01' },
        synthetic: true,
      },
    ],
  },
);
export type NifResponseBody = typeof NifResponse.static;
