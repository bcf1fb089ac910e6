/**
 * Money for receivables finance: integer cents only (never binary floating point), rates in basis
 * points, day counts on ISO dates. Products and quotients go through BigInt and round half away
 * from zero once, at the end, so a fee is the same whatever the order of the arithmetic.
 */

/** Actual/360, the money-market convention Portuguese factoring contracts use for discount fees. */
export const DAY_COUNT_BASIS = 360;

/** Whole days from one ISO date (YYYY-MM-DD) to another; negative when `to` is earlier. */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

/** numerator / denominator rounded half away from zero (BigInt, exact). */
function divRound(numerator: bigint, denominator: bigint): bigint {
  const negative = numerator < 0n !== denominator < 0n;
  const n = numerator < 0n ? -numerator : numerator;
  const d = denominator < 0n ? -denominator : denominator;
  const q = (n * 2n + d) / (2n * d);
  return negative ? -q : q;
}

/** `bps` basis points of an amount in cents, rounded to the cent. */
export function shareCents(amountCents: number, bps: number): number {
  return Number(divRound(BigInt(amountCents) * BigInt(bps), 10_000n));
}

/**
 * Interest-style discount: amount × annual rate × days / 360, in cents. Rates are in basis points
 * (a base rate plus a spread); days below 0 count as 0.
 */
export function discountCents(amountCents: number, annualRateBps: number, days: number): number {
  if (days <= 0 || annualRateBps <= 0) return 0;
  return Number(divRound(BigInt(amountCents) * BigInt(annualRateBps) * BigInt(days), 10_000n * BigInt(DAY_COUNT_BASIS)));
}

/** The sum of integer cents, checked to stay within exact doubles. */
export function sumCents(values: number[]): number {
  let total = 0n;
  for (const v of values) total += BigInt(v);
  if (total > BigInt(Number.MAX_SAFE_INTEGER) || total < -BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError('amount out of range');
  return Number(total);
}

/** Cents as a decimal string of euros, for documents and labels: 123456 → "1234.56". */
export function centsToEuros(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const a = Math.abs(cents);
  return `${sign}${Math.floor(a / 100)}.${String(a % 100).padStart(2, '0')}`;
}

/**
 * Each part's share of their sum in basis points, adding up to exactly 10 000 (largest remainder:
 * each share is rounded down, and the points left go to the largest remainders, ties in order).
 */
export function sharesBps(parts: number[]): number[] {
  const total = parts.reduce((a, b) => a + BigInt(b), 0n);
  if (total === 0n) return parts.map(() => 0);
  const exact = parts.map((p) => BigInt(p) * 10_000n);
  const shares = exact.map((x) => x / total);
  let left = 10_000 - shares.reduce((a, b) => a + Number(b), 0);
  const byRemainder = exact.map((x, i) => ({ i, r: x % total })).sort((a, b) => (b.r > a.r ? 1 : b.r < a.r ? -1 : a.i - b.i));
  for (const { i } of byRemainder) {
    if (left-- <= 0) break;
    shares[i]! += 1n;
  }
  return shares.map(Number);
}

/** Euros from cents, in the language's convention: 1 234,56 € or €1,234.56 (notices, the portal, decision basis lines). */
export function money(cents: number, lang: 'pt-PT' | 'en'): string {
  const neg = cents < 0 ? '-' : '';
  const a = Math.abs(cents);
  const units = String(Math.floor(a / 100));
  const dec = String(a % 100).padStart(2, '0');
  const grouped = units.replace(/\B(?=(\d{3})+(?!\d))/g, lang === 'pt-PT' ? ' ' : ',');
  return lang === 'pt-PT' ? `${neg}${grouped},${dec} €` : `${neg}€${grouped}.${dec}`;
}
