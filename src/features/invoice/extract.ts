/**
 * Finding the AT QR code in an image (PNG, JPEG) or a PDF invoice: zxing-wasm (the ZXing C++
 * reader compiled to WebAssembly) reads the codes; mupdf (MuPDF as WebAssembly) renders PDF pages.
 * Both are loaded on first use, from the package's own files (no network).
 *
 * The route runs findAtQr in a worker thread (decode-pool.ts): a file at the limits below is up to
 * ~1 s of CPU, which on the event loop stalled every other request. A WebAssembly heap grows to the
 * largest image it ever held and never shrinks: every image is sized from its header before it is
 * decoded (on the event loop too, assertDecodable: a refusal is immediate), and every PDF page from
 * its box before it is rendered, against the limits below.
 */
import readerWasm from 'zxing-wasm/reader/zxing_reader.wasm' with { type: 'file' };
import { mupdfLib } from '../../lib/mupdf';
import { ApiError } from '../../lib/errors';
import { decodeQr, NotAtQr } from './qr';

/** pixels decoded per request: an image's, or the pages of a PDF together (at most ~1 s of decoding, a heap of ~55 MB in grey) */
export const MAX_PIXELS = 25_000_000;
/** an image's decoded size (width × height × channels × bytes per channel): the decoder holds it whole (RGBA at 16 bits is 8 bytes a pixel) */
export const MAX_DECODED_BYTES = 100_000_000;
/** the pages of a PDF searched */
export const MAX_PDF_PAGES = 5;
/** PDF pages are rendered at 144 dpi (2×), less for a large page so the pages stay within MAX_PIXELS, but not under 36 dpi */
const PDF_SCALE = 2;
const PDF_MIN_SCALE = 0.5;

let reader: Promise<typeof import('zxing-wasm/reader')> | null = null;
function zxing() {
  reader ??= (async () => {
    const mod = await import('zxing-wasm/reader');
    const wasm = await Bun.file(readerWasm as unknown as string).arrayBuffer();
    mod.prepareZXingModule({ overrides: { wasmBinary: wasm }, fireImmediately: true });
    return mod;
  })();
  return reader;
}

const unreadable = (message: string) => new ApiError('image_unreadable', message);

/** every QR code's text in an image */
export async function qrTextsInImage(bytes: Uint8Array): Promise<string[]> {
  const { readBarcodes } = await zxing();
  let results;
  try {
    results = await readBarcodes(bytes, { formats: ['QRCode'], tryHarder: true, maxNumberOfSymbols: 8 });
  } catch {
    throw unreadable('The image could not be decoded (PNG or JPEG expected).');
  }
  // an image the decoder cannot load is one result with an error and no symbol (it read as "no QR")
  if (results.some((r) => !r.format && r.error)) throw unreadable('The image could not be decoded: the file is damaged or truncated.');
  return results.filter((r) => r.isValid && r.text).map((r) => r.text);
}

const mpx = (n: number) => `${n / 1_000_000} million`;

/** A PNG's size from its IHDR, after walking its chunks: a truncated or damaged file is refused here (stb_image, inside zxing, reads no CRC). */
function pngSize(bytes: Uint8Array) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const damaged = (why: string) => unreadable(`The PNG file is damaged or truncated (${why}).`);
  if (bytes.length < 33 || view.getUint32(12) !== 0x49484452 || view.getUint32(8) !== 13) throw damaged('no IHDR header');
  const width = view.getUint32(16);
  const height = view.getUint32(20);
  const depth = bytes[24]!;
  // channels as the decoder expands them (a palette becomes RGB or RGBA)
  const channels = ({ 0: 1, 2: 3, 3: 4, 4: 2, 6: 4 } as Record<number, number>)[bytes[25]!];
  if (!width || !height || !channels || ![1, 2, 4, 8, 16].includes(depth)) throw damaged('an invalid IHDR header');
  let pos = 8;
  let idat = false;
  for (;;) {
    if (pos + 12 > bytes.length) throw damaged('it ends before its IEND chunk');
    const length = view.getUint32(pos);
    const type = view.getUint32(pos + 4);
    if (length > bytes.length - pos - 12) throw damaged('it ends inside a chunk');
    // critical chunks (upper-case first letter) are checked as libpng does; ancillary ones are not needed to read the image
    if (!(bytes[pos + 4]! & 0x20) && Bun.hash.crc32(bytes.subarray(pos + 4, pos + 8 + length)) !== view.getUint32(pos + 8 + length))
      throw damaged(`chunk ${String.fromCharCode(...bytes.subarray(pos + 4, pos + 8))} fails its CRC`);
    if (type === 0x49444154) idat = true;
    if (type === 0x49454e44) break;
    pos += 12 + length;
  }
  if (!idat) throw damaged('no image data');
  return { width, height, bytesPerPixel: channels * (depth === 16 ? 2 : 1) };
}

/**
 * A JPEG's size from its frame header, after walking its markers to the end of the image: stb_image
 * decodes a truncated JPEG without a word (the missing rows grey), which read as "no QR".
 */
function jpegSize(bytes: Uint8Array) {
  const damaged = (why: string) => unreadable(`The JPEG file is damaged or truncated (${why}).`);
  let frame: { width: number; height: number; bytesPerPixel: number } | null = null;
  let scan = false;
  let pos = 2;
  for (;;) {
    if (pos + 2 > bytes.length) throw damaged('it ends before its end-of-image marker');
    if (bytes[pos] !== 0xff) throw damaged('a marker is missing');
    const marker = bytes[pos + 1]!;
    if (marker === 0xff) {
      pos++; // fill byte
      continue;
    }
    if (marker === 0xd9) break; // EOI
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      pos += 2;
      continue;
    }
    if (pos + 4 > bytes.length) throw damaged('it ends inside a segment');
    const length = (bytes[pos + 2]! << 8) | bytes[pos + 3]!;
    if (length < 2 || pos + 2 + length > bytes.length) throw damaged('it ends inside a segment');
    // SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC): height, width, components
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (length < 8) throw damaged('a short frame header');
      const height = (bytes[pos + 5]! << 8) | bytes[pos + 6]!;
      const width = (bytes[pos + 7]! << 8) | bytes[pos + 8]!;
      if (!width || !height) throw damaged('a frame of no size');
      frame = { width, height, bytesPerPixel: bytes[pos + 9]! };
    }
    pos += 2 + length;
    if (marker === 0xda) {
      if (!frame) throw damaged('image data before its frame header');
      scan = true;
      // entropy-coded data runs to the next marker that is not a stuffed 0xFF00 or a restart marker
      for (;;) {
        pos = bytes.indexOf(0xff, pos);
        if (pos < 0 || pos + 1 >= bytes.length) throw damaged('it ends inside its image data');
        const next = bytes[pos + 1]!;
        if (next === 0x00 || (next >= 0xd0 && next <= 0xd7)) pos += 2;
        else if (next === 0xff) pos++;
        else break;
      }
    }
  }
  if (!frame || !scan) throw damaged('no image data');
  return frame;
}

/** A PNG or JPEG the decoder can read within the limits, judged from its headers before any pixel is decoded. */
export function assertReadableImage(bytes: Uint8Array) {
  const size = bytes[0] === 0x89 ? pngSize(bytes) : bytes[0] === 0xff ? jpegSize(bytes) : null;
  if (!size) throw unreadable('The body is not a PNG or JPEG file.');
  const { width, height, bytesPerPixel } = size;
  if (width * height > MAX_PIXELS || width * height * bytesPerPixel > MAX_DECODED_BYTES)
    throw unreadable(
      `The image is ${width} × ${height} pixels: images up to ${mpx(MAX_PIXELS)} pixels and ${MAX_DECODED_BYTES / 1_000_000} MB decoded are read (width × height × channels × bytes per channel). Send a smaller scan or photo of the invoice, or of its QR code.`,
    );
}

/**
 * The pages of a PDF (at most `maxPages`) rendered to PNG at 144 dpi: enough for an invoice QR. A
 * large page is rendered at a lower resolution so the pages together stay within MAX_PIXELS (the
 * MediaBox is read before rendering: a 14 400 pt page at 144 dpi is 830 MB); a page that would need
 * less than 36 dpi is not rendered. `dpi`: each page's resolution, null when it was not rendered.
 */
export async function pdfPagesAsPng(bytes: Uint8Array, maxPages = MAX_PDF_PAGES): Promise<{ pages: (Uint8Array | null)[]; dpi: (number | null)[]; sizes: string[] }> {
  const mupdf = await mupdfLib();
  let doc;
  try {
    doc = mupdf.Document.openDocument(bytes, 'application/pdf');
  } catch {
    throw unreadable('The PDF could not be opened.');
  }
  try {
    if (doc.needsPassword()) throw unreadable('The PDF is protected by a password.');
    const pages: (Uint8Array | null)[] = [];
    const dpi: (number | null)[] = [];
    const sizes: string[] = [];
    let n;
    try {
      n = Math.min(doc.countPages(), maxPages);
    } catch {
      throw unreadable('The PDF could not be opened: its page tree is damaged.');
    }
    if (n < 1) throw unreadable('The PDF has no page that can be read: it is empty, or damaged or cut short.');
    const share = MAX_PIXELS / n;
    for (let i = 0; i < n; i++) {
      let page;
      try {
        page = doc.loadPage(i);
        const [x0, y0, x1, y1] = page.getBounds();
        const w = x1 - x0;
        const h = y1 - y0;
        sizes.push(`${Math.round(w)} × ${Math.round(h)} pt`);
        // (+1: MuPDF rounds the pixmap's edges outwards)
        const scale = w > 0 && h > 0 ? Math.min(PDF_SCALE, Math.sqrt(share / ((w + 1) * (h + 1)))) : 0;
        // an image is decoded whole whatever the page's scale: a 400 KB page holding a 20 000 ×
        // 20 000 image took seconds of the event loop
        const image = largestImagePixels(page);
        if (image > MAX_PIXELS) sizes[i] += `, holding an image of ${Math.round(image / 1e6)} million pixels`;
        if (!(scale >= PDF_MIN_SCALE) || image > MAX_PIXELS) {
          pages.push(null);
          dpi.push(null);
          continue;
        }
        const pix = page.toPixmap(mupdf.Matrix.scale(scale, scale), mupdf.ColorSpace.DeviceGray, false, true);
        try {
          pages.push(pix.asPNG());
        } finally {
          pix.destroy();
        }
        dpi.push(Math.round(72 * scale));
      } catch (err) {
        if (err instanceof ApiError) throw err;
        // MuPDF throws on a page it cannot interpret (or a failed allocation): the file's fault, not a 500
        throw unreadable(`Page ${i + 1} of the PDF could not be rendered.`);
      } finally {
        page?.destroy();
      }
    }
    return { pages, dpi, sizes };
  } finally {
    doc.destroy();
  }
}

/**
 * The largest image (width × height) a PDF page draws through its resources' XObjects, forms'
 * resources included (a few levels deep, each object once); inline images are not seen.
 */
function largestImagePixels(page: unknown): number {
  type Obj = { isNull(): boolean; isName(): boolean; isNumber(): boolean; isDictionary(): boolean; isIndirect(): boolean; asIndirect(): number; asName(): string; asNumber(): number; resolve(): Obj; get(key: string): Obj; getInheritable(key: string): Obj; forEach(fn: (v: Obj) => void): void };
  const object = (page as { getObject?: () => Obj }).getObject?.();
  if (!object) return 0;
  let largest = 0;
  let visited = 0;
  const seen = new Set<number>();
  const walk = (resources: Obj, depth: number) => {
    // (MuPDF answers an absent key with its null object, not JavaScript's null: a page without
    // images, text only or a QR drawn as vectors, threw here and was refused as unreadable)
    const xobjects = resources.isNull() ? null : resources.resolve().get('XObject');
    if (depth > 4 || !xobjects || xobjects.isNull() || !xobjects.resolve().isDictionary()) return;
    xobjects.resolve().forEach((value) => {
      if (++visited > 1000) return;
      if (value.isIndirect()) {
        if (seen.has(value.asIndirect())) return;
        seen.add(value.asIndirect());
      }
      const x = value.resolve();
      const subtype = x.get('Subtype');
      const kind = subtype.isName() ? subtype.asName() : '';
      if (kind === 'Image') {
        const [w, h] = [x.get('Width'), x.get('Height')];
        if (w.isNumber() && h.isNumber()) largest = Math.max(largest, w.asNumber() * h.asNumber());
      } else if (kind === 'Form') walk(x.get('Resources'), depth + 1);
    });
  };
  walk(object.getInheritable('Resources'), 0);
  return largest;
}

const MAGIC: Record<string, number[]> = { 'image/png': [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'image/jpeg': [0xff, 0xd8, 0xff], 'application/pdf': [0x25, 0x50, 0x44, 0x46] };

/** The bytes are what the Content-Type says (the decoders would otherwise just find nothing). */
export function assertFileType(bytes: Uint8Array, contentType: string) {
  const magic = MAGIC[contentType];
  if (magic && !magic.every((b, i) => bytes[i] === b)) throw unreadable(`The body is not a ${contentType === 'application/pdf' ? 'PDF' : contentType.slice(6).toUpperCase()} file.`);
}

/** The checks made before a file is queued for a reader, from its headers alone (a millisecond at most for a 10 MB file): an image's size; a PDF's pages are judged where they are rendered. findAtQr makes them again. */
export function assertDecodable(bytes: Uint8Array, kind: 'image' | 'pdf') {
  if (kind === 'image') assertReadableImage(bytes);
}

/** The AT QR payload in an image or a PDF: the first code that decodes as one. */
export async function findAtQr(bytes: Uint8Array, kind: 'image' | 'pdf'): Promise<{ payload: string; page: number | null }> {
  let images: (Uint8Array | null)[] = [bytes];
  let rendered: Awaited<ReturnType<typeof pdfPagesAsPng>> | null = null;
  if (kind === 'pdf') {
    rendered = await pdfPagesAsPng(bytes);
    images = rendered.pages;
  } else assertReadableImage(bytes);
  let sawQr = false;
  for (const [i, img] of images.entries()) {
    if (!img) continue;
    for (const text of await qrTextsInImage(img)) {
      sawQr = true;
      try {
        decodeQr(text);
        return { payload: text, page: kind === 'pdf' ? i + 1 : null };
      } catch (err) {
        if (!(err instanceof NotAtQr)) throw err;
      }
    }
  }
  if (sawQr) throw new ApiError('not_at_qr', 'A QR code was found, but it is not an AT invoice QR code.');
  if (!rendered) throw new ApiError('qr_not_found', 'No QR code was found in the image.');
  const skipped = rendered.pages.flatMap((p, i) => (p ? [] : [`page ${i + 1} (${rendered.sizes[i]})`]));
  if (skipped.length) {
    const all = skipped.length === rendered.pages.length;
    const which = `${skipped.join(', ')} ${skipped.length > 1 ? 'are' : 'is'} too large to read: the pages of a PDF are rendered within ${mpx(MAX_PIXELS)} pixels together, at 36 to 144 dpi, and an image in one is read up to ${mpx(MAX_PIXELS)} pixels.`;
    throw unreadable(all ? `The PDF's ${which}` : `No QR code was found on the other pages, and ${which}`);
  }
  const low = rendered.dpi.flatMap((d, i) => (d !== null && d < 144 ? [`page ${i + 1} (${rendered.sizes[i]}) at ${d} dpi`] : []));
  throw new ApiError('qr_not_found', `No QR code was found on the first ${rendered.pages.length === 1 ? 'page' : `${rendered.pages.length} pages`} of the PDF${low.length ? `; large pages were read at a lower resolution: ${low.join(', ')}` : ''}.`);
}
