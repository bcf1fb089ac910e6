import { and, eq } from 'drizzle-orm';
import { electronicFormatIBAN, isValidIBAN } from 'ibantools';
import type { AppContext } from '../../context';
import { ApiError, fieldProblems, nifProblems, validationError, type FieldError } from '../../lib/errors';
import type { AuditTrail } from '../audit/service';
import type { FactoringService } from '../factoring/service';
import type { NoticeBody, NoticeView } from './model';
import { noticePdf, type Party } from './pdf';
import { foldSpaces } from '../../lib/text';
import { normaliseInvoiceNumber } from '../finance/assignment-key';
import { printsWhole } from '../../lib/pdf-fonts';

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
    const errors: FieldError[] = nifProblems({
      debtor_nif: body.debtor_nif,
      'parties.factor.nif': body.parties?.factor?.nif,
      'parties.assignor.nif': body.parties?.assignor?.nif,
      'parties.debtor.nif': body.parties?.debtor?.nif,
    });
    const today = this.ctx.clock.now().toISOString().slice(0, 10);
    const iban = electronicFormatIBAN(body.payment.iban) ?? '';
    // listed with the request's other problems; alone, 422 invalid_iban (below)
    if (!isValidIBAN(iban)) errors.push({ path: 'payment.iban', message: 'fails the IBAN format or check digits' });
    if (!body.parties?.factor) errors.push({ path: 'parties.factor', message: 'the factor (you) is required: name and NIF' });
    let assignor: Party | undefined;
    let debtor: Party | undefined;
    let invoices = body.invoices;
    let contract = body.contract_reference ?? null;
    if (body.operation_id) {
      if (body.invoices) errors.push({ path: 'invoices', message: 'comes from the operation: do not give it with operation_id' });
      if (errors.length) throw problems(errors, body.payment.iban);
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
      // names compared as people read them: case, accents' composition and runs of spaces aside
      const same = (a: string, b: string) => a === b || comparable(a) === comparable(b);
      const differs = (path: string, what: string, ours: string | null, theirs: string | undefined) => {
        if (theirs !== undefined && ours !== null && ours !== '' && !same(theirs, ours)) errors.push({ path, message: `differs from the operation's ${what} (${ours})` });
      };
      differs('parties.debtor.nif', 'debtor', d.nif, given?.nif);
      differs('parties.debtor.name', 'debtor\'s name', d.name, given?.name);
      differs('parties.assignor.nif', 'seller', op.seller.nif, a?.nif);
      differs('parties.assignor.name', 'seller\'s name', op.seller.name, a?.name);
      debtor = { nif: d.nif, name: d.name || (given?.name ?? ''), address: d.address ?? given?.address ?? null };
      assignor = { nif: op.seller.nif, name: op.seller.name || (a?.name ?? ''), address: op.seller.address ?? a?.address ?? null };
      invoices = op.invoices.filter((i) => i.debtor_nif === debtorNif).map(({ debtor_nif: _d, ...i }) => ({ ...i, atcud: i.atcud ?? undefined }));
      contract ??= op.contract_reference;
      if (!debtor.name) errors.push({ path: 'parties.debtor.name', message: 'the operation has no name for this debtor: give it' });
      if (!assignor.name) errors.push({ path: 'parties.assignor.name', message: 'the operation has no name for the seller: give it' });
    } else {
      if (!body.parties?.assignor) errors.push({ path: 'parties.assignor', message: 'required without operation_id' });
      if (!body.parties?.debtor) errors.push({ path: 'parties.debtor', message: 'required without operation_id' });
      if (!body.invoices) errors.push({ path: 'invoices', message: 'required without operation_id' });
      for (const role of ['assignor', 'debtor'] as const)
        if (body.parties?.[role] && body.parties[role].nif === undefined) errors.push({ path: `parties.${role}.nif`, message: 'is required without operation_id' });
      assignor = body.parties?.assignor && { ...body.parties.assignor, nif: body.parties.assignor.nif ?? '', address: body.parties.assignor.address ?? null };
      debtor = body.parties?.debtor && { ...body.parties.debtor, nif: body.parties.debtor.nif ?? '', address: body.parties.debtor.address ?? null };
    }
    // one credit once (numbers compared as assignments compare them), and only credits that exist:
    // the debtor would be told to pay a repeated invoice twice, or one not issued yet
    const seen = new Map<string, number>();
    (invoices ?? []).forEach((inv, i) => {
      if (!body.operation_id && inv.issue_date > today) errors.push({ path: `invoices.${i}.issue_date`, message: 'is in the future: an invoice not issued yet is not assigned' });
      if (inv.due_date < inv.issue_date) errors.push({ path: `invoices.${i}.due_date`, message: 'is before the issue date' });
      const key = normaliseInvoiceNumber(inv.number);
      if (!body.operation_id && seen.has(key)) errors.push({ path: `invoices.${i}.number`, message: `repeats invoices.${seen.get(key)}` });
      else seen.set(key, i);
    });
    // three parties: the factor notifies the debtor that the assignor's credits are now its own
    const nifs = { factor: body.parties?.factor?.nif, assignor: assignor?.nif, debtor: debtor?.nif };
    if (nifs.assignor && nifs.assignor === nifs.debtor) errors.push({ path: 'parties.debtor.nif', message: 'is the assignor\'s: a company is not its own debtor' });
    if (nifs.factor && (nifs.factor === nifs.assignor || nifs.factor === nifs.debtor))
      errors.push({ path: 'parties.factor.nif', message: `is the ${nifs.factor === nifs.assignor ? 'assignor' : 'debtor'}'s: the factor is a third party` });
    // the account is the assignee's: only payment to it discharges the debtor (Código Civil art.
    // 583.º), and the notice says so; another holder would contradict it
    const holder = body.payment.account_holder;
    const factorName = body.parties?.factor?.name;
    if (holder !== undefined && factorName && holder !== factorName && comparable(holder) !== comparable(factorName))
      errors.push({ path: 'payment.account_holder', message: `must be the factor (${factorName}): the notice tells the debtor to pay the assignee's account, the only payment that discharges the debt` });
    // a notice identifies its parties: every text it prints in characters its font has
    const prints = await printsWhole();
    const printed: [string, string | null | undefined][] = [
      ['parties.factor.name', factorName], ['parties.factor.address', body.parties?.factor?.address],
      ['parties.assignor.name', assignor?.name], ['parties.assignor.address', assignor?.address],
      ['parties.debtor.name', debtor?.name], ['parties.debtor.address', debtor?.address],
      ['place', body.place], ['contract_reference', contract], ['payment.account_holder', holder],
      ...(invoices ?? []).flatMap((inv, i): [string, string | null | undefined][] => [[`invoices.${i}.number`, inv.number], [`invoices.${i}.atcud`, inv.atcud]]),
    ];
    for (const [path, text] of printed) if (text && !prints(text)) errors.push({ path, message: 'holds characters the notice cannot print (its font has the Latin, Greek and Cyrillic scripts)' });
    if (errors.length) throw problems(errors, body.payment.iban);
    const factor = { ...body.parties!.factor, address: body.parties!.factor.address ?? null };
    const language = body.language ?? 'pt-PT';
    const now = this.ctx.clock.now();
    const id = `ntc_${Bun.randomUUIDv7()}`;
    const list = invoices!.map((i) => ({ number: i.number, atcud: i.atcud ?? null, issue_date: i.issue_date, due_date: i.due_date, amount_cents: i.amount_cents }));
    const pdf = await noticePdf({
      language,
      noticeId: id,
      place: body.place ?? null,
      date: now.toISOString().slice(0, 10),
      assignor: assignor!,
      factor,
      debtor: debtor!,
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
      await this.audit.append(tx, actor, id, 'notice.generated', { operation_id: body.operation_id ?? null, debtor_nif: debtor!.nif, sha256, language, invoices: list.length, total_cents: total });
      if (body.operation_id) await this.audit.append(tx, actor, body.operation_id, 'document.generated', { kind: 'cession_notice', notice_id: id, debtor_nif: debtor!.nif, sha256, language });
    });
    return { view: this.viewOf({ id, operationId: body.operation_id ?? null, language, sha256, pdfBytes: pdf.byteLength, debtorNif: debtor!.nif, invoices: list.length, total, createdAt: now }), pdf };
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
    return { bytes: new Uint8Array(Buffer.from(r.pdf, 'base64')), sha256: r.sha256 };
  }
}

/** The request's problems: alone, an IBAN that fails is 422 invalid_iban (as before); with others, one of the fields. */
function problems(errors: FieldError[], iban: string): ApiError {
  if (errors.length === 1 && errors[0]!.path === 'payment.iban')
    return new ApiError('invalid_iban', `${iban.slice(0, 42)} is not a valid IBAN (format or check digits).`, { fields: errors });
  return fieldProblems(errors);
}

const comparable = (name: string) => foldSpaces(name).toLocaleLowerCase('pt-PT');
