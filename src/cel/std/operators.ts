/** The operators: arithmetic, comparison, equality, indexing, membership and the logical operators. */
import type { FunctionDecl } from "../env.js";
import { Op } from "../operators.js";
import {
  addInt,
  addUint,
  divideInt,
  divideUint,
  moduloInt,
  moduloUint,
  multiplyInt,
  multiplyUint,
  negateInt,
  subtractInt,
  subtractUint,
} from "../runtime/arith.js";
import { compare, equals } from "../runtime/compare.js";
import {
  addDurations,
  addTimestampDuration,
  subtractDurations,
  subtractTimestampDuration,
  subtractTimestamps,
} from "../runtime/time.js";
import {
  CelError,
  type CelMap,
  type Duration,
  type Result,
  type Timestamp,
  UInt,
  type Value,
} from "../runtime/values.js";
import { T, type Type } from "../types.js";
import { fn, global } from "./declare.js";

const A = T.param("A");
const B = T.param("B");

const concatBytes = (a: Uint8Array, b: Uint8Array): Uint8Array => {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
};

/** The orderable type pairs: each type with itself, and every pair of numeric types. */
const NUMERIC: readonly [string, Type][] = [
  ["int64", T.int],
  ["uint64", T.uint],
  ["double", T.double],
];
const ORDERED: readonly [string, Type][] = [
  ["bool", T.bool],
  ["string", T.string],
  ["bytes", T.bytes],
  ["timestamp", T.timestamp],
  ["duration", T.duration],
];

function ordering(name: string, idName: string, test: (c: number) => boolean): FunctionDecl {
  const impl = (a: Value, b: Value): Result => {
    const c = compare(a, b);
    return c === undefined ? new CelError(`no such overload: ${name}`) : test(c);
  };
  const overloads = [
    ...ORDERED.map(([n, t]) => global(`${idName}_${n}`, [t, t], T.bool, impl)),
    ...NUMERIC.flatMap(([n1, t1]) =>
      NUMERIC.map(([n2, t2]) =>
        global(`${idName}_${n1}${n1 === n2 ? "" : `_${n2}`}`, [t1, t2], T.bool, impl),
      ),
    ),
  ];
  return fn(name, ...overloads);
}

/** `list[i]`; under `dyn` the index may arrive as a uint or an integral double, which CEL accepts. */
function index(list: readonly Value[], i: Value): Result {
  const n =
    typeof i === "bigint"
      ? i
      : i instanceof UInt
        ? i.value
        : typeof i === "number" && Number.isInteger(i)
          ? BigInt(i)
          : undefined;
  if (n === undefined) return new CelError("unsupported index type");
  if (n < 0n || n >= BigInt(list.length)) return new CelError(`index out of bounds: ${n}`);
  return list[Number(n)] as Value;
}

function lookup(map: CelMap, key: Value): Result {
  const v = map.get(key);
  return v === undefined ? new CelError(`no such key: ${typeof key === "string" ? key : String(key)}`) : v;
}

function inList(x: Value, list: readonly Value[]): boolean {
  for (const e of list) if (equals(x, e)) return true;
  return false;
}

/**
 * `&&`, `||`, `?:` and the loop condition of `all`/`exists` absorb errors and skip operands, so the
 * compiler evaluates them itself; their declarations only give the checker their types.
 */
const compiledSpecially = (): Result => new CelError("internal: a special form was dispatched as a call");

export const operators: readonly FunctionDecl[] = [
  fn(
    Op.logicalNot,
    global("logical_not", [T.bool], T.bool, (a: boolean) => !a),
  ),
  fn(Op.logicalAnd, global("logical_and", [T.bool, T.bool], T.bool, compiledSpecially)),
  fn(Op.logicalOr, global("logical_or", [T.bool, T.bool], T.bool, compiledSpecially)),
  fn(Op.notStrictlyFalse, global("not_strictly_false", [T.bool], T.bool, compiledSpecially)),
  fn(Op.conditional, global("conditional", [T.bool, A, A], A, compiledSpecially)),
  fn(
    Op.equals,
    global("equals", [A, A], T.bool, (a: Value, b: Value) => equals(a, b)),
  ),
  fn(
    Op.notEquals,
    global("not_equals", [A, A], T.bool, (a: Value, b: Value) => !equals(a, b)),
  ),
  ordering(Op.less, "less", (c) => c < 0),
  ordering(Op.lessEquals, "less_equals", (c) => c <= 0),
  ordering(Op.greater, "greater", (c) => c > 0),
  ordering(Op.greaterEquals, "greater_equals", (c) => c >= 0),
  fn(
    Op.add,
    global("add_int64", [T.int, T.int], T.int, addInt),
    global("add_uint64", [T.uint, T.uint], T.uint, addUint),
    global("add_double", [T.double, T.double], T.double, (a: number, b: number) => a + b),
    global("add_string", [T.string, T.string], T.string, (a: string, b: string) => a + b),
    global("add_bytes", [T.bytes, T.bytes], T.bytes, concatBytes),
    global("add_list", [T.list(A), T.list(A)], T.list(A), (a: readonly Value[], b: readonly Value[]) => [
      ...a,
      ...b,
    ]),
    global("add_timestamp_duration", [T.timestamp, T.duration], T.timestamp, addTimestampDuration),
    global("add_duration_timestamp", [T.duration, T.timestamp], T.timestamp, (d: Duration, t: Timestamp) =>
      addTimestampDuration(t, d),
    ),
    global("add_duration_duration", [T.duration, T.duration], T.duration, addDurations),
  ),
  fn(
    Op.subtract,
    global("subtract_int64", [T.int, T.int], T.int, subtractInt),
    global("subtract_uint64", [T.uint, T.uint], T.uint, subtractUint),
    global("subtract_double", [T.double, T.double], T.double, (a: number, b: number) => a - b),
    global("subtract_timestamp_timestamp", [T.timestamp, T.timestamp], T.duration, subtractTimestamps),
    global("subtract_timestamp_duration", [T.timestamp, T.duration], T.timestamp, subtractTimestampDuration),
    global("subtract_duration_duration", [T.duration, T.duration], T.duration, subtractDurations),
  ),
  fn(
    Op.multiply,
    global("multiply_int64", [T.int, T.int], T.int, multiplyInt),
    global("multiply_uint64", [T.uint, T.uint], T.uint, multiplyUint),
    global("multiply_double", [T.double, T.double], T.double, (a: number, b: number) => a * b),
  ),
  fn(
    Op.divide,
    global("divide_int64", [T.int, T.int], T.int, divideInt),
    global("divide_uint64", [T.uint, T.uint], T.uint, divideUint),
    global("divide_double", [T.double, T.double], T.double, (a: number, b: number) => a / b),
  ),
  fn(
    Op.modulo,
    global("modulo_int64", [T.int, T.int], T.int, moduloInt),
    global("modulo_uint64", [T.uint, T.uint], T.uint, moduloUint),
  ),
  fn(
    Op.negate,
    global("negate_int64", [T.int], T.int, negateInt),
    global("negate_double", [T.double], T.double, (a: number) => -a),
  ),
  fn(
    Op.index,
    { ...global("index_list", [T.list(A), T.int], A, index), runtimeParams: [T.list(A), T.dyn] },
    global("index_map", [T.map(A, B), A], B, lookup),
  ),
  fn(
    Op.in,
    global("in_list", [A, T.list(A)], T.bool, inList),
    global("in_map", [A, T.map(A, B)], T.bool, (k: Value, m: CelMap) => m.has(k)),
  ),
];
