/**
 * The background path's memory (docs/benchmarks.md's RSS target): a large file stored in 1 MiB
 * chunks and imported by the job holds, while it runs, what the parse needs (MasterFiles' keys, each
 * series' last number and hash), never the file. Measured as the heap left after a full collection
 * at points of the run (every 1000 invoices stored), against the heap before it: no timing.
 * Regressions this catches: kept values that are slices of the decoded text (each keeps its whole
 * piece of text alive: `(' ' + s).slice(1)` is no copy in JSC), documents kept for the end of the
 * file or of the transaction, the chunks read all at once.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { join } from 'node:path';
import { makeApp, ROOT, TEST_DB, type TestApp } from './helpers';
setDefaultTimeout(60_000);

/**
 * The demo file's sales invoices repeated to about `mb` MB (UTF-8, as bench/saft.ts builds it):
 * each copy's series renamed (numbering consecutive), the declared totals those of the copies, and
 * every invoice signed again with `key` (the chain of each series verifies: its last Hash is kept).
 */
async function bigSaft(mb: number, key: KeyObject): Promise<{ bytes: Uint8Array; invoices: number }> {
  const demo = new TextDecoder('windows-1252').decode(await Bun.file(join(ROOT, 'fixtures/saft/saft_idemo599999999.xml')).bytes()).replace('encoding="Windows-1252"', 'encoding="UTF-8"');
  const start = demo.indexOf('<Invoice>');
  const end = demo.lastIndexOf('</Invoice>') + '</Invoice>'.length;
  const invoices = demo.slice(start, end);
  const perCopy = invoices.split('<Invoice>').length - 1;
  const blocks: string[] = [];
  const last = new Map<string, string>();
  // a document's signature: its date, entry date, number, gross total and its series' previous Hash
  const signer = (date: string, numberTag: string) => (doc: string) => {
    const field = (tag: string) => new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(doc)![1]!;
    const number = field(numberTag);
    const series = `${numberTag} ${number.slice(0, number.lastIndexOf('/'))}`;
    const hash = createSign('RSA-SHA1').update(`${field(date)};${field('SystemEntryDate')};${number};${field('GrossTotal')};${last.get(series) ?? ''}`).sign(key, 'base64');
    last.set(series, hash);
    return doc.replace(/<Hash>[^<]*<\/Hash>/, `<Hash>${hash}</Hash>`);
  };
  const sign = signer('InvoiceDate', 'InvoiceNo');
  for (let size = start, copy = 0; size < mb * 1e6; copy++) {
    const block = invoices.replace(/(<InvoiceNo>)(\w+) (\w+)\//g, `$1$2 C${copy}S$3/`).replace(/<Invoice>[\s\S]*?<\/Invoice>/g, sign);
    blocks.push(block);
    size += block.length;
  }
  const copies = blocks.length;
  let opening = demo.slice(0, start);
  for (const [tag, value] of [['NumberOfEntries', (x: number) => String(x * copies)], ['TotalDebit', (x: number) => (x * copies).toFixed(4)], ['TotalCredit', (x: number) => (x * copies).toFixed(4)]] as const)
    opening = opening.replace(new RegExp(`(<SalesInvoices>[\\s\\S]*?<${tag}>)([^<]+)(</${tag}>)`), (_, a, x, b) => a + value(Number(x)) + b);
  const closing = demo
    .slice(end)
    .replace(/<StockMovement>[\s\S]*?<\/StockMovement>/g, signer('MovementDate', 'DocumentNumber'))
    .replace(/<WorkDocument>[\s\S]*?<\/WorkDocument>/g, signer('WorkDate', 'DocumentNumber'));
  return { bytes: new TextEncoder().encode(opening + blocks.join('') + closing), invoices: perCopy * copies };
}

describe('a large file through the background path', () => {
  let h: TestApp;
  let key: string;
  beforeAll(async () => {
    h = await makeApp({ SAFT_SYNC_MAX_BYTES: '1000' }, { workers: false });
    key = (await h.tenant()).api_key;
  });
  afterAll(() => h.close());

  test('the run holds what the parse needs, not the file: the heap it keeps stays far below the file', async () => {
    const { processSaftRun } = await import('../src/features/saft');
    const keys = generateKeyPairSync('rsa', { modulusLength: 1024 });
    let file: { bytes: Uint8Array; invoices: number } | null = await bigSaft(36, keys.privateKey);
    const publicKey = (keys.publicKey.export({ type: 'spki', format: 'pem' }) as string).replace(/\n/g, '');
    const { invoices } = file;
    const size = file.bytes.length;
    const posted = await h.json('POST', '/v1/saft/parse?import=true&customer_reference=big', {
      key,
      rawBody: file.bytes as never,
      headers: { 'content-type': 'application/xml', 'content-length': String(size), 'x-public-key': publicKey },
    });
    expect(posted.status).toBe(202);
    file = null; // (the test's own copy is not the run's)
    const id = posted.body.parse_id;
    const { db, t } = h.ctx.database;
    const rows = (await db.select({ seq: t.saftChunks.seq }).from(t.saftChunks)).length;

    // the heap kept, after a full collection, every 1000 invoices the import stores
    const database = h.ctx.database;
    const withTx = database.withTx;
    const kept: number[] = [];
    let stored = 0;
    const heap = () => (Bun.gc(true), process.memoryUsage().heapUsed);
    database.withTx = ((fn: (tx: any) => Promise<unknown>) =>
      withTx((tx) =>
        fn(
          new Proxy(tx, {
            get(target, prop) {
              // the import prepares one upsert of invoices and runs it for each: its runs are counted
              if (prop === 'insert')
                return (table: unknown) => {
                  const builder = target.insert(table as never) as any;
                  if (table !== t.invoices) return builder;
                  return {
                    values: (v: unknown) => {
                      const withValues = builder.values(v);
                      return {
                        onConflictDoUpdate: (c: unknown) => {
                          const upsert = withValues.onConflictDoUpdate(c);
                          return {
                            prepare: (name: string) => {
                              const statement = upsert.prepare(name);
                              return {
                                execute: (row: unknown) => {
                                  if (++stored % 1000 === 0) kept.push(heap() - before);
                                  return statement.execute(row);
                                },
                              };
                            },
                          };
                        },
                      };
                    },
                  };
                };
              const v = Reflect.get(target, prop);
              return typeof v === 'function' ? v.bind(target) : v;
            },
          }),
        ),
      )) as typeof withTx;
    await Bun.sleep(10); // (a turn of the event loop: the upload's body is let go of)
    const before = heap();
    try {
      await processSaftRun(h.ctx, id);
    } finally {
      database.withTx = withTx;
    }
    expect(kept.length).toBeGreaterThanOrEqual(5);
    // MB kept at most. Measured 2026-11-28 on this 36 MB file: ~7 (MasterFiles, ~3,700 series and
    // their last Hash, the import's transaction); the code before: 45-53 (slices of 1 MiB of
    // decoded text kept by the values the parse keeps); the chunks read all at once: ~55
    expect(Math.max(...kept) / 1e6).toBeLessThan(16);

    const run = (await h.json('GET', `/v1/saft/parse/${id}`, { key })).body;
    expect(run).toMatchObject({ status: 'succeeded', result: { valid: true, hash_chain: 'verified', counts: { invoices }, import: { imported: true, invoices, payments: 2 } } });
    expect(run.result.checks.map((c: { code: string }) => c.code)).toEqual(['customer_nif_invalid', 'tax_rate', 'tax_rate']); // the demo's own warnings
    expect(stored).toBe(invoices);
    expect(rows).toBe(Math.ceil(size / (1024 * 1024))); // rows of 1 MiB, whatever the pieces the body came in
  });
});

describe('statements of the background path (SQLite)', () => {
  let h: TestApp;
  let key: string;
  beforeAll(async () => {
    h = await makeApp({ SAFT_SYNC_MAX_BYTES: '1000' }, { workers: false });
    key = (await h.tenant()).api_key;
  });
  afterAll(() => h.close());

  // Drizzle prepares a statement for each query, and on SQLite each holds native memory (~14 KB for
  // an invoice's upsert; the values bound to it: a row's 1.4 MB of text) until a collection finalizes
  // it, memory the collector does not count. Regressions this catches: a statement for each row
  // stored or each invoice imported (an upload and import of 200 MB peaked ~300-600 MB RSS of them)
  test.skipIf(TEST_DB !== 'sqlite')('an upload and its import prepare a few statements (and one a row read), not one a row stored or an invoice', async () => {
    const { processSaftRun } = await import('../src/features/saft');
    const keys = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const file = await bigSaft(5, keys.privateKey);
    const client = (h.ctx.database.db as unknown as { $client: { prepare: (...a: unknown[]) => unknown } }).$client;
    const prepare = client.prepare;
    let prepared = 0;
    client.prepare = function (this: unknown, ...a: unknown[]) {
      prepared++;
      return prepare.apply(this, a);
    };
    try {
      const posted = await h.json('POST', '/v1/saft/parse?import=true&customer_reference=statements', {
        key,
        rawBody: file.bytes as never,
        headers: { 'content-type': 'application/xml', 'content-length': String(file.bytes.length) },
      });
      expect(posted.status).toBe(202);
      await processSaftRun(h.ctx, posted.body.parse_id);
      const run = (await h.json('GET', `/v1/saft/parse/${posted.body.parse_id}`, { key })).body;
      expect(run).toMatchObject({ status: 'succeeded', result: { valid: true, import: { imported: true, invoices: file.invoices } } });
    } finally {
      client.prepare = prepare;
    }
    expect(file.invoices).toBeGreaterThan(1000);
    // measured 2026-11-29: 16 (the requests' own, the run's claim and end, one per table written,
    // one a row read); the code before: 1,532 (one a row stored and read, one an invoice: 1,512)
    expect(prepared).toBeLessThan(60);
  });
});
