import { FormatRegistry } from '@sinclair/typebox';
import { t } from 'elysia';

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;
/**
 * `format: date-time` as JSON Schema and OpenAPI define it (RFC 3339: a date, a time and a time
 * zone), replacing Elysia's own check, which also takes a date alone or any text Date can parse
 * (so a request could pass validation with a value the document calls invalid, and a date alone
 * would silently mean UTC midnight). Registered at load, whichever of the two modules loads first.
 */
export function isRfc3339DateTime(value: string): boolean {
  const m = RFC3339.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return false;
  if (hour > 23 || minute > 59 || second > 59) return false; // no leap seconds: Date cannot hold them
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return false;
  return !Number.isNaN(Date.parse(value.replace(' ', 'T')));
}
FormatRegistry.Set('date-time', isRfc3339DateTime);

/** TypeBox building blocks shared by feature models. */
export const DateTime = t.String({ format: 'date-time' });
export const NullableDateTime = t.Union([t.String({ format: 'date-time' }), t.Null()]);
export const Uuid = t.String({ format: 'uuid' });
export const Nif = t.String({ pattern: '^[0-9]{9}$', description: 'Portuguese tax number (NIF/NIPC): exactly 9 digits, the last being its mod-11 check digit (a NIF that fails it is 422 invalid_nif)', examples: ['599000015'] });
export const CustomerReference = t.String({ maxLength: 128, description: 'Your own reference, echoed back (max 128 characters)' });
export const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/** cursor pagination: ?limit=&cursor= → {data, next_cursor} */
export const PageQuery = {
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: t.Optional(t.String({ maxLength: 200 })),
};
export const Page = <S extends Parameters<typeof t.Array>[0]>(item: S) =>
  t.Object({ data: t.Array(item), next_cursor: t.Union([t.String(), t.Null()], { description: 'Pass as cursor to get the next page; null on the last page.' }) });

/**
 * The one pagination helper: given up to limit+1 rows (queried in page order, after the cursor),
 * returns the page and the cursor of its last row when more rows follow.
 */
export function pageOf<Row, Item>(rows: Row[], limit: number, item: (row: Row) => Item, cursorOf: (row: Row) => string) {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { data: page.map(item), next_cursor: rows.length > limit && last !== undefined ? cursorOf(last) : null };
}
