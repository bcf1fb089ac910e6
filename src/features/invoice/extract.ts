/**
 * Finding the AT QR code in an image (PNG, JPEG) or a PDF invoice: zxing-wasm (the ZXing C++
 * reader compiled to WebAssembly) reads the codes; mupdf (MuPDF as WebAssembly) renders PDF pages.
 * Both are loaded on first use, from the package's own files (no network).
 */
import readerWasm from 'zxing-wasm/reader/zxing_reader.wasm' with { type: 'file' };
import { mupdfLib } from '../../lib/mupdf';
import { ApiError } from '../../lib/errors';
import { decodeQr, NotAtQr } from './qr';

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

/** every QR code's text in an image */
export async function qrTextsInImage(bytes: Uint8Array): Promise<string[]> {
  const { readBarcodes } = await zxing();
  let results;
  try {
    results = await readBarcodes(bytes, { formats: ['QRCode'], tryHarder: true, maxNumberOfSymbols: 8 });
  } catch {
    throw new ApiError('image_unreadable', 'The image could not be decoded (PNG or JPEG expected).');
  }
  return results.filter((r) => r.isValid && r.text).map((r) => r.text);
}

/** the pages of a PDF (at most `maxPages`) rendered to PNG at 2× (144 dpi): enough for an invoice QR */
export async function pdfPagesAsPng(bytes: Uint8Array, maxPages = 5): Promise<Uint8Array[]> {
  const mupdf = await mupdfLib();
  let doc;
  try {
    doc = mupdf.Document.openDocument(bytes, 'application/pdf');
  } catch {
    throw new ApiError('image_unreadable', 'The PDF could not be opened.');
  }
  const pages: Uint8Array[] = [];
  const n = Math.min(doc.countPages(), maxPages);
  for (let i = 0; i < n; i++) {
    const page = doc.loadPage(i);
    const pix = page.toPixmap(mupdf.Matrix.scale(2, 2), mupdf.ColorSpace.DeviceGray, false, true);
    pages.push(pix.asPNG());
  }
  return pages;
}

const MAGIC: Record<string, number[]> = { 'image/png': [0x89, 0x50, 0x4e, 0x47], 'image/jpeg': [0xff, 0xd8, 0xff], 'application/pdf': [0x25, 0x50, 0x44, 0x46] };

/** The bytes are what the Content-Type says (the decoders would otherwise just find nothing). */
export function assertFileType(bytes: Uint8Array, contentType: string) {
  const magic = MAGIC[contentType];
  if (magic && !magic.every((b, i) => bytes[i] === b)) throw new ApiError('image_unreadable', `The body is not a ${contentType === 'application/pdf' ? 'PDF' : contentType.slice(6).toUpperCase()} file.`);
}

/** The AT QR payload in an image or a PDF: the first code that decodes as one. */
export async function findAtQr(bytes: Uint8Array, kind: 'image' | 'pdf'): Promise<{ payload: string; page: number | null }> {
  const images = kind === 'pdf' ? await pdfPagesAsPng(bytes) : [bytes];
  let sawQr = false;
  for (const [i, img] of images.entries()) {
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
  throw new ApiError('qr_not_found', kind === 'pdf' ? 'No QR code was found on the first pages of the PDF.' : 'No QR code was found in the image.');
}
