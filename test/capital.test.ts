/**
 * POST /v1/basel/capital (issue 22): the IRB formula against values computed independently (Python's
 * statistics.NormalDist, to 1e-6), three PDs, with and without the SME firm-size adjustment and the
 * supporting factor, both regimes; the standardised weights; PDs from the scoring engine; errors.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { capitalFor, supportingFactor, type ExposureInput } from '../src/features/capital/formulas';
import { normalCdf as normCdf, normalInverse as normInv } from '../src/lib/normal';
import { CapitalResponse } from '../src/features/capital/model';
import { expectError, makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

const line = (o: Partial<ExposureInput>): ExposureInput => ({ pd: 0.01, lgd: 0.45, ead_eur: 1e6, maturity_years: 2.5, turnover_eur: null, approach: 'irb_foundation', retail: false, group_exposure_eur: null, apply_supporting_factor: true, ...o });
/** relative error below tol (absolute for 0) */
const close = (a: number, b: number, tol = 1e-6) => expect(Math.abs(a - b) / (b === 0 ? 1 : Math.abs(b))).toBeLessThan(tol);

describe('the formulas', () => {
  test('the normal distribution to double precision', () => {
    close(normCdf(1.2345), 0.8914916766373298, 1e-14);
    close(normInv(0.999), 3.090232306167813, 1e-13);
    close(normInv(0.0001), -3.71901648545568, 1e-12);
    close(normInv(0.3), -0.5244005127080407, 1e-14);
  });

  // reference values: an independent implementation in Python (statistics.NormalDist), REFERENCE §11
  const cases: [string, Partial<ExposureInput>, 'crr2' | 'crr3', { r: number; k: number; rw: number; rwa: number; capital: number; el: number }][] = [
    ['PD 0.1 %, CRR2', { pd: 0.001 }, 'crr2', { r: 0.23414753094008567, k: 0.023723194671200383, rw: 0.3143323293934051, rwa: 314332.3293934051, capital: 25146.58635147241, el: 450 }],
    ['PD 1 %, CRR2', { pd: 0.01 }, 'crr2', { r: 0.192783679165516, k: 0.07385344111364114, rw: 0.9785580947557452, rwa: 978558.0947557451, capital: 78284.64758045961, el: 4500 }],
    ['PD 5 %, CRR2', { pd: 0.05 }, 'crr2', { r: 0.12985019983486787, k: 0.11988352715124558, rw: 1.588456734754004, rwa: 1588456.734754004, capital: 127076.53878032033, el: 22500 }],
    ['PD 1 %, SME of €20 m, M 3, CRR3, no supporting factor', { pd: 0.01, lgd: 0.4, maturity_years: 3, turnover_eur: 20e6, apply_supporting_factor: false }, 'crr3', { r: 0.16611701249884933, k: 0.05996669029897817, rw: 0.7495836287372272, rwa: 749583.6287372272, capital: 59966.690298978174, el: 4000 }],
    ['PD 0.02 % floored to 0.05 %, CRR3', { pd: 0.0002, lgd: 0.4 }, 'crr3', { r: 0.2370371894433999, k: 0.013974162752289231, rw: 0.1746770344036154, rwa: 174677.0344036154, capital: 13974.162752289232, el: 200 }],
    ['PD 2 %, SME of €10 m owing €3 m: supporting factor, CRR3', { pd: 0.02, lgd: 0.4, ead_eur: 3e6, turnover_eur: 10e6, group_exposure_eur: 3e6 }, 'crr3', { r: 0.1285899773850175, k: 0.0650169356928396, rw: 0.812711696160495, rwa: 1893415.074129913, capital: 151473.20593039304, el: 24000 }],
  ];
  for (const [name, input, regime, want] of cases)
    test(name, () => {
      const r = capitalFor(line(input), regime);
      close(r.correlation!, want.r);
      close(r.k!, want.k);
      close(r.risk_weight, want.rw);
      close(r.rwa_eur, want.rwa);
      close(r.capital_eur, want.capital);
      close(r.expected_loss_eur!, want.el);
    });

  test('supporting factor: 0.7619 up to €2.5 m, 0.85 above, blended; none for a large corporate', () => {
    expect(supportingFactor(1e6)).toBe(0.7619);
    close(supportingFactor(5e6), (2.5e6 * 0.7619 + 2.5e6 * 0.85) / 5e6, 1e-12);
    expect(capitalFor(line({ turnover_eur: 60e6 }), 'crr3').supporting_factor).toBe(1);
    expect(capitalFor(line({ turnover_eur: 60e6 }), 'crr3').sme_size_adjustment).toBe(0);
    // the firm-size adjustment is largest at €5 m and below, nothing at €50 m
    expect(capitalFor(line({ turnover_eur: 1e6 }), 'crr3').sme_size_adjustment).toBeCloseTo(0.04, 12);
    expect(capitalFor(line({ turnover_eur: 50e6 }), 'crr3').sme_size_adjustment).toBeCloseTo(0, 12);
  });

  test('standardised: 100 % corporates, 85 % unrated SME corporates under CRR3 (100 % CRR2), 75 % retail SME up to €1 m', () => {
    const sa = (o: Partial<ExposureInput>, regime: 'crr2' | 'crr3' = 'crr3') => capitalFor(line({ approach: 'standardised', ...o }), regime);
    expect(sa({}).risk_weight).toBe(1);
    expect(sa({ turnover_eur: 10e6, apply_supporting_factor: false }).risk_weight).toBe(0.85);
    expect(sa({ turnover_eur: 10e6, apply_supporting_factor: false }, 'crr2').risk_weight).toBe(1);
    expect(sa({ turnover_eur: 2e6, retail: true, ead_eur: 500_000 }).risk_weight).toBe(0.75);
    expect(sa({ turnover_eur: 2e6, retail: true, ead_eur: 500_000, group_exposure_eur: 1.5e6 }).risk_weight).toBe(0.85);
    expect(sa({ turnover_eur: 2e6, retail: true, ead_eur: 500_000 }).rwa_eur).toBeCloseTo(500_000 * 0.75 * 0.7619, 6);
  });

  test('an exposure in default (PD 1): F-IRB risk weight 0 and its expected loss LGD × EAD (art. 153(1)(ii)); standardised 150 % (art. 127)', () => {
    const irb = capitalFor(line({ pd: 1, lgd: 0.4, ead_eur: 100_000 }));
    expect(irb).toMatchObject({ pd_used: 1, k: 0, risk_weight: 0, rwa_eur: 0, capital_eur: 0, expected_loss_eur: 40_000, correlation: null });
    const sa = capitalFor(line({ pd: 1, approach: 'standardised', ead_eur: 100_000, turnover_eur: 2e6, retail: true, apply_supporting_factor: false }));
    expect(sa).toMatchObject({ risk_weight: 1.5, rwa_eur: 150_000, capital_eur: 12_000 });
    // just below default, the formula's own weight: large, not 0
    expect(capitalFor(line({ pd: 0.999, lgd: 0.4, ead_eur: 100_000 })).risk_weight).toBeGreaterThan(0);
  });
});

describe('POST /v1/basel/capital', () => {
  let h: TestApp;
  let key: string;
  beforeAll(async () => {
    h = await makeApp();
    key = (await h.tenant()).api_key;
  });
  afterAll(() => h.close());

  test('a portfolio: PDs and turnover from the scoring engine for NIFs, given PDs as they are, totals, the parameters of the regime', async () => {
    const r = await h.json('POST', '/v1/basel/capital', { key, body: { regime: 'crr2', exposures: [{ id: 'a', nif: '599000015', ead_eur: 2_500_000 }, { nif: '599000031', ead_eur: 750_000, seniority: 'subordinated' }, { pd: 0.01, ead_eur: 1e6 }] } });
    expect(r.status).toBe(200);
    expect(Value.Check(CapitalResponse, r.body)).toBe(true);
    expect(r.body.parameters).toMatchObject({ scaling_factor: 1.06, pd_floor: 0.0003, lgd_senior_unsecured: 0.45 });
    const [a, b, c] = r.body.lines;
    const score = await h.json('POST', '/v1/score', { key, body: { nif: '599000015' } });
    expect(a).toMatchObject({ id: 'a', nif: '599000015', pd_source: score.body.algorithm_version, lgd_source: 'supervisory_f_irb', lgd_used: 0.45 });
    expect(b).toMatchObject({ lgd_used: 0.75, id: null });
    expect(c).toMatchObject({ pd_source: 'input', pd_used: 0.01 });
    expect(c.rwa_eur).toBe(978558.09); // 978558.0947557451 to the cent
    expect(c.capital_eur).toBe(78284.65); // 8 % of the exact RWA, 78284.6475…
    // the totals are the sums of the lines as answered, to the cent
    const cents = (f: (l: any) => number) => r.body.lines.reduce((s: number, l: any) => s + Math.round(f(l) * 100), 0);
    expect(Math.round(r.body.totals.rwa_eur * 100)).toBe(cents((l) => l.rwa_eur));
    expect(Math.round(r.body.totals.capital_eur * 100)).toBe(cents((l) => l.capital_eur));
    expect(Math.round(r.body.totals.expected_loss_eur * 100)).toBe(cents((l) => l.expected_loss_eur));
    expect(r.body.totals).toMatchObject({ exposures: 3, ead_eur: 4_250_000 });
  });

  test('euro figures are answered to the cent (half up) and ratios without binary noise', async () => {
    // 4250 × 100 % × 0.7619 is 3238.0750000000003 in binary floating point
    const r = await h.json('POST', '/v1/basel/capital', { key, body: { regime: 'crr2', approach: 'standardised', exposures: [{ ead_eur: 4250, turnover_eur: 1e6 }, { pd: 0.0123, ead_eur: 1234.56, turnover_eur: 7e6 }] } });
    expect(r.status).toBe(200);
    expect(Value.Check(CapitalResponse, r.body)).toBe(true);
    const [sme, other] = r.body.lines;
    expect(sme).toMatchObject({ rwa_before_supporting_factor_eur: 4250, supporting_factor: 0.7619, rwa_eur: 3238.08, capital_eur: 259.05 });
    expect(other.ead_eur).toBe(1234.56);
    const euros = (x: unknown) => typeof x !== 'number' || Math.abs(x * 100 - Math.round(x * 100)) < 1e-6;
    for (const line of r.body.lines) for (const k of ['ead_eur', 'rwa_before_supporting_factor_eur', 'rwa_eur', 'capital_eur', 'expected_loss_eur']) expect(euros(line[k])).toBe(true);
    for (const k of ['ead_eur', 'rwa_eur', 'capital_eur', 'expected_loss_eur']) expect(euros(r.body.totals[k])).toBe(true);
    const digits = (x: number) => x.toString().replace(/^-?0\.0*|\.|e.*$/g, '').length;
    for (const line of r.body.lines) for (const k of ['risk_weight', 'supporting_factor', 'k', 'correlation', 'maturity_adjustment']) if (typeof line[k] === 'number') expect(digits(line[k])).toBeLessThanOrEqual(12);
  });

  test('the group exposure: at least the line; by default the portfolio\'s lines of one NIF add up (the supporting factor blends above €2.5 m)', async () => {
    const small = await h.json('POST', '/v1/basel/capital', { key, body: { exposures: [{ pd: 0.01, ead_eur: 5e6, turnover_eur: 1e7, group_exposure_eur: 1e6 }] } });
    expect(expectError(small, 422, 'validation_failed').fields).toEqual([{ path: 'exposures.0.group_exposure_eur', message: expect.stringContaining('at least') }]);
    const two = await h.json('POST', '/v1/basel/capital', { key, body: { exposures: [{ nif: '599000015', pd: 0.01, ead_eur: 2e6, turnover_eur: 1e7 }, { nif: '599000015', pd: 0.01, ead_eur: 2e6, turnover_eur: 1e7 }] } });
    expect(two.status).toBe(200);
    // €4 m owed in all: (2.5 × 0.7619 + 1.5 × 0.85) / 4
    expect(two.body.lines[0].supporting_factor).toBeCloseTo((2.5 * 0.7619 + 1.5 * 0.85) / 4, 10);
    // one obligor, one treatment: a group figure below what its lines add up to is refused
    const under = await h.json('POST', '/v1/basel/capital', { key, body: { exposures: [{ nif: '599000015', pd: 0.01, ead_eur: 2e6, turnover_eur: 1e7, group_exposure_eur: 2e6 }, { nif: '599000015', pd: 0.01, ead_eur: 2e6, turnover_eur: 1e7 }] } });
    expect(expectError(under, 422, 'validation_failed').fields).toEqual([{ path: 'exposures.0.group_exposure_eur', message: expect.stringContaining('4000000') }]);
    // what they add up to is said in cents, not in the binary noise of the sum (0.1 + 0.2)
    const noise = await h.json('POST', '/v1/basel/capital', { key, body: { exposures: [{ nif: '599000015', pd: 0.01, ead_eur: 0.1, group_exposure_eur: 0.2 }, { nif: '599000015', pd: 0.01, ead_eur: 0.2 }] } });
    expect(expectError(noise, 422, 'validation_failed').fields).toEqual([{ path: 'exposures.0.group_exposure_eur', message: "must be at least 0.3, what this portfolio's lines of 599000015 add up to" }]);
    const twoFigures = await h.json('POST', '/v1/basel/capital', { key, body: { exposures: [{ nif: '599000015', pd: 0.01, ead_eur: 5e5, turnover_eur: 1e7, group_exposure_eur: 1e6 }, { nif: '599000015', pd: 0.01, ead_eur: 5e5, turnover_eur: 1e7, group_exposure_eur: 3e6 }] } });
    expect(expectError(twoFigures, 422, 'validation_failed').fields).toEqual([{ path: 'exposures.1.group_exposure_eur', message: expect.stringContaining('one obligor owes one amount') }]);
    const alone = await h.json('POST', '/v1/basel/capital', { key, body: { exposures: [{ nif: '599000015', pd: 0.01, ead_eur: 2e6, turnover_eur: 1e7 }] } });
    expect(alone.body.lines[0].supporting_factor).toBe(0.7619);
  });

  test('a company without a PD estimate: its tier\'s indicative PD, said so in pd_source', async () => {
    const score = await h.json('POST', '/v1/score', { key, body: { nif: '599000090' } });
    expect(score.body.pd_estimate).toBeNull();
    const [line] = (await h.json('POST', '/v1/basel/capital', { key, body: { exposures: [{ nif: '599000090', ead_eur: 1_000_000 }] } })).body.lines;
    expect(line.pd_source).toBe(`${score.body.algorithm_version} indicative`);
    expect(line.pd_used).toBeGreaterThan(0);
  });

  test('10 000 lines with every field (~2 MB of JSON) are read: the body limit of this route is 8 MiB', async () => {
    const exposures = Array.from({ length: 10_000 }, (_, i) => ({ id: `loan-2026-${String(i).padStart(6, '0')}`, pd: 0.01, lgd: 0.45, ead_eur: 123456.78, turnover_eur: 20_000_000, maturity_years: 2.5, approach: 'irb_foundation', seniority: 'senior_unsecured' }));
    expect(JSON.stringify({ exposures }).length).toBeGreaterThan(1_048_576);
    const r = await h.json('POST', '/v1/basel/capital', { key, body: { exposures } });
    expect(r.status).toBe(200);
    expect(r.body.lines.length).toBe(10_000);
    expect(r.body.totals.ead_eur).toBe(1_234_567_800);
    // above the route's 8 MiB: 413 with the error body
    const padded = { exposures: exposures.slice(0, 1).map((e) => ({ ...e, id: 'x'.repeat(100) })), pad: 'y'.repeat(8 * 1024 * 1024) };
    expect(expectError(await h.json('POST', '/v1/basel/capital', { key, body: padded }), 413, 'payload_too_large').message).toContain(String(8 * 1024 * 1024));
  });

  test('the largest portfolio the schema allows is answered (its totals pass 2^53 cents)', async () => {
    const r = await h.json('POST', '/v1/basel/capital', { key, body: { exposures: Array.from({ length: 100 }, () => ({ pd: 0.01, ead_eur: 1e12 })) } });
    expect(r.status).toBe(200);
    expect(r.body.totals.ead_eur).toBe(1e14);
    expect(r.body.totals.rwa_eur).toBeCloseTo(r.body.lines[0].rwa_eur * 100, -3);
  });

  test('errors: no PD nor NIF, bad values with their paths, a NIF failing its check digit, an unknown company; scope', async () => {
    const none = await h.json('POST', '/v1/basel/capital', { key, body: { exposures: [{ ead_eur: 1 }, { pd: 0.01, ead_eur: 1, nif: '599000032' }] } });
    expect(expectError(none, 422, 'validation_failed').fields).toEqual([
      { path: 'exposures.0.pd', message: expect.any(String) },
      { path: 'exposures.1.nif', message: 'fails the NIF check digit' },
    ]);
    // only NIFs failing their check digit: invalid_nif, as on every route with a NIF
    expect(expectError(await h.json('POST', '/v1/basel/capital', { key, body: { exposures: [{ pd: 0.01, ead_eur: 1 }, { ead_eur: 1, nif: '599000032' }] } }), 422, 'invalid_nif').fields).toEqual([{ path: 'exposures.1.nif', message: 'fails the NIF check digit' }]);
    expect(expectError(await h.json('POST', '/v1/basel/capital', { key, body: { exposures: [{ pd: 1.01, ead_eur: 1 }] } }), 422, 'validation_failed').fields[0].path).toContain('exposures');
    // a defaulted exposure is priced (PD 1)
    const defaulted = await h.json('POST', '/v1/basel/capital', { key, body: { exposures: [{ pd: 1, ead_eur: 1000 }] } });
    expect(defaulted.status).toBe(200);
    expectError(await h.json('POST', '/v1/basel/capital', { key, body: { exposures: [{ pd: 0.01, ead_eur: 0 }] } }), 422, 'validation_failed');
    // euros in whole cents: a thousandth of a euro is no exposure
    expect(expectError(await h.json('POST', '/v1/basel/capital', { key, body: { exposures: [{ pd: 0.01, ead_eur: 100.07 }, { pd: 0.01, ead_eur: 12.345 }] } }), 422, 'validation_failed').fields).toEqual([{ path: 'exposures.1.ead_eur', message: 'must be whole cents (at most two decimals)' }]);
    expectError(await h.json('POST', '/v1/basel/capital', { key, body: { exposures: [{ pd: 0.01, ead_eur: 0.001 }] } }), 422, 'validation_failed');
    expectError(await h.json('POST', '/v1/basel/capital', { key, body: { regime: 'basel4', exposures: [{ pd: 0.01, ead_eur: 1 }] } }), 422, 'validation_failed');
    expectError(await h.json('POST', '/v1/basel/capital', { key, body: { exposures: [] } }), 422, 'validation_failed');
    expect(expectError(await h.json('POST', '/v1/basel/capital', { key, body: { exposures: [{ pd: 0.01, ead_eur: 1 }, { nif: '599000074', ead_eur: 1 }] } }), 404, 'company_not_found').fields[0].path).toBe('exposures.1.nif');
    const narrow = await h.tenant({ scopes: ['esg'] });
    expectError(await h.json('POST', '/v1/basel/capital', { key: narrow.api_key, body: { exposures: [{ pd: 0.01, ead_eur: 1 }] } }), 403, 'insufficient_scope');
    // a live key without the live tier: the score's 503, said of the line, with its roadmap_url
    const live = await h.tenant({ env: 'live' });
    const r503 = expectError(await h.json('POST', '/v1/basel/capital', { key: live.api_key, body: { exposures: [{ pd: 0.01, ead_eur: 1 }, { nif: '599000015', ead_eur: 1 }] } }), 503, 'live_tier_not_available');
    expect(r503).toMatchObject({ roadmap_url: expect.stringMatching(/\/roadmap$/), fields: [{ path: 'exposures.1.nif', message: expect.any(String) }] });
  });

  test('a standardised line needs no PD: its risk weight is computed, its expected loss is null and the total counts the lines with one', async () => {
    const r = await h.json('POST', '/v1/basel/capital', { key, body: { approach: 'standardised', exposures: [{ ead_eur: 800_000, turnover_eur: 3_000_000 }, { pd: 0.02, ead_eur: 100_000 }] } });
    expect(r.status).toBe(200);
    expect(Value.Check(CapitalResponse, r.body)).toBe(true);
    const [noPd, withPd] = r.body.lines;
    expect(noPd).toMatchObject({ approach: 'standardised', pd_source: null, pd_used: null, pd_floored: false, expected_loss_eur: null, is_sme: true });
    expect(noPd.rwa_eur).toBeGreaterThan(0);
    expect(r.body.totals.expected_loss_eur).toBeCloseTo(withPd.expected_loss_eur, 9);
    // the IRB approach still needs one
    expect(expectError(await h.json('POST', '/v1/basel/capital', { key, body: { exposures: [{ ead_eur: 1, approach: 'standardised' }, { ead_eur: 1 }] } }), 422, 'validation_failed').fields).toEqual([{ path: 'exposures.1.pd', message: expect.stringContaining('give pd, or nif') }]);
  });
});
