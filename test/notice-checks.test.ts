/**
 * POST /v1/notice/cession: who may be which party (the NIF's holder type: the factor and the
 * assignor legal persons, the debtor a business, an individual only as a declared sole trader), and
 * every problem of a request in one 422, the schema's beside the route's own (docs/notice.md).
 * Nothing is written on a refusal.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import * as mupdf from 'mupdf';
import { nifCheckDigit } from '../src/lib/nif';
import { ApiError } from '../src/lib/errors';
import { auditTrail } from '../src/features/audit';
import type { FactoringService } from '../src/features/factoring/service';
import { NoticeService } from '../src/features/notice/service';
import { expectError, suiteApp } from './helpers';
setDefaultTimeout(30_000);

const h = suiteApp();

/** a NIF with a valid check digit from its first eight digits */
const nif = (first8: string) => `${first8}${nifCheckDigit(first8)}`;
const N = {
  individual1: nif('12345678'),
  individual2: nif('21234567'),
  individual3: nif('30000001'),
  nonResidentIndividual45: nif('45000000'),
  legal5: nif('51000000'),
  public6: nif('60000001'),
  inheritance70: nif('70000001'),
  nonResidentLegal71: nif('71000001'),
  fund72: nif('72000001'),
  soleTrader8: nif('80000001'),
  condominium90: nif('90000001'),
  nonResident98: nif('98000001'),
  civil99: nif('99000002'),
  unassigned0: nif('01000000'),
  finalConsumer: '999999990',
};
const FACTOR = { name: 'Factor Exemplo, S.A.', nif: '599000015' };
const ASSIGNOR = { name: 'Metalomecânica Exemplo, Lda', nif: '599000031' };
const DEBTOR = { name: 'Distribuidora Alfa, S.A.', nif: '599000023' };
const IBAN = 'PT50000201231234567890154';
const given = (parties: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  parties: { assignor: ASSIGNOR, factor: FACTOR, debtor: DEBTOR, ...parties },
  invoices: [{ number: 'FT 2026/118', atcud: 'JJ4FGTXK-118', issue_date: '2026-11-02', due_date: '2027-01-31', amount_cents: 1_845_000 }],
  payment: { iban: IBAN },
  ...extra,
});
const post = (body: unknown) => h.json('POST', '/v1/notice/cession', { key: h.key, body });
const stored = async () => (await h.ctx.database.db.select().from(h.ctx.database.t.cessionNotices)).length;
/** the request refused (422 with the error body), nothing stored: its fields */
async function refused(body: unknown, code = 'validation_failed') {
  const before = await stored();
  const b = expectError(await post(body), 422, code);
  expect(await stored()).toBe(before);
  return b.fields as { path: string; message: string }[];
}

describe('who may be a party of a notice', () => {
  test('the factor is a legal person: an individual\u2019s NIF, a public body\u2019s, an estate\u2019s, a fund\u2019s, an unassigned or placeholder one are 422 on parties.factor.nif', async () => {
    for (const [kind, n] of Object.entries(N).filter(([k]) => !['legal5', 'nonResidentLegal71', 'nonResident98'].includes(k))) {
      const fields = await refused(given({ factor: { ...FACTOR, nif: n } }));
      expect({ kind, fields }).toEqual({ kind, fields: [{ path: 'parties.factor.nif', message: expect.stringContaining('the factor must be a legal person (a NIF starting with 5, 71 or 98)') }] });
    }
    expect((await refused(given({ factor: { ...FACTOR, nif: N.individual2 } })))[0]!.message).toBe('holder type "Individual": the factor must be a legal person (a NIF starting with 5, 71 or 98)');
    for (const n of [N.legal5, N.nonResidentLegal71, N.nonResident98]) expect((await post(given({ factor: { ...FACTOR, nif: n } }))).status).toBe(201);
  });

  test('the assignor: a legal person, or a sole trader (an individual only said so with sole_trader: true)', async () => {
    for (const n of [N.nonResidentIndividual45, N.public6, N.finalConsumer])
      expect(await refused(given({ assignor: { ...ASSIGNOR, nif: n } }))).toEqual([{ path: 'parties.assignor.nif', message: expect.stringContaining('the assignor must be a legal person (a NIF starting with 5, 71 or 98) or a sole trader') }]);
    for (const n of [N.individual1, N.individual3])
      expect(await refused(given({ assignor: { ...ASSIGNOR, nif: n } }))).toEqual([{ path: 'parties.assignor.nif', message: expect.stringContaining('say so with parties.assignor.sole_trader: true') }]);
    expect(await refused(given({ assignor: { ...ASSIGNOR, sole_trader: true } }))).toEqual([{ path: 'parties.assignor.sole_trader', message: expect.stringContaining("is for an assignor whose NIF is an individual's") }]);
    for (const n of [N.nonResidentLegal71, N.nonResident98, N.soleTrader8]) expect((await post(given({ assignor: { ...ASSIGNOR, nif: n } }))).status).toBe(201);
    const sole = await post(given({ assignor: { name: 'Maria Sousa', nif: N.individual1, sole_trader: true } }));
    expect(sole.status).toBe(201);
  });

  test('the debtor: a company, a public body or another business holder; not a private person, an estate, an unassigned or placeholder number', async () => {
    for (const n of [N.public6, N.nonResidentLegal71, N.fund72, N.soleTrader8, N.condominium90, N.nonResident98, N.civil99]) {
      const r = await post(given({ debtor: { ...DEBTOR, nif: n } }));
      expect({ n, status: r.status }).toEqual({ n, status: 201 });
      expect(r.body.debtor_nif).toBe(n);
    }
    for (const n of [N.nonResidentIndividual45, N.inheritance70, N.unassigned0, N.finalConsumer])
      expect(await refused(given({ debtor: { ...DEBTOR, nif: n } }))).toEqual([{ path: 'parties.debtor.nif', message: expect.stringContaining('the debtor must be a company, a public body or another business holder') }]);
  });

  test('an individual is a debtor only as a sole trader, said with sole_trader: true (printed beside its name); the flag with a company\u2019s NIF is 422', async () => {
    for (const n of [N.individual1, N.individual2, N.individual3])
      expect(await refused(given({ debtor: { ...DEBTOR, nif: n } }))).toEqual([
        { path: 'parties.debtor.nif', message: 'holder type "Individual": an individual is a debtor only as a sole trader (empresário em nome individual) acting in its trade; say so with parties.debtor.sole_trader: true' },
      ]);
    const soleTrader = { name: 'João Silva', nif: N.individual2, address: 'Rua Direita 3, 3500-000 Viseu', sole_trader: true };
    for (const [language, label] of [['pt-PT', 'João Silva (empresário em nome individual) — NIF'], ['en', 'João Silva (sole trader) — Tax number (NIF)']] as const) {
      const res = await h.call('POST', '/v1/notice/cession', { key: h.key, body: given({ debtor: soleTrader }, { language }), headers: { accept: 'application/pdf' } });
      expect(res.status).toBe(201);
      const text = mupdf.Document.openDocument(new Uint8Array(await res.arrayBuffer()), 'application/pdf').loadPage(0).toStructuredText('preserve-whitespace').asText();
      expect(text).toContain(`${label} ${N.individual2}`);
    }
    // a non-resident individual (45) has no trade here: refused even so
    expect(await refused(given({ debtor: { ...soleTrader, nif: N.nonResidentIndividual45 } }))).toEqual([{ path: 'parties.debtor.sole_trader', message: expect.stringContaining('is for a debtor whose NIF is an individual\u2019s'.replace('\u2019', "'")) }]);
    expect(await refused(given({ debtor: { ...DEBTOR, sole_trader: true } }))).toEqual([
      { path: 'parties.debtor.sole_trader', message: `is for a debtor whose NIF is an individual's (starting with 1, 2 or 3): ${DEBTOR.nif} has holder type "Legal person (company or organisation)"` },
    ]);
    // false is the default: a company as before
    expect((await post(given({ debtor: { ...DEBTOR, sole_trader: false } }))).status).toBe(201);
  });

  test('from an operation: its seller and its debtor are judged as given ones are (named where the request names them, else on operation_id)', async () => {
    // the sandbox's companies are all legal persons: an operation of a live book, as the factoring service hands it over
    const opId = 'fop_00000000-0000-7000-8000-00000000000a';
    const operation = (seller: string, debtor: string) => ({
      operation_id: opId, status: 'funded', contract_reference: 'CF-1', seller: { nif: seller, name: 'Vendedor', address: null },
      debtors: [{ nif: debtor, name: 'João Silva', address: null }],
      invoices: [{ number: 'S 1/1', atcud: null, issue_date: '2026-11-02', due_date: '2027-01-21', amount_cents: 100_000, debtor_nif: debtor }],
    });
    const { tenant_id } = await h.tenant();
    const caller = { tenantId: tenant_id, env: 'sandbox', keyId: null, requestId: null };
    const notices = (op: ReturnType<typeof operation>) => new NoticeService(h.ctx, { forNotice: async () => op } as unknown as FactoringService, auditTrail(h.ctx));
    const fields = async (op: ReturnType<typeof operation>, body: Record<string, unknown>) => {
      const before = await stored();
      const err = await notices(op).create(caller, { operation_id: opId, payment: { iban: IBAN }, ...body } as never).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect(await stored()).toBe(before);
      return [(err as ApiError).code, (err as ApiError).extra.fields];
    };
    const sole = operation(ASSIGNOR.nif, N.individual2);
    expect(await fields(sole, { parties: { factor: FACTOR } })).toEqual(['validation_failed', [
      { path: 'operation_id', message: `the operation's debtor ${N.individual2}: holder type "Individual": an individual is a debtor only as a sole trader (empresário em nome individual) acting in its trade; say so with parties.debtor.sole_trader: true` },
    ]]);
    expect(await fields(sole, { debtor_nif: N.individual2, parties: { factor: FACTOR } })).toEqual(['validation_failed', [{ path: 'debtor_nif', message: expect.stringContaining('sole_trader: true') }]]);
    const soleSeller = operation(N.individual3, DEBTOR.nif);
    expect(await fields(soleSeller, { parties: { factor: FACTOR } })).toEqual(['validation_failed', [
      { path: 'operation_id', message: `the operation's seller ${N.individual3}: holder type "Individual": an individual is an assignor only as a sole trader (empresário em nome individual) assigning its trade receivables; say so with parties.assignor.sole_trader: true` },
    ]]);
    // an operation of a sole trader's receivables gets its notice once the request says so
    const bySoleSeller = await notices(soleSeller).create(caller, { operation_id: opId, parties: { factor: FACTOR, assignor: { name: 'Vendedor', sole_trader: true } }, payment: { iban: IBAN } } as never);
    expect(bySoleSeller.view).toMatchObject({ operation_id: opId });
    expect(mupdf.Document.openDocument(bySoleSeller.pdf, 'application/pdf').loadPage(0).toStructuredText('preserve-whitespace').asText()).toContain(`(empresário em nome individual) — NIF ${N.individual3}`);
    const ok = await notices(sole).create(caller, { operation_id: opId, parties: { factor: FACTOR, debtor: { name: 'João Silva', sole_trader: true } }, payment: { iban: IBAN } } as never);
    expect(ok.view).toMatchObject({ operation_id: opId, debtor_nif: N.individual2, invoices: 1 });
    expect(mupdf.Document.openDocument(ok.pdf, 'application/pdf').loadPage(0).toStructuredText('preserve-whitespace').asText()).toContain(`João Silva (empresário em nome individual) — NIF ${N.individual2}`);
  });
});

describe('every problem in one 422: the schema\u2019s beside the route\u2019s own', () => {
  test('a missing field, a wrong type, a NIF failing its check digit, a bad IBAN, parties not distinct and an unknown field, listed together', async () => {
    const body = given(
      { factor: { nif: DEBTOR.nif }, assignor: { ...ASSIGNOR, nif: '599000032' } },
      { invoices: [{ number: 'FT 2026/118', issue_date: '2026-11-02', due_date: '2027-01-31', amount_cents: '1845000' }], payment: { iban: 'PT50000201231234567890155' }, langauge: 'en' },
    );
    expect(await refused(body)).toEqual([
      { path: 'langauge', message: 'is not a field of this request' },
      { path: 'parties.factor.name', message: 'is required' },
      { path: 'invoices.0.amount_cents', message: 'must be an integer from 1 to 10000000000000' },
      { path: 'parties.assignor.nif', message: 'fails the NIF check digit' },
      { path: 'payment.iban', message: 'fails the IBAN format or check digits' },
      { path: 'parties.factor.nif', message: "is the debtor's: the factor is a third party" },
    ]);
  });

  test('a holder type refused and a due date before the issue date beside a wrong language', async () => {
    const body = given({ debtor: { ...DEBTOR, nif: N.individual2 } }, { language: 'fr', invoices: [{ number: 'FT 1', issue_date: '2026-11-10', due_date: '2026-11-01', amount_cents: 1 }] });
    expect((await refused(body)).map((f) => f.path)).toEqual(['language', 'parties.debtor.nif', 'invoices.0.due_date']);
  });

  test('the IBAN or a NIF alone keep their codes; with a schema problem they are listed in validation_failed', async () => {
    expect(await refused(given({}, { payment: { iban: 'PT50000201231234567890155' } }), 'invalid_iban')).toEqual([{ path: 'payment.iban', message: 'fails the IBAN format or check digits' }]);
    expect(await refused(given({ debtor: { ...DEBTOR, nif: '599000024' } }), 'invalid_nif')).toEqual([{ path: 'parties.debtor.nif', message: 'fails the NIF check digit' }]);
    expect(await refused(given({ debtor: { ...DEBTOR, nif: '599000024' } }, { payment: { iban: 'PT50000201231234567890155' }, place: '' }))).toEqual([
      { path: 'place', message: 'must be at least 1 character' },
      { path: 'parties.debtor.nif', message: 'fails the NIF check digit' },
      { path: 'payment.iban', message: 'fails the IBAN format or check digits' },
    ]);
    // an IBAN the schema refuses (too short) is the schema's problem: validation_failed, named once
    expect(await refused(given({}, { payment: { iban: 'PT50' } }))).toEqual([{ path: 'payment.iban', message: 'must be at least 15 characters' }]);
  });

  test('with an operation: the request\u2019s problems are named before it is read (an unknown one is not 404 then)', async () => {
    const body = { operation_id: 'fop_00000000-0000-7000-8000-000000000000', parties: { factor: { ...FACTOR, nif: N.individual2, address: 7 } }, payment: { iban: 'PT50000201231234567890155' }, invoices: [] };
    expect(await refused(body)).toEqual([
      { path: 'parties.factor.address', message: 'must be a string' },
      { path: 'invoices', message: 'must have at least 1 item' },
      { path: 'parties.factor.nif', message: expect.stringContaining('the factor must be a legal person') },
      { path: 'payment.iban', message: 'fails the IBAN format or check digits' },
    ]);
    expectError(await post({ ...body, parties: { factor: FACTOR }, payment: { iban: IBAN }, invoices: undefined }), 404, 'resource_not_found');
  });

  test('a body that is not an object is as on every route; a field the notice does not have is refused, even alone (it would be left out of a legal notice)', async () => {
    expect(await refused([given()])).toEqual([{ path: '(body)', message: 'must be a JSON object' }]);
    expect(await refused({ ...given(), note: 'x' })).toEqual([{ path: 'note', message: 'is not a field of this request' }]);
    // the key first: a caller without one (or without the scope) learns nothing of the body's problems
    expectError(await h.json('POST', '/v1/notice/cession', { body: { payment: { iban: 'x' } } }), 401, 'missing_api_key');
  });
});
