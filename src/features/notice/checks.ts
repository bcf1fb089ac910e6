import { electronicFormatIBAN, isValidIBAN } from 'ibantools';
import { ApiError, fieldProblems, isJsonObject, nifProblems, type FieldError } from '../../lib/errors';
import { isValidNif, NIF_SHAPE } from '../../lib/nif';
import { isRequestDate } from '../../lib/schemas';
import { foldSpaces } from '../../lib/text';
import { RequestProblems } from '../../lib/request-problems';
import { normaliseInvoiceNumber } from '../finance/assignment-key';
import { entityTypeOf } from '../nif/entity-types';
import { NOTICE_MAX_INVOICES, NoticeRequest } from './model';

/**
 * What a notice request is judged on before anything is looked up or written: its schema and every
 * rule the request alone decides (NIFs' check digits and holder types, the IBAN, the parties
 * required and distinct, the invoices' dates and repeats, the account holder, what the font can
 * print). Each works on the body as sent, whatever the rest of it holds, so one 422 names every
 * problem the request has, the schema's among them (docs/notice.md).
 */

/** the message of an IBAN failing its format or check digits: alone, 422 invalid_iban */
export const IBAN_FAILS = 'fails the IBAN format or check digits';

// ---- who may be a party (the NIF's holder type: nif/entity-types.ts, as KYC and GET /v1/nif judge it)

/** the factor and the assignor: legal persons (5: RNPC; 71: non-resident legal persons; 98: non-residents without a permanent establishment, a foreign company's number) */
export const LEGAL_PERSON_TYPES: ReadonlySet<string> = new Set(['legal_person', 'non_resident_legal_person', 'non_resident_no_permanent_establishment']);
/**
 * The debtor: any business or public holder; not a private person (an individual, 1–3, only as a
 * sole trader said so with `sole_trader: true`; a non-resident individual, 45, never), nor a
 * private person's estate (70, 74, 75), nor a prefix without holders or the final-consumer placeholder.
 */
export const DEBTOR_REFUSED_TYPES: ReadonlySet<string> = new Set(['individual', 'non_resident_individual', 'undivided_inheritance', 'unassigned', 'final_consumer']);

const holder = (nif: string) => `holder type "${entityTypeOf(nif).label_en}"`;

/** the factor's NIF (check digit valid) that is not a legal person's */
export function legalPersonProblem(path: string, role: 'factor', nif: string | undefined, whose = ''): FieldError[] {
  if (nif === undefined || !isValidNif(nif) || LEGAL_PERSON_TYPES.has(entityTypeOf(nif).code)) return [];
  return [{ path, message: `${whose}${holder(nif)}: the ${role} must be a legal person (a NIF starting with 5, 71 or 98)` }];
}

/**
 * The assignor's NIF (check digit valid) that may not be one: a legal person, or an individual as a
 * sole trader said so with `sole_trader: true` (an empresário em nome individual assigns its trade
 * receivables as a company does); a sole_trader flag that contradicts the NIF.
 */
export function assignorProblems(path: string, nif: string | undefined, soleTrader: unknown, flagPath: string, whose = ''): FieldError[] {
  if (nif === undefined || !isValidNif(nif)) return [];
  const type = entityTypeOf(nif).code;
  if (soleTrader === true && type !== 'individual' && type !== 'sole_trader') return [{ path: flagPath, message: `is for an assignor whose NIF is an individual's (starting with 1, 2 or 3): ${nif} has ${holder(nif)}` }];
  if (type === 'individual' && soleTrader !== true)
    return [{ path, message: `${whose}${holder(nif)}: an individual is an assignor only as a sole trader (empresário em nome individual) assigning its trade receivables; say so with parties.assignor.sole_trader: true` }];
  if (type !== 'individual' && type !== 'sole_trader' && !LEGAL_PERSON_TYPES.has(type)) return [{ path, message: `${whose}${holder(nif)}: the assignor must be a legal person (a NIF starting with 5, 71 or 98) or a sole trader` }];
  return [];
}

/** the debtor's NIF (check digit valid) that may not be a debtor's, and a sole_trader flag that contradicts it */
export function debtorProblems(path: string, nif: string | undefined, soleTrader: unknown, flagPath: string, whose = ''): FieldError[] {
  if (nif === undefined || !isValidNif(nif)) return [];
  const type = entityTypeOf(nif);
  if (soleTrader === true && type.code !== 'individual' && type.code !== 'sole_trader')
    return [{ path: flagPath, message: `is for a debtor whose NIF is an individual's (starting with 1, 2 or 3): ${nif} has ${holder(nif)}` }];
  if (type.code === 'individual' && soleTrader !== true)
    return [{ path, message: `${whose}${holder(nif)}: an individual is a debtor only as a sole trader (empresário em nome individual) acting in its trade; say so with parties.debtor.sole_trader: true` }];
  if (DEBTOR_REFUSED_TYPES.has(type.code) && type.code !== 'individual')
    return [{ path, message: `${whose}${holder(nif)}: the debtor must be a company, a public body or another business holder (not a private person or a private person's estate)` }];
  return [];
}

// ---- the request alone

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined => (isJsonObject(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
/** a NIF of the right shape (a wrong one is the schema's to name) */
const nifOf = (v: unknown): string | undefined => (typeof v === 'string' && NIF_SHAPE.test(v) ? v : undefined);
/** names compared as people read them: case, accents' composition and runs of spaces aside */
export const comparable = (name: string) => foldSpaces(name).toLocaleLowerCase('pt-PT');
export const sameName = (a: string, b: string) => a === b || comparable(a) === comparable(b);

/**
 * The problems the request decides alone, on the body as sent (a field of the wrong kind is the
 * schema's problem: skipped here). With operation_id, the parties' NIFs and the invoices come from
 * the operation and are judged once it is read (the service).
 */
export function requestProblems(body: Json, today: string, prints: (text: string) => boolean): FieldError[] {
  const parties = obj(body.parties);
  const [factor, assignor, debtor] = [obj(parties?.factor), obj(parties?.assignor), obj(parties?.debtor)];
  const payment = obj(body.payment);
  const fromOperation = body.operation_id !== undefined;
  const errors: FieldError[] = nifProblems({
    debtor_nif: nifOf(body.debtor_nif),
    'parties.factor.nif': nifOf(factor?.nif),
    'parties.assignor.nif': nifOf(assignor?.nif),
    'parties.debtor.nif': nifOf(debtor?.nif),
  });
  // who may be which party (with an operation, its own assignor and debtor once read)
  errors.push(...legalPersonProblem('parties.factor.nif', 'factor', nifOf(factor?.nif)));
  if (!fromOperation) {
    errors.push(...assignorProblems('parties.assignor.nif', nifOf(assignor?.nif), assignor?.sole_trader, 'parties.assignor.sole_trader'));
    errors.push(...debtorProblems('parties.debtor.nif', nifOf(debtor?.nif), debtor?.sole_trader, 'parties.debtor.sole_trader'));
  }
  // listed with the request's other problems; alone, 422 invalid_iban
  const iban = str(payment?.iban);
  if (iban !== undefined && !isValidIBAN(electronicFormatIBAN(iban) ?? '')) errors.push({ path: 'payment.iban', message: IBAN_FAILS });
  if (!factor) errors.push({ path: 'parties.factor', message: 'the factor (you) is required: name and NIF' });
  // (judged on the first NOTICE_MAX_INVOICES + 1: a longer list is the schema's "at most" problem)
  const invoices = Array.isArray(body.invoices) ? body.invoices.slice(0, NOTICE_MAX_INVOICES + 1) : [];
  if (fromOperation) {
    if (body.invoices !== undefined) errors.push({ path: 'invoices', message: 'comes from the operation: do not give it with operation_id' });
  } else {
    if (!assignor) errors.push({ path: 'parties.assignor', message: 'required without operation_id' });
    if (!debtor) errors.push({ path: 'parties.debtor', message: 'required without operation_id' });
    if (body.invoices === undefined) errors.push({ path: 'invoices', message: 'required without operation_id' });
    for (const [role, p] of [['assignor', assignor], ['debtor', debtor]] as const)
      if (p && p.nif === undefined) errors.push({ path: `parties.${role}.nif`, message: 'is required without operation_id' });
    errors.push(...invoiceProblems(invoices, { today, repeats: true }));
    // three parties: the factor notifies the debtor that the assignor's credits are now its own
    errors.push(...distinctParties({ factor: nifOf(factor?.nif), assignor: nifOf(assignor?.nif), debtor: nifOf(debtor?.nif) }));
  }
  // the account is the assignee's: only payment to it discharges the debtor (Código Civil art.
  // 583.º), and the notice says so; another holder would contradict it
  errors.push(...holderProblems(str(payment?.account_holder), str(factor?.name)));
  // a notice identifies its parties: every text it prints in characters its font has
  errors.push(
    ...unprintable(
      [
        ['parties.factor.name', factor?.name], ['parties.factor.address', factor?.address],
        ['parties.assignor.name', assignor?.name], ['parties.assignor.address', assignor?.address],
        ['parties.debtor.name', debtor?.name], ['parties.debtor.address', debtor?.address],
        ['place', body.place], ['contract_reference', body.contract_reference], ['payment.account_holder', payment?.account_holder],
        ...(fromOperation ? [] : invoices.flatMap((inv, i): [string, unknown][] => [[`invoices.${i}.number`, obj(inv)?.number], [`invoices.${i}.atcud`, obj(inv)?.atcud]])),
      ],
      prints,
    ),
  );
  return errors;
}

/** an invoice due before its issue date; given invoices also: one issued after today, a number repeated (compared as assignments compare them) */
export function invoiceProblems(invoices: unknown[], o: { today?: string; repeats: boolean }): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Map<string, number>();
  invoices.forEach((raw, i) => {
    const inv = obj(raw);
    const [issue, due, number] = [str(inv?.issue_date), str(inv?.due_date), str(inv?.number)];
    // one credit once, and only credits that exist: the debtor would be told to pay a repeated
    // invoice twice, or one not issued yet
    if (o.today && issue && isRequestDate(issue) && issue > o.today) errors.push({ path: `invoices.${i}.issue_date`, message: 'is in the future: an invoice not issued yet is not assigned' });
    if (issue && due && isRequestDate(issue) && isRequestDate(due) && due < issue) errors.push({ path: `invoices.${i}.due_date`, message: 'is before the issue date' });
    if (!o.repeats || number === undefined) return;
    const key = normaliseInvoiceNumber(number);
    if (seen.has(key)) errors.push({ path: `invoices.${i}.number`, message: `repeats invoices.${seen.get(key)}` });
    else seen.set(key, i);
  });
  return errors;
}

/** three parties: the assignor is not its own debtor, the factor is neither */
export function distinctParties(nifs: { factor?: string | undefined; assignor?: string | undefined; debtor?: string | undefined }): FieldError[] {
  const errors: FieldError[] = [];
  if (nifs.assignor && nifs.assignor === nifs.debtor) errors.push({ path: 'parties.debtor.nif', message: 'is the assignor\'s: a company is not its own debtor' });
  if (nifs.factor && (nifs.factor === nifs.assignor || nifs.factor === nifs.debtor))
    errors.push({ path: 'parties.factor.nif', message: `is the ${nifs.factor === nifs.assignor ? 'assignor' : 'debtor'}'s: the factor is a third party` });
  return errors;
}

function holderProblems(holder: string | undefined, factorName: string | undefined): FieldError[] {
  if (holder === undefined || !factorName || sameName(holder, factorName)) return [];
  return [{ path: 'payment.account_holder', message: `must be the factor (${factorName}): the notice tells the debtor to pay the assignee's account, the only payment that discharges the debt` }];
}

/** the texts (path, value) holding a character the notice's font lacks */
export function unprintable(texts: [string, unknown][], prints: (text: string) => boolean): FieldError[] {
  return texts.flatMap(([path, text]) => (typeof text === 'string' && text && !prints(text) ? [{ path, message: 'holds characters the notice cannot print (its font has the Latin, Greek and Cyrillic scripts)' }] : []));
}

// ---- the schema's problems, beside the request's

/**
 * Every problem of a body as sent, at once: the schema's, then the request's own (a field the
 * schema already names, or one inside it, is not named twice). A field the request does not have
 * is refused at any depth: a misspelt one would be left out of a legal notice.
 */
export function bodyProblems(body: Json, today: string, prints: (text: string) => boolean): FieldError[] {
  const problems = new RequestProblems(NoticeRequest, body, { refuseUnknown: true });
  const named = problems.fields.map((f) => f.path);
  for (const f of requestProblems(body, today, prints)) if (!named.some((p) => f.path === p || f.path.startsWith(`${p}.`))) problems.add(f);
  return problems.done();
}

/** The request's problems as one 422: alone, an IBAN that fails is invalid_iban and NIFs failing their check digit invalid_nif; otherwise validation_failed listing them all. */
export function noticeProblems(errors: FieldError[], iban: unknown): ApiError {
  if (errors.length === 1 && errors[0]!.path === 'payment.iban' && errors[0]!.message === IBAN_FAILS)
    return new ApiError('invalid_iban', `${String(iban).slice(0, 42)} is not a valid IBAN (format or check digits).`, { fields: errors });
  return fieldProblems(errors);
}
