/**
 * Inclusive `{min, max}` ranges of sizes and costs, in unsigned 64-bit arithmetic that saturates at
 * 2^64 - 1 instead of wrapping, as the reference estimator's does.
 */
export interface Range {
  readonly min: bigint;
  readonly max: bigint;
}

export const MAX = (1n << 64n) - 1n;
const TWO_64 = 2 ** 64;

export const range = (min: bigint, max: bigint): Range => ({ min, max });

/** Ranges are immutable, so the small exact ones an estimate is mostly made of are made once. */
const SMALL: readonly Range[] = Array.from({ length: 256 }, (_, i) => {
  const b = BigInt(i);
  return { min: b, max: b };
});

export const fixed = (n: bigint | number): Range => {
  const small = typeof n === "number" && Number.isInteger(n) && n >= 0 ? SMALL[n] : undefined;
  if (small !== undefined) return small;
  const b = BigInt(n);
  return { min: b, max: b };
};
export const ZERO = fixed(0n);
export const UNKNOWN: Range = { min: 0n, max: MAX };

const add = (x: bigint, y: bigint): bigint => {
  const s = x + y;
  return s > MAX ? MAX : s;
};
const mul = (x: bigint, y: bigint): bigint => {
  const p = x * y;
  return p > MAX ? MAX : p;
};

/** `ceil(x * f)` through a double, as the reference computes it, saturating. */
export function scale(x: bigint, f: number): bigint {
  const c = Math.ceil(Number(x) * f);
  if (!(c < TWO_64)) return MAX;
  return c > 0 ? BigInt(c) : 0n;
}

export const saturatingAdd = (a: Range, b: Range): Range => range(add(a.min, b.min), add(a.max, b.max));
export const saturatingMultiply = (a: Range, b: Range): Range => range(mul(a.min, b.min), mul(a.max, b.max));
export const scaleRange = (a: Range, f: number): Range => range(scale(a.min, f), scale(a.max, f));
// Math.min and Math.max do not take bigints.
const least = (x: bigint, y: bigint): bigint => (x <= y ? x : y);
const most = (x: bigint, y: bigint): bigint => (x >= y ? x : y);

export const union = (a: Range, b: Range): Range => range(least(a.min, b.min), most(a.max, b.max));
/** Bound by bound, the smaller of two ranges: the size of the shorter of two values. */
export const lesser = (a: Range, b: Range): Range => range(least(a.min, b.min), least(a.max, b.max));
export const sum = (rs: readonly Range[]): Range => rs.reduce(saturatingAdd, ZERO);
