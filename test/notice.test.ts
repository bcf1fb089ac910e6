/**
 * POST /v1/notice/cession (issue 21): the notice of assignment as a PDF whose text is read back
 * (MuPDF): pt-PT with its accents and en, parties, invoices, totals, the IBAN, the legal basis, the
 * acknowledgement block, many pages; from an operation (its audit trail records the document) or
 * from given parties; stored with its SHA-256 and re-downloadable; errors, scope, tenants.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import * as mupdf from 'mupdf';
import { NoticeResponse } from '../src/features/notice/model';
import { money } from '../src/features/finance/money';
import { expectError, suiteApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

const h = suiteApp();

const FACTOR = { name: 'Factor Exemplo, S.A.', nif: '599000015', address: 'Av. da Liberdade 1, 1250-096 Lisboa' };
const given = (extra: Record<string, unknown> = {}) => ({
  parties: { assignor: { name: 'Metalomecânica Conceição & Irmãos, Lda', nif: '599000031', address: 'Rua da Estação 5, 3800-000 Aveiro' }, factor: FACTOR, debtor: { name: 'Distribuidora Alfa, S.A.', nif: '599000023', address: 'Rua do Comércio 10, 4000-000 Porto' } },
  invoices: [
    { number: 'FT 2026/118', atcud: 'JJ4FGTXK-118', issue_date: '2026-11-02', due_date: '2027-01-31', amount_cents: 1_845_000 },
    { number: 'FT 2026/121', issue_date: '2026-11-10', due_date: '2027-02-08', amount_cents: 950_033 },
  ],
  payment: { iban: 'PT50 0002 0123 1234 5678 9015 4', bic: 'CGDIPTPL' },
  contract_reference: 'CF-2026-0042',
  place: 'Lisboa',
  ...extra,
});
/** the text of every page, as a reader's copy-paste would give it */
function pdfText(bytes: Uint8Array) {
  const d = mupdf.Document.openDocument(bytes, 'application/pdf');
  const pages: string[] = [];
  for (let i = 0; i < d.countPages(); i++) pages.push(d.loadPage(i).toStructuredText('preserve-whitespace').asText());
  return pages;
}
const post = (body: unknown, headers: Record<string, string> = {}, k = h.key) => h.call('POST', '/v1/notice/cession', { key: k, body, headers });

describe('POST /v1/notice/cession', () => {
  test('an Accept naming neither JSON nor the PDF (nor application/* or */*) is 406 not_acceptable with Vary: Accept, and no notice is made', async () => {
    const listed = async () => (await h.ctx.database.db.select().from(h.ctx.database.t.cessionNotices)).length;
    const before = await listed();
    for (const accept of ['text/html', 'image/png, text/plain', 'application/pdf;q=0, text/html']) {
      const r = await h.json('POST', '/v1/notice/cession', { key: h.key, body: given(), headers: { accept } });
      const b = expectError(r, 406, 'not_acceptable');
      expect(b.message).toBe('The Accept header names none of application/json, application/pdf (nor their type/* or */*): this route answers only those.');
      expect(r.headers.get('vary')).toBe('Accept');
    }
    expect(await listed()).toBe(before);
    expect((await post(given(), { accept: 'application/*' })).status).toBe(201);
    expect((await post(given(), { accept: 'text/html, */*;q=0.1' })).status).toBe(201);
  });

  test('the PDF in pt-PT: parties with NIFs and addresses, invoices, total, the IBAN, the legal basis, the acknowledgement', async () => {
    const res = await post(given(), { accept: 'application/pdf' });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('vary')).toBe('Accept');
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(res.headers.get('etag')).toBe(`"${new Bun.CryptoHasher('sha256').update(bytes).digest('hex')}"`);
    // as the CSRD report's PDF: its language, and its SHA-256 as RFC 9530's Repr-Digest
    expect(res.headers.get('content-language')).toBe('pt-PT');
    expect(res.headers.get('repr-digest')).toBe(`sha-256=:${new Bun.CryptoHasher('sha256').update(bytes).digest('base64')}:`);
    const text = pdfText(bytes).join('\n');
    for (const s of [
      'Notificação de cessão de créditos', 'Metalomecânica Conceição & Irmãos, Lda', 'NIF 599000031', 'Rua do Comércio 10, 4000-000 Porto', 'Factor Exemplo, S.A.',
      'FT 2026/118', 'JJ4FGTXK-118', '31/01/2027', '18 450,00 €', '9 500,33 €', '27 950,33 €', 'PT50 0002 0123 1234 5678 9015 4', 'CGDIPTPL',
      'artigo 583.º do Código Civil', 'art. 584.º', 'Declaração do devedor', 'compensações', 'Assinatura', 'CF-2026-0042', 'Lisboa', 'Página 1 de 1',
    ])
      expect(text).toContain(s);
  });

  test('names in any script the font has print as sent (Polish, Czech, Greek, Cyrillic), a bidi override left out; a character it lacks (an ideograph) is 422 on its field, never printed as \uFFFD', async () => {
    const debtor = { name: 'Łódź Trading Sp. z o.o.', nif: '599000023', address: 'ul. Świętokrzyska 12, 00-916 Warszawa' };
    const assignor = { name: 'Ελληνική Εμπορική Α.Ε.', nif: '599000031', address: 'Žižkova 7, 602 00 Brno' };
    const factor = { ...FACTOR, name: 'ООО Ромашка Факторинг' };
    const refused = await h.json('POST', '/v1/notice/cession', { key: h.key, body: given({ parties: { assignor: { ...assignor, name: '北京贸易有限公司' }, factor, debtor }, invoices: [{ number: 'FT 2026/7 株', issue_date: '2026-11-02', due_date: '2027-01-31', amount_cents: 100_00 }] }) });
    expect(expectError(refused, 422, 'validation_failed').fields.map((f: { path: string }) => f.path)).toEqual(['parties.assignor.name', 'invoices.0.number']);
    const body = given({ parties: { assignor, factor, debtor }, invoices: [{ number: 'FT 2026/7 \u{1F600}', issue_date: '2026-11-02', due_date: '2027-01-31', amount_cents: 100_00 }], place: 'Lisboa\u202E' });
    const res = await post(body, { accept: 'application/pdf' });
    expect(res.status).toBe(201);
    const bytes = new Uint8Array(await res.arrayBuffer());
    const text = pdfText(bytes).join('\n');
    expect(text).not.toContain('\uFFFD');
    for (const s of [debtor.name, debtor.address, assignor.name, assignor.address, factor.name, 'FT 2026/7 \u{1F600}', 'Lisboa, ']) expect(text).toContain(s);
    expect(text).not.toContain('\u202E');
    expect(new TextDecoder('latin1').decode(bytes)).toContain('/BaseFont /DejaVuSansCondensed');
  });

  test('the account to pay is the factor\'s: another holder is 422 on payment.account_holder; the factor\'s name as written otherwise is taken', async () => {
    const base = given({});
    const other = await h.json('POST', '/v1/notice/cession', { key: h.key, body: { ...base, payment: { ...base.payment, account_holder: base.parties.assignor.name } } });
    expect(expectError(other, 422, 'validation_failed').fields).toEqual([{ path: 'payment.account_holder', message: expect.stringContaining('must be the factor') }]);
    const same = await h.json('POST', '/v1/notice/cession', { key: h.key, body: { ...base, payment: { ...base.payment, account_holder: `  ${FACTOR.name.toUpperCase()} ` } } });
    expect(same.status).toBe(201);
  });

  test('JSON by default, stored: the PDF downloads byte for byte; en on request; many invoices make pages', async () => {
    const r = await h.json('POST', '/v1/notice/cession', { key: h.key, body: given({ language: 'en' }) });
    expect(r.status).toBe(201);
    expect(Value.Check(NoticeResponse, r.body)).toBe(true);
    expect(r.body).toMatchObject({ language: 'en', invoices: 2, total_cents: 2_795_033, operation_id: null, debtor_nif: '599000023', download_url: `/v1/notice/cession/${r.body.notice_id}/pdf` });
    const dl = await h.call('GET', r.body.download_url, { key: h.key });
    const bytes = new Uint8Array(await dl.arrayBuffer());
    expect(new Bun.CryptoHasher('sha256').update(bytes).digest('hex')).toBe(r.body.sha256);
    expect(bytes.byteLength).toBe(r.body.bytes);
    expect([dl.headers.get('content-language'), dl.headers.get('repr-digest')]).toEqual(['en', `sha-256=:${Buffer.from(r.body.sha256, 'hex').toString('base64')}:`]);
    expect((await h.call('GET', r.body.download_url, { key: h.key, headers: { 'if-none-match': `"${r.body.sha256}"` } })).status).toBe(304);
    const text = pdfText(bytes).join('\n');
    for (const s of ['Notice of assignment of receivables', '€18,450.00', '€27,950.33', 'article 583', 'Debtor’s acknowledgement', 'set-offs']) expect(text).toContain(s);
    expect((await h.json('GET', `/v1/notice/cession/${r.body.notice_id}`, { key: h.key })).body).toEqual(r.body);
    const many = given({ invoices: Array.from({ length: 80 }, (_, i) => ({ number: `FT 2026/${1000 + i}`, issue_date: '2026-11-02', due_date: '2027-01-31', amount_cents: 10_000 + i })) });
    const pages = pdfText(new Uint8Array(await (await post(many, { accept: 'application/pdf' })).arrayBuffer()));
    expect(pages.length).toBeGreaterThan(1);
    expect(pages.join('\n')).toContain('FT 2026/1079');
    expect(pages.at(-1)).toContain(`Página ${pages.length} de ${pages.length}`);
    expect(money(123456789, 'pt-PT')).toBe('1 234 567,89 €');
  });

  test('from a factoring operation: its parties and one debtor\u2019s invoices; the operation\u2019s trail records the document', async () => {
    const op = await h.json('POST', '/v1/factoring/operation', { key: h.key, body: { seller_nif: '599000031', seller_name: 'Metalomecânica Exemplo, Lda', modality: 'recourse', contract_reference: 'CF-9', invoices: [
      { number: 'N 1/1', debtor_nif: '599000015', debtor_name: 'Alfa, S.A.', issue_date: '2026-11-02', due_date: '2027-01-21', amount_cents: 100_000 },
      { number: 'N 1/2', debtor_nif: '599000023', debtor_name: 'Beta, Lda', issue_date: '2026-11-02', due_date: '2027-01-21', amount_cents: 200_000 },
    ] } });
    expect(op.status).toBe(201);
    const id = op.body.operation_id;
    const two = await h.json('POST', '/v1/notice/cession', { key: h.key, body: { operation_id: id, parties: { factor: FACTOR }, payment: { iban: 'PT50000201231234567890154' } } });
    expect(expectError(two, 422, 'validation_failed').fields[0].path).toBe('debtor_nif');
    const r = await h.json('POST', '/v1/notice/cession', { key: h.key, body: { operation_id: id, debtor_nif: '599000023', parties: { factor: FACTOR }, payment: { iban: 'PT50000201231234567890154' } } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ operation_id: id, debtor_nif: '599000023', invoices: 1, total_cents: 200_000 });
    const text = pdfText(new Uint8Array(await (await h.call('GET', r.body.download_url, { key: h.key })).arrayBuffer())).join('\n');
    for (const s of ['Beta, Lda', 'Metalomecânica Exemplo, Lda', 'N 1/2', 'CF-9', id]) expect(text).toContain(s);
    expect(text).not.toContain('N 1/1');
    const trail = (await h.json('GET', `/v1/audit/${id}`, { key: h.key })).body;
    expect(trail.verified).toBe(true);
    expect(trail.entries.at(-1)).toMatchObject({ type: 'document.generated', data: { kind: 'cession_notice', notice_id: r.body.notice_id, sha256: r.body.sha256 } });
    expect((await h.json('GET', `/v1/audit/${r.body.notice_id}`, { key: h.key })).body.entries[0].type).toBe('notice.generated');
    // a cancelled operation has nothing to notify
    await h.json('POST', `/v1/factoring/operation/${id}/cancel`, { key: h.key, body: { reason: 'withdrawn' } });
    expectError(await h.json('POST', '/v1/notice/cession', { key: h.key, body: { operation_id: id, debtor_nif: '599000023', parties: { factor: FACTOR }, payment: { iban: 'PT50000201231234567890154' } } }), 409, 'invalid_transition');
  });

  test("an operation's parties stand (names and NIFs that differ are 422); a settled one has nothing to notify; three distinct parties; every problem at once", async () => {
    const op = (await h.json('POST', '/v1/factoring/operation', { key: h.key, body: { seller_nif: '599000031', seller_name: 'Metalomecânica Exemplo, Lda', modality: 'recourse', invoices: [{ number: 'P 1/1', debtor_nif: '599000023', debtor_name: 'Beta, Lda', issue_date: '2026-11-02', due_date: '2027-01-21', amount_cents: 100_000 }] } })).body;
    const iban = 'PT50000201231234567890154';
    const wrong = await h.json('POST', '/v1/notice/cession', { key: h.key, body: { operation_id: op.operation_id, parties: { factor: FACTOR, debtor: { name: 'Empresa Errada SA', nif: '599000015' }, assignor: { name: 'Metalomecânica Exemplo, Lda', nif: '599000040' } }, payment: { iban } } });
    expect(expectError(wrong, 422, 'validation_failed').fields).toEqual([
      { path: 'parties.debtor.nif', message: "differs from the operation's debtor (599000023)" },
      { path: 'parties.debtor.name', message: "differs from the operation's debtor's name (Beta, Lda)" },
      { path: 'parties.assignor.nif', message: "differs from the operation's seller (599000031)" },
    ]);
    // names and addresses complete the operation's parties: their NIFs are the operation's, not asked again
    const completed = await h.json('POST', '/v1/notice/cession', { key: h.key, body: { operation_id: op.operation_id, parties: { factor: FACTOR, assignor: { name: 'Metalomecânica Exemplo, Lda', address: 'Rua da Estação 5, Aveiro' }, debtor: { name: 'Beta, Lda', address: 'Rua do Comércio 10, Porto' } }, payment: { iban } } });
    expect(completed.status).toBe(201);
    // the same name in capitals and with a space more is the same party
    expect((await h.json('POST', '/v1/notice/cession', { key: h.key, body: { operation_id: op.operation_id, parties: { factor: FACTOR, debtor: { name: 'BETA,  LDA', nif: '599000023' } }, payment: { iban } } })).status).toBe(201);
    // the factor as a party of the assignment itself
    const selfFactor = await h.json('POST', '/v1/notice/cession', { key: h.key, body: { operation_id: op.operation_id, parties: { factor: { ...FACTOR, nif: '599000023' } }, payment: { iban } } });
    expect(expectError(selfFactor, 422, 'validation_failed').fields).toEqual([{ path: 'parties.factor.nif', message: "is the debtor's: the factor is a third party" }]);
    // given parties: the assignor as its own debtor, and a bad IBAN with it, listed together
    const inline = given({ payment: { iban: 'PT50000201231234567890155' } }) as any;
    inline.parties.debtor.nif = inline.parties.assignor.nif;
    expect(expectError(await h.json('POST', '/v1/notice/cession', { key: h.key, body: inline }), 422, 'validation_failed').fields.map((f: any) => f.path)).toEqual(['payment.iban', 'parties.debtor.nif']);
    // funded and settled: paid, nothing to notify
    await h.json('POST', `/v1/factoring/operation/${op.operation_id}/fund`, { key: h.key, body: {} });
    expect((await h.json('POST', `/v1/factoring/operation/${op.operation_id}/settle`, { key: h.key, body: {} })).body.status).toBe('settled');
    const settled = await h.json('POST', '/v1/notice/cession', { key: h.key, body: { operation_id: op.operation_id, parties: { factor: FACTOR }, payment: { iban } } });
    expect(expectError(settled, 409, 'invalid_transition').message).toContain('settled');
  });

  test('errors: a bad IBAN, a bad NIF, missing parties or invoices, an unknown operation, a bad language, too many invoices; scope; tenants', async () => {
    expect(expectError(await h.json('POST', '/v1/notice/cession', { key: h.key, body: given({ payment: { iban: 'PT50000201231234567890155' } }) }), 422, 'invalid_iban').fields[0].path).toBe('payment.iban');
    const badNif = given();
    badNif.parties.debtor.nif = '599000024';
    expect(expectError(await h.json('POST', '/v1/notice/cession', { key: h.key, body: badNif }), 422, 'invalid_nif').fields).toEqual([{ path: 'parties.debtor.nif', message: 'fails the NIF check digit' }]);
    // a bad NIF hides nothing else: every problem at once
    const many = given() as any;
    many.parties.factor = { ...FACTOR, nif: '599000032' };
    many.parties.debtor.nif = many.parties.assignor.nif;
    many.invoices = [
      { number: 'X1', issue_date: '2026-11-10', due_date: '2026-11-01', amount_cents: 1 },
      { number: ' x1 ', issue_date: '2026-11-02', due_date: '2027-01-31', amount_cents: 1 },
      { number: 'X2', issue_date: '2027-06-02', due_date: '2027-07-31', amount_cents: 1 },
    ];
    expect(expectError(await h.json('POST', '/v1/notice/cession', { key: h.key, body: many }), 422, 'validation_failed').fields).toEqual([
      { path: 'parties.factor.nif', message: 'fails the NIF check digit' },
      { path: 'invoices.0.due_date', message: 'is before the issue date' },
      { path: 'invoices.1.number', message: 'repeats invoices.0' },
      { path: 'invoices.2.issue_date', message: 'is in the future: an invoice not issued yet is not assigned' },
      { path: 'parties.debtor.nif', message: "is the assignor's: a company is not its own debtor" },
    ]);
    // an invisible character does not make another invoice
    const invisible = given() as any;
    invisible.invoices = [invisible.invoices[0], { ...invisible.invoices[0], number: `${invisible.invoices[0].number}\u200b` }];
    expect(expectError(await h.json('POST', '/v1/notice/cession', { key: h.key, body: invisible }), 422, 'validation_failed').fields).toEqual([{ path: 'invoices.1.number', message: 'repeats invoices.0' }]);
    // without an operation the assignor's and the debtor's NIFs are required
    const noNifs = given() as any;
    delete noNifs.parties.assignor.nif;
    delete noNifs.parties.debtor.nif;
    expect(expectError(await h.json('POST', '/v1/notice/cession', { key: h.key, body: noNifs }), 422, 'validation_failed').fields).toEqual([
      { path: 'parties.assignor.nif', message: 'is required without operation_id' },
      { path: 'parties.debtor.nif', message: 'is required without operation_id' },
    ]);
    const missing = await h.json('POST', '/v1/notice/cession', { key: h.key, body: { parties: { factor: FACTOR }, payment: { iban: 'PT50000201231234567890154' } } });
    expect(expectError(missing, 422, 'validation_failed').fields.map((f: any) => f.path)).toEqual(['parties.assignor', 'parties.debtor', 'invoices']);
    expectError(await h.json('POST', '/v1/notice/cession', { key: h.key, body: { operation_id: 'fop_00000000-0000-7000-8000-000000000000', parties: { factor: FACTOR }, payment: { iban: 'PT50000201231234567890154' } } }), 404, 'resource_not_found');
    expectError(await h.json('POST', '/v1/notice/cession', { key: h.key, body: given({ language: 'fr' }) }), 422, 'validation_failed');
    expectError(await h.json('POST', '/v1/notice/cession', { key: h.key, body: given({ invoices: Array.from({ length: 501 }, (_, i) => ({ number: `X${i}`, issue_date: '2026-11-02', due_date: '2027-01-31', amount_cents: 1 })) }) }), 422, 'validation_failed');
    const narrow = await h.tenant({ scopes: ['score'] });
    expectError(await h.json('POST', '/v1/notice/cession', { key: narrow.api_key, body: given() }), 403, 'insufficient_scope');
    const mine = await h.json('POST', '/v1/notice/cession', { key: h.key, body: given() });
    const other = await h.tenant();
    expectError(await h.json('GET', `/v1/notice/cession/${mine.body.notice_id}`, { key: other.api_key }), 404, 'resource_not_found');
    expect((await h.call('GET', `/v1/notice/cession/${mine.body.notice_id}/pdf`, { key: other.api_key })).status).toBe(404);
  });

  test('the OpenAPI document says the 201 answers a PDF by Accept', async () => {
    const doc = await h.json('GET', '/openapi.json');
    const created = doc.body.paths['/v1/notice/cession'].post.responses['201'];
    expect(Object.keys(created.content)).toEqual(['application/json', 'application/pdf']);
    expect(created.content['application/pdf'].schema.description).toContain('X-Notice-Id');
  });

  test('Idempotency-Key: the same notice again, JSON or PDF', async () => {
    const a = await h.json('POST', '/v1/notice/cession', { key: h.key, body: given(), headers: { 'idempotency-key': 'ntc-1' } });
    const b = await h.json('POST', '/v1/notice/cession', { key: h.key, body: given(), headers: { 'idempotency-key': 'ntc-1' } });
    expect(b.body.notice_id).toBe(a.body.notice_id);
    const p1 = await post(given(), { accept: 'application/pdf', 'idempotency-key': 'ntc-2' });
    expect(p1.headers.get('content-type')).toBe('application/pdf');
    const p1Bytes = new Uint8Array(await p1.arrayBuffer());
    // a replay answers by its own Accept: the stored PDF, byte for byte, or the JSON view
    const p2 = await post(given(), { accept: 'application/pdf', 'idempotency-key': 'ntc-2' });
    expect([p2.status, p2.headers.get('idempotent-replayed'), p2.headers.get('content-type'), p2.headers.get('x-notice-id')]).toEqual([201, 'true', 'application/pdf', p1.headers.get('x-notice-id')]);
    expect(new Uint8Array(await p2.arrayBuffer())).toEqual(p1Bytes);
    const p3 = await h.json('POST', '/v1/notice/cession', { key: h.key, body: given(), headers: { 'idempotency-key': 'ntc-2' } });
    expect(p3.headers.get('idempotent-replayed')).toBe('true');
    expect(p3.body.notice_id).toBe(p1.headers.get('x-notice-id'));
    // and the first answer JSON, a replay asking for the PDF gets the stored PDF
    const j = await h.json('POST', '/v1/notice/cession', { key: h.key, body: given(), headers: { 'idempotency-key': 'ntc-3' } });
    const j2 = await post(given(), { accept: 'application/pdf', 'idempotency-key': 'ntc-3' });
    expect([j2.status, j2.headers.get('content-type'), j2.headers.get('x-notice-id'), j2.headers.get('etag')]).toEqual([201, 'application/pdf', j.body.notice_id, `"${j.body.sha256}"`]);
  });
});
