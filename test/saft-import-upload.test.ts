/**
 * A SAF-T import answered at once parses in one transaction: the upload is read before it opens,
 * so a slow or stalled client never holds the database's writes (on SQLite, every write of the
 * process waits for an open write transaction), and an upload of no declared length larger than
 * SAFT_SYNC_MAX_BYTES goes the background way (202) rather than being imported in that transaction.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { join } from 'node:path';
import { makeApp, ROOT, type TestApp } from './helpers';
setDefaultTimeout(30_000);

const DEMO = join(ROOT, 'fixtures/saft/saft_idemo599999999.xml');

/** the demo file sent chunked (no Content-Length) in two halves; the second only once `release()` is called */
function pausedUpload(bytes: Uint8Array) {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let firstSent!: () => void;
  const halfway = new Promise<void>((r) => (firstSent = r));
  const half = Math.floor(bytes.length / 2);
  let step = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      if (step === 0) {
        step++;
        c.enqueue(bytes.subarray(0, half));
        firstSent();
      } else if (step === 1) {
        step++;
        await released;
        c.enqueue(bytes.subarray(half));
      } else c.close();
    },
  });
  return { body, release, halfway };
}

describe('POST /v1/saft/parse?import=true from a slow client', () => {
  let h: TestApp;
  beforeAll(async () => {
    h = await makeApp({}, { workers: false });
  });
  afterAll(() => h.close());

  test('other requests write while the upload stalls; the import then answers 200, stored', async () => {
    const t = await h.tenant();
    const bytes = await Bun.file(DEMO).bytes();
    const up = pausedUpload(bytes);
    const upload = h.app.handle(new Request('http://localhost/v1/saft/parse?import=true&customer_reference=slow', { method: 'POST', headers: { authorization: `Bearer ${t.api_key}`, 'content-type': 'application/xml' }, body: up.body }));
    await up.halfway;
    await Bun.sleep(50); // the route is reading the upload
    // a write of another request (a force-refreshed score is stored before it is answered)
    const scored = h.json('POST', '/v1/score', { key: t.api_key, body: { nif: '599000015', refresh: 'force_refresh' } });
    const first = await Promise.race([scored.then((r) => r.status), Bun.sleep(3_000).then(() => 'still waiting for the upload' as const)]);
    expect(first).toBe(200);
    up.release();
    const res = await upload;
    const body = (await res.json()) as { valid: boolean; import: { imported: boolean; invoices: number } };
    expect(res.status).toBe(200);
    expect(body.import).toMatchObject({ imported: true, invoices: 24 });
    expect((await h.json('GET', '/v1/erp/saft/invoices?limit=100&customer_reference=slow', { key: t.api_key })).body.data.length).toBe(24);
  });
});

describe('an import of no declared length larger than SAFT_SYNC_MAX_BYTES', () => {
  let h: TestApp;
  beforeAll(async () => {
    h = await makeApp({ SAFT_SYNC_MAX_BYTES: '1000' }, { workers: false });
  });
  afterAll(() => h.close());

  test('goes the background way (202 and a run to poll), as a declared one does; a parse without import still answers at once', async () => {
    const t = await h.tenant();
    const bytes = await Bun.file(DEMO).bytes();
    const send = (query: string) => {
      const up = pausedUpload(bytes);
      up.release();
      return h.app.handle(new Request(`http://localhost/v1/saft/parse${query}`, { method: 'POST', headers: { authorization: `Bearer ${t.api_key}`, 'content-type': 'application/xml' }, body: up.body }));
    };
    const imported = await send('?import=true');
    expect(imported.status).toBe(202);
    const run = (await imported.json()) as { parse_id: string; status: string; bytes: number };
    expect(run).toMatchObject({ status: 'queued', bytes: bytes.length });
    expect(imported.headers.get('location')).toBe(`/v1/saft/parse/${run.parse_id}`);
    const parsed = await send('');
    expect(parsed.status).toBe(200);
    expect(((await parsed.json()) as { valid: boolean }).valid).toBe(true);
  });
});
