/**
 * What the HTTP server answers outside the application (issue 17 item 5), over a raw socket:
 * a body above the limit is the API's own 413 with the §2.8 body whatever its declared size;
 * oversized headers (431) and malformed header bytes (400) are refused by Bun's HTTP parser before
 * any application code runs, with an empty body and `Connection: close` — documented in the README.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, spawnServer } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

let server: Awaited<ReturnType<typeof spawnServer>>;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'limits-'));
  server = await spawnServer({ DATA_DIR: dir, SEED_DEMO_TENANT: 'false', LOG_LEVEL: 'silent', DATABASE_URL: '', REDIS_URL: '' });
  // a real key: the key is judged before the body (a bad key is 401 whatever the body)
  key = JSON.parse((await runCli(['tenant', 'create', '--name', 'limits', '--json'], { DATA_DIR: dir, DATABASE_URL: '', REDIS_URL: '' })).stdout).api_key;
}, 30_000);
afterAll(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

function raw(payload: string): Promise<{ status: number; head: string; body: string }> {
  return new Promise((resolve) => {
    let out = '';
    const done = () => {
      const [head = '', body = ''] = out.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(out)?.[1] ?? 0), head, body });
    };
    const s = net.connect(server.port, '127.0.0.1', () => s.write(payload));
    s.on('data', (d) => (out += d.toString('latin1')));
    s.on('close', done);
    s.on('error', done);
    setTimeout(() => s.destroy(), 5000);
  });
}
let key = '';
const unknownKey = `sk_test_${'0'.repeat(28)}`;

describe('limits outside the application', () => {
  test('a body declared far above the limit (20 GB) is the API\'s 413 with the §2.8 body', async () => {
    for (const length of [2_000_000, 20_000_000, 20_000_000_000]) {
      const r = await raw(`POST /v1/score HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n{`);
      expect(r.status).toBe(413);
      expect(r.head.toLowerCase()).toContain('content-type: application/json');
      expect(JSON.parse(r.body.slice(0, r.body.lastIndexOf('}') + 1))).toMatchObject({ code: 'payload_too_large', status: 413 });
    }
  });
  test('an unknown key with a body declared above the limit: 401, the body never read', async () => {
    const r = await raw(`POST /v1/score HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${unknownKey}\r\nContent-Type: application/json\r\nContent-Length: 20000000000\r\nConnection: close\r\n\r\n{`);
    expect(r.status).toBe(401);
    expect(JSON.parse(r.body).code).toBe('invalid_api_key');
  });
  test('POST /v1/saft/parse: a file declared above its 512 MiB limit (raw or multipart) is 413 before any byte is read', async () => {
    for (const type of ['application/xml', 'multipart/form-data; boundary=x']) {
      const r = await raw(`POST /v1/saft/parse HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nContent-Type: ${type}\r\nContent-Length: ${512 * 1024 * 1024 + 65 * 1024}\r\nConnection: close\r\n\r\n<`);
      expect(r.status).toBe(413);
      expect(JSON.parse(r.body.slice(r.body.indexOf('{'), r.body.lastIndexOf('}') + 1))).toMatchObject({ code: 'payload_too_large', status: 413, message: expect.stringContaining('536870912') });
    }
  });
  test('oversized headers or query (431) and a NUL or bare CR in a header (400): Bun\'s parser, empty body, connection closed', async () => {
    const cases: [string, number][] = [
      [`GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
      [`GET /healthz?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`, 431],
      [`GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-A: a\0b\r\n\r\n`, 400],
      [`GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-A: a\rb\r\n\r\n`, 400],
    ];
    for (const [payload, status] of cases) {
      const r = await raw(payload);
      expect({ status: r.status, body: r.body }).toEqual({ status, body: '' });
      expect(r.head.toLowerCase()).toContain('connection: close');
    }
    expect((await fetch(`${server.base}/healthz`)).status).toBe(200); // and the server carries on
  });
});
