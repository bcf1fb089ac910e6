import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { Database as Sqlite } from 'bun:sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { mapWalIndex, OwnCommits, walChangeSignal } from '../src/db/sqlite-change-signal';
import { makeApp, type TestApp } from './helpers';
setDefaultTimeout(30_000); // hooks ignore bunfig's timeout and default to 5 s

describe('walChangeSignal (SQLite wal-index header)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wal-signal-'));
  const file = join(dir, 'x.sqlite');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('moves on every commit of any connection or process, and only then', () => {
    const a = new Sqlite(file, { create: true });
    a.exec('PRAGMA journal_mode = WAL');
    a.exec('create table t (x integer)');
    const b = new Sqlite(file);
    const map = mapWalIndex(file)!;
    expect(map).not.toBeNull();
    const signal = walChangeSignal(map.header);
    const v0 = signal();
    expect(signal()).toBe(v0);
    b.query('select count(*) from t').get(); // reads change nothing
    expect(signal()).toBe(v0);
    b.exec('insert into t values (1)');
    const v1 = signal();
    expect(v1).not.toBe(v0);
    expect(signal()).toBe(v1);
    const other = Bun.spawnSync(['bun', '-e', `const { Database } = require('bun:sqlite'); new Database(${JSON.stringify(file)}).exec('insert into t values (2)')`]);
    expect(other.exitCode).toBe(0);
    const v2 = signal();
    expect(v2).not.toBe(v1);
    a.exec('PRAGMA wal_checkpoint(TRUNCATE)'); // a checkpoint alone is not a change of data…
    a.exec('insert into t values (3)'); // …but the write that restarts the WAL is
    expect(signal()).not.toBe(v2);
    a.close();
    b.close();
    map.close();
  });

  test('a declared commit (the usage appends) alone does not move it; any other commit with or after it does', () => {
    const f = join(dir, 'own.sqlite');
    const a = new Sqlite(f, { create: true });
    a.exec('PRAGMA journal_mode = WAL');
    a.exec('create table t (x integer)');
    const appender = new Sqlite(f);
    const own = new OwnCommits();
    const map = mapWalIndex(f)!;
    const writer = OwnCommits.writer(map.header, own.shared);
    const signal = walChangeSignal(map.header, [own]);
    const declared = (x: number) => {
      appender.transaction(() => {
        appender.exec(`insert into t values (${x})`);
        writer.beforeCommit();
      }).immediate();
      writer.afterCommit();
    };
    const v0 = signal();
    declared(1);
    expect(signal()).toBe(v0);
    declared(2);
    declared(3); // several in a row before a look (a flush of several transactions)
    expect(signal()).toBe(v0);
    a.exec('insert into t values (31)');
    const v1 = signal();
    expect(v1).not.toBe(v0);
    declared(32);
    a.exec('insert into t values (33)'); // a commit between two declared ones…
    declared(34);
    expect(signal()).not.toBe(v1); // …is seen
    a.exec('insert into t values (4)'); // another connection's commit…
    declared(5); // …then a declared one: the change is not only the declared one
    const v2 = signal();
    expect(v2).not.toBe(v1);
    declared(6);
    declared(61);
    expect(signal()).toBe(v2);
    // a commit between the declared one's lock and the look: counted
    declared(7);
    a.exec('insert into t values (8)');
    expect(signal()).not.toBe(v2);
    a.close();
    appender.close();
    map.close();
  });

  test('a look between a WAL restart and its commit, between the header\'s two copies, or before the writer declared its commit, is no change', () => {
    // the wal-index header as SQLite lays it out: two copies of 12 words (change counter at word 2,
    // last frame at word 4, salts at 8-9), the second copy written first
    const live = new Uint32Array(34);
    const write = (h: number[], copies: 'both' | 'second' = 'both') => {
      live.set(h, 12);
      if (copies === 'both') live.set(h, 0);
    };
    const header = (change: number, frames: number, salt: number) => [3007000, 0, change, 0x10000101, frames, 9, change, frames, salt, salt + 1, change * 3, frames * 5];
    write(header(41, 120, 7));
    const own = new OwnCommits();
    const writer = OwnCommits.writer(live, own.shared);
    const signal = walChangeSignal(live, [own]);
    const v0 = signal();
    // a declared commit that restarts the WAL, looked at at every stage of it
    writer.beforeCommit();
    write(header(41, 0, 8)); // the restart's header: same counter, no frames, new salt
    expect(signal()).toBe(v0);
    write(header(42, 3, 8), 'second'); // the commit's header, half written
    expect(signal()).toBe(v0);
    write(header(42, 3, 8)); // committed, not declared yet (the writer's thread was preempted)
    expect(signal()).toBe(v0);
    writer.afterCommit();
    expect(signal()).toBe(v0);
    // the same with a commit by another connection after the restart: counted once
    write(header(42, 0, 9));
    expect(signal()).toBe(v0);
    write(header(43, 2, 9));
    const v1 = signal();
    expect(v1).not.toBe(v0);
    expect(signal()).toBe(v1);
    // a writer whose commit is in progress explains only the one commit after the header it read:
    // two commits (its own and another's after its lock) are counted at once
    writer.beforeCommit();
    write(header(45, 6, 9));
    const v2 = signal();
    expect(v2).not.toBe(v1);
    // a COMMIT that failed: its writer clears what it showed, and a commit after it is counted
    writer.release();
    write(header(46, 7, 9));
    expect(signal()).not.toBe(v2);
  });

  test('no -shm file (not a WAL database): null, so callers fall back', () => {
    expect(mapWalIndex(join(dir, 'missing.sqlite'))).toBeNull();
  });

  // POSIX drops all of a process's locks on a file when it closes any descriptor of it: a mapping
  // made by open-map-close took SQLite's lock on the -shm away, and the next process to open the
  // database truncated the file under the mapping (SIGBUS in the service)
  test.if(process.platform === 'linux')("mapping the header leaves SQLite's locks on the -shm file in place, until close", () => {
    const f = join(dir, 'locks.sqlite');
    const a = new Sqlite(f, { create: true });
    a.exec('PRAGMA journal_mode = WAL');
    a.exec('create table t (x integer)');
    const { ino } = require('node:fs').statSync(`${f}-shm`);
    const locks = () => require('node:fs').readFileSync('/proc/locks', 'utf8').split('\n').filter((l: string) => l.split(/\s+/).some((w: string) => w.endsWith(`:${ino}`))).length;
    const held = locks();
    expect(held).toBeGreaterThan(0);
    const map = mapWalIndex(f)!;
    expect(locks()).toBe(held);
    // another process opens, writes and closes: it must not rebuild the -shm, and the mapping sees its commit
    const before = map.header[2];
    const other = Bun.spawnSync(['bun', '-e', `const { Database } = require('bun:sqlite'); new Database(${JSON.stringify(f)}).exec('insert into t values (1)')`]);
    expect(other.exitCode).toBe(0);
    expect(map.header[2]).toBe((before! + 1) >>> 0);
    a.close();
    map.close();
  });
});

describe('appendRows (usage records off the request thread)', () => {
  let h: TestApp;
  beforeAll(async () => {
    h = await makeApp();
  });
  afterAll(() => h.close());

  test('text that COPY would read as control sequences is stored as sent (backslash, tab, newline)', async () => {
    const t = await h.tenant();
    const { usageRecords } = h.ctx.database.t;
    const tricky = 'a\\b\tc\nd\re \\N';
    await h.ctx.database.appendRows(usageRecords, [{ id: crypto.randomUUID(), tenantId: t.tenant_id, env: 'live', meter: tricky, quantity: 1, billable: false, requestIds: '\\N', createdAt: new Date() }]);
    const [stored] = await h.ctx.database.db.select().from(usageRecords).where(eq(usageRecords.tenantId, t.tenant_id));
    expect(stored).toMatchObject({ meter: tricky, requestIds: '\\N', billable: false, unitAmountCents: null });
  });

  test('rows are committed when it resolves; a retried batch is skipped row by row, not duplicated', async () => {
    const t = await h.tenant();
    const { usageRecords } = h.ctx.database.t;
    const row = (i: number) => ({
      id: `01900000-0000-7000-8000-${String(i).padStart(12, '0')}`,
      tenantId: t.tenant_id,
      apiKeyId: t.api_key_id,
      env: 'live',
      meter: 'score',
      quantity: 1,
      unitAmountCents: 50,
      amountCents: 50,
      billable: true,
      requestIds: `req_${i}`,
      createdAt: new Date('2026-11-22T10:00:00.123Z'),
    });
    await h.ctx.database.appendRows(usageRecords, [row(1), row(2)]);
    // another row shape in the same batch: unpriced, fractional, with a retention date
    const other = { ...row(4), unitAmountCents: undefined, amountCents: 0.125, billable: false, retainUntil: new Date('2033-11-22T00:00:00Z') };
    await h.ctx.database.appendRows(usageRecords, [row(1), row(2), row(3), other]);
    const stored = await h.ctx.database.db.select().from(usageRecords).where(eq(usageRecords.tenantId, t.tenant_id)).orderBy(usageRecords.id);
    expect(stored.map((r) => r.requestIds)).toEqual(['req_1', 'req_2', 'req_3', 'req_4']);
    expect(stored[3]).toMatchObject({ unitAmountCents: null, amountCents: 0.125, billable: false, retainUntil: new Date('2033-11-22T00:00:00Z'), createdAt: row(4).createdAt });
    // dates and booleans went through the column mappings (what the API reads back)
    expect(stored[0]).toMatchObject({ billable: true, createdAt: new Date('2026-11-22T10:00:00.123Z'), amountCents: 50, retainUntil: null });
  });

  test('a flush larger than one transaction (SQLite: 250 rows each) is written whole', async () => {
    const t = await h.tenant();
    const { usageRecords } = h.ctx.database.t;
    const rows = Array.from({ length: 600 }, (_, i) => ({ id: crypto.randomUUID(), tenantId: t.tenant_id, env: 'live', meter: 'score', quantity: 1, billable: true, requestIds: `req_big_${i}`, createdAt: new Date() }));
    await h.ctx.database.appendRows(usageRecords, rows);
    const stored = await h.ctx.database.db.select({ id: usageRecords.id }).from(usageRecords).where(eq(usageRecords.tenantId, t.tenant_id));
    expect(stored).toHaveLength(600);
  });

  test('inside a transaction the rows join it: committed with it, gone if it rolls back (never waiting for its own lock)', async () => {
    const { usageRecords } = h.ctx.database.t;
    const t = await h.tenant();
    const row = (requestIds: string) => ({ id: crypto.randomUUID(), tenantId: t.tenant_id, env: 'live', meter: 'score', quantity: 1, billable: true, requestIds, createdAt: new Date() });
    const within = (requestIds: string, fail: boolean) =>
      h.ctx.database.withTx(async () => {
        await Promise.race([h.ctx.database.appendRows(usageRecords, [row(requestIds)]), Bun.sleep(3000).then(() => Promise.reject(new Error('appendRows waited for its own transaction')))]);
        if (fail) throw new Error('rolled back');
      });
    await within('req_in_tx', false);
    await expect(within('req_rolled_back', true)).rejects.toThrow('rolled back');
    const stored = await h.ctx.database.db.select({ r: usageRecords.requestIds }).from(usageRecords).where(eq(usageRecords.tenantId, t.tenant_id));
    expect(stored.map((x) => x.r)).toEqual(['req_in_tx']);
  });

  test('a row that breaks a constraint fails its whole batch, and nothing of it is written', async () => {
    const { usageRecords } = h.ctx.database.t;
    const t = await h.tenant();
    const ok = { id: crypto.randomUUID(), tenantId: t.tenant_id, env: 'live', meter: 'score', quantity: 1, billable: true, requestIds: 'req_ok', createdAt: new Date() };
    const { meter: _, ...unmetered } = { ...ok, id: crypto.randomUUID(), requestIds: 'req_unmetered' }; // meter is NOT NULL
    await expect(h.ctx.database.appendRows(usageRecords, [ok, unmetered])).rejects.toThrow();
    expect(await h.ctx.database.db.select().from(usageRecords).where(eq(usageRecords.requestIds, 'req_ok'))).toEqual([]);
    if (h.ctx.database.pg) {
      // the refused COPY was rolled back and its connection returned (postgres.js, patched: a refused
      // COPY used to hang forever and keep its connection in an aborted transaction)
      const stuck = await h.ctx.database.pg`select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'`;
      expect(stuck[0]!.n).toBe(0);
      await h.ctx.database.appendRows(usageRecords, [{ ...ok, id: crypto.randomUUID() }]);
      expect(await h.ctx.database.db.select().from(usageRecords).where(eq(usageRecords.requestIds, 'req_ok'))).toHaveLength(1);
    }
  });
});
