/**
 * The size-dependent call costs of the standard library, each written once with both its static
 * estimate (over size ranges) and its runtime charge (over actual values), so the two cannot drift
 * apart. Arguments are receiver-first on both sides. A call with no rule here costs `COST.call`, or its
 * declared fixed cost.
 */
import { CelMap, type Value } from "../runtime/values.js";
import { codePointLength } from "../source.js";
import { COST, scaled } from "./constants.js";
import { lesser, MAX, type Range, range, saturatingAdd, saturatingMultiply, scaleRange } from "./range.js";

export interface CallCostRule {
  /** The call's own cost and, for sized results, the result's size, from the arguments' sizes. */
  readonly estimate: (sizes: readonly Range[]) => { readonly cost: Range; readonly resultSize?: Range };
  /** The call's own charge, from the argument values. */
  readonly runtime: (args: readonly Value[]) => number;
}

/** The size CEL's `size()` gives, and 1 for values that have none. */
export function actualSize(v: Value): number {
  if (typeof v === "string") return codePointLength(v);
  if (v instanceof Uint8Array || Array.isArray(v)) return v.length;
  if (v instanceof CelMap) return v.size;
  return 1;
}

const T = COST.stringTraversalFactor;

/**
 * `ceil(code points * 0.1)` of a string, without counting when it cannot matter: a string of at most
 * ten UTF-16 units has at most ten code points, so it costs 1 (or 0 when empty).
 */
export function traversalUnits(s: string): number {
  if (s.length <= 10) return s.length > 0 ? 1 : 0;
  return scaled(codePointLength(s), T);
}

/** The equality rule for two strings: a traversal of the shorter, in code points. */
export function stringEqualityUnits(a: string, b: string): number {
  if (a.length <= 10 || b.length <= 10) return a.length > 0 && b.length > 0 ? 1 : 0;
  return a.length <= b.length ? equalityOf(a, b, codePointLength(a)) : equalityOf(b, a, codePointLength(b));
}

/**
 * `stringEqualityUnits(x, text)` for a constant `text` whose code points (`textPoints`) were counted
 * once, at compile time.
 */
export function constantEqualityUnits(x: string, text: string, textPoints: number): number {
  if (x.length <= 10 || text.length <= 10) return x.length > 0 && text.length > 0 ? 1 : 0;
  return equalityOf(text, x, textPoints);
}

/**
 * The traversal of the shorter of `known` (with `points` code points) and `other`, counting `other`'s
 * code points only when the answer depends on them: equal strings have the same count, and a string of
 * n UTF-16 units has at least n / 2 code points.
 */
function equalityOf(known: string, other: string, points: number): number {
  const fewest =
    known === other || other.length >= 2 * points ? points : Math.min(points, codePointLength(other));
  return scaled(fewest, T);
}
const at = (sizes: readonly Range[], i: number): Range => sizes[i] ?? range(0n, 0n);
const sizeAt = (args: readonly Value[], i: number): number => actualSize(args[i] as Value);

/** Traversing the shorter of two values: equality and ordering of sized values. */
const compareBySize: CallCostRule = {
  estimate: (s) => ({ cost: scaleRange(lesser(at(s, 0), at(s, 1)), T) }),
  runtime: (args) => {
    const [a, b] = args;
    if (typeof a === "string" && typeof b === "string") return stringEqualityUnits(a, b);
    return scaled(Math.min(sizeAt(args, 0), sizeAt(args, 1)), T);
  },
};

/** Traversing the second argument (a prefix or suffix). */
const traverseSecond: CallCostRule = {
  estimate: (s) => ({ cost: scaleRange(at(s, 1), T) }),
  runtime: (args) => traversalUnits(args[1] as string),
};

const concatenate: CallCostRule = {
  estimate: (s) => {
    const size = saturatingAdd(at(s, 0), at(s, 1));
    return { cost: scaleRange(size, T), resultSize: size };
  },
  runtime: (args) => scaled(sizeAt(args, 0) + sizeAt(args, 1), T),
};

const matchesRule: CallCostRule = {
  estimate: (s) => ({
    cost: saturatingMultiply(
      scaleRange(saturatingAdd(at(s, 0), range(1n, 1n)), T),
      scaleRange(at(s, 1), COST.regexLengthFactor),
    ),
  }),
  runtime: (args) => scaled(1 + sizeAt(args, 0), T) * scaled(sizeAt(args, 1), COST.regexLengthFactor),
};

export const CALL_COSTS: Readonly<Record<string, CallCostRule>> = {
  equals: compareBySize,
  not_equals: compareBySize,
  less_string: compareBySize,
  less_equals_string: compareBySize,
  greater_string: compareBySize,
  greater_equals_string: compareBySize,
  less_bytes: compareBySize,
  less_equals_bytes: compareBySize,
  greater_bytes: compareBySize,
  greater_equals_bytes: compareBySize,
  starts_with_string: traverseSecond,
  ends_with_string: traverseSecond,
  contains_string: {
    estimate: (s) => ({ cost: saturatingMultiply(scaleRange(at(s, 0), T), scaleRange(at(s, 1), T)) }),
    runtime: (args) => scaled(sizeAt(args, 0), T) * scaled(sizeAt(args, 1), T),
  },
  matches: matchesRule,
  matches_string: matchesRule,
  add_string: concatenate,
  add_bytes: concatenate,
  add_list: {
    estimate: (s) => ({ cost: range(1n, 1n), resultSize: saturatingAdd(at(s, 0), at(s, 1)) }),
    runtime: () => COST.call,
  },
  in_list: {
    estimate: (s) => ({ cost: at(s, 1) }),
    runtime: (args) => sizeAt(args, 1),
  },
  string_to_bytes: {
    estimate: (s) => {
      const a = at(s, 0);
      return { cost: scaleRange(a, T), resultSize: range(a.min, a.max * 4n > MAX ? MAX : a.max * 4n) };
    },
    runtime: (args) => scaled(sizeAt(args, 0), T),
  },
  bytes_to_string: {
    estimate: (s) => {
      const a = at(s, 0);
      return { cost: scaleRange(a, T), resultSize: range(a.min / 4n, a.max) };
    },
    runtime: (args) => scaled(sizeAt(args, 0), T),
  },
};
