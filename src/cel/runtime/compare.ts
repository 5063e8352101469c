/**
 * Equality and ordering as CEL defines them at run time: numbers compare by mathematical value across
 * int, uint and double (never through a lossy conversion); values of different kinds are unequal, not an
 * error; lists and maps compare element by element.
 */
import { CelMap, Duration, isObjectValue, Timestamp, TypeValue, UInt, type Value } from "./values.js";

/** An int/uint as bigint, a double as number; undefined for every other kind. */
function numeric(v: Value): bigint | number | undefined {
  if (typeof v === "bigint" || typeof v === "number") return v;
  if (v instanceof UInt) return v.value;
  return undefined;
}

const TWO_63 = 2 ** 63;
const TWO_64 = 2 ** 64;

/**
 * -1, 0, 1, or NaN for a double NaN. Ints and uints compare exactly with each other; against a double
 * they compare as cel-go does, by converting the integer to a double once the double is inside the
 * integer's range (the conformance suite pins this: `dyn(9223372036854775807) < 9223372036854775808.0`
 * is false).
 */
export function compareNumbers(
  a: bigint | number,
  b: bigint | number,
  aUnsigned = false,
  bUnsigned = false,
): number {
  if (typeof a === "bigint" && typeof b === "bigint") return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === "number" && typeof b === "number") {
    if (Number.isNaN(a) || Number.isNaN(b)) return Number.NaN;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof a === "bigint") return compareIntegerDouble(a, b as number, aUnsigned);
  return -compareIntegerDouble(b as bigint, a, bUnsigned);
}

function compareIntegerDouble(i: bigint, d: number, unsigned: boolean): number {
  if (Number.isNaN(d)) return Number.NaN;
  const [lo, hi] = unsigned ? [0, TWO_64] : [-TWO_63, TWO_63];
  if (d < lo) return 1;
  if (d > hi) return -1;
  const x = Number(i);
  return x < d ? -1 : x > d ? 1 : 0;
}

export function equals(a: Value, b: Value): boolean {
  // Identity settles primitives only: the same list may hold a NaN, which equals nothing.
  if (a === b && (typeof a !== "object" || a === null)) return typeof a !== "number" || !Number.isNaN(a);
  const na = numeric(a);
  if (na !== undefined) {
    const nb = numeric(b);
    return nb !== undefined && compareNumbers(na, nb, a instanceof UInt, b instanceof UInt) === 0;
  }
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && listEquals(a, b);
  if (a instanceof Uint8Array) return b instanceof Uint8Array && bytesCompare(a, b) === 0;
  if (a instanceof CelMap) return b instanceof CelMap && mapEquals(a, b);
  if (a instanceof Timestamp) return b instanceof Timestamp && a.nanos === b.nanos;
  if (a instanceof Duration) return b instanceof Duration && a.nanos === b.nanos;
  if (a instanceof TypeValue) return b instanceof TypeValue && a.name === b.name;
  if (isObjectValue(a) && isObjectValue(b)) return objectEquals(a, b);
  return false;
}

function listEquals(a: readonly Value[], b: readonly Value[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!equals(a[i] as Value, b[i] as Value)) return false;
  return true;
}

function mapEquals(a: CelMap, b: CelMap): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a.pairs()) {
    const other = b.get(k);
    if (other === undefined || !equals(v, other)) return false;
  }
  return true;
}

/**
 * Objects from the journal are plain data: equal when every field is, an unset field equal to its
 * type's zero value (as it reads), and field values compared as CEL values.
 */
function objectEquals(a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>): boolean {
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const x = a[k];
    const y = b[k];
    if (x === undefined && y === undefined) continue;
    const left = (x === undefined ? zeroLike(y) : x) as Value | undefined;
    const right = (y === undefined ? zeroLike(x) : y) as Value | undefined;
    if (left === undefined || right === undefined || !equals(left, right)) return false;
  }
  return true;
}

/** The zero value of the kind `v` has, for an unset field compared with a set one. */
function zeroLike(v: unknown): Value | undefined {
  switch (typeof v) {
    case "string":
      return "";
    case "number":
      return 0;
    case "bigint":
      return 0n;
    case "boolean":
      return false;
    default:
      if (Array.isArray(v)) return [];
      if (v instanceof UInt) return new UInt(0n);
      return undefined;
  }
}

export function bytesCompare(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = (a[i] as number) - (b[i] as number);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** Code-point order, which UTF-16 order is not once surrogate pairs appear. */
export function stringCompare(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    // A surrogate (a code point above U+FFFF) sorts after every BMP unit it might tie with.
    if (xs !== ys) return xs ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/**
 * -1, 0 or 1 when CEL orders the two values; NaN when a double is NaN (every comparison is false);
 * undefined when the kinds have no ordering between them (no such overload).
 */
export function compare(a: Value, b: Value): number | undefined {
  const na = numeric(a);
  if (na !== undefined) {
    const nb = numeric(b);
    return nb === undefined ? undefined : compareNumbers(na, nb, a instanceof UInt, b instanceof UInt);
  }
  if (typeof a === "string") return typeof b === "string" ? stringCompare(a, b) : undefined;
  if (typeof a === "boolean") return typeof b === "boolean" ? Number(a) - Number(b) : undefined;
  if (a instanceof Uint8Array) return b instanceof Uint8Array ? bytesCompare(a, b) : undefined;
  if (a instanceof Timestamp)
    return b instanceof Timestamp ? Math.sign(Number(a.nanos - b.nanos)) : undefined;
  if (a instanceof Duration) return b instanceof Duration ? Math.sign(Number(a.nanos - b.nanos)) : undefined;
  return undefined;
}
