import { describe, expect, test } from 'bun:test';
import { buyerBehaviour, sellerBooks, type ObservedDocument } from '../src/features/erp/observations';
import { withErpObservations } from '../src/features/score/service';
import { sandboxLookup } from '../src/features/score/fixtures';
import { scoreCompany } from '../src/features/score/engine';

const doc = (issue: string, due: string | null, gross: number, payments: [string, number][] = []): ObservedDocument => ({
  issue_date: issue,
  due_date: due,
  gross_cents: gross,
  payments: payments.map(([date, amount_cents]) => ({ date, amount_cents })),
});

const round1 = (x: number) => Math.round(x * 10) / 10;

describe('buyer behaviour', () => {
  test('days late over documents paid in full, overdue over unpaid past-due ones, p90 by nearest rank', () => {
    const docs = [
      doc('2026-06-01', '2026-07-01', 10000, [['2026-07-01', 10000]]), // on time
      doc('2026-07-01', '2026-07-31', 10000, [['2026-08-10', 10000]]), // 10 days late
      doc('2026-08-01', '2026-08-31', 10000, [['2026-09-01', 4000], ['2026-10-30', 6000]]), // completed 60 days late
      doc('2026-09-01', '2026-10-01', 5000, [['2026-10-05', 1000]]), // partly paid, overdue 40.00
      doc('2026-11-01', '2026-12-01', 7000), // not yet due
    ];
    const b = buyerBehaviour(docs, '2026-11-20');
    expect(b).toEqual({
      documents: 5,
      due_documents: 4,
      months_observed: 5,
      days_late_avg: 23.3,
      days_late_p90: 60,
      share_paid_late: 0.667,
      overdue_eur: 40,
      days_beyond_terms: (0 + 10 + 60 + 50) / 4,
      sufficient: true,
    });
  });
  test('a document falling due after its books\' bank data reaches is not judged: neither overdue nor counted as due', () => {
    const reach = '2026-10-31';
    const known = (d: ObservedDocument) => ({ ...d, payments_known_until: reach });
    const docs = [
      known(doc('2026-08-01', '2026-08-31', 10000, [['2026-09-10', 10000]])), // 10 days late
      known(doc('2026-09-15', '2026-10-15', 5000)), // unpaid, due before the reach: overdue, 16 days beyond terms at the reach
      known(doc('2026-10-10', '2026-11-09', 7000)), // due after the reach: its payment may not be synced yet
      doc('2026-10-10', '2026-11-09', 3000), // the same without a known reach: judged as of asOf
    ];
    const b = buyerBehaviour(docs, '2026-11-20');
    expect(b).toMatchObject({ documents: 4, due_documents: 3, overdue_eur: 80, days_beyond_terms: round1((10 + 16 + 11) / 3) });
    // a reach later than asOf changes nothing
    const later = buyerBehaviour(docs.map((d) => ({ ...d, payments_known_until: '2027-01-01' })), '2026-11-20');
    expect(later).toEqual(buyerBehaviour(docs.map((d) => ({ ...d, payments_known_until: null })), '2026-11-20'));
  });
  test('too little history is not acted on', () => {
    const b = buyerBehaviour([doc('2026-10-01', '2026-10-31', 100, [['2026-11-30', 100]])], '2026-12-01');
    expect(b.sufficient).toBe(false);
    const profile = (sandboxLookup('599000023', 0) as any).profile;
    expect(withErpObservations(profile, { provider: 'demo', synced_at: '2026-12-01T00:00:00Z', buyer: b, seller: null })).toBe(profile);
  });
  test('a late payer in the tenant\'s books scores worse than the same company paying on time', () => {
    const profile = (sandboxLookup('599000023', 0) as any).profile;
    const months = ['2026-05', '2026-06', '2026-07', '2026-08'];
    const late = buyerBehaviour(months.map((m) => doc(`${m}-01`, `${m}-28`, 1000, [[`${m.slice(0, 5)}${String(Number(m.slice(5)) + 2).padStart(2, '0')}-20`, 1000]])), '2026-11-01');
    const prompt = buyerBehaviour(months.map((m) => doc(`${m}-01`, `${m}-28`, 1000, [[`${m}-27`, 1000]])), '2026-11-01');
    const pd = (b: typeof late) => scoreCompany(withErpObservations(profile, { provider: 'demo', synced_at: '2026-11-01T00:00:00Z', buyer: b, seller: null }), 'en').pd!;
    expect(late.sufficient && prompt.sufficient).toBe(true);
    expect(pd(late)).toBeGreaterThan(pd(prompt));
  });
});

describe('seller books', () => {
  test('revenue trend, concentration and DSO', () => {
    const s = sellerBooks(
      [
        { ...doc('2026-10-01', '2026-10-31', 12300, []), customer_nif: '599000015', net_cents: 10000, credit: false },
        { ...doc('2026-09-01', '2026-10-01', 12300, [['2026-10-01', 12300]]), customer_nif: '599000015', net_cents: 10000, credit: false },
        { ...doc('2026-08-01', '2026-09-01', 12300, [['2026-09-01', 12300]]), customer_nif: '599000023', net_cents: 10000, credit: false },
        { ...doc('2025-09-01', '2025-10-01', 24600, [['2025-10-01', 24600]]), customer_nif: '599000023', net_cents: 20000, credit: false },
      ],
      '2026-11-01',
    );
    expect(s.revenue_last_12m_eur).toBe(300);
    expect(s.revenue_prior_12m_eur).toBe(200); // 2025-09-01 is 426 days before: the prior year
    expect(s.revenue_trend).toBe(0.5);
    expect(s.top_customer_share).toBe(0.667);
    expect(s.dso_days).toBe(121.7); // 123 open of 369 invoiced × 365
  });
});
