/**
 * POST /v1/forecast (issue 22): the engine (deterministic, bands ordered, receipts placed by observed
 * delays and collection rates, payables and recurring outflows, weeks at risk), the backtest on the
 * demo books, the HTTP route on synced books as JSON, SVG and PNG (rendered and looked at), errors,
 * scope, tenants.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import * as mupdf from 'mupdf';
import { backtestOnDemo } from '../src/features/forecast/backtest';
import { forecast, recurringOutflows, type ForecastInput } from '../src/features/forecast/engine';
import { ForecastResponse } from '../src/features/forecast';
import { join } from 'node:path';
import { connectSandboxErp, expectError, makeApp, ROOT, type TestApp } from './helpers';
setDefaultTimeout(60_000); // hooks ignore bunfig's timeout and default to 5 s

const dayNum = (s: string) => Math.floor(Date.parse(`${s}T00:00:00Z`) / 86_400_000);
const base = (o: Partial<ForecastInput> = {}): ForecastInput => ({
  as_of: '2026-06-30',
  weeks: 13,
  opening_balance_cents: 1_000_000,
  // a customer who pays 10 days late, three times over
  invoices: [
    ...['2026-03-01', '2026-04-01', '2026-05-01'].map((d, i) => ({ number: `OLD-${i}`, customer: 'C1', issue_date: d, due_date: d, gross_cents: 100_000, payments: [{ date: new Date((dayNum(d) + 10) * 86_400_000).toISOString().slice(0, 10), amount_cents: 100_000 }] })),
    { number: 'OPEN-1', customer: 'C1', issue_date: '2026-06-20', due_date: '2026-07-14', gross_cents: 500_000, payments: [] },
  ],
  transactions: [],
  payables: [],
  ...o,
});

describe('the engine', () => {
  test('an open invoice arrives its customer\u2019s delay after its due date; the same input gives the same answer; bands ordered', () => {
    const r = forecast(base());
    expect(forecast(base())).toEqual(r);
    for (const w of r.weeks) expect(w.balance_p10_cents <= w.balance_p50_cents && w.balance_p50_cents <= w.balance_p90_cents).toBe(true);
    // due 14 July + 10 days = 24 July: week 4 (week 1 starts on 1 July)
    const week = r.weeks.find((w) => w.receipts_p50_cents >= 500_000)!;
    expect(week.week).toBe(4);
    expect(r.weeks.at(-1)!.balance_p50_cents).toBe(1_500_000);
    expect(r.assumptions).toMatchObject({ open_receivables: 1, customers_with_own_delays: 1 });
  });

  test('payables and monthly outflows lower the balance; a negative balance puts the week at risk', () => {
    const social = Array.from({ length: 6 }, (_, i) => ({ date: `2026-0${i + 1}-20`, amount_cents: -150_000 - i * 1000, description: 'PAG SEG SOCIAL 2026' }));
    expect(recurringOutflows(social, dayNum('2026-06-30'))).toEqual([expect.objectContaining({ label: 'PAG SEG SOCIAL', day_of_month: 20 })]);
    const r = forecast(base({ transactions: social, payables: [{ due_date: '2026-07-08', amount_cents: 1_200_000 }] }));
    expect(r.weeks[1]!.payments_cents).toBe(1_200_000);
    expect(r.weeks.filter((w) => w.payments_cents >= 150_000).length).toBeGreaterThanOrEqual(4); // the payable and 20 July, August, September
    expect(r.weeks_at_risk).toContain(2);
    expect(r.weeks.find((w) => w.week === 2)!.at_risk).toBe(true);
  });

  test('a document without a due date (FS, FR) is settled when issued; an invoice overdue past anything observed is not expected', () => {
    const r = forecast(base({ invoices: [...base().invoices, { number: 'FS-1', customer: 'C2', issue_date: '2026-06-29', due_date: null, gross_cents: 900_000, payments: [] }, { number: 'LATE', customer: 'C1', issue_date: '2026-03-01', due_date: '2026-03-02', gross_cents: 900_000, payments: [] }] }));
    expect(r.weeks.at(-1)!.balance_p50_cents).toBe(1_500_000);
  });

  test('the backtest on the demo books: the error is small against the balance and the band catches part of what happened', () => {
    const b = backtestOnDemo({ origins: ['2026-05-04', '2026-07-27'], paths: 200 });
    expect(b.comparisons).toBe(26);
    expect(b.relative_mae).toBeLessThan(0.2);
    expect(b.band_coverage).toBeGreaterThan(0.1);
  });
});

describe('POST /v1/forecast', () => {
  let h: TestApp;
  let key: string;
  beforeAll(async () => {
    h = await makeApp();
    key = (await h.tenant()).api_key;
    await connectSandboxErp(h, key, 'demo', { customerReference: 'books' });
    const run = await h.json('POST', '/v1/erp-connector/sync', { key, body: { provider: 'demo', customer_reference: 'books' } });
    for (let i = 0; i < 300; i++) {
      if ((await h.json('GET', `/v1/erp-connector/sync/${run.body.run_id}`, { key })).body.status === 'succeeded') break;
      await Bun.sleep(20);
    }
  });
  afterAll(() => h.close());
  const body = { source: { provider: 'demo', customer_reference: 'books' }, as_of: '2026-07-01' };

  test('JSON from the synced books; the opening balance from the movements or given', async () => {
    const r = await h.json('POST', '/v1/forecast', { key, body });
    expect(r.status).toBe(200);
    expect(Value.Check(ForecastResponse, r.body)).toBe(true);
    expect(r.body).toMatchObject({ as_of: '2026-07-01', currency: 'EUR', source: 'demo/books', opening_balance_source: 'movements', algorithm_version: 'forecast-1.0.0' });
    expect(r.body.weeks.length).toBe(13);
    expect(r.body.weeks[0].start).toBe('2026-07-02');
    const given = await h.json('POST', '/v1/forecast', { key, body: { ...body, weeks: 4, opening_balance_cents: { amount: -5_000_000 } } });
    expect(given.body).toMatchObject({ opening_balance_cents: -5_000_000, opening_balance_source: 'given' });
    expect(given.body.weeks.length).toBe(4);
    expect(given.body.weeks_at_risk[0]).toBe(1);
  });

  test('books without a bank feed (TOConline, Moloni): the opening balance must be given, not shown as a measured 0', async () => {
    const t = await h.tenant();
    const { db, t: tables } = h.ctx.database;
    await db.insert(tables.invoices).values({
      id: crypto.randomUUID(), tenantId: t.tenant_id, env: 'sandbox', provider: 'toconline', customerReference: 'no-bank', providerDocumentId: 'd1', documentType: 'FT', number: 'FT 2026/1', atcud: null,
      issueDate: '2026-06-01', dueDate: '2026-07-15', customerNif: '599000015', customerName: 'Alfa', currency: 'EUR', netTotalCents: 100_000, taxTotalCents: 23_000, grossTotalCents: 123_000, status: 'N', data: {}, sourceUpdatedAt: '2026-06-01T00:00:00Z', syncedAt: h.clock.now(),
    } as never);
    const noBank = { source: { provider: 'toconline', customer_reference: 'no-bank' }, as_of: '2026-07-01' };
    expect(expectError(await h.json('POST', '/v1/forecast', { key: t.api_key, body: noBank }), 422, 'validation_failed').fields).toEqual([{ path: 'opening_balance_cents', message: expect.stringContaining('no bank movements') }]);
    const given = await h.json('POST', '/v1/forecast', { key: t.api_key, body: { ...noBank, opening_balance_cents: { amount: 1_000_000 } } });
    expect(given.body).toMatchObject({ opening_balance_cents: 1_000_000, opening_balance_source: 'given' });
    // a SAF-T file's receipts settle its invoices but are no bank statement: not a measured balance
    const demo = await Bun.file(join(ROOT, 'fixtures/saft/saft_idemo599999999.xml')).bytes();
    const imported = await h.json('POST', '/v1/saft/parse?import=true&customer_reference=saft-1', { key: t.api_key, rawBody: demo as never, headers: { 'content-type': 'application/xml' } });
    expect(imported.body.import).toMatchObject({ imported: true, payments: 2 });
    const saft = { source: { provider: 'saft', customer_reference: 'saft-1' }, as_of: '2017-12-31', weeks: 2 };
    expect(expectError(await h.json('POST', '/v1/forecast', { key: t.api_key, body: saft }), 422, 'validation_failed').fields).toEqual([{ path: 'opening_balance_cents', message: expect.stringContaining('not a bank statement') }]);
    expect((await h.json('POST', '/v1/forecast', { key: t.api_key, body: { ...saft, opening_balance_cents: { amount: 500_000 } } })).body).toMatchObject({ opening_balance_cents: 500_000, opening_balance_source: 'given' });
  });

  test('an Accept naming neither JSON nor a chart (nor image/* or */*) is 406 not_acceptable with Vary: Accept, before the Idempotency-Key is claimed', async () => {
    for (const accept of ['text/html', 'application/pdf', 'application/json;q=0, image/svg+xml;q=0, text/csv']) {
      const r = await h.json('POST', '/v1/forecast', { key, body, headers: { accept, 'idempotency-key': 'fc-406' } });
      const b = expectError(r, 406, 'not_acceptable');
      expect(b.message).toBe('The Accept header names none of application/json, image/svg+xml, image/png (nor their type/* or */*): this route answers only those.');
      expect(r.headers.get('vary')).toBe('Accept');
    }
    // the key was not taken by the refusals: the same key with an Accept the route answers is a forecast, not a replay
    const served = await h.call('POST', '/v1/forecast', { key, body, headers: { accept: 'application/json', 'idempotency-key': 'fc-406' } });
    expect(served.status).toBe(200);
    expect(served.headers.get('idempotent-replayed')).toBeNull();
    for (const [accept, type] of [['image/*', 'image/svg+xml'], ['*/*', 'application/json'], ['text/html, application/json;q=0.5', 'application/json'], ['image/png;q=0.2, text/html', 'image/png']])
      expect((await h.call('POST', '/v1/forecast', { key, body, headers: { accept } })).headers.get('content-type')).toContain(type!);
  });

  test('the chart: SVG (valid, a band, a line, 13 points) and PNG (rendered: not blank)', async () => {
    const svg = await h.call('POST', '/v1/forecast', { key, body, headers: { accept: 'image/svg+xml' } });
    expect(svg.headers.get('content-type')).toContain('image/svg+xml');
    // q=0 is "not acceptable" (RFC 9110 §12.4.2): the chart refused, JSON answered
    const refused = await h.call('POST', '/v1/forecast', { key, body, headers: { accept: 'image/svg+xml;q=0, application/json' } });
    expect(refused.headers.get('content-type')).toContain('application/json');
    const text = await svg.text();
    expect(text.startsWith('<svg')).toBe(true);
    expect(text.match(/class="pt"/g)!.length).toBe(13);
    expect(text).toContain('class="band"');
    expect(text).toContain('class="p50"');
    expect(new DOMParserLike(text).ok).toBe(true);
    const png = await h.call('POST', '/v1/forecast', { key, body, headers: { accept: 'image/png' } });
    expect(png.headers.get('content-type')).toBe('image/png');
    expect([svg.headers.get('vary'), png.headers.get('vary')]).toEqual(['Accept, Accept-Language', 'Accept, Accept-Language']); // the answer depends on Accept (and its words on the language)
    const bytes = new Uint8Array(await png.arrayBuffer());
    const img = new mupdf.Image(bytes).toPixmap();
    expect([img.getWidth(), img.getHeight()]).toEqual([720, 360]);
    const px = img.getPixels();
    let coloured = 0;
    for (let i = 0; i < px.length; i += img.getNumberOfComponents()) if (px[i]! < 200 || px[i + 1]! < 200 || px[i + 2]! < 200) coloured++;
    expect(coloured / (img.getWidth() * img.getHeight())).toBeGreaterThan(0.02);
  });

  test("the chart's axis runs between round amounts; its words and numbers in the caller's language", async () => {
    const labels = (svg: string) => [...svg.matchAll(/text-anchor="end" fill="#333">([^<]+)</g)].map((m) => m[1]!);
    const en = await h.call('POST', '/v1/forecast', { key, body, headers: { accept: 'image/svg+xml' } });
    const enText = await en.text();
    expect(en.headers.get('content-language')).toBe('en');
    expect(enText).toContain('Cash forecast demo/books from 2026-07-01');
    expect(enText).toContain('>W1<');
    const amounts = labels(enText).map((l) => Number(l.replace(/ EUR$/, '').replaceAll(',', '')));
    expect(amounts.length).toBeGreaterThanOrEqual(3);
    // from the lowest up: one step between ticks, 1, 2, 2.5 or 5 times a power of ten, and every tick a multiple of it
    const step = amounts[1]! - amounts[0]!;
    expect(amounts.every((a, i) => i === 0 || a - amounts[i - 1]! === step)).toBe(true);
    expect([1, 2, 2.5, 5]).toContain(step / 10 ** Math.floor(Math.log10(step)));
    expect(amounts.every((a) => a % step === 0)).toBe(true);
    const pt = await h.call('POST', '/v1/forecast', { key, body, headers: { accept: 'image/svg+xml', 'accept-language': 'pt-PT' } });
    const ptText = await pt.text();
    expect(pt.headers.get('content-language')).toBe('pt-PT');
    expect(ptText).toContain('Previsão de tesouraria demo/books a partir de 2026-07-01');
    expect(ptText).toContain('semanas a partir de 2026-07-01 (linha p50, faixa p10-p90)');
    expect(ptText).toContain('>S1<');
    expect(labels(ptText)).toEqual(amounts.map((a) => `${a < 0 ? '-' : ''}${Math.abs(a).toString().replace(/\B(?=(\d{3})+(?!\d))/g, '\u00a0')}\u00a0€`));
    // the PNG draws the same words (its font has the no-break space and €)
    const png = await h.call('POST', '/v1/forecast', { key, body, headers: { accept: 'image/png', 'accept-language': 'pt-PT' } });
    expect([png.status, png.headers.get('content-language')]).toEqual([200, 'pt-PT']);
  });

  test('Idempotency-Key: a replay answers by its own Accept (the chart drawn again from the stored forecast)', async () => {
    const idem = (accept: string | undefined, k: string) => h.call('POST', '/v1/forecast', { key, body, headers: { 'idempotency-key': k, ...(accept ? { accept } : {}) } });
    const first = await idem('image/svg+xml', 'fc-1');
    const firstSvg = await first.text();
    const again = await idem('image/svg+xml', 'fc-1');
    expect([again.status, again.headers.get('idempotent-replayed'), again.headers.get('content-type')]).toEqual([200, 'true', 'image/svg+xml; charset=utf-8']);
    expect(await again.text()).toBe(firstSvg);
    const asJson = await idem(undefined, 'fc-1');
    expect([asJson.headers.get('idempotent-replayed'), asJson.headers.get('content-type')]).toEqual(['true', 'application/json;charset=utf-8']);
    expect(((await asJson.json()) as { weeks: unknown[] }).weeks.length).toBe(13);
    await idem(undefined, 'fc-2');
    const png = await idem('image/png', 'fc-2');
    expect([png.status, png.headers.get('idempotent-replayed'), png.headers.get('content-type')]).toEqual([200, 'true', 'image/png']);
    expect(new mupdf.Image(new Uint8Array(await png.arrayBuffer())).toPixmap().getWidth()).toBe(720);
  });

  test('errors: no books under the source, bad weeks or date; scope; another tenant sees nothing', async () => {
    expect(expectError(await h.json('POST', '/v1/forecast', { key, body: { source: { provider: 'demo', customer_reference: 'nobody' } } }), 404, 'resource_not_found').fields[0].path).toBe('source');
    // a provider that does not exist is the body's fault (422 naming the allowed ones), as on GET /v1/erp/{provider}/invoices
    const unknownProvider = expectError(await h.json('POST', '/v1/forecast', { key, body: { source: { provider: 'nope', customer_reference: 'books' } } }), 422, 'validation_failed');
    expect(unknownProvider.fields).toEqual([{ path: 'source.provider', message: expect.stringContaining('"saft"') }]);
    expectError(await h.json('POST', '/v1/forecast', { key, body: { ...body, weeks: 27 } }), 422, 'validation_failed');
    expectError(await h.json('POST', '/v1/forecast', { key, body: { ...body, as_of: '07/01/2026' } }), 422, 'validation_failed');
    // an as_of before the first bank movement: no balance to derive
    expect(expectError(await h.json('POST', '/v1/forecast', { key, body: { ...body, as_of: '2020-01-01' } }), 422, 'validation_failed').fields).toEqual([{ path: 'opening_balance_cents', message: expect.stringContaining('no bank movement on or before as_of 2020-01-01') }]);
    // a payable above €10 bn: 5 000 of them would add up past whole cents (2^53)
    expect(expectError(await h.json('POST', '/v1/forecast', { key, body: { ...body, payables: [{ due_date: '2026-12-01', amount_cents: 1e13 }] } }), 422, 'validation_failed').fields[0].path).toBe('payables.0.amount_cents');
    const narrow = await h.tenant({ scopes: ['score'] });
    expectError(await h.json('POST', '/v1/forecast', { key: narrow.api_key, body }), 403, 'insufficient_scope');
    const other = await h.tenant();
    expectError(await h.json('POST', '/v1/forecast', { key: other.api_key, body }), 404, 'resource_not_found');
  });
});

/** well-formedness of the SVG: every tag closed, in order */
class DOMParserLike {
  ok: boolean;
  constructor(xml: string) {
    const stack: string[] = [];
    let ok = true;
    for (const m of xml.matchAll(/<(\/?)([a-zA-Z][\w:-]*)[^>]*?(\/?)>/g)) {
      if (m[3]) continue;
      if (m[1]) ok &&= stack.pop() === m[2];
      else stack.push(m[2]!);
    }
    this.ok = ok && stack.length === 0;
  }
}
