/**
 * A representative's `role` is free text (the request contract since the first version: an
 * enumeration would refuse the "gerente" or "administrador" integrations send today). The roles the
 * checks need are recognised under their usual names, in English and Portuguese, whatever the case,
 * accents, spaces or hyphens: "Beneficiário Efetivo", "UBO" and "beneficial_owner" are one role.
 */
export const KYC_ROLES = ['beneficial_owner', 'senior_managing_official', 'manager', 'director', 'legal_representative'] as const;
export type KycRole = (typeof KYC_ROLES)[number];

const ALIASES: Record<string, KycRole> = {
  // Lei n.º 83/2017 art. 2.º and 30.º; the RCBE (Lei n.º 89/2017) "beneficiário efetivo"
  ubo: 'beneficial_owner',
  bo: 'beneficial_owner',
  ultimate_beneficial_owner: 'beneficial_owner',
  beneficiario_efetivo: 'beneficial_owner',
  beneficiario_efectivo: 'beneficial_owner',
  // the law's fallback when no natural person qualifies: "quem detém a direção de topo"
  smo: 'senior_managing_official',
  senior_manager: 'senior_managing_official',
  senior_management: 'senior_managing_official',
  direcao_de_topo: 'senior_managing_official',
  direccao_de_topo: 'senior_managing_official',
  dirigente_de_topo: 'senior_managing_official',
  // the management body, who bind the company (CSC art. 252.º and 405.º)
  gerente: 'manager',
  socio_gerente: 'manager',
  socia_gerente: 'manager',
  managing_partner: 'manager',
  administrador: 'director',
  administradora: 'director',
  administrador_unico: 'director',
  administradora_unica: 'director',
  presidente_do_conselho_de_administracao: 'director',
  // ("diretor" is not among them: in Portuguese companies a diretor is an employee, with powers only
  // when a mandate gives them, not a member of the body that binds the company)
  administrator: 'director',
  board_member: 'director',
  managing_director: 'director',
  executive_director: 'director',
  representante_legal: 'legal_representative',
  legal_rep: 'legal_representative',
};

/** "Sócio-Gerente " → "socio_gerente": lower case, no accents, words joined by "_" */
const key = (role: string) =>
  role
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');

/** The recognised role a text names, or null (another role: kept as given, screened, counted as neither). */
export function roleOf(text: string): KycRole | null {
  const k = key(text);
  return (KYC_ROLES as readonly string[]).includes(k) ? (k as KycRole) : Object.hasOwn(ALIASES, k) ? ALIASES[k]! : null; // (own keys only: "constructor" is no role)
}

/** Who may bind the company: its managers or directors, a legal representative, or its senior managing officials (the management body). */
export const LEGAL_REPRESENTATIVE_ROLES: ReadonlySet<KycRole> = new Set(['manager', 'director', 'legal_representative', 'senior_managing_official']);

/** Holding more than this share of the company, directly or indirectly, makes a natural person a beneficial owner (Lei n.º 83/2017). */
export const OWNERSHIP_THRESHOLD_PCT = 25;

/** Every recognised name of each role, for the OpenAPI description. */
export const ROLE_ALIASES_TEXT = KYC_ROLES.map((r) => {
  const names = Object.entries(ALIASES).filter(([, v]) => v === r).map(([k]) => k);
  return names.length ? `${r} (also ${names.join(', ')})` : r;
}).join('; ');
