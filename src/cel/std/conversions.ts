/** Type conversions (`int`, `uint`, `double`, `string`, `bytes`, `bool`, `timestamp`, `duration`) and `dyn`, `type`. */
import type { FunctionDecl } from "../env.js";
import {
  formatDuration,
  formatTimestamp,
  parseDuration,
  parseTimestamp,
  timestampFromSeconds,
  timestampSeconds,
} from "../runtime/time.js";
import {
  CelError,
  type Duration,
  INT64_MAX,
  INT64_MIN,
  type Result,
  type Timestamp,
  TypeValue,
  typeName,
  UINT64_MAX,
  UInt,
  type Value,
} from "../runtime/values.js";
import { T } from "../types.js";
import { fn, global } from "./declare.js";

const A = T.param("A");
const range = () => new CelError("range error converting value");
const TWO_63 = 2 ** 63;
const TWO_64 = 2 ** 64;

function intFromDouble(d: number): Result {
  // Both ends are exclusive: -2^63 is exact as a double, but cel-go refuses it too.
  if (!(d > -TWO_63 && d < TWO_63)) return range();
  return BigInt(Math.trunc(d));
}

function uintFromDouble(d: number): Result {
  if (!(d >= 0 && d < TWO_64)) return range();
  return new UInt(BigInt(Math.trunc(d)));
}

const DECIMAL_INT = /^[+-]?\d+$/;

function intFromString(s: string): Result {
  if (!DECIMAL_INT.test(s)) return new CelError(`cannot convert "${s}" to int`);
  const v = BigInt(s);
  return v < INT64_MIN || v > INT64_MAX ? range() : v;
}

function uintFromString(s: string): Result {
  if (!/^\+?\d+$/.test(s)) return new CelError(`cannot convert "${s}" to uint`);
  const v = BigInt(s);
  return v > UINT64_MAX ? range() : new UInt(v);
}

const DECIMAL_FLOAT = /^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)$/;
const SPECIAL_FLOAT: Readonly<Record<string, number>> = {
  inf: Number.POSITIVE_INFINITY,
  "+inf": Number.POSITIVE_INFINITY,
  "-inf": Number.NEGATIVE_INFINITY,
  infinity: Number.POSITIVE_INFINITY,
  "+infinity": Number.POSITIVE_INFINITY,
  "-infinity": Number.NEGATIVE_INFINITY,
  nan: Number.NaN,
};

/** What Go's strconv.ParseFloat accepts for decimal input, with its special spellings. */
function doubleFromString(s: string): Result {
  if (DECIMAL_FLOAT.test(s)) return Number(s);
  const special = SPECIAL_FLOAT[s.toLowerCase()];
  return special === undefined ? new CelError(`cannot convert "${s}" to double`) : special;
}

/**
 * A double as cel-go prints it (Go's `%g`, shortest form): an exponent of at least two digits when the
 * decimal exponent is below -4 or at least 6, plain decimal otherwise.
 */
export function formatDouble(d: number): string {
  if (Number.isNaN(d)) return "NaN";
  if (!Number.isFinite(d)) return d > 0 ? "+Inf" : "-Inf";
  if (d === 0) return Object.is(d, -0) ? "-0" : "0";
  const [mantissa, expText] = d.toExponential().split("e") as [string, string];
  const exp = Number(expText);
  if (exp < -4 || exp >= 6)
    return `${mantissa}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  return d.toFixed(Math.max(0, (mantissa.split(".")[1]?.length ?? 0) - exp));
}

const GO_BOOLS: Readonly<Record<string, boolean>> = {
  "1": true,
  t: true,
  T: true,
  true: true,
  TRUE: true,
  True: true,
  "0": false,
  f: false,
  F: false,
  false: false,
  FALSE: false,
  False: false,
};

function boolFromString(s: string): Result {
  const b = GO_BOOLS[s];
  return b === undefined ? new CelError(`cannot convert "${s}" to bool`) : b;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function stringFromBytes(b: Uint8Array): Result {
  try {
    return utf8.decode(b);
  } catch {
    return new CelError("invalid UTF-8 in bytes, cannot convert to string");
  }
}

export const conversions: readonly FunctionDecl[] = [
  fn(
    "int",
    global("int64_to_int64", [T.int], T.int, (a: bigint) => a),
    global("uint64_to_int64", [T.uint], T.int, (a: UInt) => (a.value > INT64_MAX ? range() : a.value)),
    global("double_to_int64", [T.double], T.int, intFromDouble),
    global("string_to_int64", [T.string], T.int, intFromString),
    global("timestamp_to_int64", [T.timestamp], T.int, timestampSeconds),
  ),
  fn(
    "uint",
    global("uint64_to_uint64", [T.uint], T.uint, (a: UInt) => a),
    global("int64_to_uint64", [T.int], T.uint, (a: bigint) => (a < 0n ? range() : new UInt(a))),
    global("double_to_uint64", [T.double], T.uint, uintFromDouble),
    global("string_to_uint64", [T.string], T.uint, uintFromString),
  ),
  fn(
    "double",
    global("double_to_double", [T.double], T.double, (a: number) => a),
    global("int64_to_double", [T.int], T.double, (a: bigint) => Number(a)),
    global("uint64_to_double", [T.uint], T.double, (a: UInt) => Number(a.value)),
    global("string_to_double", [T.string], T.double, doubleFromString),
  ),
  fn(
    "string",
    global("string_to_string", [T.string], T.string, (a: string) => a),
    global("int64_to_string", [T.int], T.string, (a: bigint) => a.toString()),
    global("uint64_to_string", [T.uint], T.string, (a: UInt) => a.value.toString()),
    global("double_to_string", [T.double], T.string, formatDouble),
    global("bool_to_string", [T.bool], T.string, (a: boolean) => String(a)),
    global("bytes_to_string", [T.bytes], T.string, stringFromBytes),
    global("timestamp_to_string", [T.timestamp], T.string, (t: Timestamp) => formatTimestamp(t)),
    global("duration_to_string", [T.duration], T.string, (d: Duration) => formatDuration(d)),
  ),
  fn(
    "bytes",
    global("bytes_to_bytes", [T.bytes], T.bytes, (a: Uint8Array) => a),
    global("string_to_bytes", [T.string], T.bytes, (s: string) => new TextEncoder().encode(s)),
  ),
  fn(
    "bool",
    global("bool_to_bool", [T.bool], T.bool, (a: boolean) => a),
    global("string_to_bool", [T.string], T.bool, boolFromString),
  ),
  fn(
    "timestamp",
    global("timestamp_to_timestamp", [T.timestamp], T.timestamp, (t: Timestamp) => t),
    global("string_to_timestamp", [T.string], T.timestamp, parseTimestamp),
    global("int64_to_timestamp", [T.int], T.timestamp, timestampFromSeconds),
  ),
  fn(
    "duration",
    global("duration_to_duration", [T.duration], T.duration, (d: Duration) => d),
    global("string_to_duration", [T.string], T.duration, parseDuration),
  ),
  fn(
    "dyn",
    global("to_dyn", [A], T.dyn, (a: Value) => a),
  ),
  fn(
    "type",
    global("type", [A], T.type(A), (a: Value) => new TypeValue(typeName(a))),
  ),
];
