import { describe, expect, test } from 'bun:test';
import {
  ESG_ALGORITHM_VERSION,
  assessEsg,
  RECOMMENDATION_FORMS,
  RECOMMENDATION_IDS,
  RECOMMENDATION_VARIANTS,
  recommendationForm,
  recommendationRef,
  renderRecommendation,
  sectorWeights,
  tierForOverall,
  type EsgResult,
} from '../src/features/esg/engine';
import { ESG_EXAMPLES } from '../src/features/esg/examples';
import {
  INDICATORS,
  SECTORS,
  answersSchema,
  isValidSector,
  validateAnswers,
  type AnswerValue,
  type Indicator,
} from '../src/features/esg/questionnaire';
import { mulberry32 } from '../src/lib/prng';
import { esgAnswerBody } from '../src/features/esg/answer-json';

// ───────────────────────────── Seeded PRNG (mulberry32) ─────────────────────────────
type Rng = () => number;
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;

const DIVISIONS: Record<string, [number, number]> = {
  A: [1, 3], B: [5, 9], C: [10, 33], D: [35, 35], E: [36, 39], F: [41, 43], G: [45, 47],
  H: [49, 53], I: [55, 56], J: [58, 63], K: [64, 66], L: [68, 68], M: [69, 75], N: [77, 82],
  O: [84, 84], P: [85, 85], Q: [86, 88], R: [90, 93], S: [94, 96], T: [97, 98], U: [99, 99],
};

function randomSector(rng: Rng): string {
  const s = pick(rng, SECTORS).code;
  if (rng() < 0.5) return s;
  const [lo, hi] = DIVISIONS[s]!;
  const d = lo + Math.floor(rng() * (hi - lo + 1));
  return s + String(d).padStart(2, '0');
}

function randomValue(rng: Rng, ind: Indicator): AnswerValue {
  switch (ind.type) {
    case 'boolean':
      return rng() < 0.5;
    case 'string[]': {
      const opts = ind.options!.filter(() => rng() < 0.5);
      return opts;
    }
    case 'string':
      return ind.options ? pick(rng, ind.options) : 'x';
    case 'integer': {
      const r = rng();
      if (r < 0.5) return 0;
      if (r < 0.95) return 1 + Math.floor(rng() * 5);
      return ind.max!;
    }
    case 'number': {
      const min = ind.min!, max = ind.max!;
      const r = rng();
      if (r < 0.08) return min;
      if (r < 0.12) return max;
      if (max <= 1000) return Math.round((min + rng() * (max - min)) * 100) / 100;
      // log-uniform over [0.01, max] so that intensities spread around the sector benchmarks
      return Math.min(max, Math.round(10 ** (-2 + rng() * (Math.log10(max) + 2)) * 1000) / 1000);
    }
  }
}

function randomAnswers(rng: Rng): Record<string, AnswerValue> {
  const answers: Record<string, AnswerValue> = {};
  const density = rng(); // some questionnaires are sparse, some complete
  for (const ind of INDICATORS) {
    if (rng() > density) continue;
    if (ind.applicability !== null && rng() < 0.15) {
      if (ind.key === 'waste_recycled_pct') {
        if (answers.waste_total_t === 0) answers[ind.key] = 'not_applicable';
        continue;
      }
      answers[ind.key] = 'not_applicable';
      continue;
    }
    answers[ind.key] = randomValue(rng, ind);
  }
  return answers;
}

function randomInput(rng: Rng): { sector: string; answers: Record<string, AnswerValue> } {
  return { sector: randomSector(rng), answers: randomAnswers(rng) };
}

/** A value that is at least as good as `v` per the indicator's `better` direction (never equal when possible). */
function betterValue(rng: Rng, ind: Indicator, v: AnswerValue | undefined): AnswerValue | undefined {
  if (v === 'not_applicable') return undefined;
  if (v === undefined) return randomValue(rng, ind); // answering never scores below "missing"
  switch (ind.type) {
    case 'boolean':
      return v === false ? true : undefined;
    case 'string[]': {
      const missing = ind.options!.filter((o) => !(v as string[]).includes(o));
      return missing.length ? [...(v as string[]), pick(rng, missing)] : undefined;
    }
    case 'integer': {
      const x = v as number;
      if (ind.better === 'lower') return x > ind.min! ? ind.min! + Math.floor(rng() * (x - ind.min!)) : undefined;
      return x < ind.max! ? x + 1 + Math.floor(rng() * (ind.max! - x)) : undefined;
    }
    case 'number': {
      const x = v as number;
      if (ind.better === 'lower') return x > ind.min! ? ind.min! + rng() * (x - ind.min!) : undefined;
      return x < ind.max! ? x + rng() * (ind.max! - x) : undefined;
    }
    default:
      return undefined;
  }
}

const PILLAR_FIELD = { E: 'environmental', S: 'social', G: 'governance' } as const;

function perfectAnswers(): Record<string, AnswerValue> {
  const a: Record<string, AnswerValue> = {};
  for (const ind of INDICATORS) {
    if (ind.type === 'boolean') a[ind.key] = true;
    else if (ind.type === 'string[]') a[ind.key] = [...ind.options!];
    else if (ind.better === 'lower') a[ind.key] = ind.min!;
    else if (ind.better === 'higher') a[ind.key] = ind.max!;
    else a[ind.key] = 12.5; // disclosure-only indicators: any valid value
  }
  return a;
}

function expectWellFormed(r: EsgResult): void {
  for (const v of [r.overall, r.environmental, r.social, r.governance]) {
    expect(Number.isInteger(v)).toBe(true);
    expect(v).toBeGreaterThanOrEqual(0);
    expect(v).toBeLessThanOrEqual(100);
  }
  expect(r.tier).toBe(tierForOverall(r.overall));
  expect(Number.isInteger(r.vsme_alignment)).toBe(true);
  expect(r.vsme_alignment).toBeGreaterThanOrEqual(0);
  expect(r.vsme_alignment).toBeLessThanOrEqual(27);
  for (let k = 0; k < r.aligned_sdgs.length; k++) {
    const g = r.aligned_sdgs[k]!;
    expect(Number.isInteger(g) && g >= 1 && g <= 17).toBe(true);
    if (k > 0) expect(g).toBeGreaterThan(r.aligned_sdgs[k - 1]!);
  }
  expect(r.recommendations.length).toBeLessThanOrEqual(10);
  const ids = new Set<string>();
  r.recommendations.forEach((rec, k) => {
    expect(rec.priority).toBe(k + 1);
    expect(rec.id).toMatch(/^rec-[a-z0-9-]+$/);
    ids.add(rec.id);
    expect(['E', 'S', 'G']).toContain(rec.pillar);
    expect(['low', 'medium', 'high']).toContain(rec.effort);
    expect(['low', 'medium', 'high']).toContain(rec.impact);
    expect(rec.title.length).toBeGreaterThan(0);
    expect(rec.body.length).toBeGreaterThan(20);
    expect(rec.timeline).toMatch(/^\d+-\d+ (months|meses)$/);
    expect(rec.sdgs.length).toBeGreaterThan(0);
    for (const g of rec.sdgs) expect(Number.isInteger(g) && g >= 1 && g <= 17).toBe(true);
  });
  expect(ids.size).toBe(r.recommendations.length);
}

// ─────────────────────────────────── Questionnaire ───────────────────────────────────
describe('questionnaire', () => {
  test('has exactly 27 well-formed indicators (11 E, 10 S, 6 G)', () => {
    expect(INDICATORS.length).toBe(27);
    expect(new Set(INDICATORS.map((i) => i.key)).size).toBe(27);
    const count = { E: 0, S: 0, G: 0 };
    for (const ind of INDICATORS) {
      count[ind.pillar]++;
      expect(ind.key).toMatch(/^[a-z0-9_]+$/);
      expect(ind.vsme_ref).toMatch(/^[BC]\d{1,2}$/);
      expect(ind.sdgs.length).toBeGreaterThan(0);
      for (const g of ind.sdgs) expect(Number.isInteger(g) && g >= 1 && g <= 17).toBe(true);
      expect(ind.question.en.length).toBeGreaterThan(10);
      expect(ind.question.pt.length).toBeGreaterThan(10);
      expect(ind.question.pt).not.toBe(ind.question.en);
      if (ind.type === 'number' || ind.type === 'integer') {
        expect(typeof ind.min).toBe('number');
        expect(typeof ind.max).toBe('number');
        expect(ind.min!).toBeLessThan(ind.max!);
      }
      if (ind.type === 'string[]') expect(ind.options!.length).toBeGreaterThan(0);
    }
    expect(count).toEqual({ E: 11, S: 10, G: 6 });
  });

  test('SECTORS lists the 21 NACE sections A..U', () => {
    expect(SECTORS.map((s) => s.code).join('')).toBe('ABCDEFGHIJKLMNOPQRSTU');
    for (const s of SECTORS) expect(s.name.length).toBeGreaterThan(3);
  });

  test('isValidSector', () => {
    for (const ok of ['A', 'U', 'C25', 'C10', 'C33', 'A01', 'B05', 'D35', 'M69', 'N82', 'T98', 'U99', 'L68']) {
      expect(isValidSector(ok)).toBe(true);
    }
    for (const bad of ['V', 'C99', 'c25', '', 'C5', 'C255', 'A04', 'B04', 'D36', 'J64', 'L67', 'U98', ' C25', 'C25 ', 'CC', '25']) {
      expect(isValidSector(bad)).toBe(false);
    }
  });

  test('validateAnswers accepts a valid questionnaire and the empty one', () => {
    expect(validateAnswers({})).toEqual([]);
    expect(validateAnswers(perfectAnswers())).toEqual([]);
  });

  test('validateAnswers: unknown key', () => {
    expect(validateAnswers({ renewable_energy_pct: 50, bogus_key: 1 })).toEqual([
      { path: 'answers.bogus_key', message: expect.any(String) },
    ]);
  });

  test('validateAnswers: wrong types', () => {
    const errs = validateAnswers({
      renewable_energy_pct: '50',
      min_wage_compliance: 'yes',
      certifications: 'iso_14001',
      work_fatalities: 0.5,
      training_hours_avg: null,
      ghg_intensity: Number.NaN,
      human_rights_policy: ['child_labour', 3],
    });
    expect(errs.map((e) => e.path)).toEqual([
      'answers.renewable_energy_pct',
      'answers.min_wage_compliance',
      'answers.certifications',
      'answers.work_fatalities',
      'answers.training_hours_avg',
      'answers.ghg_intensity',
      'answers.human_rights_policy',
    ]);
    for (const e of errs) expect(e.message.length).toBeGreaterThan(3);
  });

  test('validateAnswers: out of range and bad list values', () => {
    const errs = validateAnswers({
      renewable_energy_pct: 101,
      accident_rate: -0.1,
      governance_gender_balance_pct: 60,
      biodiversity_sensitive_sites: -1,
      certifications: ['iso_14001', 'iso_14001'],
      sustainability_policies: ['climate_change', 'space_policy'],
      employees_permanent_pct: 100,
      energy_intensity: 0,
    });
    expect(errs.map((e) => e.path)).toEqual([
      'answers.renewable_energy_pct',
      'answers.accident_rate',
      'answers.governance_gender_balance_pct',
      'answers.biodiversity_sensitive_sites',
      'answers.certifications',
      'answers.sustainability_policies',
    ]);
  });

  test('validateAnswers: "not_applicable" only where VSME allows it', () => {
    expect(
      validateAnswers({
        renewable_energy_pct: 'not_applicable',
        employee_turnover_pct: 'not_applicable',
        gender_pay_gap_pct: 'not_applicable',
        pollutant_emissions_kg: 'not_applicable',
        min_wage_compliance: 'not_applicable',
        certifications: 'not_applicable',
      }).map((e) => e.path),
    ).toEqual(['answers.renewable_energy_pct', 'answers.min_wage_compliance', 'answers.certifications']);
    // waste_recycled_pct: only with waste_total_t === 0 in the same answers
    expect(validateAnswers({ waste_total_t: 0, waste_recycled_pct: 'not_applicable' })).toEqual([]);
    expect(validateAnswers({ waste_total_t: 5, waste_recycled_pct: 'not_applicable' }).map((e) => e.path)).toEqual([
      'answers.waste_recycled_pct',
    ]);
    expect(validateAnswers({ waste_recycled_pct: 'not_applicable' }).map((e) => e.path)).toEqual([
      'answers.waste_recycled_pct',
    ]);
    for (const ind of INDICATORS) {
      const errs = validateAnswers(
        ind.key === 'waste_recycled_pct'
          ? { waste_total_t: 0, [ind.key]: 'not_applicable' }
          : { [ind.key]: 'not_applicable' },
      );
      expect(errs.length).toBe(ind.applicability === null ? 1 : 0);
    }
  });

  test('answersSchema mirrors INDICATORS', () => {
    const schema = answersSchema() as unknown as {
      type: string;
      additionalProperties: boolean;
      properties: Record<string, Record<string, unknown>>;
      required?: string[];
    };
    expect(schema.type).toBe('object');
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required ?? []).toEqual([]);
    expect(Object.keys(schema.properties)).toEqual(INDICATORS.map((i) => i.key));
    for (const ind of INDICATORS) {
      const p = schema.properties[ind.key]!;
      expect(p.description).toBe(ind.question.en);
      const json = JSON.stringify(p);
      expect(json.includes('not_applicable')).toBe(ind.applicability !== null);
      if (ind.options) for (const o of ind.options) expect(json).toContain(`"${o}"`);
      if (ind.max !== undefined) expect(json).toContain(`"maximum":${ind.max}`);
    }
  });
});

// ────────────────────────────────────── Engine ───────────────────────────────────────
describe('engine', () => {
  test('version and weights', () => {
    expect(ESG_ALGORITHM_VERSION).toBe('esg-1.1.0');
    expect(sectorWeights('C25')).toEqual({ E: 0.5, S: 0.3, G: 0.2 });
    expect(sectorWeights('L')).toEqual({ E: 0.5, S: 0.3, G: 0.2 });
    expect(sectorWeights('J62')).toEqual({ E: 0.25, S: 0.4, G: 0.35 });
    expect(sectorWeights('M')).toEqual({ E: 0.25, S: 0.4, G: 0.35 });
    expect(sectorWeights('Q86')).toEqual({ E: 0.4, S: 0.3, G: 0.3 });
    for (const s of SECTORS) {
      const w = sectorWeights(s.code);
      expect(Math.abs(w.E + w.S + w.G - 1)).toBeLessThan(1e-9);
    }
  });

  test('tier bands', () => {
    const cases: [number, string][] = [
      [100, 'leader'], [80, 'leader'], [79, 'advancer'], [60, 'advancer'], [59, 'developing'],
      [40, 'developing'], [39, 'starter'], [20, 'starter'], [19, 'lagging'], [0, 'lagging'],
    ];
    for (const [o, t] of cases) expect(tierForOverall(o)).toBe(t as ReturnType<typeof tierForOverall>);
  });

  test('empty questionnaire → lagging, zero scores, recommendations', () => {
    for (const sector of ['C25', 'J', 'Q86', 'A01']) {
      const r = assessEsg({ sector, answers: {} }, 'en');
      expectWellFormed(r);
      expect(r).toMatchObject({ overall: 0, tier: 'lagging', environmental: 0, social: 0, governance: 0, vsme_alignment: 0, aligned_sdgs: [] });
      expect(r.recommendations.length).toBe(10);
    }
  });

  test('perfect questionnaire → leader, 100 pillars, alignment 27', () => {
    for (const s of SECTORS) {
      const r = assessEsg({ sector: s.code, answers: perfectAnswers() }, 'pt');
      expectWellFormed(r);
      expect(r).toMatchObject({ overall: 100, tier: 'leader', environmental: 100, social: 100, governance: 100, vsme_alignment: 27 });
      expect(r.recommendations).toEqual([]);
      expect(r.aligned_sdgs.length).toBeGreaterThan(10);
    }
  });

  test('examples are valid and give their tier', () => {
    const expected = { leader: 'leader', developing_manufacturer: 'developing', lagging_services: 'lagging' } as const;
    for (const [name, body] of Object.entries(ESG_EXAMPLES)) {
      expect(body.nif).toMatch(/^5\d{8}$/);
      const d = body.nif.split('').map(Number);
      const r = d.slice(0, 8).reduce((acc, x, k) => acc + x * (9 - k), 0) % 11;
      expect(d[8]).toBe(r < 2 ? 0 : 11 - r);
      expect(isValidSector(body.sector)).toBe(true);
      expect(validateAnswers(body.answers)).toEqual([]);
      for (const lang of ['en', 'pt'] as const) {
        const res = assessEsg(body, lang);
        expectWellFormed(res);
        expect(res.tier).toBe(expected[name as keyof typeof expected]);
      }
    }
    expect(assessEsg(ESG_EXAMPLES.leader, 'en').vsme_alignment).toBe(27);
  });

  test('property: bounds and well-formedness on random valid inputs', () => {
    const rng = mulberry32(0xc0ffee);
    for (let n = 0; n < 3000; n++) {
      const input = randomInput(rng);
      expect(validateAnswers(input.answers)).toEqual([]);
      const r = assessEsg(input, rng() < 0.5 ? 'en' : 'pt');
      expectWellFormed(r);
      expect(r.vsme_alignment).toBe(Object.keys(input.answers).length);
    }
  });

  test('property: determinism and no mutation of the input', () => {
    const rng = mulberry32(42);
    for (let n = 0; n < 500; n++) {
      const input = randomInput(rng);
      const snapshot = structuredClone(input);
      const a = assessEsg(input, 'en');
      // interleave another evaluation to catch leaking module state
      assessEsg(randomInput(rng), 'pt');
      const b = assessEsg(structuredClone(input), 'en');
      expect(b).toEqual(a);
      expect(input).toEqual(snapshot);
    }
  });

  test('property: a better answer never lowers its pillar score nor overall', () => {
    const rng = mulberry32(7);
    let checked = 0;
    for (let n = 0; n < 400; n++) {
      const input = randomInput(rng);
      const base = assessEsg(input, 'en');
      for (const ind of INDICATORS) {
        if (ind.better === null) continue;
        for (let rep = 0; rep < 2; rep++) {
          const nv = betterValue(rng, ind, input.answers[ind.key]);
          if (nv === undefined) continue;
          const answers = { ...input.answers, [ind.key]: nv };
          expect(validateAnswers(answers)).toEqual([]);
          const r = assessEsg({ sector: input.sector, answers }, 'en');
          const field = PILLAR_FIELD[ind.pillar];
          if (r[field] < base[field] || r.overall < base.overall) {
            const brief = (x: EsgResult) => ({ overall: x.overall, [field]: x[field] });
            throw new Error(`monotonicity violated for ${ind.key}: ${JSON.stringify({ sector: input.sector, before: input.answers[ind.key], after: nv, base: brief(base), now: brief(r) })}`);
          }
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(5000);
  });

  test('missing answers score 0; "not_applicable" is left out of the pillar mean', () => {
    const base = { ...perfectAnswers() };
    delete base.employee_turnover_pct;
    const missing = assessEsg({ sector: 'C', answers: base }, 'en');
    expect(missing.social).toBeLessThan(100);
    expect(missing.vsme_alignment).toBe(26);
    expect(missing.recommendations.map((r) => r.id)).toEqual(['rec-staff-retention']);
    const na = assessEsg({ sector: 'C', answers: { ...base, employee_turnover_pct: 'not_applicable' } }, 'en');
    expect(na.social).toBe(100);
    expect(na.vsme_alignment).toBe(27);
    expect(na.recommendations).toEqual([]);
  });

  test('intensity indicators are judged against the sector benchmark', () => {
    const a = { ghg_intensity: 100 };
    // 100 tCO2e/M€ is good for manufacturing but poor for business services
    expect(assessEsg({ sector: 'C', answers: a }, 'en').environmental).toBeGreaterThan(
      assessEsg({ sector: 'J', answers: a }, 'en').environmental,
    );
  });

  test('aligned SDGs follow the indicators that meet the threshold', () => {
    const r = assessEsg({ sector: 'C', answers: { water_intensity: 10 } }, 'en');
    expect(r.aligned_sdgs).toEqual([6]);
    const bad = assessEsg({ sector: 'C', answers: { water_intensity: 1e6 } }, 'en');
    expect(bad.aligned_sdgs).toEqual([]);
  });

  test('recommendations are prioritised, capped and localised (pt differs from en)', () => {
    const en = assessEsg({ sector: 'C25', answers: {} }, 'en');
    const pt = assessEsg({ sector: 'C25', answers: {} }, 'pt');
    expect(pt.recommendations.map((r) => r.id)).toEqual(en.recommendations.map((r) => r.id));
    for (let k = 0; k < en.recommendations.length; k++) {
      expect(pt.recommendations[k]!.title).not.toBe(en.recommendations[k]!.title);
      expect(pt.recommendations[k]!.body).not.toBe(en.recommendations[k]!.body);
      expect(pt.recommendations[k]!.timeline).toMatch(/meses$/);
      expect(en.recommendations[k]!.timeline).toMatch(/months$/);
    }
    // sector materiality changes the order: health & safety ranks higher in construction than in IT services
    const rank = (sector: string, id: string) =>
      assessEsg({ sector, answers: {} }, 'en').recommendations.findIndex((r) => r.id === id);
    const f = rank('F', 'rec-health-safety');
    const j = rank('J', 'rec-health-safety');
    expect(f).toBeGreaterThanOrEqual(0);
    expect(j === -1 || f < j).toBe(true);
  });
});

/** sha256 of every text of the esg-1.1.0 catalogue (every recommendation × variant × language × basis) */
const ESG_1_1_0_CATALOGUE = '504d1ba981eb71481f11bbb9f0e5c1ab0237973adda35bace2adeb168f965b58';

describe('stored recommendations and the answer JSON', () => {
  test('a recommendation rendered from its stored reference is the one the engine returned (2,000 random assessments, en and pt)', () => {
    const rng = mulberry32(2311);
    let missing = 0;
    let weak = 0;
    const variants = new Set<string>();
    for (let n = 0; n < 2000; n++) {
      const input = randomInput(rng);
      for (const lang of ['en', 'pt'] as const) {
        for (const r of assessEsg(input, lang).recommendations) {
          const ref = recommendationRef(r);
          // the variant is stored only when it is not the default
          expect(Object.keys(ref).sort()).toEqual(ref.variant === undefined ? ['basis', 'id', 'impact', 'priority'] : ['basis', 'id', 'impact', 'priority', 'variant']);
          expect(ref.variant).not.toBe('default');
          if (ref.basis === 'missing') missing++;
          else weak++;
          variants.add(`${ref.id}/${ref.variant ?? 'default'}`);
          expect(renderRecommendation(ref, lang)).toEqual(r);
          expect(renderRecommendation(ref, lang, ESG_ALGORITHM_VERSION)).toEqual(r);
        }
      }
    }
    // both openings of the body were exercised, and most variants
    expect(missing).toBeGreaterThan(100);
    expect(weak).toBeGreaterThan(100);
    expect(variants.size).toBeGreaterThan(50);
  });

  test('the recommendation catalogue of this algorithm version is pinned: stored references render as they were answered', () => {
    // Changing a recommendation's texts, SDGs, pillar or effort, or removing one, changes what the
    // stored assessments of this version render to: bump ESG_ALGORITHM_VERSION and keep the earlier
    // catalogue for them (docs/esg.md), then pin the new one here.
    // Each version's catalogue stays pinned while assessments made with it may be stored.
    const PINNED: Record<string, string> = {
      'esg-1.0.0': '8cd2b9cef366848d3b9f42b8f5ada05199addbdf17e777d6b2c4369a7ea5cf81',
      'esg-1.1.0': ESG_1_1_0_CATALOGUE,
    };
    const sha = (x: unknown) => new Bun.CryptoHasher('sha256').update(JSON.stringify(x)).digest('hex');
    const render = (version: string, withVariants: boolean) =>
      RECOMMENDATION_IDS.flatMap((id) =>
        (withVariants ? RECOMMENDATION_VARIANTS[id]! : ['default']).flatMap((variant) =>
          (['en', 'pt'] as const).flatMap((lang) =>
            (['missing', 'weak'] as const).map((basis) => renderRecommendation({ id, priority: 1, impact: 'high', basis, ...(variant === 'default' ? {} : { variant }) }, lang, version)),
          ),
        ),
      );
    // esg-1.0.0 (references without a variant): exactly the texts it answered with
    const v100 = render('esg-1.0.0', false);
    expect(v100.every((r) => r !== null)).toBe(true);
    expect(sha(v100)).toBe(PINNED['esg-1.0.0']!);
    // a variant never changes how an esg-1.0.0 reference renders
    for (const id of RECOMMENDATION_IDS) {
      for (const variant of RECOMMENDATION_VARIANTS[id]!) {
        for (const lang of ['en', 'pt'] as const) {
          expect(renderRecommendation({ id, priority: 2, impact: 'low', basis: 'weak', variant }, lang, 'esg-1.0.0')).toEqual(renderRecommendation({ id, priority: 2, impact: 'low', basis: 'weak' }, lang, 'esg-1.0.0'));
        }
      }
    }
    // the current version: every variant of every recommendation
    const current = render(ESG_ALGORITHM_VERSION, true);
    expect(current.every((r) => r !== null)).toBe(true);
    expect(sha(current)).toBe(PINNED[ESG_ALGORITHM_VERSION]!);
    // its default texts are esg-1.0.0's
    expect(sha(render(ESG_ALGORITHM_VERSION, false))).toBe(PINNED['esg-1.0.0']!);
  });

  test('a reference the catalogue does not know renders as nothing; an unknown recommendation has no reference', () => {
    expect(renderRecommendation({ id: 'rec-retired', priority: 1, impact: 'high', basis: 'weak' }, 'en')).toBeNull();
    const [r] = assessEsg({ sector: 'C25', answers: {} }, 'en').recommendations;
    expect(() => recommendationRef({ ...r!, id: 'rec-unknown' })).toThrow(/unknown recommendation/);
  });

  test('esgAnswerBody is exactly JSON.stringify of the answer in UTF-8, whatever the strings around it hold', async () => {
    const rng = mulberry32(77);
    const references = ['x', '"recommendations":[]', '\\"recommendations\\":[]', 'é "q" \n 🙂', ''];
    for (let n = 0; n < 500; n++) {
      const input = randomInput(rng);
      const lang = n % 2 ? 'pt' : 'en';
      const answer = {
        assessment_id: crypto.randomUUID(),
        ...assessEsg(input, lang),
        algorithm_version: ESG_ALGORITHM_VERSION,
        computed_at: new Date(1_700_000_000_000 + n).toISOString(),
        synthetic: true,
        ...(n % 3 ? { customer_reference: references[n % references.length]! } : {}),
      };
      expect(new TextDecoder().decode(esgAnswerBody(answer))).toBe(JSON.stringify(answer));
    }
    // strings that look like the recommendations' key, before it and after it
    const [first] = assessEsg({ sector: 'C25', answers: {} }, 'pt').recommendations;
    for (const before of references) {
      const answer = { note: before, nested: { recommendations: [] as never[], text: before }, recommendations: [first!], customer_reference: before };
      expect(new TextDecoder().decode(esgAnswerBody(answer))).toBe(JSON.stringify(answer));
      const odd = JSON.parse(`{"__proto__": ${JSON.stringify(before)}, "recommendations": [], "1": 2, "tail": null}`);
      odd.recommendations = [first!];
      expect(new TextDecoder().decode(esgAnswerBody(odd))).toBe(JSON.stringify(odd));
    }
    // no recommendations at all
    const none = { overall: 100, recommendations: [], customer_reference: '"recommendations":[]' };
    expect(new TextDecoder().decode(esgAnswerBody(none as never))).toBe(JSON.stringify(none));
  });
});

// ─────────────────────── Recommendation texts that fit the answers ───────────────────────
describe('recommendation texts fit the answers (esg-1.1.0 variants)', () => {
  const recOf = (answers: Record<string, AnswerValue>, id: string, lang: 'en' | 'pt', sector = 'C25') => {
    expect(validateAnswers(answers)).toEqual([]);
    const r = assessEsg({ sector, answers }, lang).recommendations.find((x) => x.id === id);
    if (!r) throw new Error(`${id} not recommended`);
    return r;
  };

  test('reviewer case: a company holding ISO 14001 or EMAS is not told to start with ISO 14001 or EMAS', () => {
    for (const held of [['iso_14001'], ['emas'], ['iso_14001', 'emas']]) {
      const answers = { ...perfectAnswers(), certifications: held };
      const en = recOf(answers, 'rec-certifications', 'en');
      expect(en.body).not.toContain('Start with the system closest');
      expect(en.body).not.toContain('ISO 14001');
      expect(en.body).not.toContain('EMAS');
      expect(en.body).toContain('Keep your environmental management system certified (surveillance and recertification audits');
      expect(en.body).toContain('ISO 45001 for health and safety, or ISO 50001 for energy');
      expect(en.title).toBe('Build on your certified management systems');
      const pt = recOf(answers, 'rec-certifications', 'pt');
      expect(pt.body).not.toContain('Comece pelo sistema');
      expect(pt.body).not.toContain('ISO 14001');
      expect(pt.body).not.toContain('EMAS');
      expect(pt.body).toContain('Mantenha certificado o seu sistema de gestão ambiental (auditorias de acompanhamento e de renovação');
      expect(pt.body).toContain('ISO 45001 para a segurança e saúde no trabalho, ou ISO 50001 para a energia');
      expect(pt.title).toBe('Consolidar os sistemas de gestão certificados');
    }
    // without a certification the esg-1.0.0 text still fits
    const none = { ...perfectAnswers(), certifications: [] };
    expect(recOf(none, 'rec-certifications', 'en').body).toContain('Start with the system closest to your main risks (ISO 14001 or EMAS');
    expect(recOf(none, 'rec-certifications', 'pt').body).toContain('Comece pelo sistema mais próximo dos seus principais riscos (ISO 14001 ou EMAS');
  });

  test('reviewer case: a company holding ISO 45001 is not told to consider ISO 45001', () => {
    const answers = { ...perfectAnswers(), certifications: ['iso_45001'], accident_rate: 40 };
    const en = recOf(answers, 'rec-health-safety', 'en');
    expect(en.body).not.toContain('consider an ISO 45001');
    expect(en.body).toContain('Use your ISO 45001 management system: review the risk assessment required by Law 102/2009');
    // both B9 figures are disclosed: not asked for again
    expect(en.body).not.toContain('Report accidents per 200,000 hours');
    const pt = recOf(answers, 'rec-health-safety', 'pt');
    expect(pt.body).not.toContain('considere um sistema de gestão ISO 45001');
    expect(pt.body).toContain('Apoie-se no seu sistema de gestão ISO 45001: reveja a avaliação de riscos exigida pela Lei n.º 102/2009');
    expect(pt.body).not.toContain('Reporte os acidentes');
    // and its certification recommendation does not propose ISO 45001 either
    const certs = recOf(answers, 'rec-certifications', 'en');
    expect(certs.body).toContain('Keep your ISO 45001 health and safety system certified');
    expect(certs.body).not.toMatch(/ISO 45001 for health/);
    // without ISO 45001 the text proposes it
    const without = { ...perfectAnswers(), certifications: ['iso_14001', 'iso_50001', 'iso_37001', 'sa8000'], accident_rate: 40 };
    expect(recOf(without, 'rec-health-safety', 'en').body).toContain('consider an ISO 45001 management system');
    expect(recOf(without, 'rec-health-safety', 'pt').body).toContain('considere um sistema de gestão ISO 45001');
  });

  test('reviewer case: zero Scope 1 and 100 % renewable energy are not told to replace boilers nor to buy renewable electricity', () => {
    const answers = { ...perfectAnswers(), ghg_scope1_tco2e: 0, renewable_energy_pct: 100, ghg_intensity: 5000 };
    const en = recOf(answers, 'rec-decarbonise-operations', 'en', 'J62');
    expect(en.body).not.toContain('replace fossil boilers');
    expect(en.body).not.toContain('combine these with renewable electricity');
    expect(en.body).not.toMatch(/boiler|refrigerant|guarantees of origin/);
    expect(en.body).toContain('Your direct (Scope 1) emissions are zero or small and your energy is already renewable or nearly so');
    const pt = recOf(answers, 'rec-decarbonise-operations', 'pt', 'J62');
    expect(pt.body).not.toContain('substitua caldeiras');
    expect(pt.body).not.toContain('combine estas medidas com eletricidade renovável');
    expect(pt.body).not.toMatch(/caldeira|refrigerante|garantias de origem/);
    expect(pt.body).toContain('As suas emissões diretas (âmbito 1) são nulas ou reduzidas e a sua energia já é renovável ou quase');
    // each condition alone has its own text
    const scope1Only = recOf({ ...answers, renewable_energy_pct: 30 }, 'rec-decarbonise-operations', 'en', 'J62');
    expect(scope1Only.body).toContain('so most of your footprint is the electricity you buy');
    expect(scope1Only.body).not.toContain('boilers');
    const renewableOnly = recOf({ ...answers, ghg_scope1_tco2e: 400, ghg_scope2_lb_tco2e: 50 }, 'rec-decarbonise-operations', 'en', 'J62');
    expect(renewableOnly.body).toContain('Your energy is already renewable or nearly so');
    expect(renewableOnly.body).not.toContain('combine these with renewable electricity');
    // a low share of Scope 1 counts as low (≤ 10 % of Scope 1 + 2)
    expect(recOf({ ...answers, ghg_scope1_tco2e: 5, ghg_scope2_lb_tco2e: 95, renewable_energy_pct: 30 }, 'rec-decarbonise-operations', 'pt', 'J62').body).toContain('são nulas ou uma pequena parte do total');
    // and with neither, the esg-1.0.0 text
    expect(recOf({ ...answers, ghg_scope1_tco2e: 400, ghg_scope2_lb_tco2e: 50, renewable_energy_pct: 30 }, 'rec-decarbonise-operations', 'en', 'J62').body).toContain('replace fossil boilers and furnaces with heat pumps');
  });

  test('other answers the default texts contradicted', () => {
    const p = perfectAnswers();
    const cases: [Record<string, AnswerValue>, string, RegExp, RegExp][] = [
      // [answers, recommendation, absent (en|pt), present (en|pt)]
      [{ ...p, renewable_energy_pct: 10, ghg_scope1_tco2e: 0 }, 'rec-renewable-energy', /electrify heat|eletrifique o calor/, /Scope 1 emissions are zero|âmbito 1 são nulas/],
      [{ ...p, ghg_scope2_lb_tco2e: undefined as never }, 'rec-ghg-inventory', /fuel|combustíve/, /You already report Scope 1|Já reporta o âmbito 1/],
      [{ ...p, ghg_scope1_tco2e: undefined as never }, 'rec-ghg-inventory', /electricity|eletricidade/, /You already report Scope 2|Já reporta o âmbito 2/],
      [{ ...p, ghg_reduction_target_pct: 10 }, 'rec-ghg-target', /Commit to cutting|Comprometa-se a reduzir/, /Raise your adopted target|Reforce a meta adotada/],
      [{ ...p, ghg_reduction_target_pct: 0, ghg_scope1_tco2e: 0, ghg_scope2_lb_tco2e: 0 }, 'rec-ghg-target', /42%/, /percentage cut does not apply|redução percentual não se aplica/],
      [{ ...p, pollutant_emissions_kg: undefined as never }, 'rec-pollution-reporting', /if no such reporting applies|se não estiver sujeito/, /Your certified environmental management system|O seu sistema de gestão ambiental certificado/],
      [{ ...p, biodiversity_sensitive_sites: 6 }, 'rec-biodiversity', /Map your sites|Cruze a localização/, /each of the sites you reported|cada uma das instalações que reportou/],
      [{ ...p, waste_total_t: undefined as never }, 'rec-waste-tracking', /Record every waste collection|Registe cada recolha/, /You already report the share|Já reporta a percentagem/],
      [{ ...p, energy_intensity: 90000 }, 'rec-energy-efficiency', /Run an energy audit|Faça uma auditoria energética/, /Use your ISO 50001|Use o seu sistema de gestão de energia ISO 50001/],
      [{ ...p, gender_pay_gap_pct: 30 }, 'rec-gender-pay-gap', /Compute the unadjusted gap|Calcule a disparidade/, /Analyse the gap you reported|Analise a disparidade que reportou/],
      [{ ...p, collective_bargaining_pct: 20 }, 'rec-collective-bargaining', /Identify the collective agreement|Identifique a convenção/, /already covers part of your staff|já abrange parte do pessoal/],
      [{ ...p, certifications: [], human_rights_policy: ['grievance_mechanism'] }, 'rec-human-rights-policy', /open a confidential complaints channel|crie um canal de denúncia/, /make sure your complaints channel|garanta que o seu canal de denúncia/],
      [{ ...p, certifications: [], human_rights_policy: ['child_labour', 'discrimination'] }, 'rec-human-rights-policy', /Publish a code of conduct|Publique um código de conduta/, /Extend your code of conduct|Alargue o seu código de conduta/],
      [{ ...p, sustainability_policies: ['climate_change', 'own_workforce', 'business_conduct'] }, 'rec-sustainability-policies', /at least climate change|pelo menos alterações climáticas|Adopt short written policies/, /You already have policies on climate change|Já tem políticas para as alterações climáticas/],
      [{ ...p, sustainability_policies: ['pollution'] }, 'rec-sustainability-policies', /Adopt short written policies|Adote políticas escritas curtas/, /Complete your written policies|Complete as suas políticas escritas/],
      [{ ...p, corruption_convictions: 1, human_rights_policy: ['child_labour', 'grievance_mechanism'], certifications: ['iso_14001', 'iso_45001'], sustainability_policies: ['climate_change'] }, 'rec-anti-corruption', /a code of conduct|a whistleblowing channel \(|um código de conduta|um canal de denúncia \(/, /extend your code of conduct.*make sure your complaints channel|alargue o seu código de conduta.*garanta que o seu canal de denúncia/],
      [{ ...p, corruption_convictions: 1 }, 'rec-anti-corruption', /Adopt a corruption risk prevention plan|Adote um plano/, /Use your ISO 37001|Apoie-se no seu sistema de gestão antissuborno ISO 37001/],
      [{ ...p, controversial_revenue_pct: 30 }, 'rec-controversial-revenue', /and disclose the share|e divulgue a percentagem/, /report progress on the share every year|reporte todos os anos a evolução/],
    ];
    for (const [raw, id, absent, present] of cases) {
      const answers = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined));
      for (const lang of ['en', 'pt'] as const) {
        const r = recOf(answers, id, lang);
        expect(r.body, `${id} ${lang}`).not.toMatch(absent);
        expect(r.body, `${id} ${lang}`).toMatch(present);
      }
    }
  });

  test('reviewer cases (2): one B9 figure, a business conduct policy, other certifications, SA8000, a substantial renewable share', () => {
    const p = perfectAnswers();
    const without = (a: Record<string, AnswerValue>, ...keys: string[]) => Object.fromEntries(Object.entries(a).filter(([k]) => !keys.includes(k)));
    // health and safety: the accident rate alone asks only for the fatalities, the fatalities alone only for the rate; with ISO 45001 too
    for (const certs of [[], ['iso_45001']]) {
      const iso = certs.length > 0;
      const rateOnly = { ...without(p, 'work_fatalities'), accident_rate: 9, certifications: certs };
      const en = recOf(rateOnly, 'rec-health-safety', 'en');
      expect(en.body).not.toContain('Report accidents per 200,000 hours');
      expect(en.body).toContain('also report the number of fatalities from work-related injuries and ill health, zero included (VSME B9)');
      expect(en.body).toContain(iso ? 'Use your ISO 45001 management system' : 'consider an ISO 45001 management system');
      const pt = recOf(rateOnly, 'rec-health-safety', 'pt');
      expect(pt.body).not.toContain('Reporte os acidentes por 200 000 horas');
      expect(pt.body).toContain('reporte também o número de mortes por acidentes de trabalho e doenças profissionais, mesmo que seja zero (VSME B9)');
      expect(pt.body).toContain(iso ? 'Apoie-se no seu sistema de gestão ISO 45001' : 'considere um sistema de gestão ISO 45001');
      const fatalitiesOnly = { ...without(p, 'accident_rate'), work_fatalities: 1, certifications: certs };
      const fen = recOf(fatalitiesOnly, 'rec-health-safety', 'en');
      expect(fen.body).not.toMatch(/fatalities/);
      expect(fen.body).toMatch(/Also report your accident rate,? per 200,000 hours worked \(VSME B9\)/);
      const fpt = recOf(fatalitiesOnly, 'rec-health-safety', 'pt');
      expect(fpt.body).not.toMatch(/mortes/);
      expect(fpt.body).toMatch(/Reporte também a taxa de acidentes,? por 200 000 horas trabalhadas \(VSME B9\)/);
    }
    // anti-corruption: a business conduct policy (B2, ESRS G1) is the code of conduct
    const conduct = { ...p, corruption_convictions: 1, certifications: [], human_rights_policy: [], sustainability_policies: ['business_conduct'] };
    const ac = recOf(conduct, 'rec-anti-corruption', 'en');
    expect(ac.body).not.toContain('a code of conduct');
    expect(ac.body).toContain('Adopt a corruption risk prevention plan, training and a whistleblowing channel (');
    expect(ac.body).toContain('check that your business conduct policy, as your code of conduct, sets out the rules on corruption and bribery');
    const acPt = recOf(conduct, 'rec-anti-corruption', 'pt');
    expect(acPt.body).not.toContain('um código de conduta');
    expect(acPt.body).toContain('Adote um plano de prevenção de riscos de corrupção, formação e um canal de denúncia (');
    expect(acPt.body).toContain('verifique se a sua política de conduta empresarial, enquanto código de conduta');
    expect(recOf({ ...conduct, human_rights_policy: ['grievance_mechanism'] }, 'rec-anti-corruption', 'en').body).toContain('Adopt a corruption risk prevention plan and training (');
    // certifications outside ISO 14001/EMAS, 45001 and 50001 are named as held and built on
    const others = { ...p, certifications: ['iso_37001', 'sa8000', 'iso_9001'] };
    const ce = recOf(others, 'rec-certifications', 'en');
    expect(ce.title).toBe('Build on the certifications you hold');
    expect(ce.body).not.toContain('Start with the system closest');
    expect(ce.body).toContain('Keep your ISO 37001 anti-bribery management system, your SA8000 social accountability system and your ISO 9001 quality management system current');
    expect(ce.body).toContain('Then add the certification closest to your remaining risks: ISO 14001 or EMAS for the environment, or ISO 45001 for health and safety, or ISO 50001 for energy');
    const cp = recOf(others, 'rec-certifications', 'pt');
    expect(cp.title).toBe('Partir das certificações que já detém');
    expect(cp.body).not.toContain('Comece pelo sistema');
    expect(cp.body).toContain('Mantenha em vigor o seu sistema ISO 37001 de gestão antissuborno, o seu sistema SA8000 de responsabilidade social e o seu sistema ISO 9001 de gestão da qualidade');
    // every certification of the questionnaire is acknowledged when held, in both languages
    const NAMES: Record<string, [string, string]> = {
      iso_37001: ['your ISO 37001', 'o seu sistema ISO 37001'], sa8000: ['your SA8000', 'o seu sistema SA8000'], np_4469: ['your NP 4469', 'o seu sistema NP 4469'],
      b_corp: ['your B Corp certification', 'a sua certificação B Corp'], iso_9001: ['your ISO 9001', 'o seu sistema ISO 9001'],
      iso_14001: ['your environmental management system', 'o seu sistema de gestão ambiental'], emas: ['your environmental management system', 'o seu sistema de gestão ambiental'],
      iso_45001: ['your ISO 45001', 'o seu sistema ISO 45001'], iso_50001: ['your ISO 50001', 'o seu sistema ISO 50001'],
    };
    for (const [cert, [en, pt]] of Object.entries(NAMES)) {
      expect(recOf({ ...p, certifications: [cert] }, 'rec-certifications', 'en').body).toContain(en);
      expect(recOf({ ...p, certifications: [cert] }, 'rec-certifications', 'pt').body).toContain(pt);
    }
    // SA8000 requires the five topics' policy and a complaints procedure: not "publish a code … open a channel"
    const sa = { ...p, certifications: ['sa8000'], human_rights_policy: [] };
    const hr = recOf(sa, 'rec-human-rights-policy', 'en');
    expect(hr.body).not.toMatch(/Publish a code of conduct|open a confidential complaints channel/);
    expect(hr.body).toContain('Your SA8000 certification already requires');
    const hrPt = recOf(sa, 'rec-human-rights-policy', 'pt');
    expect(hrPt.body).not.toMatch(/Publique um código de conduta|crie um canal de denúncia/);
    expect(hrPt.body).toContain('A sua certificação SA8000 já exige');
    // and for anti-corruption SA8000 counts as a code of conduct and a channel
    const saAc = recOf({ ...sa, corruption_convictions: 1, sustainability_policies: [] }, 'rec-anti-corruption', 'en');
    expect(saAc.body).toContain('Adopt a corruption risk prevention plan and training (');
    // decarbonisation: a substantial renewable share (≥ 50 %, < 90 %) is extended, not "combined with renewable electricity"
    for (const pct of [50, 85, 89.9]) {
      const answers = { ...p, ghg_intensity: 5000, ghg_scope1_tco2e: 400, ghg_scope2_lb_tco2e: 50, renewable_energy_pct: pct };
      const d = recOf(answers, 'rec-decarbonise-operations', 'en', 'J62');
      expect(d.body).not.toContain('combine these with renewable electricity');
      expect(d.body).toContain('extend your renewable share, already substantial, to all the electricity you use');
      const dp = recOf(answers, 'rec-decarbonise-operations', 'pt', 'J62');
      expect(dp.body).not.toContain('combine estas medidas com eletricidade renovável');
      expect(dp.body).toContain('alargue a quota renovável, já significativa, a toda a eletricidade que consome');
      const low = recOf({ ...answers, ghg_scope1_tco2e: 4 }, 'rec-decarbonise-operations', 'en', 'J62');
      expect(low.body).toContain('much of your energy is already renewable');
      expect(low.body).toContain('extend your renewable share to all electricity');
    }
    expect(recOf({ ...p, ghg_intensity: 5000, ghg_scope1_tco2e: 400, ghg_scope2_lb_tco2e: 50, renewable_energy_pct: 49.9 }, 'rec-decarbonise-operations', 'en', 'J62').body).toContain('combine these with renewable electricity');
  });

  /** random answers that hit the variants' conditions often (certifications held, zero Scope 1, renewable energy…) */
  function variedInput(rng: Rng): { sector: string; answers: Record<string, AnswerValue> } {
    const input = randomInput(rng);
    const a = input.answers;
    const maybe = (key: string, values: AnswerValue[]) => {
      if (rng() < 0.3) a[key] = pick(rng, values);
    };
    maybe('ghg_scope1_tco2e', [0, 0.5, 3, 400]);
    maybe('ghg_scope2_lb_tco2e', [0, 20, 300]);
    maybe('renewable_energy_pct', [0, 30, 49.9, 50, 85, 89.9, 90, 100]);
    maybe('ghg_reduction_target_pct', [0, 5, 20]);
    maybe('certifications', [['iso_14001'], ['emas'], ['iso_45001'], ['iso_50001'], ['iso_37001'], ['iso_14001', 'iso_50001'], ['iso_45001', 'iso_50001', 'iso_9001'], ['emas', 'iso_37001'], ['sa8000'], ['iso_37001', 'sa8000', 'iso_9001'], ['np_4469', 'b_corp'], ['iso_9001']]);
    maybe('accident_rate', [0.5, 9, 40]);
    maybe('work_fatalities', [0, 1]);
    maybe('human_rights_policy', [[], ['grievance_mechanism'], ['child_labour'], ['discrimination', 'grievance_mechanism']]);
    maybe('sustainability_policies', [[], ['pollution'], ['climate_change', 'own_workforce', 'business_conduct'], ['climate_change'], ['business_conduct']]);
    maybe('corruption_convictions', [0, 1]);
    maybe('collective_bargaining_pct', [0, 30]);
    for (const key of ['accident_rate', 'work_fatalities', 'ghg_intensity', 'certifications', 'pollutant_emissions_kg']) if (rng() < 0.1) delete a[key];
    return input;
  }

  const HELD = {
    ems: { when: ['iso_14001', 'emas'], names: ['ISO 14001', 'EMAS'] },
    ohs: { when: ['iso_45001'], names: ['ISO 45001'] },
    energy: { when: ['iso_50001'], names: ['ISO 50001'] },
    anti_bribery: { when: ['iso_37001'], names: ['ISO 37001'] },
    sa8000: { when: ['sa8000'], names: ['SA8000'] },
    np_4469: { when: ['np_4469'], names: ['NP 4469'] },
    b_corp: { when: ['b_corp'], names: ['B Corp'] },
    quality: { when: ['iso_9001'], names: ['ISO 9001'] },
  } as const;
  const START = { en: /\b(start|starting|consider|adopt|add|adding|introduce|begin|obtain|get certified)\b/i, pt: /\b(comece|considere|pondere|adote|acrescente|acrescentar|introduza|obtenha|implemente)\b/i };
  const YOURS = { en: /\byour\b/i, pt: /\b(seu|sua|seus|suas)\b/ };

  test('property: no text names a certification the company holds as one to start or consider (random answers, en and pt)', () => {
    const rng = mulberry32(14001);
    let checked = 0;
    for (let n = 0; n < 4000; n++) {
      const input = variedInput(rng);
      expect(validateAnswers(input.answers)).toEqual([]);
      const certs = Array.isArray(input.answers.certifications) ? (input.answers.certifications as string[]) : [];
      const held = Object.values(HELD).filter((g) => g.when.some((c) => certs.includes(c)));
      if (!held.length) continue;
      for (const lang of ['en', 'pt'] as const) {
        for (const r of assessEsg(input, lang).recommendations) {
          for (const text of [r.title, ...r.body.split(/(?<=[.;])\s+/)]) {
            for (const g of held) {
              for (const name of g.names) {
                let at = text.indexOf(name);
                if (at < 0) continue;
                checked++;
                // named only as the company's own ("your ISO 45001 …"), never beside a verb that starts one
                if (START[lang].test(text)) throw new Error(`${r.id} (${lang}) names held ${name} beside a start verb: ${text} — ${JSON.stringify(input.answers.certifications)}`);
                for (; at >= 0; at = text.indexOf(name, at + 1)) {
                  if (!YOURS[lang].test(text.slice(Math.max(0, at - 45), at))) throw new Error(`${r.id} (${lang}) names held ${name} not as the company's own: ${text}`);
                }
              }
            }
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(200);
  });

  test('property: no text asks for what the answers show done (random answers, en and pt)', () => {
    const num = (v: AnswerValue | undefined) => (typeof v === 'number' ? v : NaN);
    const list = (v: AnswerValue | undefined) => (Array.isArray(v) ? v : null);
    const has = (v: AnswerValue | undefined, x: string) => !!list(v)?.includes(x);
    // [condition on the answers, recommendation (or any), text that must not appear]
    const RULES: [string, (a: Record<string, AnswerValue>) => boolean, string | null, RegExp][] = [
      ['zero Scope 1: no fuel burning, no refrigerants', (a) => num(a.ghg_scope1_tco2e) === 0, null, /boiler|furnace|refrigerant|electrify heat|caldeira|fornos|refrigerante|eletrifique o calor/],
      ['renewable ≥ 90 %: no renewable electricity to buy', (a) => num(a.renewable_energy_pct) >= 90, null, /guarantees of origin|combine these with renewable|garantias de origem|combine estas medidas/],
      ['zero Scope 1 and 2: no % cut', (a) => num(a.ghg_scope1_tco2e) === 0 && num(a.ghg_scope2_lb_tco2e) === 0, null, /42%/],
      ['a target: not "commit"', (a) => num(a.ghg_reduction_target_pct) > 0, 'rec-ghg-target', /Commit to cutting|Comprometa-se a reduzir/],
      ['Scope 1 known', (a) => !Number.isNaN(num(a.ghg_scope1_tco2e)), 'rec-ghg-inventory', /fuel|combustíve/],
      ['Scope 2 known', (a) => !Number.isNaN(num(a.ghg_scope2_lb_tco2e)), 'rec-ghg-inventory', /electricity|eletricidade/],
      ['an EMS: B4 applies', (a) => has(a.certifications, 'iso_14001') || has(a.certifications, 'emas'), 'rec-pollution-reporting', /if no such reporting applies|se não estiver sujeito/],
      ['ISO 50001: its audit exists', (a) => has(a.certifications, 'iso_50001'), 'rec-energy-efficiency', /Run an energy audit|Faça uma auditoria energética/],
      ['B9 disclosed', (a) => !Number.isNaN(num(a.accident_rate)) && !Number.isNaN(num(a.work_fatalities)), 'rec-health-safety', /Report accidents|Reporte os acidentes/],
      ['accident rate disclosed', (a) => !Number.isNaN(num(a.accident_rate)), 'rec-health-safety', /Report accidents|Reporte os acidentes|report your accident rate|Reporte também a taxa de acidentes/],
      ['fatalities disclosed', (a) => !Number.isNaN(num(a.work_fatalities)), 'rec-health-safety', /fatalities|mortes/],
      ['renewable ≥ 50 %: not "combine with renewable electricity"', (a) => num(a.renewable_energy_pct) >= 50, null, /combine these with renewable|combine estas medidas/],
      ['SA8000: its policy and complaints procedure', (a) => has(a.certifications, 'sa8000'), 'rec-human-rights-policy', /Publish a code of conduct|open a confidential complaints channel|Publique um código de conduta|crie um canal de denúncia/],
      ['SA8000 or a business conduct policy: a code of conduct for corruption', (a) => has(a.certifications, 'sa8000') || has(a.sustainability_policies, 'business_conduct'), 'rec-anti-corruption', /a code of conduct|um código de conduta/],
      ['other certifications held: built on', (a) => (list(a.certifications) ?? []).length > 0, 'rec-certifications', /Start with the system closest|Comece pelo sistema/],
      ['a complaints channel', (a) => has(a.human_rights_policy, 'grievance_mechanism'), null, /open a confidential complaints channel|a whistleblowing channel \(|crie um canal de denúncia|um canal de denúncia \(/],
      ['a code of conduct', (a) => (list(a.human_rights_policy) ?? []).some((x) => x !== 'grievance_mechanism'), null, /a code of conduct|um código de conduta/],
      ['the three core policies', (a) => ['climate_change', 'own_workforce', 'business_conduct'].every((x) => has(a.sustainability_policies, x)), 'rec-sustainability-policies', /at least climate change|pelo menos as alterações|pelo menos alterações/],
      ['some policies', (a) => (list(a.sustainability_policies) ?? []).length > 0, 'rec-sustainability-policies', /Adopt short written policies|Adote políticas escritas curtas, cada uma com um responsável e metas, para os seus temas/],
      ['some bargaining coverage', (a) => num(a.collective_bargaining_pct) > 0, 'rec-collective-bargaining', /Identify the collective agreement|Identifique a convenção/],
      ['pay gap known', (a) => !Number.isNaN(num(a.gender_pay_gap_pct)), 'rec-gender-pay-gap', /Compute the unadjusted gap|Calcule a disparidade/],
      ['recycled share known', (a) => !Number.isNaN(num(a.waste_recycled_pct)), 'rec-waste-tracking', /Record every waste collection|Registe cada recolha/],
      ['sites counted', (a) => !Number.isNaN(num(a.biodiversity_sensitive_sites)), 'rec-biodiversity', /Map your sites|Cruze a localização/],
      ['controversial share disclosed', (a) => !Number.isNaN(num(a.controversial_revenue_pct)), 'rec-controversial-revenue', /and disclose the share|e divulgue a percentagem/],
    ];
    const hits = new Map<string, number>();
    const rng = mulberry32(45001);
    for (let n = 0; n < 4000; n++) {
      const input = variedInput(rng);
      const rules = RULES.filter(([, when]) => when(input.answers));
      if (!rules.length) continue;
      for (const lang of ['en', 'pt'] as const) {
        for (const r of assessEsg(input, lang).recommendations) {
          for (const [name, , id, absent] of rules) {
            if (id !== null && r.id !== id) continue;
            hits.set(name, (hits.get(name) ?? 0) + 1);
            if (absent.test(r.body) || absent.test(r.title)) throw new Error(`${name}: ${r.id} (${lang}) says ${r.body} — ${JSON.stringify(input.answers)}`);
          }
        }
      }
    }
    // every rule was exercised
    for (const [name] of RULES) expect(hits.get(name) ?? 0, name).toBeGreaterThan(5);
  });

  test('the variant is a function of the answers alone: the same answers give the same texts, in any order and whatever ran before', () => {
    const rng = mulberry32(9001);
    for (let n = 0; n < 300; n++) {
      const input = variedInput(rng);
      const reversed = { sector: input.sector, answers: Object.fromEntries(Object.entries(input.answers).reverse()) };
      const a = assessEsg(input, 'pt');
      assessEsg(variedInput(rng), 'en');
      expect(assessEsg(reversed, 'pt')).toEqual(a);
    }
  });

  test('scores, tiers and the order of the recommendations are those of esg-1.0.0: only texts changed', () => {
    // the esg-1.0.0 texts are the default variants, so rendering every result as esg-1.0.0 gives back its numbers and ids
    const rng = mulberry32(100);
    for (let n = 0; n < 500; n++) {
      const r = assessEsg(variedInput(rng), 'en');
      const asOld = r.recommendations.map((x) => renderRecommendation(recommendationRef(x), 'en', 'esg-1.0.0')!);
      expect(asOld.map((x) => [x.id, x.priority, x.impact, x.effort, x.sdgs])).toEqual(r.recommendations.map((x) => [x.id, x.priority, x.impact, x.effort, x.sdgs]));
    }
    expect(assessEsg(ESG_EXAMPLES.developing_manufacturer, 'en')).toMatchObject({ overall: 54, environmental: 48, social: 68, governance: 47 });
    expect(assessEsg(ESG_EXAMPLES.leader, 'en')).toMatchObject({ overall: 94, environmental: 94, social: 97, governance: 91 });
    expect(assessEsg(ESG_EXAMPLES.lagging_services, 'en')).toMatchObject({ overall: 13, environmental: 0, social: 32, governance: 0 });
  });

  test('an esg-1.0.0 reference renders with the esg-1.0.0 text, the variant its answers would pick now notwithstanding', () => {
    const [now] = assessEsg(ESG_EXAMPLES.leader, 'en').recommendations; // holds ISO 14001, NP 4469 and ISO 9001: the "holds_epq" text
    expect(recommendationRef(now!)).toEqual({ id: 'rec-certifications', priority: 1, impact: 'low', basis: 'weak', variant: 'holds_epq' });
    const stored = { id: 'rec-certifications', priority: 1, impact: 'low', basis: 'weak' } as const; // as esg-1.0.0 stored it
    const en = renderRecommendation(stored, 'en', 'esg-1.0.0')!;
    expect(en.body).toBe('Your answer is below the good-practice level used in this assessment. Start with the system closest to your main risks (ISO 14001 or EMAS for the environment, ISO 45001 for health and safety, ISO 50001 for energy), building on any ISO 9001 processes you already run.');
    expect(en.title).toBe('Certify your management systems');
    expect(renderRecommendation(stored, 'pt', 'esg-1.0.0')!.body).toBe('A sua resposta está abaixo do nível de boa prática usado nesta avaliação. Comece pelo sistema mais próximo dos seus principais riscos (ISO 14001 ou EMAS para o ambiente, ISO 45001 para a segurança e saúde no trabalho, ISO 50001 para a energia), aproveitando os processos ISO 9001 que já tenha.');
    // the current version renders the stored variant
    expect(renderRecommendation(recommendationRef(now!), 'en')).toEqual(now!);
  });

  test('the answer JSON caches each form (recommendation × language × variant × basis) a bounded number of times', () => {
    expect(RECOMMENDATION_FORMS).toBe(RECOMMENDATION_IDS.reduce((n, id) => n + RECOMMENDATION_VARIANTS[id]!.length, 0) * 4);
    expect(RECOMMENDATION_FORMS).toBeLessThan(1000);
    const rng = mulberry32(5);
    const seen = new Set<number>();
    for (let n = 0; n < 2000; n++) {
      for (const r of assessEsg(variedInput(rng), n % 2 ? 'pt' : 'en').recommendations) {
        const f = recommendationForm(r);
        expect(f).toBeGreaterThanOrEqual(0);
        expect(f).toBeLessThan(RECOMMENDATION_FORMS);
        seen.add(f);
        // a text not of the catalogue has no form (serialised without the cache)
        expect(recommendationForm({ ...r, title: `${r.title}!` })).toBe(-1);
        expect(recommendationForm({ ...r, id: 'rec-other' })).toBe(-1);
      }
    }
    expect(seen.size).toBeGreaterThan(150);
    const [r] = assessEsg({ sector: 'C', answers: {} }, 'en').recommendations;
    const answer = { recommendations: [{ ...r!, body: 'a body of its own' }, r!] };
    expect(new TextDecoder().decode(esgAnswerBody(answer))).toBe(JSON.stringify(answer));
  });
});
