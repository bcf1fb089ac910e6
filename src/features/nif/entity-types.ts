/**
 * What a NIF's leading digits say about its holder (REFERENCE §1, from the tax authority's
 * allocation as published on pt.wikipedia and the lookup guides). Pure.
 */
export interface EntityType {
  code: string;
  label_en: string;
  label_pt: string;
  /** a natural person: the API never returns personal data for these */
  natural_person: boolean;
}

const T = (code: string, label_en: string, label_pt: string, natural_person = false): EntityType => ({ code, label_en, label_pt, natural_person });

// longest prefix first: two-digit prefixes override their first digit
const BY_PREFIX: [string, EntityType][] = [
  ['45', T('non_resident_individual', 'Non-resident individual (final withholding)', 'Pessoa singular não residente (retenção na fonte a título definitivo)', true)],
  ['70', T('undivided_inheritance', 'Undivided inheritance', 'Herança indivisa')],
  ['74', T('undivided_inheritance', 'Undivided inheritance', 'Herança indivisa')],
  ['75', T('undivided_inheritance', 'Undivided inheritance', 'Herança indivisa')],
  ['71', T('non_resident_legal_person', 'Non-resident legal person (final withholding)', 'Pessoa coletiva não residente (retenção na fonte a título definitivo)')],
  ['72', T('investment_fund', 'Investment fund', 'Fundo de investimento')],
  ['77', T('ex_officio', 'Taxpayer registered ex officio', 'Atribuição oficiosa')],
  ['78', T('non_resident_vat_refund', 'Non-resident (VAT refund)', 'Não residente (reembolso de IVA)')],
  ['79', T('expo98', 'Expo 98 regime', 'Regime excecional Expo 98')],
  ['90', T('condominium_or_irregular', 'Condominium, irregular company or sole trader\'s inheritance', 'Condomínio, sociedade irregular ou herança de empresário em nome individual')],
  ['91', T('condominium_or_irregular', 'Condominium, irregular company or sole trader\'s inheritance', 'Condomínio, sociedade irregular ou herança de empresário em nome individual')],
  ['98', T('non_resident_no_permanent_establishment', 'Non-resident without a permanent establishment', 'Não residente sem estabelecimento estável')],
  ['99', T('civil_partnership', 'Civil partnership without legal personality', 'Sociedade civil sem personalidade jurídica')],
  ['1', T('individual', 'Individual', 'Pessoa singular', true)],
  ['2', T('individual', 'Individual', 'Pessoa singular', true)],
  ['3', T('individual', 'Individual', 'Pessoa singular', true)],
  ['5', T('legal_person', 'Legal person (company or organisation)', 'Pessoa coletiva')],
  ['6', T('public_administration', 'Public administration body', 'Organismo da administração pública')],
  ['8', T('sole_trader', 'Sole trader (former series)', 'Empresário em nome individual (série extinta)')],
];

export const UNKNOWN_ENTITY: EntityType = T('unassigned', 'No holder type is assigned to this prefix', 'Prefixo sem tipo de titular atribuído');

/** 999999990: the tax authority's placeholder for an anonymous final consumer on invoices (REFERENCE §1), not a holder. */
export const FINAL_CONSUMER_NIF = '999999990';
const FINAL_CONSUMER: EntityType = T('final_consumer', 'Placeholder for an anonymous final consumer (consumidor final): no holder', 'Consumidor final (NIF genérico): sem titular');

export function entityTypeOf(nif: string): EntityType {
  if (nif === FINAL_CONSUMER_NIF) return FINAL_CONSUMER;
  for (const [prefix, type] of BY_PREFIX) if (nif.startsWith(prefix)) return type;
  return UNKNOWN_ENTITY;
}
