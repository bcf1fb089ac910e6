import { describe, expect, test } from 'bun:test';
import {
  ESG_ALGORITHM_VERSION,
  assessEsg,
  RECOMMENDATION_IDS,
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
    expect(ESG_ALGORITHM_VERSION).toBe('esg-1.0.0');
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

describe('stored recommendations and the answer JSON', () => {
  test('a recommendation rendered from its stored reference is the one the engine returned (2,000 random assessments, en and pt)', () => {
    const rng = mulberry32(2311);
    let missing = 0;
    let weak = 0;
    for (let n = 0; n < 2000; n++) {
      const input = randomInput(rng);
      for (const lang of ['en', 'pt'] as const) {
        for (const r of assessEsg(input, lang).recommendations) {
          const ref = recommendationRef(r);
          expect(Object.keys(ref).sort()).toEqual(['basis', 'id', 'impact', 'priority']);
          if (ref.basis === 'missing') missing++;
          else weak++;
          expect(renderRecommendation(ref, lang)).toEqual(r);
        }
      }
    }
    // both openings of the body were exercised
    expect(missing).toBeGreaterThan(100);
    expect(weak).toBeGreaterThan(100);
  });

  test('the recommendation catalogue of this algorithm version is pinned: stored references render as they were answered', () => {
    // Changing a recommendation's texts, SDGs, pillar or effort, or removing one, changes what the
    // stored assessments of this version render to: bump ESG_ALGORITHM_VERSION and keep the earlier
    // catalogue for them (docs/esg.md), then pin the new one here.
    const PINNED: Record<string, string> = { 'esg-1.0.0': '8cd2b9cef366848d3b9f42b8f5ada05199addbdf17e777d6b2c4369a7ea5cf81' };
    const rendered = RECOMMENDATION_IDS.flatMap((id) => (['en', 'pt'] as const).flatMap((lang) => (['missing', 'weak'] as const).map((basis) => renderRecommendation({ id, priority: 1, impact: 'high', basis }, lang))));
    expect(rendered.every((r) => r !== null)).toBe(true);
    expect(new Bun.CryptoHasher('sha256').update(JSON.stringify(rendered)).digest('hex')).toBe(PINNED[ESG_ALGORITHM_VERSION]!);
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
