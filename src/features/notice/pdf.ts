import { PDFDocument, rgb, type PDFFont, type PDFPage } from 'pdf-lib';
import { embedUnicodeFonts } from '../../lib/pdf-fonts';
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

/** Euros from cents, in the language's convention: 1 234,56 € or €1,234.56. */
export function money(cents: number, lang: Lang): string {
  const neg = cents < 0 ? '-' : '';
  const a = Math.abs(cents);
  const units = String(Math.floor(a / 100));
  const dec = String(a % 100).padStart(2, '0');
  const grouped = units.replace(/\B(?=(\d{3})+(?!\d))/g, lang === 'pt-PT' ? ' ' : ',');
  return lang === 'pt-PT' ? `${neg}${grouped},${dec} €` : `${neg}€${grouped}.${dec}`;
}
const day = (iso: string, lang: Lang) => (lang === 'pt-PT' ? `${iso.slice(8, 10)}/${iso.slice(5, 7)}/${iso.slice(0, 4)}` : iso);

const A4: [number, number] = [595.28, 841.89];
const MARGIN = 56;

class Writer {
  page!: PDFPage;
  y = 0;
  readonly pages: PDFPage[] = [];
  constructor(
    private readonly doc: PDFDocument,
    readonly font: PDFFont,
    readonly bold: PDFFont,
    /** what the fonts can print of a text (every text drawn goes through it) */
    private readonly printable: (text: string) => string,
  ) {
    this.newPage();
  }
  newPage() {
    this.page = this.doc.addPage(A4);
    this.pages.push(this.page);
    this.y = A4[1] - MARGIN;
  }
  need(h: number) {
    if (this.y - h < MARGIN + 20) this.newPage();
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
  row(cells: string[], xs: number[], o: { bold?: boolean; rightFrom?: number; size?: number } = {}) {
    const size = o.size ?? 9;
    const font = o.bold ? this.bold : this.font;
    this.need(size * 1.6);
    cells.map(this.printable).forEach((c, i) => {
      const right = o.rightFrom !== undefined && i >= o.rightFrom;
      const x = right ? xs[i]! - font.widthOfTextAtSize(c, size) : xs[i]!;
      this.page.drawText(c, { x, y: this.y - size, size, font });
    });
    this.y -= size * 1.6;
  }
  rule() {
    this.need(6);
    this.page.drawLine({ start: { x: MARGIN, y: this.y - 2 }, end: { x: A4[0] - MARGIN, y: this.y - 2 }, thickness: 0.5, color: rgb(0.6, 0.6, 0.6) });
    this.y -= 8;
  }
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
    w.para(`${p.name} — ${T.nif} ${p.nif}${p.address ? `\n${p.address}` : ''}`, { gap: 8 });
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
  const xs = [MARGIN, MARGIN + 120, MARGIN + 250, MARGIN + 320, A4[0] - MARGIN];
  w.row([...T.cols], xs, { bold: true, rightFrom: 4 });
  w.rule();
  for (const inv of c.invoices) w.row([inv.number, inv.atcud ?? '—', day(inv.issue_date, c.language), day(inv.due_date, c.language), money(inv.amount_cents, c.language)], xs, { rightFrom: 4 });
  w.rule();
  const total = c.invoices.reduce((s, i) => s + i.amount_cents, 0);
  w.row([T.total, '', '', '', money(total, c.language)], xs, { bold: true, rightFrom: 4 });
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
