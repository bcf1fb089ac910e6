/**
 * SAF-T parse throughput (not a test): the demo file's sales invoices repeated (renumbered, so the
 * numbering stays consecutive) into a file of about 200 MB, streamed from disk through the parser.
 *   bun run bench/saft.ts [MB]
 *
 * --background: the same file through the service's background path: the service started as its own
 * process (as `bun run start` runs it: MIMALLOC_PURGE_DELAY=-1 unless set; in-process job queue) on
 * SQLite in a temporary directory (PostgreSQL when DATABASE_URL is set; then ENCRYPTION_KEY too),
 * the file uploaded to POST /v1/saft/parse with its Content-Length (above SAFT_SYNC_MAX_BYTES: 202,
 * stored in 1 MiB chunks), the run polled until done. The service's RSS is read from /proc: its
 * high-water mark (VmHWM, reset before the upload and again before the parse) and samples every
 * 100 ms. --import adds ?import=true.
 *   bun run bench/saft.ts 200 --background [--import]
 */
import { mkdtempSync, openSync, readFileSync, writeFileSync, writeSync, closeSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSaft } from '../src/features/saft/parser';

const args = process.argv.slice(2);
const targetMb = Number(args.find((a) => !a.startsWith('--')) ?? 200);
const background = args.includes('--background');
const withImport = args.includes('--import');
const demo = new TextDecoder('windows-1252').decode(await Bun.file(join(import.meta.dir, '../fixtures/saft/saft_idemo599999999.xml')).bytes()).replace('encoding="Windows-1252"', 'encoding="UTF-8"');
const start = demo.indexOf('<Invoice>');
const end = demo.lastIndexOf('</Invoice>') + '</Invoice>'.length;
const invoices = demo.slice(start, end);
const dir = mkdtempSync(join(tmpdir(), 'bench-saft-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, 'big.xml');
// series per copy ("1T 1" → "1T C<copy>S1"): consecutive numbering inside each series
const block = (copy: number) => invoices.replace(/(<InvoiceNo>)(\w+) (\w+)\//g, `$1$2 C${copy}S$3/`);
let copies = 0;
for (let written = start; written < targetMb * 1e6; copies++) written += block(copies).length;
// the section's declared totals, those of its copies (the file is valid: an import stores it)
const declared = (tag: string, value: (x: number) => string) => (xml: string) => xml.replace(new RegExp(`(<SalesInvoices>[\\s\\S]*?<${tag}>)([^<]+)(</${tag}>)`), (_, a, x, b) => a + value(Number(x)) + b);
const opening = [declared('NumberOfEntries', (x) => String(x * copies)), declared('TotalDebit', (x) => (x * copies).toFixed(4)), declared('TotalCredit', (x) => (x * copies).toFixed(4))].reduce((xml, f) => f(xml), demo.slice(0, start));
const fd = openSync(file, 'w');
writeSync(fd, opening);
for (let copy = 0; copy < copies; copy++) writeSync(fd, block(copy));
writeSync(fd, demo.slice(end));
closeSync(fd);
const size = Bun.file(file).size;
const host = `${new Date().toISOString().slice(0, 10)} · ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'} · Bun ${Bun.version}`;

const kb = (text: string, field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0) * 1024;
const mb = (b: number) => `${(b / 1e6).toFixed(0)} MB`;

if (!background) {
  Bun.gc(true);
  const rss0 = process.memoryUsage().rss;
  // the peak is the kernel's high-water mark (VmHWM), reset here: a timer sampling RSS never ran
  // during the parse (it keeps the event loop, and the 46 MB once reported was RSS before it)
  writeFileSync('/proc/self/clear_refs', '5');
  const t0 = performance.now();
  const r = await parseSaft(Bun.file(file).stream() as unknown as AsyncIterable<Uint8Array>);
  const seconds = (performance.now() - t0) / 1000;
  const peak = kb(readFileSync('/proc/self/status', 'utf8'), 'VmHWM');
  console.log(host);
  console.log(`${mb(size)}, ${r.counts.invoices} invoices: ${seconds.toFixed(1)} s, ${(size / 1e6 / seconds).toFixed(1)} MB/s, peak RSS ${mb(peak)} (+${mb(peak - rss0)}; VmHWM); ${r.checks.length} checks`);
} else {
  // the service as it runs (bun run start: MIMALLOC_PURGE_DELAY=-1 unless set), its own process on
  // its own database, measured from /proc: nothing of this client counts
  const { startProcess, benchCli } = await import('./wrk');
  const dataDir = join(dir, 'data');
  const port = String(24500 + Math.floor(Math.random() * 400)); // below the ephemeral range (32768+)
  const env: Record<string, string> = { PORT: port, REDIS_URL: '', SEED_DEMO_TENANT: 'false', ANON_RATE_LIMIT_PER_MINUTE: '1000000', ...(process.env.DATABASE_URL ? {} : { DATA_DIR: dataDir }) };
  const tenant = await benchCli(env, ['tenant', 'create', '--name', 'bench', '--plan', 'enterprise', '--rate-limit', '1000000', '--json', '--create']);
  const svc = await startProcess(['bun', 'src/index.ts'], env);
  const pid = svc.proc.pid;
  const status = () => readFileSync(`/proc/${pid}/status`, 'utf8');
  const base = `http://127.0.0.1:${port}`;
  const headers = { authorization: `Bearer ${tenant.api_key}` };
  await Bun.sleep(500); // the start's own allocations settle
  const rss0 = kb(status(), 'VmRSS');
  writeFileSync(`/proc/${pid}/clear_refs`, '5'); // VmHWM from here
  let phase: 'upload' | 'parse' = 'upload';
  const peaks = { upload: 0, parse: 0 };
  const sample = () => (peaks[phase] = Math.max(peaks[phase], kb(status(), 'VmRSS')));
  const sampler = setInterval(sample, 100);
  const t0 = performance.now();
  const posted = await fetch(`${base}/v1/saft/parse${withImport ? '?import=true&customer_reference=bench' : ''}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/xml' }, body: Bun.file(file) });
  const accepted = (await posted.json()) as { parse_id: string; status: string };
  if (posted.status !== 202) throw new Error(`expected 202, got ${posted.status}: ${JSON.stringify(accepted)}`);
  const uploaded = performance.now();
  sample();
  const uploadHwm = kb(status(), 'VmHWM');
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  phase = 'parse';
  // what other callers see meanwhile: GET /healthz in a loop, one at a time, for the parse's length
  const probes: number[] = [];
  let parsing = true;
  const probing = (async () => {
    while (parsing) {
      const s = performance.now();
      await (await fetch(`${base}/healthz`)).arrayBuffer();
      probes.push(performance.now() - s);
    }
  })();
  let run: { status: string; error: string | null; result: { valid: boolean; counts: Record<string, number>; checks: { code: string }[]; import: unknown } | null };
  for (;;) {
    run = (await (await fetch(`${base}/v1/saft/parse/${accepted.parse_id}`, { headers })).json()) as typeof run;
    if (run.status === 'succeeded' || run.status === 'failed') break;
    await Bun.sleep(100);
  }
  const done = performance.now();
  parsing = false;
  await probing;
  sample();
  clearInterval(sampler);
  const parseHwm = kb(status(), 'VmHWM');
  svc.proc.kill();
  await svc.proc.exited;
  console.log(host);
  console.log(
    `background path (${process.env.DATABASE_URL ? 'postgres' : 'sqlite'}${withImport ? ', import' : ''}, MIMALLOC_PURGE_DELAY=${process.env.MIMALLOC_PURGE_DELAY ?? '-1'}), ${mb(size)}: upload ${((uploaded - t0) / 1000).toFixed(1)} s, parse ${((done - uploaded) / 1000).toFixed(1)} s; ${run.status}${run.error ? ` (${run.error})` : ''}, ${run.result?.counts.invoices} invoices, valid ${run.result?.valid}, checks ${run.result?.checks.map((c) => c.code).join(' ')}${withImport ? `, import ${JSON.stringify(run.result?.import)}` : ''}`,
  );
  probes.sort((a, b) => a - b);
  const at = (q: number) => probes[Math.min(probes.length - 1, Math.floor(q * probes.length))]!.toFixed(1);
  console.log(`GET /healthz during the parse, one at a time: ${probes.length} answered, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${probes[probes.length - 1]!.toFixed(1)} ms`);
  console.log(`service RSS: ${mb(rss0)} before; peak ${mb(Math.max(uploadHwm, parseHwm))} (VmHWM: upload ${mb(uploadHwm)}, parse ${mb(parseHwm)}; sampled every 100 ms: ${mb(peaks.upload)}, ${mb(peaks.parse)})`);
  process.exit(0);
}
