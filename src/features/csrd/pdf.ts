/**
 * The PDF of a VSME report, drawn with pdf-lib from the JSON report only (so every number printed
 * is one of the JSON's `display` strings or scores): cover, scores with the pillar bar chart and the
 * VSME alignment gauge, the indicator table, the SDG list, the B1–B11 disclosures, the
 * Comprehensive-module datapoints, the recommendations, and a note on method. Charts are pdf-lib
 * vector primitives (rectangles, lines, text): no chart library or browser is needed, and the
 * output is the same on every machine (docs/decisions.md).
 *
 * Fonts: the standard Helvetica pair, WinAnsi-encoded, which covers every Portuguese letter (á à â
 * ã ç é ê í ó ô õ ú and capitals), €, §, º/ª, ² and ³. Characters outside WinAnsi are replaced
 * (≥ → >=, → → ->, subscript digits → digits, anything else → ?), so no text can make the PDF fail.
 */
import { PDFDocument, StandardFonts, rgb, type PDFFont, type PDFPage, type RGB } from 'pdf-lib';
import type { CsrdReportBody } from './model';
import { TIER_RANGE, TIER_TEXT, formatNumber, statusText, tr, type ReportLanguage } from './mapping';

const A4: [number, number] = [595.28, 841.89];
const MARGIN = 48;
const BOTTOM = 56; // room for the footer
const WIDTH = A4[0] - 2 * MARGIN;

const INK = rgb(0.13, 0.15, 0.17);
const MUTED = rgb(0.38, 0.41, 0.45);
const RULE = rgb(0.82, 0.84, 0.86);
const HEADER_FILL = rgb(0.91, 0.93, 0.94);
const ZEBRA = rgb(0.97, 0.975, 0.98);
const BRAND = rgb(0.09, 0.36, 0.29);
const WHITE = rgb(1, 1, 1);
const PILLAR_COLOURS: Record<string, RGB> = { overall: rgb(0.2, 0.24, 0.29), E: rgb(0.16, 0.55, 0.33), S: rgb(0.16, 0.42, 0.72), G: rgb(0.55, 0.33, 0.64) };
/** tier bands behind the bars, lagging → leader */
const BANDS: [number, number, RGB][] = [
  [0, 20, rgb(0.99, 0.9, 0.88)],
  [20, 40, rgb(0.99, 0.94, 0.86)],
  [40, 60, rgb(0.99, 0.98, 0.86)],
  [60, 80, rgb(0.92, 0.97, 0.88)],
  [80, 100, rgb(0.86, 0.95, 0.88)],
];
/** the UN's SDG colours */
const SDG_COLOURS: Record<number, string> = {
  1: 'E5243B', 2: 'DDA63A', 3: '4C9F38', 4: 'C5192D', 5: 'FF3A21', 6: '26BDE2', 7: 'FCC30B', 8: 'A21942', 9: 'FD6925',
  10: 'DD1367', 11: 'FD9D24', 12: 'BF8B2E', 13: '3F7E44', 14: '0A97D9', 15: '56C02B', 16: '00689D', 17: '19486A',
};
const hex = (h: string) => rgb(parseInt(h.slice(0, 2), 16) / 255, parseInt(h.slice(2, 4), 16) / 255, parseInt(h.slice(4, 6), 16) / 255);

type T = { en: string; pt: string };
const L = {
  title: { en: 'Sustainability report', pt: 'Relatório de sustentabilidade' },
  subtitle: { en: 'VSME Basic module (B1–B11), EFRAG voluntary standard for SMEs', pt: 'Módulo Básico VSME (B1–B11), norma voluntária da EFRAG para PME' },
  company: { en: 'Company', pt: 'Empresa' },
  nif: { en: 'NIF (tax number)', pt: 'NIF' },
  address: { en: 'Address', pt: 'Morada' },
  legalForm: { en: 'Legal form', pt: 'Forma jurídica' },
  sector: { en: 'NACE sector', pt: 'Setor NACE' },
  period: { en: 'Reporting period', pt: 'Período de reporte' },
  date: { en: 'Report date', pt: 'Data do relatório' },
  reportId: { en: 'Report', pt: 'Relatório' },
  assessment: { en: 'ESG assessment', pt: 'Avaliação ESG' },
  notGiven: { en: 'not given', pt: 'sem indicação' },
  sandbox: { en: 'Sandbox report made with synthetic data: not for use.', pt: 'Relatório de sandbox com dados sintéticos: não utilizar.' },
  overallScore: { en: 'Overall ESG score', pt: 'Pontuação ESG global' },
  tier: { en: 'Tier', pt: 'Nível' },
  scores: { en: 'ESG scores', pt: 'Pontuações ESG' },
  scoresIntro: {
    en: 'Pillar scores from 0 to 100 as computed by the ESG assessment; the overall score weights the pillars for the sector. Background bands show the tiers.',
    pt: 'Pontuações por pilar de 0 a 100, calculadas pela avaliação ESG; a pontuação global pondera os pilares consoante o setor. As faixas de fundo indicam os níveis.',
  },
  overall: { en: 'Overall', pt: 'Global' },
  E: { en: 'Environmental', pt: 'Ambiental' },
  S: { en: 'Social', pt: 'Social' },
  G: { en: 'Governance', pt: 'Governação' },
  weights: { en: 'Pillar weights for this sector', pt: 'Ponderação dos pilares neste setor' },
  alignment: { en: 'VSME alignment: indicators disclosed', pt: 'Alinhamento VSME: indicadores divulgados' },
  of: { en: 'of', pt: 'de' },
  indicators: { en: 'Indicator table', pt: 'Tabela de indicadores' },
  pillar: { en: 'Pillar', pt: 'Pilar' },
  indicator: { en: 'Indicator', pt: 'Indicador' },
  value: { en: 'Value', pt: 'Valor' },
  unit: { en: 'Unit', pt: 'Unidade' },
  vsme: { en: 'VSME', pt: 'VSME' },
  sdgsShort: { en: 'SDGs', pt: 'ODS' },
  sdg: { en: 'SDG', pt: 'ODS' },
  sdgs: { en: 'Sustainable Development Goals', pt: 'Objetivos de Desenvolvimento Sustentável' },
  sdgIntro: {
    en: 'Goals linked to the reported indicators. "Aligned" means at least half of the goal\'s applicable performance indicators meet good practice.',
    pt: 'Objetivos ligados aos indicadores reportados. "Alinhado" significa que pelo menos metade dos indicadores de desempenho aplicáveis do objetivo cumprem as boas práticas.',
  },
  aligned: { en: 'Aligned', pt: 'Alinhado' },
  linked: { en: 'Linked, not aligned', pt: 'Ligado, não alinhado' },
  targets: { en: 'Targets', pt: 'Metas' },
  noSdgs: { en: 'No indicator reported yet.', pt: 'Ainda nenhum indicador reportado.' },
  disclosures: { en: 'VSME Basic module disclosures', pt: 'Divulgações do Módulo Básico VSME' },
  ref: { en: 'Ref.', pt: 'Ref.' },
  datapoint: { en: 'Datapoint', pt: 'Dado' },
  status: { en: 'Status', pt: 'Estado' },
  comprehensive: { en: 'Comprehensive-module datapoints (voluntary)', pt: 'Dados do Módulo Abrangente (voluntários)' },
  recommendations: { en: 'Recommendations', pt: 'Recomendações' },
  noRecommendations: { en: 'No recommendation: every indicator is disclosed and at good-practice level.', pt: 'Sem recomendações: todos os indicadores estão divulgados e ao nível das boas práticas.' },
  impact: { en: 'Impact', pt: 'Impacto' },
  effort: { en: 'Effort', pt: 'Esforço' },
  timeline: { en: 'Timeline', pt: 'Prazo' },
  levels: { en: 'low|medium|high', pt: 'baixo|médio|elevado' },
  method: { en: 'Method', pt: 'Metodologia' },
  methodText: {
    en: 'Values are the company\'s answers to the ESG questionnaire, mapped to the VSME Basic module datapoints; "Not reported" marks a datapoint without an answer, "Not applicable" one the company declared not applicable under VSME. Totals marked as derived are intensity × turnover ÷ 1,000,000 (intensities are per million euros of turnover). Scores: ESG assessment algorithm {algo}, assessed on {assessed}. SHA-256 of this file: see the JSON report.',
    pt: 'Os valores são as respostas da empresa ao questionário ESG, mapeadas para os dados do Módulo Básico VSME; "Não reportado" assinala um dado sem resposta e "Não aplicável" um dado que a empresa declarou não aplicável nos termos da VSME. Os totais derivados são intensidade × volume de negócios ÷ 1 000 000 (as intensidades são por milhão de euros de volume de negócios). Pontuações: algoritmo de avaliação ESG {algo}, avaliado em {assessed}. SHA-256 deste ficheiro: ver o relatório JSON.',
  },
  derived: { en: 'derived', pt: 'derivado' },
  page: { en: 'Page {i} of {n}', pt: 'Página {i} de {n}' },
} satisfies Record<string, T>;

const REPLACEMENTS: Record<string, string> = { '≥': '>=', '≤': '<=', '→': '->', '←': '<-', '×': 'x', '₀': '0', '₁': '1', '₂': '2', '₃': '3', '\u00a0': ' ', '\u202f': ' ', '\u2009': ' ', '‑': '-', '−': '-' };

interface Fonts {
  regular: PDFFont;
  bold: PDFFont;
  charset: Set<number>;
}

/** Text the standard fonts can encode (WinAnsi). */
function safe(text: string, fonts: Fonts): string {
  let out = '';
  for (const ch of text) {
    if (fonts.charset.has(ch.codePointAt(0)!) || ch === '\n') out += ch;
    else {
      // a letter with a mark WinAnsi lacks (e.g. ă, ş) keeps its base letter
      const base = ch.normalize('NFD')[0];
      out += REPLACEMENTS[ch] ?? (base && base !== ch && fonts.charset.has(base.codePointAt(0)!) ? base : '?');
    }
  }
  return out;
}

/**
 * The words of a line, a number's digit groups kept as one ("200 000", pt-PT's grouping by spaces):
 * a break between them read as two numbers.
 */
function wordsOf(para: string): string[] {
  const words: string[] = [];
  for (const word of para.split(/ +/)) {
    if (words.length && /\d$/.test(words.at(-1)!) && /^\d{3}(?!\d)/.test(word)) words[words.length - 1] += ` ${word}`;
    else words.push(word);
  }
  return words;
}

/** Greedy word wrap; words longer than the width are cut. */
function wrap(text: string, font: PDFFont, size: number, width: number): string[] {
  const lines: string[] = [];
  for (const para of text.split('\n')) {
    let line = '';
    for (const word of wordsOf(para)) {
      let w = word;
      const candidate = line ? `${line} ${w}` : w;
      if (font.widthOfTextAtSize(candidate, size) <= width) {
        line = candidate;
        continue;
      }
      if (line) lines.push(line);
      line = '';
      while (font.widthOfTextAtSize(w, size) > width && w.length > 1) {
        let cut = w.length - 1;
        while (cut > 1 && font.widthOfTextAtSize(w.slice(0, cut), size) > width) cut--;
        lines.push(w.slice(0, cut));
        w = w.slice(cut);
      }
      line = w;
    }
    lines.push(line);
  }
  return lines;
}

interface Column {
  title: string;
  width: number;
  align?: 'left' | 'right';
  bold?: boolean;
}

class Writer {
  readonly pages: PDFPage[] = [];
  page!: PDFPage;
  y = 0;
  constructor(
    private readonly doc: PDFDocument,
    readonly fonts: Fonts,
  ) {}

  newPage() {
    this.page = this.doc.addPage(A4);
    this.pages.push(this.page);
    this.y = A4[1] - MARGIN;
  }

  /** Makes room for `h` points, starting a page if needed. */
  ensure(h: number) {
    if (this.y - h < BOTTOM) this.newPage();
  }

  text(str: string, x: number, y: number, opts: { size?: number; font?: PDFFont; color?: RGB } = {}) {
    this.page.drawText(safe(str, this.fonts), { x, y, size: opts.size ?? 10, font: opts.font ?? this.fonts.regular, color: opts.color ?? INK });
  }

  heading(str: string, size = 15) {
    this.ensure(size + 24);
    this.y -= size + 4;
    this.text(str, MARGIN, this.y, { size, font: this.fonts.bold, color: BRAND });
    this.y -= 6;
    this.page.drawLine({ start: { x: MARGIN, y: this.y }, end: { x: MARGIN + WIDTH, y: this.y }, thickness: 0.8, color: BRAND });
    this.y -= 10;
  }

  /** `keepWith`: the height of what must follow on the same page (a table's header and first row) */
  subheading(str: string, size = 11.5, keepWith = 30) {
    const lines = wrap(safe(str, this.fonts), this.fonts.bold, size, WIDTH);
    this.ensure(lines.length * (size + 3) + 5 + keepWith);
    for (const line of lines) {
      this.y -= size + 3;
      this.text(line, MARGIN, this.y, { size, font: this.fonts.bold });
    }
    this.y -= 5;
  }

  paragraph(str: string, opts: { size?: number; font?: PDFFont; color?: RGB; indent?: number; gap?: number } = {}) {
    const size = opts.size ?? 9.5;
    const indent = opts.indent ?? 0;
    const font = opts.font ?? this.fonts.regular;
    for (const line of wrap(safe(str, this.fonts), font, size, WIDTH - indent)) {
      this.ensure(size + 3);
      this.y -= size + 3;
      this.text(line, MARGIN + indent, this.y, { size, font, color: opts.color });
    }
    this.y -= opts.gap ?? 6;
  }

  /** The height of a table's header and first row: what a heading above it needs beside it on its page. */
  tableStart(columns: Column[], rows: string[][], size = 8.5): number {
    const { lh, pad, widths } = this.tableMetrics(columns, size);
    const height = (cells: string[], bold: (i: number) => boolean) => Math.max(...cells.map((c, i) => wrap(safe(c, this.fonts), bold(i) ? this.fonts.bold : this.fonts.regular, size, widths[i]! - 2 * pad).length)) * lh + 2 * pad;
    return height(columns.map((c) => c.title), () => true) + (rows[0] ? height(rows[0], (i) => !!columns[i]!.bold) : 0);
  }

  private tableMetrics(columns: Column[], size: number) {
    const total = columns.reduce((a, c) => a + c.width, 0);
    return { lh: size + 2.5, pad: 3.5, widths: columns.map((c) => (c.width / total) * WIDTH) };
  }

  /** A table with a shaded header (repeated after a page break), wrapped cells and zebra rows. */
  table(columns: Column[], rows: string[][], opts: { size?: number; rowFill?: (i: number) => RGB | undefined } = {}) {
    const size = opts.size ?? 8.5;
    const { lh, pad, widths } = this.tableMetrics(columns, size);
    const header = () => {
      const lines = columns.map((c, i) => wrap(safe(c.title, this.fonts), this.fonts.bold, size, widths[i]! - 2 * pad));
      const h = Math.max(...lines.map((l) => l.length)) * lh + 2 * pad;
      this.page.drawRectangle({ x: MARGIN, y: this.y - h, width: WIDTH, height: h, color: HEADER_FILL });
      let x = MARGIN;
      lines.forEach((ls, i) => {
        ls.forEach((line, j) => this.text(line, x + pad, this.y - pad - (j + 1) * lh + 2.5, { size, font: this.fonts.bold }));
        x += widths[i]!;
      });
      this.y -= h;
    };
    this.ensure(Math.max(lh * 3 + 4 * pad, this.tableStart(columns, rows, size)));
    header();
    rows.forEach((row, r) => {
      const lines = row.map((cell, i) => wrap(safe(cell, this.fonts), columns[i]!.bold ? this.fonts.bold : this.fonts.regular, size, widths[i]! - 2 * pad));
      const h = Math.max(...lines.map((l) => l.length)) * lh + 2 * pad;
      if (this.y - h < BOTTOM) {
        this.newPage();
        header();
      }
      const fill = opts.rowFill?.(r) ?? (r % 2 ? ZEBRA : undefined);
      if (fill) this.page.drawRectangle({ x: MARGIN, y: this.y - h, width: WIDTH, height: h, color: fill });
      let x = MARGIN;
      lines.forEach((ls, i) => {
        const col = columns[i]!;
        const font = col.bold ? this.fonts.bold : this.fonts.regular;
        ls.forEach((line, j) => {
          const tx = col.align === 'right' ? x + widths[i]! - pad - font.widthOfTextAtSize(line, size) : x + pad;
          this.text(line, tx, this.y - pad - (j + 1) * lh + 2.5, { size, font });
        });
        x += widths[i]!;
      });
      this.y -= h;
      this.page.drawLine({ start: { x: MARGIN, y: this.y }, end: { x: MARGIN + WIDTH, y: this.y }, thickness: 0.4, color: RULE });
    });
    this.y -= 12;
  }
}

const fill = (template: string, values: Record<string, string>) => template.replace(/\{(\w+)\}/g, (_, k: string) => values[k] ?? '');

/** Horizontal bars per pillar (and overall) on a 0–100 axis over the tier bands. */
function pillarChart(w: Writer, report: CsrdReportBody, lang: ReportLanguage) {
  const s = report.scores;
  const bars: [string, number, RGB][] = [
    [tr(L.overall, lang), s.overall, PILLAR_COLOURS.overall!],
    [tr(L.E, lang), s.environmental, PILLAR_COLOURS.E!],
    [tr(L.S, lang), s.social, PILLAR_COLOURS.S!],
    [tr(L.G, lang), s.governance, PILLAR_COLOURS.G!],
  ];
  const labelW = 92;
  const valueW = 34;
  const x0 = MARGIN + labelW;
  const plotW = WIDTH - labelW - valueW;
  const barH = 18;
  const gap = 10;
  const top = 16; // tier names above the plot
  const plotH = bars.length * (barH + gap) + gap;
  const h = top + plotH + 18;
  w.ensure(h + 6);
  const yTop = w.y - top;
  const yBottom = yTop - plotH;
  const { page, fonts } = w;
  // tier bands with their names
  for (const [from, to, colour] of BANDS) {
    page.drawRectangle({ x: x0 + (from / 100) * plotW, y: yBottom, width: ((to - from) / 100) * plotW, height: plotH, color: colour });
  }
  const tiers = ['lagging', 'starter', 'developing', 'advancer', 'leader'];
  tiers.forEach((tier, i) => {
    const name = safe(tr(TIER_TEXT[tier]!, lang), fonts);
    const size = 7;
    const cx = x0 + ((i * 20 + 10) / 100) * plotW;
    w.text(name, cx - fonts.regular.widthOfTextAtSize(name, size) / 2, yTop + 4, { size, color: MUTED });
  });
  // grid and axis
  for (let v = 0; v <= 100; v += 20) {
    const x = x0 + (v / 100) * plotW;
    page.drawLine({ start: { x, y: yBottom }, end: { x, y: yTop }, thickness: v === 0 ? 0.9 : 0.4, color: v === 0 ? INK : RULE });
    const label = String(v);
    w.text(label, x - fonts.regular.widthOfTextAtSize(label, 7.5) / 2, yBottom - 11, { size: 7.5, color: MUTED });
  }
  bars.forEach(([label, value, colour], i) => {
    const y = yTop - gap - (i + 1) * barH - i * gap;
    w.text(label, MARGIN, y + 5, { size: 9.5, font: i === 0 ? fonts.bold : fonts.regular });
    const bw = Math.max(0, Math.min(100, value) / 100) * plotW;
    if (bw > 0) page.drawRectangle({ x: x0, y, width: bw, height: barH, color: colour });
    w.text(String(value), x0 + bw + 4, y + 5, { size: 10, font: fonts.bold });
  });
  w.y = yBottom - 22;
}

/** 27 squares, the first `n` filled: how many indicators the assessment disclosed. */
function alignmentGauge(w: Writer, n: number, lang: ReportLanguage) {
  w.ensure(40);
  w.y -= 12;
  w.text(`${tr(L.alignment, lang)}: ${n} ${tr(L.of, lang)} 27`, MARGIN, w.y, { size: 9.5, font: w.fonts.bold });
  w.y -= 18;
  const side = 12;
  for (let i = 0; i < 27; i++) {
    const x = MARGIN + i * (side + 3.5);
    if (i < n) w.page.drawRectangle({ x, y: w.y, width: side, height: side, color: BRAND });
    else w.page.drawRectangle({ x, y: w.y, width: side, height: side, borderColor: RULE, borderWidth: 1 });
  }
  w.y -= 16;
}

function sdgList(w: Writer, report: CsrdReportBody, lang: ReportLanguage) {
  w.heading(tr(L.sdgs, lang));
  w.paragraph(tr(L.sdgIntro, lang), { color: MUTED });
  if (!report.sdgs.length) {
    w.paragraph(tr(L.noSdgs, lang));
    return;
  }
  const labels = new Map(report.indicators.map((i) => [i.key, i.label]));
  for (const sdg of report.sdgs) {
    const side = 26;
    const detail = `${sdg.aligned ? tr(L.aligned, lang) : tr(L.linked, lang)} · ${sdg.pillars.join('/')}${sdg.targets.length ? ` · ${tr(L.targets, lang)} ${sdg.targets.join(', ')}` : ''}`;
    const inds = sdg.indicators.map((k) => labels.get(k) ?? k).join(', ');
    const textW = WIDTH - side - 10;
    const lines = wrap(safe(inds, w.fonts), w.fonts.regular, 8, textW);
    const h = Math.max(side, 12 + 11 + lines.length * 10) + 6;
    w.ensure(h);
    const top = w.y;
    const colour = hex(SDG_COLOURS[sdg.goal]!);
    w.page.drawRectangle({ x: MARGIN, y: top - side, width: side, height: side, color: colour });
    const num = String(sdg.goal);
    w.text(num, MARGIN + side / 2 - w.fonts.bold.widthOfTextAtSize(num, 12) / 2, top - side / 2 - 4, { size: 12, font: w.fonts.bold, color: WHITE });
    const tx = MARGIN + side + 10;
    w.text(`${tr(L.sdg, lang)} ${sdg.goal} – ${sdg.title}`, tx, top - 10, { size: 10, font: w.fonts.bold });
    if (sdg.aligned) w.page.drawCircle({ x: MARGIN + WIDTH - 5, y: top - 6.5, size: 4.5, color: PILLAR_COLOURS.E! });
    else w.page.drawCircle({ x: MARGIN + WIDTH - 5, y: top - 6.5, size: 4.5, borderColor: MUTED, borderWidth: 1 });
    w.text(detail, tx, top - 21, { size: 8, color: sdg.aligned ? PILLAR_COLOURS.E! : MUTED, font: w.fonts.bold });
    lines.forEach((line, i) => w.text(line, tx, top - 32 - i * 10, { size: 8, color: MUTED }));
    w.y = top - h;
  }
}

/** The company name on the cover, in full (any name the schema accepts): 20 pt over at most 2 lines, else 15 pt over as many as it takes (a word wider than the page is broken). */
function coverName(name: string, fonts: Fonts): { lines: string[]; size: number; lh: number } {
  const big = wrap(name, fonts.bold, 20, WIDTH);
  if (big.length <= 2) return { lines: big, size: 20, lh: 24 };
  return { lines: wrap(name, fonts.bold, 15, WIDTH), size: 15, lh: 18 };
}

function cover(w: Writer, report: CsrdReportBody, lang: ReportLanguage) {
  const { page, fonts } = w;
  const name = coverName(safe(report.company.name ?? `NIF ${report.nif}`, fonts), fonts);
  // the band grows with the name (its first line at 180 pt from the top, 30 pt below its last)
  const bandH = Math.max(230, 180 + (name.lines.length - 1) * name.lh + 30);
  page.drawRectangle({ x: 0, y: A4[1] - bandH, width: A4[0], height: bandH, color: BRAND });
  w.text('VSME', MARGIN, A4[1] - 70, { size: 13, font: fonts.bold, color: rgb(0.75, 0.9, 0.82) });
  w.text(tr(L.title, lang), MARGIN, A4[1] - 110, { size: 30, font: fonts.bold, color: WHITE });
  w.text(tr(L.subtitle, lang), MARGIN, A4[1] - 136, { size: 11, color: rgb(0.85, 0.95, 0.9) });
  name.lines.forEach((line, i) => w.text(line, MARGIN, A4[1] - 180 - i * name.lh, { size: name.size, font: fonts.bold, color: WHITE }));
  w.y = A4[1] - bandH - 30;
  const c = report.company;
  const none = tr(L.notGiven, lang);
  const rows: [string, string][] = [
    [tr(L.nif, lang), report.nif],
    [tr(L.address, lang), c.address ?? none],
    [tr(L.legalForm, lang), c.legal_form ?? none],
    [tr(L.sector, lang), report.sector],
    [tr(L.period, lang), `${report.reporting_period.start} – ${report.reporting_period.end}`],
    [tr(L.date, lang), report.created_at.slice(0, 10)],
    [tr(L.reportId, lang), report.report_id],
    [tr(L.assessment, lang), report.assessment_id],
  ];
  for (const [k, v] of rows) {
    const lines = wrap(safe(v, fonts), fonts.regular, 11, WIDTH - 150);
    w.text(k, MARGIN, w.y, { size: 10, color: MUTED });
    lines.forEach((line, i) => w.text(line, MARGIN + 150, w.y - i * 14, { size: 11 }));
    w.y -= 14 * lines.length + 8;
  }
  // score box
  w.y -= 16;
  const boxH = 84;
  page.drawRectangle({ x: MARGIN, y: w.y - boxH, width: WIDTH, height: boxH, color: HEADER_FILL });
  const overall = String(report.scores.overall);
  w.text(tr(L.overallScore, lang), MARGIN + 16, w.y - 24, { size: 11, color: MUTED });
  w.text(overall, MARGIN + 16, w.y - 66, { size: 36, font: fonts.bold, color: BRAND });
  w.text('/ 100', MARGIN + 20 + fonts.bold.widthOfTextAtSize(overall, 36), w.y - 66, { size: 14, color: MUTED });
  const tier = `${tr(L.tier, lang)}: ${tr(TIER_TEXT[report.scores.tier]!, lang)} (${TIER_RANGE[report.scores.tier]})`;
  w.text(tier, MARGIN + 200, w.y - 40, { size: 13, font: fonts.bold });
  const pillars = `${tr(L.E, lang)} ${report.scores.environmental} · ${tr(L.S, lang)} ${report.scores.social} · ${tr(L.G, lang)} ${report.scores.governance}`;
  w.text(pillars, MARGIN + 200, w.y - 60, { size: 10 });
  w.y -= boxH + 20;
  if (report.synthetic) w.paragraph(tr(L.sandbox, lang), { color: rgb(0.7, 0.2, 0.1), font: fonts.bold });
}

/** The report's PDF. Deterministic for a given report (creation date = created_at). */
export async function renderReportPdf(report: CsrdReportBody): Promise<Uint8Array> {
  const lang = report.language;
  const doc = await PDFDocument.create();
  const created = new Date(report.created_at);
  doc.setTitle(`${tr(L.title, lang)} – ${report.company.name ?? report.nif}`);
  doc.setSubject(`VSME ${report.reporting_period.start} – ${report.reporting_period.end}`);
  doc.setAuthor(report.company.name ?? `NIF ${report.nif}`);
  doc.setKeywords(['VSME', 'CSRD', 'ESG', report.nif, report.report_id]);
  doc.setProducer('pt-credit-esg-api (pdf-lib)');
  doc.setCreator('POST /v1/csrd/report');
  doc.setLanguage(lang);
  doc.setCreationDate(created);
  doc.setModificationDate(created);
  const regular = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const fonts: Fonts = { regular, bold, charset: new Set(regular.getCharacterSet()) };
  const w = new Writer(doc, fonts);

  // 1. cover
  w.newPage();
  cover(w, report, lang);

  // 2. scores, chart, indicator table, SDGs
  w.newPage();
  w.heading(tr(L.scores, lang));
  w.paragraph(tr(L.scoresIntro, lang), { color: MUTED });
  pillarChart(w, report, lang);
  const wt = report.scores.weights;
  const pct = (x: number) => `${formatNumber(Math.round(x * 100), lang)} %`;
  w.paragraph(`${tr(L.tier, lang)}: ${tr(TIER_TEXT[report.scores.tier]!, lang)} (${TIER_RANGE[report.scores.tier]}) · ${tr(L.weights, lang)}: E ${pct(wt.E)}, S ${pct(wt.S)}, G ${pct(wt.G)}`, { font: fonts.bold });
  alignmentGauge(w, report.scores.vsme_alignment, lang);

  w.heading(tr(L.indicators, lang));
  w.table(
    [
      { title: tr(L.pillar, lang), width: 0.45 },
      { title: tr(L.indicator, lang), width: 2.3 },
      { title: tr(L.value, lang), width: 2.1 },
      { title: tr(L.unit, lang), width: 1.25 },
      { title: tr(L.vsme, lang), width: 0.55 },
      { title: tr(L.sdgsShort, lang), width: 0.75 },
    ],
    report.indicators.map((i) => [i.pillar, i.label, i.display, i.unit ?? '', i.vsme_reference, i.sdgs.join(', ')]),
  );
  sdgList(w, report, lang);

  // 3. disclosures: on a new page unless more than half of this one is free
  if (w.y < A4[1] / 2) w.newPage();
  w.heading(tr(L.disclosures, lang));
  const disclosureTable = (d: CsrdReportBody['disclosures'][number]) => {
    const columns = [
      { title: tr(L.ref, lang), width: 0.8 },
      { title: tr(L.datapoint, lang), width: 2.9 },
      { title: tr(L.value, lang), width: 2.1 },
      { title: tr(L.unit, lang), width: 1.2 },
      { title: tr(L.status, lang), width: 1.0 },
    ];
    const rows = d.datapoints.map((p) => [p.vsme_reference, p.label, p.display + (p.source === 'derived' && p.status === 'reported' ? ` (${tr(L.derived, lang)})` : ''), p.unit ?? '', statusText(p.status, lang)]);
    // the heading stays with its table's header and first row (it was left alone at a page's foot)
    w.subheading(`${d.code} – ${d.title}`, undefined, w.tableStart(columns, rows));
    w.table(columns, rows);
  };
  for (const d of report.disclosures) disclosureTable(d);
  w.heading(tr(L.comprehensive, lang));
  for (const d of report.comprehensive_disclosures) disclosureTable(d);

  // 4. recommendations
  w.heading(tr(L.recommendations, lang));
  if (!report.recommendations.length) w.paragraph(tr(L.noRecommendations, lang));
  const levels = tr(L.levels, lang).split('|');
  const level = (x: string) => levels[['low', 'medium', 'high'].indexOf(x)] ?? x;
  for (const r of report.recommendations) {
    w.ensure(60);
    w.subheading(`${r.priority}. ${r.title}`, 10.5);
    w.paragraph(
      `${tr(L.pillar, lang)} ${r.pillar} · ${tr(L.impact, lang)}: ${level(r.impact)} · ${tr(L.effort, lang)}: ${level(r.effort)} · ${tr(L.timeline, lang)}: ${r.timeline}${r.sdgs.length ? ` · ${tr(L.sdgsShort, lang)} ${r.sdgs.join(', ')}` : ''}`,
      { size: 8.5, color: MUTED, gap: 2 },
    );
    w.paragraph(r.body, { size: 9, gap: 8 });
  }

  // 5. method
  w.heading(tr(L.method, lang), 12);
  w.paragraph(fill(tr(L.methodText, lang), { algo: report.scores.algorithm_version, assessed: report.scores.assessed_at.slice(0, 10) }), { size: 8.5, color: MUTED });

  // footers
  const n = w.pages.length;
  w.pages.forEach((page, i) => {
    // the report id always shows; a name too long for the line is cut, and says so (the cover carries it in full)
    const id = ` · ${report.report_id}`;
    const left = safe(`VSME · ${report.company.name ?? report.nif}`, fonts);
    const right = fill(tr(L.page, lang), { i: String(i + 1), n: String(n) });
    page.drawLine({ start: { x: MARGIN, y: 40 }, end: { x: MARGIN + WIDTH, y: 40 }, thickness: 0.4, color: RULE });
    const room = WIDTH - 80 - regular.widthOfTextAtSize(id, 7.5);
    // cut by letters, not words (a one-word name would leave only "VSME ·")
    let cut = left;
    if (regular.widthOfTextAtSize(cut, 7.5) > room) {
      while (cut && regular.widthOfTextAtSize(`${cut}…`, 7.5) > room) cut = cut.slice(0, -1);
      cut = `${cut.trimEnd()}…`;
    }
    const leftFit = cut + id;
    page.drawText(leftFit, { x: MARGIN, y: 28, size: 7.5, font: regular, color: MUTED });
    page.drawText(safe(right, fonts), { x: MARGIN + WIDTH - regular.widthOfTextAtSize(right, 7.5), y: 28, size: 7.5, font: regular, color: MUTED });
  });
  return doc.save();
}
