/**
 * ESG assessment engine (pure: no I/O, no clock, no randomness).
 *
 * Every indicator is mapped to a performance score s ∈ [0, 1] by a documented function
 * (docs/esg.md §3); pillar scores are weighted means of s over the pillar's indicators
 * (indicators answered "not_applicable" are left out of the mean, unanswered ones count 0);
 * overall is the sector-weighted mean of the three (rounded) pillar scores.
 * All lookup tables are built once at module load so that an evaluation allocates only its result.
 */
import {
  INDICATORS,
  NOT_APPLICABLE,
  type AnswerValue,
  type Indicator,
  type Pillar,
} from './questionnaire';

/**
 * esg-1.1.0: recommendation texts that fit the answers (variants); scores unchanged from esg-1.0.0,
 * whose catalogue is each recommendation's "default" variant (renderRecommendation, docs/esg.md).
 */
export const ESG_ALGORITHM_VERSION = 'esg-1.1.0';

export type EsgTier = 'leader' | 'advancer' | 'developing' | 'starter' | 'lagging';

export interface Recommendation {
  id: string;
  pillar: Pillar;
  priority: number;
  title: string;
  body: string;
  effort: 'low' | 'medium' | 'high';
  impact: 'low' | 'medium' | 'high';
  timeline: string;
  sdgs: number[];
}

export interface EsgResult {
  overall: number;
  tier: EsgTier;
  environmental: number;
  social: number;
  governance: number;
  vsme_alignment: number;
  aligned_sdgs: number[];
  recommendations: Recommendation[];
}

// ─────────────────────────────── Sector groups ───────────────────────────────

/** Weight groups (REFERENCE §5): high-climate-impact sectors, services, everything else. */
type WeightGroup = 'high_impact' | 'services' | 'default';

const WEIGHT_GROUP_OF_SECTION: Readonly<Record<string, WeightGroup>> = {
  A: 'high_impact', B: 'high_impact', C: 'high_impact', D: 'high_impact', E: 'high_impact',
  F: 'high_impact', G: 'high_impact', H: 'high_impact', L: 'high_impact',
  I: 'services', J: 'services', K: 'services', M: 'services', N: 'services', R: 'services', S: 'services',
  O: 'default', P: 'default', Q: 'default', T: 'default', U: 'default',
};

/** Pillar weights in integer percent (E, S, G). */
const WEIGHTS_PCT: Readonly<Record<WeightGroup, readonly [number, number, number]>> = {
  high_impact: [50, 30, 20],
  services: [25, 40, 35],
  default: [40, 30, 30],
};

/** Benchmark / materiality groups (finer than the weight groups). */
type BenchGroup =
  | 'agri_extractive' | 'manufacturing' | 'utilities' | 'construction' | 'trade' | 'transport'
  | 'hospitality' | 'real_estate' | 'business_services' | 'public_social' | 'other_services' | 'all';

const BENCH_GROUP_OF_SECTION: Readonly<Record<string, BenchGroup>> = {
  A: 'agri_extractive', B: 'agri_extractive', C: 'manufacturing', D: 'utilities', E: 'utilities',
  F: 'construction', G: 'trade', H: 'transport', I: 'hospitality', L: 'real_estate',
  J: 'business_services', K: 'business_services', M: 'business_services', N: 'business_services',
  O: 'public_social', P: 'public_social', Q: 'public_social',
  R: 'other_services', S: 'other_services', T: 'other_services', U: 'other_services',
};

/**
 * Sector-group benchmarks (indicative calibration values, see docs/esg.md §4): the intensity at
 * which an indicator scores 0.5. ghg in tCO2e/M€, energy in MWh/M€, water in m³/M€,
 * accident in recordable accidents per 200,000 hours worked.
 */
const BENCHMARKS: Readonly<Record<BenchGroup, { ghg: number; energy: number; water: number; accident: number }>> = {
  agri_extractive: { ghg: 500, energy: 1200, water: 15000, accident: 3.0 },
  manufacturing: { ghg: 150, energy: 600, water: 1500, accident: 2.5 },
  utilities: { ghg: 800, energy: 2500, water: 100000, accident: 2.0 },
  construction: { ghg: 40, energy: 150, water: 400, accident: 3.5 },
  trade: { ghg: 15, energy: 60, water: 100, accident: 1.5 },
  transport: { ghg: 300, energy: 1100, water: 150, accident: 2.5 },
  hospitality: { ghg: 50, energy: 250, water: 2500, accident: 2.0 },
  real_estate: { ghg: 25, energy: 120, water: 300, accident: 1.0 },
  business_services: { ghg: 8, energy: 35, water: 40, accident: 0.5 },
  public_social: { ghg: 25, energy: 120, water: 300, accident: 1.5 },
  other_services: { ghg: 25, energy: 120, water: 300, accident: 1.0 },
  all: { ghg: 80, energy: 300, water: 1500, accident: 1.5 },
};

/** Indicators of heightened sector materiality (multiplier 1.5 in recommendation prioritisation). */
const MATERIAL: Readonly<Record<BenchGroup, readonly string[]>> = {
  agri_extractive: ['water_intensity', 'biodiversity_sensitive_sites', 'pollutant_emissions_kg', 'ghg_intensity', 'accident_rate', 'work_fatalities'],
  manufacturing: ['energy_intensity', 'ghg_intensity', 'pollutant_emissions_kg', 'waste_recycled_pct', 'accident_rate', 'work_fatalities', 'certifications'],
  utilities: ['ghg_intensity', 'renewable_energy_pct', 'pollutant_emissions_kg', 'water_intensity', 'waste_recycled_pct'],
  construction: ['accident_rate', 'work_fatalities', 'waste_total_t', 'waste_recycled_pct', 'corruption_convictions'],
  trade: ['energy_intensity', 'renewable_energy_pct', 'waste_recycled_pct', 'employees_permanent_pct'],
  transport: ['ghg_intensity', 'energy_intensity', 'accident_rate', 'work_fatalities'],
  hospitality: ['water_intensity', 'energy_intensity', 'waste_recycled_pct', 'employees_permanent_pct', 'employee_turnover_pct'],
  real_estate: ['energy_intensity', 'ghg_intensity', 'renewable_energy_pct', 'biodiversity_sensitive_sites'],
  business_services: ['training_hours_avg', 'gender_pay_gap_pct', 'management_gender_balance_pct', 'sustainability_policies', 'corruption_convictions'],
  public_social: ['training_hours_avg', 'gender_pay_gap_pct', 'accident_rate', 'human_rights_policy'],
  other_services: ['employees_permanent_pct', 'employee_turnover_pct', 'energy_intensity'],
  all: [],
};

// ────────────────────────────── Scoring rules ────────────────────────────────

/** How an indicator's value maps to s ∈ [0,1]. */
type Rule =
  | { kind: 'disclosure' } // better null: 1 when a valid value is disclosed
  | { kind: 'bench'; bench: 'ghg' | 'energy' | 'water' | 'accident' } // s = clamp(0.5 − 0.25·log2(x / benchmark))
  | { kind: 'up'; full: number } // s = min(1, x / full)
  | { kind: 'down'; full: number; zero: number } // s = clamp((zero − x) / (zero − full))
  | { kind: 'zero_count'; halfAt: number } // s = 1 / (1 + x / halfAt); halfAt 0 → s = 1 iff x = 0
  | { kind: 'bool' } // true → 1, false → 0
  | { kind: 'count'; full: number } // string[]: s = min(1, items / full)
  | { kind: 'points'; points: Readonly<Record<string, readonly [group: string, pts: number]>> }; // string[]: sum of group points (max per group), capped at 1

/** Weight of each indicator inside its pillar and its scoring rule (docs/esg.md §3). */
const RULES: Readonly<Record<string, { weight: number; rule: Rule }>> = {
  energy_intensity: { weight: 1.5, rule: { kind: 'bench', bench: 'energy' } },
  renewable_energy_pct: { weight: 1.5, rule: { kind: 'up', full: 100 } },
  ghg_scope1_tco2e: { weight: 0.5, rule: { kind: 'disclosure' } },
  ghg_scope2_lb_tco2e: { weight: 0.5, rule: { kind: 'disclosure' } },
  ghg_intensity: { weight: 2, rule: { kind: 'bench', bench: 'ghg' } },
  ghg_reduction_target_pct: { weight: 1, rule: { kind: 'up', full: 42 } },
  pollutant_emissions_kg: { weight: 0.5, rule: { kind: 'disclosure' } },
  biodiversity_sensitive_sites: { weight: 0.75, rule: { kind: 'zero_count', halfAt: 2 } },
  water_intensity: { weight: 1, rule: { kind: 'bench', bench: 'water' } },
  waste_total_t: { weight: 0.5, rule: { kind: 'disclosure' } },
  waste_recycled_pct: { weight: 1, rule: { kind: 'up', full: 70 } },

  employees_permanent_pct: { weight: 1, rule: { kind: 'up', full: 90 } },
  employee_turnover_pct: { weight: 0.75, rule: { kind: 'down', full: 10, zero: 50 } },
  accident_rate: { weight: 1.5, rule: { kind: 'bench', bench: 'accident' } },
  work_fatalities: { weight: 1.5, rule: { kind: 'zero_count', halfAt: 0 } },
  min_wage_compliance: { weight: 1.5, rule: { kind: 'bool' } },
  gender_pay_gap_pct: { weight: 1, rule: { kind: 'down', full: 5, zero: 25 } },
  collective_bargaining_pct: { weight: 0.75, rule: { kind: 'up', full: 80 } },
  training_hours_avg: { weight: 1, rule: { kind: 'up', full: 40 } },
  human_rights_policy: { weight: 1, rule: { kind: 'count', full: 6 } },
  severe_hr_incidents: { weight: 1.5, rule: { kind: 'zero_count', halfAt: 0 } },

  sustainability_policies: { weight: 1.25, rule: { kind: 'count', full: 6 } },
  certifications: {
    weight: 1,
    rule: {
      kind: 'points',
      points: {
        iso_14001: ['ems', 0.35],
        emas: ['ems', 0.35],
        iso_45001: ['ohs', 0.25],
        iso_50001: ['energy', 0.15],
        iso_37001: ['anti_bribery', 0.1],
        sa8000: ['social', 0.1],
        np_4469: ['social', 0.1],
        b_corp: ['social', 0.1],
        iso_9001: ['quality', 0.05],
      },
    },
  },
  corruption_convictions: { weight: 1.5, rule: { kind: 'zero_count', halfAt: 0 } },
  governance_gender_balance_pct: { weight: 0.75, rule: { kind: 'up', full: 40 } },
  management_gender_balance_pct: { weight: 0.75, rule: { kind: 'up', full: 40 } },
  controversial_revenue_pct: { weight: 1, rule: { kind: 'down', full: 0, zero: 10 } },
};

/** An indicator "meets" (its SDGs, and needs no recommendation) at s ≥ MEETS. */
const MEETS = 0.6;
/** Maximum number of recommendations returned. */
const MAX_RECOMMENDATIONS = 10;

// ───────────────────────────── Recommendations ───────────────────────────────

type Level = 'low' | 'medium' | 'high';
/** An answer-dependent text of a recommendation (esg-1.1.0): the title stays the default's unless given. */
interface RecVariant {
  en: { title?: string; body: string };
  pt: { title?: string; body: string };
}
interface RecDef {
  id: string;
  pillar: Pillar;
  effort: Level;
  indicators: readonly string[];
  /** the "default" variant: the esg-1.0.0 text, frozen (it renders the assessments of esg-1.0.0) */
  en: { title: string; body: string; timeline: string };
  pt: { title: string; body: string; timeline: string };
}

const REC_DEFS: readonly RecDef[] = [
  {
    id: 'rec-energy-efficiency', pillar: 'E', effort: 'medium', indicators: ['energy_intensity'],
    en: {
      title: 'Cut energy use per euro of turnover',
      body: 'Run an energy audit of your sites, fix the largest consumers first (compressed air, HVAC, lighting, process heat, vehicle fleet), install sub-metering and set a yearly MWh per €M target. Companies consuming more than 500 toe a year fall under the SGCIE scheme (Decree-Law 71/2008).',
      timeline: '6-12 months',
    },
    pt: {
      title: 'Reduzir o consumo de energia por euro de volume de negócios',
      body: 'Faça uma auditoria energética às suas instalações, atue primeiro nos maiores consumidores (ar comprimido, AVAC, iluminação, calor de processo, frota), instale contadores parciais e fixe uma meta anual de MWh por M€. As empresas com consumos acima de 500 tep por ano estão abrangidas pelo SGCIE (Decreto-Lei n.º 71/2008).',
      timeline: '6-12 meses',
    },
  },
  {
    id: 'rec-renewable-energy', pillar: 'E', effort: 'low', indicators: ['renewable_energy_pct'],
    en: {
      title: 'Switch to renewable energy',
      body: 'Buy electricity backed by renewable guarantees of origin, install rooftop solar for self-consumption (UPAC) or join a renewable energy community under Decree-Law 15/2022, and electrify heat and vehicles where possible. Report renewable MWh separately from fossil MWh (VSME B3).',
      timeline: '1-3 months',
    },
    pt: {
      title: 'Passar para energia renovável',
      body: 'Contrate eletricidade com garantias de origem renováveis, instale painéis solares para autoconsumo (UPAC) ou adira a uma comunidade de energia renovável ao abrigo do Decreto-Lei n.º 15/2022, e eletrifique o calor e a frota sempre que possível. Reporte os MWh renováveis separados dos fósseis (VSME B3).',
      timeline: '1-3 meses',
    },
  },
  {
    id: 'rec-ghg-inventory', pillar: 'E', effort: 'low', indicators: ['ghg_scope1_tco2e', 'ghg_scope2_lb_tco2e'],
    en: {
      title: 'Build a Scope 1 and 2 greenhouse gas inventory',
      body: 'Collect a year of fuel, gas and electricity invoices, convert them to MWh and apply published emission factors (national factors from the APA inventory for fuels, the average Portuguese grid factor for electricity) to report Scope 1 and location-based Scope 2 emissions in tCO2e, as VSME B3 requires.',
      timeline: '1-3 months',
    },
    pt: {
      title: 'Criar um inventário de emissões de âmbito 1 e 2',
      body: 'Reúna um ano de faturas de combustíveis, gás e eletricidade, converta-as em MWh e aplique fatores de emissão publicados (fatores nacionais do inventário da APA para combustíveis, fator médio da rede portuguesa para a eletricidade) para reportar as emissões de âmbito 1 e de âmbito 2 baseadas na localização em tCO2e, como exige o VSME B3.',
      timeline: '1-3 meses',
    },
  },
  {
    id: 'rec-decarbonise-operations', pillar: 'E', effort: 'high', indicators: ['ghg_intensity'],
    en: {
      title: 'Decarbonise your operations',
      body: 'Tackle the largest sources in your inventory: replace fossil boilers and furnaces with heat pumps or electric alternatives, move the fleet to electric vehicles, stop refrigerant leaks and combine these with renewable electricity. Track tCO2e per €M of turnover against your sector benchmark every year.',
      timeline: '12-24 months',
    },
    pt: {
      title: 'Descarbonizar as operações',
      body: 'Ataque as maiores fontes do seu inventário: substitua caldeiras e fornos a combustíveis fósseis por bombas de calor ou alternativas elétricas, eletrifique a frota, elimine fugas de gases refrigerantes e combine estas medidas com eletricidade renovável. Acompanhe todos os anos as tCO2e por M€ de volume de negócios face à referência do seu setor.',
      timeline: '12-24 meses',
    },
  },
  {
    id: 'rec-ghg-target', pillar: 'E', effort: 'low', indicators: ['ghg_reduction_target_pct'],
    en: {
      title: 'Set a science-based emission reduction target',
      body: 'Commit to cutting Scope 1 and 2 emissions by at least 42% by 2030 against a recent base year (the 1.5 °C-aligned near-term pace; the SBTi streamlined route for SMEs can validate it) and publish the base year, target year and main actions (VSME C3).',
      timeline: '1-3 months',
    },
    pt: {
      title: 'Definir uma meta de redução de emissões alinhada com a ciência',
      body: 'Comprometa-se a reduzir as emissões de âmbito 1 e 2 em pelo menos 42% até 2030 face a um ano de referência recente (ritmo compatível com 1,5 °C; a via simplificada da SBTi para PME permite validá-la) e publique o ano de referência, o ano-alvo e as principais ações (VSME C3).',
      timeline: '1-3 meses',
    },
  },
  {
    id: 'rec-pollution-reporting', pillar: 'E', effort: 'medium', indicators: ['pollutant_emissions_kg'],
    en: {
      title: 'Report your pollutant emissions',
      body: 'Gather the emission figures already required by your environmental permit, the PRTR or your environmental management system (air, wastewater, soil), total them in kg per pollutant and disclose them; if no such reporting applies to you, answer "not_applicable" (VSME B4).',
      timeline: '3-6 months',
    },
    pt: {
      title: 'Reportar as emissões de poluentes',
      body: 'Reúna os valores de emissões já exigidos pela sua licença ambiental, pelo PRTR ou pelo seu sistema de gestão ambiental (ar, águas residuais, solo), some-os em kg por poluente e divulgue-os; se não estiver sujeito a esse reporte, responda "not_applicable" (VSME B4).',
      timeline: '3-6 meses',
    },
  },
  {
    id: 'rec-biodiversity', pillar: 'E', effort: 'medium', indicators: ['biodiversity_sensitive_sites'],
    en: {
      title: 'Manage impacts near biodiversity-sensitive areas',
      body: 'Map your sites against Natura 2000 and other protected areas (ICNF geographic data), assess the impact of each nearby site and adopt mitigation measures such as buffer zones, native planting and limits on lighting, noise and run-off.',
      timeline: '6-12 months',
    },
    pt: {
      title: 'Gerir os impactes junto de áreas sensíveis para a biodiversidade',
      body: 'Cruze a localização das suas instalações com a Rede Natura 2000 e outras áreas protegidas (cartografia do ICNF), avalie o impacte de cada instalação próxima e adote medidas de mitigação como zonas-tampão, plantação de espécies autóctones e limitação da iluminação, do ruído e das escorrências.',
      timeline: '6-12 meses',
    },
  },
  {
    id: 'rec-water-efficiency', pillar: 'E', effort: 'medium', indicators: ['water_intensity'],
    en: {
      title: 'Reduce water withdrawal',
      body: 'Meter water per site and process, repair leaks, fit low-flow devices and closed-loop cooling or washing, and reuse treated wastewater or rainwater; act first on sites in water-stressed regions such as the Algarve and Alentejo.',
      timeline: '3-6 months',
    },
    pt: {
      title: 'Reduzir a captação de água',
      body: 'Instale contadores de água por instalação e por processo, repare fugas, use dispositivos de baixo caudal e circuitos fechados de arrefecimento ou lavagem, e reutilize águas residuais tratadas ou águas pluviais; atue primeiro nas instalações em regiões com stress hídrico, como o Algarve e o Alentejo.',
      timeline: '3-6 meses',
    },
  },
  {
    id: 'rec-waste-tracking', pillar: 'E', effort: 'low', indicators: ['waste_total_t'],
    en: {
      title: 'Track your waste quantities',
      body: 'Record every waste collection with its LER/EWC code and weight (your e-GAR waste transport guides and the annual MIRR in SILiAmb already hold this data), split hazardous from non-hazardous waste and report the yearly total in tonnes (VSME B7).',
      timeline: '1-3 months',
    },
    pt: {
      title: 'Registar as quantidades de resíduos',
      body: 'Registe cada recolha de resíduos com o código LER e o peso (as e-GAR e o MIRR anual na plataforma SILiAmb já contêm estes dados), separe os resíduos perigosos dos não perigosos e reporte o total anual em toneladas (VSME B7).',
      timeline: '1-3 meses',
    },
  },
  {
    id: 'rec-waste-recycling', pillar: 'E', effort: 'medium', indicators: ['waste_recycled_pct'],
    en: {
      title: 'Recycle and reuse more of your waste',
      body: 'Separate waste at source, contract licensed operators that recover rather than landfill, return packaging and pallets to suppliers and redesign processes to cut scrap; aim to divert at least 70% of your waste from disposal.',
      timeline: '3-6 months',
    },
    pt: {
      title: 'Reciclar e reutilizar mais resíduos',
      body: 'Faça a separação na origem, contrate operadores licenciados que valorizem os resíduos em vez de os depositar em aterro, devolva embalagens e paletes aos fornecedores e redesenhe processos para reduzir desperdícios; procure desviar da eliminação pelo menos 70% dos seus resíduos.',
      timeline: '3-6 meses',
    },
  },
  {
    id: 'rec-stable-employment', pillar: 'S', effort: 'medium', indicators: ['employees_permanent_pct'],
    en: {
      title: 'Offer more permanent contracts',
      body: 'Review fixed-term and agency positions that cover permanent needs and convert them into open-ended contracts; check the IEFP hiring and contract-conversion incentives.',
      timeline: '6-12 months',
    },
    pt: {
      title: 'Oferecer mais contratos sem termo',
      body: 'Reveja os postos com contrato a termo ou trabalho temporário que correspondem a necessidades permanentes e converta-os em contratos sem termo; consulte os apoios do IEFP à contratação e à conversão de contratos.',
      timeline: '6-12 meses',
    },
  },
  {
    id: 'rec-staff-retention', pillar: 'S', effort: 'medium', indicators: ['employee_turnover_pct'],
    en: {
      title: 'Reduce staff turnover',
      body: 'Hold exit and stay interviews, publish clear pay bands and career paths, offer flexible schedules and mentoring for newcomers, and track voluntary turnover every quarter.',
      timeline: '6-12 months',
    },
    pt: {
      title: 'Reduzir a rotatividade dos trabalhadores',
      body: 'Faça entrevistas de saída e de permanência, publique bandas salariais e planos de carreira claros, ofereça horários flexíveis e mentoria aos novos trabalhadores, e acompanhe a rotatividade voluntária todos os trimestres.',
      timeline: '6-12 meses',
    },
  },
  {
    id: 'rec-health-safety', pillar: 'S', effort: 'medium', indicators: ['accident_rate', 'work_fatalities'],
    en: {
      title: 'Strengthen occupational health and safety',
      body: 'Update the risk assessment required by Law 102/2009, investigate every accident and near miss, train workers and supervisors, provide and enforce protective equipment, and consider an ISO 45001 management system. Report accidents per 200,000 hours worked and fatalities (VSME B9).',
      timeline: '3-6 months',
    },
    pt: {
      title: 'Reforçar a segurança e saúde no trabalho',
      body: 'Atualize a avaliação de riscos exigida pela Lei n.º 102/2009, investigue todos os acidentes e quase-acidentes, dê formação a trabalhadores e chefias, forneça equipamentos de proteção e garanta o seu uso, e considere um sistema de gestão ISO 45001. Reporte os acidentes por 200 000 horas trabalhadas e as mortes (VSME B9).',
      timeline: '3-6 meses',
    },
  },
  {
    id: 'rec-minimum-wage', pillar: 'S', effort: 'low', indicators: ['min_wage_compliance'],
    en: {
      title: 'Pay at least the minimum wage to everyone',
      body: 'Check every contract, including part-time staff, trainees and agency workers, against the national minimum monthly wage (RMMG) and any higher minimum in your collective agreement, and correct shortfalls immediately.',
      timeline: '1-3 months',
    },
    pt: {
      title: 'Pagar pelo menos o salário mínimo a todos',
      body: 'Verifique todos os contratos, incluindo tempo parcial, estágios e trabalho temporário, face à retribuição mínima mensal garantida (RMMG) e a qualquer mínimo superior previsto na convenção coletiva aplicável, e corrija de imediato as diferenças.',
      timeline: '1-3 meses',
    },
  },
  {
    id: 'rec-gender-pay-gap', pillar: 'S', effort: 'medium', indicators: ['gender_pay_gap_pct'],
    en: {
      title: 'Close the gender pay gap',
      body: 'Compute the unadjusted gap (average gross hourly pay of men and women), analyse it by job category with objective job-evaluation criteria (Law 60/2018), correct unjustified differences and prepare for the pay-transparency rules of Directive (EU) 2023/970, which require a joint pay assessment when an unexplained gap of 5% or more persists.',
      timeline: '6-12 months',
    },
    pt: {
      title: 'Reduzir a disparidade salarial entre homens e mulheres',
      body: 'Calcule a disparidade não ajustada (remuneração horária bruta média de homens e de mulheres), analise-a por categoria profissional com critérios objetivos de avaliação de funções (Lei n.º 60/2018), corrija as diferenças injustificadas e prepare-se para as regras de transparência salarial da Diretiva (UE) 2023/970, que exigem uma avaliação conjunta quando persiste uma disparidade injustificada de 5% ou mais.',
      timeline: '6-12 meses',
    },
  },
  {
    id: 'rec-collective-bargaining', pillar: 'S', effort: 'low', indicators: ['collective_bargaining_pct'],
    en: {
      title: 'Extend collective bargaining coverage',
      body: 'Identify the collective agreement or extension ordinance that applies to your activity, apply it to all employees and engage with worker representatives; the EU Adequate Minimum Wages Directive (2022/2041) uses 80% coverage as its reference level.',
      timeline: '3-6 months',
    },
    pt: {
      title: 'Alargar a cobertura da contratação coletiva',
      body: 'Identifique a convenção coletiva ou a portaria de extensão aplicável à sua atividade, aplique-a a todos os trabalhadores e dialogue com os representantes dos trabalhadores; a Diretiva (UE) 2022/2041, relativa a salários mínimos adequados, usa 80% de cobertura como nível de referência.',
      timeline: '3-6 meses',
    },
  },
  {
    id: 'rec-training', pillar: 'S', effort: 'low', indicators: ['training_hours_avg'],
    en: {
      title: 'Invest in training',
      body: 'Plan at least 40 hours of continuous training per employee per year (the Labour Code minimum, article 131), record the hours by gender and use co-funded programmes (IEFP, Portugal 2030) for digital and green skills.',
      timeline: '3-6 months',
    },
    pt: {
      title: 'Investir em formação',
      body: 'Planeie pelo menos 40 horas de formação contínua por trabalhador e por ano (mínimo do Código do Trabalho, artigo 131.º), registe as horas por género e recorra a programas cofinanciados (IEFP, Portugal 2030) para competências digitais e verdes.',
      timeline: '3-6 meses',
    },
  },
  {
    id: 'rec-human-rights-policy', pillar: 'S', effort: 'low', indicators: ['human_rights_policy'],
    en: {
      title: 'Adopt a human rights policy with a complaints channel',
      body: 'Publish a code of conduct covering child labour, forced labour, human trafficking, discrimination and accident prevention, and open a confidential complaints channel for staff (mandatory from 50 employees under Law 93/2021 on the protection of whistleblowers).',
      timeline: '1-3 months',
    },
    pt: {
      title: 'Adotar uma política de direitos humanos com canal de denúncia',
      body: 'Publique um código de conduta que abranja trabalho infantil, trabalho forçado, tráfico de seres humanos, discriminação e prevenção de acidentes, e crie um canal de denúncia confidencial para os trabalhadores (obrigatório a partir de 50 trabalhadores pela Lei n.º 93/2021, de proteção de denunciantes).',
      timeline: '1-3 meses',
    },
  },
  {
    id: 'rec-human-rights-remediation', pillar: 'S', effort: 'high', indicators: ['severe_hr_incidents'],
    en: {
      title: 'Remediate severe human rights incidents',
      body: 'Investigate each confirmed incident with independent support, provide remedy to the people affected, fix the root causes in recruitment, subcontracting and supervision, and report the actions taken (VSME C7).',
      timeline: '6-12 months',
    },
    pt: {
      title: 'Remediar incidentes graves de direitos humanos',
      body: 'Investigue cada incidente confirmado com apoio independente, repare os danos causados às pessoas afetadas, corrija as causas de raiz no recrutamento, na subcontratação e na supervisão, e reporte as ações tomadas (VSME C7).',
      timeline: '6-12 meses',
    },
  },
  {
    id: 'rec-sustainability-policies', pillar: 'G', effort: 'low', indicators: ['sustainability_policies'],
    en: {
      title: 'Formalise your sustainability policies',
      body: 'Adopt short written policies, each with an accountable person and targets, for your material topics (at least climate change, own workforce and business conduct) and review them every year (VSME B2).',
      timeline: '1-3 months',
    },
    pt: {
      title: 'Formalizar as políticas de sustentabilidade',
      body: 'Adote políticas escritas curtas, cada uma com um responsável e metas, para os seus temas materiais (pelo menos alterações climáticas, trabalhadores próprios e conduta empresarial) e reveja-as todos os anos (VSME B2).',
      timeline: '1-3 meses',
    },
  },
  {
    id: 'rec-certifications', pillar: 'G', effort: 'high', indicators: ['certifications'],
    en: {
      title: 'Certify your management systems',
      body: 'Start with the system closest to your main risks (ISO 14001 or EMAS for the environment, ISO 45001 for health and safety, ISO 50001 for energy), building on any ISO 9001 processes you already run.',
      timeline: '12-18 months',
    },
    pt: {
      title: 'Certificar os sistemas de gestão',
      body: 'Comece pelo sistema mais próximo dos seus principais riscos (ISO 14001 ou EMAS para o ambiente, ISO 45001 para a segurança e saúde no trabalho, ISO 50001 para a energia), aproveitando os processos ISO 9001 que já tenha.',
      timeline: '12-18 meses',
    },
  },
  {
    id: 'rec-anti-corruption', pillar: 'G', effort: 'medium', indicators: ['corruption_convictions'],
    en: {
      title: 'Put an anti-corruption programme in place',
      body: 'Adopt a corruption risk prevention plan, a code of conduct, training and a whistleblowing channel (mandatory from 50 employees under the General Regime for the Prevention of Corruption, Decree-Law 109-E/2021) and remove the causes of any conviction or fine.',
      timeline: '3-6 months',
    },
    pt: {
      title: 'Implementar um programa anticorrupção',
      body: 'Adote um plano de prevenção de riscos de corrupção, um código de conduta, formação e um canal de denúncia (obrigatórios a partir de 50 trabalhadores pelo Regime Geral da Prevenção da Corrupção, Decreto-Lei n.º 109-E/2021) e elimine as causas de qualquer condenação ou coima.',
      timeline: '3-6 meses',
    },
  },
  {
    id: 'rec-board-diversity', pillar: 'G', effort: 'medium', indicators: ['governance_gender_balance_pct'],
    en: {
      title: 'Improve gender balance in the governance body',
      body: 'When seats fall vacant, use transparent selection criteria and shortlists with candidates of both genders, aiming for at least 40% of the under-represented gender, the reference set by Directive (EU) 2022/2381.',
      timeline: '12-24 months',
    },
    pt: {
      title: 'Melhorar o equilíbrio de género no órgão de administração',
      body: 'Quando houver lugares vagos, use critérios de seleção transparentes e listas com candidatos de ambos os géneros, procurando atingir pelo menos 40% do género sub-representado, a referência da Diretiva (UE) 2022/2381.',
      timeline: '12-24 meses',
    },
  },
  {
    id: 'rec-management-diversity', pillar: 'G', effort: 'medium', indicators: ['management_gender_balance_pct'],
    en: {
      title: 'Promote gender balance in management',
      body: 'Set a target of at least 40% of the under-represented gender among managers, review promotion criteria for bias, offer leadership mentoring and make flexible working available in management roles.',
      timeline: '6-12 months',
    },
    pt: {
      title: 'Promover o equilíbrio de género nas chefias',
      body: 'Fixe uma meta de pelo menos 40% do género sub-representado nas chefias, reveja os critérios de promoção para eliminar enviesamentos, ofereça mentoria de liderança e permita o trabalho flexível em funções de chefia.',
      timeline: '6-12 meses',
    },
  },
  {
    id: 'rec-controversial-revenue', pillar: 'G', effort: 'high', indicators: ['controversial_revenue_pct'],
    en: {
      title: 'Reduce revenue from controversial activities',
      body: 'Plan a phase-out of revenue from fossil fuels, tobacco, controversial weapons or agrochemicals, or at least a path below the exclusion thresholds of the EU Paris-aligned benchmarks (Delegated Regulation (EU) 2020/1818), and disclose the share (VSME C8).',
      timeline: '24-36 months',
    },
    pt: {
      title: 'Reduzir as receitas de atividades controversas',
      body: 'Planeie o abandono progressivo das receitas de combustíveis fósseis, tabaco, armas controversas ou produtos agroquímicos, ou pelo menos uma trajetória abaixo dos limiares de exclusão dos índices de referência alinhados com Paris da UE (Regulamento Delegado (UE) 2020/1818), e divulgue a percentagem (VSME C8).',
      timeline: '24-36 meses',
    },
  },
];

// ─────────────────────── Answer-dependent recommendation texts ───────────────────────
// (esg-1.1.0) A recommendation's default text (REC_DEFS, frozen: esg-1.0.0 renders with it) is
// replaced by a variant when the answers make part of it wrong or redundant: a certification the
// company holds is never named as one to start, what the answers show done is never asked for.
// pickCase (VARIANT_CASES) picks the variant from the answers; docs/esg.md §7.1 lists the rules.

/** "a, b and c" / "a, b e c" */
function listOf(items: readonly string[], and: string): string {
  return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} ${and} ${items[items.length - 1]}`;
}

/**
 * rec-certifications for the certifications held, as a mask of CERT_LETTERS (bit k: letter k):
 * E (ISO 14001 or EMAS), O (ISO 45001), N (ISO 50001) — the systems the default proposes — and
 * the others the questionnaire lists (ISO 37001, SA8000, NP 4469, B Corp, ISO 9001). The held ones
 * are named as the company's own, kept and integrated; only the E/O/N systems not held are proposed.
 */
const CERT_LETTERS = ['e', 'o', 'n', 'b', 's', 'p', 'c', 'q'] as const;
/** per letter: the certification options it stands for, and how a held one is named (en, pt) */
const CERT_HELD: readonly { options: readonly string[]; en: string; pt: string }[] = [
  { options: ['iso_14001', 'emas'], en: 'your environmental management system', pt: 'o seu sistema de gestão ambiental' },
  { options: ['iso_45001'], en: 'your ISO 45001 health and safety system', pt: 'o seu sistema ISO 45001 de segurança e saúde no trabalho' },
  { options: ['iso_50001'], en: 'your ISO 50001 energy management system', pt: 'o seu sistema ISO 50001 de gestão de energia' },
  { options: ['iso_37001'], en: 'your ISO 37001 anti-bribery management system', pt: 'o seu sistema ISO 37001 de gestão antissuborno' },
  { options: ['sa8000'], en: 'your SA8000 social accountability system', pt: 'o seu sistema SA8000 de responsabilidade social' },
  { options: ['np_4469'], en: 'your NP 4469 social responsibility management system', pt: 'o seu sistema NP 4469 de gestão da responsabilidade social' },
  { options: ['b_corp'], en: 'your B Corp certification', pt: 'a sua certificação B Corp' },
  { options: ['iso_9001'], en: 'your ISO 9001 quality management system', pt: 'o seu sistema ISO 9001 de gestão da qualidade' },
];
/** the bits of the systems the default text proposes (E, O, N) */
const CERT_EON = 7;
const certName = (mask: number) => `holds_${CERT_LETTERS.filter((_, k) => mask & (1 << k)).join('')}`;
/** whether the certifications of `mask` score below MEETS (the recommendation can be made): the scoring rule's points, the most per group */
function certificationsWeak(mask: number): boolean {
  const rule = RULES.certifications!.rule as Extract<Rule, { kind: 'points' }>;
  const groups = new Map<string, number>();
  CERT_HELD.forEach((c, k) => {
    if (!(mask & (1 << k))) return;
    for (const o of c.options) {
      const [g, pts] = rule.points[o]!;
      groups.set(g, Math.max(groups.get(g) ?? 0, pts));
    }
  });
  let s = 0;
  for (const pts of groups.values()) s += pts;
  return s < MEETS - 1e-9;
}
/**
 * The variant of each mask (index: mask; 256 cases): its own when the recommendation can be made
 * with it (and for every E/O/N-only mask, keeping the rule total), else its E/O/N part's.
 */
const CERT_CASES: readonly string[] = Array.from({ length: 256 }, (_, mask) =>
  mask === 0 ? 'default' : (mask & ~CERT_EON) === 0 || certificationsWeak(mask) ? certName(mask) : (mask & CERT_EON) === 0 ? 'default' : certName(mask & CERT_EON));

function certificationVariant(mask: number): RecVariant {
  const e = !!(mask & 1), o = !!(mask & 2), n = !!(mask & 4);
  const others = (mask & ~CERT_EON) !== 0;
  const heldEn = CERT_HELD.filter((_, k) => mask & (1 << k)).map((c) => c.en);
  const heldPt = CERT_HELD.filter((_, k) => mask & (1 << k)).map((c) => c.pt);
  const missEn: [list: string, single: string][] = [];
  const missPt: [list: string, single: string][] = [];
  if (!e) {
    missEn.push(['ISO 14001 or EMAS for the environment', 'ISO 14001 or EMAS certification for the environment']);
    missPt.push(['ISO 14001 ou EMAS para o ambiente', 'a certificação ISO 14001 ou EMAS para o ambiente']);
  }
  if (!o) {
    missEn.push(['ISO 45001 for health and safety', 'ISO 45001 certification for health and safety']);
    missPt.push(['ISO 45001 para a segurança e saúde no trabalho', 'a certificação ISO 45001 para a segurança e saúde no trabalho']);
  }
  if (!n) {
    missEn.push(['ISO 50001 for energy', 'ISO 50001 certification for energy']);
    missPt.push(['ISO 50001 para a energia', 'a certificação ISO 50001 para a energia']);
  }
  const one = heldEn.length === 1;
  const nextEn =
    missEn.length === 0 ? 'Then extend them to the areas they do not cover yet'
    : missEn.length === 1 ? `Then consider adding ${missEn[0]![1]}`
    : `Then add the certification closest to your remaining risks: ${missEn.map((m) => m[0]).join(', or ')}`;
  const nextPt =
    missPt.length === 0 ? 'Depois, alargue-os às áreas que ainda não abrangem'
    : missPt.length === 1 ? `Depois, pondere acrescentar ${missPt[0]![1]}`
    : `Depois, acrescente a certificação mais próxima dos riscos que restam: ${missPt.map((m) => m[0]).join(', ou ')}`;
  if (!others) {
    // E/O/N only (the esg-1.1.0 texts as first written)
    const keepEn = `Keep ${listOf(heldEn, 'and')} certified (surveillance and recertification audits, scope extended to all sites and activities) and ${one ? 'integrate it with your other processes' : 'integrate them into one management system'}.`;
    const keepPt = `Mantenha ${one ? 'certificado' : 'certificados'} ${listOf(heldPt, 'e')} (auditorias de acompanhamento e de renovação, âmbito alargado a todas as instalações e atividades) e ${one ? 'integre-o nos restantes processos' : 'integre-os num único sistema de gestão'}.`;
    return {
      en: { title: 'Build on your certified management systems', body: `${keepEn} ${nextEn}, building on any ISO 9001 processes you already run.` },
      pt: { title: 'Consolidar os sistemas de gestão certificados', body: `${keepPt} ${nextPt}, aproveitando os processos ISO 9001 que já tenha.` },
    };
  }
  // other certifications held (ISO 37001, SA8000, NP 4469, B Corp, ISO 9001): named and built on
  const keepEn = `Keep ${listOf(heldEn, 'and')} current (surveillance and recertification audits, scope extended to all sites and activities) and ${one ? 'use its policy, risk assessment, internal audit and management review' : 'run them as one integrated system, with a shared policy, risk assessment, internal audit and management review'}.`;
  const keepPt = `Mantenha em vigor ${listOf(heldPt, 'e')} (auditorias de acompanhamento e de renovação, âmbito alargado a todas as instalações e atividades) e ${one ? 'aproveite a sua política, avaliação de riscos, auditoria interna e revisão pela gestão' : 'gira-os como um único sistema integrado, com política, avaliação de riscos, auditoria interna e revisão pela gestão comuns'}.`;
  return {
    en: { title: 'Build on the certifications you hold', body: `${keepEn} ${nextEn}, on the same structure.` },
    pt: { title: 'Partir das certificações que já detém', body: `${keepPt} ${nextPt}, sobre a mesma estrutura.` },
  };
}

/**
 * rec-anti-corruption without ISO 37001: what the answers show in place is not asked for again
 * (a code of conduct: topics in human_rights_policy, or SA8000; a business conduct policy, B2 /
 * ESRS G1, which covers corruption; a complaints channel: its grievance_mechanism, or SA8000).
 */
function antiCorruptionVariant(code: boolean, channel: boolean, conductPolicy = false): RecVariant {
  const hasCode = code || conductPolicy;
  const adoptEn = ['a corruption risk prevention plan', ...(hasCode ? [] : ['a code of conduct']), 'training', ...(channel ? [] : ['a whistleblowing channel'])];
  const adoptPt = ['um plano de prevenção de riscos de corrupção', ...(hasCode ? [] : ['um código de conduta']), 'formação', ...(channel ? [] : ['um canal de denúncia'])];
  const moreEn = [
    ...(conductPolicy ? ['check that your business conduct policy, as your code of conduct, sets out the rules on corruption and bribery and the disciplinary sanctions for breaching them']
      : code ? ['extend your code of conduct (or human rights policy) to corruption and bribery'] : []),
    ...(channel ? ['make sure your complaints channel also takes reports of corruption'] : []),
  ];
  const morePt = [
    ...(conductPolicy ? ['verifique se a sua política de conduta empresarial, enquanto código de conduta, estabelece as regras sobre corrupção e suborno e as sanções disciplinares pela sua violação']
      : code ? ['alargue o seu código de conduta (ou política de direitos humanos) à corrupção e ao suborno'] : []),
    ...(channel ? ['garanta que o seu canal de denúncia também recebe participações de corrupção'] : []),
  ];
  return {
    en: { body: `Adopt ${listOf(adoptEn, 'and')} (mandatory from 50 employees under the General Regime for the Prevention of Corruption, Decree-Law 109-E/2021), ${moreEn.join(', ')}, and remove the causes of any conviction or fine.` },
    pt: { body: `Adote ${listOf(adoptPt, 'e')} (obrigatórios a partir de 50 trabalhadores pelo Regime Geral da Prevenção da Corrupção, Decreto-Lei n.º 109-E/2021), ${morePt.join(', ')} e elimine as causas de qualquer condenação ou coima.` },
  };
}

/** Variants by recommendation id (the default, REC_DEFS' text, is not listed), in the catalogue's order (pinned with it). */
const REC_VARIANTS: Readonly<Record<string, Readonly<Record<string, RecVariant>>>> = {
  'rec-energy-efficiency': {
    iso_50001: {
      en: { body: 'Use your ISO 50001 energy management system to go further: update its energy review, set a tighter yearly MWh per €M target, point its action plan at the largest consumers (compressed air, HVAC, lighting, process heat, vehicle fleet) and verify the savings with metered data. Companies consuming more than 500 toe a year fall under the SGCIE scheme (Decree-Law 71/2008).' },
      pt: { body: 'Use o seu sistema de gestão de energia ISO 50001 para ir mais longe: atualize a revisão energética, fixe uma meta anual de MWh por M€ mais exigente, oriente o plano de ação para os maiores consumidores (ar comprimido, AVAC, iluminação, calor de processo, frota) e verifique as poupanças com dados medidos. As empresas com consumos acima de 500 tep por ano estão abrangidas pelo SGCIE (Decreto-Lei n.º 71/2008).' },
    },
  },
  'rec-renewable-energy': {
    no_scope1: {
      en: { body: 'Your Scope 1 emissions are zero, so no fossil fuel is burnt on your sites: the gap is the electricity you buy. Buy electricity backed by renewable guarantees of origin, install rooftop solar for self-consumption (UPAC) or join a renewable energy community under Decree-Law 15/2022. Report renewable MWh separately from fossil MWh (VSME B3).' },
      pt: { body: 'As suas emissões de âmbito 1 são nulas, pelo que não queima combustíveis fósseis nas suas instalações: a diferença está na eletricidade que compra. Contrate eletricidade com garantias de origem renováveis, instale painéis solares para autoconsumo (UPAC) ou adira a uma comunidade de energia renovável ao abrigo do Decreto-Lei n.º 15/2022. Reporte os MWh renováveis separados dos fósseis (VSME B3).' },
    },
  },
  'rec-ghg-inventory': {
    scope1_known: {
      en: { title: 'Complete your inventory with Scope 2 emissions', body: 'You already report Scope 1: add location-based Scope 2 by collecting a year of electricity (and any purchased heat or steam) invoices, converting them to MWh and applying the average Portuguese grid emission factor, and report it in tCO2e, as VSME B3 requires.' },
      pt: { title: 'Completar o inventário com as emissões de âmbito 2', body: 'Já reporta o âmbito 1: acrescente o âmbito 2 baseado na localização, reunindo um ano de faturas de eletricidade (e de calor ou vapor adquiridos, se os houver), convertendo-as em MWh e aplicando o fator de emissão médio da rede portuguesa, e reporte-o em tCO2e, como exige o VSME B3.' },
    },
    scope2_known: {
      en: { title: 'Complete your inventory with Scope 1 emissions', body: 'You already report Scope 2: add Scope 1 by collecting a year of invoices for the fuels burnt in your own boilers, furnaces and vehicles and for refrigerant top-ups, converting them to MWh or kg and applying published emission factors (national factors from the APA inventory), and report it in tCO2e, as VSME B3 requires.' },
      pt: { title: 'Completar o inventário com as emissões de âmbito 1', body: 'Já reporta o âmbito 2: acrescente o âmbito 1, reunindo um ano de faturas dos combustíveis queimados nas suas caldeiras, fornos e viaturas e das recargas de gases refrigerantes, convertendo-as em MWh ou kg e aplicando fatores de emissão publicados (fatores nacionais do inventário da APA), e reporte-o em tCO2e, como exige o VSME B3.' },
    },
    intensity_known: {
      en: { title: 'Disclose your Scope 1 and 2 emissions', body: 'You already report a GHG intensity, so the totals behind it exist: disclose gross Scope 1 and location-based Scope 2 emissions in tCO2e as separate figures, with the emission factors used, as VSME B3 requires.' },
      pt: { title: 'Divulgar as emissões de âmbito 1 e 2', body: 'Já reporta uma intensidade carbónica, pelo que os totais que lhe dão origem existem: divulgue separadamente as emissões brutas de âmbito 1 e as de âmbito 2 baseadas na localização, em tCO2e, com os fatores de emissão usados, como exige o VSME B3.' },
    },
  },
  'rec-decarbonise-operations': {
    scope1_low: {
      en: { body: 'Your direct (Scope 1) emissions are zero or a small share of the total, so most of your footprint is the electricity you buy: cut consumption in your largest electricity uses, produce your own solar electricity (UPAC), buy the rest with renewable guarantees of origin and report market-based Scope 2 beside the location-based figure. Track tCO2e per €M of turnover against your sector benchmark every year.' },
      pt: { body: 'As suas emissões diretas (âmbito 1) são nulas ou uma pequena parte do total, pelo que a maior parte da sua pegada é a eletricidade que compra: reduza o consumo nos maiores usos de eletricidade, produza a sua própria eletricidade solar (UPAC), compre a restante com garantias de origem renováveis e reporte o âmbito 2 baseado no mercado ao lado do valor baseado na localização. Acompanhe todos os anos as tCO2e por M€ de volume de negócios face à referência do seu setor.' },
    },
    renewable: {
      en: { body: 'Your energy is already renewable or nearly so: what remains are direct emissions and the grid factor applied to the electricity you buy. Find and replace any remaining fossil fuel use (boilers, furnaces, vehicles), stop refrigerant leaks and move to low-GWP refrigerants, cut process emissions and electricity consumption, and report market-based Scope 2 beside the location-based figure so that your renewable contracts show. Track tCO2e per €M of turnover against your sector benchmark every year.' },
      pt: { body: 'A sua energia já é renovável ou quase: o que resta são as emissões diretas e o fator da rede aplicado à eletricidade que compra. Identifique e substitua os usos de combustíveis fósseis que ainda existam (caldeiras, fornos, viaturas), elimine as fugas de gases refrigerantes e passe para refrigerantes de baixo PAG, reduza as emissões de processo e o consumo de eletricidade, e reporte o âmbito 2 baseado no mercado ao lado do valor baseado na localização, para que os seus contratos renováveis fiquem visíveis. Acompanhe todos os anos as tCO2e por M€ de volume de negócios face à referência do seu setor.' },
    },
    scope1_low_renewable: {
      en: { body: 'Your direct (Scope 1) emissions are zero or small and your energy is already renewable or nearly so: what remains is mostly the average grid factor applied to the electricity you draw from the grid. Reduce that draw (efficiency in your largest electricity uses, on-site solar with storage for self-consumption), report market-based Scope 2 beside the location-based figure so that your renewable contracts show, and extend your inventory to Scope 3 (purchased goods, transport, business travel), where most of your remaining footprint is likely to be. Track tCO2e per €M of turnover against your sector benchmark every year.' },
      pt: { body: 'As suas emissões diretas (âmbito 1) são nulas ou reduzidas e a sua energia já é renovável ou quase: o que resta é sobretudo o fator médio da rede aplicado à eletricidade que retira da rede. Reduza esse consumo (eficiência nos maiores usos de eletricidade, produção solar para autoconsumo com armazenamento), reporte o âmbito 2 baseado no mercado ao lado do valor baseado na localização, para que os seus contratos renováveis fiquem visíveis, e alargue o inventário ao âmbito 3 (bens adquiridos, transportes, viagens de negócios), onde deverá estar a maior parte da pegada restante. Acompanhe todos os anos as tCO2e por M€ de volume de negócios face à referência do seu setor.' },
    },
    zero: {
      en: { body: 'Your reported Scope 1 and Scope 2 emissions are both zero, so your GHG intensity is 0: report it as such, keep new equipment and vehicles free of fossil fuels and extend your inventory to Scope 3 (purchased goods, transport, business travel).' },
      pt: { body: 'As emissões de âmbito 1 e de âmbito 2 que reportou são ambas nulas, pelo que a sua intensidade carbónica é 0: reporte-a assim, mantenha os novos equipamentos e viaturas livres de combustíveis fósseis e alargue o inventário ao âmbito 3 (bens adquiridos, transportes, viagens de negócios).' },
    },
    renewable_partial: {
      en: { body: 'Tackle the largest sources in your inventory: replace fossil boilers and furnaces with heat pumps or electric alternatives, move the fleet to electric vehicles, stop refrigerant leaks, and extend your renewable share, already substantial, to all the electricity you use (own solar, a renewable supply contract or guarantees of origin), so that the uses you electrify run on renewable power. Track tCO2e per €M of turnover against your sector benchmark every year.' },
      pt: { body: 'Ataque as maiores fontes do seu inventário: substitua caldeiras e fornos a combustíveis fósseis por bombas de calor ou alternativas elétricas, eletrifique a frota, elimine fugas de gases refrigerantes e alargue a quota renovável, já significativa, a toda a eletricidade que consome (produção solar própria, contrato de fornecimento renovável ou garantias de origem), para que os usos que eletrificar funcionem com energia renovável. Acompanhe todos os anos as tCO2e por M€ de volume de negócios face à referência do seu setor.' },
    },
    scope1_low_renewable_partial: {
      en: { body: 'Your direct (Scope 1) emissions are zero or a small share of the total and much of your energy is already renewable, so what remains is mostly the electricity you still buy from fossil sources: cut consumption in your largest electricity uses, extend your renewable share to all electricity (own solar for self-consumption, UPAC, and a renewable supply contract or guarantees of origin for the rest) and report market-based Scope 2 beside the location-based figure. Track tCO2e per €M of turnover against your sector benchmark every year.' },
      pt: { body: 'As suas emissões diretas (âmbito 1) são nulas ou uma pequena parte do total e grande parte da sua energia já é renovável, pelo que o que resta é sobretudo a eletricidade de origem fóssil que ainda compra: reduza o consumo nos maiores usos de eletricidade, alargue a quota renovável a toda a eletricidade (produção solar para autoconsumo, UPAC, e contrato de fornecimento renovável ou garantias de origem para a restante) e reporte o âmbito 2 baseado no mercado ao lado do valor baseado na localização. Acompanhe todos os anos as tCO2e por M€ de volume de negócios face à referência do seu setor.' },
    },
  },
  'rec-ghg-target': {
    raise: {
      en: { title: 'Raise your emission reduction target', body: 'Raise your adopted target to a cut of at least 42% in Scope 1 and 2 emissions by 2030 against a recent base year (the 1.5 °C-aligned near-term pace; the SBTi streamlined route for SMEs can validate it) and publish the base year, target year and main actions (VSME C3).' },
      pt: { title: 'Reforçar a meta de redução de emissões', body: 'Reforce a meta adotada para uma redução das emissões de âmbito 1 e 2 de pelo menos 42% até 2030 face a um ano de referência recente (ritmo compatível com 1,5 °C; a via simplificada da SBTi para PME permite validá-la) e publique o ano de referência, o ano-alvo e as principais ações (VSME C3).' },
    },
    zero_emissions: {
      en: { title: 'Commit to keeping your emissions at zero', body: 'Your reported Scope 1 and 2 emissions are zero, so a percentage cut does not apply: adopt and publish a commitment to keep them at zero (no fossil fuels in new equipment or vehicles), and set a reduction target for your largest Scope 3 sources instead (VSME C3).' },
      pt: { title: 'Comprometer-se a manter as emissões nulas', body: 'As emissões de âmbito 1 e 2 que reportou são nulas, pelo que uma redução percentual não se aplica: adote e publique o compromisso de as manter nulas (sem combustíveis fósseis em novos equipamentos ou viaturas) e fixe antes uma meta de redução para as suas maiores fontes de âmbito 3 (VSME C3).' },
    },
  },
  'rec-pollution-reporting': {
    ems: {
      en: { body: 'Your certified environmental management system already monitors your emissions to air, water and soil: take the figures from its monitoring records and from your environmental permit or PRTR returns, total them in kg per pollutant and disclose them. With such a system in place VSME B4 normally applies, so "not_applicable" is unlikely to be the right answer.' },
      pt: { body: 'O seu sistema de gestão ambiental certificado já monitoriza as emissões para o ar, a água e o solo: retire os valores dos respetivos registos de monitorização e da licença ambiental ou das declarações PRTR, some-os em kg por poluente e divulgue-os. Com um sistema destes em funcionamento, o VSME B4 aplica-se normalmente, pelo que "not_applicable" dificilmente será a resposta adequada.' },
    },
  },
  'rec-biodiversity': {
    sites_known: {
      en: { body: 'Assess the impact of each of the sites you reported in or near biodiversity-sensitive areas (Natura 2000 and other protected areas), agree the conditions that apply with the ICNF where needed and adopt mitigation measures such as buffer zones, native planting and limits on lighting, noise and run-off.' },
      pt: { body: 'Avalie o impacte de cada uma das instalações que reportou dentro ou junto de áreas sensíveis para a biodiversidade (Rede Natura 2000 e outras áreas protegidas), articule com o ICNF as condicionantes aplicáveis quando necessário e adote medidas de mitigação como zonas-tampão, plantação de espécies autóctones e limitação da iluminação, do ruído e das escorrências.' },
    },
  },
  'rec-waste-tracking': {
    share_known: {
      en: { body: 'You already report the share of waste you recycle, so your e-GAR waste transport guides and the annual MIRR in SILiAmb hold the weights: add them up to the yearly total in tonnes, split hazardous from non-hazardous waste and report it (VSME B7).' },
      pt: { body: 'Já reporta a percentagem de resíduos que recicla, pelo que as suas e-GAR e o MIRR anual na plataforma SILiAmb contêm os pesos: some-os para obter o total anual em toneladas, separe os resíduos perigosos dos não perigosos e reporte-o (VSME B7).' },
    },
  },
  'rec-health-safety': {
    reported: {
      en: { body: 'Update the risk assessment required by Law 102/2009, investigate every accident and near miss, train workers and supervisors, provide and enforce protective equipment, and consider an ISO 45001 management system. Set a yearly target for your accident rate.' },
      pt: { body: 'Atualize a avaliação de riscos exigida pela Lei n.º 102/2009, investigue todos os acidentes e quase-acidentes, dê formação a trabalhadores e chefias, forneça equipamentos de proteção e garanta o seu uso, e considere um sistema de gestão ISO 45001. Fixe uma meta anual para a taxa de acidentes.' },
    },
    iso_45001: {
      en: { body: 'Use your ISO 45001 management system: review the risk assessment required by Law 102/2009, investigate every accident and near miss, act on the findings of its internal audits and management review, train workers and supervisors, and enforce the use of protective equipment. Report accidents per 200,000 hours worked and fatalities (VSME B9).' },
      pt: { body: 'Apoie-se no seu sistema de gestão ISO 45001: reveja a avaliação de riscos exigida pela Lei n.º 102/2009, investigue todos os acidentes e quase-acidentes, atue sobre as conclusões das auditorias internas e da revisão pela gestão, dê formação a trabalhadores e chefias e garanta o uso dos equipamentos de proteção. Reporte os acidentes por 200 000 horas trabalhadas e as mortes (VSME B9).' },
    },
    iso_45001_reported: {
      en: { body: 'Use your ISO 45001 management system: review the risk assessment required by Law 102/2009, investigate every accident and near miss, act on the findings of its internal audits and management review, train workers and supervisors, and enforce the use of protective equipment. Include a yearly accident-rate target in its objectives.' },
      pt: { body: 'Apoie-se no seu sistema de gestão ISO 45001: reveja a avaliação de riscos exigida pela Lei n.º 102/2009, investigue todos os acidentes e quase-acidentes, atue sobre as conclusões das auditorias internas e da revisão pela gestão, dê formação a trabalhadores e chefias e garanta o uso dos equipamentos de proteção. Inclua nos objetivos do sistema uma meta anual para a taxa de acidentes.' },
    },
    rate_reported: {
      en: { body: 'Update the risk assessment required by Law 102/2009, investigate every accident and near miss, train workers and supervisors, provide and enforce protective equipment, and consider an ISO 45001 management system. Set a yearly target for your accident rate, and also report the number of fatalities from work-related injuries and ill health, zero included (VSME B9).' },
      pt: { body: 'Atualize a avaliação de riscos exigida pela Lei n.º 102/2009, investigue todos os acidentes e quase-acidentes, dê formação a trabalhadores e chefias, forneça equipamentos de proteção e garanta o seu uso, e considere um sistema de gestão ISO 45001. Fixe uma meta anual para a taxa de acidentes e reporte também o número de mortes por acidentes de trabalho e doenças profissionais, mesmo que seja zero (VSME B9).' },
    },
    fatalities_reported: {
      en: { body: 'Update the risk assessment required by Law 102/2009, investigate every accident and near miss, train workers and supervisors, provide and enforce protective equipment, and consider an ISO 45001 management system. Also report your accident rate, per 200,000 hours worked (VSME B9), and set a yearly target for it.' },
      pt: { body: 'Atualize a avaliação de riscos exigida pela Lei n.º 102/2009, investigue todos os acidentes e quase-acidentes, dê formação a trabalhadores e chefias, forneça equipamentos de proteção e garanta o seu uso, e considere um sistema de gestão ISO 45001. Reporte também a taxa de acidentes, por 200 000 horas trabalhadas (VSME B9), e fixe-lhe uma meta anual.' },
    },
    iso_45001_rate_reported: {
      en: { body: 'Use your ISO 45001 management system: review the risk assessment required by Law 102/2009, investigate every accident and near miss, act on the findings of its internal audits and management review, train workers and supervisors, and enforce the use of protective equipment. Include a yearly accident-rate target in its objectives, and also report the number of fatalities from work-related injuries and ill health, zero included (VSME B9).' },
      pt: { body: 'Apoie-se no seu sistema de gestão ISO 45001: reveja a avaliação de riscos exigida pela Lei n.º 102/2009, investigue todos os acidentes e quase-acidentes, atue sobre as conclusões das auditorias internas e da revisão pela gestão, dê formação a trabalhadores e chefias e garanta o uso dos equipamentos de proteção. Inclua nos objetivos do sistema uma meta anual para a taxa de acidentes e reporte também o número de mortes por acidentes de trabalho e doenças profissionais, mesmo que seja zero (VSME B9).' },
    },
    iso_45001_fatalities_reported: {
      en: { body: 'Use your ISO 45001 management system: review the risk assessment required by Law 102/2009, investigate every accident and near miss, act on the findings of its internal audits and management review, train workers and supervisors, and enforce the use of protective equipment. Also report your accident rate per 200,000 hours worked (VSME B9), from its incident records, and include a yearly target for it in its objectives.' },
      pt: { body: 'Apoie-se no seu sistema de gestão ISO 45001: reveja a avaliação de riscos exigida pela Lei n.º 102/2009, investigue todos os acidentes e quase-acidentes, atue sobre as conclusões das auditorias internas e da revisão pela gestão, dê formação a trabalhadores e chefias e garanta o uso dos equipamentos de proteção. Reporte também a taxa de acidentes por 200 000 horas trabalhadas (VSME B9), a partir dos registos de incidentes do sistema, e inclua nos seus objetivos uma meta anual para ela.' },
    },
  },
  'rec-gender-pay-gap': {
    gap_known: {
      en: { body: 'Analyse the gap you reported by job category with objective job-evaluation criteria (Law 60/2018), correct unjustified differences and prepare for the pay-transparency rules of Directive (EU) 2023/970, which require a joint pay assessment when an unexplained gap of 5% or more persists.' },
      pt: { body: 'Analise a disparidade que reportou por categoria profissional com critérios objetivos de avaliação de funções (Lei n.º 60/2018), corrija as diferenças injustificadas e prepare-se para as regras de transparência salarial da Diretiva (UE) 2023/970, que exigem uma avaliação conjunta quando persiste uma disparidade injustificada de 5% ou mais.' },
    },
  },
  'rec-collective-bargaining': {
    partial: {
      en: { body: 'Extend the collective agreement that already covers part of your staff, or the extension ordinance that applies to your activity, to all employees and engage with worker representatives; the EU Adequate Minimum Wages Directive (2022/2041) uses 80% coverage as its reference level.' },
      pt: { body: 'Alargue a todos os trabalhadores a convenção coletiva que já abrange parte do pessoal, ou a portaria de extensão aplicável à sua atividade, e dialogue com os representantes dos trabalhadores; a Diretiva (UE) 2022/2041, relativa a salários mínimos adequados, usa 80% de cobertura como nível de referência.' },
    },
  },
  'rec-human-rights-policy': {
    topics: {
      en: { title: 'Complete your human rights policy and open a complaints channel', body: 'Extend your code of conduct so that it covers all five topics (child labour, forced labour, human trafficking, discrimination and accident prevention), and open a confidential complaints channel for staff (mandatory from 50 employees under Law 93/2021 on the protection of whistleblowers).' },
      pt: { title: 'Completar a política de direitos humanos e criar um canal de denúncia', body: 'Alargue o seu código de conduta para que abranja os cinco temas (trabalho infantil, trabalho forçado, tráfico de seres humanos, discriminação e prevenção de acidentes) e crie um canal de denúncia confidencial para os trabalhadores (obrigatório a partir de 50 trabalhadores pela Lei n.º 93/2021, de proteção de denunciantes).' },
    },
    channel: {
      en: { title: 'Adopt a human rights policy', body: 'Publish a code of conduct covering child labour, forced labour, human trafficking, discrimination and accident prevention, and make sure your complaints channel takes reports on each of these topics, confidentially.' },
      pt: { title: 'Adotar uma política de direitos humanos', body: 'Publique um código de conduta que abranja trabalho infantil, trabalho forçado, tráfico de seres humanos, discriminação e prevenção de acidentes, e garanta que o seu canal de denúncia recebe, com confidencialidade, participações sobre cada um destes temas.' },
    },
    topics_channel: {
      en: { title: 'Complete your human rights policy', body: 'Extend your code of conduct so that it covers all five topics (child labour, forced labour, human trafficking, discrimination and accident prevention), and make sure your complaints channel takes reports on each of them, confidentially.' },
      pt: { title: 'Completar a política de direitos humanos', body: 'Alargue o seu código de conduta para que abranja os cinco temas (trabalho infantil, trabalho forçado, tráfico de seres humanos, discriminação e prevenção de acidentes) e garanta que o seu canal de denúncia recebe, com confidencialidade, participações sobre cada um deles.' },
    },
    sa8000: {
      en: { title: 'Publish your SA8000 commitments as your human rights policy', body: 'Your SA8000 certification already requires a policy on child labour, forced labour (human trafficking included), discrimination and health and safety, and a confidential complaints procedure for staff: publish those commitments as your human rights policy, make sure the procedure meets Law 93/2021 on the protection of whistleblowers (which requires a whistleblowing channel from 50 employees), and report the topics they cover in this questionnaire (VSME C6).' },
      pt: { title: 'Publicar os seus compromissos SA8000 como política de direitos humanos', body: 'A sua certificação SA8000 já exige uma política sobre trabalho infantil, trabalho forçado (incluindo o tráfico de seres humanos), discriminação e segurança e saúde, e um procedimento confidencial de reclamações para os trabalhadores: publique esses compromissos como a sua política de direitos humanos, garanta que o procedimento cumpre a Lei n.º 93/2021, de proteção de denunciantes (que exige um canal de denúncia a partir de 50 trabalhadores), e reporte neste questionário os temas que abrangem (VSME C6).' },
    },
  },
  'rec-sustainability-policies': {
    partial: {
      en: { title: 'Complete your sustainability policies', body: 'Complete your written policies, each with an accountable person and targets, so that they cover your material topics, including at least climate change, own workforce and business conduct, and review them every year (VSME B2).' },
      pt: { title: 'Completar as políticas de sustentabilidade', body: 'Complete as suas políticas escritas, cada uma com um responsável e metas, para que abranjam os seus temas materiais, incluindo pelo menos as alterações climáticas, os trabalhadores próprios e a conduta empresarial, e reveja-as todos os anos (VSME B2).' },
    },
    core_done: {
      en: { title: 'Extend your sustainability policies', body: 'You already have policies on climate change, own workforce and business conduct: add short written policies, each with an accountable person and targets, for your other material topics (for example pollution, circular economy or value chain workers), and review them all every year (VSME B2).' },
      pt: { title: 'Alargar as políticas de sustentabilidade', body: 'Já tem políticas para as alterações climáticas, os trabalhadores próprios e a conduta empresarial: adote políticas escritas curtas, cada uma com um responsável e metas, para os seus outros temas materiais (por exemplo poluição, economia circular ou trabalhadores da cadeia de valor) e reveja-as todas anualmente (VSME B2).' },
    },
  },
  'rec-certifications': Object.fromEntries([...new Set(CERT_CASES)].filter((n) => n !== 'default').map((n) => [n, certificationVariant(CERT_CASES.indexOf(n))])),
  'rec-anti-corruption': {
    code: antiCorruptionVariant(true, false),
    channel: antiCorruptionVariant(false, true),
    code_channel: antiCorruptionVariant(true, true),
    conduct_policy: antiCorruptionVariant(false, false, true),
    conduct_policy_channel: antiCorruptionVariant(false, true, true),
    iso_37001: {
      en: { title: 'Strengthen your anti-corruption programme', body: 'Use your ISO 37001 anti-bribery management system: review its risk assessment and controls, check that it covers the corruption risk prevention plan, code of conduct, training and whistleblowing channel required from 50 employees by the General Regime for the Prevention of Corruption (Decree-Law 109-E/2021), and remove the causes of any conviction or fine.' },
      pt: { title: 'Reforçar o programa anticorrupção', body: 'Apoie-se no seu sistema de gestão antissuborno ISO 37001: reveja a avaliação de riscos e os controlos, verifique se abrange o plano de prevenção de riscos de corrupção, o código de conduta, a formação e o canal de denúncia exigidos a partir de 50 trabalhadores pelo Regime Geral da Prevenção da Corrupção (Decreto-Lei n.º 109-E/2021) e elimine as causas de qualquer condenação ou coima.' },
    },
  },
  'rec-controversial-revenue': {
    disclosed: {
      en: { body: 'Plan a phase-out of revenue from fossil fuels, tobacco, controversial weapons or agrochemicals, or at least a path below the exclusion thresholds of the EU Paris-aligned benchmarks (Delegated Regulation (EU) 2020/1818), and report progress on the share every year (VSME C8).' },
      pt: { body: 'Planeie o abandono progressivo das receitas de combustíveis fósseis, tabaco, armas controversas ou produtos agroquímicos, ou pelo menos uma trajetória abaixo dos limiares de exclusão dos índices de referência alinhados com Paris da UE (Regulamento Delegado (UE) 2020/1818), e reporte todos os anos a evolução da percentagem (VSME C8).' },
    },
  },
};

/** Divisor applied to the expected gain in prioritisation: cheap actions first. */
const EFFORT_DIVISOR: Readonly<Record<Level, number>> = { low: 1, medium: 2, high: 3 };
/** impact label from materiality-adjusted gain in overall points. */
const IMPACT_HIGH_PTS = 6;
const IMPACT_MEDIUM_PTS = 3;
const MATERIALITY_FACTOR = 1.5;

// ───────────────────────────── Precomputed tables ────────────────────────────

const N = INDICATORS.length;
const PILLAR_INDEX: Readonly<Record<Pillar, number>> = { E: 0, S: 1, G: 2 };

const KIND_DISCLOSURE = 0, KIND_BENCH = 1, KIND_UP = 2, KIND_DOWN = 3, KIND_ZERO_COUNT = 4,
  KIND_BOOL = 5, KIND_COUNT = 6, KIND_POINTS = 7;
const KIND_CODE: Readonly<Record<Rule['kind'], number>> = {
  disclosure: KIND_DISCLOSURE, bench: KIND_BENCH, up: KIND_UP, down: KIND_DOWN,
  zero_count: KIND_ZERO_COUNT, bool: KIND_BOOL, count: KIND_COUNT, points: KIND_POINTS,
};
const BENCH_CODE = { ghg: 0, energy: 1, water: 2, accident: 3 } as const;

const T_NUMBER = 0, T_INTEGER = 1, T_BOOLEAN = 2, T_STRING = 3, T_LIST = 4;
const TYPE_CODE: Readonly<Record<Indicator['type'], number>> = {
  number: T_NUMBER, integer: T_INTEGER, boolean: T_BOOLEAN, string: T_STRING, 'string[]': T_LIST,
};

const KEYS: string[] = new Array(N);
const I_PILLAR = new Uint8Array(N);
const I_TYPE = new Uint8Array(N);
const I_KIND = new Uint8Array(N);
const I_WEIGHT = new Float64Array(N);
const I_P1 = new Float64Array(N); // up: full; down: full; zero_count: halfAt; count: full; bench: bench code
const I_P2 = new Float64Array(N); // down: zero
const I_MIN = new Float64Array(N);
const I_MAX = new Float64Array(N);
const I_NA_OK = new Uint8Array(N); // 1: "not_applicable" accepted (declared); 2: only when waste_total_t === 0
const I_PERF = new Uint8Array(N); // 1 when `better` is set (performance indicator: counts for SDGs)
const I_REC = new Int32Array(N); // index into REC_DEFS
const I_OPTIONS: (ReadonlySet<string> | null)[] = new Array(N);
/** list indicators: option → its bit (1 << position in `options`), for S_MASK */
const I_OPTION_BIT: (ReadonlyMap<string, number> | null)[] = new Array(N);
const I_POINTS: (ReadonlyMap<string, readonly [number, number]> | null)[] = new Array(N); // option → [group id, points]
const I_SDGS: (readonly number[])[] = new Array(N);

for (let i = 0; i < N; i++) {
  const ind = INDICATORS[i]!;
  const def = RULES[ind.key];
  if (!def) throw new Error(`esg engine: no scoring rule for indicator ${ind.key}`);
  KEYS[i] = ind.key;
  I_PILLAR[i] = PILLAR_INDEX[ind.pillar];
  I_TYPE[i] = TYPE_CODE[ind.type];
  I_KIND[i] = KIND_CODE[def.rule.kind];
  I_WEIGHT[i] = def.weight;
  I_MIN[i] = ind.min ?? -Infinity;
  I_MAX[i] = ind.max ?? Infinity;
  I_NA_OK[i] = ind.applicability === null ? 0 : ind.key === 'waste_recycled_pct' ? 2 : 1;
  I_PERF[i] = ind.better === null ? 0 : 1;
  I_OPTIONS[i] = ind.options ? new Set(ind.options) : null;
  I_OPTION_BIT[i] = ind.type === 'string[]' ? new Map(ind.options!.map((o, k) => [o, 1 << k])) : null;
  if (ind.type === 'string[]' && ind.options!.length > 30) throw new Error(`esg engine: ${ind.key} has too many options for a bit mask`);
  I_SDGS[i] = ind.sdgs;
  I_POINTS[i] = null;
  const r = def.rule;
  switch (r.kind) {
    case 'bench': I_P1[i] = BENCH_CODE[r.bench]; break;
    case 'up': I_P1[i] = r.full; break;
    case 'down': I_P1[i] = r.full; I_P2[i] = r.zero; break;
    case 'zero_count': I_P1[i] = r.halfAt; break;
    case 'count': I_P1[i] = r.full; break;
    case 'points': {
      const groups = new Map<string, number>();
      const m = new Map<string, readonly [number, number]>();
      for (const [opt, [g, pts]] of Object.entries(r.points)) {
        if (!groups.has(g)) groups.set(g, groups.size);
        m.set(opt, [groups.get(g)!, pts]);
      }
      I_POINTS[i] = m;
      break;
    }
    default: break;
  }
  if ((r.kind === 'disclosure') !== (ind.better === null)) {
    throw new Error(`esg engine: ${ind.key} better/rule mismatch`);
  }
}
const WASTE_TOTAL_INDEX = KEYS.indexOf('waste_total_t');
const KEY_INDEX: ReadonlyMap<string, number> = new Map(KEYS.map((k, i) => [k, i]));

const R = REC_DEFS.length;
for (let r = 0; r < R; r++) {
  for (const key of REC_DEFS[r]!.indicators) {
    const i = KEYS.indexOf(key);
    if (i < 0) throw new Error(`esg engine: recommendation ${REC_DEFS[r]!.id} refers to unknown indicator ${key}`);
    I_REC[i] = r;
  }
}
for (let i = 0; i < N; i++) {
  if (!REC_DEFS.some((d) => d.indicators.includes(KEYS[i]!))) {
    throw new Error(`esg engine: no recommendation for indicator ${KEYS[i]}`);
  }
}
const REC_PILLAR = new Uint8Array(R);
const REC_EFFORT_DIV = new Float64Array(R);
/** Union of the SDGs of a recommendation's indicators, sorted. */
const REC_SDGS: (readonly number[])[] = new Array(R);
for (let r = 0; r < R; r++) {
  const d = REC_DEFS[r]!;
  REC_PILLAR[r] = PILLAR_INDEX[d.pillar];
  REC_EFFORT_DIV[r] = EFFORT_DIVISOR[d.effort];
  const inds = d.indicators.map((k) => INDICATORS[KEYS.indexOf(k)]!);
  REC_SDGS[r] = [...new Set(inds.flatMap((x) => x.sdgs))].sort((a, b) => a - b);
}

/**
 * Precomputed texts: [lang][rec][variant] → title, timeline and the body for "missing" and "weak"
 * (variant 0 is "default", the esg-1.0.0 text). Every body is a distinct string: a body names its
 * recommendation, language, variant and basis (its "form", recommendationForm).
 */
interface RecText { title: string; timeline: string; bodyMissing: string; bodyWeak: string }
const PREFIX = {
  en: {
    missing: 'Not disclosed yet: collect and report this information first, then act on it. ',
    weak: 'Your answer is below the good-practice level used in this assessment. ',
  },
  pt: {
    missing: 'Ainda não divulgado: recolha e reporte primeiro esta informação e depois atue. ',
    weak: 'A sua resposta está abaixo do nível de boa prática usado nesta avaliação. ',
  },
} as const;
for (const id of Object.keys(REC_VARIANTS)) {
  if (!REC_DEFS.some((d) => d.id === id)) throw new Error(`esg engine: variants of unknown recommendation ${id}`);
}
/** per recommendation: its variants' names, "default" first */
const VARIANT_NAMES: readonly (readonly string[])[] = REC_DEFS.map((d) => ['default', ...Object.keys(REC_VARIANTS[d.id] ?? {})]);
const VARIANT_INDEX: readonly ReadonlyMap<string, number>[] = VARIANT_NAMES.map((names) => new Map(names.map((n, v) => [n, v])));
function buildTexts(lang: 'en' | 'pt'): RecText[][] {
  return REC_DEFS.map((d) => {
    const t = d[lang];
    return VARIANT_NAMES[REC_DEFS.indexOf(d)]!.map((name) => {
      const v = name === 'default' ? t : REC_VARIANTS[d.id]![name]![lang];
      return {
        title: v.title ?? t.title,
        timeline: t.timeline,
        bodyMissing: PREFIX[lang].missing + v.body,
        bodyWeak: PREFIX[lang].weak + v.body,
      };
    });
  });
}
const TEXTS = { en: buildTexts('en'), pt: buildTexts('pt') } as const;

/** Every form of a recommendation (its id, language, variant and basis), found by its body. */
interface RecForm { rec: number; variant: number; basis: 'missing' | 'weak'; title: string }
const FORMS: RecForm[] = [];
const FORM_OF_BODY = new Map<string, number>();
for (const lang of ['en', 'pt'] as const) {
  TEXTS[lang].forEach((variants, rec) => variants.forEach((tx, variant) => {
    for (const [basis, body] of [['missing', tx.bodyMissing], ['weak', tx.bodyWeak]] as const) {
      if (FORM_OF_BODY.has(body)) throw new Error(`esg engine: two recommendation forms share a body (${REC_DEFS[rec]!.id})`);
      FORM_OF_BODY.set(body, FORMS.length);
      FORMS.push({ rec, variant, basis, title: tx.title });
    }
  }));
}
/** How many forms recommendationForm numbers (0 … RECOMMENDATION_FORMS − 1). */
export const RECOMMENDATION_FORMS = FORMS.length;
/**
 * The form of a recommendation as assessEsg returns it (its id, language, variant and basis: every
 * field but priority and impact follows from it), or -1 when its texts are not this catalogue's.
 */
export function recommendationForm(r: Recommendation): number {
  const f = FORM_OF_BODY.get(r.body);
  if (f === undefined) return -1;
  const form = FORMS[f]!;
  return REC_DEFS[form.rec]!.id === r.id && form.title === r.title ? f : -1;
}

const REC_INDEX: ReadonlyMap<string, number> = new Map(REC_DEFS.map((d, r) => [d.id, r]));
/** The recommendation catalogue of this algorithm version, by id (pinned by a test: see docs/esg.md). */
export const RECOMMENDATION_IDS: readonly string[] = REC_DEFS.map((d) => d.id);
/** Each recommendation's variants, "default" first (the catalogue of esg-1.1.0; esg-1.0.0 has only "default"). */
export const RECOMMENDATION_VARIANTS: Readonly<Record<string, readonly string[]>> = Object.fromEntries(REC_DEFS.map((d, r) => [d.id, VARIANT_NAMES[r]!]));

/**
 * What an assessment stores of a recommendation: the catalogue renders the rest in any language
 * (renderRecommendation), so a stored assessment is ~1 KB instead of ~6 KB of texts.
 */
export interface RecommendationRef {
  id: string;
  priority: number;
  impact: Recommendation['impact'];
  /** the indicator is not disclosed (missing) or below good practice (weak): picks the body's opening */
  basis: 'missing' | 'weak';
  /** the text chosen from the answers (esg-1.1.0 on); absent: "default" (and always so in esg-1.0.0) */
  variant?: string;
}

export function recommendationRef(r: Recommendation): RecommendationRef {
  const k = REC_INDEX.get(r.id);
  if (k === undefined) throw new Error(`esg engine: unknown recommendation ${r.id}`);
  const f = recommendationForm(r);
  const form = f < 0 ? null : FORMS[f]!;
  const ref: RecommendationRef = { id: r.id, priority: r.priority, impact: r.impact, basis: form ? form.basis : 'weak' };
  if (form && form.variant !== 0) ref.variant = VARIANT_NAMES[k]![form.variant]!;
  return ref;
}

/**
 * The recommendation as assessEsg returned it, from its stored reference and the algorithm version
 * of its assessment (null: not in that catalogue). esg-1.0.0 renders every reference with its
 * default text; a version this code does not know renders with the current catalogue.
 */
export function renderRecommendation(ref: RecommendationRef, lang: 'en' | 'pt', version: string = ESG_ALGORITHM_VERSION): Recommendation | null {
  const k = REC_INDEX.get(ref.id);
  if (k === undefined) return null;
  const d = REC_DEFS[k]!;
  const v = version === 'esg-1.0.0' || ref.variant === undefined ? 0 : (VARIANT_INDEX[k]!.get(ref.variant) ?? 0);
  const tx = TEXTS[lang][k]![v]!;
  return {
    id: d.id,
    pillar: d.pillar,
    priority: ref.priority,
    title: tx.title,
    body: ref.basis === 'missing' ? tx.bodyMissing : tx.bodyWeak,
    effort: d.effort,
    impact: ref.impact,
    timeline: tx.timeline,
    sdgs: REC_SDGS[k]!.slice(),
  };
}

// ─────────────────────────────── Variant rules ───────────────────────────────
// Each reads the answers of the evaluation in progress (assessEsg's scratch buffers: only answers
// valid for their indicator count) and names the variant; docs/esg.md §7.1.

const IX = (key: string): number => {
  const i = KEY_INDEX.get(key);
  if (i === undefined) throw new Error(`esg engine: variant rule on unknown indicator ${key}`);
  return i;
};
const I_SCOPE1 = IX('ghg_scope1_tco2e'), I_SCOPE2 = IX('ghg_scope2_lb_tco2e'), I_GHG_INT = IX('ghg_intensity');
const I_RENEWABLE = IX('renewable_energy_pct'), I_TARGET = IX('ghg_reduction_target_pct');
const I_BIODIVERSITY = IX('biodiversity_sensitive_sites'), I_RECYCLED = IX('waste_recycled_pct');
const I_ACCIDENTS = IX('accident_rate'), I_FATALITIES = IX('work_fatalities'), I_PAY_GAP = IX('gender_pay_gap_pct');
const I_BARGAINING = IX('collective_bargaining_pct'), I_HR_POLICY = IX('human_rights_policy');
const I_POLICIES = IX('sustainability_policies'), I_CERTS = IX('certifications'), I_CONTROVERSIAL = IX('controversial_revenue_pct');

/** Renewable share (%) from which the energy counts as "already renewable or nearly so". */
const RENEWABLE_DONE_PCT = 90;
/** Renewable share (%) from which it counts as substantial: extend it to all electricity (not "combine with renewable electricity"). */
const RENEWABLE_SUBSTANTIAL_PCT = 50;
/** Scope 1 counts as low at zero, or at most this share of Scope 1 + Scope 2. */
const SCOPE1_LOW_SHARE = 0.1;

const answered = (i: number): boolean => S_STATE[i] === ST_ANSWERED;
/** the answer if it is a valid one, else NaN (every comparison with it is false) */
const num = (i: number): number => (S_STATE[i] === ST_ANSWERED ? (S_VAL[i] as number) : NaN);
/** the options of a valid list answer, as bits (0 when not validly answered) */
const listed = (i: number): number => (S_STATE[i] === ST_ANSWERED ? S_MASK[i]! : 0);
const bitOf = (i: number, option: string): number => {
  const bit = I_OPTION_BIT[i]?.get(option);
  if (bit === undefined) throw new Error(`esg engine: variant rule on unknown option ${option} of ${KEYS[i]}`);
  return bit;
};
const B_EMS = bitOf(I_CERTS, 'iso_14001') | bitOf(I_CERTS, 'emas'), B_ISO45001 = bitOf(I_CERTS, 'iso_45001');
const B_ISO50001 = bitOf(I_CERTS, 'iso_50001'), B_ISO37001 = bitOf(I_CERTS, 'iso_37001');
const B_GRIEVANCE = bitOf(I_HR_POLICY, 'grievance_mechanism'), B_SA8000 = bitOf(I_CERTS, 'sa8000');
const B_BUSINESS_CONDUCT = bitOf(I_POLICIES, 'business_conduct');
/** per CERT_LETTERS letter: its options' bits in the certifications answer */
const CERT_BITS = Int32Array.from(CERT_HELD, (c) => c.options.reduce((m, o) => m | bitOf(I_CERTS, o), 0));
const B_CORE_POLICIES = bitOf(I_POLICIES, 'climate_change') | bitOf(I_POLICIES, 'own_workforce') | bitOf(I_POLICIES, 'business_conduct');
const zeroEmissions = (): boolean => num(I_SCOPE1) === 0 && num(I_SCOPE2) === 0;
function scope1Low(): boolean {
  const s1 = num(I_SCOPE1), s2 = num(I_SCOPE2);
  return s1 === 0 || (s1 >= 0 && s2 >= 0 && s1 <= SCOPE1_LOW_SHARE * (s1 + s2));
}

/**
 * The variant rules: per recommendation with variants, its cases (the variants' names, by the index
 * pickCase returns) and the rule's number in pickCase's switch.
 */
const VARIANT_CASES: Readonly<Record<string, readonly string[]>> = {
  'rec-energy-efficiency': ['default', 'iso_50001'],
  'rec-renewable-energy': ['default', 'no_scope1'],
  'rec-ghg-inventory': ['default', 'scope1_known', 'scope2_known', 'intensity_known'],
  'rec-decarbonise-operations': ['default', 'scope1_low', 'renewable', 'scope1_low_renewable', 'zero', 'renewable_partial', 'scope1_low_renewable_partial'],
  'rec-ghg-target': ['default', 'raise', 'zero_emissions'],
  'rec-pollution-reporting': ['default', 'ems'],
  'rec-biodiversity': ['default', 'sites_known'],
  'rec-waste-tracking': ['default', 'share_known'],
  // +1 both B9 figures given, +4 the accident rate only, +5 the fatalities only; +2 ISO 45001 (so 6 = ISO 45001 and the rate only, 7 = ISO 45001 and the fatalities only)
  'rec-health-safety': ['default', 'reported', 'iso_45001', 'iso_45001_reported', 'rate_reported', 'fatalities_reported', 'iso_45001_rate_reported', 'iso_45001_fatalities_reported'],
  'rec-gender-pay-gap': ['default', 'gap_known'],
  'rec-collective-bargaining': ['default', 'partial'],
  'rec-human-rights-policy': ['default', 'topics', 'channel', 'topics_channel', 'sa8000'],
  'rec-sustainability-policies': ['default', 'partial', 'core_done'],
  // the case is the mask of the certifications held (CERT_LETTERS: bit 1 ISO 14001 or EMAS, 2 ISO 45001, 4 ISO 50001, 8 ISO 37001, 16 SA8000, 32 NP 4469, 64 B Corp, 128 ISO 9001)
  'rec-certifications': CERT_CASES,
  'rec-anti-corruption': ['default', 'code', 'channel', 'code_channel', 'iso_37001', 'conduct_policy', 'conduct_policy_channel'],
  'rec-controversial-revenue': ['default', 'disclosed'],
};
const RULE_IDS = Object.keys(VARIANT_CASES);

/** The case of rule `rule` (its index in RULE_IDS) that fits the answers: no allocation, no call through a table. */
function pickCase(rule: number): number {
  switch (rule) {
    case 0: // rec-energy-efficiency
      return listed(I_CERTS) & B_ISO50001 ? 1 : 0;
    case 1: // rec-renewable-energy
      return num(I_SCOPE1) === 0 ? 1 : 0;
    case 2: { // rec-ghg-inventory
      const s1 = answered(I_SCOPE1), s2 = answered(I_SCOPE2);
      if (s1 && !s2) return 1;
      if (s2 && !s1) return 2;
      return !s1 && !s2 && answered(I_GHG_INT) ? 3 : 0;
    }
    case 3: { // rec-decarbonise-operations
      if (zeroEmissions()) return 4;
      const renewable = num(I_RENEWABLE);
      return (scope1Low() ? 1 : 0) + (renewable >= RENEWABLE_DONE_PCT ? 2 : renewable >= RENEWABLE_SUBSTANTIAL_PCT ? 5 : 0);
    }
    case 4: // rec-ghg-target
      return zeroEmissions() ? 2 : num(I_TARGET) > 0 ? 1 : 0;
    case 5: // rec-pollution-reporting
      return listed(I_CERTS) & B_EMS ? 1 : 0;
    case 6: // rec-biodiversity
      return answered(I_BIODIVERSITY) ? 1 : 0;
    case 7: // rec-waste-tracking
      return answered(I_RECYCLED) ? 1 : 0;
    case 8: { // rec-health-safety
      const rate = answered(I_ACCIDENTS), fatalities = answered(I_FATALITIES);
      const iso = listed(I_CERTS) & B_ISO45001 ? 2 : 0;
      return (rate && fatalities ? 1 : rate ? 4 : fatalities ? 5 : 0) + iso;
    }
    case 9: // rec-gender-pay-gap
      return answered(I_PAY_GAP) ? 1 : 0;
    case 10: // rec-collective-bargaining
      return num(I_BARGAINING) > 0 ? 1 : 0;
    case 11: { // rec-human-rights-policy (1: some of the five topics, 2: a complaints channel, 4: SA8000, which requires both)
      if (listed(I_CERTS) & B_SA8000) return 4;
      const hr = listed(I_HR_POLICY);
      return (hr & ~B_GRIEVANCE ? 1 : 0) + (hr & B_GRIEVANCE ? 2 : 0);
    }
    case 14: { // rec-anti-corruption (the same, SA8000 counting as both; 4: ISO 37001; 5: a business conduct policy, 6: the same and a channel)
      const certs = listed(I_CERTS);
      if (certs & B_ISO37001) return 4;
      const hr = listed(I_HR_POLICY), sa8000 = certs & B_SA8000;
      const channel = hr & B_GRIEVANCE || sa8000 ? 1 : 0;
      if (listed(I_POLICIES) & B_BUSINESS_CONDUCT) return 5 + channel;
      return (hr & ~B_GRIEVANCE || sa8000 ? 1 : 0) + 2 * channel;
    }
    case 12: { // rec-sustainability-policies
      const policies = listed(I_POLICIES);
      return policies === 0 ? 0 : (policies & B_CORE_POLICIES) === B_CORE_POLICIES ? 2 : 1;
    }
    case 13: { // rec-certifications: the mask of CERT_LETTERS held
      const certs = listed(I_CERTS);
      let mask = 0;
      for (let k = 0; k < CERT_BITS.length; k++) if (certs & CERT_BITS[k]!) mask |= 1 << k;
      return mask;
    }
    case 15: // rec-controversial-revenue
      return answered(I_CONTROVERSIAL) ? 1 : 0;
    default:
      return 0;
  }
}
const RULE_ORDER = ['rec-energy-efficiency', 'rec-renewable-energy', 'rec-ghg-inventory', 'rec-decarbonise-operations', 'rec-ghg-target', 'rec-pollution-reporting', 'rec-biodiversity', 'rec-waste-tracking', 'rec-health-safety', 'rec-gender-pay-gap', 'rec-collective-bargaining', 'rec-human-rights-policy', 'rec-sustainability-policies', 'rec-certifications', 'rec-anti-corruption', 'rec-controversial-revenue'];
if (RULE_ORDER.join() !== RULE_IDS.join()) throw new Error('esg engine: pickCase numbers its rules in VARIANT_CASES order');

/** per recommendation: its rule's number (-1: only the default) and each case's variant index (at r · MAX_CASES + case) */
const MAX_CASES = 256;
const REC_RULE = new Int32Array(R).fill(-1);
const REC_CASE_VARIANT = new Int32Array(R * MAX_CASES);
REC_DEFS.forEach((d, r) => {
  const cases = VARIANT_CASES[d.id];
  const names = VARIANT_NAMES[r]!;
  if (!cases) {
    if (names.length > 1) throw new Error(`esg engine: variants of ${d.id} without a rule`);
    return;
  }
  if (new Set(cases).size !== names.length || cases.length > MAX_CASES || names.some((n) => !cases.includes(n))) throw new Error(`esg engine: the cases of ${d.id} are not its variants`);
  REC_RULE[r] = RULE_IDS.indexOf(d.id);
  cases.forEach((c, k) => (REC_CASE_VARIANT[r * MAX_CASES + k] = VARIANT_INDEX[r]!.get(c)!));
});
for (const id of RULE_IDS) {
  if (!REC_DEFS.some((d) => d.id === id)) throw new Error(`esg engine: variant rule of unknown recommendation ${id}`);
}

/** Per section (index 0..20 for A..U, 21 = unknown): weights and group-dependent tables. */
interface SectorTable {
  wE: number; wS: number; wG: number; // integer percent
  logBench: Float64Array; // log2 of [ghg, energy, water, accident] benchmark
  recMateriality: Float64Array; // per recommendation: 1 or 1.5
}
function buildSectorTable(wg: WeightGroup, bg: BenchGroup): SectorTable {
  const b = BENCHMARKS[bg];
  const material = new Set(MATERIAL[bg]);
  const recMateriality = new Float64Array(R);
  for (let r = 0; r < R; r++) {
    recMateriality[r] = REC_DEFS[r]!.indicators.some((k) => material.has(k)) ? MATERIALITY_FACTOR : 1;
  }
  const [wE, wS, wG] = WEIGHTS_PCT[wg];
  return {
    wE, wS, wG,
    logBench: Float64Array.of(Math.log2(b.ghg), Math.log2(b.energy), Math.log2(b.water), Math.log2(b.accident)),
    recMateriality,
  };
}
const SECTION_TABLES: SectorTable[] = [];
for (let c = 0; c < 21; c++) {
  const letter = String.fromCharCode(65 + c);
  SECTION_TABLES.push(buildSectorTable(WEIGHT_GROUP_OF_SECTION[letter]!, BENCH_GROUP_OF_SECTION[letter]!));
}
const UNKNOWN_SECTOR_TABLE = buildSectorTable('default', 'all');

function sectorTable(sector: string): SectorTable {
  if (typeof sector !== 'string' || sector.length === 0) return UNKNOWN_SECTOR_TABLE;
  const c = sector.charCodeAt(0) - 65;
  return c >= 0 && c < 21 ? SECTION_TABLES[c]! : UNKNOWN_SECTOR_TABLE;
}

// ─────────────────────────────── Public API ──────────────────────────────────

/** Pillar weights for a sector (fractions summing to 1); unknown sectors get the default group. */
export function sectorWeights(sector: string): { E: number; S: number; G: number } {
  const t = sectorTable(sector);
  return { E: t.wE / 100, S: t.wS / 100, G: t.wG / 100 };
}

/** leader ≥ 80, advancer 60–79, developing 40–59, starter 20–39, lagging < 20. */
export function tierForOverall(overall: number): EsgTier {
  if (overall >= 80) return 'leader';
  if (overall >= 60) return 'advancer';
  if (overall >= 40) return 'developing';
  if (overall >= 20) return 'starter';
  return 'lagging';
}

// Scratch buffers (module-private; assessEsg is synchronous and never re-entered).
const S_VAL: unknown[] = new Array(N).fill(undefined);
const S_SCORE = new Float64Array(N);
const S_STATE = new Uint8Array(N); // 0 missing/invalid, 1 answered, 2 not_applicable
const S_MASK = new Int32Array(N); // list indicators answered validly: the bits of the options listed (I_OPTION_BIT)
const PILLAR_NUM = new Float64Array(3);
const PILLAR_DEN = new Float64Array(3);
const SDG_APPLICABLE = new Int32Array(18);
const SDG_MET = new Int32Array(18);
const REC_GAIN = new Float64Array(R);
const REC_ANY_MISSING = new Uint8Array(R);
const REC_ACTIVE = new Uint8Array(R);
const CAND = new Int32Array(R);
const CAND_SCORE = new Float64Array(R);
const POINT_SEEN = new Float64Array(16);

const ST_MISSING = 0, ST_ANSWERED = 1, ST_NA = 2;

function clamp01(x: number): number {
  return x <= 0 ? 0 : x >= 1 ? 1 : x;
}

/** Score of one answered value, or -1 if the value is not valid for the indicator. */
function scoreValue(i: number, v: unknown, logBench: Float64Array): number {
  const t = I_TYPE[i]!;
  let x = 0;
  if (t === T_NUMBER || t === T_INTEGER) {
    if (typeof v !== 'number' || !(v >= I_MIN[i]! && v <= I_MAX[i]!)) return -1;
    if (t === T_INTEGER && !Number.isInteger(v)) return -1;
    x = v;
  } else if (t === T_BOOLEAN) {
    if (typeof v !== 'boolean') return -1;
    x = v ? 1 : 0;
  } else if (t === T_LIST) {
    if (!Array.isArray(v)) return -1;
    const bits = I_OPTION_BIT[i]!;
    let mask = 0;
    for (let k = 0; k < v.length; k++) {
      const item = v[k];
      const bit = typeof item === 'string' ? bits.get(item) : undefined;
      if (bit === undefined || (mask & bit) !== 0) return -1; // unknown options and duplicates are invalid
      mask |= bit;
    }
    S_MASK[i] = mask; // read only when the answer is valid (S_STATE)
    x = v.length;
  } else {
    if (typeof v !== 'string') return -1;
    const opts = I_OPTIONS[i];
    if (opts && !opts.has(v)) return -1;
  }
  switch (I_KIND[i]) {
    case KIND_DISCLOSURE:
      return 1;
    case KIND_BENCH:
      // 1 at ≤ ¼ of the benchmark, 0.5 at the benchmark, 0.25 at 2×, 0 at ≥ 4× (log scale).
      return x <= 0 ? 1 : clamp01(0.5 - 0.25 * (Math.log2(x) - logBench[I_P1[i]!]!));
    case KIND_UP:
      return clamp01(x / I_P1[i]!);
    case KIND_DOWN: {
      const full = I_P1[i]!, zero = I_P2[i]!;
      return clamp01((zero - x) / (zero - full));
    }
    case KIND_ZERO_COUNT: {
      const half = I_P1[i]!;
      return half === 0 ? (x === 0 ? 1 : 0) : 1 / (1 + x / half);
    }
    case KIND_BOOL:
      return x;
    case KIND_COUNT:
      return clamp01(x / I_P1[i]!);
    case KIND_POINTS: {
      const pts = I_POINTS[i]!;
      const list = v as string[];
      POINT_SEEN.fill(0);
      let total = 0;
      for (let k = 0; k < list.length; k++) {
        const p = pts.get(list[k]!);
        if (p !== undefined && p[1] > POINT_SEEN[p[0]]!) {
          total += p[1] - POINT_SEEN[p[0]]!;
          POINT_SEEN[p[0]] = p[1];
        }
      }
      return clamp01(total + 1e-12 >= 1 ? 1 : total);
    }
    default:
      return 0;
  }
}

/**
 * Assesses one questionnaire. `answers` are expected to be validated already (validateAnswers);
 * an invalid value is nevertheless treated like a missing answer, and an unknown sector like the
 * default sector group, so the function is total.
 */
export function assessEsg(
  input: { sector: string; answers: Record<string, AnswerValue> },
  lang: 'en' | 'pt',
): EsgResult {
  const answers = input.answers ?? {};
  const table = sectorTable(input.sector);
  const logBench = table.logBench;

  PILLAR_NUM[0] = PILLAR_NUM[1] = PILLAR_NUM[2] = 0;
  PILLAR_DEN[0] = PILLAR_DEN[1] = PILLAR_DEN[2] = 0;
  let alignment = 0;

  // Gather the answers by indicator index: iterating the (usually small) answers object once is
  // much cheaper than 27 keyed lookups on objects of arbitrary shape.
  for (let i = 0; i < N; i++) S_VAL[i] = undefined;
  for (const k in answers) {
    const i = KEY_INDEX.get(k);
    if (i !== undefined) S_VAL[i] = (answers as Record<string, unknown>)[k];
  }
  const wasteTotalIsZero = S_VAL[WASTE_TOTAL_INDEX] === 0;
  for (let i = 0; i < N; i++) {
    const v = S_VAL[i];
    let s = 0;
    let st = ST_MISSING;
    if (v !== undefined) {
      if (v === NOT_APPLICABLE && I_TYPE[i] !== T_STRING) {
        const ok = I_NA_OK[i]!;
        if (ok === 1 || (ok === 2 && wasteTotalIsZero)) st = ST_NA;
      } else {
        const sc = scoreValue(i, v, logBench);
        if (sc >= 0) {
          s = sc;
          st = ST_ANSWERED;
        }
      }
    }
    S_SCORE[i] = s;
    S_STATE[i] = st;
    if (st !== ST_MISSING) alignment++;
    if (st !== ST_NA) {
      const p = I_PILLAR[i]!;
      const w = I_WEIGHT[i]!;
      PILLAR_NUM[p] += w * s;
      PILLAR_DEN[p] += w;
    }
  }

  // Every pillar has indicators that never accept "not_applicable", so denominators are > 0.
  const environmental = Math.round((100 * PILLAR_NUM[0]!) / PILLAR_DEN[0]!);
  const social = Math.round((100 * PILLAR_NUM[1]!) / PILLAR_DEN[1]!);
  const governance = Math.round((100 * PILLAR_NUM[2]!) / PILLAR_DEN[2]!);
  const overall = Math.round((table.wE * environmental + table.wS * social + table.wG * governance) / 100);

  // SDGs: an SDG is aligned when at least half (and at least one) of its applicable performance
  // indicators meet (answered with s ≥ MEETS).
  SDG_APPLICABLE.fill(0);
  SDG_MET.fill(0);
  for (let i = 0; i < N; i++) {
    if (I_PERF[i] === 0 || S_STATE[i] === ST_NA) continue;
    const met = S_STATE[i] === ST_ANSWERED && S_SCORE[i]! >= MEETS;
    const sdgs = I_SDGS[i]!;
    for (let k = 0; k < sdgs.length; k++) {
      const g = sdgs[k]!;
      SDG_APPLICABLE[g]++;
      if (met) SDG_MET[g]++;
    }
  }
  const aligned_sdgs: number[] = [];
  for (let g = 1; g <= 17; g++) {
    const met = SDG_MET[g]!;
    if (met > 0 && 2 * met >= SDG_APPLICABLE[g]!) aligned_sdgs.push(g);
  }

  // Recommendations: one per recommendation topic with at least one weak (s < MEETS) or missing
  // indicator. gain = overall points recoverable by bringing those indicators to s = 1.
  REC_GAIN.fill(0);
  REC_ANY_MISSING.fill(0);
  REC_ACTIVE.fill(0);
  const pillarW0 = table.wE, pillarW1 = table.wS, pillarW2 = table.wG;
  for (let i = 0; i < N; i++) {
    const st = S_STATE[i]!;
    if (st === ST_NA) continue;
    const s = S_SCORE[i]!;
    if (st === ST_ANSWERED && s >= MEETS) continue;
    const r = I_REC[i]!;
    const p = I_PILLAR[i]!;
    const pw = p === 0 ? pillarW0 : p === 1 ? pillarW1 : pillarW2;
    REC_GAIN[r] += (pw * I_WEIGHT[i]! * (1 - s)) / PILLAR_DEN[p]!;
    REC_ACTIVE[r] = 1;
    if (st === ST_MISSING) REC_ANY_MISSING[r] = 1;
  }
  let n = 0;
  const mat = table.recMateriality;
  for (let r = 0; r < R; r++) {
    if (REC_ACTIVE[r] === 0) continue;
    const sc = (REC_GAIN[r]! * mat[r]!) / REC_EFFORT_DIV[r]!;
    // insertion sort: priority score descending, then definition order (stable, deterministic)
    let j = n;
    while (j > 0 && CAND_SCORE[j - 1]! < sc) {
      CAND[j] = CAND[j - 1]!;
      CAND_SCORE[j] = CAND_SCORE[j - 1]!;
      j--;
    }
    CAND[j] = r;
    CAND_SCORE[j] = sc;
    n++;
  }
  if (n > MAX_RECOMMENDATIONS) n = MAX_RECOMMENDATIONS;
  const texts = lang === 'pt' ? TEXTS.pt : TEXTS.en;
  const recommendations: Recommendation[] = new Array(n);
  for (let k = 0; k < n; k++) {
    const r = CAND[k]!;
    const d = REC_DEFS[r]!;
    // the text that fits the answers (S_VAL still holds them)
    const rule = REC_RULE[r]!;
    const tx = texts[r]![rule < 0 ? 0 : REC_CASE_VARIANT[r * MAX_CASES + pickCase(rule)]!]!;
    const adjusted = REC_GAIN[r]! * mat[r]!;
    recommendations[k] = {
      id: d.id,
      pillar: d.pillar,
      priority: k + 1,
      title: tx.title,
      body: REC_ANY_MISSING[r] === 1 ? tx.bodyMissing : tx.bodyWeak,
      effort: d.effort,
      impact: adjusted >= IMPACT_HIGH_PTS ? 'high' : adjusted >= IMPACT_MEDIUM_PTS ? 'medium' : 'low',
      timeline: tx.timeline,
      sdgs: REC_SDGS[r]!.slice(),
    };
  }
  for (let i = 0; i < N; i++) S_VAL[i] = undefined; // do not retain caller data

  return {
    overall,
    tier: tierForOverall(overall),
    environmental,
    social,
    governance,
    vsme_alignment: alignment,
    aligned_sdgs,
    recommendations,
  };
}
