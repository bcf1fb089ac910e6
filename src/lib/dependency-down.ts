// connection-level failures of PostgreSQL (postgres-js codes, Bun's SQL client's ERR_POSTGRES_CONNECTION_*
// and timeouts, and SQLSTATEs of classes 08, 53, 57P: postgres-js's code, Bun's errno),
// SQLite (busy, locked, cannot open, I/O, read-only, full) and Redis (ioredis)
const DEPENDENCY_DOWN_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN',
  'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', 'ERR_CONNECTION_CLOSED',
  'ERR_POSTGRES_TLS_UPGRADE_FAILED', 'ERR_POSTGRES_TLS_NOT_AVAILABLE', 'ERR_POSTGRES_UNEXPECTED_MESSAGE', 'ERR_POSTGRES_INVALID_MESSAGE', 'ERR_POSTGRES_INVALID_MESSAGE_LENGTH',
  '08000', '08001', '08003', '08004', '08006', '08P01', '53000', '53100', '53200', '53300', '57P01', '57P02', '57P03', '3D000',
  'SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_CANTOPEN', 'SQLITE_IOERR', 'SQLITE_READONLY', 'SQLITE_FULL', 'SQLITE_PROTOCOL',
]);
const DEPENDENCY_DOWN_MESSAGE = /Connection is closed|MaxRetriesPerRequest|Stream isn't writeable|connect ECONNREFUSED|write CONNECTION_|Reached the max retries|database is locked|unable to open database|disk I\/O error/i;

/** Is this a database or Redis being unreachable (503, retry later) rather than a bug (500)? Follows `cause`. */
export function dependencyDown(error: unknown): boolean {
  for (let e = error, depth = 0; e && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    const code = String((e as { code?: unknown }).code ?? '');
    const errno = (e as { errno?: unknown }).errno;
    if (typeof errno === 'string' && DEPENDENCY_DOWN_CODES.has(errno)) return true;
    if (code.startsWith('ERR_POSTGRES_CONNECTION') || (code.startsWith('ERR_POSTGRES_') && code.endsWith('_TIMEOUT'))) return true;
    if (DEPENDENCY_DOWN_CODES.has(code) || code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_READONLY')) return true;
    const name = (e as { name?: unknown }).name;
    if (name === 'MaxRetriesPerRequestError') return true;
    if (e instanceof Error && DEPENDENCY_DOWN_MESSAGE.test(e.message)) return true;
  }
  return false;
}
