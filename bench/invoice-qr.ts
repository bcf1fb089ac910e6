/**
 * QR extraction speed (not a test): the AT example QR as a PNG (scale 4) and on an A4 PDF page,
 * read 200 times each in process; p50/p95.   bun run bench/invoice-qr.ts
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { prepareZXingModule, writeBarcode } from 'zxing-wasm/full';
import * as mupdf from 'mupdf';
import { findAtQr } from '../src/features/invoice/extract';

const qr = 'A:123456789*B:999999990*C:PT*D:FS*E:N*F:20190812*G:FS CDVF/12345*H:CDF7T5HD-12345*I1:PT*I7:0.65*I8:0.15*N:0.15*O:0.80*Q:YhGV*R:9999*S:NU;0.80';
prepareZXingModule({ overrides: { wasmBinary: readFileSync(join(import.meta.dir, '../node_modules/zxing-wasm/dist/full/zxing_full.wasm')).buffer as ArrayBuffer }, fireImmediately: true });
const png = new Uint8Array(await ((await writeBarcode(qr, { format: 'QRCode', scale: 4 } as never)).image as Blob).arrayBuffer());
const doc = new mupdf.PDFDocument();
const img = doc.addImage(new mupdf.Image(png));
doc.insertPage(-1, doc.addPage([0, 0, 595, 842], 0, { XObject: { Im0: img } } as never, 'q 120 0 0 120 40 60 cm /Im0 Do Q'));
const pdf = new Uint8Array(doc.saveToBuffer('compress').asUint8Array());
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.ceil(p * xs.length) - 1]!;
const run = async (label: string, bytes: Uint8Array, kind: 'image' | 'pdf') => {
  for (let i = 0; i < 10; i++) await findAtQr(bytes, kind);
  const ms: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t0 = performance.now();
    await findAtQr(bytes, kind);
    ms.push(performance.now() - t0);
  }
  console.log(`${label}: p50 ${pct(ms, 0.5).toFixed(1)} ms, p95 ${pct(ms, 0.95).toFixed(1)} ms`);
};
console.log(`${new Date().toISOString().slice(0, 10)} · ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'} · Bun ${Bun.version}`);
await run(`PNG ${png.length} bytes`, png, 'image');
await run(`PDF ${pdf.length} bytes (A4 page rendered at 144 dpi)`, pdf, 'pdf');
