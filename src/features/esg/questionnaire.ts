/**
 * ESG questionnaire: the 27 published indicators, the NACE Rev. 2 sector list and
 * answer validation for POST /v1/esg.
 *
 * The indicators are derived from the EFRAG VSME data points (Basic module B1–B11 and
 * Comprehensive module C3, C5–C9). Each indicator is answered with ONE value of type
 * string | number | boolean | string[]; where VSME allows an omission the string
 * "not_applicable" is accepted under the rule stated in `applicability`.
 * Scoring lives in ./engine.ts; docs/esg.md documents both.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { refusesUnknownFields } from '../../lib/schemas';

export type Pillar = 'E' | 'S' | 'G';

export interface Indicator {
  key: string;
  pillar: Pillar;
  vsme_ref: string;
  type: 'number' | 'integer' | 'boolean' | 'string' | 'string[]';
  unit: string | null;
  min?: number;
  max?: number;
  options?: string[];
  better: 'higher' | 'lower' | null;
  applicability: string | null;
  sdgs: number[];
  question: { en: string; pt: string };
}

export type AnswerValue = string | number | boolean | string[];

export interface FieldError {
  path: string;
  message: string;
}

/** The literal accepted (where `applicability` is not null) instead of a value. */
export const NOT_APPLICABLE = 'not_applicable';

/** Allowed values of `human_rights_policy` (VSME C6: the five topics plus a grievance mechanism). */
const HUMAN_RIGHTS_OPTIONS = [
  'child_labour',
  'forced_labour',
  'human_trafficking',
  'discrimination',
  'accident_prevention',
  'grievance_mechanism',
];

/** Allowed values of `sustainability_policies` (VSME B2, one per ESRS topical matter). */
const POLICY_OPTIONS = [
  'climate_change',
  'pollution',
  'water_marine_resources',
  'biodiversity_ecosystems',
  'circular_economy',
  'own_workforce',
  'value_chain_workers',
  'affected_communities',
  'consumers_end_users',
  'business_conduct',
];

/** Allowed values of `certifications` (VSME B1 asks for sustainability-related certifications or labels). */
const CERTIFICATION_OPTIONS = [
  'iso_14001',
  'emas',
  'iso_45001',
  'iso_50001',
  'iso_37001',
  'sa8000',
  'np_4469',
  'b_corp',
  'iso_9001',
];

export const INDICATORS: readonly Indicator[] = [
  // ───────────────────────── Environment (11) ─────────────────────────
  {
    key: 'energy_intensity',
    pillar: 'E',
    vsme_ref: 'B3',
    type: 'number',
    unit: 'MWh/M€',
    min: 0,
    max: 100000,
    better: 'lower',
    applicability: null,
    sdgs: [7, 13],
    question: {
      en: 'Total energy consumption in the reporting year (fossil plus renewable, VSME B3) divided by turnover, in MWh per million euros of turnover.',
      pt: 'Consumo total de energia no ano de reporte (fóssil e renovável, VSME B3) a dividir pelo volume de negócios, em MWh por milhão de euros de volume de negócios.',
    },
  },
  {
    key: 'renewable_energy_pct',
    pillar: 'E',
    vsme_ref: 'B3',
    type: 'number',
    unit: '%',
    min: 0,
    max: 100,
    better: 'higher',
    applicability: null,
    sdgs: [7, 13],
    question: {
      en: 'Share of renewable energy in your total energy consumption (%), counting renewable electricity (own production, renewable contracts with guarantees of origin) and renewable fuels.',
      pt: 'Percentagem de energia renovável no consumo total de energia (%), incluindo eletricidade renovável (produção própria, contratos com garantias de origem) e combustíveis renováveis.',
    },
  },
  {
    key: 'ghg_scope1_tco2e',
    pillar: 'E',
    vsme_ref: 'B3',
    type: 'number',
    unit: 'tCO2e',
    min: 0,
    max: 10000000,
    better: null,
    applicability: null,
    sdgs: [13],
    question: {
      en: 'Gross Scope 1 greenhouse gas emissions (fuels burnt in your own boilers, furnaces and vehicles, process emissions, refrigerant leaks), in tonnes of CO2 equivalent.',
      pt: 'Emissões brutas de gases com efeito de estufa de âmbito 1 (combustíveis queimados nas suas caldeiras, fornos e viaturas, emissões de processo, fugas de gases refrigerantes), em toneladas de CO2 equivalente.',
    },
  },
  {
    key: 'ghg_scope2_lb_tco2e',
    pillar: 'E',
    vsme_ref: 'B3',
    type: 'number',
    unit: 'tCO2e',
    min: 0,
    max: 10000000,
    better: null,
    applicability: null,
    sdgs: [13],
    question: {
      en: 'Gross location-based Scope 2 emissions (purchased electricity, heat and steam multiplied by the average grid emission factor), in tonnes of CO2 equivalent.',
      pt: 'Emissões brutas de âmbito 2 baseadas na localização (eletricidade, calor e vapor adquiridos multiplicados pelo fator de emissão médio da rede), em toneladas de CO2 equivalente.',
    },
  },
  {
    key: 'ghg_intensity',
    pillar: 'E',
    vsme_ref: 'B3',
    type: 'number',
    unit: 'tCO2e/M€',
    min: 0,
    max: 100000,
    better: 'lower',
    applicability: null,
    sdgs: [9, 13],
    question: {
      en: 'GHG intensity: gross Scope 1 plus location-based Scope 2 emissions divided by turnover, in tonnes of CO2 equivalent per million euros of turnover.',
      pt: 'Intensidade carbónica: emissões brutas de âmbito 1 e de âmbito 2 (baseadas na localização) a dividir pelo volume de negócios, em toneladas de CO2 equivalente por milhão de euros de volume de negócios.',
    },
  },
  {
    key: 'ghg_reduction_target_pct',
    pillar: 'E',
    vsme_ref: 'C3',
    type: 'number',
    unit: '%',
    min: 0,
    max: 100,
    better: 'higher',
    applicability: null,
    sdgs: [13],
    question: {
      en: 'Adopted Scope 1 and 2 emission reduction target for 2030 or earlier, in % of base-year emissions (answer 0 if you have no target).',
      pt: 'Meta adotada de redução das emissões de âmbito 1 e 2 até 2030 (ou antes), em % das emissões do ano de referência (responda 0 se não tiver meta).',
    },
  },
  {
    key: 'pollutant_emissions_kg',
    pillar: 'E',
    vsme_ref: 'B4',
    type: 'number',
    unit: 'kg',
    min: 0,
    max: 1000000000,
    better: null,
    applicability:
      'Accepted when the undertaking is not required by law (environmental permit, E-PRTR/PRTR) or by an environmental management system to report emissions of pollutants to air, water and soil: VSME B4 applies only in that case.',
    sdgs: [3, 12, 14],
    question: {
      en: 'Total emissions of pollutants to air, water and soil that you already report under your permit, the PRTR or your environmental management system, in kg (sum over pollutants).',
      pt: 'Total das emissões de poluentes para o ar, a água e o solo que já reporta ao abrigo da sua licença, do PRTR ou do seu sistema de gestão ambiental, em kg (soma dos poluentes).',
    },
  },
  {
    key: 'biodiversity_sensitive_sites',
    pillar: 'E',
    vsme_ref: 'B5',
    type: 'integer',
    unit: 'sites',
    min: 0,
    max: 10000,
    better: 'lower',
    applicability: null,
    sdgs: [14, 15],
    question: {
      en: 'Number of sites you own, lease or manage in or near biodiversity-sensitive areas (e.g. Natura 2000 sites, protected areas).',
      pt: 'Número de instalações que detém, arrenda ou gere dentro ou junto de áreas sensíveis em termos de biodiversidade (por exemplo, Rede Natura 2000, áreas protegidas).',
    },
  },
  {
    key: 'water_intensity',
    pillar: 'E',
    vsme_ref: 'B6',
    type: 'number',
    unit: 'm³/M€',
    min: 0,
    max: 10000000,
    better: 'lower',
    applicability: null,
    sdgs: [6],
    question: {
      en: 'Total water withdrawal (mains, ground and surface water) divided by turnover, in cubic metres per million euros of turnover.',
      pt: 'Captação total de água (rede pública, águas subterrâneas e superficiais) a dividir pelo volume de negócios, em metros cúbicos por milhão de euros de volume de negócios.',
    },
  },
  {
    key: 'waste_total_t',
    pillar: 'E',
    vsme_ref: 'B7',
    type: 'number',
    unit: 't',
    min: 0,
    max: 10000000,
    better: null,
    applicability: null,
    sdgs: [12],
    question: {
      en: 'Total waste generated in the reporting year, hazardous and non-hazardous, in tonnes.',
      pt: 'Total de resíduos produzidos no ano de reporte, perigosos e não perigosos, em toneladas.',
    },
  },
  {
    key: 'waste_recycled_pct',
    pillar: 'E',
    vsme_ref: 'B7',
    type: 'number',
    unit: '%',
    min: 0,
    max: 100,
    better: 'higher',
    applicability:
      'Accepted only when waste_total_t is answered 0 in the same questionnaire (no waste generated, so no share can be computed).',
    sdgs: [11, 12],
    question: {
      en: 'Share of your waste diverted to recycling or preparation for reuse (%).',
      pt: 'Percentagem dos resíduos encaminhados para reciclagem ou preparação para reutilização (%).',
    },
  },
  // ─────────────────────────── Social (10) ────────────────────────────
  {
    key: 'employees_permanent_pct',
    pillar: 'S',
    vsme_ref: 'B8',
    type: 'number',
    unit: '%',
    min: 0,
    max: 100,
    better: 'higher',
    applicability: null,
    sdgs: [8],
    question: {
      en: 'Share of employees (headcount) on permanent, open-ended contracts (%).',
      pt: 'Percentagem de trabalhadores (número de pessoas) com contrato sem termo (%).',
    },
  },
  {
    key: 'employee_turnover_pct',
    pillar: 'S',
    vsme_ref: 'B8',
    type: 'number',
    unit: '%',
    min: 0,
    max: 1000,
    better: 'lower',
    applicability:
      'Accepted for undertakings with fewer than 50 employees (headcount): VSME B8 asks for the turnover rate only from 50 employees. Declared by the company.',
    sdgs: [8],
    question: {
      en: 'Employee turnover rate: employees who left during the year divided by the average number of employees (%).',
      pt: 'Taxa de rotatividade: trabalhadores que saíram durante o ano a dividir pelo número médio de trabalhadores (%).',
    },
  },
  {
    key: 'accident_rate',
    pillar: 'S',
    vsme_ref: 'B9',
    type: 'number',
    unit: 'accidents/200,000 h',
    min: 0,
    max: 200,
    better: 'lower',
    applicability: null,
    sdgs: [3, 8],
    question: {
      en: 'Rate of recordable work-related accidents: number of accidents multiplied by 200,000 and divided by the total hours worked by employees.',
      pt: 'Taxa de acidentes de trabalho registáveis: número de acidentes multiplicado por 200 000 e dividido pelo total de horas trabalhadas pelos trabalhadores.',
    },
  },
  {
    key: 'work_fatalities',
    pillar: 'S',
    vsme_ref: 'B9',
    type: 'integer',
    unit: 'fatalities',
    min: 0,
    max: 10000,
    better: 'lower',
    applicability: null,
    sdgs: [3, 8],
    question: {
      en: 'Number of fatalities resulting from work-related injuries or work-related ill health in the reporting year.',
      pt: 'Número de mortes resultantes de acidentes de trabalho ou doenças profissionais no ano de reporte.',
    },
  },
  {
    key: 'min_wage_compliance',
    pillar: 'S',
    vsme_ref: 'B10',
    type: 'boolean',
    unit: null,
    better: 'higher',
    applicability: null,
    sdgs: [1, 8],
    question: {
      en: 'Do all your employees receive pay equal to or above the applicable minimum wage (national minimum wage or a higher minimum set by collective agreement)?',
      pt: 'Todos os seus trabalhadores recebem uma remuneração igual ou superior ao salário mínimo aplicável (retribuição mínima mensal garantida ou mínimo superior fixado por convenção coletiva)?',
    },
  },
  {
    key: 'gender_pay_gap_pct',
    pillar: 'S',
    vsme_ref: 'B10',
    type: 'number',
    unit: '%',
    min: 0,
    max: 100,
    better: 'lower',
    applicability:
      'Accepted for undertakings with fewer than 150 employees (VSME B10 allows the pay gap to be omitted below that threshold) or when only one gender is represented among employees. Declared by the company.',
    sdgs: [5, 8, 10],
    question: {
      en: 'Unadjusted gender pay gap: difference between the average gross hourly pay of men and of women, as % of the higher of the two (enter the size of the gap whichever gender earns more).',
      pt: 'Disparidade salarial de género não ajustada: diferença entre a remuneração horária bruta média de homens e de mulheres, em % da mais elevada das duas (indique a dimensão da disparidade, seja qual for o género mais bem pago).',
    },
  },
  {
    key: 'collective_bargaining_pct',
    pillar: 'S',
    vsme_ref: 'B10',
    type: 'number',
    unit: '%',
    min: 0,
    max: 100,
    better: 'higher',
    applicability: null,
    sdgs: [8, 10],
    question: {
      en: 'Share of employees covered by collective bargaining agreements, including agreements made applicable by extension ordinances (%).',
      pt: 'Percentagem de trabalhadores abrangidos por instrumentos de regulamentação coletiva de trabalho, incluindo os aplicáveis por portaria de extensão (%).',
    },
  },
  {
    key: 'training_hours_avg',
    pillar: 'S',
    vsme_ref: 'B10',
    type: 'number',
    unit: 'h/employee',
    min: 0,
    max: 2000,
    better: 'higher',
    applicability: null,
    sdgs: [4, 8],
    question: {
      en: 'Average number of training hours per employee in the reporting year.',
      pt: 'Número médio de horas de formação por trabalhador no ano de reporte.',
    },
  },
  {
    key: 'human_rights_policy',
    pillar: 'S',
    vsme_ref: 'C6',
    type: 'string[]',
    unit: null,
    options: HUMAN_RIGHTS_OPTIONS,
    better: 'higher',
    applicability: null,
    sdgs: [8, 10, 16],
    question: {
      en: 'Which topics does your code of conduct or human rights policy for your own workforce cover, and do you have a complaints-handling mechanism? (empty list if you have no policy)',
      pt: 'Que temas abrange o seu código de conduta ou política de direitos humanos para os trabalhadores próprios, e dispõe de um mecanismo de tratamento de queixas? (lista vazia se não tiver política)',
    },
  },
  {
    key: 'severe_hr_incidents',
    pillar: 'S',
    vsme_ref: 'C7',
    type: 'integer',
    unit: 'incidents',
    min: 0,
    max: 10000,
    better: 'lower',
    applicability: null,
    sdgs: [8, 16],
    question: {
      en: 'Number of confirmed severe human rights incidents (child labour, forced labour, human trafficking, discrimination) involving your own workforce in the reporting year.',
      pt: 'Número de incidentes graves de direitos humanos confirmados (trabalho infantil, trabalho forçado, tráfico de seres humanos, discriminação) envolvendo os trabalhadores próprios no ano de reporte.',
    },
  },
  // ───────────────────────── Governance (6) ───────────────────────────
  {
    key: 'sustainability_policies',
    pillar: 'G',
    vsme_ref: 'B2',
    type: 'string[]',
    unit: null,
    options: POLICY_OPTIONS,
    better: 'higher',
    applicability: null,
    sdgs: [12, 16],
    question: {
      en: 'For which sustainability matters do you have written policies or practices in place? (empty list if none)',
      pt: 'Para que temas de sustentabilidade tem políticas ou práticas escritas em vigor? (lista vazia se nenhum)',
    },
  },
  {
    key: 'certifications',
    pillar: 'G',
    vsme_ref: 'B1',
    type: 'string[]',
    unit: null,
    options: CERTIFICATION_OPTIONS,
    better: 'higher',
    applicability: null,
    sdgs: [9, 12],
    question: {
      en: 'Which valid sustainability-related certifications or labels does the company hold? (empty list if none)',
      pt: 'Que certificações ou rótulos de sustentabilidade válidos detém a empresa? (lista vazia se nenhum)',
    },
  },
  {
    key: 'corruption_convictions',
    pillar: 'G',
    vsme_ref: 'B11',
    type: 'integer',
    unit: 'convictions',
    min: 0,
    max: 10000,
    better: 'lower',
    applicability: null,
    sdgs: [16],
    question: {
      en: 'Number of convictions or fines for violation of anti-corruption and anti-bribery laws in the reporting year.',
      pt: 'Número de condenações ou coimas por violação da legislação de combate à corrupção e ao suborno no ano de reporte.',
    },
  },
  {
    key: 'governance_gender_balance_pct',
    pillar: 'G',
    vsme_ref: 'C9',
    type: 'number',
    unit: '%',
    min: 0,
    max: 50,
    better: 'higher',
    applicability:
      "Accepted when the governance body has a single member (e.g. a sole manager, 'gerente único'): no gender ratio can be computed. Declared by the company.",
    sdgs: [5],
    question: {
      en: 'Share of the under-represented gender among the members of the governance body (board of directors or managers), in % (0 to 50).',
      pt: 'Percentagem do género sub-representado entre os membros do órgão de administração (conselho de administração ou gerência), em % (0 a 50).',
    },
  },
  {
    key: 'management_gender_balance_pct',
    pillar: 'G',
    vsme_ref: 'C5',
    type: 'number',
    unit: '%',
    min: 0,
    max: 50,
    better: 'higher',
    applicability:
      'Accepted when management consists of a single person: no gender ratio can be computed. Declared by the company.',
    sdgs: [5, 10],
    question: {
      en: 'Share of the under-represented gender among employees at management level, in % (0 to 50).',
      pt: 'Percentagem do género sub-representado entre os trabalhadores com funções de chefia, em % (0 a 50).',
    },
  },
  {
    key: 'controversial_revenue_pct',
    pillar: 'G',
    vsme_ref: 'C8',
    type: 'number',
    unit: '%',
    min: 0,
    max: 100,
    better: 'lower',
    applicability: null,
    sdgs: [3, 7, 13, 16],
    question: {
      en: 'Share of turnover from controversial weapons, tobacco cultivation or production, fossil fuels (coal, oil, gas) or the manufacture of pesticides and other agrochemicals (%).',
      pt: 'Percentagem do volume de negócios proveniente de armas controversas, cultivo ou produção de tabaco, combustíveis fósseis (carvão, petróleo, gás) ou fabrico de pesticidas e outros produtos agroquímicos (%).',
    },
  },
];

/** NACE Rev. 2 sections, named in English and as CAE Rev. 3 names them in Portuguese */
export const SECTORS: readonly { code: string; name: string; name_pt: string }[] = [
  { code: 'A', name: 'Agriculture, forestry and fishing', name_pt: 'Agricultura, produção animal, caça, floresta e pesca' },
  { code: 'B', name: 'Mining and quarrying', name_pt: 'Indústrias extrativas' },
  { code: 'C', name: 'Manufacturing', name_pt: 'Indústrias transformadoras' },
  { code: 'D', name: 'Electricity, gas, steam and air conditioning supply', name_pt: 'Eletricidade, gás, vapor, água quente e fria e ar frio' },
  { code: 'E', name: 'Water supply; sewerage, waste management and remediation activities', name_pt: 'Captação, tratamento e distribuição de água; saneamento, gestão de resíduos e despoluição' },
  { code: 'F', name: 'Construction', name_pt: 'Construção' },
  { code: 'G', name: 'Wholesale and retail trade; repair of motor vehicles and motorcycles', name_pt: 'Comércio por grosso e a retalho; reparação de veículos automóveis e motociclos' },
  { code: 'H', name: 'Transportation and storage', name_pt: 'Transportes e armazenagem' },
  { code: 'I', name: 'Accommodation and food service activities', name_pt: 'Alojamento, restauração e similares' },
  { code: 'J', name: 'Information and communication', name_pt: 'Atividades de informação e de comunicação' },
  { code: 'K', name: 'Financial and insurance activities', name_pt: 'Atividades financeiras e de seguros' },
  { code: 'L', name: 'Real estate activities', name_pt: 'Atividades imobiliárias' },
  { code: 'M', name: 'Professional, scientific and technical activities', name_pt: 'Atividades de consultoria, científicas, técnicas e similares' },
  { code: 'N', name: 'Administrative and support service activities', name_pt: 'Atividades administrativas e dos serviços de apoio' },
  { code: 'O', name: 'Public administration and defence; compulsory social security', name_pt: 'Administração Pública e Defesa; Segurança Social obrigatória' },
  { code: 'P', name: 'Education', name_pt: 'Educação' },
  { code: 'Q', name: 'Human health and social work activities', name_pt: 'Atividades de saúde humana e apoio social' },
  { code: 'R', name: 'Arts, entertainment and recreation', name_pt: 'Atividades artísticas, de espetáculos, desportivas e recreativas' },
  { code: 'S', name: 'Other service activities', name_pt: 'Outras atividades de serviços' },
  {
    code: 'T',
    name: 'Activities of households as employers; undifferentiated goods- and services-producing activities of households for own use',
    name_pt: 'Atividades das famílias empregadoras de pessoal doméstico e atividades de produção das famílias para uso próprio',
  },
  { code: 'U', name: 'Activities of extraterritorial organisations and bodies', name_pt: 'Atividades dos organismos internacionais e outras instituições extraterritoriais' },
];

/** NACE Rev. 2 division ranges (inclusive) per section. */
const DIVISION_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  A: [1, 3],
  B: [5, 9],
  C: [10, 33],
  D: [35, 35],
  E: [36, 39],
  F: [41, 43],
  G: [45, 47],
  H: [49, 53],
  I: [55, 56],
  J: [58, 63],
  K: [64, 66],
  L: [68, 68],
  M: [69, 75],
  N: [77, 82],
  O: [84, 84],
  P: [85, 85],
  Q: [86, 88],
  R: [90, 93],
  S: [94, 96],
  T: [97, 98],
  U: [99, 99],
};

const SECTOR_RE = /^([A-U])(\d{2})?$/;

/** isValidSector as a pattern, for the OpenAPI document: each section with its own divisions */
export const SECTOR_PATTERN = `^(?:${Object.entries(DIVISION_RANGES)
  .map(([section, [from, to]]) => `${section}(?:${Array.from({ length: to - from + 1 }, (_, i) => String(from + i).padStart(2, '0')).join('|')})?`)
  .join('|')})$`;

/** True for a NACE Rev. 2 section letter (A–U) or a section plus one of its own 2-digit divisions (e.g. C25). Case-sensitive. */
export function isValidSector(code: string): boolean {
  if (typeof code !== 'string') return false;
  const m = SECTOR_RE.exec(code);
  if (!m) return false;
  if (m[2] === undefined) return true;
  const range = DIVISION_RANGES[m[1]!]!;
  const division = Number(m[2]);
  return division >= range[0] && division <= range[1];
}

const BY_KEY: ReadonlyMap<string, Indicator> = new Map(INDICATORS.map((i) => [i.key, i]));

/**
 * Whether "not_applicable" is accepted for `key` given the other answers.
 * Rules (mirrored in each indicator's `applicability` text):
 *  - applicability null → never;
 *  - waste_recycled_pct → only when answers.waste_total_t === 0;
 *  - every other indicator with an applicability text → accepted (declared by the company).
 */
export function notApplicableAccepted(key: string, answers: Record<string, unknown>): boolean {
  const ind = BY_KEY.get(key);
  if (!ind || ind.applicability === null) return false;
  if (key === 'waste_recycled_pct') return answers.waste_total_t === 0;
  return true;
}

function describeExpected(ind: Indicator): string {
  switch (ind.type) {
    case 'number':
      return `a number from ${ind.min} to ${ind.max}`;
    case 'integer':
      return `an integer from ${ind.min} to ${ind.max}`;
    case 'boolean':
      return 'true or false';
    case 'string':
      return ind.options ? `one of: ${ind.options.join(', ')}` : 'a string';
    case 'string[]':
      return `an array of distinct values from: ${ind.options!.join(', ')}`;
  }
}

function checkValue(ind: Indicator, value: unknown): string | null {
  switch (ind.type) {
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        return `must be ${describeExpected(ind)}${ind.applicability !== null ? ' or "not_applicable"' : ''}`;
      }
      if (ind.type === 'integer' && !Number.isInteger(value)) return 'must be an integer';
      if (ind.min !== undefined && value < ind.min) return `must be at least ${ind.min}`;
      if (ind.max !== undefined && value > ind.max) return `must be at most ${ind.max}`;
      return null;
    }
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be true or false';
    case 'string':
      if (typeof value !== 'string') return 'must be a string';
      if (ind.options && !ind.options.includes(value)) return `must be ${describeExpected(ind)}`;
      return null;
    case 'string[]': {
      if (!Array.isArray(value)) return `must be ${describeExpected(ind)}`;
      const seen = new Set<string>();
      for (const item of value) {
        if (typeof item !== 'string') return 'every item must be a string';
        if (ind.options && !ind.options.includes(item)) {
          return `unknown value "${item}"; allowed: ${ind.options.join(', ')}`;
        }
        if (seen.has(item)) return `duplicate value "${item}"`;
        seen.add(item);
      }
      return null;
    }
  }
}

/**
 * Validates the `answers` map. Returns one error per failing key (path `answers.<key>`), in the
 * order of the keys in the input; an empty array means valid. Unanswered indicators are not errors.
 */
export function validateAnswers(answers: Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  if (answers === null || typeof answers !== 'object' || Array.isArray(answers)) {
    return [{ path: 'answers', message: 'must be an object mapping indicator keys to values' }];
  }
  for (const key of Object.keys(answers)) {
    const path = `answers.${key}`;
    const ind = BY_KEY.get(key);
    if (!ind) {
      errors.push({ path, message: 'unknown indicator key; see the published questionnaire' });
      continue;
    }
    const value = answers[key];
    if (value === NOT_APPLICABLE && ind.type !== 'string') {
      if (ind.applicability === null) {
        errors.push({ path, message: '"not_applicable" is not accepted for this indicator' });
      } else if (!notApplicableAccepted(key, answers)) {
        errors.push({ path, message: `"not_applicable" is not accepted here: ${ind.applicability}` });
      }
      continue;
    }
    const msg = checkValue(ind, value);
    if (msg !== null) errors.push({ path, message: msg });
  }
  return errors;
}

function valueSchema(ind: Indicator, opts: { description?: string }): TSchema {
  switch (ind.type) {
    case 'number':
      return Type.Number({ ...opts, minimum: ind.min, maximum: ind.max });
    case 'integer':
      return Type.Integer({ ...opts, minimum: ind.min, maximum: ind.max });
    case 'boolean':
      return Type.Boolean(opts);
    case 'string':
      return ind.options ? Type.Union(ind.options.map((o) => Type.Literal(o)), opts) : Type.String(opts);
    case 'string[]':
      return Type.Array(Type.Union(ind.options!.map((o) => Type.Literal(o))), {
        ...opts,
        uniqueItems: true,
        maxItems: ind.options!.length,
      });
  }
}

/**
 * TypeBox object for the OpenAPI document: one optional property per indicator (its type, min/max,
 * options as enum, plus Literal('not_applicable') where applicable; description = question.en),
 * additionalProperties false. Request validation itself uses validateAnswers().
 */
export function answersSchema(): TSchema {
  const props: Record<string, TSchema> = {};
  for (const ind of INDICATORS) {
    const description = ind.question.en;
    props[ind.key] = Type.Optional(
      ind.applicability !== null
        ? Type.Union([valueSchema(ind, {}), Type.Literal(NOT_APPLICABLE)], { description })
        : valueSchema(ind, { description }),
    );
  }
  return refusesUnknownFields(Type.Object(props, {
    additionalProperties: false,
    description: 'ESG questionnaire answers keyed by indicator (27 indicators derived from EFRAG VSME).',
    // the one conditional rule (notApplicableAccepted), stated for the document; validateAnswers enforces it
    if: { required: ['waste_recycled_pct'], properties: { waste_recycled_pct: { const: NOT_APPLICABLE } } },
    then: { required: ['waste_total_t'], properties: { waste_total_t: { const: 0 } } },
  }));
}
