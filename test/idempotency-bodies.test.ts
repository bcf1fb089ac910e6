/**
 * An Idempotency-Key's request is its method, its path with the query, and its body, whatever the
 * body's kind: JSON, a file held in memory (invoice extract) or a streamed upload (SAF-T).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { expectError, makeApp, ROOT, type TestApp } from './helpers';
import { requestTarget, StreamDigest, streamMatches } from '../src/features/idempotency/fingerprint';

let h: TestApp;
let key: string;
beforeAll(async () => {
  h = await makeApp();
  key = (await h.tenant({ rateLimitPerMinute: 10_000 })).api_key;
});
afterAll(() => h.close());

const demo = readFileSync(join(ROOT, 'fixtures/saft/saft_idemo599999999.xml'));
const qrPng = readFileSync(join(ROOT, 'fixtures/invoice/at-example-qr.png'));
const post = (path: string, body: Uint8Array, type: string, idem: string) =>
  h.json('POST', path, { key, rawBody: body as never, headers: { 'content-type': type, 'content-length': String(body.length), 'idempotency-key': idem } });

describe('streamed uploads (POST /v1/saft/parse)', () => {
  test('the same file again is the stored answer; another file of the same length, or the same file with other query parameters, is 422 idempotency_key_reused', async () => {
    const first = await post('/v1/saft/parse?customer_reference=a&import=false', demo, 'application/xml', 'saft-1');
    expect(first.status).toBe(200);
    // the query's order does not matter
    const again = await post('/v1/saft/parse?import=false&customer_reference=a', demo, 'application/xml', 'saft-1');
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.parse_id).toBe(first.body.parse_id);
    // one byte changed, same length: another file
    const other = new Uint8Array(demo);
    const at = Buffer.from(demo).indexOf('<CompanyName>') + '<CompanyName>'.length;
    other[at] = other[at] === 0x58 ? 0x59 : 0x58;
    expectError(await post('/v1/saft/parse?customer_reference=a&import=false', other, 'application/xml', 'saft-1'), 422, 'idempotency_key_reused');
    // the same bytes but an import: another request, not a replay of the parse
    const imported = await post('/v1/saft/parse?customer_reference=a&import=true', demo, 'application/xml', 'saft-1');
    expectError(imported, 422, 'idempotency_key_reused');
    expect(imported.body.message).toContain('/v1/saft/parse?customer_reference=a&import=false');
  });

  test('the producer\'s public key sent as X-Public-Key is part of the request (as its multipart field is)', async () => {
    const pem = readFileSync(join(ROOT, 'fixtures/saft/saft_demo_public_key.pem'), 'utf8').replace(/\n/g, '');
    const send = (headers: Record<string, string>) => h.json('POST', '/v1/saft/parse', { key, rawBody: demo as never, headers: { 'content-type': 'application/xml', 'content-length': String(demo.length), 'idempotency-key': 'pk-1', ...headers } });
    const unverified = await send({});
    expect(unverified.status).toBe(200);
    expectError(await send({ 'x-public-key': pem }), 422, 'idempotency_key_reused');
    expect((await send({})).headers.get('idempotent-replayed')).toBe('true');
  });

  test('a multipart retry with another boundary and filename is the same request; another file or field is not', async () => {
    const form = (boundary: string, filename: string, file: Uint8Array, fields: Record<string, string> = {}) => {
      const enc = new TextEncoder();
      const head = Object.entries(fields).map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`).join('');
      return Buffer.concat([enc.encode(`${head}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/xml\r\n\r\n`), file, enc.encode(`\r\n--${boundary}--\r\n`)]);
    };
    const send = (boundary: string, filename: string, file: Uint8Array, fields?: Record<string, string>) => post('/v1/saft/parse', form(boundary, filename, file, fields), `multipart/form-data; boundary=${boundary}`, 'saft-multipart');
    const first = await send('----a1', 'saft.xml', demo, { customer_reference: 'r1' });
    expect(first.status).toBe(200);
    // a client's next attempt: a new random boundary (of another length) and another filename, so another Content-Length
    const again = await send('------------------------7d9b2c41e0f5a3c8', 'SAFT_2025.xml', demo, { customer_reference: 'r1' });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.parse_id).toBe(first.body.parse_id);
    const other = new Uint8Array(demo);
    other[Buffer.from(demo).indexOf('<CompanyName>') + '<CompanyName>'.length] ^= 1;
    expectError(await send('----a1', 'saft.xml', other, { customer_reference: 'r1' }), 422, 'idempotency_key_reused');
    expectError(await send('----a1', 'saft.xml', demo, { customer_reference: 'r2' }), 422, 'idempotency_key_reused');
  });

  test('a streamed upload still arriving after the lock timeout keeps its claim: a retry meanwhile is 409 idempotency_key_in_use, not a second run', async () => {
    const gates = [Promise.withResolvers<void>(), Promise.withResolvers<void>()];
    const third = Math.ceil(demo.length / 3);
    const slow = new ReadableStream<Uint8Array>({
      async start(c) {
        c.enqueue(demo.subarray(0, third));
        await gates[0]!.promise;
        c.enqueue(demo.subarray(third, 2 * third));
        await gates[1]!.promise;
        c.enqueue(demo.subarray(2 * third));
        c.close();
      },
    });
    const headers = { 'content-type': 'application/xml', 'idempotency-key': 'slow-1' };
    const first = h.json('POST', '/v1/saft/parse', { key, rawBody: slow as never, headers });
    await Bun.sleep(100); // claimed, its first bytes read
    h.clock.advance(100_000);
    gates[0]!.resolve(); // more bytes 100 s later: a sign of life
    await Bun.sleep(100);
    h.clock.advance(100_000); // 200 s after the claim, 100 s after its last bytes
    expectError(await post('/v1/saft/parse', demo, 'application/xml', 'slow-1'), 409, 'idempotency_key_in_use');
    gates[1]!.resolve();
    const done = await first;
    expect(done.status).toBe(200);
    const again = await post('/v1/saft/parse', demo, 'application/xml', 'slow-1');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.parse_id).toBe(done.body.parse_id);
    // silent past the timeout (its process gone): taken over, as before
    const stalled = new ReadableStream<Uint8Array>({ start: (c) => void c.enqueue(demo.subarray(0, third)) });
    void h.json('POST', '/v1/saft/parse', { key, rawBody: stalled as never, headers: { ...headers, 'idempotency-key': 'slow-2' } }).catch(() => {});
    await Bun.sleep(100);
    h.clock.advance(121_000);
    const takeover = await post('/v1/saft/parse', demo, 'application/xml', 'slow-2');
    expect(takeover.status).toBe(200);
    expect(takeover.headers.get('idempotent-replayed')).toBeNull();
  });

  test('a file its route refused part-way is compared on what was read: the same prefix replays the refusal', async () => {
    const broken = new TextEncoder().encode('<?xml version="1.0"?><NotSaft>' + 'x'.repeat(200_000));
    const first = await post('/v1/saft/parse', broken, 'application/xml', 'saft-2');
    const again = await post('/v1/saft/parse', broken, 'application/xml', 'saft-2');
    expect(again.status).toBe(first.status);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });
});

describe('files held in memory (POST /v1/invoice/extract)', () => {
  test('the same image again is the stored answer; another image is 422 idempotency_key_reused (compared by its hash, at once)', async () => {
    const first = await post('/v1/invoice/extract', qrPng, 'image/png', 'qr-1');
    expect(first.status).toBe(200);
    const again = await post('/v1/invoice/extract', qrPng, 'image/png', 'qr-1');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const other = new Uint8Array(qrPng.length + 1);
    other.set(qrPng);
    expectError(await post('/v1/invoice/extract', other, 'image/png', 'qr-1'), 422, 'idempotency_key_reused');
    // a 10 MiB body with a key is hashed, not walked byte by byte as an object (that took ~2 s a MiB)
    const big = new Uint8Array(10 * 1024 * 1024);
    big.set(qrPng);
    const started = performance.now();
    await post('/v1/invoice/extract', big, 'image/png', 'qr-big');
    const again2 = await post('/v1/invoice/extract', big, 'image/png', 'qr-big');
    expect(again2.headers.get('idempotent-replayed')).toBe('true');
    expect(performance.now() - started).toBeLessThan(15_000); // a bound far above the hash, far below the walk (~40 s)
  });
});

describe('fingerprint parts', () => {
  test('requestTarget: the query sorted, an empty one dropped', () => {
    expect(requestTarget('/v1/x', 'http://h/v1/x')).toBe('/v1/x');
    expect(requestTarget('/v1/x', 'http://h/v1/x?')).toBe('/v1/x');
    expect(requestTarget('/v1/x', 'http://h/v1/x?b=2&a=1&a=0')).toBe('/v1/x?a=1&a=0&b=2');
    // a repeated parameter's values keep their order (the last one counts): two different requests
    expect(requestTarget('/v1/x', 'http://h/v1/x?r=A&r=B')).not.toBe(requestTarget('/v1/x', 'http://h/v1/x?r=B&r=A'));
  });

  test('streamMatches: a full body matches only the same bytes and length; a prefix matches any body that starts with it', async () => {
    const bytes = new TextEncoder().encode('abcdefghij');
    const stream = (b: Uint8Array, piece = 3) => new ReadableStream<Uint8Array>({ start(c) { for (let i = 0; i < b.length; i += piece) c.enqueue(b.slice(i, i + piece)); c.close(); } });
    const full = new StreamDigest();
    await new Response(full.wrap(stream(bytes))).arrayBuffer();
    const sealed = full.seal();
    expect(sealed.startsWith('stream:full:10:')).toBe(true);
    expect(await streamMatches(sealed, stream(bytes, 4))).toBe(true);
    expect(await streamMatches(sealed, stream(new TextEncoder().encode('abcdefghijk')))).toBe(false);
    expect(await streamMatches(sealed, stream(new TextEncoder().encode('abcdefghi')))).toBe(false);
    expect(await streamMatches(sealed, stream(new TextEncoder().encode('abcdefghiX')))).toBe(false);
    const partial = new StreamDigest();
    const reader = partial.wrap(stream(bytes)).getReader();
    await reader.read(); // the route stopped after its first piece
    const prefix = partial.seal();
    expect(prefix.startsWith('stream:prefix:3:')).toBe(true);
    expect(await streamMatches(prefix, stream(new TextEncoder().encode('abcXYZ')))).toBe(true);
    expect(await streamMatches(prefix, stream(new TextEncoder().encode('abX')))).toBe(false);
  });
});
