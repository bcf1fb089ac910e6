/**
 * POST /v1/invoice/extract reads images and PDFs in worker threads (src/features/invoice/decode-pool.ts):
 * a file at the pixel limit no longer holds the event loop (other requests answer meanwhile); a
 * worker that crashes or runs past its time limit answers its request 503 service_busy and is
 * replaced; a full queue answers 503 with Retry-After; workers that cannot start leave the reading
 * in process; the answers are the in-process reader's, file for file. Every file is made here.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { prepareZXingModule, writeBarcode } from 'zxing-wasm/full';
import * as mupdf from 'mupdf';
import { DecodePool, decodePool } from '../src/features/invoice/decode-pool';
import { findAtQr } from '../src/features/invoice/extract';
import { ApiError } from '../src/lib/errors';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/lib/log';
import { expectError, makeApp, ROOT, type TestApp } from './helpers';
setDefaultTimeout(60_000); // hooks ignore bunfig's timeout and default to 5 s

const AT_EXAMPLE = 'A:123456789*B:999999990*C:PT*D:FS*E:N*F:20190812*G:FS CDVF/12345*H:CDF7T5HD-12345*I1:PT*I7:0.65*I8:0.15*N:0.15*O:0.80*Q:YhGV*R:9999*S:NU;0.80';
const SCORE_NIF = '599000015'; // a sandbox fixture

prepareZXingModule({ overrides: { wasmBinary: readFileSync(join(ROOT, 'node_modules/zxing-wasm/dist/full/zxing_full.wasm')).buffer as ArrayBuffer }, fireImmediately: true });
async function qrPng(text: string) {
  const w = await writeBarcode(text, { format: 'QRCode', scale: 4 } as never);
  return new Uint8Array(await (w.image as Blob).arrayBuffer());
}
/** a PDF with one page per box, the QR drawn `qrSize` pt wide at (x, y) on page `onPage` */
function pdfWithPages(png: Uint8Array, boxes: [number, number][], onPage: number, qrSize = 120, at: [number, number] = [40, 60]) {
  const doc = new mupdf.PDFDocument();
  const img = doc.addImage(new mupdf.Image(png));
  boxes.forEach(([w, h], i) => {
    const content = i + 1 === onPage ? `q ${qrSize} 0 0 ${qrSize} ${at[0]} ${at[1]} cm /Im0 Do Q` : '';
    doc.insertPage(-1, doc.addPage([0, 0, w, h], 0, { XObject: { Im0: img } } as never, content));
  });
  return new Uint8Array(doc.saveToBuffer('compress').asUint8Array());
}
/** a 5 000 × 5 000 grey PNG (25 million pixels: the limit) with the QR drawn in it: a few tenths of a second to read */
function largePng(png: Uint8Array) {
  const doc = mupdf.Document.openDocument(pdfWithPages(png, [[2500, 2500]], 1, 300, [1800, 200]), 'application/pdf');
  const pix = doc.loadPage(0).toPixmap(mupdf.Matrix.scale(2, 2), mupdf.ColorSpace.DeviceGray, false, true);
  expect([pix.getWidth(), pix.getHeight()]).toEqual([5000, 5000]);
  return new Uint8Array(pix.asPNG());
}
/** resolves when `cond` holds (polled every millisecond: the event loop is free while a worker reads) */
async function until(cond: () => boolean, ms = 10_000) {
  const t0 = performance.now();
  while (!cond()) {
    if (performance.now() - t0 > ms) throw new Error('condition not reached');
    await Bun.sleep(1);
  }
}
/** a reader's answer as data: the payload found, or the error's code and message */
const outcome = (p: Promise<{ payload: string; page: number | null }>) =>
  p.then(
    (found) => ({ found }),
    (err: unknown) => (err instanceof ApiError ? { code: err.code, status: err.status, message: err.message } : { failed: String(err) }),
  );

let png: Uint8Array;
let big: Uint8Array;
beforeAll(async () => {
  png = await qrPng(AT_EXAMPLE);
  big = largePng(png);
});

describe('POST /v1/invoice/extract: the readers are worker threads', () => {
  let h: TestApp;
  let key: string;
  let pool: DecodePool;
  /** the worker the pool last handed a file to (it makes its workers through this test's factory) */
  let handedTo: Worker | null = null;
  let made = 0;
  beforeAll(async () => {
    h = await makeApp();
    key = (await h.tenant()).api_key;
    pool = decodePool(h.ctx);
    // before the first file, so every worker of the pool is made here: each one notes the files it is sent
    pool.options.createWorker = (url) => {
      const worker = new Worker(url);
      made++;
      const post = worker.postMessage.bind(worker);
      worker.postMessage = ((...args: Parameters<typeof post>) => {
        handedTo = worker;
        post(...args);
      }) as typeof post;
      return worker;
    };
  });
  afterAll(() => h.close());
  // each send gets its own copy: the reader takes the bytes it is given (transferred to a worker)
  const send = (body: Uint8Array, type = 'image/png') => h.json('POST', '/v1/invoice/extract', { key, rawBody: body.slice() as never, headers: { 'content-type': type } });
  const options = (o: Partial<DecodePool['options']>) => Object.assign(pool.options, o);

  test('while a 25-million-pixel image is read, other requests of the same app answer first', async () => {
    // warm: a worker started with its QR reader loaded, a score in the cache
    expect((await send(png)).status).toBe(200);
    expect((await h.json('POST', '/v1/score', { key, body: { nif: SCORE_NIF } })).status).toBe(200);
    expect(pool.stats()).toMatchObject({ workers: pool.options.size, busy: 0, inProcess: false });

    const order: string[] = [];
    const large = send(big).then((r) => (order.push('large image'), r));
    await until(() => pool.stats().busy === 1); // its pixels are being decoded, in a worker
    const health = h.json('GET', '/healthz').then((r) => (order.push('healthz'), r));
    const score = h.json('POST', '/v1/score', { key, body: { nif: SCORE_NIF } }).then((r) => (order.push('cached score'), r));
    const [l, hz, s] = await Promise.all([large, health, score]);
    expect(order.at(-1)).toBe('large image');
    expect(order).toHaveLength(3);
    expect(hz.status).toBe(200);
    expect(s.status).toBe(200);
    expect(l.status).toBe(200);
    expect(l.body).toMatchObject({ source: 'image', qr: AT_EXAMPLE, valid: true });
  });

  test('a worker killed in the middle of a file: that request is 503 service_busy, the worker is replaced, the next request reads', async () => {
    const before = pool.stats().crashes;
    const madeBefore = made;
    const large = send(big);
    await until(() => pool.stats().busy === 1);
    handedTo!.terminate(); // the thread ends mid-file, as a crash would: the pool learns of it from its close event
    const r = await large;
    const b = expectError(r, 503, 'service_busy');
    expect(b.message).toStartWith('The reader of the file stopped before it finished; nothing was billed.');
    expect(r.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(pool.stats().crashes).toBe(before + 1);
    const next = await send(png);
    expect(made).toBe(madeBefore + 1); // its replacement
    expect(next.status).toBe(200);
    expect(next.body).toMatchObject({ source: 'image', qr: AT_EXAMPLE });
    expect(pool.stats()).toMatchObject({ workers: pool.options.size, busy: 0, inProcess: false });
  });

  test('a file read past the time limit: 503 service_busy, its worker ended and replaced, the next file reads', async () => {
    options({ timeoutMs: 30 });
    try {
      const r = await send(big);
      expect(expectError(r, 503, 'service_busy').message).toStartWith('Reading the file did not finish within 0.03 s; nothing was billed.');
      expect(r.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      expect(pool.stats().timeouts).toBe(1);
    } finally {
      options({ timeoutMs: 10_000 });
    }
    expect((await send(png)).status).toBe(200);
    expect((await send(big)).status).toBe(200);
  });

  test('the queue is bounded: with every worker busy and the queue full, 503 service_busy with Retry-After at once; header refusals stay immediate', async () => {
    const { size, queueLimit } = pool.options;
    options({ size: 1, queueLimit: 1 });
    try {
      expect((await send(png)).status).toBe(200); // (a second worker, if any, ends when idle)
      expect(pool.stats()).toMatchObject({ workers: 1, ready: 1, busy: 0 });
      const large = send(big);
      await until(() => pool.stats().busy === 1);
      const waiting = send(png); // the one place in the queue
      await until(() => pool.stats().queued === 1);
      const refused = await send(png);
      const b = expectError(refused, 503, 'service_busy');
      expect(b.message).toMatch(/^Every image and PDF reader is busy \(1 reading, 1 waiting\); the file was not read\. Retry after \d+ s\.$/);
      expect(refused.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      expect(pool.stats()).toMatchObject({ busy: 1, queued: 1 }); // still reading the large one
      // an image too large is refused from its header, on the event loop: 422, not 503
      const huge = declaredPng(20_000, 20_000);
      expect(expectError(await send(huge), 422, 'image_unreadable').message).toStartWith('The image is 20000 × 20000 pixels');
      // the files taken are read
      expect((await large).status).toBe(200);
      expect((await waiting).status).toBe(200);
      // no queue at all: one file read at a time, the next refused
      options({ queueLimit: 0 });
      const again = send(big);
      await until(() => pool.stats().busy === 1);
      expectError(await send(png, 'image/png'), 503, 'service_busy');
      expect((await again).status).toBe(200);
      expect((await send(png)).status).toBe(200);
    } finally {
      options({ size, queueLimit });
    }
  });

  test('the answers are the in-process reader\'s, file for file', async () => {
    const blank = new Uint8Array(new mupdf.Pixmap(mupdf.ColorSpace.DeviceRGB, [0, 0, 200, 200], false).asPNG());
    const jpeg = new Uint8Array(new mupdf.Image(png).toPixmap().asJPEG(95));
    const locked = new mupdf.PDFDocument();
    locked.insertPage(-1, locked.addPage([0, 0, 595, 842], 0, {} as never, ''));
    const hugeImagePdf = (() => {
      const doc = new mupdf.PDFDocument();
      const huge = doc.addRawStream(deflateSync(new Uint8Array(64)), { Type: doc.newName('XObject'), Subtype: doc.newName('Image'), Width: 20_000, Height: 20_000, ColorSpace: doc.newName('DeviceGray'), BitsPerComponent: 8, Filter: doc.newName('FlateDecode') });
      doc.insertPage(-1, doc.addPage([0, 0, 595, 842], 0, { XObject: { Big: huge } } as never, 'q 595 0 0 842 0 0 cm /Big Do Q'));
      return new Uint8Array(doc.saveToBuffer('compress').asUint8Array());
    })();
    const flipped = png.slice();
    flipped[png.length - 40] ^= 0xff;
    const files: [string, Uint8Array, 'image' | 'pdf'][] = [
      ['PNG', png, 'image'],
      ['JPEG', jpeg, 'image'],
      ['25-million-pixel PNG', big, 'image'],
      ['PNG without a QR', blank, 'image'],
      ['PNG of another QR', await qrPng('https://example.com/not-an-invoice'), 'image'],
      ['PNG declaring 20 000 × 20 000', declaredPng(20_000, 20_000), 'image'],
      ['damaged PNG', flipped, 'image'],
      ['truncated PNG', png.slice(0, 600), 'image'],
      ['half a JPEG', jpeg.slice(0, jpeg.length >> 1), 'image'],
      ['not an image', new TextEncoder().encode('not an image at all'), 'image'],
      ['PDF, QR on page 2 of 3', pdfWithPages(png, [[595, 842], [595, 842], [595, 842]], 2), 'pdf'],
      ['PDF without a QR', pdfWithPages(png, [[595, 842]], 0), 'pdf'],
      ['PDF page of 14 400 pt', pdfWithPages(png, [[14_400, 14_400]], 1, 2000), 'pdf'],
      ['PDF page of 5 000 pt', pdfWithPages(png, [[5000, 5000]], 1, 1000), 'pdf'],
      ['PDF page of 5 000 pt without a QR', pdfWithPages(png, [[5000, 5000]], 0), 'pdf'],
      ['PDF, QR on page 6', pdfWithPages(png, Array.from({ length: 6 }, () => [595, 842] as [number, number]), 6), 'pdf'],
      ['PDF drawing a 400-million-pixel image', hugeImagePdf, 'pdf'],
      ['PDF with a password', new Uint8Array(locked.saveToBuffer('encrypt=aes-256,user-password=secret,owner-password=owner').asUint8Array()), 'pdf'],
      ['PDF without pages', new Uint8Array(new mupdf.PDFDocument().saveToBuffer('').asUint8Array()), 'pdf'],
      ['broken PDF', new TextEncoder().encode('%PDF-1.7 broken'), 'pdf'],
    ];
    for (const [what, bytes, kind] of files) {
      const inWorker = await outcome(pool.read(bytes.slice(), kind));
      const inProcess = await outcome(findAtQr(bytes.slice(), kind));
      expect({ what, ...inWorker }).toEqual({ what, ...inProcess });
    }
    expect(pool.stats().inProcess).toBe(false);
  });

  test('the bytes are transferred to the worker, not copied; a view into a larger buffer is copied (the buffer stays whole)', async () => {
    const own = png.slice();
    expect(await pool.read(own, 'image')).toEqual({ payload: AT_EXAMPLE, page: null });
    expect(own.byteLength).toBe(0); // detached: it went to the worker
    const larger = new Uint8Array(png.length + 100);
    larger.set(png, 50);
    const view = larger.subarray(50, 50 + png.length);
    expect(await pool.read(view, 'image')).toEqual({ payload: AT_EXAMPLE, page: null });
    expect(view.byteLength === png.length && view.every((b, i) => b === png[i])).toBe(true);
    expect(larger.byteLength).toBe(png.length + 100);
  });
});

describe('the readers\' lifecycle', () => {
  test('workers that cannot start: files are read in process, logged once', async () => {
    const lines: string[] = [];
    const pool = new DecodePool(createLogger('warn', (l) => lines.push(l)), { workerUrl: join(ROOT, 'no/such/decode-worker.ts'), maxStartFailures: 3 });
    expect(await pool.read(png.slice(), 'image')).toEqual({ payload: AT_EXAMPLE, page: null });
    const pdf = pdfWithPages(png, [[595, 842], [595, 842]], 2);
    expect(await pool.read(pdf.slice(), 'pdf')).toEqual({ payload: AT_EXAMPLE, page: 2 });
    expect(await outcome(pool.read(png.slice(0, 600), 'image'))).toEqual(await outcome(findAtQr(png.slice(0, 600), 'image')));
    expect(pool.stats()).toMatchObject({ inProcess: true, workers: 0 });
    const logged = lines.map((l) => JSON.parse(l));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 'error', msg: 'invoice QR reader: workers cannot start; images and PDFs are read on the event loop', attempts: 3 });
    await pool.close();
    // size 0: in process by configuration, nothing logged
    const none = new DecodePool(createLogger('warn', (l) => lines.push(l)), { size: 0 });
    expect(await none.read(png.slice(), 'image')).toEqual({ payload: AT_EXAMPLE, page: null });
    expect(none.stats()).toMatchObject({ workers: 0, inProcess: false });
    expect(lines).toHaveLength(1);
    await none.close();
  });

  test('a file waiting for a worker longer than the time limit is answered 503, not kept', async () => {
    const pool = new DecodePool(createLogger('silent'), { size: 1, queueLimit: 4, timeoutMs: 10_000 });
    try {
      const large = pool.read(big.slice(), 'image');
      await until(() => pool.stats().busy === 1);
      pool.options.timeoutMs = 20; // the waiting file's limit (the large one's was set when it started)
      const waited = await outcome(pool.read(png.slice(), 'image'));
      expect(waited).toMatchObject({ code: 'service_busy', status: 503 });
      expect((waited as { message: string }).message).toStartWith('The file waited more than 0.02 s for a reader; it was not read.');
      expect(await large).toEqual({ payload: AT_EXAMPLE, page: null });
      expect(pool.stats()).toMatchObject({ queued: 0, busy: 0, timeouts: 0 });
    } finally {
      await pool.close();
    }
  });

  test('INVOICE_DECODE_WORKERS sets the pool: 0 reads on the event loop (no worker), 2 starts two; out of range refuses to start', async () => {
    const none = await makeApp({ INVOICE_DECODE_WORKERS: '0' });
    try {
      const key = (await none.tenant()).api_key;
      const r = await none.json('POST', '/v1/invoice/extract', { key, rawBody: png.slice() as never, headers: { 'content-type': 'image/png' } });
      expect(r.status).toBe(200);
      expect(r.body.qr).toBe(AT_EXAMPLE);
      expect(decodePool(none.ctx).stats()).toMatchObject({ workers: 0, busy: 0 });
    } finally {
      await none.close();
    }
    const two = await makeApp({ INVOICE_DECODE_WORKERS: '2' });
    try {
      const key = (await two.tenant()).api_key;
      expect((await two.json('POST', '/v1/invoice/extract', { key, rawBody: png.slice() as never, headers: { 'content-type': 'image/png' } })).status).toBe(200);
      expect(decodePool(two.ctx).stats().workers).toBe(2);
    } finally {
      await two.close();
    }
    expect(() => loadConfig({ INVOICE_DECODE_WORKERS: '17' })).toThrow('configuration: INVOICE_DECODE_WORKERS is invalid (integer 0..16)');
    expect(() => loadConfig({ INVOICE_DECODE_WORKERS: 'two' })).toThrow('INVOICE_DECODE_WORKERS is invalid');
  });

  test('the workers end when the app context closes; a file sent after is 503', async () => {
    const h = await makeApp();
    const key = (await h.tenant()).api_key;
    const pool = decodePool(h.ctx);
    expect(pool.stats().workers).toBe(0); // none before the first file
    const r = await h.json('POST', '/v1/invoice/extract', { key, rawBody: png.slice() as never, headers: { 'content-type': 'image/png' } });
    expect(r.status).toBe(200);
    expect(pool.stats().workers).toBe(pool.options.size);
    await h.close();
    expect(pool.stats()).toMatchObject({ workers: 0, closed: true });
    expect(await outcome(pool.read(png.slice(), 'image'))).toMatchObject({ code: 'service_busy', status: 503 });
  });
});

/** a PNG whose IHDR says width × height (grey), with one row of image data only: a few hundred bytes */
function declaredPng(width: number, height: number) {
  const chunk = (type: string, data: Uint8Array) => {
    const out = new Uint8Array(12 + data.length);
    const view = new DataView(out.buffer);
    view.setUint32(0, data.length);
    out.set(new TextEncoder().encode(type), 4);
    out.set(data, 8);
    view.setUint32(8 + data.length, Bun.hash.crc32(out.subarray(4, 8 + data.length)));
    return out;
  };
  const ihdr = new Uint8Array(13);
  new DataView(ihdr.buffer).setUint32(0, width);
  new DataView(ihdr.buffer).setUint32(4, height);
  ihdr[8] = 8;
  const signature = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return new Uint8Array(Buffer.concat([signature, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(new Uint8Array(1 + Math.min(width, 4096)))), chunk('IEND', new Uint8Array())]));
}
