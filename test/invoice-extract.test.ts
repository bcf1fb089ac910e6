/**
 * POST /v1/invoice/extract (issue 20): the AT QR payload decoded and checked, from text, from PNG and
 * JPEG images and from a PDF page (made here with zxing-wasm's writer and MuPDF, and read back as a
 * client would send them), and the errors with their codes.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepareZXingModule, writeBarcode } from 'zxing-wasm/full';
import * as mupdf from 'mupdf';
import { decodeQr, NotAtQr } from '../src/features/invoice/qr';
import { expectError, makeApp, multipart, ROOT, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

const AT_EXAMPLE = 'A:123456789*B:999999990*C:PT*D:FS*E:N*F:20190812*G:FS CDVF/12345*H:CDF7T5HD-12345*I1:PT*I7:0.65*I8:0.15*N:0.15*O:0.80*Q:YhGV*R:9999*S:NU;0.80';
const NOW = new Date('2026-11-22T10:00:00Z'); // the test apps' clock
const codes = (payload: string, now = NOW) => decodeQr(payload, now).checks.map((c) => c.code);

prepareZXingModule({ overrides: { wasmBinary: readFileSync(join(ROOT, 'node_modules/zxing-wasm/dist/full/zxing_full.wasm')).buffer as ArrayBuffer }, fireImmediately: true });
async function qrPng(text: string) {
  const w = await writeBarcode(text, { format: 'QRCode', scale: 4 } as never);
  return new Uint8Array(await (w.image as Blob).arrayBuffer());
}
/** an A4 invoice page with the QR image in its lower left corner, on page `onPage` of `pages` */
function invoicePdf(png: Uint8Array, pages = 1, onPage = 1) {
  const doc = new mupdf.PDFDocument();
  const img = doc.addImage(new mupdf.Image(png));
  for (let p = 1; p <= pages; p++) {
    const page = doc.addPage([0, 0, 595, 842], 0, { XObject: { Im0: img } } as never, p === onPage ? 'q 120 0 0 120 40 60 cm /Im0 Do Q' : '');
    doc.insertPage(-1, page);
  }
  return new Uint8Array(doc.saveToBuffer('compress').asUint8Array()); // copied out of the wasm heap
}

/**
 * A two-page PDF as many invoicing programs print one: page 1 text only (no images, no resources),
 * page 2 the QR drawn as vector squares, one per dark module of `png`
 */
function vectorQrPdf(png: Uint8Array) {
  const pix = new mupdf.Image(png).toPixmap();
  const [w, h, n] = [pix.getWidth(), pix.getHeight(), pix.getNumberOfComponents() + (pix.getAlpha() ? 1 : 0)];
  const samples = pix.getPixels();
  const squares: string[] = [];
  for (let y = 0; y < h; y += 4)
    for (let x = 0; x < w; x += 4) if (samples[((y + 2) * w + (x + 2)) * n]! < 128) squares.push(`${40 + x * 0.5} ${60 + (h - y - 4) * 0.5} 2 2 re`);
  pix.destroy();
  const doc = new mupdf.PDFDocument();
  doc.insertPage(-1, doc.addPage([0, 0, 595, 842], 0, {} as never, ''));
  doc.insertPage(-1, doc.addPage([0, 0, 595, 842], 0, {} as never, `0 g ${squares.join(' ')} f`));
  return new Uint8Array(doc.saveToBuffer('compress').asUint8Array());
}

describe('decodeQr', () => {
  test('the AT specification example decodes, named, with no check failing', () => {
    const { fields, checks } = decodeQr(AT_EXAMPLE);
    expect(checks).toEqual([]);
    expect(fields).toMatchObject({
      issuer_nif: '123456789', buyer_nif: '999999990', buyer_country: 'PT', document_type: 'FS', document_status: 'N', document_date: '2019-08-12',
      document_id: 'FS CDVF/12345', atcud: 'CDF7T5HD-12345', total_taxes: 0.15, gross_total: 0.8, hash_characters: 'YhGV', certificate_number: '9999', other_info: 'NU;0.80',
      fiscal_spaces: [{ region: 'PT', normal_base: 0.65, normal_vat: 0.15 }],
    });
  });
  test('each defect is reported with its code and field', () => {
    expect(codes(AT_EXAMPLE.replace('A:123456789', 'A:123456780'))).toContain('issuer_nif_invalid');
    expect(codes(AT_EXAMPLE.replace('H:CDF7T5HD-12345', 'H:CDF7T5HD-12346'))).toContain('atcud_sequence');
    expect(codes(AT_EXAMPLE.replace('H:CDF7T5HD-12345', 'H:CDF7-12345'))).toContain('atcud_format');
    // a document id without its "/NUMBER": an error, and not an ATCUD sequence check skipped unsaid
    expect(codes(AT_EXAMPLE.replace('G:FS CDVF/12345', 'G:FSCDVF12345'))).toEqual(['document_id_format']);
    expect(codes(AT_EXAMPLE.replace('F:20190812', 'F:20190231'))).toContain('date_invalid');
    expect(codes(AT_EXAMPLE.replace('I8:0.15', 'I8:0.30').replace('N:0.15', 'N:0.30').replace('O:0.80', 'O:0.95'))).toEqual(['vat_rate']);
    expect(codes(AT_EXAMPLE.replace('N:0.15', 'N:0.16'))).toContain('total_taxes');
    expect(codes(AT_EXAMPLE.replace('O:0.80', 'O:0.90'))).toContain('gross_total');
    expect(codes(AT_EXAMPLE.replace('I7:0.65', 'I7:0,65'))).toContain('amount_format');
    expect(codes(AT_EXAMPLE.replace('B:999999990*C:PT', 'C:PT*B:999999990'))).toContain('field_order');
    expect(codes(AT_EXAMPLE.replace('G:FS CDVF/12345', `G:${'X'.repeat(61)}`))).toContain('field_length');
    expect(codes(AT_EXAMPLE.replace('*R:9999', ''))).toContain('missing_field');
    // "0" for the ATCUD: fine on the 2019 example, a warning on a document of 2023 or later
    expect(codes(AT_EXAMPLE.replace('H:CDF7T5HD-12345', 'H:0'))).toEqual([]);
    const late = decodeQr(AT_EXAMPLE.replace('H:CDF7T5HD-12345', 'H:0').replace('F:20190812', 'F:20250110'), NOW);
    expect(late.checks).toEqual([expect.objectContaining({ code: 'atcud_missing', severity: 'warning', field: 'H' })]);
  });
  test('VAT within rounding and nothing more: a cent per started €10 of base, from €0.02 to €0.50', () => {
    const on = (base: string, vat: string, gross: string) => codes(`A:123456789*B:999999990*C:PT*D:FT*E:N*F:20260301*G:FT A/7*H:ABCDEFGH-7*I1:PT*I7:${base}*I8:${vat}*N:${vat}*O:${gross}*Q:abcd*R:1234`);
    // the outside review's case: €45 off on a base of €100 000 had passed (0.05 % of the base allowed €50)
    expect(on('100000.00', '23045.00', '123045.00')).toEqual(['vat_rate']);
    expect(on('100000.00', '23000.50', '123000.50')).toEqual([]);
    expect(on('100000.00', '23000.51', '123000.51')).toEqual(['vat_rate']);
    expect(on('10.00', '2.32', '12.32')).toEqual([]);
    expect(on('10.00', '2.33', '12.33')).toEqual(['vat_rate']);
    expect(on('1.00', '0.73', '1.73')).toEqual(['vat_rate']);
    expect(on('250.00', '57.75', '307.75')).toEqual([]); // 0.25 on a base of 250
    expect(on('250.00', '57.76', '307.76')).toEqual(['vat_rate']);
    const c = decodeQr('A:123456789*B:999999990*C:PT*D:FT*E:N*F:20260301*G:FT A/7*H:ABCDEFGH-7*I1:PT*I7:100000.00*I8:23045.00*N:23045.00*O:123045.00*Q:abcd*R:1234', NOW).checks;
    expect(c).toEqual([{ code: 'vat_rate', severity: 'error', field: 'I8', message: 'VAT 23045.00 is not 23 % of 100000.00 (PT; 23000.00 within €0.50 of rounding)' }]);
  });
  test('a date before the QR code existed or in the future is an error on F; a day of clock skew is allowed', () => {
    const dated = (f: string) => decodeQr(AT_EXAMPLE.replace('F:20190812', `F:${f}`), NOW);
    for (const f of ['99991231', '00010101', '20190214', '20261124']) {
      const { checks, fields } = dated(f);
      expect(checks).toEqual([expect.objectContaining({ code: 'date_out_of_range', severity: 'error', field: 'F' })]);
      expect(fields.document_date).toBe(`${f.slice(0, 4)}-${f.slice(4, 6)}-${f.slice(6)}`); // a real date, reported as read
    }
    expect(dated('00010101').checks[0]!.message).toBe('the document date 0001-01-01 is before the QR code existed (2019-02-15, Decreto-Lei 28/2019)');
    expect(dated('20261124').checks[0]!.message).toBe('the document date 2026-11-24 is in the future');
    for (const f of ['20190215', '20261122', '20261123']) expect(dated(f).checks).toEqual([]);
    expect(codes(AT_EXAMPLE.replace('F:20190812', 'F:20261124'), new Date('2026-11-23T00:00:00Z'))).toEqual([]); // "today" is the clock's
  });
  test('the rates of the Azores and Madeira', () => {
    const az = 'A:123456789*B:999999990*C:PT*D:FT*E:N*F:20260301*G:FT A/7*H:ABCDEFGH-7*I1:PT-AC*I7:100.00*I8:16.00*N:16.00*O:116.00*Q:abcd*R:1234';
    expect(codes(az)).toEqual([]);
    expect(codes(az.replace('I8:16.00', 'I8:23.00').replace('N:16.00', 'N:23.00').replace('O:116.00', 'O:123.00'))).toEqual(['vat_rate']);
    const ma = az.replace('I1:PT-AC', 'I1:PT-MA').replace('I8:16.00', 'I8:22.00').replace('N:16.00', 'N:22.00').replace('O:116.00', 'O:122.00');
    expect(codes(ma)).toEqual([]);
  });
  test('the rates in force on the document date: the Azores 18 % before 2021-07-01, Madeira 5 % before 2024-10-01', () => {
    const on = (region: string, date: string, base: string, vat: string, field: 'I4' | 'I8' = 'I8') => {
      const total = (Number(base) + Number(vat)).toFixed(2);
      const payload = `A:123456789*B:999999990*C:PT*D:FT*E:N*F:${date}*G:FT A/7*H:ABCDEFGH-7*I1:${region}*${field === 'I4' ? 'I3' : 'I7'}:${base}*${field}:${vat}*N:${vat}*O:${total}*Q:abcd*R:1234`;
      return decodeQr(payload, NOW).checks;
    };
    const code = (cs: { code: string }[]) => cs.map((c) => c.code);
    // the Azores' normal rate: 18 % until 2021-06-30, 16 % from 2021-07-01
    expect(code(on('PT-AC', '20210630', '100.00', '18.00'))).toEqual([]);
    expect(code(on('PT-AC', '20200115', '100.00', '16.00'))).toEqual(['vat_rate']);
    expect(on('PT-AC', '20200115', '100.00', '16.00')[0]).toEqual({ code: 'vat_rate', severity: 'error', field: 'I8', message: 'VAT 16.00 is not 18 % of 100.00 (PT-AC on 2020-01-15; 18.00 within €0.10 of rounding)' });
    expect(code(on('PT-AC', '20210701', '100.00', '16.00'))).toEqual([]);
    // an invoice may follow its supply by five working days: the old rate, just after the change, is a warning
    const late = on('PT-AC', '20210705', '100.00', '18.00');
    expect(late).toEqual([{ code: 'vat_rate_previous', severity: 'warning', field: 'I8', message: "VAT 18.00 is 18 % of 100.00, PT-AC's rate before 2021-07-01 (16 % since): right only if the supply took place before that date" }]);
    expect(code(on('PT-AC', '20210708', '100.00', '18.00'))).toEqual(['vat_rate']); // past the grace days
    // Madeira's reduced rate: 5 % until 2024-09-30, 4 % from 2024-10-01; its normal rate unchanged
    expect(code(on('PT-MA', '20240930', '100.00', '5.00', 'I4'))).toEqual([]);
    expect(code(on('PT-MA', '20220310', '100.00', '4.00', 'I4'))).toEqual(['vat_rate']);
    expect(code(on('PT-MA', '20241001', '100.00', '4.00', 'I4'))).toEqual([]);
    expect(code(on('PT-MA', '20241002', '100.00', '5.00', 'I4'))).toEqual(['vat_rate_previous']);
    expect(code(on('PT-MA', '20251002', '100.00', '5.00', 'I4'))).toEqual(['vat_rate']);
    expect(code(on('PT-MA', '20200101', '100.00', '22.00'))).toEqual([]);
    // the mainland's rates did not change: its message names no date
    expect(on('PT', '20200101', '100.00', '22.00')[0]!.message).toBe('VAT 22.00 is not 23 % of 100.00 (PT; 23.00 within €0.10 of rounding)');
  });
  test('not an AT QR code', () => {
    for (const p of ['https://example.com', 'WIFI:S:home;T:WPA;P:x;;', 'A:123456789', 'Z:1*A:2*O:3']) expect(() => decodeQr(p)).toThrow(NotAtQr);
  });
});

describe('POST /v1/invoice/extract', () => {
  let h: TestApp;
  let key: string;
  beforeAll(async () => {
    h = await makeApp();
    key = (await h.tenant()).api_key;
  });
  afterAll(() => h.close());
  const send = (body: Uint8Array | string, type: string, k = key) => h.json('POST', '/v1/invoice/extract', { key: k, rawBody: body as never, headers: { 'content-type': type } });

  test('an amount with a decimal comma or not a number is the amount_format check of a 200 answer, not a schema failure', async () => {
    for (const qr of [AT_EXAMPLE.replace('O:0.80', 'O:0,80'), AT_EXAMPLE.replace('I8:0.15', 'I8:0,15'), AT_EXAMPLE.replace('N:0.15', 'N:abc')]) {
      const r = await h.json('POST', '/v1/invoice/extract', { key, body: { qr } });
      expect(r.status).toBe(200);
      expect(r.body.valid).toBe(false);
      expect(r.body.checks.map((c: { code: string }) => c.code)).toContain('amount_format');
    }
    const r = await h.json('POST', '/v1/invoice/extract', { key, body: { qr: AT_EXAMPLE.replace('O:0.80', 'O:0,80') } });
    expect(r.body.fields.gross_total).toBeNull();
  });

  test('text, PNG, JPEG and PDF give the same fields', async () => {
    const fromText = await h.json('POST', '/v1/invoice/extract', { key, body: { qr: AT_EXAMPLE } });
    expect(fromText.status).toBe(200);
    expect(fromText.body).toMatchObject({ valid: true, source: 'text', page: null, qr: AT_EXAMPLE, checks: [] });
    const png = await qrPng(AT_EXAMPLE);
    const fromPng = await send(png, 'image/png');
    expect(fromPng.status).toBe(200);
    expect(fromPng.body).toMatchObject({ source: 'image', fields: fromText.body.fields, valid: true });
    const pix = new mupdf.Image(png).toPixmap();
    const fromJpeg = await send(new Uint8Array(pix.asJPEG(95)), 'image/jpeg');
    expect(fromJpeg.body).toMatchObject({ source: 'image', fields: fromText.body.fields });
    const fromPdf = await send(invoicePdf(png, 3, 2), 'application/pdf');
    expect(fromPdf.status).toBe(200);
    expect(fromPdf.body).toMatchObject({ source: 'pdf', page: 2, fields: fromText.body.fields, valid: true });
    // pages without any image (text only, the QR drawn as vectors) are rendered and searched too
    const vector = await send(vectorQrPdf(png), 'application/pdf');
    expect(vector.status).toBe(200);
    expect(vector.body).toMatchObject({ source: 'pdf', page: 2, fields: fromText.body.fields, valid: true });
  });

  test("the README's sample files (fixtures/invoice) extract to the AT example, as a body and as a multipart part", async () => {
    for (const [file, type, source] of [['at-example-invoice.pdf', 'application/pdf', 'pdf'], ['at-example-qr.png', 'image/png', 'image']] as const) {
      const bytes = new Uint8Array(readFileSync(join(ROOT, 'fixtures/invoice', file)));
      const r = await send(bytes, type);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ source, valid: true, qr: AT_EXAMPLE, checks: [] });
      const fd = new FormData();
      fd.append('file', new Blob([bytes], { type: 'application/octet-stream' }), file);
      const form = new Response(fd);
      const contentType = form.headers.get('content-type')!;
      const part = await h.json('POST', '/v1/invoice/extract', { key, rawBody: new Uint8Array(await form.arrayBuffer()) as never, headers: { 'content-type': contentType } });
      expect(part.body).toMatchObject({ source, valid: true, qr: AT_EXAMPLE });
    }
    // the PDF reads as an invoice to a person too (its text, not only the QR)
    const text = mupdf.Document.openDocument(readFileSync(join(ROOT, 'fixtures/invoice/at-example-invoice.pdf')), 'application/pdf').loadPage(0).toStructuredText('preserve-whitespace').asText();
    expect(text).toContain('FS CDVF/12345');
    expect(text).toContain('ATCUD: CDF7T5HD-12345');
  });

  test('multipart: the file part, typed by its bytes when the part says octet-stream (curl -F without ;type=)', async () => {
    const png = await qrPng(AT_EXAMPLE);
    const form = async (blob: Blob, filename: string) => {
      const fd = new FormData();
      fd.append('file', blob, filename);
      const r = new Response(fd);
      const type = r.headers.get('content-type')!; // (read before the body: Bun drops it after)
      return h.json('POST', '/v1/invoice/extract', { key, rawBody: new Uint8Array(await r.arrayBuffer()) as never, headers: { 'content-type': type } });
    };
    const fromPart = await form(new Blob([png], { type: 'application/octet-stream' }), 'scan');
    expect(fromPart.status).toBe(200);
    expect(fromPart.body).toMatchObject({ source: 'image', valid: true, qr: AT_EXAMPLE });
    const fromPdf = await form(new Blob([invoicePdf(png)], { type: 'application/pdf' }), 'invoice.pdf');
    expect(fromPdf.body).toMatchObject({ source: 'pdf', page: 1, valid: true });
    expectError(await form(new Blob(['hello'], { type: 'text/plain' }), 'x.txt'), 415, 'unsupported_media_type');
    // a PNG labelled with another type is refused for its label, as a body of that type is
    for (const type of ['image/gif', 'text/plain']) expect(expectError(await form(new Blob([png], { type }), 'scan.png'), 415, 'unsupported_media_type').message).toContain(type);
    expectError(await form(new Blob([new Uint8Array(11 * 1024 * 1024)], { type: 'image/png' }), 'big.png'), 413, 'payload_too_large');
  });

  test('multipart: a part sent after the file part is 422 on its name (not read, never ignored unsaid), as SAF-T uploads refuse it', async () => {
    const png = new Blob([await qrPng(AT_EXAMPLE)], { type: 'image/png' });
    const send = async (parts: [string, string | Blob, string?][]) => {
      const { bytes, contentType } = await multipart(parts);
      return h.json('POST', '/v1/invoice/extract', { key, rawBody: bytes as never, headers: { 'content-type': contentType } });
    };
    const late = expectError(await send([['file', png, 'scan.png'], ['lang', 'pt']]), 422, 'validation_failed');
    expect(late.fields).toEqual([{ path: 'lang', message: 'sent after the file part, so not read: form fields go before the part named file' }]);
    const second = expectError(await send([['file', png, 'scan.png'], ['other', png, 'other.png']]), 422, 'validation_failed');
    expect(second.fields).toEqual([{ path: 'other', message: 'a file part after the file part is not read (one file, in the part named file)' }]);
    // a field before the file is fine
    expect((await send([['note', 'x'], ['file', png, 'scan.png']])).status).toBe(200);
  });

  test('multipart: a body cut short after the file part is 422 on (body), not a file answered as if nothing came after it', async () => {
    const png = new Blob([await qrPng(AT_EXAMPLE)], { type: 'image/png' });
    const { bytes, contentType } = await multipart([['file', png, 'scan.png'], ['tail', 'x'.repeat(100)]]);
    const cut = bytes.subarray(0, bytes.length - 80); // inside the field after the file: its closing boundary never comes
    const b = expectError(await h.json('POST', '/v1/invoice/extract', { key, rawBody: cut as never, headers: { 'content-type': contentType } }), 422, 'validation_failed');
    expect(b.message).toBe('The multipart body could not be read.');
    expect(b.fields).toEqual([{ path: '(body)', message: expect.any(String) }]);
  });

  test('multipart: a body of no declared length (chunked) is read no further than the limit, also after the file part: 413', async () => {
    const png = new Blob([await qrPng(AT_EXAMPLE)], { type: 'image/png' });
    const { bytes, contentType } = await multipart([['file', png, 'scan.png'], ['tail', new Blob([new Uint8Array(11 * 1024 * 1024)]), 'tail.bin']]);
    const chunked = new ReadableStream<Uint8Array>({
      start(c) {
        for (let at = 0; at < bytes.length; at += 256 * 1024) c.enqueue(bytes.subarray(at, at + 256 * 1024));
        c.close();
      },
    });
    const r = await h.json('POST', '/v1/invoice/extract', { key, rawBody: chunked as never, headers: { 'content-type': contentType } });
    expectError(r, 413, 'payload_too_large');
  });

  test('a QR with defects is 200 with valid: false and the checks', async () => {
    const r = await h.json('POST', '/v1/invoice/extract', { key, body: { qr: AT_EXAMPLE.replace('O:0.80', 'O:0.90') } });
    expect(r.body.valid).toBe(false);
    expect(r.body.checks).toEqual([expect.objectContaining({ code: 'gross_total', severity: 'error', field: 'O' })]);
  });

  test('regional VAT at the rate of the document date: the previous rate just after a change is a warning (valid), later an error', async () => {
    const azores = (f: string) => `A:123456789*B:999999990*C:PT*D:FT*E:N*F:${f}*G:FT A/7*H:ABCDEFGH-7*I1:PT-AC*I7:100.00*I8:18.00*N:18.00*O:118.00*Q:abcd*R:1234`;
    const before = await h.json('POST', '/v1/invoice/extract', { key, body: { qr: azores('20210601') } });
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ valid: true, checks: [] });
    const just = await h.json('POST', '/v1/invoice/extract', { key, body: { qr: azores('20210702') } });
    expect(just.body.valid).toBe(true);
    expect(just.body.checks).toEqual([expect.objectContaining({ code: 'vat_rate_previous', severity: 'warning', field: 'I8' })]);
    const later = await h.json('POST', '/v1/invoice/extract', { key, body: { qr: azores('20220101') } });
    expect(later.body.valid).toBe(false);
    expect(later.body.checks).toEqual([expect.objectContaining({ code: 'vat_rate', severity: 'error', field: 'I8' })]);
  });

  test('dates are judged against the service clock (2026-11-22 here): tomorrow passes, the day after is in the future', async () => {
    const dated = (f: string) => h.json('POST', '/v1/invoice/extract', { key, body: { qr: AT_EXAMPLE.replace('F:20190812', `F:${f}`) } });
    expect((await dated('20261123')).body).toMatchObject({ valid: true, checks: [] });
    for (const f of ['20261124', '99991231', '00010101']) {
      const r = await dated(f);
      expect(r.status).toBe(200);
      expect(r.body.valid).toBe(false);
      expect(r.body.checks).toEqual([expect.objectContaining({ code: 'date_out_of_range', severity: 'error', field: 'F' })]);
    }
  });

  test('errors: unreadable image, no QR, not an AT QR, bad JSON field, wrong media type, too large; scope', async () => {
    expectError(await send('not an image at all', 'image/png'), 422, 'image_unreadable');
    expectError(await send(await qrPng(AT_EXAMPLE), 'image/jpeg'), 422, 'image_unreadable'); // a PNG sent as JPEG
    const blank = new Uint8Array(new mupdf.Pixmap(mupdf.ColorSpace.DeviceRGB, [0, 0, 200, 200], false).asPNG());
    expectError(await send(blank, 'image/png'), 422, 'qr_not_found');
    expectError(await send(await qrPng('https://example.com/not-an-invoice'), 'image/png'), 422, 'not_at_qr');
    expectError(await send(invoicePdf(blank), 'application/pdf'), 422, 'qr_not_found');
    expectError(await send('%PDF-1.7 broken', 'application/pdf'), 422, 'image_unreadable');
    expect(expectError(await h.json('POST', '/v1/invoice/extract', { key, body: { qr: 'hello' } }), 422, 'not_at_qr').fields[0].path).toBe('qr');
    expect(expectError(await h.json('POST', '/v1/invoice/extract', { key, body: { text: AT_EXAMPLE } }), 422, 'validation_failed').fields[0].path).toBe('qr');
    // the message names every type the route takes, not JSON alone
    expect(expectError(await send('A:1', 'text/plain'), 415, 'unsupported_media_type').message).toBe('Content-Type must be application/json, application/pdf, image/png, image/jpeg or multipart/form-data (got text/plain).');
    expectError(await send(new Uint8Array(11 * 1024 * 1024), 'image/png'), 413, 'payload_too_large');
    const narrow = await h.tenant({ scopes: ['score'] });
    expectError(await h.json('POST', '/v1/invoice/extract', { key: narrow.api_key, body: { qr: AT_EXAMPLE } }), 403, 'insufficient_scope');
  });
});
