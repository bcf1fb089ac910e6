import { PDFDocument, rgb, type PDFFont, type PDFPage } from 'pdf-lib';
import { embedUnicodeFonts } from '../../lib/pdf-fonts';
import { money } from '../finance/money';
import { friendlyFormatIBAN } from 'ibantools';

/**
 * The notice of assignment (notificação de cessão de créditos) as a PDF: parties, the invoices,
 * the new payment instruction, the legal basis (Civil Code arts. 583.º and 584.º) and a block for
 * the debtor's acknowledgement. A4, DejaVu Sans Condensed (lib/pdf-fonts.ts: the parties' names in any Latin,
 * Greek or Cyrillic script), pages as needed.
 */
export type Lang = 'pt-PT' | 'en';
export interface Party {
  name: string;
  nif: string;
  address: string | null;
  /** the party (assignor or debtor) is an individual entrepreneur (empresário em nome individual) acting in its trade */
  sole_trader?: boolean;
}
export interface NoticeContent {
  language: Lang;
  noticeId: string;
  place: string | null;
  date: string; // YYYY-MM-DD
  assignor: Party;
  factor: Party;
  debtor: Party;
  contractReference: string | null;
  operationId: string | null;
  invoices: { number: string; atcud: string | null; issue_date: string; due_date: string; amount_cents: number }[];
  payment: { iban: string; bic: string | null; accountHolder: string };
}

const TEXT = {
  'pt-PT': {
    title: 'Notificação de cessão de créditos',
    to: 'Ao devedor',
    assignor: 'Cedente',
    factor: 'Cessionário (fator)',
    debtor: 'Devedor',
    nif: 'NIF',
    soleTrader: 'empresário em nome individual',
    contract: 'Contrato de factoring',
    operation: 'Operação',
    intro: (a: string, f: string) =>
      `Nos termos do artigo 583.º do Código Civil, notificamos V. Exas. de que ${a} cedeu a ${f} os créditos que detém sobre V. Exas., titulados pelas faturas abaixo identificadas, incluindo as respetivas garantias e acessórios (artigo 582.º).`,
    invoices: 'Faturas cedidas',
    cols: ['Fatura', 'ATCUD', 'Data', 'Vencimento', 'Valor'],
    total: 'Total',
    paymentTitle: 'Instruções de pagamento',
    payment: 'A partir da receção desta notificação, o pagamento destes créditos só é liberatório se efetuado para a conta abaixo, titulada pelo cessionário:',
    iban: 'IBAN',
    bic: 'BIC/SWIFT',
    holder: 'Titular',
    legalTitle: 'Base legal',
    legal:
      'A cessão produz efeitos em relação ao devedor desde que lhe seja notificada (Código Civil, art. 583.º, n.º 1). Se o mesmo crédito for cedido a várias pessoas, prevalece a cessão primeiramente notificada ao devedor (art. 584.º). O devedor mantém os meios de defesa que lhe seria lícito invocar contra o cedente (art. 585.º).',
    ackTitle: 'Declaração do devedor',
    ack: 'Declaramos ter tomado conhecimento da cessão dos créditos acima identificados e que, à data, não existem sobre eles litígios, compensações ou outras exceções que possamos opor.',
    sign: 'Assinatura e carimbo',
    date: 'Data',
    page: (i: number, n: number) => `Página ${i} de ${n}`,
    ref: 'Referência',
  },
  en: {
    title: 'Notice of assignment of receivables',
    to: 'To the debtor',
    assignor: 'Assignor',
    factor: 'Assignee (factor)',
    debtor: 'Debtor',
    nif: 'Tax number (NIF)',
    soleTrader: 'sole trader',
    contract: 'Factoring contract',
    operation: 'Operation',
    intro: (a: string, f: string) =>
      `Under article 583 of the Portuguese Civil Code, we notify you that ${a} has assigned to ${f} the receivables it holds against you, evidenced by the invoices listed below, together with their guarantees and accessory rights (article 582).`,
    invoices: 'Invoices assigned',
    cols: ['Invoice', 'ATCUD', 'Date', 'Due', 'Amount'],
    total: 'Total',
    paymentTitle: 'Payment instructions',
    payment: 'From receipt of this notice, payment of these receivables discharges the debt only if made to the account below, held by the assignee:',
    iban: 'IBAN',
    bic: 'BIC/SWIFT',
    holder: 'Account holder',
    legalTitle: 'Legal basis',
    legal:
      'The assignment is effective against the debtor from its notification (Civil Code, art. 583(1)). Where the same receivable is assigned to several persons, the assignment first notified to the debtor prevails (art. 584). The debtor keeps the defences it could raise against the assignor (art. 585).',
    ackTitle: 'Debtor\u2019s acknowledgement',
    ack: 'We acknowledge the assignment of the receivables above and confirm that, at this date, there are no disputes, set-offs or other defences we could raise against them.',
    sign: 'Signature and stamp',
    date: 'Date',
    page: (i: number, n: number) => `Page ${i} of ${n}`,
    ref: 'Reference',
  },
} as const;

const day = (iso: string, lang: Lang) => (lang === 'pt-PT' ? `${iso.slice(8, 10)}/${iso.slice(5, 7)}/${iso.slice(0, 4)}` : iso);

const A4: [number, number] = [595.28, 841.89];
const MARGIN = 56;
/** the invoice table: its text size, the gap between its columns, the step between a cell's lines */
const CELL = 9;
const GUTTER = 8;
const CELL_LINE = CELL * 1.3;

const GRAPHEMES = new Intl.Segmenter('und', { granularity: 'grapheme' });
/** where a line may break inside an identifier or a name: after these (the character stays on its line) */
const BREAK_AFTER = new Set([' ', '/', '-', '_', '.', ',', ';', ':', '|', '\\', '\u00a0']);

/**
 * A text in lines of at most `width` points (`measure` of each grapheme: their widths add up, as
 * pdf-lib draws them, without kerning). A line breaks after a space, a slash, a hyphen… where one
 * falls on it, and between two characters of a word or identifier longer than a line; every
 * character is kept in order (a space at a break ends its line), so the lines read back, put end to
 * end, give the text as sent: a legal identifier is never cut short.
 */
export function wrapText(text: string, width: number, measure: (grapheme: string) => number): string[] {
  const lines: string[] = [];
  let line: string[] = [];
  let lineWidth = 0;
  let breakAt = 0; // graphemes of `line` up to its last break opportunity (0: none)
  for (const { segment: g } of GRAPHEMES.segment(text)) {
    const w = measure(g);
    if (line.length && lineWidth + w > width) {
      // at the last break opportunity when what follows it still fits beside g; otherwise inside the word
      const rest = breakAt > 0 ? line.slice(breakAt) : [];
      const restWidth = rest.reduce((s, x) => s + measure(x), 0);
      if (breakAt > 0 && restWidth + w <= width) {
        lines.push(line.slice(0, breakAt).join(''));
        line = rest;
        lineWidth = restWidth;
      } else {
        lines.push(line.join(''));
        line = [];
        lineWidth = 0;
      }
      breakAt = 0;
    }
    line.push(g);
    lineWidth += w;
    if (BREAK_AFTER.has(g)) breakAt = line.length;
  }
  if (line.length || !lines.length) lines.push(line.join(''));
  return lines;
}

/** a column of the invoice table: its left edge, its width, and whether its text is set against its right edge */
export interface Column {
  x: number;
  width: number;
  right?: boolean;
}

class Writer {
  page!: PDFPage;
  y = 0;
  readonly pages: PDFPage[] = [];
  private readonly widths = new Map<PDFFont, Map<string, number>>();
  constructor(
    private readonly doc: PDFDocument,
    readonly font: PDFFont,
    readonly bold: PDFFont,
    /** what the fonts can print of a text (every text drawn goes through it) */
    readonly printable: (text: string) => string,
  ) {
    this.newPage();
  }
  newPage() {
    this.page = this.doc.addPage(A4);
    this.pages.push(this.page);
    this.y = A4[1] - MARGIN;
  }
  /** room for h points on this page, or a new page */
  need(h: number): boolean {
    if (this.y - h >= MARGIN + 20) return false;
    this.newPage();
    return true;
  }
  /** the width of a grapheme at `size` (cached: pdf-lib lays a text out on every measure) */
  measure(font: PDFFont, size: number): (g: string) => number {
    let cache = this.widths.get(font);
    if (!cache) this.widths.set(font, (cache = new Map()));
    return (g) => {
      const key = `${size}\u0000${g}`;
      let w = cache.get(key);
      if (w === undefined) cache.set(key, (w = font.widthOfTextAtSize(g, size)));
      return w;
    };
  }
  /** a text's width at `size`: its graphemes' widths added up */
  width(font: PDFFont, size: number, text: string): number {
    const measure = this.measure(font, size);
    let w = 0;
    for (const { segment } of GRAPHEMES.segment(text)) w += measure(segment);
    return w;
  }
  /** wrapped text; returns nothing, moves down */
  para(text: string, o: { size?: number; bold?: boolean; gap?: number; indent?: number } = {}) {
    const size = o.size ?? 10;
    const font = o.bold ? this.bold : this.font;
    const width = A4[0] - 2 * MARGIN - (o.indent ?? 0);
    const lines: string[] = [];
    for (const paragraph of this.printable(text).split('\n')) {
      let line = '';
      for (const word of paragraph.split(' ')) {
        const next = line ? `${line} ${word}` : word;
        if (font.widthOfTextAtSize(next, size) > width && line) {
          lines.push(line);
          line = word;
        } else line = next;
        // a word longer than the line (a name or reference without spaces) goes on over lines of its own, whole
        if (font.widthOfTextAtSize(line, size) > width) {
          const parts = wrapText(line, width, this.measure(font, size));
          lines.push(...parts.slice(0, -1));
          line = parts.at(-1)!;
        }
      }
      lines.push(line);
    }
    for (const l of lines) {
      this.need(size * 1.4);
      this.page.drawText(l, { x: MARGIN + (o.indent ?? 0), y: this.y - size, size, font, color: rgb(0.1, 0.1, 0.1) });
      this.y -= size * 1.4;
    }
    this.y -= o.gap ?? 6;
  }
  /** a table row's cells, each wrapped within its column, and the row's height (it grows with its longest cell) */
  cells(texts: string[], cols: Column[], bold = false): { lines: string[][]; height: number } {
    const font = bold ? this.bold : this.font;
    const measure = this.measure(font, CELL);
    // a hair inside the column: the widths are added up from each character's
    const lines = texts.map((t, i) => wrapText(this.printable(t), cols[i]!.width - 0.5, measure));
    const n = Math.max(...lines.map((l) => l.length));
    // a wrapped row a little apart from the next, so that its lines read as one row
    return { lines, height: CELL * 1.6 + (n - 1) * CELL_LINE + (n > 1 ? CELL * 0.4 : 0) };
  }
  /** a table row (its cells from `cells`), on this page: the caller made room for its height */
  row(row: { lines: string[][]; height: number }, cols: Column[], bold = false) {
    const font = bold ? this.bold : this.font;
    row.lines.forEach((lines, i) =>
      lines.forEach((l, k) => {
        const col = cols[i]!;
        const x = col.right ? col.x + col.width - this.width(font, CELL, l) : col.x;
        this.page.drawText(l, { x, y: this.y - CELL - k * CELL_LINE, size: CELL, font });
      }),
    );
    this.y -= row.height;
  }
  rule() {
    this.need(6);
    this.page.drawLine({ start: { x: MARGIN, y: this.y - 2 }, end: { x: A4[0] - MARGIN, y: this.y - 2 }, thickness: 0.5, color: rgb(0.6, 0.6, 0.6) });
    this.y -= 8;
  }
}

/**
 * The invoice table's columns for these texts: the dates and amounts as wide as their widest text
 * (the total's included, so no amount reaches into the due date's column), the number and the
 * ATCUD sharing the rest (each its own width when both fit, otherwise by their lengths: a long one
 * wraps within its column, never over the next).
 */
export function invoiceColumns(w: { text: (s: string) => number; bold: (s: string) => number }, header: readonly string[], rows: string[][], total: string): Column[] {
  // (a point more than the widest: a cell wraps a hair inside its column)
  const widest = (i: number, extra: number[] = []) => 1 + Math.max(w.bold(header[i]!), ...rows.map((r) => w.text(r[i]!)), ...extra);
  const [issue, due, amount] = [widest(2), widest(3), widest(4, [w.bold(total)])];
  const rest = A4[0] - 2 * MARGIN - issue - due - amount - 4 * GUTTER;
  const [n, a] = [widest(0), widest(1)];
  let number: number;
  if (n + a <= rest) number = n + (rest - n - a) / 2;
  else if (n <= rest * 0.4) number = n;
  else if (a <= rest * 0.4) number = rest - a;
  else number = rest * 0.42; // both long: an ATCUD (up to 100 characters) is the longer
  const widths = [number, rest - number, issue, due, amount];
  let x = MARGIN;
  return widths.map((width, i) => {
    const col: Column = { x, width, ...(i === 4 ? { right: true } : {}) };
    x += width + GUTTER;
    return col;
  });
}

export async function noticePdf(c: NoticeContent): Promise<Uint8Array> {
  const T = TEXT[c.language];
  const doc = await PDFDocument.create();
  doc.setTitle(`${T.title} — ${c.debtor.name}`);
  doc.setSubject(`${c.assignor.name} → ${c.factor.name}`);
  doc.setProducer('pt-api');
  doc.setCreationDate(new Date(`${c.date}T00:00:00Z`));
  doc.setModificationDate(new Date(`${c.date}T00:00:00Z`));
  const fonts = await embedUnicodeFonts(doc);
  const w = new Writer(doc, fonts.regular, fonts.bold, fonts.printable);
  const party = (label: string, p: Party) => {
    w.para(label, { bold: true, gap: 0 });
    w.para(`${p.name}${p.sole_trader ? ` (${T.soleTrader})` : ''} — ${T.nif} ${p.nif}${p.address ? `\n${p.address}` : ''}`, { gap: 8 });
  };

  w.para(T.title, { size: 16, bold: true, gap: 4 });
  w.para(`${c.place ? `${c.place}, ` : ''}${day(c.date, c.language)} — ${T.ref} ${c.noticeId}`, { size: 9, gap: 12 });
  party(T.to, c.debtor);
  party(T.assignor, c.assignor);
  party(T.factor, c.factor);
  if (c.contractReference) w.para(`${T.contract}: ${c.contractReference}`, { gap: 2 });
  if (c.operationId) w.para(`${T.operation}: ${c.operationId}`, { gap: 2 });
  w.y -= 6;
  w.para(T.intro(c.assignor.name, c.factor.name), { gap: 10 });

  w.para(T.invoices, { bold: true, size: 11 });
  // the table: each cell wrapped within its column, a row as high as its longest cell, kept whole
  // on its page, and the header again on every page the table continues on
  const total = c.invoices.reduce((s, i) => s + i.amount_cents, 0);
  const texts = c.invoices.map((inv) => [inv.number, inv.atcud ?? '—', day(inv.issue_date, c.language), day(inv.due_date, c.language), money(inv.amount_cents, c.language)]);
  const cols = invoiceColumns({ text: (s) => w.width(w.font, CELL, w.printable(s)), bold: (s) => w.width(w.bold, CELL, w.printable(s)) }, T.cols, texts, money(total, c.language));
  const header = w.cells([...T.cols], cols, true);
  const head = () => {
    w.row(header, cols, true);
    w.rule();
  };
  w.need(header.height + 8 + (texts.length ? w.cells(texts[0]!, cols).height : 0));
  head();
  for (const cells of texts) {
    const row = w.cells(cells, cols);
    if (w.need(row.height)) head();
    w.row(row, cols);
  }
  const totalRow = w.cells([T.total, '', '', '', money(total, c.language)], cols, true);
  w.need(8 + totalRow.height);
  w.rule();
  w.row(totalRow, cols, true);
  w.y -= 8;

  w.para(T.paymentTitle, { bold: true, size: 11 });
  w.para(T.payment, { gap: 4 });
  w.para(`${T.iban}: ${friendlyFormatIBAN(c.payment.iban) ?? c.payment.iban}`, { bold: true, indent: 12, gap: 0 });
  if (c.payment.bic) w.para(`${T.bic}: ${c.payment.bic}`, { indent: 12, gap: 0 });
  w.para(`${T.holder}: ${c.payment.accountHolder}`, { indent: 12, gap: 10 });

  w.para(T.legalTitle, { bold: true, size: 11 });
  w.para(T.legal, { size: 9, gap: 12 });

  w.need(150);
  w.para(T.ackTitle, { bold: true, size: 11 });
  w.para(T.ack, { gap: 28 });
  w.para(`${T.debtor}: ${c.debtor.name} (${T.nif} ${c.debtor.nif})`, { gap: 28 });
  w.para(`${T.sign}: ______________________________    ${T.date}: ____/____/________`, { gap: 0 });

  const n = w.pages.length;
  w.pages.forEach((p, i) => p.drawText(T.page(i + 1, n), { x: A4[0] - MARGIN - w.font.widthOfTextAtSize(T.page(i + 1, n), 8), y: MARGIN / 2, size: 8, font: w.font, color: rgb(0.4, 0.4, 0.4) }));
  return doc.save({ useObjectStreams: false });
}
