/**
 * The standard normal distribution: CDF and its inverse, accurate to ~1e-15 (double precision).
 * N is W. J. Cody's rational Chebyshev approximation of erfc (Math. Comp. 1969); the inverse is
 * P. J. Acklam's rational approximation refined by one Halley step against that CDF.
 */

function erfcCody(x: number): number {
  const ax = Math.abs(x);
  let r: number;
  if (ax < 0.5) {
    const z = x * x;
    const p = ((((1.857777061846031526730e-1 * z + 3.161123743870565596947) * z + 1.138641541510501556495e2) * z + 3.774852376853020208137e2) * z + 3.209377589138469472562e3);
    const q = ((((z + 2.360129095234412093499e1) * z + 2.440246379344441733056e2) * z + 1.282616526077372275645e3) * z + 2.844236833439170622273e3);
    return 1 - (x * p) / q;
  } else if (ax < 4) {
    const p = (((((((2.15311535474403846343e-8 * ax + 5.64188496988670089180e-1) * ax + 8.88314979438837594118) * ax + 6.61191906371416294775e1) * ax + 2.98635138197400131132e2) * ax + 8.81952221241769090411e2) * ax + 1.71204761263407058314e3) * ax + 2.05107837782607146532e3) * ax + 1.23033935479799725272e3;
    const q = (((((((ax + 1.57449261107098347253e1) * ax + 1.17693950891312499305e2) * ax + 5.37181101862009857509e2) * ax + 1.62138957456669018874e3) * ax + 3.29079923573345962678e3) * ax + 4.36261909014324715820e3) * ax + 3.43936767414372163696e3) * ax + 1.23033935480374942043e3;
    r = (Math.exp(-ax * ax) * p) / q;
  } else {
    const z = 1 / (ax * ax);
    const p = ((((1.63153871373020978498e-2 * z + 3.05326634961232344035e-1) * z + 3.60344899949804439429e-1) * z + 1.25781726111229246204e-1) * z + 1.60837851487422766278e-2) * z + 6.58749161529837803157e-4;
    const q = ((((z + 2.56852019228982242072) * z + 1.87295284992346725209) * z + 5.27905102951428412248e-1) * z + 6.05183413124413191178e-2) * z + 2.33520497626869185443e-3;
    r = (Math.exp(-ax * ax) / ax) * (0.5641895835477562869 - (z * p) / q);
  }
  return x < 0 ? 2 - r : r;
}

/** Φ(x), the standard normal cumulative distribution function. */
export function normalCdf(x: number): number {
  if (Number.isNaN(x)) return NaN;
  return 0.5 * erfcCody(-x / Math.SQRT2);
}

const A = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
const B = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
const C = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
const D = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];

/** Φ⁻¹(p) for 0 < p < 1 (±Infinity at 0 and 1). */
export function normalInverse(p: number): number {
  if (Number.isNaN(p) || p < 0 || p > 1) return NaN;
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  const pLow = 0.02425;
  let x: number;
  if (p < pLow) {
    const q = Math.sqrt(-2 * Math.log(p));
    x = (((((C[0]! * q + C[1]!) * q + C[2]!) * q + C[3]!) * q + C[4]!) * q + C[5]!) / ((((D[0]! * q + D[1]!) * q + D[2]!) * q + D[3]!) * q + 1);
  } else if (p <= 1 - pLow) {
    const q = p - 0.5;
    const r = q * q;
    x = ((((((A[0]! * r + A[1]!) * r + A[2]!) * r + A[3]!) * r + A[4]!) * r + A[5]!) * q) / (((((B[0]! * r + B[1]!) * r + B[2]!) * r + B[3]!) * r + B[4]!) * r + 1);
  } else {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    x = -(((((C[0]! * q + C[1]!) * q + C[2]!) * q + C[3]!) * q + C[4]!) * q + C[5]!) / ((((D[0]! * q + D[1]!) * q + D[2]!) * q + D[3]!) * q + 1);
  }
  // one Halley step: e = Φ(x) − p, u = e·√(2π)·exp(x²/2)
  const e = normalCdf(x) - p;
  const u = e * Math.sqrt(2 * Math.PI) * Math.exp((x * x) / 2);
  return x - u / (1 + (x * u) / 2);
}
