import { describe, expect, test } from 'bun:test';
import { isValidNif, nifCheckDigit } from '../src/lib/nif';
import { mulberry32 } from '../src/lib/prng';

// Independent re-implementation (different code path) used as an oracle.
function oracle(nif: string): boolean {
  if (nif.length !== 9) return false;
  const digits: number[] = [];
  for (const ch of nif) {
    const d = '0123456789'.indexOf(ch);
    if (d < 0) return false;
    digits.push(d);
  }
  let s = 0;
  for (let i = 0; i < 8; i++) s += digits[i]! * (9 - i);
  const r = s % 11;
  const check = r === 0 || r === 1 ? 0 : 11 - r;
  return digits[8] === check;
}


describe('isValidNif', () => {
  test('REFERENCE §1 valid examples', () => {
    for (const nif of ['500000000', '510000002', '501000003', '450000001', '123456789', '999999990', '600000001', '599999993']) {
      expect({ nif, valid: isValidNif(nif) }).toEqual({ nif, valid: true });
    }
  });

  test('REFERENCE §1 invalid examples', () => {
    for (const nif of ['599999999', '215445936']) {
      expect({ nif, valid: isValidNif(nif) }).toEqual({ nif, valid: false });
    }
  });

  test('changing the check digit of a valid NIF makes it invalid', () => {
    for (const nif of ['500000000', '510000002', '501000003', '450000001', '123456789', '999999990']) {
      const last = Number(nif[8]);
      for (let d = 0; d <= 9; d++) {
        if (d === last) continue;
        expect(isValidNif(nif.slice(0, 8) + d)).toBe(false);
      }
    }
  });

  test('non-digits are rejected', () => {
    for (const nif of ['50000000a', 'a00000000', '5000 0000', ' 50000000', '50000000 ', '5000-0000', '+50000000', '-50000000', '5.0000000', '５00000000', '50000000٠', 'PT5000000']) {
      expect({ nif, valid: isValidNif(nif) }).toEqual({ nif, valid: false });
    }
  });

  test('wrong length is rejected', () => {
    for (const nif of ['', '5', '50000000', '5000000000', '0500000000', '500000000\n', ' 500000000', '500000000 ']) {
      expect({ nif, valid: isValidNif(nif) }).toEqual({ nif, valid: false });
    }
  });

  test('non-string input is rejected without throwing', () => {
    for (const v of [500000000, null, undefined, {}, ['500000000']]) {
      expect(isValidNif(v as unknown as string)).toBe(false);
    }
  });

  test('agrees with an independent oracle on random 9-digit strings; exactly one check digit per prefix', () => {
    const rng = mulberry32(20261122);
    for (let i = 0; i < 2000; i++) {
      const first8 = String(Math.floor(rng() * 1e8)).padStart(8, '0');
      let validCount = 0;
      for (let d = 0; d <= 9; d++) {
        const nif = first8 + d;
        const v = isValidNif(nif);
        expect(v).toBe(oracle(nif));
        if (v) validCount++;
      }
      expect(validCount).toBe(1);
      expect(isValidNif(first8 + nifCheckDigit(first8))).toBe(true);
    }
  });
});

describe('nifCheckDigit', () => {
  test('REFERENCE §1 workings', () => {
    expect(nifCheckDigit('50000000')).toBe(0); // S=45, r=1 → 0
    expect(nifCheckDigit('51000000')).toBe(2); // r=9 → 2
    expect(nifCheckDigit('50100000')).toBe(3); // r=8 → 3
    expect(nifCheckDigit('45000000')).toBe(1); // r=10 → 1
    expect(nifCheckDigit('12345678')).toBe(9); // S=156, r=2 → 9
    expect(nifCheckDigit('99999999')).toBe(0); // r=0 → 0
  });

  test('rejects anything that is not exactly 8 digits', () => {
    for (const bad of ['', '1234567', '123456789', '1234567a', ' 1234567']) {
      expect(() => nifCheckDigit(bad)).toThrow(RangeError);
    }
  });
});
