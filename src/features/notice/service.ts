import { and, eq } from 'drizzle-orm';
import { electronicFormatIBAN } from 'ibantools';
import type { AppContext } from '../../context';
import { ApiError, validationError } from '../../lib/errors';
import type { AuditTrail } from '../audit/service';
import type { FactoringService } from '../factoring/service';
import type { NoticeBody, NoticeView } from './model';
import { noticePdf, type Party } from './pdf';
import { printsWhole } from '../../lib/pdf-fonts';
import { assignorProblems, debtorProblems, distinctParties, invoiceProblems, noticeProblems, requestProblems, sameName, unprintable } from './checks';

type Caller = { tenantId: string; env: string; keyId: string | null; requestId: string | null };
type Row = AppContext['database']['t']['cessionNotices']['$inferSelect'];

/** Notices of assignment: built from an operation or from given parties and invoices, stored with their SHA-256, re-downloadable. */
export class NoticeService {
  constructor(
    private readonly ctx: AppContext,
    private readonly factoring: FactoringService,
    private readonly audit: AuditTrail,
  ) {}

  async create(caller: Caller, body: NoticeBody): Promise<{ view: NoticeView; pdf: Uint8Array }> {
    const today = this.ctx.clock.now().toISOString().slice(0, 10);
    const prints = await printsWhole();
    // what the request decides alone (the route's transform has listed these with the schema's
    // problems already: a body reaching here normally has none)
    const errors = requestProblems(body as unknown as Record<string, unknown>, today, prints);
    if (errors.length) throw noticeProblems(errors, body.payment.iban);
    const iban = electronicFormatIBAN(body.payment.iban)!;
    let assignor: Party;
    let debtor: Party;
    let invoices = body.invoices!;
    let contract = body.contract_reference ?? null;
    if (body.operation_id) {
      const op = await this.factoring.forNotice(caller, body.operation_id);
      if (!op) throw new ApiError('resource_not_found', `No factoring operation ${body.operation_id} for this tenant in this environment.`);
      if (op.status === 'rejected' || op.status === 'cancelled') throw new ApiError('invalid_transition', `Operation ${op.operation_id} is ${op.status}: its invoices were not assigned, there is nothing to notify.`);
      if (op.status === 'settled') throw new ApiError('invalid_transition', `Operation ${op.operation_id} is settled: its debtors paid, there is nothing to notify.`);
      const debtorNif = body.debtor_nif ?? (op.debtors.length === 1 ? op.debtors[0]!.nif : undefined);
      if (!debtorNif) throw validationError([{ path: 'debtor_nif', message: `the operation has ${op.debtors.length} debtors (${op.debtors.map((d) => d.nif).join(', ')}): say which one to notify` }]);
      const d = op.debtors.find((x) => x.nif === debtorNif);
      if (!d) throw validationError([{ path: 'debtor_nif', message: `not a debtor of ${op.operation_id}` }]);
      // the parties are the operation's: a request may name one the operation has no name for, not another
      const given = body.parties?.debtor;
      const a = body.parties?.assignor;
      const differs = (path: string, what: string, ours: string | null, theirs: string | undefined) => {
        if (theirs !== undefined && ours !== null && ours !== '' && !sameName(theirs, ours)) errors.push({ path, message: `differs from the operation's ${what} (${ours})` });
      };
      differs('parties.debtor.nif', 'debtor', d.nif, given?.nif);
      differs('parties.debtor.name', 'debtor\'s name', d.name, given?.name);
      differs('parties.assignor.nif', 'seller', op.seller.nif, a?.nif);
      differs('parties.assignor.name', 'seller\'s name', op.seller.name, a?.name);
      debtor = { nif: d.nif, name: d.name || (given?.name ?? ''), address: d.address ?? given?.address ?? null, ...(given?.sole_trader ? { sole_trader: true } : {}) };
      assignor = { nif: op.seller.nif, name: op.seller.name || (a?.name ?? ''), address: op.seller.address ?? a?.address ?? null, ...(a?.sole_trader ? { sole_trader: true } : {}) };
      invoices = op.invoices.filter((i) => i.debtor_nif === debtorNif).map(({ debtor_nif: _d, ...i }) => ({ ...i, atcud: i.atcud ?? undefined }));
      contract ??= op.contract_reference;
      if (!debtor.name) errors.push({ path: 'parties.debtor.name', message: 'the operation has no name for this debtor: give it' });
      if (!assignor.name) errors.push({ path: 'parties.assignor.name', message: 'the operation has no name for the seller: give it' });
      // the operation's parties are judged as given ones are: its seller a legal person, its debtor
      // a business (a sole trader said so); named where the request names them, else on operation_id
      const named = (path: string, value: unknown) => (value !== undefined ? path : 'operation_id');
      if (!errors.some((e) => e.path === 'parties.assignor.nif')) errors.push(...assignorProblems(named('parties.assignor.nif', a?.nif), assignor.nif, a?.sole_trader, 'parties.assignor.sole_trader', a?.nif === undefined ? `the operation's seller ${assignor.nif}: ` : ''));
      if (!errors.some((e) => e.path === 'parties.debtor.nif'))
        errors.push(...debtorProblems(body.debtor_nif !== undefined ? 'debtor_nif' : named('parties.debtor.nif', given?.nif), debtor.nif, given?.sole_trader, 'parties.debtor.sole_trader', body.debtor_nif === undefined && given?.nif === undefined ? `the operation's debtor ${debtor.nif}: ` : ''));
      errors.push(...invoiceProblems(invoices, { repeats: false }));
      errors.push(...distinctParties({ factor: body.parties!.factor.nif, assignor: assignor.nif, debtor: debtor.nif }));
      // what the operation brings is printed too
      const flagged = new Set(errors.map((e) => e.path));
      errors.push(
        ...unprintable(
          [
            ['parties.assignor.name', assignor.name], ['parties.assignor.address', assignor.address],
            ['parties.debtor.name', debtor.name], ['parties.debtor.address', debtor.address], ['contract_reference', contract],
            ...invoices.flatMap((inv, i): [string, unknown][] => [[`invoices.${i}.number`, inv.number], [`invoices.${i}.atcud`, inv.atcud]]),
          ],
          prints,
        ).filter((e) => !flagged.has(e.path)),
      );
      if (errors.length) throw noticeProblems(errors, body.payment.iban);
    } else {
      const [a, d] = [body.parties!.assignor!, body.parties!.debtor!];
      assignor = { name: a.name, nif: a.nif!, address: a.address ?? null, ...(a.sole_trader ? { sole_trader: true } : {}) };
      debtor = { name: d.name, nif: d.nif!, address: d.address ?? null, ...(d.sole_trader ? { sole_trader: true } : {}) };
    }
    const factor = { ...body.parties!.factor, address: body.parties!.factor.address ?? null };
    const language = body.language ?? 'pt-PT';
    const now = this.ctx.clock.now();
    const id = `ntc_${Bun.randomUUIDv7()}`;
    const list = invoices.map((i) => ({ number: i.number, atcud: i.atcud ?? null, issue_date: i.issue_date, due_date: i.due_date, amount_cents: i.amount_cents }));
    const pdf = await noticePdf({
      language,
      noticeId: id,
      place: body.place ?? null,
      date: now.toISOString().slice(0, 10),
      assignor,
      factor,
      debtor,
      contractReference: contract,
      operationId: body.operation_id ?? null,
      invoices: list,
      payment: { iban, bic: body.payment.bic ?? null, accountHolder: body.payment.account_holder ?? factor.name },
    });
    const sha256 = new Bun.CryptoHasher('sha256').update(pdf).digest('hex');
    const total = list.reduce((s, i) => s + i.amount_cents, 0);
    const data = { assignor, factor, debtor, contract_reference: contract, invoices: list, payment: { iban, bic: body.payment.bic ?? null, account_holder: body.payment.account_holder ?? factor.name }, place: body.place ?? null, total_cents: total };
    const actor = { tenantId: caller.tenantId, env: caller.env, keyId: caller.keyId, requestId: caller.requestId };
    await this.ctx.database.withTx(async (tx) => {
      await tx.insert(this.ctx.database.t.cessionNotices).values({ id, tenantId: caller.tenantId, env: caller.env, operationId: body.operation_id ?? null, language, sha256, pdf: Buffer.from(pdf).toString('base64'), data, createdAt: now });
      await this.audit.append(tx, actor, id, 'notice.generated', { operation_id: body.operation_id ?? null, debtor_nif: debtor.nif, sha256, language, invoices: list.length, total_cents: total });
      if (body.operation_id) await this.audit.append(tx, actor, body.operation_id, 'document.generated', { kind: 'cession_notice', notice_id: id, debtor_nif: debtor.nif, sha256, language });
    });
    return { view: this.viewOf({ id, operationId: body.operation_id ?? null, language, sha256, pdfBytes: pdf.byteLength, debtorNif: debtor.nif, invoices: list.length, total, createdAt: now }), pdf };
  }

  private viewOf(v: { id: string; operationId: string | null; language: string; sha256: string; pdfBytes: number; debtorNif: string; invoices: number; total: number; createdAt: Date }): NoticeView {
    return {
      notice_id: v.id,
      operation_id: v.operationId,
      debtor_nif: v.debtorNif,
      language: v.language as NoticeView['language'],
      invoices: v.invoices,
      total_cents: v.total,
      sha256: v.sha256,
      bytes: v.pdfBytes,
      download_url: `/v1/notice/cession/${v.id}/pdf`,
      created_at: v.createdAt.toISOString(),
    };
  }

  private async row(caller: { tenantId: string; env: string }, id: string): Promise<Row> {
    const n = this.ctx.database.t.cessionNotices;
    const [row] = await this.ctx.database.db.select().from(n).where(and(eq(n.tenantId, caller.tenantId), eq(n.env, caller.env), eq(n.id, id))).limit(1);
    if (!row) throw new ApiError('resource_not_found', `No notice ${id} for this tenant in this environment.`);
    return row;
  }

  async get(caller: { tenantId: string; env: string }, id: string) {
    const r = await this.row(caller, id);
    const d = r.data as { debtor: { nif: string }; invoices: unknown[]; total_cents: number };
    return this.viewOf({ id: r.id, operationId: r.operationId, language: r.language, sha256: r.sha256, pdfBytes: Buffer.from(r.pdf, 'base64').byteLength, debtorNif: d.debtor.nif, invoices: d.invoices.length, total: d.total_cents, createdAt: r.createdAt });
  }

  async pdf(caller: { tenantId: string; env: string }, id: string) {
    const r = await this.row(caller, id);
    return { bytes: new Uint8Array(Buffer.from(r.pdf, 'base64')), sha256: r.sha256, language: r.language };
  }
}
