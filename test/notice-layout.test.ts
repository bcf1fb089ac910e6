/**
 * The cession notice's invoice table as a reader sees it: the PDF rendered by MuPDF, every
 * character with its box. An invoice number or ATCUD as long as the schema allows (60 and 100
 * characters) is printed whole, wrapped within its own column (the row growing), never over the
 * next column; pt-PT and en; many such invoices over several pages, the header on each, no row cut.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import * as mupdf from 'mupdf';
import { suiteApp } from './helpers';
setDefaultTimeout(60_000);

const h = suiteApp();

const pad = (s: string, n: number, fill: string) => (s + fill.repeat(n)).slice(0, n);
/** identifiers at the schema's limits (number: 60, ATCUD: 100 characters), the widest glyphs among them */
const LONG = [
  { number: pad('FT FT2025SERIEXPTOLONGA/000123456', 60, '7'), atcud: pad('JJ3Y7Z4W-123456789', 100, '0') },
  { number: 'W'.repeat(60), atcud: 'M'.repeat(100) },
  { number: pad('FR Fatura-Recibo Série Ação Çedilha/2025/', 60, '9'), atcud: pad('JJ3Y7Z4W-', 100, 'W') },
  { number: 'FT FT2025SERIEXPTOLONGA/000123456', atcud: 'JJ3Y7Z4W-123456789' },
  { number: 'FT 1/1', atcud: 'ABCD1234-' + '9'.repeat(91) },
];
const invoices = (n: number) =>
  Array.from({ length: n }, (_, i) => {
    const { number, atcud } = LONG[i % LONG.length]!;
    // distinct numbers (a repeat is refused), still at the limit
    const numbered = i < LONG.length ? number : `${number.slice(0, 60 - String(i).length - 1)}-${i}`;
    return { number: numbered, atcud, issue_date: '2026-11-02', due_date: '2027-01-31', amount_cents: i % 2 ? 1e13 : 1_845_000 + i };
  });
const body = (list: unknown[], language: 'pt-PT' | 'en') => ({
  parties: {
    assignor: { name: 'Metalomecânica Exemplo, Lda', nif: '599000031' },
    factor: { name: 'Factor Exemplo, S.A.', nif: '599000015' },
    debtor: { name: 'Distribuidora Alfa, S.A.', nif: '599000023' },
  },
  invoices: list,
  payment: { iban: 'PT50000201231234567890154' },
  language,
});

type Char = { c: string; x0: number; x1: number; y: number };
type Run = { text: string; x0: number; x1: number };
/** each page's lines (top to bottom), each line's runs of touching characters (left to right): what MuPDF reads, no spaces made up */
function pageLines(bytes: Uint8Array): { y: number; runs: Run[] }[][] {
  const doc = mupdf.Document.openDocument(bytes, 'application/pdf');
  const pages: { y: number; runs: Run[] }[][] = [];
  for (let i = 0; i < doc.countPages(); i++) {
    const chars: Char[] = [];
    doc
      .loadPage(i)
      .toStructuredText('preserve-whitespace,inhibit-spaces')
      .walk({
        onChar(c, origin, _font, _size, q) {
          chars.push({ c, x0: Math.min(q[0], q[4]), x1: Math.max(q[2], q[6]), y: Math.round(origin[1] * 2) / 2 });
        },
      });
    const byY = new Map<number, Char[]>();
    for (const ch of chars) byY.set(ch.y, [...(byY.get(ch.y) ?? []), ch]);
    pages.push(
      [...byY.entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([y, cs]) => {
          cs.sort((a, b) => a.x0 - b.x0);
          const runs: Run[] = [];
          for (const ch of cs) {
            const last = runs.at(-1);
            // a column's gutter is 8 points; characters of one text touch
            if (last && ch.x0 - last.x1 < 3) {
              last.text += ch.c;
              last.x1 = Math.max(last.x1, ch.x1);
            } else runs.push({ text: ch.c, x0: ch.x0, x1: ch.x1 });
          }
          return { y, runs };
        }),
    );
  }
  return pages;
}

const HEADERS = { 'pt-PT': ['Fatura', 'ATCUD', 'Data', 'Vencimento', 'Valor'], en: ['Invoice', 'ATCUD', 'Date', 'Due', 'Amount'] } as const;
const TOTAL = { 'pt-PT': 'Total', en: 'Total' } as const;

/**
 * The table read back: on every page it is on, its header (the columns' left edges: where their
 * labels start; the amounts set against the right edge), then rows whose cells are put together
 * from their lines. Asserts that no run of text crosses into the next column.
 */
function readTable(bytes: Uint8Array, language: 'pt-PT' | 'en') {
  const rows: { number: string; atcud: string; dates: string[]; amount: string; page: number }[] = [];
  let pagesWithTable = 0;
  const crossings: string[] = [];
  pageLines(bytes).forEach((lines, p) => {
    const hi = lines.findIndex((l) => l.runs.map((r) => r.text).join('|') === HEADERS[language].join('|'));
    if (hi < 0) return;
    pagesWithTable++;
    const header = lines[hi]!.runs;
    const starts = header.slice(0, 4).map((r) => r.x0);
    const right = header[4]!.x1;
    const ti = lines.findIndex((l, i) => i > hi && l.runs[0]?.text === TOTAL[language]);
    // the table's lines: below the header, above the total (on its page) and the page's foot
    const body = lines.slice(hi + 1, ti < 0 ? undefined : ti + 1).filter((l) => l.y < 841.89 - 56);
    // the amount column's left edge: the leftmost amount (or label) set against the right edge
    const amountRuns = [...body, lines[hi]!].flatMap((l) => l.runs.filter((r) => Math.abs(r.x1 - right) < 0.5));
    const amountLeft = Math.min(...amountRuns.map((r) => r.x0));
    const edges = [...starts, amountLeft, Infinity];
    for (const [i, l] of [lines[hi]!, ...body].entries()) {
      const cells: string[] = ['', '', '', '', ''];
      for (const r of l.runs) {
        const col = Math.abs(r.x1 - right) < 0.5 ? 4 : edges.findLastIndex((e, k) => k < 4 && e <= r.x0 + 0.01);
        // within its column, with room before the next one (the gutter is 8 points)
        if (col < 0 || r.x1 > edges[col + 1]! - 4) crossings.push(`page ${p + 1} line ${i}: "${r.text}" (${r.x0.toFixed(1)}–${r.x1.toFixed(1)}) crosses from column ${col} into ${col + 1} (starts ${edges[col + 1]?.toFixed(1)})`);
        if (cells[col]) crossings.push(`page ${p + 1} line ${i}: two texts in column ${col}: "${cells[col]}", "${r.text}"`);
        cells[col] = r.text;
      }
      if (i === 0 || l.runs[0]?.text === TOTAL[language] && !cells[2]) continue;
      // a row starts on the line with its dates; the lines below without dates continue its number and ATCUD
      if (cells[2]) rows.push({ number: cells[0]!, atcud: cells[1]!, dates: [cells[2], cells[3]!], amount: cells[4]!, page: p + 1 });
      else {
        const row = rows.at(-1);
        if (!row || row.page !== p + 1) crossings.push(`page ${p + 1}: a row continued from another page (${cells.join('|')})`);
        else {
          row.number += cells[0];
          row.atcud += cells[1];
          if (cells[3] || cells[4]) crossings.push(`page ${p + 1}: a date or amount on a continuation line`);
        }
      }
    }
  });
  return { rows, pagesWithTable, crossings };
}

describe('the notice\u2019s invoice table: every identifier whole, within its column', () => {
  for (const language of ['pt-PT', 'en'] as const)
    test(`${language}: numbers and ATCUDs at the schema's limits wrap within their columns, nothing lost, nothing over the next column`, async () => {
      const list = invoices(LONG.length);
      const res = await h.call('POST', '/v1/notice/cession', { key: h.key, body: body(list, language), headers: { accept: 'application/pdf' } });
      expect(res.status).toBe(201);
      const { rows, pagesWithTable, crossings } = readTable(new Uint8Array(await res.arrayBuffer()), language);
      expect(crossings).toEqual([]);
      expect(pagesWithTable).toBeGreaterThanOrEqual(1);
      expect(rows.map((r) => [r.number, r.atcud])).toEqual(list.map((i) => [i.number, i.atcud]));
      expect(rows[1]!.amount).toBe(language === 'pt-PT' ? '100 000 000 000,00 €' : '€100,000,000,000.00');
      expect(rows[0]!.dates).toEqual(language === 'pt-PT' ? ['02/11/2026', '31/01/2027'] : ['2026-11-02', '2027-01-31']);
    });

  test('many such invoices: pages break between rows, the header again on each page, every row whole and in order', async () => {
    const list = invoices(120);
    const res = await h.call('POST', '/v1/notice/cession', { key: h.key, body: body(list, 'pt-PT'), headers: { accept: 'application/pdf' } });
    expect(res.status).toBe(201);
    const bytes = new Uint8Array(await res.arrayBuffer());
    const { rows, pagesWithTable, crossings } = readTable(bytes, 'pt-PT');
    expect(crossings).toEqual([]);
    expect(pagesWithTable).toBeGreaterThan(3);
    expect(rows.map((r) => [r.number, r.atcud])).toEqual(list.map((i) => [i.number, i.atcud]));
    // the pages number themselves, the last one says so
    const doc = mupdf.Document.openDocument(bytes, 'application/pdf');
    const n = doc.countPages();
    expect(doc.loadPage(n - 1).toStructuredText('preserve-whitespace').asText()).toContain(`Página ${n} de ${n}`);
    // the total, whole, after the last row
    const total = list.reduce((s, i) => s + i.amount_cents, 0);
    const text = Array.from({ length: n }, (_, i) => doc.loadPage(i).toStructuredText('preserve-whitespace').asText()).join('\n');
    expect(text).toContain(`${String(Math.floor(total / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, ' ')},${String(total % 100).padStart(2, '0')} €`);
  });
});
