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

function geometry(r: ForecastResult, title: string) {
  const values = r.weeks.flatMap((w) => [w.balance_p10_cents, w.balance_p90_cents]).concat([0, r.opening_balance_cents]);
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (lo === hi) hi = lo + 100;
  const pad = (hi - lo) * 0.08;
  lo -= pad;
  hi += pad;
  const n = r.weeks.length;
  const x = (i: number) => M.l + ((W - M.l - M.r) * i) / Math.max(1, n);
  const y = (v: number) => M.t + ((H - M.t - M.b) * (hi - v)) / (hi - lo);
  const eur = (c: number) => `${Math.round(c / 100).toLocaleString('en-US')} EUR`;
  const pts = (f: (w: ForecastResult['weeks'][number]) => number) => r.weeks.map((w, i) => `${x(i + 1).toFixed(1)},${y(f(w)).toFixed(1)}`);
  const start = `${x(0).toFixed(1)},${y(r.opening_balance_cents).toFixed(1)}`;
  return {
    title,
    axis: `weeks from ${r.as_of} (p50 line, p10-p90 band)`,
    risk: r.weeks.filter((w) => w.at_risk).map((w) => ({ x: x(w.week - 1), y: M.t, w: x(1) - x(0), h: H - M.t - M.b })),
    grid: Array.from({ length: 5 }, (_, i) => lo + ((hi - lo) * i) / 4).map((v) => ({ y: y(v), label: eur(v) })),
    zero: y(0),
    band: `M${start} L${pts((w) => w.balance_p90_cents).join(' L')} L${[...pts((w) => w.balance_p10_cents)].reverse().join(' L')} Z`,
    line: `M${start} L${pts((w) => w.balance_p50_cents).join(' L')}`,
    points: r.weeks.map((w, i) => ({ x: x(i + 1), y: y(w.balance_p50_cents) })),
    weeks: r.weeks.map((w, i) => ({ x: x(i + 1), label: `W${w.week}` })),
  };
}

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

export function forecastSvg(r: ForecastResult, title: string): string {
  const g = geometry(r, title);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="t d" font-family="Helvetica, Arial, sans-serif" font-size="11">
<title id="t">${esc(title)}</title><desc id="d">Weekly closing balance, p50 with the p10 to p90 band, ${r.weeks.length} weeks from ${r.as_of}; weeks at risk shaded.</desc>
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
export async function forecastPng(r: ForecastResult, title: string): Promise<Uint8Array> {
  const g = geometry(r, title);
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
