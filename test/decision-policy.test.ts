import { describe, expect, test } from 'bun:test';
import { normalCdf, normalInverse } from '../src/lib/normal';
import { mulberry32 } from '../src/lib/prng';
import {
  creditLimit, decide, DEFAULT_POLICY, indexSpread, irbCapital, MIN_LIMIT_EUR, MODALITIES, notchForPd, notchIndex, notchPd, NOTCH_MAX_PD,
  NOTCHES, OPERATION_TYPES, TERM_BUCKETS, type CreditPolicy, type DecisionInput,
} from '../src/features/decision/policy';
import { MASTER_SCALE, tierForPd } from '../src/features/score/engine';

const rand = mulberry32(20261125);
const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
const logUniform = (lo: number, hi: number) => Math.exp(Math.log(lo) + rand() * (Math.log(hi) - Math.log(lo)));
function randomInput(): DecisionInput {
  const hasAccounts = rand() < 0.8;
  return {
    pd: logUniform(0.0003, 0.9999),
    revenue_eur: hasAccounts ? logUniform(1e4, 1e9) : null,
    equity_eur: hasAccounts ? (rand() < 0.1 ? -logUniform(1e3, 1e6) : logUniform(1e3, 1e8)) : null,
    adverse: rand() < 0.2,
    operation_type: pick(OPERATION_TYPES),
    amount_eur: logUniform(100, 1e7),
    term_days: 1 + Math.floor(rand() * 720),
  };
}
function randomPolicy(): CreditPolicy {
  return {
    min_tier: pick(NOTCHES),
    max_amount_eur: logUniform(1000, 1e8),
    lgd: Object.fromEntries(MODALITIES.map((m) => [m, rand()])) as CreditPolicy['lgd'],
    margin_bps: Math.floor(rand() * 500),
  };
}
const N = 3000;

describe('normal distribution', () => {
  test('known values and round trip', () => {
    expect(normalCdf(0)).toBe(0.5);
    expect(normalCdf(1.959963984540054)).toBeCloseTo(0.975, 14);
    expect(normalInverse(0.999)).toBeCloseTo(3.090232306167813, 12);
    expect(normalInverse(0.5)).toBeCloseTo(0, 14);
    for (let i = 0; i < 500; i++) {
      const p = logUniform(1e-12, 0.999999);
      expect(Math.abs(normalCdf(normalInverse(p)) - p) / p).toBeLessThan(1e-12);
    }
  });
});

describe('notched scale', () => {
  test('the notches refine the score master scale: each notch lies in one tier', () => {
    for (const n of NOTCHES) expect(tierForPd(NOTCH_MAX_PD[n])).toBe(n[0] as never);
    for (const row of MASTER_SCALE) expect(notchForPd(row.max_pd)[0]).toBe(row.tier);
  });
  test('notchForPd is monotone and notchPd lies inside its band', () => {
    let prev = 0;
    for (let i = 0; i < N; i++) {
      const a = logUniform(1e-5, 1);
      const b = Math.min(1, a * (1 + rand()));
      expect(notchIndex(notchForPd(b))).toBeGreaterThanOrEqual(notchIndex(notchForPd(a)));
    }
    for (const n of NOTCHES) {
      expect(notchForPd(notchPd(n))).toBe(n);
      expect(notchPd(n)).toBeGreaterThan(prev);
      prev = notchPd(n);
    }
    expect(notchForPd(NaN)).toBe('E-');
  });
});

describe('credit limit', () => {
  test('limit 0 exactly when the notch is below the appetite; otherwise at least the minimum and at most the policy maximum', () => {
    for (let i = 0; i < N; i++) {
      const input = randomInput();
      const policy = randomPolicy();
      const r = creditLimit(input, input.term_days, policy);
      const declined = notchIndex(notchForPd(input.pd)) > notchIndex(policy.min_tier);
      expect(r.declined).toBe(declined);
      expect(r.limit_eur === 0).toBe(declined);
      if (!declined) {
        expect(r.limit_eur).toBeGreaterThanOrEqual(MIN_LIMIT_EUR);
        expect(r.limit_eur).toBeLessThanOrEqual(Math.max(MIN_LIMIT_EUR, policy.max_amount_eur));
      }
    }
  });
  test('monotone: a higher PD or a longer term never gives a higher limit', () => {
    for (let i = 0; i < N; i++) {
      const input = randomInput();
      const policy = randomPolicy();
      const base = creditLimit(input, input.term_days, policy).limit_eur;
      const worse = creditLimit({ ...input, pd: Math.min(0.9999, input.pd * (1 + rand() * 3)) }, input.term_days, policy).limit_eur;
      const longer = creditLimit(input, Math.min(720, input.term_days + 1 + Math.floor(rand() * 300)), policy).limit_eur;
      expect(worse).toBeLessThanOrEqual(base);
      expect(longer).toBeLessThanOrEqual(base);
      expect(creditLimit({ ...input, adverse: true }, input.term_days, policy).limit_eur).toBeLessThanOrEqual(creditLimit({ ...input, adverse: false }, input.term_days, policy).limit_eur);
    }
  });
  test('the documented worked example (docs/credit-policy.md)', () => {
    const r = creditLimit({ pd: 0.007543, revenue_eur: 3_600_000, equity_eur: 1_350_000, adverse: false }, 90);
    expect(r.notch).toBe('B');
    // base max(360 000, 405 000) × 0.7 × √(60/90) = 231 374 → floored to the thousand
    expect(r.limit_eur).toBe(231_000);
  });
  test('thin file: €10 000 base', () => {
    expect(creditLimit({ pd: 0.002, revenue_eur: null, equity_eur: null, adverse: false }, 60).limit_eur).toBe(9000);
  });
});

describe('spreads', () => {
  test('the index is monotone: never lower for a worse tier or a longer term (every modality, default and random policies)', () => {
    for (const policy of [DEFAULT_POLICY, ...Array.from({ length: 20 }, randomPolicy)])
      for (const m of MODALITIES)
        for (let i = 0; i < NOTCHES.length; i++)
          for (let j = 0; j < TERM_BUCKETS.length; j++) {
            const s = indexSpread(NOTCHES[i]!, TERM_BUCKETS[j]!, m, policy);
            expect(s).toBeGreaterThanOrEqual(policy.margin_bps);
            if (i > 0) expect(s).toBeGreaterThanOrEqual(indexSpread(NOTCHES[i - 1]!, TERM_BUCKETS[j]!, m, policy));
            if (j > 0) expect(s).toBeGreaterThanOrEqual(indexSpread(NOTCHES[i]!, TERM_BUCKETS[j - 1]!, m, policy));
          }
  });
  test('a decision\'s spread is monotone in PD and term whatever modality the tier moves to', () => {
    for (let i = 0; i < N; i++) {
      const input = randomInput();
      const policy = randomPolicy();
      const base = decide(input, policy).spread_bps;
      expect(decide({ ...input, pd: Math.min(0.9999, input.pd * (1 + rand() * 3)) }, policy).spread_bps).toBeGreaterThanOrEqual(base);
      expect(decide({ ...input, term_days: Math.min(720, input.term_days + 1 + Math.floor(rand() * 300)) }, policy).spread_bps).toBeGreaterThanOrEqual(base);
    }
  });
  test('IRB capital matches the BCBS risk-weight table (PD 1 %, LGD 45 %, M 2.5: RW 92.32 %)', () => {
    expect(irbCapital(0.01, 0.45, 2.5) * 12.5).toBeCloseTo(0.9232, 4);
  });
});

describe('decide', () => {
  test('approved exactly when within appetite and the amount within the limit; larger amounts never flip to approved', () => {
    for (let i = 0; i < N; i++) {
      const input = randomInput();
      const policy = randomPolicy();
      const d = decide(input, policy);
      expect(d.approved).toBe(!d.declined && input.amount_eur <= d.limit_eur);
      const bigger = decide({ ...input, amount_eur: input.amount_eur * (1 + rand() * 10) }, policy);
      if (!d.approved) expect(bigger.approved).toBe(false);
      expect(Number.isInteger(d.spread_bps)).toBe(true);
    }
  });
  test('a tier-A company is approved for a modest amount; tier E is declined under the default policy', () => {
    const strong = decide({ pd: 0.0008, revenue_eur: 7_500_000, equity_eur: 3_500_000, adverse: false, operation_type: 'factoring', amount_eur: 50_000, term_days: 60 });
    expect(strong).toMatchObject({ notch: 'A+', approved: true, modality: 'non_recourse' });
    const weak = decide({ pd: 0.5, revenue_eur: 700_000, equity_eur: -120_000, adverse: true, operation_type: 'factoring', amount_eur: 5_000, term_days: 60 });
    expect(weak).toMatchObject({ notch: 'E', approved: false, limit_eur: 0, modality: 'recourse' });
  });
});
