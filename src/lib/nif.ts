/**
 * Portuguese tax number (NIF / NIPC) validation.
 *
 * Algorithm (docs: shared domain REFERENCE §1): 9 digits; S = Σ d1..d8 × (9,8,7,6,5,4,3,2),
 * r = S mod 11, check digit = 0 if r ∈ {0,1}, else 11 − r. The NIPC of legal persons uses the
 * same algorithm. This module checks format and check digit only; it does not check prefixes
 * (1/2/3 individuals, 5 legal persons, …) nor whether the number was ever issued.
 *
 * Pure: no I/O.
 */

const WEIGHTS = [9, 8, 7, 6, 5, 4, 3, 2] as const;

/**
 * Check digit for the first eight digits of a NIF.
 * Throws a RangeError when `first8` is not exactly eight ASCII digits.
 */
export function nifCheckDigit(first8: string): number {
  if (typeof first8 !== 'string' || !/^[0-9]{8}$/.test(first8)) {
    throw new RangeError('nifCheckDigit expects exactly 8 digits');
  }
  let sum = 0;
  for (let i = 0; i < 8; i++) sum += (first8.charCodeAt(i) - 48) * WEIGHTS[i]!;
  const r = sum % 11;
  return r < 2 ? 0 : 11 - r;
}

/** True when `nif` is exactly nine ASCII digits and its last digit is the mod-11 check digit. */
export function isValidNif(nif: string): boolean {
  if (typeof nif !== 'string' || !/^[0-9]{9}$/.test(nif)) return false;
  return nifCheckDigit(nif.slice(0, 8)) === nif.charCodeAt(8) - 48;
}

/** a NIF's shape (its check digit apart), and how a refusal of it is worded (plugins/http-errors.ts) */
export const NIF_SHAPE = /^[0-9]{9}$/;
export const NIF_SHAPE_MESSAGE = 'must be exactly 9 digits (a Portuguese NIF/NIPC)';
