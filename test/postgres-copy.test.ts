/**
 * The patched postgres.js COPY FROM STDIN, as the service's usage appends and decisions use it:
 * the messages it sends, seen by a TCP proxy between it and PostgreSQL. Unpatched, every COPY
 * ended with a CopyFail ("null") after its CopyDone: ignored by the server, but a socket write per
 * COPY, and an abort of a later COPY on the same connection had one already begun.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { pipeline } from 'node:stream/promises';
import postgres from 'postgres';
import { PG_ADMIN_URL, TEST_DB } from './helpers';
setDefaultTimeout(30_000);

/** a proxy to PostgreSQL that records the type of every message the client sends after startup */
function recordingProxy(target: { host: string; port: number }) {
  const sent: string[] = [];
  const server = Bun.listen<{ upstream?: Awaited<ReturnType<typeof Bun.connect>>; pending: Buffer[]; buf: Buffer; started: boolean }>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      async open(client) {
        client.data = { pending: [], buf: Buffer.alloc(0), started: false };
        client.data.upstream = await Bun.connect({
          hostname: target.host,
          port: target.port,
          socket: {
            data: (_s, d) => void client.write(d),
            close: () => void client.end(),
          },
        });
        for (const p of client.data.pending) client.data.upstream.write(p);
      },
      data(client, d) {
        const st = client.data;
        st.buf = Buffer.concat([st.buf, d]);
        // frontend messages: the startup packet (length first), then a type byte and a length each
        for (;;) {
          if (!st.started) {
            if (st.buf.length < 4) break;
            const len = st.buf.readInt32BE(0);
            if (st.buf.length < len) break;
            st.buf = st.buf.subarray(len);
            st.started = true;
            continue;
          }
          if (st.buf.length < 5) break;
          const len = st.buf.readInt32BE(1);
          if (st.buf.length < 1 + len) break;
          sent.push(String.fromCharCode(st.buf[0]!));
          st.buf = st.buf.subarray(1 + len);
        }
        if (st.upstream) st.upstream.write(d);
        else st.pending.push(Buffer.from(d));
      },
      close: (client) => void client.data.upstream?.end(),
    },
  });
  return { sent, server };
}

describe.skipIf(TEST_DB !== 'postgres')('postgres.js COPY FROM STDIN (patched)', () => {
  const url = new URL(PG_ADMIN_URL);
  let proxy: ReturnType<typeof recordingProxy>;
  let sql: postgres.Sql;

  beforeAll(async () => {
    proxy = recordingProxy({ host: url.hostname, port: Number(url.port || 5432) });
    sql = postgres(`postgres://${url.username}@127.0.0.1:${proxy.server.port}${url.pathname}`, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await sql.end({ timeout: 1 });
    proxy.server.stop(true);
  });

  test('two COPYs in one transaction: each ends with CopyDone and no CopyFail, and both rows are there', async () => {
    const table = `copy_probe_${crypto.randomUUID().slice(0, 8)}`;
    await sql.unsafe(`create table ${table} (n int)`);
    try {
      proxy.sent.length = 0;
      await sql.begin(async (tx) => {
        for (const n of [1, 2]) {
          const copy = tx.unsafe(`copy ${table} (n) from stdin`);
          await pipeline(
            (async function* () {
              yield `${n}\n`;
            })(),
            await copy.writable(),
          );
        }
      });
      await Bun.sleep(50); // anything sent after the last answer reaches the proxy too
      expect(proxy.sent.filter((t) => t === 'c').length).toBe(2);
      expect(proxy.sent).not.toContain('f');
      expect((await sql.unsafe(`select n from ${table} order by n`)).map((r) => r.n)).toEqual([1, 2]);
    } finally {
      await sql.unsafe(`drop table ${table}`);
    }
  });

  test('a COPY whose data the server refuses still fails as before (the error reaches the caller), and the connection works after', async () => {
    const table = `copy_probe_${crypto.randomUUID().slice(0, 8)}`;
    await sql.unsafe(`create table ${table} (n int)`);
    try {
      const copy = sql.unsafe(`copy ${table} (n) from stdin`);
      copy.catch(() => {});
      const failed = await pipeline(
        (async function* () {
          yield 'not a number\n';
        })(),
        await copy.writable(),
      ).then(
        () => null,
        (e: Error) => e.message,
      );
      expect(failed).toContain('invalid input syntax for type integer');
      expect((await sql`select 1 as one`)[0]!.one).toBe(1);
    } finally {
      await sql.unsafe(`drop table ${table}`);
    }
  });
});
