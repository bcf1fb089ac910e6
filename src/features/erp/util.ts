import { ApiError } from '../../lib/errors';
import { getTableName, sql, type SQL } from 'drizzle-orm';

/** Who is calling (from the auth plugin). */
export interface ErpCaller {
  tenantId: string;
  keyId: string | null;
  env: 'sandbox' | 'live';
  requestId: string | null;
}


/** A position in a source stream: the (updated_at, id) of the last row taken. */
export interface StreamPosition {
  updated_at: string;
  id: string;
}
export interface SyncCursor {
  invoices: StreamPosition | null;
  transactions: StreamPosition | null;
}

export const emptyCursor = (): SyncCursor => ({ invoices: null, transactions: null });

export function parseSyncCursor(text: string | null): SyncCursor | null {
  if (!text) return null;
  try {
    const v = JSON.parse(text) as SyncCursor;
    return { invoices: v.invoices ?? null, transactions: v.transactions ?? null };
  } catch {
    return null;
  }
}

/** Provider ids: numeric ids compare as numbers, others as plain strings (no locale). */
export function compareIds(a: string, b: string): number {
  const na = /^\d+$/.test(a);
  const nb = /^\d+$/.test(b);
  if (na && nb) {
    const x = a.replace(/^0+(?=\d)/, '');
    const y = b.replace(/^0+(?=\d)/, '');
    if (x.length !== y.length) return x.length - y.length;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Strictly after the position in (updated_at, id) order; no position = everything. */
export function isAfter(updatedAt: string, id: string, pos: StreamPosition | null): boolean {
  if (!pos) return true;
  if (updatedAt !== pos.updated_at) return updatedAt > pos.updated_at;
  return compareIds(id, pos.id) > 0;
}

export function maxPosition(a: StreamPosition | null, updatedAt: string, id: string): StreamPosition {
  return isAfter(updatedAt, id, a) ? { updated_at: updatedAt, id } : a!;
}

export function median(values: number[]): number | null {
  if (!values.length) return null;
  const s = [...values].sort((x, y) => x - y);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** 404 for a source (provider and customer_reference) under which the tenant has no books at all. */
export const noBooks = (source: { provider: string; customer_reference: string }) =>
  new ApiError('resource_not_found', `No books under ${source.provider}/${source.customer_reference} for this tenant in this environment (sync an ERP connection or import a SAF-T file first).`, {
    fields: [{ path: 'source', message: 'no invoices or bank movements' }],
  });

/**
 * The SET of an upsert into the ERP store: each field from the row offered (`excluded`); `syncedAt`
 * only when another field differs, so synced_at is when the row last changed here (the change feed).
 */
export function excludedSet(table: Record<string, unknown>, fields: string[], dialect: 'sqlite' | 'postgres'): Record<string, SQL> {
  const out: Record<string, SQL> = {};
  const column = (f: string) => (table[f] as { name: string }).name;
  const stored = (f: string) => `"${getTableName(table as never)}"."${column(f)}"`;
  for (const f of fields) out[f] = sql.raw(`excluded."${column(f)}"`);
  // synced_at is when the row last changed here (GET …?synced_since= reads it as a change feed): a
  // row written again as it was keeps it
  const differs = fields
    .filter((f) => f !== 'syncedAt')
    .map((f) => `${stored(f)} ${dialect === 'postgres' ? 'IS DISTINCT FROM' : 'IS NOT'} excluded."${column(f)}"`)
    .join(' OR ');
  if (fields.includes('syncedAt')) out.syncedAt = sql.raw(`CASE WHEN ${differs} THEN excluded."${column('syncedAt')}" ELSE ${stored('syncedAt')} END`);
  return out;
}
