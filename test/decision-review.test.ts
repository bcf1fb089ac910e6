/**
 * What an outside review of decisions asked for (decision-1.1.0): data_freshness is the oldest input
 * used (the financial statements' year end), the decision prices from the spreads index row it names,
 * never below the company's own expected loss, every step of the limit has its basis line in one
 * money format, and signals are only what is weighed (the rest are observations).
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { DecisionResponse } from '../src/features/decision/model';
import { creditLimit, decide, DEFAULT_POLICY, modalityFor, MODALITIES, notchPrice, NOTCHES, OPERATION_TYPES, ownLossSpread, TERM_BUCKETS, type CreditPolicy, type DecisionInput } from '../src/features/decision/policy';
import { inputTimes } from '../src/features/decision/service';
import { mulberry32 } from '../src/lib/prng';
import { makeApp, type TestApp } from './helpers';
setDefaultTimeout(60_000);

let h: TestApp;
beforeAll(async () => {
  h = await makeApp();
});
afterAll(() => h.close());

const decideHttp = (key: string, nif: string, context: Record<string, unknown>, headers?: Record<string, string>) => h.json('POST', '/v1/decision', { key, body: { nif, context }, headers });
const SCORABLE = ['599000015', '599000023', '599000031', '599000040', '599000058', '599000082', '599000090', '599000104', '599000112'];

/** euros in the basis lines' one format, English: €1,234.56 */
const euros = (line: string) => [...line.matchAll(/€(-?[\d,]+\.\d{2})/g)].map((m) => Number(m[1]!.replace(/,/g, '')));
/** euros in Portuguese: 1 234,56 € */
const eurosPt = (line: string) => [...line.matchAll(/(-?\d{1,3}(?: \d{3})*,\d{2}) €/g)].map((m) => Number(m[1]!.replace(/ /g, '').replace(',', '.')));

describe('data_freshness: the oldest input used', () => {
  test('a fixture with 2025 accounts: the statements\' year end, not the score\'s time; the repeated decision is still the same one', async () => {
    const t = await h.tenant();
    const context = { operation_type: 'factoring', amount_eur: 150_000, expected_term_days: 90 };
    const first = await decideHttp(t.api_key, '599000015', context);
    expect(first.status).toBe(200);
    expect(Value.Check(DecisionResponse, first.body)).toBe(true);
    expect(first.body.data_freshness).toBe('2025-12-31T00:00:00.000Z');
    expect(first.body.algorithm_version).toStartWith('decision-1.1.0+');
    // a decision whose answer and inputs' times are unchanged is the same decision
    h.clock.advance(60_000);
    const again = await decideHttp(t.api_key, '599000015', context);
    expect(again.body).toMatchObject({ cache: 'cached', decision_id: first.body.decision_id, data_freshness: '2025-12-31T00:00:00.000Z' });
    const listed = (await h.json('GET', '/v1/decisions?nif=599000015', { key: t.api_key })).body.data;
    expect(listed).toHaveLength(1);
    // a new score (force_refresh) is a new input time: a new decision, the statements' date the same
    const refreshed = await h.json('POST', '/v1/decision', { key: t.api_key, body: { nif: '599000015', context, refresh: 'force_refresh' } });
    expect(refreshed.body.decision_id).not.toBe(first.body.decision_id);
    expect(refreshed.body.data_freshness).toBe('2025-12-31T00:00:00.000Z');
  });

  test('without financial statements (599000090, 599000104): the score\'s sources as read, at its computed_at', async () => {
    const t = await h.tenant();
    for (const nif of ['599000090', '599000104']) {
      const d = (await decideHttp(t.api_key, nif, { operation_type: 'trade_credit', amount_eur: 1000, expected_term_days: 30 })).body;
      const score = (await h.json('POST', '/v1/score', { key: t.api_key, body: { nif } })).body;
      expect(score.data_sources).not.toContain('financial_statements');
      expect(d.data_freshness).toBe(score.computed_at);
    }
  });

  test('inputTimes: statements at their year end when the score used them and names the year; otherwise not', () => {
    const result = { computed_at: '2026-11-29T10:00:00.000Z', data_sources: ['financial_statements', 'credit_register'] };
    expect(Math.min(...inputTimes(result, { financials_fiscal_year: 2024, erp: null }, null))).toBe(Date.UTC(2024, 11, 31));
    expect(Math.min(...inputTimes(result, { financials_fiscal_year: null, erp: null }, null))).toBe(Date.parse(result.computed_at));
    expect(Math.min(...inputTimes(result, { erp: null }, null))).toBe(Date.parse(result.computed_at)); // a score stored before the year was kept
    expect(Math.min(...inputTimes({ ...result, data_sources: ['credit_register'] }, { financials_fiscal_year: 2024, erp: null }, null))).toBe(Date.parse(result.computed_at));
    const esg = { computedAt: new Date('2024-06-01T00:00:00.000Z') };
    expect(Math.min(...inputTimes(result, { financials_fiscal_year: 2024, erp: null }, esg))).toBe(esg.computedAt.getTime());
  });
});

/** The index rows a decision's basis names: its notch's own, and the better notch's floor when there is one. */
function namedRows(basis: string[]) {
  const rows = basis.flatMap((l) => {
    const m = /^(?:spread: index|not below the better notch's index) (\S+), (\d+) days, (\w+): (\d+) bps$/.exec(l);
    return m ? [{ tier: m[1]!, term: Number(m[2]), modality: m[3]!, bps: Number(m[4]) }] : [];
  });
  const own = basis.map((l) => /^not below the company's own expected loss: .*: (\d+) bps$/.exec(l)).find(Boolean);
  return { rows, ownLoss: own ? Number(own[1]) : null };
}

describe('the spreads index is what decisions price from', () => {
  test('every fixture × operation type × bucket term: the spread is the index row the basis names (or the company\'s own expected loss above it, named too)', async () => {
    const t = await h.tenant();
    const index = (await h.json('GET', '/v1/index/spreads', { key: t.api_key })).body.spreads as { tier: string; term_days: number; modality: string; spread_bps: number }[];
    const rowOf = (tier: string, term: number, modality: string) => index.find((r) => r.tier === tier && r.term_days === term && r.modality === modality)!.spread_bps;
    let floored = 0;
    let lifted = 0;
    for (const nif of SCORABLE)
      for (const operation_type of OPERATION_TYPES)
        for (const term of TERM_BUCKETS) {
          const d = (await decideHttp(t.api_key, nif, { operation_type, amount_eur: 1000, expected_term_days: term })).body;
          const { rows, ownLoss } = namedRows(d.recommendation.basis);
          expect(rows.length).toBeGreaterThanOrEqual(1);
          expect(rows[0]).toMatchObject({ tier: d.tier, term, modality: d.recommendation.modality });
          for (const r of rows) expect(r.bps).toBe(rowOf(r.tier, r.term, r.modality));
          const priced = rows.at(-1)!.bps;
          if (rows.length === 2) {
            floored++;
            expect(priced).toBeGreaterThan(rows[0]!.bps);
          }
          if (ownLoss !== null) {
            lifted++;
            expect(ownLoss).toBeGreaterThan(priced);
            expect(d.recommendation.suggested_spread_bps).toBe(ownLoss);
          } else expect(d.recommendation.suggested_spread_bps).toBe(priced);
        }
    expect(floored).toBeGreaterThan(0); // factoring below B- (recourse) is floored at B- without recourse
    expect(lifted).toBeGreaterThan(0); // 599000058, tier E, PD ≈ 0.9
  });

  test('the reviewer\'s case: 599000031 (C+) factoring 90 days names C+ recourse 154 bps and its floor, B- non_recourse, at the index\'s figures, in both languages', async () => {
    const t = await h.tenant();
    const row = async (tier: string, modality: string) => (await h.json('GET', `/v1/index/spreads?tier=${encodeURIComponent(tier)}&term_days=90&modality=${modality}`, { key: t.api_key })).body.spreads[0].spread_bps;
    const context = { operation_type: 'factoring', amount_eur: 10_000, expected_term_days: 90 };
    const en = (await decideHttp(t.api_key, '599000031', context)).body;
    const pt = (await decideHttp(t.api_key, '599000031', context, { 'accept-language': 'pt-PT' })).body;
    expect(en.tier).toBe('C+');
    const own = await row('C+', 'recourse');
    const better = await row('B-', 'non_recourse');
    expect(better).toBeGreaterThan(own);
    expect(en.recommendation.suggested_spread_bps).toBe(better);
    expect(en.recommendation.basis.slice(-2)).toEqual([`spread: index C+, 90 days, recourse: ${own} bps`, `not below the better notch's index B-, 90 days, non_recourse: ${better} bps`]);
    expect(pt.recommendation.basis.slice(-2)).toEqual([`spread: índice C+, 90 dias, recourse: ${own} pb`, `não inferior ao índice do nível melhor B-, 90 dias, non_recourse: ${better} pb`]);
    // invoice discounting takes C+ with recourse as B- does: its own row, no floor
    const id = (await decideHttp(t.api_key, '599000031', { ...context, operation_type: 'invoice_discounting' })).body;
    expect(id.recommendation.suggested_spread_bps).toBe(own);
    expect(id.recommendation.basis.at(-1)).toBe(`spread: index C+, 90 days, recourse: ${own} bps`);
  });
});

describe('never below the company\'s own expected loss', () => {
  test('E- accepted (min_tier E-): 599000058 priced at its own PD × LGD + margin, above the E- index, with its basis line (en, pt-PT)', async () => {
    const t = await h.tenant();
    expect((await h.json('PATCH', '/v1/admin/credit-policy', { key: t.api_key, body: { min_tier: 'E-' } })).status).toBe(200);
    const context = { operation_type: 'factoring', amount_eur: 1000, expected_term_days: 90 };
    const en = (await decideHttp(t.api_key, '599000058', context)).body;
    const pt = (await decideHttp(t.api_key, '599000058', context, { 'accept-language': 'pt-PT' })).body;
    expect(en.tier).toBe('E-');
    expect(en.recommendation).toMatchObject({ approved: true, modality: 'recourse' });
    const pd = en.pd_estimate;
    expect(pd).toBeGreaterThan(0.8);
    const index = (await h.json('GET', '/v1/index/spreads?tier=E-&term_days=90&modality=recourse', { key: t.api_key })).body.spreads[0].spread_bps;
    const el = pd * 0.3 * 10_000;
    expect(index).toBeLessThan(el); // the band's middle (77.5 %) is far below this company's PD
    const spread = en.recommendation.suggested_spread_bps;
    expect(spread).toBe(Math.ceil(el + 50 - 1e-9));
    const pdPct = (pd * 100).toFixed(2);
    expect(en.recommendation.basis.at(-1)).toBe(`not below the company's own expected loss: PD ${pdPct} % × LGD 0.3 = ${Math.round(el)} bps, + 50 bps margin: ${spread} bps`);
    expect(pt.recommendation.basis.at(-1)).toBe(`não inferior à perda esperada da própria empresa: PD ${pdPct.replace('.', ',')} % × LGD 0,3 = ${Math.round(el)} pb, + 50 pb de margem: ${spread} pb`);
    expect(pt.recommendation.suggested_spread_bps).toBe(spread);
  });

  test('over random decisions and policies: the spread is at least PD × LGD + margin, and exactly the index price when that covers it', () => {
    const rand = mulberry32(20261129);
    for (let i = 0; i < 3000; i++) {
      const policy: CreditPolicy = {
        min_tier: NOTCHES[Math.floor(rand() * NOTCHES.length)]!,
        max_amount_eur: 1000 + rand() * 1e7,
        lgd: Object.fromEntries(MODALITIES.map((m) => [m, rand()])) as CreditPolicy['lgd'],
        margin_bps: Math.floor(rand() * 500),
      };
      const input: DecisionInput = { pd: Math.exp(Math.log(0.0003) + rand() * (Math.log(0.9999) - Math.log(0.0003))), revenue_eur: 1e6, equity_eur: 1e5, adverse: false, operation_type: OPERATION_TYPES[Math.floor(rand() * 5)]!, amount_eur: 1000, term_days: 1 + Math.floor(rand() * 720) };
      const d = decide(input, policy);
      expect(d.spread_bps).toBeGreaterThanOrEqual(input.pd * d.lgd * 10_000 + policy.margin_bps - 1e-6);
      const lifted = d.basis.some((l) => l.startsWith('not below the company\'s own expected loss'));
      const indexPrice = notchPrice(d.notch, input.term_days, (n) => modalityFor(input.operation_type, n), policy).spread;
      expect(lifted).toBe(ownLossSpread(input.pd, d.lgd, policy.margin_bps) > indexPrice);
      expect(d.spread_bps).toBe(Math.max(indexPrice, ownLossSpread(input.pd, d.lgd, policy.margin_bps)));
      // the lift never reaches the A and B notches: their index covers the worst PD of their band
      if (NOTCHES.indexOf(d.notch) <= NOTCHES.indexOf('B-')) expect(lifted).toBe(false);
    }
  });
});

/** Replays a limit's basis lines (English): the base, its factors, then every bounding step; returns the figure they reach. */
function replay(basis: string[]): { product: number; reached: number; lines: string[] } {
  let value = NaN;
  let product = NaN;
  const lines: string[] = [];
  for (const l of basis) {
    if (l.startsWith('no published accounts') || l.startsWith('base ')) value = euros(l).at(-1)!;
    else if (l.startsWith('× ')) value *= Number(/^× ([\d.]+)/.exec(l)![1]);
    else if (l.startsWith('= ')) {
      product = euros(l)[0]!;
      expect(Math.abs(product - value)).toBeLessThanOrEqual(Math.max(0.01, value * 2e-4)); // factors shown to 4 decimals
      value = product;
    } else if (/^(capped at|rounded down|raised to)/.test(l)) {
      value = euros(l)[0]!;
      lines.push(l.split(':')[0]!);
    }
  }
  return { product, reached: value, lines };
}

describe('the basis: every step that changes the limit, one money format', () => {
  test('the €1 000 minimum (min_tier E-, 599000058, 90 days) and the policy maximum with rounding (max_amount_eur 1500.5): each has its line, en and pt-PT', async () => {
    const t = await h.tenant();
    await h.json('PATCH', '/v1/admin/credit-policy', { key: t.api_key, body: { min_tier: 'E-' } });
    const context = { operation_type: 'trade_credit', amount_eur: 1000, expected_term_days: 90 };
    const small = (await decideHttp(t.api_key, '599000058', context)).body;
    expect(small.recommendation.limit_eur).toBe(1000);
    const r = replay(small.recommendation.basis);
    expect(r.product).toBeLessThan(1000);
    expect(r.reached).toBe(1000);
    expect(small.recommendation.basis).toContain('raised to the minimum limit: €1,000.00');
    const smallPt = (await decideHttp(t.api_key, '599000058', context, { 'accept-language': 'pt-PT' })).body;
    expect(smallPt.recommendation.basis).toContain('elevado ao limite mínimo: 1 000,00 €');

    await h.json('PATCH', '/v1/admin/credit-policy', { key: t.api_key, body: { min_tier: 'D-', max_amount_eur: 1500.5 } });
    const capped = (await decideHttp(t.api_key, '599000015', { operation_type: 'factoring', amount_eur: 1000.01, expected_term_days: 60 })).body;
    expect(capped.recommendation).toMatchObject({ approved: false, limit_eur: 1000 });
    expect(capped.recommendation.basis).toEqual(expect.arrayContaining([
      'capped at the policy maximum: €1,500.50',
      'rounded down to the thousand: €1,000.00',
      'declined: amount €1,000.01 above the limit €1,000.00',
    ]));
    expect(replay(capped.recommendation.basis).reached).toBe(1000);
    const cappedPt = (await decideHttp(t.api_key, '599000015', { operation_type: 'factoring', amount_eur: 1000.01, expected_term_days: 60 }, { 'accept-language': 'pt-PT' })).body;
    expect(cappedPt.recommendation.basis).toEqual(expect.arrayContaining([
      'limitado ao máximo da política: 1 500,50 €',
      'arredondado por defeito ao milhar: 1 000,00 €',
      'recusado: montante de 1 000,01 € acima do limite de 1 000,00 €',
    ]));
    // the credit limit's basis is the same arithmetic
    const limit = (await h.json('GET', '/v1/credit-limit/599000015?term_days=60', { key: t.api_key })).body;
    expect(limit.limit_eur).toBe(1000);
    expect(replay(limit.basis).reached).toBe(1000);
  });

  test('every fixture, operation and bucket term under three policies: the lines multiply out to limit_eur, a line for each step that changes it; no other money format', async () => {
    const t = await h.tenant();
    for (const patch of [{ min_tier: 'E-' }, { max_amount_eur: 250_000 }, { max_amount_eur: 12_345.67, min_tier: 'C-' }]) {
      await h.json('PATCH', '/v1/admin/credit-policy', { key: t.api_key, body: patch });
      for (const nif of SCORABLE)
        for (const term of TERM_BUCKETS) {
          const d = (await decideHttp(t.api_key, nif, { operation_type: 'credit_line', amount_eur: 5000, expected_term_days: term })).body;
          const basis: string[] = d.recommendation.basis;
          if (d.recommendation.limit_eur === 0) {
            expect(basis.some((l) => l.startsWith('declined: below the minimum tier'))).toBe(true);
            continue;
          }
          const r = replay(basis);
          expect(r.reached).toBe(d.recommendation.limit_eur);
          // a step that changes the figure has its line, and a line is a change
          const capped = r.product > (await h.json('GET', '/v1/admin/credit-policy', { key: t.api_key })).body.max_amount_eur;
          expect(r.lines.includes('capped at the policy maximum')).toBe(capped);
          expect(r.lines.includes('raised to the minimum limit')).toBe(d.recommendation.limit_eur === 1000 && r.product < 1000);
          for (const l of basis) {
            // € figures only as €1,234.56: no bare "€1500.5", no figures without cents
            expect(l.replace(/€\d{1,3}(?:,\d{3})*\.\d{2}(?!\d)/g, '')).not.toContain('€');
          }
        }
    }
  });

  test('pure: for random inputs and policies the English lines replay to the limit; Portuguese carries the same figures', () => {
    const rand = mulberry32(424242);
    for (let i = 0; i < 2000; i++) {
      const policy: CreditPolicy = { ...DEFAULT_POLICY, min_tier: 'E-', max_amount_eur: Math.round((1000 + rand() * 1e6) * 100) / 100 };
      const input = { pd: Math.exp(Math.log(0.0003) + rand() * 8), revenue_eur: rand() < 0.1 ? null : rand() * 1e8, equity_eur: rand() < 0.1 ? null : (rand() - 0.2) * 1e7, adverse: rand() < 0.3 };
      if (input.revenue_eur === null && rand() < 0.5) input.equity_eur = null;
      const term = 1 + Math.floor(rand() * 720);
      const en = creditLimit({ ...input, pd: Math.min(input.pd, 0.9999) }, term, policy, 'en');
      const pt = creditLimit({ ...input, pd: Math.min(input.pd, 0.9999) }, term, policy, 'pt');
      expect(replay(en.basis).reached).toBe(en.limit_eur);
      expect(pt.basis.flatMap(eurosPt)).toEqual(en.basis.flatMap(euros));
    }
  });
});

describe('signals are what is weighed', () => {
  test('after an ESG assessment, decisions on 599000023 and 599000040 list no signal of strength 0; the ESG line is an observation', async () => {
    const t = await h.tenant();
    for (const nif of ['599000023', '599000040']) {
      const esg = await h.json('POST', '/v1/esg', { key: t.api_key, body: { nif, sector: 'F41', answers: {} } });
      expect(esg.status).toBe(200);
      const d = (await decideHttp(t.api_key, nif, { operation_type: 'factoring', amount_eur: 1000, expected_term_days: 60 })).body;
      expect(Value.Check(DecisionResponse, d)).toBe(true);
      expect(d.signals.length).toBeGreaterThan(0);
      for (const s of d.signals) {
        expect(s.strength).toBeGreaterThan(0);
        expect(s.source).not.toBe('esg');
      }
      const expected = esg.body.overall >= 60 ? ['esg_strong'] : esg.body.overall < 40 ? ['esg_weak'] : [];
      expect(d.observations.map((o: any) => o.factor)).toEqual(expected);
      if (expected.length) expect(d.observations[0]).toEqual({ factor: expected[0], label: `ESG assessment ${esg.body.overall}/100`, source: 'esg' });
    }
  });
});
