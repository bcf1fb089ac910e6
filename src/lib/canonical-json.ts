/**
 * JSON with object keys sorted at every depth (undefined members left out, as JSON.stringify
 * does): the same data always reads, and hashes, the same — key order and whitespace aside.
 * The audit hash chain, idempotency's body comparison and the ERP sync's change detection.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const o = value as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(',')}}`;
}
