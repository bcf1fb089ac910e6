/**
 * Example POST /v1/esg request bodies (synthetic companies; NIFs are synthetic legal-person
 * numbers starting with 5 with a valid check digit). test/esg-engine.test.ts asserts that they
 * evaluate to the tier in their name; docs/esg.md shows their results.
 */
import type { AnswerValue } from './questionnaire';

export interface EsgExampleBody {
  nif: string;
  sector: string;
  answers: Record<string, AnswerValue>;
  customer_reference?: string;
}

export const ESG_EXAMPLES: {
  leader: EsgExampleBody;
  developing_manufacturer: EsgExampleBody;
  lagging_services: EsgExampleBody;
} = {
  /** Software house (NACE J62) with a complete, strong disclosure. */
  leader: {
    nif: '512345678',
    sector: 'J62',
    customer_reference: 'example-leader',
    answers: {
      energy_intensity: 12,
      renewable_energy_pct: 85,
      ghg_scope1_tco2e: 4.2,
      ghg_scope2_lb_tco2e: 18.5,
      ghg_intensity: 2.1,
      ghg_reduction_target_pct: 50,
      pollutant_emissions_kg: 'not_applicable',
      biodiversity_sensitive_sites: 0,
      water_intensity: 15,
      waste_total_t: 3.4,
      waste_recycled_pct: 78,
      employees_permanent_pct: 94,
      employee_turnover_pct: 9,
      accident_rate: 0.2,
      work_fatalities: 0,
      min_wage_compliance: true,
      gender_pay_gap_pct: 4,
      collective_bargaining_pct: 70,
      training_hours_avg: 46,
      human_rights_policy: [
        'child_labour',
        'forced_labour',
        'human_trafficking',
        'discrimination',
        'accident_prevention',
        'grievance_mechanism',
      ],
      severe_hr_incidents: 0,
      sustainability_policies: [
        'climate_change',
        'circular_economy',
        'own_workforce',
        'value_chain_workers',
        'consumers_end_users',
        'business_conduct',
        'pollution',
      ],
      certifications: ['iso_14001', 'iso_9001', 'np_4469'],
      corruption_convictions: 0,
      governance_gender_balance_pct: 40,
      management_gender_balance_pct: 38,
      controversial_revenue_pct: 0,
    },
  },

  /** Metal-products manufacturer (NACE C25), about 60 employees, partial and average performance. */
  developing_manufacturer: {
    nif: '505201348',
    sector: 'C25',
    customer_reference: 'example-developing-manufacturer',
    answers: {
      energy_intensity: 900,
      renewable_energy_pct: 12,
      ghg_scope1_tco2e: 310,
      ghg_scope2_lb_tco2e: 95,
      ghg_intensity: 190,
      ghg_reduction_target_pct: 0,
      pollutant_emissions_kg: 1850,
      biodiversity_sensitive_sites: 0,
      water_intensity: 2600,
      waste_total_t: 420,
      waste_recycled_pct: 40,
      employees_permanent_pct: 68,
      employee_turnover_pct: 22,
      accident_rate: 5.0,
      work_fatalities: 0,
      min_wage_compliance: true,
      gender_pay_gap_pct: 'not_applicable',
      collective_bargaining_pct: 45,
      training_hours_avg: 9,
      human_rights_policy: ['accident_prevention', 'discrimination'],
      severe_hr_incidents: 0,
      sustainability_policies: ['own_workforce'],
      certifications: ['iso_9001'],
      corruption_convictions: 0,
      governance_gender_balance_pct: 0,
      management_gender_balance_pct: 10,
      controversial_revenue_pct: 0,
    },
  },

  /** Small advertising agency (NACE M73) that answered only a handful of indicators. */
  lagging_services: {
    nif: '518072460',
    sector: 'M73',
    answers: {
      employees_permanent_pct: 55,
      min_wage_compliance: true,
      work_fatalities: 0,
      training_hours_avg: 4,
      sustainability_policies: [],
      certifications: [],
      governance_gender_balance_pct: 'not_applicable',
    },
  },
};
