/**
 * POST /v1/invoice/extract against hostile files (an outside review): a PDF page the size of a
 * building, a PNG or JPEG whose header declares hundreds of millions of pixels, damaged and
 * truncated images; and a binary body of another type on the routes that take files (415). Every
 * file is made here, small: the limits are judged from headers and boxes, before anything is decoded.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync, gzipSync } from 'node:zlib';
import { prepareZXingModule, writeBarcode } from 'zxing-wasm/full';
import * as mupdf from 'mupdf';
import { expectError, makeApp, ROOT, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

const AT_EXAMPLE = 'A:123456789*B:999999990*C:PT*D:FS*E:N*F:20190812*G:FS CDVF/12345*H:CDF7T5HD-12345*I1:PT*I7:0.65*I8:0.15*N:0.15*O:0.80*Q:YhGV*R:9999*S:NU;0.80';

prepareZXingModule({ overrides: { wasmBinary: readFileSync(join(ROOT, 'node_modules/zxing-wasm/dist/full/zxing_full.wasm')).buffer as ArrayBuffer }, fireImmediately: true });
async function qrPng(text: string) {
  const w = await writeBarcode(text, { format: 'QRCode', scale: 4 } as never);
  return new Uint8Array(await (w.image as Blob).arrayBuffer());
}

/** a PNG chunk with its CRC */
function chunk(type: string, data: Uint8Array) {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, Bun.hash.crc32(out.subarray(4, 8 + data.length)));
  return out;
}
/** a PNG whose IHDR says width × height (color type 0 grey, 6 RGBA), with one row of image data only: a few hundred bytes */
function declaredPng(width: number, height: number, depth = 8, colorType = 0) {
  const ihdr = new Uint8Array(13);
  const view = new DataView(ihdr.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  ihdr[8] = depth;
  ihdr[9] = colorType;
  const row = new Uint8Array(1 + Math.min(width, 4096));
  const signature = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return new Uint8Array(Buffer.concat([signature, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(row)), chunk('IEND', new Uint8Array())]));
}
/** a PDF with one page per box, the QR drawn `qrSize` pt wide on page `onPage` */
function pdfWithPages(png: Uint8Array, boxes: [number, number][], onPage: number, qrSize = 120) {
  const doc = new mupdf.PDFDocument();
  const img = doc.addImage(new mupdf.Image(png));
  boxes.forEach(([w, h], i) => {
    const content = i + 1 === onPage ? `q ${qrSize} 0 0 ${qrSize} 40 60 cm /Im0 Do Q` : '';
    doc.insertPage(-1, doc.addPage([0, 0, w, h], 0, { XObject: { Im0: img } } as never, content));
  });
  return new Uint8Array(doc.saveToBuffer('compress').asUint8Array());
}

describe('POST /v1/invoice/extract: limits and damaged files', () => {
  let h: TestApp;
  let key: string;
  let png: Uint8Array;
  let jpeg: Uint8Array;
  beforeAll(async () => {
    h = await makeApp();
    key = (await h.tenant()).api_key;
    png = await qrPng(AT_EXAMPLE);
    jpeg = new Uint8Array(new mupdf.Image(png).toPixmap().asJPEG(95));
  });
  afterAll(() => h.close());
  const send = (body: Uint8Array, type: string) => h.json('POST', '/v1/invoice/extract', { key, rawBody: body as never, headers: { 'content-type': type } });

  test('a PDF page of 14 400 × 14 400 pt is 422 image_unreadable naming the page and the limit, at once (was a 2.3 GB allocation and a 500)', async () => {
    const pdf = pdfWithPages(png, [[14_400, 14_400]], 1, 2000);
    expect(pdf.length).toBeLessThan(10_000);
    const t0 = performance.now();
    const b = expectError(await send(pdf, 'application/pdf'), 422, 'image_unreadable');
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(b.message).toBe("The PDF's page 1 (14400 × 14400 pt) is too large to read: the pages of a PDF are rendered within 25 million pixels together, at 36 to 144 dpi, and an image in one is read up to 25 million pixels.");
  });

  test('a page drawing an image of more than 25 million pixels is not rendered (the image would be decoded whole): 422 naming it, at once; a QR on another page is still found', async () => {
    // a 20 000 × 20 000 image whose data is a few bytes: the check reads the image's dictionary, never its data
    const build = (qrOnPage2: boolean) => {
      const doc = new mupdf.PDFDocument();
      const huge = doc.addRawStream(deflateSync(new Uint8Array(64)), { Type: doc.newName('XObject'), Subtype: doc.newName('Image'), Width: 20_000, Height: 20_000, ColorSpace: doc.newName('DeviceGray'), BitsPerComponent: 8, Filter: doc.newName('FlateDecode') });
      doc.insertPage(-1, doc.addPage([0, 0, 595, 842], 0, { XObject: { Big: huge } } as never, 'q 595 0 0 842 0 0 cm /Big Do Q'));
      if (qrOnPage2) doc.insertPage(-1, doc.addPage([0, 0, 595, 842], 0, { XObject: { Im0: doc.addImage(new mupdf.Image(png)) } } as never, 'q 120 0 0 120 40 60 cm /Im0 Do Q'));
      return new Uint8Array(doc.saveToBuffer('compress').asUint8Array());
    };
    const t0 = performance.now();
    const b = expectError(await send(build(false), 'application/pdf'), 422, 'image_unreadable');
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(b.message).toContain('page 1 (595 × 842 pt, holding an image of 400 million pixels)');
    const found = await send(build(true), 'application/pdf');
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ source: 'pdf', page: 2 });
  });

  test('a large page is read at a lower resolution within the budget; a too large page does not hide the QR on the next', async () => {
    // 5 000 pt at 144 dpi would be 100 million pixels: read at ~72 dpi instead
    const big = await send(pdfWithPages(png, [[5000, 5000]], 1, 1000), 'application/pdf');
    expect(big.status).toBe(200);
    expect(big.body).toMatchObject({ source: 'pdf', page: 1, qr: AT_EXAMPLE });
    const second = await send(pdfWithPages(png, [[14_400, 14_400], [595, 842]], 2), 'application/pdf');
    expect(second.body).toMatchObject({ source: 'pdf', page: 2, qr: AT_EXAMPLE });
    // nothing on a large page read at a lower resolution: the answer says so
    const blank = expectError(await send(pdfWithPages(png, [[5000, 5000]], 0), 'application/pdf'), 422, 'qr_not_found');
    expect(blank.message).toContain('page 1 (5000 × 5000 pt) at 72 dpi');
    // pages after the fifth are not read
    const sixth = expectError(await send(pdfWithPages(png, Array.from({ length: 6 }, () => [595, 842] as [number, number]), 6), 'application/pdf'), 422, 'qr_not_found');
    expect(sixth.message).toBe('No QR code was found on the first 5 pages of the PDF.');
  });

  test('a PDF with a password or without pages is image_unreadable, saying which', async () => {
    const locked = new mupdf.PDFDocument();
    locked.insertPage(-1, locked.addPage([0, 0, 595, 842], 0, {} as never, ''));
    const encrypted = new Uint8Array(locked.saveToBuffer('encrypt=aes-256,user-password=secret,owner-password=owner').asUint8Array());
    expect(expectError(await send(encrypted, 'application/pdf'), 422, 'image_unreadable').message).toBe('The PDF is protected by a password.');
    const none = new Uint8Array(new mupdf.PDFDocument().saveToBuffer('').asUint8Array());
    expect(expectError(await send(none, 'application/pdf'), 422, 'image_unreadable').message).toBe('The PDF has no page that can be read: it is empty, or damaged or cut short.');
  });

  test('a PNG declaring 20 000 × 20 000 pixels is refused from its header, before decoding (was 4.8 s and 1.5 GB)', async () => {
    const huge = declaredPng(20_000, 20_000);
    expect(huge.length).toBeLessThan(1000);
    const t0 = performance.now();
    const b = expectError(await send(huge, 'image/png'), 422, 'image_unreadable');
    expect(performance.now() - t0).toBeLessThan(500);
    expect(b.message).toStartWith('The image is 20000 × 20000 pixels: images up to 25 million pixels and 100 MB decoded are read');
    // within the pixels but not the decoded bytes: 16 million pixels of 16-bit RGBA are 128 MB
    expect(expectError(await send(declaredPng(4000, 4000, 16, 6), 'image/png'), 422, 'image_unreadable').message).toStartWith('The image is 4000 × 4000 pixels');
  });

  test('a JPEG declaring 30 000 × 30 000 pixels is refused from its frame header', async () => {
    const patched = jpeg.slice();
    let sof = 2;
    while (!(patched[sof] === 0xff && patched[sof + 1]! >= 0xc0 && patched[sof + 1]! <= 0xc2)) sof += 2 + ((patched[sof + 2]! << 8) | patched[sof + 3]!);
    patched.set([30_000 >> 8, 30_000 & 0xff, 30_000 >> 8, 30_000 & 0xff], sof + 5);
    expect(expectError(await send(patched, 'image/jpeg'), 422, 'image_unreadable').message).toStartWith('The image is 30000 × 30000 pixels');
  });

  test('a damaged or truncated image is image_unreadable, not qr_not_found', async () => {
    const random = crypto.getRandomValues(new Uint8Array(2000));
    random.set(png.subarray(0, 8)); // a PNG signature followed by random bytes
    const flipped = png.slice();
    flipped[png.length - 40] ^= 0xff; // inside the image data: its CRC fails
    const cases: [string, Uint8Array, string][] = [
      ['the first 600 bytes of a QR PNG', png.slice(0, 600), 'image/png'],
      ['a PNG signature and random bytes', random, 'image/png'],
      ['a PNG with a damaged byte', flipped, 'image/png'],
      ['a PNG without its IEND', png.slice(0, png.length - 12), 'image/png'],
      ['half a JPEG', jpeg.slice(0, jpeg.length >> 1), 'image/jpeg'],
      ['a JPEG without its end-of-image marker', jpeg.slice(0, jpeg.length - 2), 'image/jpeg'],
      ['a JPEG header only', jpeg.slice(0, 300), 'image/jpeg'],
    ];
    for (const [what, bytes, type] of cases) {
      const r = await send(bytes, type);
      expect({ what, status: r.status, code: r.body.code }).toEqual({ what, status: 422, code: 'image_unreadable' });
      expectError(r, 422, 'image_unreadable');
      expect(r.body.message).toContain('damaged or truncated');
    }
    // the whole files still read
    expect((await send(png, 'image/png')).status).toBe(200);
    expect((await send(jpeg, 'image/jpeg')).status).toBe(200);
    // and a multipart upload of a truncated file too
    const fd = new FormData();
    fd.append('file', new Blob([png.slice(0, 600)], { type: 'application/octet-stream' }), 'scan.png');
    const res = new Response(fd);
    const type = res.headers.get('content-type')!;
    expectError(await h.json('POST', '/v1/invoice/extract', { key, rawBody: new Uint8Array(await res.arrayBuffer()) as never, headers: { 'content-type': type } }), 422, 'image_unreadable');
  });
});

describe('a binary body of another type on the routes that take files is 415', () => {
  let h: TestApp;
  let key: string;
  let png: Uint8Array;
  beforeAll(async () => {
    h = await makeApp();
    key = (await h.tenant()).api_key;
    png = await qrPng(AT_EXAMPLE);
  });
  afterAll(() => h.close());
  // (a Uint8Array body gets no Content-Type of its own: "none" is none)
  const send = (path: string, body: Uint8Array, type: string | null) => h.json('POST', path, { key, rawBody: body as never, headers: type ? { 'content-type': type } : {} });

  test('POST /v1/invoice/extract: PNG bytes as image/gif, application/octet-stream or untyped (was 400 invalid_json, "not valid UTF-8")', async () => {
    for (const type of ['image/gif', 'application/octet-stream', null]) {
      const b = expectError(await send('/v1/invoice/extract', png, type), 415, 'unsupported_media_type');
      expect(b.message).toBe(`Content-Type must be application/json, application/pdf, image/png, image/jpeg or multipart/form-data (got ${type ?? 'none'}).`);
      expect(b.fields).toBeUndefined();
    }
    // above the JSON limit too (was 413 "exceeds 1048576 bytes", a limit this file is not under)
    const big = new Uint8Array(2 * 1024 * 1024);
    big.set(png);
    expectError(await send('/v1/invoice/extract', big, 'application/octet-stream'), 415, 'unsupported_media_type');
  });

  test('POST /v1/saft/parse: gzip bytes as application/octet-stream, text/plain, image/png or untyped', async () => {
    const gz = new Uint8Array(gzipSync('<?xml version="1.0"?><AuditFile/>'));
    for (const type of ['application/octet-stream', 'text/plain', 'image/png', null]) {
      const b = expectError(await send('/v1/saft/parse', gz, type), 415, 'unsupported_media_type');
      expect(b.message).toBe(`Content-Type must be application/xml, text/xml or multipart/form-data (got ${type ?? 'none'}).`);
    }
  });

  test('bytes that are not UTF-8 sent as JSON are still 400 invalid_json', async () => {
    expectError(await send('/v1/invoice/extract', png, 'application/json'), 400, 'invalid_json');
  });
});
