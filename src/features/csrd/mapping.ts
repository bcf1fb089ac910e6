/**
 * Pure mapping from a stored ESG assessment (its sector and the answers to the 27 indicators of
 * GET /v1/esg/questionnaire) to the datapoints of a VSME sustainability report: the Basic module's
 * disclosures B1–B11, and the Comprehensive-module datapoints the questionnaire also collects
 * (C3, C5–C9). No I/O, no clock: the same input gives the same output. docs/csrd.md §3 is the
 * table this file implements; the SDG links are §4.
 */
import { INDICATORS, NOT_APPLICABLE, type AnswerValue, type Pillar } from '../esg/questionnaire';

export type ReportLanguage = 'pt-PT' | 'en';
type Text = { en: string; pt: string };

export type DatapointStatus = 'reported' | 'not_reported' | 'not_applicable';
export type DatapointValue = number | boolean | string | string[] | null;

export interface Datapoint {
  id: string;
  label: string;
  value: DatapointValue;
  /** the value as printed in the PDF (localised number format, list labels, yes/no) */
  display: string;
  unit: string | null;
  vsme_reference: string;
  status: DatapointStatus;
  /** where the value comes from */
  source: 'assessment' | 'company' | 'derived' | 'report';
  /** the questionnaire indicator behind it, if any */
  indicator: string | null;
}

export interface Disclosure {
  code: string;
  title: string;
  datapoints: Datapoint[];
}

/** Optional cover and B1 details given with the request (nothing of it is checked against a registry). */
export interface CompanyDetails {
  name?: string;
  address?: string;
  legal_form?: string;
  country?: string;
  turnover_eur?: number;
  balance_sheet_eur?: number;
  employees?: number;
}

export interface MappingInput {
  sector: string;
  answers: Record<string, AnswerValue>;
  company: CompanyDetails;
  language: ReportLanguage;
}

const pt = (lang: ReportLanguage) => lang === 'pt-PT';
export const tr = (text: Text, lang: ReportLanguage) => (pt(lang) ? text.pt : text.en);

// ───────────────────────────── Formatting ─────────────────────────────

const NUMBER_FORMATS = {
  'pt-PT': new Intl.NumberFormat('pt-PT', { maximumFractionDigits: 6 }),
  en: new Intl.NumberFormat('en', { maximumFractionDigits: 6 }),
};
// below a millionth, six decimals print 0 for a value that is not: three significant digits instead
const SMALL_FORMATS = {
  'pt-PT': new Intl.NumberFormat('pt-PT', { maximumSignificantDigits: 3 }),
  en: new Intl.NumberFormat('en', { maximumSignificantDigits: 3 }),
};

/**
 * A number as the report prints it: pt-PT "12 345,6" (grouping from five digits, decimal comma),
 * en "12,345.6". Grouping spaces are made plain spaces, so the PDF text reads the same everywhere.
 */
export function formatNumber(n: number, lang: ReportLanguage): string {
  const format = n !== 0 && Math.abs(n) < 5e-7 ? SMALL_FORMATS : NUMBER_FORMATS;
  return format[lang].format(n).replace(/[\u00a0\u202f]/g, ' ');
}

const OPTION_LABELS: Record<string, Text> = {
  // human_rights_policy (VSME C6)
  child_labour: { en: 'child labour', pt: 'trabalho infantil' },
  forced_labour: { en: 'forced labour', pt: 'trabalho forçado' },
  human_trafficking: { en: 'human trafficking', pt: 'tráfico de seres humanos' },
  discrimination: { en: 'discrimination', pt: 'discriminação' },
  accident_prevention: { en: 'accident prevention', pt: 'prevenção de acidentes' },
  grievance_mechanism: { en: 'grievance mechanism', pt: 'mecanismo de reclamação' },
  // sustainability_policies (VSME B2, the ESRS topical matters)
  climate_change: { en: 'climate change', pt: 'alterações climáticas' },
  pollution: { en: 'pollution', pt: 'poluição' },
  water_marine_resources: { en: 'water and marine resources', pt: 'recursos hídricos e marinhos' },
  biodiversity_ecosystems: { en: 'biodiversity and ecosystems', pt: 'biodiversidade e ecossistemas' },
  circular_economy: { en: 'resource use and circular economy', pt: 'utilização de recursos e economia circular' },
  own_workforce: { en: 'own workforce', pt: 'força de trabalho própria' },
  value_chain_workers: { en: 'workers in the value chain', pt: 'trabalhadores da cadeia de valor' },
  affected_communities: { en: 'affected communities', pt: 'comunidades afetadas' },
  consumers_end_users: { en: 'consumers and end-users', pt: 'consumidores e utilizadores finais' },
  business_conduct: { en: 'business conduct', pt: 'conduta empresarial' },
  // certifications (VSME B1)
  iso_14001: { en: 'ISO 14001', pt: 'ISO 14001' },
  emas: { en: 'EMAS', pt: 'EMAS' },
  iso_45001: { en: 'ISO 45001', pt: 'ISO 45001' },
  iso_50001: { en: 'ISO 50001', pt: 'ISO 50001' },
  iso_37001: { en: 'ISO 37001', pt: 'ISO 37001' },
  sa8000: { en: 'SA8000', pt: 'SA8000' },
  np_4469: { en: 'NP 4469', pt: 'NP 4469' },
  b_corp: { en: 'B Corp', pt: 'B Corp' },
  iso_9001: { en: 'ISO 9001', pt: 'ISO 9001' },
};

export const optionLabel = (option: string, lang: ReportLanguage) => (OPTION_LABELS[option] ? tr(OPTION_LABELS[option]!, lang) : option);

const STATUS_TEXT: Record<DatapointStatus, Text> = {
  reported: { en: 'Reported', pt: 'Reportado' },
  not_reported: { en: 'Not reported', pt: 'Não reportado' },
  not_applicable: { en: 'Not applicable', pt: 'Não aplicável' },
};
export const statusText = (s: DatapointStatus, lang: ReportLanguage) => tr(STATUS_TEXT[s], lang);

/** The printed form of a value: numbers localised, booleans yes/no, lists joined, "none" for an empty list. */
export function displayValue(value: DatapointValue, status: DatapointStatus, lang: ReportLanguage): string {
  if (status !== 'reported' || value === null) return statusText(status, lang);
  if (typeof value === 'number') return formatNumber(value, lang);
  if (typeof value === 'boolean') return value ? (pt(lang) ? 'Sim' : 'Yes') : pt(lang) ? 'Não' : 'No';
  // ("nenhum item": the lists' nouns are of either gender, certificações and materiais alike)
  if (Array.isArray(value)) return value.length ? value.map((v) => optionLabel(v, lang)).join(', ') : pt(lang) ? 'nenhum item' : 'none';
  return value;
}

// ───────────────────────────── Units ─────────────────────────────

const UNITS: Record<string, Text> = {
  'MWh/M€': { en: 'MWh/€ million', pt: 'MWh/milhão €' },
  'm³/M€': { en: 'm³/€ million', pt: 'm³/milhão €' },
  'tCO2e/M€': { en: 'tCO2e/€ million', pt: 'tCO2e/milhão €' },
  sites: { en: 'sites', pt: 'locais' },
  fatalities: { en: 'fatalities', pt: 'óbitos' },
  incidents: { en: 'incidents', pt: 'incidentes' },
  convictions: { en: 'convictions', pt: 'condenações' },
  'h/employee': { en: 'h/employee', pt: 'h/trabalhador' },
  'accidents/200,000 h': { en: 'accidents per 200,000 h worked', pt: 'acidentes por 200 000 h trabalhadas' },
  employees: { en: 'employees (headcount)', pt: 'trabalhadores (número)' },
  accidents: { en: 'accidents', pt: 'acidentes' },
};
const unitText = (unit: string | null, lang: ReportLanguage) => (unit === null ? null : UNITS[unit] ? tr(UNITS[unit]!, lang) : unit);

// ───────────────────────────── The datapoint table ─────────────────────────────

type Source =
  | { indicator: string }
  | { company: keyof CompanyDetails }
  | { sector: true }
  | { fixed: Text }
  /** value = the indicator's intensity (per € million) × turnover / 10⁶ */
  | { derivedFrom: string }
  /** collected by neither the questionnaire nor the request: always "not reported" */
  | { missing: true };

interface DatapointDef {
  id: string;
  label: Text;
  unit: string | null;
  ref: string;
  from: Source;
}

interface DisclosureDef {
  code: string;
  title: Text;
  datapoints: DatapointDef[];
}

/**
 * VSME Basic module (EFRAG, December 2024; Commission Recommendation (EU) 2025/1710): disclosures
 * B1–B11 with the paragraph of each datapoint. Every questionnaire indicator whose VSME reference
 * is B1–B11 appears exactly once here.
 */
export const BASIC_MODULE: readonly DisclosureDef[] = [
  {
    code: 'B1',
    title: { en: 'Basis for preparation', pt: 'Bases para a preparação' },
    datapoints: [
      { id: 'b1_reporting_option', label: { en: 'Reporting option', pt: 'Opção de reporte' }, unit: null, ref: 'B1 §24', from: { fixed: { en: 'Option A: Basic module (the Comprehensive-module datapoints below are voluntary)', pt: 'Opção A: Módulo Básico (os pontos de dados do Módulo Abrangente abaixo são voluntários)' } } },
      { id: 'b1_legal_form', label: { en: 'Legal form', pt: 'Forma jurídica' }, unit: null, ref: 'B1 §24', from: { company: 'legal_form' } },
      { id: 'b1_nace_code', label: { en: 'NACE sector classification code', pt: 'Código de classificação setorial NACE' }, unit: null, ref: 'B1 §24', from: { sector: true } },
      { id: 'b1_balance_sheet', label: { en: 'Balance sheet total', pt: 'Total do balanço' }, unit: 'EUR', ref: 'B1 §24', from: { company: 'balance_sheet_eur' } },
      { id: 'b1_turnover', label: { en: 'Turnover', pt: 'Volume de negócios' }, unit: 'EUR', ref: 'B1 §24', from: { company: 'turnover_eur' } },
      { id: 'b1_employees', label: { en: 'Number of employees', pt: 'Número de trabalhadores' }, unit: 'employees', ref: 'B1 §24', from: { company: 'employees' } },
      { id: 'b1_country', label: { en: 'Country of primary operations', pt: 'País das operações principais' }, unit: null, ref: 'B1 §24', from: { company: 'country' } },
      { id: 'b1_basis', label: { en: 'Individual or consolidated basis', pt: 'Base individual ou consolidada' }, unit: null, ref: 'B1 §24', from: { missing: true } },
      { id: 'b1_site_geolocation', label: { en: 'Geolocation of the sites owned, leased or managed', pt: 'Geolocalização dos locais detidos, arrendados ou geridos' }, unit: null, ref: 'B1 §24', from: { missing: true } },
      { id: 'b1_certifications', label: { en: 'Sustainability-related certifications or labels', pt: 'Certificações ou rótulos de sustentabilidade' }, unit: null, ref: 'B1 §25', from: { indicator: 'certifications' } },
    ],
  },
  {
    code: 'B2',
    title: { en: 'Practices, policies and future initiatives for transitioning towards a more sustainable economy', pt: 'Práticas, políticas e iniciativas futuras para a transição para uma economia mais sustentável' },
    datapoints: [
      {
        id: 'b2_policy_topics',
        label: { en: 'Sustainability matters with practices, policies or future initiatives', pt: 'Matérias de sustentabilidade com práticas, políticas ou iniciativas futuras' },
        unit: null,
        ref: 'B2 §26',
        from: { indicator: 'sustainability_policies' },
      },
    ],
  },
  {
    code: 'B3',
    title: { en: 'Energy and greenhouse gas emissions', pt: 'Energia e emissões de gases com efeito de estufa' },
    datapoints: [
      { id: 'b3_energy_total', label: { en: 'Total energy consumption', pt: 'Consumo total de energia' }, unit: 'MWh', ref: 'B3 §29', from: { derivedFrom: 'energy_intensity' } },
      { id: 'b3_energy_intensity', label: { en: 'Energy consumption per € million of turnover', pt: 'Consumo de energia por milhão de euros de volume de negócios' }, unit: 'MWh/M€', ref: 'B3 §29', from: { indicator: 'energy_intensity' } },
      { id: 'b3_renewable_share', label: { en: 'Share of renewable energy in total energy consumption', pt: 'Percentagem de energia renovável no consumo total' }, unit: '%', ref: 'B3 §29', from: { indicator: 'renewable_energy_pct' } },
      { id: 'b3_scope1', label: { en: 'Gross Scope 1 GHG emissions', pt: 'Emissões brutas de GEE de âmbito 1' }, unit: 'tCO2e', ref: 'B3 §30', from: { indicator: 'ghg_scope1_tco2e' } },
      { id: 'b3_scope2_location', label: { en: 'Gross location-based Scope 2 GHG emissions', pt: 'Emissões brutas de GEE de âmbito 2 (baseadas na localização)' }, unit: 'tCO2e', ref: 'B3 §30', from: { indicator: 'ghg_scope2_lb_tco2e' } },
      { id: 'b3_ghg_intensity', label: { en: 'GHG intensity (Scope 1 and 2 per € million of turnover)', pt: 'Intensidade de GEE (âmbitos 1 e 2 por milhão de euros de volume de negócios)' }, unit: 'tCO2e/M€', ref: 'B3 §31', from: { indicator: 'ghg_intensity' } },
    ],
  },
  {
    code: 'B4',
    title: { en: 'Pollution of air, water and soil', pt: 'Poluição do ar, da água e do solo' },
    datapoints: [{ id: 'b4_pollutants', label: { en: 'Emissions of pollutants to air, water and soil', pt: 'Emissões de poluentes para o ar, a água e o solo' }, unit: 'kg', ref: 'B4 §32', from: { indicator: 'pollutant_emissions_kg' } }],
  },
  {
    code: 'B5',
    title: { en: 'Biodiversity', pt: 'Biodiversidade' },
    datapoints: [
      { id: 'b5_sensitive_sites', label: { en: 'Sites in or near biodiversity-sensitive areas', pt: 'Locais em ou perto de zonas sensíveis em termos de biodiversidade' }, unit: 'sites', ref: 'B5 §33', from: { indicator: 'biodiversity_sensitive_sites' } },
      { id: 'b5_sensitive_area', label: { en: 'Area of those sites', pt: 'Área desses locais' }, unit: 'ha', ref: 'B5 §33', from: { missing: true } },
    ],
  },
  {
    code: 'B6',
    title: { en: 'Water', pt: 'Água' },
    datapoints: [
      { id: 'b6_water_withdrawal', label: { en: 'Total water withdrawal', pt: 'Captação total de água' }, unit: 'm³', ref: 'B6 §35', from: { derivedFrom: 'water_intensity' } },
      { id: 'b6_water_intensity', label: { en: 'Water withdrawal per € million of turnover', pt: 'Captação de água por milhão de euros de volume de negócios' }, unit: 'm³/M€', ref: 'B6 §35', from: { indicator: 'water_intensity' } },
      { id: 'b6_water_high_stress', label: { en: 'Water withdrawn at sites in areas of high water stress', pt: 'Água captada em locais de zonas com elevado stress hídrico' }, unit: 'm³', ref: 'B6 §35', from: { missing: true } },
    ],
  },
  {
    code: 'B7',
    title: { en: 'Resource use, circular economy and waste management', pt: 'Utilização de recursos, economia circular e gestão de resíduos' },
    datapoints: [
      { id: 'b7_waste_total', label: { en: 'Total waste generated', pt: 'Total de resíduos gerados' }, unit: 't', ref: 'B7 §37', from: { indicator: 'waste_total_t' } },
      { id: 'b7_waste_hazardous', label: { en: 'Hazardous waste generated', pt: 'Resíduos perigosos gerados' }, unit: 't', ref: 'B7 §37', from: { missing: true } },
      { id: 'b7_waste_non_hazardous', label: { en: 'Non-hazardous waste generated', pt: 'Resíduos não perigosos gerados' }, unit: 't', ref: 'B7 §37', from: { missing: true } },
      { id: 'b7_waste_recycled', label: { en: 'Share of waste diverted to recycling or reuse', pt: 'Percentagem de resíduos encaminhados para reciclagem ou reutilização' }, unit: '%', ref: 'B7 §37', from: { indicator: 'waste_recycled_pct' } },
    ],
  },
  {
    code: 'B8',
    title: { en: 'Workforce – general characteristics', pt: 'Força de trabalho – características gerais' },
    datapoints: [
      { id: 'b8_permanent_share', label: { en: 'Employees on permanent contracts', pt: 'Trabalhadores com contrato sem termo' }, unit: '%', ref: 'B8 §39', from: { indicator: 'employees_permanent_pct' } },
      { id: 'b8_employees_by_gender', label: { en: 'Employees by gender', pt: 'Trabalhadores por género' }, unit: 'employees', ref: 'B8 §39', from: { missing: true } },
      { id: 'b8_employees_by_country', label: { en: 'Employees by country of employment', pt: 'Trabalhadores por país de emprego' }, unit: 'employees', ref: 'B8 §39', from: { missing: true } },
      { id: 'b8_turnover_rate', label: { en: 'Employee turnover rate', pt: 'Taxa de rotatividade dos trabalhadores' }, unit: '%', ref: 'B8 §40', from: { indicator: 'employee_turnover_pct' } },
    ],
  },
  {
    code: 'B9',
    title: { en: 'Workforce – health and safety', pt: 'Força de trabalho – saúde e segurança' },
    datapoints: [
      { id: 'b9_accidents', label: { en: 'Number of recordable work-related accidents', pt: 'Número de acidentes de trabalho registáveis' }, unit: 'accidents', ref: 'B9 §41', from: { missing: true } },
      { id: 'b9_accident_rate', label: { en: 'Rate of recordable work-related accidents', pt: 'Taxa de acidentes de trabalho registáveis' }, unit: 'accidents/200,000 h', ref: 'B9 §41', from: { indicator: 'accident_rate' } },
      { id: 'b9_fatalities', label: { en: 'Fatalities from work-related injuries and ill health', pt: 'Óbitos por lesões e doenças relacionadas com o trabalho' }, unit: 'fatalities', ref: 'B9 §41', from: { indicator: 'work_fatalities' } },
    ],
  },
  {
    code: 'B10',
    title: { en: 'Workforce – remuneration, collective bargaining and training', pt: 'Força de trabalho – remuneração, negociação coletiva e formação' },
    datapoints: [
      { id: 'b10_minimum_wage', label: { en: 'Employees paid at least the applicable minimum wage', pt: 'Trabalhadores remunerados pelo menos com o salário mínimo aplicável' }, unit: null, ref: 'B10 §42', from: { indicator: 'min_wage_compliance' } },
      { id: 'b10_gender_pay_gap', label: { en: 'Gender pay gap', pt: 'Disparidade salarial entre homens e mulheres' }, unit: '%', ref: 'B10 §42', from: { indicator: 'gender_pay_gap_pct' } },
      { id: 'b10_collective_bargaining', label: { en: 'Employees covered by collective bargaining agreements', pt: 'Trabalhadores abrangidos por convenções coletivas' }, unit: '%', ref: 'B10 §42', from: { indicator: 'collective_bargaining_pct' } },
      { id: 'b10_training_hours', label: { en: 'Average annual training hours per employee', pt: 'Média anual de horas de formação por trabalhador' }, unit: 'h/employee', ref: 'B10 §42', from: { indicator: 'training_hours_avg' } },
      { id: 'b10_training_hours_by_gender', label: { en: 'Average annual training hours per employee, by gender', pt: 'Média anual de horas de formação por trabalhador, por género' }, unit: 'h/employee', ref: 'B10 §42', from: { missing: true } },
    ],
  },
  {
    code: 'B11',
    title: { en: 'Convictions and fines for corruption and bribery', pt: 'Condenações e coimas por corrupção e suborno' },
    datapoints: [
      { id: 'b11_convictions', label: { en: 'Convictions for violations of anti-corruption and anti-bribery laws', pt: 'Condenações por violação da legislação anticorrupção e antissuborno' }, unit: 'convictions', ref: 'B11 §43', from: { indicator: 'corruption_convictions' } },
      { id: 'b11_fines', label: { en: 'Total amount of fines for such violations', pt: 'Montante total das coimas por essas violações' }, unit: 'EUR', ref: 'B11 §43', from: { missing: true } },
    ],
  },
];

/**
 * The questionnaire's indicators that belong to the Comprehensive module: reported as well (a
 * Basic-module report may add them), in `comprehensive_disclosures`.
 */
export const COMPREHENSIVE_DATAPOINTS: readonly DisclosureDef[] = [
  {
    code: 'C3',
    title: { en: 'GHG reduction targets and climate transition', pt: 'Metas de redução de GEE e transição climática' },
    datapoints: [{ id: 'c3_ghg_target', label: { en: 'Adopted GHG reduction target by 2030', pt: 'Meta de redução de GEE adotada até 2030' }, unit: '%', ref: 'C3', from: { indicator: 'ghg_reduction_target_pct' } }],
  },
  {
    code: 'C5',
    title: { en: 'Additional workforce characteristics', pt: 'Características adicionais da força de trabalho' },
    datapoints: [{ id: 'c5_management_gender', label: { en: 'Share of the under-represented gender in management', pt: 'Percentagem do género sub-representado na gestão' }, unit: '%', ref: 'C5', from: { indicator: 'management_gender_balance_pct' } }],
  },
  {
    code: 'C6',
    title: { en: 'Human rights policies and processes', pt: 'Políticas e processos de direitos humanos' },
    datapoints: [{ id: 'c6_human_rights_policy', label: { en: 'Topics covered by the human rights policy; grievance mechanism', pt: 'Temas abrangidos pela política de direitos humanos; mecanismo de reclamação' }, unit: null, ref: 'C6', from: { indicator: 'human_rights_policy' } }],
  },
  {
    code: 'C7',
    title: { en: 'Severe negative human rights incidents', pt: 'Incidentes graves em matéria de direitos humanos' },
    datapoints: [{ id: 'c7_severe_incidents', label: { en: 'Confirmed severe human rights incidents', pt: 'Incidentes graves de direitos humanos confirmados' }, unit: 'incidents', ref: 'C7', from: { indicator: 'severe_hr_incidents' } }],
  },
  {
    code: 'C8',
    title: { en: 'Revenues from certain sectors and exclusion from EU reference benchmarks', pt: 'Receitas de determinados setores e exclusão dos índices de referência da UE' },
    datapoints: [
      {
        id: 'c8_controversial_revenue',
        label: { en: 'Share of turnover from controversial weapons, tobacco, fossil fuels and chemicals', pt: 'Percentagem do volume de negócios de armas controversas, tabaco, combustíveis fósseis e químicos' },
        unit: '%',
        ref: 'C8',
        from: { indicator: 'controversial_revenue_pct' },
      },
    ],
  },
  {
    code: 'C9',
    title: { en: 'Gender diversity ratio in the governance body', pt: 'Rácio de diversidade de género no órgão de governação' },
    datapoints: [{ id: 'c9_board_gender', label: { en: 'Share of the under-represented gender in the governance body', pt: 'Percentagem do género sub-representado no órgão de governação' }, unit: '%', ref: 'C9', from: { indicator: 'governance_gender_balance_pct' } }],
  },
];

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * VSME's omissions by headcount (B8: the turnover rate only from 50 employees; B10: the pay gap from
 * 150, unless one gender is represented): "not applicable" declared in the assessment, read against
 * the report's own B1 headcount. The turnover rate cannot then be omitted (not reported, and said
 * why); the pay gap can only for one gender, which the report cannot see (so it says that is the basis).
 */
const OMISSION_BELOW: Record<string, { employees: number; stands: boolean; note: Text }> = {
  employee_turnover_pct: { employees: 50, stands: false, note: { en: 'Not reported: "not applicable" was declared, but VSME B8 allows the omission only below 50 employees', pt: 'Não reportado: foi declarado "não aplicável", mas a VSME B8 só permite a omissão abaixo de 50 trabalhadores' } },
  gender_pay_gap_pct: { employees: 150, stands: true, note: { en: 'Not applicable: from 150 employees VSME B10 allows this only when one gender is represented', pt: 'Não aplicável: a partir de 150 trabalhadores a VSME B10 só o permite com um só género representado' } },
};

function datapoint(def: DatapointDef, input: MappingInput): Datapoint {
  const { answers, company, language: lang } = input;
  let value: DatapointValue = null;
  let status: DatapointStatus = 'not_reported';
  let source: Datapoint['source'] = 'assessment';
  let indicator: string | null = null;
  const from = def.from;
  if ('indicator' in from) {
    indicator = from.indicator;
    const a = answers[from.indicator];
    if (a === NOT_APPLICABLE) status = 'not_applicable';
    else if (a !== undefined && a !== null) {
      value = Array.isArray(a) ? [...a] : a;
      status = 'reported';
    }
  } else if ('company' in from) {
    source = 'company';
    const v = company[from.company];
    if (v !== undefined && v !== null && v !== '') {
      value = v;
      status = 'reported';
    }
  } else if ('sector' in from) {
    value = input.sector;
    status = 'reported';
  } else if ('fixed' in from) {
    source = 'report';
    value = tr(from.fixed, lang);
    status = 'reported';
  } else if ('derivedFrom' in from) {
    source = 'derived';
    indicator = from.derivedFrom;
    const intensity = answers[from.derivedFrom];
    if (intensity === NOT_APPLICABLE) status = 'not_applicable';
    else if (isNumber(intensity) && isNumber(company.turnover_eur)) {
      value = round3((intensity * company.turnover_eur) / 1e6);
      status = 'reported';
    }
  }
  const omission = indicator !== null && status === 'not_applicable' ? OMISSION_BELOW[indicator] : undefined;
  const contradicted = omission !== undefined && caveated(indicator!, NOT_APPLICABLE, company);
  if (contradicted && !omission!.stands) status = 'not_reported';
  return {
    id: def.id,
    label: tr(def.label, lang),
    value,
    display: contradicted ? tr(omission!.note, lang) : displayValue(value, status, lang),
    unit: unitText(def.unit, lang),
    vsme_reference: def.ref,
    status,
    source,
    indicator,
  };
}

const disclose = (defs: readonly DisclosureDef[], input: MappingInput): Disclosure[] =>
  defs.map((d) => ({ code: d.code, title: tr(d.title, input.language), datapoints: d.datapoints.map((p) => datapoint(p, input)) }));

/** B1–B11 and the Comprehensive-module datapoints of one assessment. */
/** a "not applicable" whose omission the report's headcount questions (refused or standing with a caveat) */
const caveated = (indicator: string, answer: unknown, company: MappingInput['company']) => {
  const o = OMISSION_BELOW[indicator];
  return o !== undefined && answer === NOT_APPLICABLE && isNumber(company?.employees) && company.employees >= o.employees;
};

/**
 * The indicators declared "not applicable" whose omission the report's headcount does not allow
 * (VSME B8: the turnover rate from 50 employees): not disclosed, so not counted as aligned.
 */
export function refusedOmissions(answers: MappingInput['answers'], company: MappingInput['company']): string[] {
  return Object.entries(OMISSION_BELOW)
    .filter(([indicator, o]) => !o.stands && caveated(indicator, answers[indicator], company))
    .map(([indicator]) => indicator);
}

export function mapDisclosures(input: MappingInput): { disclosures: Disclosure[]; comprehensive_disclosures: Disclosure[] } {
  return { disclosures: disclose(BASIC_MODULE, input), comprehensive_disclosures: disclose(COMPREHENSIVE_DATAPOINTS, input) };
}

// ───────────────────────────── Indicators (for the indicator table) ─────────────────────────────

const INDICATOR_LABELS: Record<string, Text> = {
  energy_intensity: { en: 'Energy intensity', pt: 'Intensidade energética' },
  renewable_energy_pct: { en: 'Renewable energy share', pt: 'Energia renovável' },
  ghg_scope1_tco2e: { en: 'GHG emissions, Scope 1', pt: 'Emissões de GEE, âmbito 1' },
  ghg_scope2_lb_tco2e: { en: 'GHG emissions, Scope 2 (location-based)', pt: 'Emissões de GEE, âmbito 2 (localização)' },
  ghg_intensity: { en: 'GHG intensity', pt: 'Intensidade de GEE' },
  ghg_reduction_target_pct: { en: 'GHG reduction target by 2030', pt: 'Meta de redução de GEE até 2030' },
  pollutant_emissions_kg: { en: 'Pollutant emissions', pt: 'Emissões de poluentes' },
  biodiversity_sensitive_sites: { en: 'Sites near sensitive areas', pt: 'Locais perto de zonas sensíveis' },
  water_intensity: { en: 'Water intensity', pt: 'Intensidade hídrica' },
  waste_total_t: { en: 'Waste generated', pt: 'Resíduos gerados' },
  waste_recycled_pct: { en: 'Waste recycled or reused', pt: 'Resíduos reciclados ou reutilizados' },
  employees_permanent_pct: { en: 'Permanent contracts', pt: 'Contratos sem termo' },
  employee_turnover_pct: { en: 'Employee turnover', pt: 'Rotatividade dos trabalhadores' },
  accident_rate: { en: 'Accident rate', pt: 'Taxa de acidentes' },
  work_fatalities: { en: 'Work fatalities', pt: 'Óbitos no trabalho' },
  min_wage_compliance: { en: 'Minimum wage met', pt: 'Salário mínimo cumprido' },
  gender_pay_gap_pct: { en: 'Gender pay gap', pt: 'Disparidade salarial de género' },
  collective_bargaining_pct: { en: 'Collective bargaining coverage', pt: 'Cobertura por negociação coletiva' },
  training_hours_avg: { en: 'Training hours per employee', pt: 'Horas de formação por trabalhador' },
  human_rights_policy: { en: 'Human rights policy', pt: 'Política de direitos humanos' },
  severe_hr_incidents: { en: 'Severe human rights incidents', pt: 'Incidentes graves de direitos humanos' },
  sustainability_policies: { en: 'Sustainability policies', pt: 'Políticas de sustentabilidade' },
  certifications: { en: 'Certifications', pt: 'Certificações' },
  corruption_convictions: { en: 'Corruption convictions', pt: 'Condenações por corrupção' },
  governance_gender_balance_pct: { en: 'Gender balance, governance body', pt: 'Equilíbrio de género, órgão de governação' },
  management_gender_balance_pct: { en: 'Gender balance, management', pt: 'Equilíbrio de género, gestão' },
  controversial_revenue_pct: { en: 'Revenue from controversial sectors', pt: 'Receitas de setores controversos' },
};

export interface IndicatorRow {
  key: string;
  pillar: Pillar;
  label: string;
  value: DatapointValue;
  display: string;
  unit: string | null;
  status: DatapointStatus;
  vsme_reference: string;
  sdgs: number[];
}

/** The 27 indicators in questionnaire order, with the answer as the report prints it. */
export function indicatorRows(answers: Record<string, AnswerValue>, lang: ReportLanguage, company: MappingInput['company'] = {}): IndicatorRow[] {
  // a "not applicable" the report's headcount refuses reads as its datapoint does: not reported, and why
  const refused = new Set(refusedOmissions(answers, company));
  const l = lang === 'pt-PT' ? 'pt' : 'en';
  return INDICATORS.map((i) => {
    const a = answers[i.key];
    const status: DatapointStatus = refused.has(i.key) ? 'not_reported' : a === NOT_APPLICABLE ? 'not_applicable' : a === undefined || a === null ? 'not_reported' : 'reported';
    const value: DatapointValue = status === 'reported' ? (Array.isArray(a) ? [...a] : (a as DatapointValue)) : null;
    return {
      key: i.key,
      pillar: i.pillar,
      label: tr(INDICATOR_LABELS[i.key]!, lang),
      value,
      // (the caveat of a "not applicable" the headcount questions, whether it stands or is refused: as its datapoint reads)
      display: caveated(i.key, a, company) ? OMISSION_BELOW[i.key]!.note[l] : displayValue(value, status, lang),
      unit: unitText(i.unit, lang),
      status,
      vsme_reference: i.vsme_ref,
      sdgs: [...i.sdgs],
    };
  });
}

// ───────────────────────────── SDGs ─────────────────────────────

/** The UN Sustainable Development Goals' short titles (pt-PT as used by the Portuguese UN information centre). */
export const SDG_TITLES: Record<number, Text> = {
  1: { en: 'No poverty', pt: 'Erradicar a pobreza' },
  2: { en: 'Zero hunger', pt: 'Erradicar a fome' },
  3: { en: 'Good health and well-being', pt: 'Saúde de qualidade' },
  4: { en: 'Quality education', pt: 'Educação de qualidade' },
  5: { en: 'Gender equality', pt: 'Igualdade de género' },
  6: { en: 'Clean water and sanitation', pt: 'Água potável e saneamento' },
  7: { en: 'Affordable and clean energy', pt: 'Energias renováveis e acessíveis' },
  8: { en: 'Decent work and economic growth', pt: 'Trabalho digno e crescimento económico' },
  9: { en: 'Industry, innovation and infrastructure', pt: 'Indústria, inovação e infraestruturas' },
  10: { en: 'Reduced inequalities', pt: 'Reduzir as desigualdades' },
  11: { en: 'Sustainable cities and communities', pt: 'Cidades e comunidades sustentáveis' },
  12: { en: 'Responsible consumption and production', pt: 'Produção e consumo sustentáveis' },
  13: { en: 'Climate action', pt: 'Ação climática' },
  14: { en: 'Life below water', pt: 'Proteger a vida marinha' },
  15: { en: 'Life on land', pt: 'Proteger a vida terrestre' },
  16: { en: 'Peace, justice and strong institutions', pt: 'Paz, justiça e instituições eficazes' },
  17: { en: 'Partnerships for the goals', pt: 'Parcerias para a implementação dos objetivos' },
};

/**
 * The SDG targets each indicator speaks to (docs/csrd.md §4). The goals are the questionnaire's
 * own `sdgs` (docs/esg.md §2); the targets say why, where one of the goal's targets fits a
 * company's conduct (most of SDG 13's targets address states, so climate indicators link to the
 * goal only).
 */
export const SDG_TARGETS: Record<string, string[]> = {
  energy_intensity: ['7.3'],
  renewable_energy_pct: ['7.2'],
  ghg_intensity: ['9.4'],
  pollutant_emissions_kg: ['3.9', '12.4', '14.1'],
  biodiversity_sensitive_sites: ['14.2', '15.1', '15.5'],
  water_intensity: ['6.4'],
  waste_total_t: ['12.5'],
  waste_recycled_pct: ['11.6', '12.5'],
  employees_permanent_pct: ['8.5'],
  employee_turnover_pct: ['8.5'],
  accident_rate: ['8.8'],
  work_fatalities: ['8.8'],
  min_wage_compliance: ['1.2', '8.5'],
  gender_pay_gap_pct: ['5.1', '8.5', '10.4'],
  collective_bargaining_pct: ['8.8', '10.4'],
  training_hours_avg: ['4.4'],
  human_rights_policy: ['8.7', '8.8', '10.3'],
  severe_hr_incidents: ['8.7'],
  sustainability_policies: ['12.6'],
  certifications: ['9.4', '12.6'],
  corruption_convictions: ['16.5'],
  governance_gender_balance_pct: ['5.5'],
  management_gender_balance_pct: ['5.5', '10.2'],
  controversial_revenue_pct: ['3.a', '16.4'],
};

export interface SdgLink {
  goal: number;
  title: string;
  /** aligned per the assessment (docs/esg.md §6): at least half of its applicable performance indicators meet */
  aligned: boolean;
  pillars: Pillar[];
  /** the reported indicators linked to it */
  indicators: string[];
  targets: string[];
}

const targetOrder = (a: string, b: string) => {
  const [ga, ta] = a.split('.') as [string, string];
  const [gb, tb] = b.split('.') as [string, string];
  return Number(ga) - Number(gb) || (/^\d+$/.test(ta) ? 0 : 1) - (/^\d+$/.test(tb) ? 0 : 1) || (Number(ta) || 0) - (Number(tb) || 0) || ta.localeCompare(tb);
};

/**
 * The SDGs the report speaks to: every goal linked to at least one reported indicator, with its
 * pillars, those indicators, the targets they address, and whether the assessment found it aligned.
 */
export function sdgLinks(answers: Record<string, AnswerValue>, alignedSdgs: readonly number[], lang: ReportLanguage): SdgLink[] {
  const byGoal = new Map<number, { pillars: Set<Pillar>; indicators: string[]; targets: Set<string> }>();
  for (const i of INDICATORS) {
    const a = answers[i.key];
    if (a === undefined || a === null || a === NOT_APPLICABLE) continue;
    for (const goal of i.sdgs) {
      let g = byGoal.get(goal);
      if (!g) byGoal.set(goal, (g = { pillars: new Set(), indicators: [], targets: new Set() }));
      g.pillars.add(i.pillar);
      g.indicators.push(i.key);
      for (const target of SDG_TARGETS[i.key] ?? []) if (target.split('.')[0] === String(goal)) g.targets.add(target);
    }
  }
  const aligned = new Set(alignedSdgs);
  return [...byGoal.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([goal, g]) => ({
      goal,
      title: tr(SDG_TITLES[goal]!, lang),
      aligned: aligned.has(goal),
      pillars: (['E', 'S', 'G'] as const).filter((p) => g.pillars.has(p)),
      indicators: g.indicators,
      targets: [...g.targets].sort(targetOrder),
    }));
}

// ───────────────────────────── Tiers ─────────────────────────────

export const TIER_TEXT: Record<string, Text> = {
  leader: { en: 'Leader', pt: 'Líder' },
  advancer: { en: 'Advancer', pt: 'Avançado' },
  developing: { en: 'Developing', pt: 'Em desenvolvimento' },
  starter: { en: 'Starter', pt: 'Iniciante' },
  lagging: { en: 'Lagging', pt: 'Atrasado' },
};
export const TIER_RANGE: Record<string, string> = { leader: '80–100', advancer: '60–79', developing: '40–59', starter: '20–39', lagging: '0–19' };
