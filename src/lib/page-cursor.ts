import { and, eq, gt, lt, or, type Column, type SQL } from 'drizzle-orm';
import { validationError } from './errors';

/** Opaque page cursors: base64url of a JSON array. A cursor that does not decode is a 422 on query.cursor. */
export function encodePageCursor(parts: (string | number)[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}

/** a time a cursor may hold: whole milliseconds from 1970 to 2199 (what the lists' rows have) */
const isCursorTime = (x: number) => Number.isSafeInteger(x) && x >= 0 && x < Date.UTC(2200, 0, 1);

export function decodePageCursor<T extends (string | number)[]>(cursor: string | undefined, shape: ('string' | 'number')[]): T | null {
  if (cursor === undefined || cursor === '') return null;
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    // numbers are times in ms: a forged 1e300 made an invalid date (a 500 on PostgreSQL)
    if (Array.isArray(v) && v.length === shape.length && v.every((x, i) => typeof x === shape[i] && (typeof x !== 'number' || isCursorTime(x)))) return v as T;
  } catch {}
  throw validationError([{ path: 'query.cursor', message: 'unknown cursor; pass next_cursor from the previous page' }]);
}

/**
 * Lists paged by (time, id), newest first (or oldest first: a change feed): the rows after a cursor,
 * and a row's cursor. The id breaks ties between rows of one millisecond.
 */
export function afterTimeCursor(time: Column, id: Column, cursor: string | undefined, order: 'desc' | 'asc' = 'desc'): SQL | undefined {
  const cur = decodePageCursor<[number, string]>(cursor, ['number', 'string']);
  if (!cur) return undefined;
  const at = new Date(cur[0]);
  return order === 'desc' ? or(lt(time, at), and(eq(time, at), lt(id, cur[1]))) : or(gt(time, at), and(eq(time, at), gt(id, cur[1])));
}
export const timeCursorOf = (time: Date, id: string) => encodePageCursor([time.getTime(), id]);
