import { mupdfLib } from '../../lib/mupdf';
import { PDFDocument, StandardFonts, rgb } from 'pdf-lib';
import type { ForecastResult } from './engine';

/**
 * The forecast as a chart a person reads: the p10–p90 band and the p50 line of the weekly balance,
 * the zero line, the weeks at risk shaded, labelled axes. One geometry, two renderings: SVG text,
 * and PNG (the same shapes drawn on a PDF page by pdf-lib and rasterised by MuPDF, both already
 * dependencies; MuPDF's WebAssembly build reads no SVG).
 */
const W = 720;
const H = 360;
const M = { l: 90, r: 20, t: 40, b: 50 };

export type ChartLang = 'en' | 'pt';

/** the chart's words in each language the API answers in */
const WORDS = {
  en: { title: (source: string, asOf: string) => `Cash forecast ${source} from ${asOf}`, axis: (asOf: string) => `weeks from ${asOf} (p50 line, p10-p90 band)`, week: 'W', desc: (n: number, asOf: string) => `Weekly closing balance, p50 with the p10 to p90 band, ${n} weeks from ${asOf}; weeks at risk shaded.` },
  pt: { title: (source: string, asOf: string) => `Previsão de tesouraria ${source} a partir de ${asOf}`, axis: (asOf: string) => `semanas a partir de ${asOf} (linha p50, faixa p10-p90)`, week: 'S', desc: (n: number, asOf: string) => `Saldo semanal de fecho, p50 com a faixa p10 a p90, ${n} semanas a partir de ${asOf}; semanas em risco sombreadas.` },
} as const;
export const chartTitle = (lang: ChartLang, source: string, asOf: string) => WORDS[lang].title(source, asOf);

/** whole euros as each language writes them: 300,844 EUR / 300 844 € (a no-break space: WinAnsi has it, the PNG's font draws it) */
const euros = (cents: number, lang: ChartLang) => {
  const whole = Math.round(cents / 100);
  const digits = Math.abs(whole).toString().replace(/\B(?=(\d{3})+(?!\d))/g, lang === 'pt' ? '\u00a0' : ',');
  return `${whole < 0 ? '-' : ''}${digits}${lang === 'pt' ? '\u00a0€' : ' EUR'}`;
};

/** a tick spacing a person reads at a glance: 1, 2, 2.5 or 5 × a power of ten, about `span / 4` */
function niceStep(span: number): number {
  const raw = span / 4;
  const power = 10 ** Math.floor(Math.log10(raw));
  return ([1, 2, 2.5, 5, 10].find((m) => m * power >= raw) ?? 10) * power;
}

function geometry(r: ForecastResult, title: string, lang: ChartLang) {
  const values = r.weeks.flatMap((w) => [w.balance_p10_cents, w.balance_p90_cents]).concat([0, r.opening_balance_cents]);
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (lo === hi) hi = lo + 100;
  // the axis runs between round values (whole euros at least), one of them zero when it is crossed
  const step = Math.max(100, niceStep(hi - lo));
  lo = Math.floor(lo / step) * step;
  hi = Math.ceil(hi / step) * step;
  const ticks: number[] = [];
  for (let v = lo; v <= hi + step / 2; v += step) ticks.push(v);
  const n = r.weeks.length;
  const x = (i: number) => M.l + ((W - M.l - M.r) * i) / Math.max(1, n);
  const y = (v: number) => M.t + ((H - M.t - M.b) * (hi - v)) / (hi - lo);
  const pts = (f: (w: ForecastResult['weeks'][number]) => number) => r.weeks.map((w, i) => `${x(i + 1).toFixed(1)},${y(f(w)).toFixed(1)}`);
  const start = `${x(0).toFixed(1)},${y(r.opening_balance_cents).toFixed(1)}`;
  return {
    title,
    axis: WORDS[lang].axis(r.as_of),
    desc: WORDS[lang].desc(r.weeks.length, r.as_of),
    risk: r.weeks.filter((w) => w.at_risk).map((w) => ({ x: x(w.week - 1), y: M.t, w: x(1) - x(0), h: H - M.t - M.b })),
    grid: ticks.map((v) => ({ y: y(v), label: euros(v, lang) })),
    zero: y(0),
    band: `M${start} L${pts((w) => w.balance_p90_cents).join(' L')} L${[...pts((w) => w.balance_p10_cents)].reverse().join(' L')} Z`,
    line: `M${start} L${pts((w) => w.balance_p50_cents).join(' L')}`,
    points: r.weeks.map((w, i) => ({ x: x(i + 1), y: y(w.balance_p50_cents) })),
    weeks: r.weeks.map((w, i) => ({ x: x(i + 1), label: `${WORDS[lang].week}${w.week}` })),
  };
}

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

export function forecastSvg(r: ForecastResult, title: string, lang: ChartLang = 'en'): string {
  const g = geometry(r, title, lang);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="t d" font-family="Helvetica, Arial, sans-serif" font-size="11" xml:lang="${lang === 'pt' ? 'pt-PT' : 'en'}">
<title id="t">${esc(title)}</title><desc id="d">${esc(g.desc)}</desc>
<rect width="${W}" height="${H}" fill="#ffffff"/>
${g.risk.map((b) => `<rect class="risk" x="${b.x.toFixed(1)}" y="${b.y}" width="${b.w.toFixed(1)}" height="${b.h}" fill="#fdecea"/>`).join('\n')}
${g.grid.map((t) => `<line x1="${M.l}" x2="${W - M.r}" y1="${t.y.toFixed(1)}" y2="${t.y.toFixed(1)}" stroke="#e0e0e0"/><text x="${M.l - 6}" y="${(t.y + 4).toFixed(1)}" text-anchor="end" fill="#333">${esc(t.label)}</text>`).join('\n')}
<line class="zero" x1="${M.l}" x2="${W - M.r}" y1="${g.zero.toFixed(1)}" y2="${g.zero.toFixed(1)}" stroke="#b3261e" stroke-width="1.5" stroke-dasharray="4 3"/>
<path class="band" d="${g.band}" fill="#0b5394" fill-opacity="0.18" stroke="none"/>
<path class="p50" d="${g.line}" fill="none" stroke="#0b5394" stroke-width="2.5"/>
${g.points.map((p) => `<circle class="pt" cx="${p.x.toFixed(1)}" cy="${p.y.toFixed(1)}" r="2.5" fill="#0b5394"/>`).join('')}
${g.weeks.map((w) => `<text x="${w.x.toFixed(1)}" y="${H - M.b + 16}" text-anchor="middle" fill="#333">${w.label}</text>`).join('')}
<text x="${M.l}" y="24" font-size="14" font-weight="bold" fill="#1a1a1a">${esc(title)}</text>
<text x="${(W + M.l) / 2}" y="${H - 10}" text-anchor="middle" fill="#333">${esc(g.axis)}</text>
</svg>`;
}

/** The same chart as PNG. */
export async function forecastPng(r: ForecastResult, title: string, lang: ChartLang = 'en'): Promise<Uint8Array> {
  const g = geometry(r, title, lang);
  const doc = await PDFDocument.create();
  const page = doc.addPage([W, H]);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const Y = (y: number) => H - y; // PDF's y runs upwards
  const blue = rgb(11 / 255, 83 / 255, 148 / 255);
  page.drawRectangle({ x: 0, y: 0, width: W, height: H, color: rgb(1, 1, 1) });
  for (const b of g.risk) page.drawRectangle({ x: b.x, y: Y(b.y + b.h), width: b.w, height: b.h, color: rgb(0.99, 0.925, 0.918) });
  for (const t of g.grid) {
    page.drawLine({ start: { x: M.l, y: Y(t.y) }, end: { x: W - M.r, y: Y(t.y) }, thickness: 1, color: rgb(0.88, 0.88, 0.88) });
    page.drawText(t.label, { x: M.l - 6 - font.widthOfTextAtSize(t.label, 11), y: Y(t.y) - 4, size: 11, font, color: rgb(0.2, 0.2, 0.2) });
  }
  page.drawLine({ start: { x: M.l, y: Y(g.zero) }, end: { x: W - M.r, y: Y(g.zero) }, thickness: 1.5, color: rgb(0.7, 0.15, 0.12), dashArray: [4, 3] });
  // drawSvgPath takes SVG coordinates from a top-left origin
  page.drawSvgPath(g.band, { x: 0, y: H, color: blue, opacity: 0.18, borderWidth: 0 });
  page.drawSvgPath(g.line, { x: 0, y: H, borderColor: blue, borderWidth: 2.5 });
  for (const p of g.points) page.drawCircle({ x: p.x, y: Y(p.y), size: 2.5, color: blue });
  for (const w of g.weeks) page.drawText(w.label, { x: w.x - font.widthOfTextAtSize(w.label, 11) / 2, y: Y(H - M.b + 16) - 0, size: 11, font, color: rgb(0.2, 0.2, 0.2) });
  page.drawText(g.title, { x: M.l, y: Y(24), size: 14, font: bold, color: rgb(0.1, 0.1, 0.1) });
  page.drawText(g.axis, { x: (W + M.l) / 2 - font.widthOfTextAtSize(g.axis, 11) / 2, y: Y(H - 10), size: 11, font, color: rgb(0.2, 0.2, 0.2) });
  const pdf = await doc.save();
  const mupdf = await mupdfLib();
  const rendered = mupdf.Document.openDocument(pdf, 'application/pdf').loadPage(0).toPixmap(mupdf.Matrix.scale(1, 1), mupdf.ColorSpace.DeviceRGB, false);
  return new Uint8Array(rendered.asPNG());
}
