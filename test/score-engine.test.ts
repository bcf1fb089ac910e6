import { describe, expect, test } from 'bun:test';
import {
  ALGORITHM_VERSION,
  COMPONENT_NAMES,
  MASTER_SCALE,
  REASON_CATALOGUE,
  SCORE_FACTOR,
  SCORE_OFFSET,
  scoreCompany,
  scoreForPd,
  tierForPd,
  type CompanyProfile,
  type ScoreResult,
  type Tier,
} from '../src/features/score/engine';
import { SANDBOX_FIXTURES, sandboxLookup } from '../src/features/score/fixtures';
import { isValidNif } from '../src/lib/nif';
import { mulberry32 } from '../src/lib/prng';

// ------------------------------------------------------------------------------------------
// Seeded PRNG and random profiles
// ------------------------------------------------------------------------------------------


type Rng = () => number;
const uni = (rng: Rng, a: number, b: number) => a + (b - a) * rng();
const chance = (rng: Rng, p: number) => rng() < p;
const maybeZero = (rng: Rng, x: number) => (chance(rng, 0.08) ? 0 : x);

function randomProfile(rng: Rng, i: number): CompanyProfile {
  const ta = 10 ** uni(rng, 3.5, 8);
  const p: CompanyProfile = {
    nif: '599000015',
    name: `Random ${i}`,
    sector: 'ABCFGIMN'[Math.floor(rng() * 8)]!,
    age_years: chance(rng, 0.05) ? 0 : uni(rng, 0, 70),
  };
  if (chance(rng, 0.85)) {
    const ebitda = maybeZero(rng, ta * uni(rng, -0.3, 0.45));
    p.financials = {
      total_assets: ta,
      current_assets: maybeZero(rng, ta * uni(rng, 0, 1)),
      cash: maybeZero(rng, ta * uni(rng, 0, 0.3)),
      total_liabilities: maybeZero(rng, ta * uni(rng, 0, 1.6)),
      current_liabilities: maybeZero(rng, ta * uni(rng, 0, 1.1)),
      financial_debt: maybeZero(rng, ta * uni(rng, 0, 0.9)),
      equity: maybeZero(rng, ta * uni(rng, -0.7, 0.97)),
      share_capital: maybeZero(rng, ta * uni(rng, 0, 0.6)),
      retained_earnings: maybeZero(rng, ta * uni(rng, -0.7, 0.7)),
      revenue: maybeZero(rng, ta * uni(rng, 0, 4.5)),
      ebitda,
      ebit: ebitda - ta * uni(rng, 0, 0.12),
      interest_expense: maybeZero(rng, ta * uni(rng, 0, 0.07)),
    };
  }
  if (chance(rng, 0.8)) {
    p.payment_behaviour = {
      dso_days: maybeZero(rng, uni(rng, 0, 420)),
      days_beyond_terms_avg: maybeZero(rng, uni(rng, 0, 220)),
      share_of_receivables_from_top_customer: uni(rng, 0, 1),
    };
  }
  if (chance(rng, 0.8)) {
    const exposure = chance(rng, 0.15) ? 0 : 10 ** uni(rng, 3, 7);
    p.credit_register = {
      total_exposure_eur: exposure,
      overdue_eur: chance(rng, 0.6) ? 0 : Math.max(1, exposure) * uni(rng, 0, 1.2),
      institutions_count: Math.floor(uni(rng, 0, 16)),
      default_in_last_12m: chance(rng, 0.12),
      written_off_eur: chance(rng, 0.9) ? 0 : uni(rng, 1, 1e5),
      litigation_eur: chance(rng, 0.9) ? 0 : uni(rng, 1, 1e5),
    };
  }
  if (chance(rng, 0.8)) {
    p.tax_authority = { status: chance(rng, 0.15) ? 'irregular' : 'regular', vat_registered: chance(rng, 0.93) };
  }
  if (chance(rng, 0.5)) {
    p.events = { insolvency_proceedings: chance(rng, 0.05) };
    if (chance(rng, 0.5)) p.events.restructuring_proceedings = chance(rng, 0.1);
  }
  return p;
}

const clone = (p: CompanyProfile): CompanyProfile => JSON.parse(JSON.stringify(p)) as CompanyProfile;

function profiles(n: number, seed: number): CompanyProfile[] {
  const rng = mulberry32(seed);
  return Array.from({ length: n }, (_, i) => randomProfile(rng, i));
}

const TIER_RANK: Record<Tier, number> = { A: 0, B: 1, C: 2, D: 3, E: 4 };

// ------------------------------------------------------------------------------------------
// Risk-worsening moves: each returns a worse (or equal-risk) copy, or null if not applicable.
// ------------------------------------------------------------------------------------------

type Move = (p: CompanyProfile, rng: Rng) => CompanyProfile | null;
const delta = (p: CompanyProfile, rng: Rng) => (p.financials ? Math.abs(p.financials.total_assets) : 1e6) * uni(rng, 0.005, 0.6);

function finMove(apply: (f: NonNullable<CompanyProfile['financials']>, d: number) => void): Move {
  return (p, rng) => {
    if (!p.financials) return null;
    const q = clone(p);
    apply(q.financials!, delta(p, rng));
    return q;
  };
}

const MOVES: Record<string, Move> = {
  'lower equity': finMove((f, d) => (f.equity -= d)),
  'higher total liabilities': finMove((f, d) => (f.total_liabilities += d)),
  'higher current liabilities': finMove((f, d) => (f.current_liabilities += d)),
  'lower current assets': finMove((f, d) => (f.current_assets -= d)),
  'higher financial debt': finMove((f, d) => (f.financial_debt += d)),
  'lower cash': finMove((f, d) => (f.cash -= d)),
  'lower retained earnings': finMove((f, d) => (f.retained_earnings -= d)),
  'lower revenue': finMove((f, d) => (f.revenue -= d)),
  'lower EBIT': finMove((f, d) => (f.ebit -= d / 4)),
  'lower EBITDA': finMove((f, d) => (f.ebitda -= d / 4)),
  'lower EBIT and EBITDA': finMove((f, d) => {
    f.ebit -= d / 4;
    f.ebitda -= d / 4;
  }),
  'higher interest expense': finMove((f, d) => (f.interest_expense += d / 10)),
  'higher share capital': finMove((f, d) => (f.share_capital += d)),
  'higher DSO': (p, rng) => {
    if (!p.payment_behaviour) return null;
    const q = clone(p);
    q.payment_behaviour!.dso_days += uni(rng, 0.5, 150);
    return q;
  },
  'more days beyond terms': (p, rng) => {
    if (!p.payment_behaviour) return null;
    const q = clone(p);
    q.payment_behaviour!.days_beyond_terms_avg += uni(rng, 0.5, 90);
    return q;
  },
  'higher concentration': (p, rng) => {
    if (!p.payment_behaviour) return null;
    const q = clone(p);
    const b = q.payment_behaviour!;
    b.share_of_receivables_from_top_customer = Math.min(1, b.share_of_receivables_from_top_customer + uni(rng, 0.01, 0.6));
    return q;
  },
  'overdue amount up': (p, rng) => {
    if (!p.credit_register) return null;
    const q = clone(p);
    q.credit_register!.overdue_eur += uni(rng, 1, 2e5);
    return q;
  },
  'overdue and exposure up together': (p, rng) => {
    if (!p.credit_register) return null;
    const q = clone(p);
    const c = q.credit_register!;
    if (c.overdue_eur > c.total_exposure_eur) return null; // not a CRC-consistent record
    const d = uni(rng, 1, 2e5);
    c.overdue_eur += d;
    c.total_exposure_eur += d;
    return q;
  },
  'default flag on': (p) => {
    if (!p.credit_register) return null;
    const q = clone(p);
    q.credit_register!.default_in_last_12m = true;
    return q;
  },
  'written off up': (p, rng) => {
    if (!p.credit_register) return null;
    const q = clone(p);
    q.credit_register!.written_off_eur += uni(rng, 1, 1e5);
    return q;
  },
  'litigation up': (p, rng) => {
    if (!p.credit_register) return null;
    const q = clone(p);
    q.credit_register!.litigation_eur += uni(rng, 1, 1e5);
    return q;
  },
  'more institutions': (p, rng) => {
    if (!p.credit_register) return null;
    const q = clone(p);
    q.credit_register!.institutions_count += 1 + Math.floor(uni(rng, 0, 5));
    return q;
  },
  'tax irregular': (p) => {
    if (!p.tax_authority) return null;
    const q = clone(p);
    q.tax_authority!.status = 'irregular';
    return q;
  },
  'not VAT registered': (p) => {
    if (!p.tax_authority) return null;
    const q = clone(p);
    q.tax_authority!.vat_registered = false;
    return q;
  },
  'younger company': (p, rng) => {
    const q = clone(p);
    q.age_years = Math.max(0, q.age_years - uni(rng, 0.1, 20));
    return q;
  },
  'insolvency proceedings': (p) => {
    if (!p.events) return null;
    const q = clone(p);
    q.events!.insolvency_proceedings = true;
    return q;
  },
  'restructuring proceedings': (p) => {
    if (!p.events) return null;
    const q = clone(p);
    q.events!.restructuring_proceedings = true;
    return q;
  },
};

// ------------------------------------------------------------------------------------------
// Shared checks
// ------------------------------------------------------------------------------------------

function checkBounds(r: ScoreResult): void {
  expect(Number.isInteger(r.score)).toBe(true);
  expect(r.score).toBeGreaterThanOrEqual(0);
  expect(r.score).toBeLessThanOrEqual(1000);
  expect(['A', 'B', 'C', 'D', 'E']).toContain(r.tier);
  if (r.pd !== null) {
    expect(Number.isFinite(r.pd)).toBe(true);
    expect(r.pd).toBeGreaterThanOrEqual(0);
    expect(r.pd).toBeLessThanOrEqual(1);
  }
  expect(Object.keys(r.components).sort()).toEqual([...COMPONENT_NAMES].sort());
  for (const v of Object.values(r.components)) {
    expect(Number.isFinite(v)).toBe(true);
    expect(v).toBeGreaterThanOrEqual(0);
    expect(v).toBeLessThanOrEqual(1);
  }
  expect(r.reasons.length).toBeLessThanOrEqual(6);
  const codes = new Set<string>();
  let sum = 0;
  for (let i = 0; i < r.reasons.length; i++) {
    const reason = r.reasons[i]!;
    expect(reason.weight).toBeGreaterThanOrEqual(0);
    expect(reason.weight).toBeLessThanOrEqual(1);
    if (i > 0) expect(reason.weight).toBeLessThanOrEqual(r.reasons[i - 1]!.weight);
    const entry = REASON_CATALOGUE[reason.code];
    expect(entry).toBeDefined();
    expect(reason.impact).toBe(entry!.impact);
    expect(codes.has(reason.code)).toBe(false);
    codes.add(reason.code);
    sum += reason.weight;
  }
  expect(sum).toBeLessThanOrEqual(1.0001);
}

/** Score must lie in the score range of its tier's PD band. */
function checkTierScoreBand(r: ScoreResult): void {
  const idx = MASTER_SCALE.findIndex((row) => row.tier === r.tier);
  const hiPd = MASTER_SCALE[idx]!.max_pd;
  const loPd = idx === 0 ? 0 : MASTER_SCALE[idx - 1]!.max_pd;
  expect(r.score).toBeGreaterThanOrEqual(scoreForPd(hiPd));
  expect(r.score).toBeLessThanOrEqual(scoreForPd(loPd));
}

const ALL = profiles(600, 42);

const GOLDEN_RESULT: ScoreResult = {
  pd: 0.007543,
  pd_scale: 0.007543,
  score: 656,
  tier: 'B',
  components: {
    financial_strength: 0.6424,
    profitability: 0.589,
    liquidity: 0.5395,
    leverage: 0.6176,
    payment_behaviour: 0.3176,
    credit_history: 0.5861,
    tax_compliance: 0.5296,
    company_maturity: 0.549,
    legal_events: 0.5,
  },
  reasons: [
    { code: 'HIGH_CONCENTRATION', label: 'High dependence on a single customer', impact: 'negative', weight: 0.2468 },
    { code: 'STRONG_EQUITY', label: 'Strong equity base', impact: 'positive', weight: 0.1511 },
    { code: 'LOW_LEVERAGE', label: 'Low debt burden relative to earnings', impact: 'positive', weight: 0.146 },
    { code: 'CLEAN_CREDIT_HISTORY', label: 'No overdue, defaulted or written-off credit', impact: 'positive', weight: 0.106 },
    { code: 'STRONG_PROFITABILITY', label: 'Strong operating profitability', impact: 'positive', weight: 0.1006 },
    { code: 'ESTABLISHED_COMPANY', label: 'Long-established company', impact: 'positive', weight: 0.0599 },
  ],
  data_sources: ['company_registry', 'financial_statements', 'payment_behaviour', 'credit_register', 'tax_authority'],
};
const GOLDEN_RANDOM: [number | null, number, Tier][] = [
  [0.354361, 409, 'E'],
  [0.79591, 296, 'E'],
  [0.056179, 537, 'D'],
  [0.950123, 204, 'E'],
  [0.01958, 600, 'C'],
  [0.993911, 80, 'E'],
  [0.432037, 390, 'E'],
  [0.642119, 341, 'E'],
  [0.99287, 89, 'E'],
  [0.772791, 304, 'E'],
  [0.483845, 378, 'E'],
  [null, 312, 'E'],
];

// ------------------------------------------------------------------------------------------
// Tests
// ------------------------------------------------------------------------------------------

describe('scoring constants', () => {
  test('algorithm version', () => {
    expect(ALGORITHM_VERSION).toBe('score-1.1.0');
  });

  test('PDO scaling constants (S0 = 600 at 50:1, PDO = 40)', () => {
    expect(SCORE_FACTOR).toBeCloseTo(57.71, 2);
    expect(SCORE_OFFSET).toBeCloseTo(374.25, 2);
  });

  test('(e) reference PD → score table (REFERENCE §6)', () => {
    const table: [number, number][] = [
      [0.0003, 842],
      [0.001, 773],
      [0.004, 693],
      [0.01, 639],
      [0.05, 544],
      [0.1, 501],
      [0.5, 374],
    ];
    for (const [pd, score] of table) expect({ pd, score: scoreForPd(pd) }).toEqual({ pd, score });
  });

  test('scoreForPd is clamped to 0..1000 and never increases with PD', () => {
    expect(scoreForPd(0)).toBe(1000);
    expect(scoreForPd(1e-12)).toBe(1000);
    expect(scoreForPd(1)).toBe(0);
    expect(scoreForPd(1 - 1e-12)).toBe(0);
    expect(scoreForPd(-1)).toBe(1000);
    expect(scoreForPd(2)).toBe(0);
    expect(scoreForPd(Number.NaN)).toBe(0);
    let prev = Infinity;
    for (let i = 0; i <= 20000; i++) {
      const pd = i / 20000;
      const s = scoreForPd(pd);
      expect(Number.isInteger(s)).toBe(true);
      expect(s).toBeLessThanOrEqual(prev);
      prev = s;
    }
  });

  test('master scale boundaries and monotonicity', () => {
    expect(tierForPd(0)).toBe('A');
    expect(tierForPd(0.004)).toBe('A');
    expect(tierForPd(0.00401)).toBe('B');
    expect(tierForPd(0.015)).toBe('B');
    expect(tierForPd(0.0151)).toBe('C');
    expect(tierForPd(0.05)).toBe('C');
    expect(tierForPd(0.0501)).toBe('D');
    expect(tierForPd(0.2)).toBe('D');
    expect(tierForPd(0.2001)).toBe('E');
    expect(tierForPd(1)).toBe('E');
    expect(tierForPd(Number.NaN)).toBe('E');
    let prev = 0;
    for (let i = 0; i <= 20000; i++) {
      const rank = TIER_RANK[tierForPd(i / 20000)];
      expect(rank).toBeGreaterThanOrEqual(prev);
      prev = rank;
    }
  });
});

describe('golden results (pinned to ALGORITHM_VERSION)', () => {
  // If any of these change, results changed: bump ALGORITHM_VERSION (docs/scoring.md §9),
  // update docs/scoring.md and then these values, in the same change.
  const GOLDEN_PROFILE: CompanyProfile = {
    nif: '599000023',
    name: 'Golden, Lda.',
    sector: 'C',
    age_years: 15,
    financials: {
      total_assets: 3_000_000,
      current_assets: 1_400_000,
      cash: 250_000,
      total_liabilities: 1_650_000,
      current_liabilities: 900_000,
      financial_debt: 700_000,
      equity: 1_350_000,
      share_capital: 250_000,
      retained_earnings: 600_000,
      revenue: 3_600_000,
      ebit: 270_000,
      ebitda: 390_000,
      interest_expense: 30_000,
    },
    payment_behaviour: { dso_days: 75, days_beyond_terms_avg: 4, share_of_receivables_from_top_customer: 0.7 },
    credit_register: {
      total_exposure_eur: 750_000,
      overdue_eur: 0,
      institutions_count: 3,
      default_in_last_12m: false,
      written_off_eur: 0,
      litigation_eur: 0,
    },
    tax_authority: { status: 'regular', vat_registered: true },
  };

  test('version and one full result', () => {
    expect(ALGORITHM_VERSION).toBe('score-1.1.0');
    expect(scoreCompany(GOLDEN_PROFILE, 'en')).toEqual(GOLDEN_RESULT);
  });

  test('first random profiles', () => {
    const got = ALL.slice(0, 12).map((p) => {
      const r = scoreCompany(p, 'en');
      return [r.pd, r.score, r.tier] as [number | null, number, Tier];
    });
    expect(got).toEqual(GOLDEN_RANDOM);
  });
});

describe('(a) bounds', () => {
  test('random profiles: score, pd, components and reasons within bounds', () => {
    for (const p of ALL) {
      checkBounds(scoreCompany(p, 'en'));
      checkBounds(scoreCompany(p, 'pt'));
    }
  });

  test('extreme and malformed numbers stay finite and in bounds', () => {
    const base = sandboxLookup('599000031', 0);
    if (base.kind !== 'profile') throw new Error('fixture missing');
    const values = [0, -0, 1e300, -1e300, Infinity, -Infinity, Number.NaN, Number.MAX_VALUE, Number.MIN_VALUE, -1];
    let k = 0;
    for (const v of values) {
      for (const fill of ['all', 'one'] as const) {
        const p = clone(base.profile);
        const f = p.financials! as unknown as Record<string, number>;
        const keys = Object.keys(f).filter((key) => key !== 'fiscal_year');
        if (fill === 'all') for (const key of keys) f[key] = v;
        else f[keys[k++ % keys.length]!] = v;
        p.payment_behaviour = { dso_days: v, days_beyond_terms_avg: v, share_of_receivables_from_top_customer: v };
        p.credit_register = {
          total_exposure_eur: v,
          overdue_eur: v,
          institutions_count: v,
          default_in_last_12m: false,
          written_off_eur: v,
          litigation_eur: v,
        };
        p.age_years = v;
        const r = scoreCompany(p, 'en');
        checkBounds(r);
        expect(r.pd).not.toBeNull();
        expect(Number.isFinite(r.pd!)).toBe(true);
        expect(r.score).toBe(scoreForPd(r.pd!));
      }
    }
  });

  test('components of absent blocks are the neutral 0.5', () => {
    const r = scoreCompany({ nif: '599000104', name: 'x', sector: 'G', age_years: 10 }, 'en');
    for (const name of COMPONENT_NAMES) expect(r.components[name]).toBe(0.5);
  });
});

describe('(b) monotonic in every risk driver', () => {
  for (const [name, move] of Object.entries(MOVES)) {
    test(name, () => {
      const rng = mulberry32(name.length * 7919 + name.charCodeAt(0));
      let applied = 0;
      let strictlyWorse = 0;
      for (const p of ALL.slice(0, 500)) {
        const q = move(p, rng);
        if (!q) continue;
        applied++;
        const a = scoreCompany(p, 'en');
        const b = scoreCompany(q, 'en');
        expect(b.score).toBeLessThanOrEqual(a.score);
        expect(TIER_RANK[b.tier]).toBeGreaterThanOrEqual(TIER_RANK[a.tier]);
        if (a.pd !== null) {
          expect(b.pd).not.toBeNull();
          expect(b.pd!).toBeGreaterThanOrEqual(a.pd);
          if (b.pd! > a.pd) strictlyWorse++;
        }
        for (const c of COMPONENT_NAMES) expect(b.components[c]!).toBeLessThanOrEqual(a.components[c]!);
      }
      expect(applied).toBeGreaterThan(100);
      // Each driver really moves the PD for a good share of profiles (not a no-op).
      // (Share capital only acts through the CSC art. 35 threshold, so fewer profiles move.)
      expect(strictlyWorse).toBeGreaterThan(applied * (name === 'higher share capital' ? 0.05 : 0.2));
    });
  }

  test('several moves in a row never improve the result', () => {
    const rng = mulberry32(99);
    const moves = Object.values(MOVES);
    for (const p of ALL.slice(0, 300)) {
      let cur = p;
      let prev = scoreCompany(cur, 'en');
      for (let step = 0; step < 6; step++) {
        const next = moves[Math.floor(rng() * moves.length)]!(cur, rng);
        if (!next) continue;
        const r = scoreCompany(next, 'en');
        expect(r.score).toBeLessThanOrEqual(prev.score);
        if (prev.pd !== null) expect(r.pd!).toBeGreaterThanOrEqual(prev.pd);
        cur = next;
        prev = r;
      }
    }
  });
});

describe('(c) PD ↔ score ↔ tier consistency', () => {
  test('score = scoreForPd(pd) and tier = tierForPd(pd) whenever pd is given', () => {
    let withPd = 0;
    for (const p of ALL) {
      const r = scoreCompany(p, 'en');
      checkTierScoreBand(r);
      if (r.pd === null) continue;
      withPd++;
      expect(r.score).toBe(scoreForPd(r.pd));
      expect(r.tier).toBe(tierForPd(r.pd));
    }
    expect(withPd).toBeGreaterThan(500);
  });

  test('lower PD never gives a lower score or a worse tier', () => {
    const rs = ALL.map((p) => scoreCompany(p, 'en')).filter((r) => r.pd !== null);
    rs.sort((x, y) => x.pd! - y.pd!);
    for (let i = 1; i < rs.length; i++) {
      expect(rs[i]!.score).toBeLessThanOrEqual(rs[i - 1]!.score);
      expect(TIER_RANK[rs[i]!.tier]).toBeGreaterThanOrEqual(TIER_RANK[rs[i - 1]!.tier]);
    }
    // The random sample spans every tier.
    expect(new Set(rs.map((r) => r.tier))).toEqual(new Set(['A', 'B', 'C', 'D', 'E']));
  });

  test('pd is null only without financials and credit register; then tier is C or worse', () => {
    for (const p of ALL) {
      const r = scoreCompany(p, 'en');
      const expectNull = !p.financials && !p.credit_register;
      expect(r.pd === null).toBe(expectNull);
      if (expectNull) {
        expect(TIER_RANK[r.tier]).toBeGreaterThanOrEqual(TIER_RANK.C);
        expect(r.score).toBeLessThanOrEqual(scoreForPd(0.02));
        expect(r.reasons.map((x) => x.code)).toContain('LIMITED_DATA');
      }
    }
  });

  test('no data at all gives the documented conservative default', () => {
    for (const age of [0, 3, 10, 40]) {
      const r = scoreCompany({ nif: '599000104', name: 'x', sector: 'N', age_years: age }, 'en');
      expect(r.pd).toBeNull();
      expect(r.score).toBe(scoreForPd(0.1));
      expect(r.score).toBe(501);
      expect(r.tier).toBe('D');
      expect(r.data_sources).toEqual(['company_registry']);
      expect(r.reasons[0]!.code).toBe('LIMITED_DATA');
    }
  });

  test('data_sources lists exactly the blocks present', () => {
    for (const p of ALL) {
      const expected = ['company_registry'];
      if (p.financials) expected.push('financial_statements');
      if (p.payment_behaviour) expected.push('payment_behaviour');
      if (p.credit_register) expected.push('credit_register');
      if (p.tax_authority) expected.push('tax_authority');
      if (p.events) expected.push('legal_events');
      expect(scoreCompany(p, 'en').data_sources).toEqual(expected);
    }
  });
});

describe('(d) determinism', () => {
  test('same input twice → deep-equal output; input not mutated', () => {
    for (const p of ALL.slice(0, 200)) {
      const before = JSON.stringify(p);
      const a = scoreCompany(p, 'en');
      const b = scoreCompany(clone(p), 'en');
      expect(b).toEqual(a);
      expect(scoreCompany(p, 'pt')).toEqual(scoreCompany(p, 'pt'));
      expect(JSON.stringify(p)).toBe(before);
    }
  });

  test('works on frozen input', () => {
    const deepFreeze = <T>(o: T): T => {
      if (o && typeof o === 'object') {
        for (const v of Object.values(o)) deepFreeze(v);
        Object.freeze(o);
      }
      return o;
    };
    const p = clone(ALL[0]!);
    const expected = scoreCompany(clone(p), 'en');
    expect(scoreCompany(deepFreeze(p), 'en')).toEqual(expected);
  });
});

describe('(f) sandbox fixtures', () => {
  const REQUIRED = [
    'tier_a_low_pd',
    'tier_b_concentration',
    'tier_c_average',
    'tier_d_recent_default',
    'tier_e_distressed',
    'invalid_nif_422',
    'not_found_404',
    'deteriorating_on_rescore',
  ];
  const byOutcome = new Map(SANDBOX_FIXTURES.map((f) => [f.outcome, f]));
  const scoreOf = (outcome: string, g = 0, lang: 'en' | 'pt' = 'en') => {
    const f = byOutcome.get(outcome);
    if (!f) throw new Error(`missing fixture ${outcome}`);
    const r = sandboxLookup(f.nif, g);
    if (r.kind !== 'profile') throw new Error(`${outcome} has no profile`);
    expect(r.profile.nif).toBe(f.nif);
    return scoreCompany(r.profile, lang);
  };
  const codes = (r: ScoreResult) => r.reasons.map((x) => x.code);

  test('fixture list: required outcomes, synthetic valid NIFs starting with 5, unique', () => {
    for (const o of REQUIRED) expect(byOutcome.has(o)).toBe(true);
    expect(new Set(SANDBOX_FIXTURES.map((f) => f.outcome)).size).toBe(SANDBOX_FIXTURES.length);
    expect(new Set(SANDBOX_FIXTURES.map((f) => f.nif)).size).toBe(SANDBOX_FIXTURES.length);
    for (const f of SANDBOX_FIXTURES) {
      expect(f.nif).toMatch(/^5[0-9]{8}$/);
      expect(isValidNif(f.nif)).toBe(true);
      expect(f.description.length).toBeGreaterThan(10);
      const r = sandboxLookup(f.nif, 0);
      if (r.kind === 'profile') expect(r.profile.name.startsWith('Sandbox ')).toBe(true);
    }
  });

  test('tier_a_low_pd: tier A, PD well under 0.4 %', () => {
    const r = scoreOf('tier_a_low_pd');
    expect(r.tier).toBe('A');
    expect(r.pd!).toBeLessThan(0.002);
    expect(r.data_sources).toEqual(['company_registry', 'financial_statements', 'payment_behaviour', 'credit_register', 'tax_authority', 'legal_events']);
  });

  test('tier_b_concentration: tier B with HIGH_CONCENTRATION', () => {
    const r = scoreOf('tier_b_concentration');
    expect(r.tier).toBe('B');
    expect(codes(r)).toContain('HIGH_CONCENTRATION');
    expect(r.reasons.find((x) => x.code === 'HIGH_CONCENTRATION')!.impact).toBe('negative');
  });

  test('tier_c_average: tier C', () => {
    expect(scoreOf('tier_c_average').tier).toBe('C');
  });

  test('tier_d_recent_default: tier D with RECENT_DEFAULT as the top reason', () => {
    const r = scoreOf('tier_d_recent_default');
    expect(r.tier).toBe('D');
    expect(codes(r)).toContain('RECENT_DEFAULT');
    expect(r.reasons[0]!.code).toBe('RECENT_DEFAULT');
  });

  test('tier_e_distressed: tier E', () => {
    const r = scoreOf('tier_e_distressed');
    expect(r.tier).toBe('E');
    expect(codes(r)).toContain('NEGATIVE_EQUITY');
  });

  test('invalid_nif_422: valid check digit, always invalid_nif', () => {
    const f = byOutcome.get('invalid_nif_422')!;
    expect(isValidNif(f.nif)).toBe(true);
    for (let g = 0; g < 5; g++) expect(sandboxLookup(f.nif, g)).toEqual({ kind: 'invalid_nif' });
  });

  test('not_found_404 and any unlisted valid NIF: not_found; bad check digit: invalid_nif', () => {
    const f = byOutcome.get('not_found_404')!;
    expect(isValidNif(f.nif)).toBe(true);
    expect(sandboxLookup(f.nif, 0)).toEqual({ kind: 'not_found' });
    for (const nif of ['500000000', '510000002', '599999993', '599000201']) {
      if (!isValidNif(nif)) continue;
      expect(sandboxLookup(nif, 0)).toEqual({ kind: 'not_found' });
    }
    expect(sandboxLookup('599999999', 0)).toEqual({ kind: 'invalid_nif' });
    expect(sandboxLookup('12345678', 0)).toEqual({ kind: 'invalid_nif' });
  });

  test('limited_data_no_pd: pd null, LIMITED_DATA', () => {
    const r = scoreOf('limited_data_no_pd');
    expect(r.pd).toBeNull();
    expect(codes(r)).toContain('LIMITED_DATA');
    expect(r.data_sources).toEqual(['company_registry', 'payment_behaviour', 'tax_authority']);
  });

  test('no_data_conservative_default and tier_e_insolvency', () => {
    const r = scoreOf('no_data_conservative_default');
    expect(r.pd).toBeNull();
    expect(r.tier).toBe('D');
    expect(r.score).toBe(501);
    const i = scoreOf('tier_e_insolvency');
    expect(i.tier).toBe('E');
    expect(i.reasons[0]!.code).toBe('INSOLVENCY_PROCEEDINGS');
  });

  test('static fixtures do not depend on the generation; lookups return them frozen, so no caller can spoil them', () => {
    for (const f of SANDBOX_FIXTURES) {
      if (f.outcome === 'deteriorating_on_rescore') continue;
      const a = sandboxLookup(f.nif, 0);
      expect(sandboxLookup(f.nif, 7)).toEqual(a);
      if (a.kind === 'profile') {
        const age = a.profile.age_years;
        expect(() => (a.profile.age_years = -999)).toThrow(TypeError);
        if (a.profile.financials) expect(() => ((a.profile.financials as { revenue: number }).revenue = -1)).toThrow(TypeError);
        expect((sandboxLookup(f.nif, 0) as { profile: CompanyProfile }).profile.age_years).toBe(age);
      }
    }
  });

  test('deteriorating_on_rescore: B or C at g=0, strictly worse by > 5 points every step to g=10', () => {
    const r0 = scoreOf('deteriorating_on_rescore', 0);
    expect(['B', 'C']).toContain(r0.tier);
    const r1 = scoreOf('deteriorating_on_rescore', 1);
    expect(TIER_RANK[r1.tier]).toBeGreaterThan(TIER_RANK[r0.tier]);
    const newNegative = codes(r1).filter((c) => !codes(r0).includes(c) && REASON_CATALOGUE[c]!.impact === 'negative');
    expect(newNegative.some((c) => c === 'OVERDUE_CREDIT' || c === 'RECENT_DEFAULT')).toBe(true);
    let prev = r0;
    for (let g = 1; g <= 10; g++) {
      const r = scoreOf('deteriorating_on_rescore', g);
      checkBounds(r);
      expect(r.score).toBeLessThan(prev.score - 5);
      expect(r.pd!).toBeGreaterThan(prev.pd!);
      expect(TIER_RANK[r.tier]).toBeGreaterThanOrEqual(TIER_RANK[prev.tier]);
      prev = r;
    }
  });

  test('deteriorating_on_rescore stays bounded for large generations', () => {
    let prev = scoreOf('deteriorating_on_rescore', 10);
    for (const g of [11, 15, 20, 30, 50, 100, 1000, 1e6, 1e9, 1e300, Infinity]) {
      const r = scoreOf('deteriorating_on_rescore', g);
      checkBounds(r);
      expect(r.score).toBeLessThanOrEqual(prev.score);
      expect(r.score).toBeGreaterThanOrEqual(0);
      prev = r;
    }
    // Odd generations are normalised, not rejected.
    expect(scoreOf('deteriorating_on_rescore', -3)).toEqual(scoreOf('deteriorating_on_rescore', 0));
    expect(scoreOf('deteriorating_on_rescore', Number.NaN)).toEqual(scoreOf('deteriorating_on_rescore', 0));
    expect(scoreOf('deteriorating_on_rescore', 2.9)).toEqual(scoreOf('deteriorating_on_rescore', 2));
  });
});

describe('(g) reason catalogue and languages', () => {
  const REQUIRED_CODES = [
    'STRONG_EQUITY',
    'WEAK_EQUITY',
    'NEGATIVE_EQUITY',
    'HIGH_LEVERAGE',
    'LOW_LEVERAGE',
    'STRONG_PROFITABILITY',
    'LOSS_MAKING',
    'STRONG_LIQUIDITY',
    'WEAK_LIQUIDITY',
    'HIGH_CONCENTRATION',
    'SLOW_PAYER',
    'PROMPT_PAYER',
    'RECENT_DEFAULT',
    'OVERDUE_CREDIT',
    'CLEAN_CREDIT_HISTORY',
    'TAX_IRREGULAR',
    'TAX_COMPLIANT',
    'YOUNG_COMPANY',
    'ESTABLISHED_COMPANY',
    'INSOLVENCY_PROCEEDINGS',
    'LIMITED_DATA',
    'EQUITY_BELOW_HALF_CAPITAL',
  ];

  test('every required code exists; every code has distinct non-empty en and pt labels', () => {
    for (const code of REQUIRED_CODES) expect(REASON_CATALOGUE[code]).toBeDefined();
    for (const [code, entry] of Object.entries(REASON_CATALOGUE)) {
      expect(code).toMatch(/^[A-Z][A-Z_]*$/);
      expect(entry.en.trim().length).toBeGreaterThan(0);
      expect(entry.pt.trim().length).toBeGreaterThan(0);
      expect(entry.pt).not.toBe(entry.en);
      expect(['positive', 'negative']).toContain(entry.impact);
    }
    const pts = Object.values(REASON_CATALOGUE).map((e) => e.pt);
    expect(new Set(pts).size).toBe(pts.length);
  });

  test('labels follow the requested language; everything else is identical', () => {
    for (const p of ALL.slice(0, 200)) {
      const en = scoreCompany(p, 'en');
      const pt = scoreCompany(p, 'pt');
      expect(pt.reasons.map((r) => [r.code, r.weight, r.impact])).toEqual(en.reasons.map((r) => [r.code, r.weight, r.impact]));
      expect({ ...pt, reasons: [] }).toEqual({ ...en, reasons: [] });
      for (const r of en.reasons) expect(r.label).toBe(REASON_CATALOGUE[r.code]!.en);
      for (const r of pt.reasons) expect(r.label).toBe(REASON_CATALOGUE[r.code]!.pt);
    }
  });

  test('most reason codes are reachable on the random sample', () => {
    const seen = new Set<string>();
    for (const p of ALL) for (const r of scoreCompany(p, 'en').reasons) seen.add(r.code);
    for (const f of SANDBOX_FIXTURES) {
      const l = sandboxLookup(f.nif, 0);
      if (l.kind === 'profile') for (const r of scoreCompany(l.profile, 'en').reasons) seen.add(r.code);
    }
    for (const code of REQUIRED_CODES) expect({ code, seen: seen.has(code) }).toEqual({ code, seen: true });
  });
});
