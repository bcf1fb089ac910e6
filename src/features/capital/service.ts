import { aboutField, ApiError, fieldProblems, NIF_CHECK_DIGIT_FAILS, repeatedIds, type FieldError } from '../../lib/errors';
import { isValidNif } from '../../lib/nif';
import { isWholeCents, WHOLE_CENTS, wholeCents } from '../../lib/schemas';
import type { ScoreCaller, ScoreService } from '../score/service';
import type { UsageMeter } from '../usage/service';
import { CAPITAL_RATIO, capitalFor, REGIME_IN_FORCE, REGIMES, SUPPORTING_FACTOR } from './formulas';
import type { CapitalAnswer, CapitalBody } from './model';

export const CAPITAL_ALGORITHM_VERSION = 'capital-1.0.0';

/** Euros to the cent (the formulas' binary floating point left 3238.0750000000003), as integer cents. */
const toCents = (eur: number) => Math.round(Number((eur * 100).toPrecision(15)));
/** A ratio without binary noise (0.30000000000000004 → 0.3): 12 significant digits. */
const ratio = (x: number) => Number(x.toPrecision(12));
const ratioOrNull = (x: number | null) => (x === null ? null : ratio(x));

/** POST /v1/basel/capital: PDs given or read from the scoring engine, then the pure formulas. */
export class CapitalService {
  constructor(
    private readonly scores: ScoreService,
    private readonly usage: UsageMeter,
    private readonly now: () => Date,
  ) {}

  /** The answer (its usage, with the bureau lookups of live scores computed for its NIFs, billed only if it succeeds: UsageMeter.hold). */
  async compute(caller: ScoreCaller, body: CapitalBody): Promise<CapitalAnswer> {
    const regime = body.regime ?? REGIME_IN_FORCE;
    const p = REGIMES[regime];
    const errors: FieldError[] = [];
    const defaultApproach = body.approach ?? 'irb_foundation';
    body.exposures.forEach((e, i) => {
      // the standardised risk weight needs no PD (the line's expected loss is then null)
      if (e.pd === undefined && e.nif === undefined && (e.approach ?? defaultApproach) !== 'standardised')
        errors.push({ path: `exposures.${i}.pd`, message: 'give pd, or nif to read it from the scoring engine (the standardised approach needs neither)' });
      if (e.nif !== undefined && !isValidNif(e.nif)) errors.push({ path: `exposures.${i}.nif`, message: NIF_CHECK_DIGIT_FAILS });
      if (!isWholeCents(e.ead_eur)) errors.push({ path: `exposures.${i}.ead_eur`, message: WHOLE_CENTS });
    });
    // a line's id is echoed to tell the answer's lines apart
    errors.push(...repeatedIds('exposures', body.exposures));
    // what the group owes includes this line and the portfolio's other lines of its NIF (a smaller
    // figure gave them the supporting factor, and one obligor two treatments in one request)
    const owedByNif = new Map<string, number>();
    for (const e of body.exposures) if (e.nif !== undefined) owedByNif.set(e.nif, (owedByNif.get(e.nif) ?? 0) + e.ead_eur);
    const groupByNif = new Map<string, number>(); // the first group figure given for each NIF
    body.exposures.forEach((e, i) => {
      if (e.nif !== undefined && e.group_exposure_eur !== undefined) {
        const first = groupByNif.get(e.nif);
        if (first === undefined) groupByNif.set(e.nif, e.group_exposure_eur);
        else if (first !== e.group_exposure_eur) errors.push({ path: `exposures.${i}.group_exposure_eur`, message: `differs from the ${first} given on another line of ${e.nif}: one obligor owes one amount` });
      }
      const owed = e.nif !== undefined ? owedByNif.get(e.nif)! : e.ead_eur;
      if (e.group_exposure_eur !== undefined && e.group_exposure_eur < owed - 0.005)
        errors.push({ path: `exposures.${i}.group_exposure_eur`, message: e.nif !== undefined && owed > e.ead_eur ? `must be at least ${wholeCents(owed)}, what this portfolio's lines of ${e.nif} add up to` : `must be at least the line's ead_eur (${e.ead_eur}): the group's exposure includes it` });
    });
    if (errors.length) throw fieldProblems(errors);

    // one score per distinct NIF (cached for 24 h like any score)
    const byNif = new Map<string, { pd: number; turnover: number | null; source: string }>();
    for (const [i, e] of body.exposures.entries()) {
      if (e.pd !== undefined || e.nif === undefined || byNif.has(e.nif)) continue;
      try {
        const { result, facts } = await this.scores.scoreWithFacts(caller, e.nif);
        // without a PD estimate (limited data) the engine's tier is read from its indicative PD:
        // used, but not passed off as the engine's estimate
        byNif.set(e.nif, { pd: facts.pd_scale, turnover: facts.revenue_eur, source: result.pd_estimate === null ? `${result.algorithm_version} indicative` : result.algorithm_version });
      } catch (err) {
        if (err instanceof ApiError) throw aboutField(err, `exposures.${i}.nif`, `exposures.${i} (${e.nif})`);
        throw err;
      }
    }

    const lines = body.exposures.map((e, index) => {
      const scored = e.nif !== undefined ? byNif.get(e.nif) : undefined;
      const pd = e.pd ?? scored?.pd ?? null;
      const lgd = e.lgd ?? ((e.seniority ?? 'senior_unsecured') === 'subordinated' ? p.lgd_subordinated : p.lgd_senior_unsecured);
      const turnover = e.turnover_eur ?? scored?.turnover ?? null;
      const approach = e.approach ?? defaultApproach;
      const maturity = e.maturity_years ?? 2.5;
      const r = capitalFor(
        { pd, lgd, ead_eur: e.ead_eur, maturity_years: maturity, turnover_eur: turnover, approach, retail: e.retail ?? false, group_exposure_eur: e.group_exposure_eur ?? (e.nif !== undefined ? owedByNif.get(e.nif)! : null), apply_supporting_factor: e.sme_supporting_factor ?? true },
        regime,
      );
      const cents = { ead: toCents(e.ead_eur), rwa: toCents(r.rwa_eur), capital: toCents(r.capital_eur), expectedLoss: r.expected_loss_eur === null ? null : toCents(r.expected_loss_eur) };
      return {
        cents,
        exactRwa: r.rwa_eur,
        line: {
          index,
          id: e.id ?? null,
          nif: e.nif ?? null,
          approach,
          pd_source: e.pd !== undefined ? 'input' : (scored?.source ?? null),
          lgd_source: e.lgd !== undefined ? ('input' as const) : ('supervisory_f_irb' as const),
          ead_eur: cents.ead / 100,
          maturity_years: maturity,
          turnover_eur: turnover,
          pd_used: r.pd_used,
          pd_floored: r.pd_floored,
          lgd_used: r.lgd_used,
          is_sme: r.is_sme,
          correlation: ratioOrNull(r.correlation),
          sme_size_adjustment: ratio(r.sme_size_adjustment),
          maturity_b: ratioOrNull(r.maturity_b),
          maturity_adjustment: ratioOrNull(r.maturity_adjustment),
          k: ratioOrNull(r.k),
          risk_weight: ratio(r.risk_weight),
          rwa_before_supporting_factor_eur: toCents(r.rwa_before_supporting_factor_eur) / 100,
          supporting_factor: ratio(r.supporting_factor),
          rwa_eur: cents.rwa / 100,
          capital_eur: cents.capital / 100,
          expected_loss_eur: cents.expectedLoss === null ? null : cents.expectedLoss / 100,
        },
      };
    });
    // totals are the sums of the lines as answered (to the cent), so they add up for the reader
    // (exact in BigInt: 10 000 lines of up to 1e12 euros pass 2^53 cents; the euros answered are then as near as a double holds)
    const sum = (f: (l: (typeof lines)[number]) => number) => Number(lines.reduce((total, l) => total + BigInt(f(l)), 0n)) / 100;
    const exactEad = body.exposures.reduce((s, e) => s + e.ead_eur, 0);
    const exactRwa = lines.reduce((s, l) => s + l.exactRwa, 0);
    this.usage.record({ tenantId: caller.tenantId, apiKeyId: caller.keyId, env: caller.env, requestId: caller.requestId, meter: 'basel_capital', quantity: lines.length });
    return {
      regime,
      parameters: { ...p, capital_ratio: CAPITAL_RATIO, supporting_factor: { ...SUPPORTING_FACTOR } },
      lines: lines.map((l) => l.line),
      totals: {
        exposures: lines.length,
        ead_eur: sum((l) => l.cents.ead),
        rwa_eur: sum((l) => l.cents.rwa),
        capital_eur: sum((l) => l.cents.capital),
        expected_loss_eur: sum((l) => l.cents.expectedLoss ?? 0),
        average_risk_weight: ratio(exactRwa / exactEad),
      },
      algorithm_version: CAPITAL_ALGORITHM_VERSION,
      computed_at: this.now().toISOString(),
    };
  }
}
