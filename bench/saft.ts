/**
 * SAF-T parse throughput (not a test): the demo file's sales invoices repeated (renumbered, so the
 * numbering stays consecutive) into a file of about 200 MB, streamed from disk through the parser.
 *   bun run bench/saft.ts [MB]
 */
import { mkdtempSync, openSync, writeSync, closeSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSaft } from '../src/features/saft/parser';

const targetMb = Number(process.argv[2] ?? 200);
const demo = new TextDecoder('windows-1252').decode(await Bun.file(join(import.meta.dir, '../fixtures/saft/saft_idemo599999999.xml')).bytes()).replace('encoding="Windows-1252"', 'encoding="UTF-8"');
const start = demo.indexOf('<Invoice>');
const end = demo.lastIndexOf('</Invoice>') + '</Invoice>'.length;
const invoices = demo.slice(start, end);
const dir = mkdtempSync(join(tmpdir(), 'bench-saft-'));
const file = join(dir, 'big.xml');
const fd = openSync(file, 'w');
writeSync(fd, demo.slice(0, start));
let written = start;
let copy = 0;
while (written < targetMb * 1e6) {
  // series per copy ("1T 1" → "C<copy>T 1"): consecutive numbering inside each series
  const block = invoices.replace(/(<InvoiceNo>)(\w+) (\w+)\//g, `$1$2 C${copy}S$3/`);
  writeSync(fd, block);
  written += block.length;
  copy++;
}
writeSync(fd, demo.slice(end));
closeSync(fd);
const size = Bun.file(file).size;

Bun.gc(true);
const rss0 = process.memoryUsage().rss;
let peak = rss0;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
const t0 = performance.now();
const r = await parseSaft(Bun.file(file).stream() as unknown as AsyncIterable<Uint8Array>);
const seconds = (performance.now() - t0) / 1000;
clearInterval(sampler);
rmSync(dir, { recursive: true, force: true });
console.log(`${new Date().toISOString().slice(0, 10)} · ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'} · Bun ${Bun.version}`);
console.log(`${(size / 1e6).toFixed(0)} MB, ${r.counts.invoices} invoices: ${seconds.toFixed(1)} s, ${(size / 1e6 / seconds).toFixed(1)} MB/s, peak RSS ${(peak / 1e6).toFixed(0)} MB (+${((peak - rss0) / 1e6).toFixed(0)} MB); ${r.checks.length} checks`);
