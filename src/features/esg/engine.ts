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

export const ESG_ALGORITHM_VERSION = 'esg-1.0.0';

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
interface RecDef {
  id: string;
  pillar: Pillar;
  effort: Level;
  indicators: readonly string[];
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

/** Precomputed texts: [lang][rec] → title, timeline, body for "missing" and "weak". */
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
function buildTexts(lang: 'en' | 'pt'): RecText[] {
  return REC_DEFS.map((d) => {
    const t = d[lang];
    return {
      title: t.title,
      timeline: t.timeline,
      bodyMissing: PREFIX[lang].missing + t.body,
      bodyWeak: PREFIX[lang].weak + t.body,
    };
  });
}
const TEXTS = { en: buildTexts('en'), pt: buildTexts('pt') } as const;

const REC_INDEX: ReadonlyMap<string, number> = new Map(REC_DEFS.map((d, r) => [d.id, r]));
/** The recommendation catalogue of this algorithm version, by id (pinned by a test: see docs/esg.md). */
export const RECOMMENDATION_IDS: readonly string[] = REC_DEFS.map((d) => d.id);

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
}

export function recommendationRef(r: Recommendation): RecommendationRef {
  const k = REC_INDEX.get(r.id);
  if (k === undefined) throw new Error(`esg engine: unknown recommendation ${r.id}`);
  const missing = r.body === TEXTS.en[k]!.bodyMissing || r.body === TEXTS.pt[k]!.bodyMissing;
  return { id: r.id, priority: r.priority, impact: r.impact, basis: missing ? 'missing' : 'weak' };
}

/** The recommendation as assessEsg returns it, from its stored reference (null: not in this catalogue). */
export function renderRecommendation(ref: RecommendationRef, lang: 'en' | 'pt'): Recommendation | null {
  const k = REC_INDEX.get(ref.id);
  if (k === undefined) return null;
  const d = REC_DEFS[k]!;
  const tx = TEXTS[lang][k]!;
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
    const opts = I_OPTIONS[i]!;
    for (let k = 0; k < v.length; k++) {
      const item = v[k];
      if (typeof item !== 'string' || !opts.has(item)) return -1;
      for (let j = 0; j < k; j++) if (v[j] === item) return -1; // duplicates are invalid
    }
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
  for (let i = 0; i < N; i++) S_VAL[i] = undefined; // do not retain caller data

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
    const tx = texts[r]!;
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
