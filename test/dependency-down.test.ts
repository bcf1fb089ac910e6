import { describe, expect, test } from 'bun:test';
import { isUniqueViolation } from '../src/db/client';
import { dependencyDown } from '../src/lib/dependency-down';

/**
 * Which errors mean "a dependency is down" (503, a group commit fails every caller at once) and
 * which mean "this row clashes" (a unique violation), for each client the service uses: postgres.js,
 * Bun's SQL client (group commits: SQLSTATE in `errno`, its own codes in `code`), bun:sqlite, ioredis.
 */
const bunPg = (code: string, errno?: string, message = 'x') => Object.assign(new Error(message), { name: 'PostgresError', code, errno });

describe('dependencyDown', () => {
  test.each([
    ['postgres.js, connection refused', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })],
    ['postgres.js, backend terminated (SQLSTATE in code)', Object.assign(new Error('terminating connection'), { code: '57P01' })],
    ["Bun's client, connection refused", bunPg('ERR_POSTGRES_CONNECTION_REFUSED', undefined, 'Failed to connect')],
    ["Bun's client, connection closed", bunPg('ERR_POSTGRES_CONNECTION_CLOSED')],
    ["Bun's client, a timeout", bunPg('ERR_POSTGRES_IDLE_TIMEOUT')],
    ["Bun's client, TLS upgrade failed", bunPg('ERR_POSTGRES_TLS_UPGRADE_FAILED')],
    ["Bun's client, backend terminated (SQLSTATE in errno)", bunPg('ERR_POSTGRES_SERVER_ERROR', '57P01')],
    ["Bun's client, too many connections", bunPg('ERR_POSTGRES_SERVER_ERROR', '53300')],
    ['wrapped by Drizzle (cause)', Object.assign(new Error('Failed query'), { cause: bunPg('ERR_POSTGRES_CONNECTION_CLOSED') })],
    ['SQLite busy', Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })],
  ])('%s: down', (_name, err) => {
    expect(dependencyDown(err)).toBe(true);
  });

  test.each([
    ["Bun's client, unique violation", bunPg('ERR_POSTGRES_SERVER_ERROR', '23505', 'duplicate key value')],
    ["Bun's client, a bad value", bunPg('ERR_POSTGRES_SERVER_ERROR', '22P02', 'invalid input syntax')],
    ["Bun's client, a programming error", bunPg('ERR_POSTGRES_NOT_TAGGED_CALL')],
    ['a plain error', new Error('boom')],
    ['SQLite, a constraint', Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_UNIQUE' })],
  ])('%s: not down', (_name, err) => {
    expect(dependencyDown(err)).toBe(false);
  });
});

describe('isUniqueViolation', () => {
  test('postgres.js (code), Bun (errno), SQLite (code, errno, message), through a cause; not another SQLSTATE', () => {
    expect(isUniqueViolation(Object.assign(new Error('dup'), { code: '23505' }))).toBe(true);
    expect(isUniqueViolation(bunPg('ERR_POSTGRES_SERVER_ERROR', '23505'))).toBe(true);
    expect(isUniqueViolation(Object.assign(new Error('Failed query'), { cause: bunPg('ERR_POSTGRES_SERVER_ERROR', '23505') }))).toBe(true);
    expect(isUniqueViolation(Object.assign(new Error('x'), { code: 'SQLITE_CONSTRAINT_UNIQUE' }))).toBe(true);
    expect(isUniqueViolation(Object.assign(new Error('x'), { errno: 2067 }))).toBe(true);
    expect(isUniqueViolation(bunPg('ERR_POSTGRES_SERVER_ERROR', '23503', 'foreign key'))).toBe(false);
    expect(isUniqueViolation(bunPg('ERR_POSTGRES_CONNECTION_CLOSED'))).toBe(false);
  });
});
