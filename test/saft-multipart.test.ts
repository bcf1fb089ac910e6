/**
 * SAF-T multipart uploads: a part sent after the file part is not read (the file streams through
 * the parse as it arrives, so its options must come first); it had been ignored unsaid (an
 * `import=true` after the file: a parse without its import). Now 422 validation_failed on the
 * part's name once the body is read, nothing imported, no run kept; at once (200) and through the
 * background path (202) alike. A file part of another name is an unknown field, as a text field is.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { SaftParseResponse } from '../src/features/saft';
import { expectError, makeApp, ROOT, type TestApp, multipart } from './helpers';
setDefaultTimeout(30_000);

const DEMO = join(ROOT, 'fixtures/saft/saft_idemo599999999.xml');
let demo = new Uint8Array(0);

const xmlPart = () => new Blob([demo], { type: 'application/xml' });

describe('multipart: parts after the file part', () => {
  let h: TestApp;
  let key: string;
  beforeAll(async () => {
    demo = await Bun.file(DEMO).bytes();
    h = await makeApp();
    key = (await h.tenant()).api_key;
  });
  afterAll(() => h.close());
  const send = (m: { bytes: Uint8Array; contentType: string }, headers: Record<string, string> = {}) => h.json('POST', '/v1/saft/parse', { key, rawBody: m.bytes as never, headers: { 'content-type': m.contentType, ...headers } });
  const runs = async () => (await h.ctx.database.db.select().from(h.ctx.database.t.saftRuns)).length;

  test('the fields before the file: read (200, imported), as before', async () => {
    const r = await send(await multipart([['import', 'true'], ['customer_reference', 'before'], ['file', xmlPart(), 'demo.xml']]));
    expect(r.status).toBe(200);
    expect(Value.Check(SaftParseResponse, r.body)).toBe(true);
    expect(r.body).toMatchObject({ valid: true, import: { imported: true, customer_reference: 'before', invoices: 24 } });
  });

  test('import and customer_reference after the file: 422 on each, nothing imported, no run kept', async () => {
    const before = await runs();
    const r = await send(await multipart([['file', xmlPart(), 'demo.xml'], ['import', 'true'], ['customer_reference', 'after']]));
    const body = expectError(r, 422, 'validation_failed');
    expect(body.fields).toEqual([
      { path: 'import', message: expect.stringContaining('sent after the file part, so not read') },
      { path: 'customer_reference', message: expect.stringContaining('go before the part named file') },
    ]);
    expect((await h.json('GET', '/v1/erp/saft/invoices?customer_reference=after', { key })).body.data).toEqual([]);
    expect(await runs()).toBe(before);
    // with import=true before the file (an import under way, in its transaction) and a field after it: rolled back
    const mixed = await send(await multipart([['import', 'true'], ['customer_reference', 'mixed'], ['file', xmlPart(), 'demo.xml'], ['public_key', 'late']]));
    expect(expectError(mixed, 422, 'validation_failed').fields).toEqual([{ path: 'public_key', message: expect.stringContaining('sent after the file part') }]);
    expect((await h.json('GET', '/v1/erp/saft/invoices?customer_reference=mixed', { key })).body.data).toEqual([]);
    expect(await runs()).toBe(before);
  });

  test('an unknown field or a second file after the file, a gzip file part: the same 422, on the part', async () => {
    const r = await send(await multipart([['file', new Blob([gzipSync(demo)], { type: 'application/gzip' }), 'demo.xml.gz'], ['colour', 'red'], ['file', xmlPart(), 'again.xml']]));
    expect(expectError(r, 422, 'validation_failed').fields).toEqual([
      { path: 'colour', message: expect.stringContaining('sent after the file part') },
      { path: 'file', message: expect.stringContaining('a file part after the file part is not read') },
    ]);
  });

  test('an option in the query (or X-Public-Key) and in a form field with other values: 422 naming both; the same value in both is read', async () => {
    const before = await runs();
    const sendWith = async (query: string, parts: [string, string | Blob, string?][], headers: Record<string, string> = {}) => {
      const m = await multipart(parts);
      return h.json('POST', `/v1/saft/parse${query}`, { key, rawBody: m.bytes as never, headers: { 'content-type': m.contentType, ...headers } });
    };
    const imp = await sendWith('?import=true', [['import', 'false'], ['file', xmlPart(), 'demo.xml']]);
    expect(expectError(imp, 422, 'validation_failed').fields).toEqual([
      { path: 'query.import', message: 'differs from the form field import: give it once' },
      { path: 'import', message: 'differs from query.import: give it once' },
    ]);
    const ref = await sendWith('?customer_reference=q4', [['import', 'true'], ['customer_reference', 'c4'], ['file', xmlPart(), 'demo.xml']]);
    expect(expectError(ref, 422, 'validation_failed').fields.map((f: { path: string }) => f.path)).toEqual(['query.customer_reference', 'customer_reference']);
    const pem = await Bun.file(join(ROOT, 'fixtures/saft/saft_demo_public_key.pem')).text();
    const keyTwice = await sendWith('', [['public_key', pem], ['file', xmlPart(), 'demo.xml']], { 'x-public-key': 'MIIB-another' });
    expect(expectError(keyTwice, 422, 'validation_failed').fields.map((f: { path: string }) => f.path)).toEqual(['header.X-Public-Key', 'public_key']);
    for (const r of ['q4', 'c4']) expect((await h.json('GET', `/v1/erp/saft/invoices?customer_reference=${r}`, { key })).body.data).toEqual([]);
    expect(await runs()).toBe(before);
    // the same key as a PEM form field and as its one-line body in the header: one key, read
    const sameKey = await sendWith('', [['public_key', pem], ['file', xmlPart(), 'demo.xml']], { 'x-public-key': pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '') });
    expect(sameKey.status).toBe(200);
    expect(sameKey.body.hash_chain).toBe('verified');
    // the same value in both: no conflict
    const same = await sendWith('?import=true&customer_reference=same', [['import', 'true'], ['customer_reference', 'same'], ['file', xmlPart(), 'demo.xml']]);
    expect(same.status).toBe(200);
    expect(same.body.import).toMatchObject({ imported: true, customer_reference: 'same' });
  });

  test('a file part of another name before the file is an unknown field: 422 on its name', async () => {
    const r = await send(await multipart([['attachment', new Blob(['x'], { type: 'text/plain' }), 'x.txt'], ['file', xmlPart(), 'demo.xml']]));
    expect(expectError(r, 422, 'validation_failed').fields).toEqual([{ path: 'attachment', message: expect.stringContaining('unknown file part') }]);
  });

  test('a file part of another name and no part named file: 422 on that part (not "file is required"), nothing parsed, no run kept', async () => {
    const before = await runs();
    const unknown = { path: 'attachment', message: 'unknown file part: the file goes in the part named "file"' };
    // the demo file itself, in a part of another name (alone, or after the form fields)
    for (const parts of [
      [['attachment', xmlPart(), 'demo.xml']],
      [['import', 'true'], ['customer_reference', 'unnamed'], ['attachment', xmlPart(), 'demo.xml']],
    ] as [string, string | Blob, string?][][]) {
      const r = await send(await multipart(parts));
      const body = expectError(r, 422, 'validation_failed');
      expect(body).toEqual({ code: 'validation_failed', message: 'The request is invalid.', status: 422, requestId: r.headers.get('x-request-id'), docsUrl: expect.stringContaining('/docs/errors#validation_failed'), fields: [unknown] });
    }
    // two of them: the first one named
    const two = await send(await multipart([['attachment', xmlPart(), 'demo.xml'], ['upload', xmlPart(), 'again.xml']]));
    expect(expectError(two, 422, 'validation_failed').fields).toEqual([unknown]);
    // with no file part at all, the part named file is what is missing
    const none = await send(await multipart([['import', 'true']]));
    expect(expectError(none, 422, 'validation_failed').fields).toEqual([{ path: 'file', message: 'a file part named "file" is required' }]);
    expect(await runs()).toBe(before);
    expect((await h.json('GET', '/v1/erp/saft/invoices?customer_reference=unnamed', { key })).body.data).toEqual([]);
  });
});

describe('multipart: parts after the file of a large upload (202 path)', () => {
  let h: TestApp;
  let key: string;
  beforeAll(async () => {
    demo = await Bun.file(DEMO).bytes();
    h = await makeApp({ SAFT_SYNC_MAX_BYTES: '1000' }, { workers: false }); // the demo file counts as large here
    key = (await h.tenant()).api_key;
  });
  afterAll(() => h.close());

  test('422 on the field once the upload is read; the stored upload and its run are removed', async () => {
    const m = await multipart([['file', xmlPart(), 'demo.xml'], ['import', 'true']]);
    const r = await h.json('POST', '/v1/saft/parse', { key, rawBody: m.bytes as never, headers: { 'content-type': m.contentType, 'content-length': String(m.bytes.length) } });
    expect(expectError(r, 422, 'validation_failed').fields).toEqual([{ path: 'import', message: expect.stringContaining('sent after the file part') }]);
    const { db, t } = h.ctx.database;
    expect(await db.select().from(t.saftRuns)).toEqual([]);
    expect(await db.select().from(t.saftChunks)).toEqual([]);
    // the same upload with the field first: 202, queued
    const ok = await multipart([['import', 'true'], ['file', xmlPart(), 'demo.xml']]);
    const queued = await h.json('POST', '/v1/saft/parse', { key, rawBody: ok.bytes as never, headers: { 'content-type': ok.contentType, 'content-length': String(ok.bytes.length) } });
    expect(queued.status).toBe(202);
    expect(queued.body).toMatchObject({ status: 'queued' });
  });
});

describe('multipart: a body of no declared length is read no further than SAFT_MAX_BYTES, after the file too', () => {
  let h: TestApp;
  beforeAll(async () => {
    demo = await Bun.file(DEMO).bytes();
    h = await makeApp({ SAFT_MAX_BYTES: String(1024 * 1024) });
  });
  afterAll(() => h.close());

  test('a 2 MB part after the file of a chunked upload: 413 payload_too_large, no run kept', async () => {
    const key = (await h.tenant()).api_key;
    const { bytes, contentType } = await multipart([['file', xmlPart(), 'demo.xml'], ['tail', new Blob([new Uint8Array(2 * 1024 * 1024)]), 'tail.bin']]);
    const chunked = new ReadableStream<Uint8Array>({
      start(c) {
        for (let at = 0; at < bytes.length; at += 64 * 1024) c.enqueue(bytes.subarray(at, at + 64 * 1024));
        c.close();
      },
    });
    expectError(await h.json('POST', '/v1/saft/parse', { key, rawBody: chunked as never, headers: { 'content-type': contentType } }), 413, 'payload_too_large');
    expect(await h.ctx.database.db.select().from(h.ctx.database.t.saftRuns)).toEqual([]);
  });
});
