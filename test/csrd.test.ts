import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { eq } from 'drizzle-orm';
import { Value } from '@sinclair/typebox/value';
import * as mupdf from 'mupdf';
import { CsrdReport } from '../src/features/csrd/model';
import { BASIC_MODULE, COMPREHENSIVE_DATAPOINTS, formatNumber, indicatorRows, mapDisclosures, sdgLinks, SDG_TARGETS } from '../src/features/csrd/mapping';
import { renderReportPdf } from '../src/features/csrd/pdf';
import { acceptsJsonOr, preferredDocument, wantsPdf } from '../src/lib/accept';
import { ESG_EXAMPLES } from '../src/features/esg/examples';
import { INDICATORS } from '../src/features/esg/questionnaire';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectError, makeApp, ROOT, spawnServer, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

let h: TestApp;
let key: string;
let tenantId: string;
beforeAll(async () => {
  h = await makeApp({}, { workers: false });
  const t = await h.tenant();
  key = t.api_key;
  tenantId = t.tenant_id;
});
afterAll(() => h.close());

const COMPANY = { name: 'Metalúrgica Exemplo, Lda.', address: 'Rua da Indústria 12, 3800-055 Aveiro', legal_form: 'Sociedade por quotas', country: 'PT', turnover_eur: 2130000, employees: 60 };
const assess = async (body: unknown, k = key) => {
  const r = await h.json('POST', '/v1/esg', { key: k, body });
  expect(r.status).toBe(200);
  return r.body.assessment_id as string;
};
const report = (body: unknown, o: { key?: string; headers?: Record<string, string> } = {}) => h.json('POST', '/v1/csrd/report', { key: o.key ?? key, body, headers: o.headers });
const pdfCall = async (method: string, path: string, o: { key?: string; body?: unknown; headers?: Record<string, string> } = {}) => {
  const res = await h.call(method, path, { key: o.key ?? key, body: o.body, headers: { accept: 'application/pdf', ...o.headers } });
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
};
const sha256 = (b: Uint8Array) => new Bun.CryptoHasher('sha256').update(b).digest('hex');
const allDatapoints = (r: any) => [...r.disclosures, ...r.comprehensive_disclosures].flatMap((d: any) => d.datapoints);

/** Every page's text, and the text with all whitespace removed (wrapping cannot then split a value). */
function pdfText(bytes: Uint8Array) {
  const doc = mupdf.Document.openDocument(bytes, 'application/pdf');
  const pages: string[] = [];
  for (let i = 0; i < doc.countPages(); i++) pages.push(doc.loadPage(i).toStructuredText('preserve-whitespace').asText());
  const text = pages.join('\n');
  return { pages, text, squashed: text.replace(/\s+/g, '') };
}
const squash = (s: string) => s.replace(/\s+/g, '');

/** Each page rendered as a person sees it (RGB, white background). */
function renderPages(bytes: Uint8Array) {
  const doc = mupdf.Document.openDocument(bytes, 'application/pdf');
  const out: { width: number; height: number; pixels: Uint8ClampedArray; stride: number }[] = [];
  for (let i = 0; i < doc.countPages(); i++) {
    const pix = doc.loadPage(i).toPixmap(mupdf.Matrix.scale(1, 1), mupdf.ColorSpace.DeviceRGB, false, true);
    expect(pix.getNumberOfComponents()).toBe(3);
    // a copy: the view into WebAssembly memory does not survive the next allocations
    out.push({ width: pix.getWidth(), height: pix.getHeight(), pixels: new Uint8ClampedArray(pix.getPixels()), stride: pix.getStride() });
    pix.destroy();
  }
  return out;
}
const nonWhiteShare = (p: ReturnType<typeof renderPages>[number]) => {
  let n = 0;
  for (let y = 0; y < p.height; y++)
    for (let x = 0; x < p.width; x++) {
      const o = y * p.stride + x * 3;
      if (p.pixels[o]! < 235 || p.pixels[o + 1]! < 235 || p.pixels[o + 2]! < 235) n++;
    }
  return n / (p.width * p.height);
};
/** The longest horizontal run of pixels of one colour (±12 per channel): a bar's length. */
const longestRun = (p: ReturnType<typeof renderPages>[number], rgb: [number, number, number]) => {
  let best = 0;
  for (let y = 0; y < p.height; y++) {
    let run = 0;
    for (let x = 0; x < p.width; x++) {
      const o = y * p.stride + x * 3;
      const hit = Math.abs(p.pixels[o]! - rgb[0]) <= 12 && Math.abs(p.pixels[o + 1]! - rgb[1]) <= 12 && Math.abs(p.pixels[o + 2]! - rgb[2]) <= 12;
      run = hit ? run + 1 : 0;
      if (run > best) best = run;
    }
  }
  return best;
};

describe('POST /v1/csrd/report — JSON', () => {
  test('from the latest assessment of a NIF: B1–B11 with values, units, VSME references and statuses; pt-PT by default', async () => {
    const assessmentId = await assess(ESG_EXAMPLES.developing_manufacturer);
    const r = await report({ nif: '505201348', company: COMPANY });
    expect(r.status).toBe(201);
    expect(Value.Check(CsrdReport, r.body)).toBe(true);
    const b = r.body;
    expect(b.report_id).toMatch(/^rep_[0-9a-f-]{36}$/);
    expect(b.assessment_id).toBe(assessmentId);
    expect(b.nif).toBe('505201348');
    expect(b.language).toBe('pt-PT');
    expect(r.headers.get('content-language')).toBe('pt-PT');
    expect(r.headers.get('location')).toBe(`/v1/csrd/reports/${b.report_id}`);
    expect(b.pdf_url).toBe(`/v1/csrd/reports/${b.report_id}/pdf`);
    expect(b.sha256).toMatch(/^[0-9a-f]{64}$/);
    // the assessment's scores (docs/esg.md §8), the calendar year of the assessment
    expect(b.scores).toMatchObject({ overall: 54, environmental: 48, social: 68, governance: 47, tier: 'developing', vsme_alignment: 27, weights: { E: 0.5, S: 0.3, G: 0.2 }, algorithm_version: 'esg-1.1.0' });
    expect(b.reporting_period).toEqual({ start: '2026-01-01', end: '2026-12-31' });
    expect(b.disclosures.map((d: any) => d.code)).toEqual(['B1', 'B2', 'B3', 'B4', 'B5', 'B6', 'B7', 'B8', 'B9', 'B10', 'B11']);
    expect(b.comprehensive_disclosures.map((d: any) => d.code)).toEqual(['C3', 'C5', 'C6', 'C7', 'C8', 'C9']);
    for (const d of b.disclosures) for (const p of d.datapoints) expect(p.vsme_reference.startsWith(`${d.code} §`)).toBe(true);
    const dp = Object.fromEntries(allDatapoints(b).map((p: any) => [p.id, p]));
    // each answered indicator's value, as answered
    const answers = ESG_EXAMPLES.developing_manufacturer.answers as Record<string, unknown>;
    for (const p of allDatapoints(b).filter((x: any) => x.indicator && x.source === 'assessment')) {
      if (answers[p.indicator] === 'not_applicable') expect(p).toMatchObject({ status: 'not_applicable', value: null, display: 'Não aplicável' });
      else expect(p).toMatchObject({ status: 'reported', value: answers[p.indicator] });
    }
    expect(dp.b3_scope1).toMatchObject({ value: 310, unit: 'tCO2e', vsme_reference: 'B3 §30', status: 'reported', label: 'Emissões brutas de GEE de âmbito 1' });
    expect(dp.b4_pollutants).toMatchObject({ value: 1850, display: '1850', unit: 'kg' });
    expect(dp.b10_gender_pay_gap).toMatchObject({ status: 'not_applicable' });
    expect(dp.b10_minimum_wage).toMatchObject({ value: true, display: 'Sim' });
    expect(dp.b1_certifications).toMatchObject({ value: ['iso_9001'], display: 'ISO 9001', vsme_reference: 'B1 §25' });
    // B1 from the company details; totals derived from intensity × turnover
    expect(dp.b1_turnover).toMatchObject({ value: 2130000, display: '2 130 000', unit: 'EUR', source: 'company' });
    expect(dp.b1_balance_sheet).toMatchObject({ status: 'not_reported', value: null, display: 'Não reportado' });
    expect(dp.b3_energy_total).toMatchObject({ value: 1917, unit: 'MWh', source: 'derived', status: 'reported' });
    expect(dp.b6_water_withdrawal).toMatchObject({ value: 5538, unit: 'm³', source: 'derived' });
    expect(dp.b11_fines).toMatchObject({ status: 'not_reported' });
    // SDGs: the questionnaire's links, aligned as the assessment found
    expect(b.sdgs.filter((s: any) => s.aligned).map((s: any) => s.goal)).toEqual([1, 3, 8, 14, 15, 16]);
    expect(b.sdgs.find((s: any) => s.goal === 13)).toMatchObject({ title: 'Ação climática', aligned: false, pillars: ['E', 'G'] });
    expect(b.recommendations.map((x: any) => x.id).slice(0, 3)).toEqual(['rec-renewable-energy', 'rec-ghg-target', 'rec-energy-efficiency']);
    expect(b.recommendations[0].title).toBe('Passar para energia renovável');
    expect(b.indicators.length).toBe(27);
  });

  test('an assessment of an earlier algorithm: its stored recommendations, rendered in the report language (references) or as stored (texts)', async () => {
    const e = h.ctx.database.t.esgAssessments;
    const id = await assess(ESG_EXAMPLES.developing_manufacturer);
    const [row] = await h.ctx.database.db.select().from(e).where(eq(e.id, id));
    const stored = (row!.result as { recommendations: { id: string; priority: number }[] }).recommendations;
    // stored as references: the engine of that algorithm is not run again
    await h.ctx.database.withTx((tx) => tx.update(e).set({ algorithmVersion: 'esg-0.9.0', answers: {} }).where(eq(e.id, id)));
    const pt = await report({ assessment_id: id, language: 'pt-PT' });
    expect(pt.status).toBe(201);
    expect(pt.body.recommendations.map((r: any) => [r.id, r.priority])).toEqual(stored.map((r) => [r.id, r.priority]));
    expect(pt.body.recommendations[0].title).toBe('Passar para energia renovável');
    const en = await report({ assessment_id: id, language: 'en' });
    expect(en.body.recommendations[0].title).toBe('Switch to renewable energy');
    // stored with their texts (assessments written before references): reported as stored
    const texts = [{ id: 'rec-retired', pillar: 'E', priority: 1, title: 'A retired recommendation', body: 'Its text as stored.', effort: 'low', impact: 'high', timeline: '1-3 months', sdgs: [7] }];
    await h.ctx.database.withTx((tx) => tx.update(e).set({ result: { ...(row!.result as object), recommendations: texts } }).where(eq(e.id, id)));
    const old = await report({ assessment_id: id, language: 'pt-PT' });
    expect(old.status).toBe(201);
    expect(old.body.recommendations).toEqual(texts);
  });

  test('missing answers are "not_reported"; by assessment_id; English by language or Accept-Language', async () => {
    const id = await assess(ESG_EXAMPLES.lagging_services);
    const en = await report({ assessment_id: id, language: 'en' });
    expect(en.status).toBe(201);
    expect(en.body.language).toBe('en');
    expect(en.headers.get('content-language')).toBe('en');
    const dp = Object.fromEntries(allDatapoints(en.body).map((p: any) => [p.id, p]));
    expect(dp.b3_scope1).toMatchObject({ status: 'not_reported', value: null, display: 'Not reported', label: 'Gross Scope 1 GHG emissions' });
    expect(dp.b3_energy_total.status).toBe('not_reported'); // no turnover, no intensity
    expect(dp.b8_permanent_share).toMatchObject({ status: 'reported', value: 55 });
    expect(dp.c9_board_gender).toMatchObject({ status: 'not_applicable', display: 'Not applicable' });
    expect(dp.b1_certifications).toMatchObject({ status: 'reported', value: [], display: 'none' });
    expect(en.body.scores).toMatchObject({ overall: 13, tier: 'lagging' });
    expect(en.body.recommendations[0].title).toMatch(/^[A-Z]/);
    const byHeader = await report({ assessment_id: id }, { headers: { 'accept-language': 'en-GB,en;q=0.9' } });
    expect(byHeader.body.language).toBe('en');
    const unsupported = await report({ assessment_id: id }, { headers: { 'accept-language': 'fr-FR' } });
    expect(unsupported.body.language).toBe('pt-PT');
    const bodyWins = await report({ assessment_id: id, language: 'pt-PT' }, { headers: { 'accept-language': 'en' } });
    expect(bodyWins.body.language).toBe('pt-PT');
  });

  test('the latest assessment of the NIF is used; a given reporting period is kept', async () => {
    const t = await h.tenant();
    await assess({ ...ESG_EXAMPLES.lagging_services, nif: '505201348' }, t.api_key);
    h.clock.advance(86_400_000);
    const latest = await assess(ESG_EXAMPLES.developing_manufacturer, t.api_key);
    h.clock.advance(86_400_000);
    const r = await report({ nif: '505201348', reporting_period: { start: '2025-07-01', end: '2026-06-30' } }, { key: t.api_key });
    expect(r.status).toBe(201);
    expect(r.body.assessment_id).toBe(latest);
    expect(r.body.scores.overall).toBe(54);
    expect(r.body.reporting_period).toEqual({ start: '2025-07-01', end: '2026-06-30' });
  });

  test('stored once with its PDF and SHA-256, metered as csrd_report; GET returns the same report', async () => {
    const t = await h.tenant();
    await assess(ESG_EXAMPLES.leader, t.api_key);
    const r = await report({ nif: '512345678' }, { key: t.api_key });
    const rows = await h.ctx.database.db.select().from(h.ctx.database.t.csrdReports).where(eq(h.ctx.database.t.csrdReports.tenantId, t.tenant_id));
    expect(rows.length).toBe(1);
    expect(rows[0]).toMatchObject({ id: r.body.report_id, env: 'sandbox', nif: '512345678', language: 'pt-PT', sha256: r.body.sha256, assessmentId: r.body.assessment_id });
    expect(sha256(new Uint8Array(Buffer.from(rows[0]!.pdf, 'base64')))).toBe(r.body.sha256);
    const got = await h.json('GET', `/v1/csrd/reports/${r.body.report_id}`, { key: t.api_key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(r.body);
    await h.ctx.usage.flush();
    const u = h.ctx.database.t.usageRecords;
    const meters = (await h.ctx.database.db.select().from(u).where(eq(u.tenantId, t.tenant_id))).map((x) => x.meter).sort();
    expect(meters).toEqual(['csrd_report', 'esg']);
  });

  test('omissions read against the report\'s headcount: no turnover rate from 50 employees, the pay gap from 150 only with one gender', async () => {
    const a = await h.json('POST', '/v1/esg', { key, body: { nif: '509442013', sector: 'C25', answers: { employee_turnover_pct: 'not_applicable', gender_pay_gap_pct: 'not_applicable' } } });
    const dps = async (employees: number) => Object.fromEntries(allDatapoints((await report({ assessment_id: a.body.assessment_id, language: 'en', company: { employees } })).body).map((p: any) => [p.id, p]));
    // the alignment counts what the report discloses: a refused omission is not disclosed
    const alignment = async (employees: number) => (await report({ assessment_id: a.body.assessment_id, language: 'en', company: { employees } })).body.scores.vsme_alignment;
    expect(await alignment(40)).toBe(a.body.vsme_alignment);
    expect(await alignment(500)).toBe(a.body.vsme_alignment - 1);
    const large = await dps(500);
    // the indicator table says what the datapoint says
    const rows = (await report({ assessment_id: a.body.assessment_id, language: 'en', company: { employees: 500 } })).body.indicators;
    expect(rows.find((r: any) => r.key === 'employee_turnover_pct')).toMatchObject({ status: 'not_reported', value: null, display: expect.stringContaining('only below 50 employees') });
    expect(large.b8_turnover_rate).toMatchObject({ status: 'not_reported', value: null, display: expect.stringContaining('only below 50 employees') });
    expect(large.b10_gender_pay_gap).toMatchObject({ status: 'not_applicable', display: expect.stringContaining('only when one gender is represented') });
    // a standing omission's caveat too, in both tables
    expect(rows.find((r: any) => r.key === 'gender_pay_gap_pct')).toMatchObject({ status: 'not_applicable', display: large.b10_gender_pay_gap.display });
    const smallRows = (await report({ assessment_id: a.body.assessment_id, language: 'en', company: { employees: 40 } })).body.indicators;
    expect(smallRows.find((r: any) => r.key === 'gender_pay_gap_pct')).toMatchObject({ status: 'not_applicable', display: 'Not applicable' });
    const small = await dps(40);
    expect(small.b8_turnover_rate).toMatchObject({ status: 'not_applicable', display: 'Not applicable' });
    expect(small.b10_gender_pay_gap).toMatchObject({ status: 'not_applicable', display: 'Not applicable' });
  });
});

describe('the PDF', () => {
  let json: any;
  let bytes: Uint8Array;
  beforeAll(async () => {
    await assess(ESG_EXAMPLES.developing_manufacturer);
    const r = await pdfCall('POST', '/v1/csrd/report', { body: { nif: '505201348', company: COMPANY } });
    expect(r.res.status).toBe(201);
    expect(r.res.headers.get('content-type')).toBe('application/pdf');
    bytes = r.bytes;
    const id = r.res.headers.get('x-report-id')!;
    expect(r.res.headers.get('location')).toBe(`/v1/csrd/reports/${id}`);
    json = (await h.json('GET', `/v1/csrd/reports/${id}`, { key })).body;
  });

  test('is a PDF whose SHA-256 is the JSON sha256; GET /pdf and GET with Accept give the same bytes', async () => {
    expect(new TextDecoder().decode(bytes.slice(0, 5))).toBe('%PDF-');
    expect(sha256(bytes)).toBe(json.sha256);
    const again = await pdfCall('GET', json.pdf_url, { headers: { accept: '*/*' } });
    expect(again.res.status).toBe(200);
    expect(again.res.headers.get('content-type')).toBe('application/pdf');
    expect(again.res.headers.get('etag')).toBe(`"${json.sha256}"`);
    expect(again.res.headers.get('repr-digest')).toBe(`sha-256=:${Buffer.from(json.sha256, 'hex').toString('base64')}:`);
    expect(sha256(again.bytes)).toBe(json.sha256);
    // a cache holding it revalidates without the bytes; another ETag gets them
    const cached = await h.call('GET', json.pdf_url, { key, headers: { 'if-none-match': `W/"x", "${json.sha256}"` } });
    expect([cached.status, cached.headers.get('etag'), (await cached.arrayBuffer()).byteLength]).toEqual([304, `"${json.sha256}"`, 0]);
    expect((await h.call('GET', json.pdf_url, { key, headers: { 'if-none-match': '"other"' } })).status).toBe(200);
    const negotiated = await pdfCall('GET', `/v1/csrd/reports/${json.report_id}`);
    expect(negotiated.res.headers.get('content-type')).toBe('application/pdf');
    expect(sha256(negotiated.bytes)).toBe(json.sha256);
  });

  test('no disclosure heading is left alone at the foot of a page: it stays with its table (several layouts, both languages)', async () => {
    const heading = /^[BC]\d+ – /;
    for (const language of ['pt-PT', 'en'])
      for (const company of [COMPANY, { ...COMPANY, employees: 500 }, { name: 'X' }, { ...COMPANY, address: 'Rua '.repeat(30) }]) {
        const r = await pdfCall('POST', '/v1/csrd/report', { body: { nif: '505201348', language, company } });
        expect(r.res.status).toBe(201);
        for (const page of pdfText(r.bytes).pages) {
          const lines = page.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('VSME ·') && !/^(Página|Page) \d+/.test(l));
          expect([language, lines.at(-1)]).not.toEqual([language, expect.stringMatching(heading)]);
        }
      }
  });

  test('a long company name is printed in full on the cover, wrapped (a word wider than the page broken); the footer keeps it short and the report id on every page; no text leaves the page', async () => {
    /** every text line's box on each page (mupdf's structured text, points) */
    const lineBoxes = (bytes: Uint8Array) => {
      const doc = mupdf.Document.openDocument(bytes, 'application/pdf');
      const out: { page: number; text: string; x: number; y: number; w: number; h: number }[] = [];
      for (let i = 0; i < doc.countPages(); i++) {
        const st = JSON.parse(doc.loadPage(i).toStructuredText('preserve-whitespace').asJSON()) as { blocks: { lines?: { text: string; bbox: { x: number; y: number; w: number; h: number } }[] }[] };
        for (const b of st.blocks) for (const l of b.lines ?? []) out.push({ page: i, text: l.text, ...l.bbox });
      }
      return out;
    };
    const long = 'Sociedade Agrícola e Comercial de Vinhos do Douro e Trás-os-Montes, Produção, Engarrafamento e Distribuição Internacional, S.A.';
    expect(long.length).toBe(127);
    const oneWord = 'W'.repeat(150); // the widest letter, as one word: broken over lines
    const longest = 'Sociedade '.repeat(20); // 200 characters, the schema's most
    for (const name of [long, oneWord, longest.trim()]) {
      const r = await pdfCall('POST', '/v1/csrd/report', { body: { nif: '505201348', company: { ...COMPANY, name } } });
      expect(r.res.status).toBe(201);
      const id = r.res.headers.get('x-report-id')!;
      const { pages } = pdfText(r.bytes);
      // the cover holds the full name (its lines joined), before the NIF row
      const cover = pages[0]!;
      expect(squash(cover.slice(0, cover.indexOf('NIF')))).toContain(squash(name));
      for (const page of pages) {
        expect(page).toContain(id);
        expect(page).toContain(`VSME · ${name.slice(0, 12)}`);
      }
      // as a person sees it: every line of text lies within the page
      const boxes = lineBoxes(r.bytes);
      expect(boxes.length).toBeGreaterThan(50);
      for (const b of boxes) {
        expect(b.x, `${b.text} (page ${b.page + 1})`).toBeGreaterThanOrEqual(0);
        expect(b.x + b.w, `${b.text} (page ${b.page + 1})`).toBeLessThanOrEqual(595.28);
        expect(b.y).toBeGreaterThanOrEqual(0);
        expect(b.y + b.h).toBeLessThanOrEqual(841.89);
      }
    }
  });

  test('its numbers are the JSON\'s: scores, tier, every reported datapoint and indicator; pt-PT accents survive', () => {
    const { text, squashed, pages } = pdfText(bytes);
    expect(pages.length).toBeGreaterThanOrEqual(4);
    // cover
    for (const s of ['Relatório de sustentabilidade', 'Metalúrgica Exemplo, Lda.', 'Rua da Indústria 12', 'NIF', '505201348', '2026-01-01 – 2026-12-31', json.report_id, json.created_at.slice(0, 10)])
      expect(text).toContain(s);
    expect(squashed).toContain('PontuaçãoESGglobal');
    expect(squashed).toContain(`${json.scores.overall}/100`);
    expect(text).toContain('Nível: Em desenvolvimento (40–59)');
    expect(text).toContain(`Ambiental ${json.scores.environmental} · Social ${json.scores.social} · Governação ${json.scores.governance}`);
    // a number's digit groups stay on one line ("200 000" read as two numbers when wrapped)
    expect(text).not.toMatch(/\b200\n000\b/);
    expect(text).toContain('200 000');
    // the bar chart's labels and values, one bar per line
    for (const [label, v] of [['Global', json.scores.overall], ['Ambiental', json.scores.environmental], ['Social', json.scores.social], ['Governação', json.scores.governance]])
      expect(text).toMatch(new RegExp(`^${label}\\n${v}$|^${label} ${v}$`, 'm'));
    expect(squashed).toContain(`AlinhamentoVSME:indicadoresdivulgados:${json.scores.vsme_alignment}de27`);
    // every datapoint's printed value and label, and each disclosure title
    for (const d of [...json.disclosures, ...json.comprehensive_disclosures]) {
      expect(squashed).toContain(squash(`${d.code} – ${d.title}`));
      for (const p of d.datapoints) {
        expect(squashed).toContain(squash(p.label));
        expect(squashed).toContain(squash(p.display));
      }
    }
    for (const i of json.indicators) expect(squashed).toContain(squash(i.display));
    for (const v of ['2 130 000', '1917', '5538', '1850', '310', '190', '2600']) expect(text).toContain(v);
    // SDGs and recommendations
    for (const s of json.sdgs) expect(squashed).toContain(squash(`ODS ${s.goal} – ${s.title}`));
    for (const r of json.recommendations) expect(squashed).toContain(squash(`${r.priority}. ${r.title}`));
    for (const s of ['Ação climática', 'Emissões brutas de GEE de âmbito 1', 'Não reportado', 'Não aplicável', 'Condenações', 'Governação', 'Força de trabalho – saúde e segurança', 'Água'])
      expect(text).toContain(s);
  });

  test('every page renders with visible content; the chart draws each pillar bar in proportion to its score', () => {
    const pages = renderPages(bytes);
    for (const p of pages) expect(nonWhiteShare(p)).toBeGreaterThan(0.01);
    // page 2 holds the chart: the bar colours (pdf.ts PILLAR_COLOURS) and their lengths
    const chart = pages[1]!;
    const runs = {
      overall: longestRun(chart, [51, 61, 74]),
      E: longestRun(chart, [41, 140, 84]),
      S: longestRun(chart, [41, 107, 184]),
      G: longestRun(chart, [140, 84, 163]),
    };
    const scores = { overall: json.scores.overall, E: json.scores.environmental, S: json.scores.social, G: json.scores.governance };
    for (const k of ['E', 'S', 'G'] as const) {
      expect(runs[k]).toBeGreaterThan(50);
      expect(runs[k] / runs.overall).toBeCloseTo(scores[k] / scores.overall, 1);
    }
  });

  test('English PDF; text outside WinAnsi does not break it', async () => {
    const id = json.assessment_id;
    const r = await pdfCall('POST', '/v1/csrd/report', { body: { assessment_id: id, language: 'en', company: { name: 'Ştefan & Søn ≥ 你好 → Lda.' } } });
    expect(r.res.status).toBe(201);
    expect(r.res.headers.get('content-language')).toBe('en');
    const { text, squashed } = pdfText(r.bytes);
    for (const s of ['Sustainability report', 'Overall ESG score', 'Climate action', 'Gross Scope 1 GHG emissions', 'Not applicable', 'Recommendations'])
      expect(text).toContain(s);
    expect(text).toMatch(/^SDG 13 – Climate action/m); // one goal: "SDG", not "SDGs"
    expect(text).not.toMatch(/SDGs \d+ –/);
    expect(squashed).toContain('Stefan&Søn>=??->Lda.');
    for (const p of renderPages(r.bytes)) expect(nonWhiteShare(p)).toBeGreaterThan(0.01);
  });

  test('the renderer is deterministic for a report (same JSON → same bytes)', async () => {
    const again = await renderReportPdf({ ...json, sha256: '' });
    expect(sha256(again)).toBe(json.sha256);
  });
});

describe('POST /v1/csrd/report — errors', () => {
  test('unknown assessment → 404 resource_not_found; a NIF without an assessment → 404 naming the NIF', async () => {
    const a = expectError(await report({ assessment_id: crypto.randomUUID() }), 404, 'resource_not_found');
    expect(a.message).toContain('No ESG assessment');
    const b = expectError(await report({ nif: '599000015' }), 404, 'resource_not_found');
    expect(b.message).toContain('599000015');
    expect(b.message).toContain('POST /v1/esg');
    // not an assessment id at all: the request's problem (422), not a missing resource
    expect(expectError(await report({ assessment_id: 'not-a-uuid' }), 422, 'validation_failed').fields).toEqual([{ path: 'assessment_id', message: 'must be a UUID' }]);
    // a NIF of 8 digits: the rule, not the field's description
    expect(expectError(await report({ nif: '50520134' }), 422, 'validation_failed').fields).toEqual([{ path: 'nif', message: 'must be exactly 9 digits (a Portuguese NIF/NIPC)' }]);
  });

  test('an assessment id in upper case is the same assessment; a country code in lower case is printed in upper case', async () => {
    const id = await assess(ESG_EXAMPLES.leader);
    const r = await report({ assessment_id: id.toUpperCase(), language: 'en', company: { country: 'pt' } });
    expect(r.status).toBe(201);
    expect(r.body.assessment_id).toBe(id);
    expect(allDatapoints(r.body).find((p: any) => p.id === 'b1_country')).toMatchObject({ value: 'PT', display: 'PT' });
  });

  test('both or neither of assessment_id and nif → 422 on both paths; bad language, dates, NIF', async () => {
    const both = expectError(await report({ assessment_id: 'x', nif: '505201348' }), 422, 'validation_failed');
    expect(both.fields.map((f: any) => f.path).sort()).toEqual(['assessment_id', 'nif']);
    const neither = expectError(await report({ language: 'en' }), 422, 'validation_failed');
    expect(neither.fields.map((f: any) => f.path).sort()).toEqual(['assessment_id', 'nif']);
    const lang = expectError(await report({ nif: '505201348', language: 'pt-BR' }), 422, 'validation_failed');
    expect(lang.fields).toEqual([{ path: 'language', message: 'must be one of: "pt-PT", "en"' }]); // worded as on every route
    const dates = expectError(await report({ nif: '505201348', reporting_period: { start: '2026-12-31', end: '2026-01-01' } }), 422, 'validation_failed');
    expect(dates.fields.map((f: any) => f.path)).toEqual(['reporting_period.end']);
    // a period that has not begun (by the service's clock), or of decades: typos printed as the report's period
    const future = expectError(await report({ nif: '505201348', reporting_period: { start: '2030-01-01', end: '2030-12-31' } }), 422, 'validation_failed');
    expect(future.fields).toEqual([{ path: 'reporting_period.start', message: `is after today (${h.clock.now().toISOString().slice(0, 10)}): a report covers a period that has begun` }]);
    const decades = expectError(await report({ nif: '505201348', reporting_period: { start: '1990-01-01', end: '2026-12-31' } }), 422, 'validation_failed');
    expect(decades.fields).toEqual([{ path: 'reporting_period.end', message: 'is more than 24 months after reporting_period.start (at most 1991-12-31): a report covers one financial year' }]);
    expect(expectError(await report({ nif: '505201348', reporting_period: { start: '2024-01-01', end: '2026-01-01' } }), 422, 'validation_failed').fields[0].path).toBe('reporting_period.end');
    const notADate = expectError(await report({ nif: '505201348', reporting_period: { start: '2026-02-30', end: '2026' } }), 422, 'validation_failed');
    expect(notADate.fields.map((f: any) => f.path).sort()).toEqual(['reporting_period.end', 'reporting_period.start']);
    const company = expectError(await report({ nif: '505201348', company: { country: 'Portugal', turnover_eur: -1 } }), 422, 'validation_failed');
    expect(company.fields.map((f: any) => f.path).sort()).toEqual(['company.country', 'company.turnover_eur']);
    expectError(await report({ nif: '505201349' }), 422, 'invalid_nif');
    expect(expectError(await report({ nif: '12345' }), 422, 'validation_failed').fields.map((f: any) => f.path)).toEqual(['nif']);
    expect(expectError(await report([1]), 422, 'validation_failed').fields).toEqual([{ path: '(body)', message: 'must be a JSON object' }]);
  });

  test('fields the request does not have are refused at any depth (422, "is not a field of this request"); /openapi.json says additionalProperties: false', async () => {
    const id = await assess(ESG_EXAMPLES.developing_manufacturer);
    const b = expectError(await report({ assessment_id: id, company: { vat: 'x', turnover: 2130000 }, reporting_period: { start: '2026-01-01', end: '2026-12-31', year: 2026 }, lang: 'en' }), 422, 'validation_failed');
    expect(b.fields).toEqual(expect.arrayContaining([
      { path: 'company.vat', message: 'is not a field of this request' },
      { path: 'company.turnover', message: 'is not a field of this request' },
      { path: 'reporting_period.year', message: 'is not a field of this request' },
      { path: 'lang', message: 'is not a field of this request' },
    ]));
    expect(b.fields).toHaveLength(4);
    // beside a real problem, too
    const both = expectError(await report({ assessment_id: id, company: { vat: 'x', employees: -1 } }), 422, 'validation_failed');
    expect(both.fields).toContainEqual({ path: 'company.vat', message: 'is not a field of this request' });
    expect(both.fields.some((f: any) => f.path === 'company.employees')).toBe(true);
    const doc = (await h.json('GET', '/openapi.json')).body;
    const schema = doc.paths['/v1/csrd/report'].post.requestBody.content['application/json'].schema;
    const resolve = (x: any) => (x.$ref ? doc.components.schemas[x.$ref.split('/').pop()] : x);
    const body = resolve(schema);
    expect(body.additionalProperties).toBe(false);
    expect(resolve(body.properties.company).additionalProperties).toBe(false);
    expect(resolve(body.properties.reporting_period).additionalProperties).toBe(false);
  });

  test('an Accept naming neither JSON nor the PDF (nor */*) is 406 not_acceptable, and no report is made', async () => {
    const id = await assess(ESG_EXAMPLES.developing_manufacturer);
    for (const accept of ['text/html', 'text/html, image/png', 'application/json;q=0, text/html']) {
      const r = await report({ assessment_id: id }, { headers: { accept } });
      const b = expectError(r, 406, 'not_acceptable');
      expect(b.message).toContain('application/json');
    }
    for (const accept of ['text/html, */*;q=0.1', 'application/json', 'application/*', '*/*']) expect((await report({ assessment_id: id }, { headers: { accept } })).status).toBe(201);
    // a stored report, read back with such an Accept: the same 406
    const made = await report({ assessment_id: id });
    const read = await h.json('GET', `/v1/csrd/reports/${made.body.report_id}`, { key, headers: { accept: 'text/html' } });
    expectError(read, 406, 'not_acceptable');
    expect(read.headers.get('vary')).toBe('Accept');
    expect((await h.json('GET', `/v1/csrd/reports/${made.body.report_id}`, { key, headers: { accept: 'text/html, application/json' } })).status).toBe(200);
    expect(acceptsJsonOr(undefined, ['application/pdf'])).toBe(true);
    expect(acceptsJsonOr('application/pdf', ['application/pdf'])).toBe(true);
    expect(acceptsJsonOr('text/html', ['application/pdf'])).toBe(false);
    expect(acceptsJsonOr('image/*', ['image/png'])).toBe(true);
    expect(acceptsJsonOr('image/*', ['application/pdf'])).toBe(false);
    expect(acceptsJsonOr('application/pdf;q=0, text/html', ['application/pdf'])).toBe(false);
  });

  test('GET an unknown report → 404', async () => {
    expectError(await h.json('GET', '/v1/csrd/reports/rep_00000000-0000-0000-0000-000000000000', { key }), 404, 'resource_not_found');
    expectError(await h.json('GET', '/v1/csrd/reports/rep_00000000-0000-0000-0000-000000000000/pdf', { key }), 404, 'resource_not_found');
  });

  test('scope esg needed; no key → 401', async () => {
    const noScope = await h.tenant({ scopes: ['score'] });
    expectError(await report({ nif: '505201348' }, { key: noScope.api_key }), 403, 'insufficient_scope');
    expectError(await h.json('GET', '/v1/csrd/reports/rep_x', { key: noScope.api_key }), 403, 'insufficient_scope');
    expectError(await h.json('POST', '/v1/csrd/report', { body: { nif: '505201348' } }), 401, 'missing_api_key');
  });
});

describe('isolation and idempotency', () => {
  test('another tenant, or the live environment of the same tenant, sees neither the assessment nor the report', async () => {
    const id = await assess(ESG_EXAMPLES.leader);
    const r = await report({ assessment_id: id });
    const other = await h.tenant();
    expectError(await report({ assessment_id: id }, { key: other.api_key }), 404, 'resource_not_found');
    expectError(await report({ nif: '512345678' }, { key: other.api_key }), 404, 'resource_not_found');
    expectError(await h.json('GET', `/v1/csrd/reports/${r.body.report_id}`, { key: other.api_key }), 404, 'resource_not_found');
    expectError(await h.json('GET', `/v1/csrd/reports/${r.body.report_id}/pdf`, { key: other.api_key }), 404, 'resource_not_found');
    const live = await h.ctx.tenants.createKey({ tenantId, env: 'live' });
    expectError(await report({ assessment_id: id }, { key: live.api_key }), 404, 'resource_not_found');
    expectError(await h.json('GET', `/v1/csrd/reports/${r.body.report_id}`, { key: live.api_key }), 404, 'resource_not_found');
    // a live assessment gives a live (not synthetic) report
    const liveId = await assess(ESG_EXAMPLES.leader, live.api_key);
    const lr = await report({ assessment_id: liveId }, { key: live.api_key });
    expect(lr.status).toBe(201);
    expect(lr.body.synthetic).toBe(false);
  });

  test('Idempotency-Key: a replay is the same report, in the format the replay asks for', async () => {
    const t = await h.tenant();
    await assess(ESG_EXAMPLES.leader, t.api_key);
    const body = { nif: '512345678', language: 'en' };
    const first = await h.json('POST', '/v1/csrd/report', { key: t.api_key, body, headers: { 'idempotency-key': 'rep-1' } });
    expect(first.status).toBe(201);
    const again = await h.json('POST', '/v1/csrd/report', { key: t.api_key, body, headers: { 'idempotency-key': 'rep-1' } });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.report_id).toBe(first.body.report_id);
    const asPdf = await pdfCall('POST', '/v1/csrd/report', { key: t.api_key, body, headers: { 'idempotency-key': 'rep-1' } });
    expect(asPdf.res.status).toBe(201);
    expect(asPdf.res.headers.get('content-type')).toBe('application/pdf');
    expect(asPdf.res.headers.get('idempotent-replayed')).toBe('true');
    expect(sha256(asPdf.bytes)).toBe(first.body.sha256);
    // a PDF first: the JSON report is what is kept for replays
    const pdfFirst = await pdfCall('POST', '/v1/csrd/report', { key: t.api_key, body, headers: { 'idempotency-key': 'rep-2' } });
    const replay = await h.json('POST', '/v1/csrd/report', { key: t.api_key, body, headers: { 'idempotency-key': 'rep-2' } });
    expect(replay.status).toBe(201);
    expect(replay.body.report_id).toBe(pdfFirst.res.headers.get('x-report-id'));
    expect(replay.body.sha256).toBe(sha256(pdfFirst.bytes));
    const rows = await h.ctx.database.db.select().from(h.ctx.database.t.csrdReports).where(eq(h.ctx.database.t.csrdReports.tenantId, t.tenant_id));
    expect(rows.length).toBe(2);
  });
});

describe('mapping (pure)', () => {
  test('every questionnaire indicator maps to exactly one datapoint, under its own VSME disclosure', () => {
    const all = [...BASIC_MODULE, ...COMPREHENSIVE_DATAPOINTS].flatMap((d) => d.datapoints.map((p) => ({ code: d.code, p })));
    for (const i of INDICATORS) {
      const hits = all.filter((x) => 'indicator' in x.p.from && x.p.from.indicator === i.key);
      expect(hits.length, i.key).toBe(1);
      expect(hits[0]!.code, i.key).toBe(i.vsme_ref);
    }
    const ids = all.map((x) => x.p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('an empty questionnaire: every indicator datapoint not reported, no SDG', () => {
    const m = mapDisclosures({ sector: 'F', answers: {}, company: {}, language: 'en' });
    for (const p of [...m.disclosures, ...m.comprehensive_disclosures].flatMap((d) => d.datapoints)) if (p.indicator) expect(p.status).toBe('not_reported');
    expect(sdgLinks({}, [], 'en')).toEqual([]);
    expect(indicatorRows({}, 'pt-PT').every((r) => r.display === 'Não reportado')).toBe(true);
  });

  test('SDG targets belong to their indicator\'s goals; numbers are formatted per language', () => {
    for (const i of INDICATORS) for (const target of SDG_TARGETS[i.key] ?? []) expect(i.sdgs, `${i.key} ${target}`).toContain(Number(target.split('.')[0]));
    expect(formatNumber(12345.6, 'pt-PT')).toBe('12 345,6');
    expect(formatNumber(1850, 'pt-PT')).toBe('1850');
    expect(formatNumber(12345.6, 'en')).toBe('12,345.6');
    // a value below a millionth is not printed as 0
    expect(formatNumber(1e-7, 'en')).toBe('0.0000001');
    expect(formatNumber(1.234e-7, 'pt-PT')).toBe('0,000000123');
    expect(formatNumber(0.000001, 'en')).toBe('0.000001');
  });

  test('Accept negotiation', () => {
    expect(wantsPdf(undefined)).toBe(false);
    expect(wantsPdf('*/*')).toBe(false);
    expect(wantsPdf('application/json')).toBe(false);
    expect(wantsPdf('application/pdf')).toBe(true);
    expect(wantsPdf('application/pdf, */*;q=0.8')).toBe(true);
    expect(wantsPdf('application/json, application/pdf;q=0.5')).toBe(false);
    expect(wantsPdf('application/pdf;q=0')).toBe(false);
    // the forecast's charts: q=0 refuses one; */* alone picks none, image/* the first chart; the higher q wins
    expect(preferredDocument('image/svg+xml;q=0, application/json', ['image/svg+xml', 'image/png'])).toBeNull();
    expect(preferredDocument('*/*', ['image/svg+xml', 'image/png'])).toBeNull();
    expect(preferredDocument('image/*', ['image/svg+xml', 'image/png'])).toBe('image/svg+xml');
    expect(preferredDocument('image/svg+xml;q=0.5, image/png', ['image/svg+xml', 'image/png'])).toBe('image/png');
    expect(preferredDocument('image/svg+xml', ['image/svg+xml', 'image/png'])).toBe('image/svg+xml');
  });
});

describe('OpenAPI and catalog', () => {
  test('the operations are documented with their media types and examples; the catalog serves the path', async () => {
    const { body: doc } = await h.json('GET', '/openapi.json');
    const post = doc.paths['/v1/csrd/report'].post;
    expect(Object.keys(post.responses['201'].content).sort()).toEqual(['application/json', 'application/pdf']);
    expect(Object.keys(post.requestBody.content.examples ? {} : post.requestBody.content['application/json'].examples)).toEqual(['by_nif', 'by_assessment']);
    expect(post.responses['404']).toBeDefined();
    expect(post.responses['422'].description).toContain('invalid_nif');
    expect(post.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(['Idempotency-Key', 'Accept-Language']));
    expect(Object.keys(doc.paths['/v1/csrd/reports/{id}'].get.responses['200'].content).sort()).toEqual(['application/json', 'application/pdf']);
    expect(Object.keys(doc.paths['/v1/csrd/reports/{id}/pdf'].get.responses['200'].content)).toEqual(['application/pdf']);
    const catalog = await h.json('GET', '/v1/catalog', { key });
    const entry = JSON.stringify(catalog.body).includes('/v1/csrd/report');
    expect(entry).toBe(true);
    const res = await h.call('POST', '/v1/csrd/report', { key, body: {} });
    expect(res.status).toBe(422); // served, not the catalog's 404
  });
});

describe('README', () => {
  test('the VSME report section runs as printed against a started sandbox', async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## VSME sustainability report'), readme.indexOf('## Data-subject requests'));
    const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
    const dir = mkdtempSync(join(tmpdir(), 'csrd-readme-'));
    const server = await spawnServer({ DATA_DIR: dir, SEED_DEMO_TENANT: 'true', DATABASE_URL: '', REDIS_URL: '' });
    try {
      const key = /sk_test_[0-9a-f]{28}/.exec(server.output())![0];
      const p = Bun.spawn(['sh', '-c', `API=${server.base}\nKEY=${key}\nset -e\n${block}`], { cwd: dir, stdout: 'pipe', stderr: 'pipe' });
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      expect(code, err).toBe(0);
      expect(out).not.toContain('"requestId"');
      expect(out).toContain('"assessment_id"');
      expect(out).toContain('"b3_scope1"');
      expect(out.trim().endsWith('same')).toBe(true);
      const pdf = new Uint8Array(readFileSync(join(dir, 'report-en.pdf')));
      expect(pdfText(pdf).text).toContain('Sustainability report');
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('POST /v1/csrd/report — Accept, and Idempotency-Key replays asked with another Accept', () => {
  test('406 not_acceptable carries Vary: Accept (the answer depends on it), and no report is made', async () => {
    const t = await h.tenant();
    const id = await assess(ESG_EXAMPLES.leader, t.api_key);
    const refused = await report({ assessment_id: id }, { key: t.api_key, headers: { accept: 'text/html' } });
    expect(expectError(refused, 406, 'not_acceptable').fields).toBeUndefined();
    expect(refused.headers.get('vary')).toBe('Accept');
    expect(refused.headers.get('cache-control')).toBe('no-store');
    const rows = await h.ctx.database.db.select().from(h.ctx.database.t.csrdReports).where(eq(h.ctx.database.t.csrdReports.tenantId, t.tenant_id));
    expect(rows).toEqual([]);
  });

  test('a replay asked with an Accept the route cannot answer (text/html) is 406 like any request; with one it can, the stored 201 JSON in the first answer\u2019s headers', async () => {
    const t = await h.tenant();
    const id = await assess(ESG_EXAMPLES.leader, t.api_key);
    const body = { assessment_id: id };
    const first = await report(body, { key: t.api_key, headers: { 'idempotency-key': 'acc-1', 'accept-language': 'en' } });
    expect(first.status).toBe(201);
    expect(first.body.language).toBe('en');
    const refused = await report(body, { key: t.api_key, headers: { 'idempotency-key': 'acc-1', accept: 'text/html' } });
    expectError(refused, 406, 'not_acceptable');
    expect(refused.headers.get('vary')).toBe('Accept');
    expect(refused.headers.get('idempotent-replayed')).toBeNull();
    const replay = await report(body, { key: t.api_key, headers: { 'idempotency-key': 'acc-1', accept: 'text/html, application/json', 'accept-language': 'pt-PT' } });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('content-type')).toBe('application/json;charset=utf-8');
    // the first answer's own headers (its language, whatever the replay's Accept-Language) and body
    expect(replay.headers.get('vary')).toBe('Accept, Accept-Language');
    expect(replay.headers.get('content-language')).toBe('en');
    expect(replay.headers.get('location')).toBe(`/v1/csrd/reports/${first.body.report_id}`);
    expect(replay.body).toEqual(first.body);
    expect((await h.ctx.database.db.select().from(h.ctx.database.t.csrdReports).where(eq(h.ctx.database.t.csrdReports.tenantId, t.tenant_id))).length).toBe(1);
  });

  test('a 406 is not stored as the key\u2019s answer: a retry with an acceptable Accept and the same key makes the report', async () => {
    const t = await h.tenant();
    const id = await assess(ESG_EXAMPLES.leader, t.api_key);
    const body = { assessment_id: id };
    expectError(await report(body, { key: t.api_key, headers: { 'idempotency-key': 'acc-2', accept: 'text/html' } }), 406, 'not_acceptable');
    expect(await h.ctx.database.db.select().from(h.ctx.database.t.csrdReports).where(eq(h.ctx.database.t.csrdReports.tenantId, t.tenant_id))).toEqual([]);
    const made = await report(body, { key: t.api_key, headers: { 'idempotency-key': 'acc-2', accept: 'application/json' } });
    expect(made.status).toBe(201);
    expect(made.headers.get('idempotent-replayed')).toBeNull();
    const again = await report(body, { key: t.api_key, headers: { 'idempotency-key': 'acc-2', accept: 'application/json' } });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.report_id).toBe(made.body.report_id);
  });
});
