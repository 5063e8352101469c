/**
 * Reading host data as CEL values: a variable's value or an object's field arrives as plain JS (a JSON
 * number for an int; a `Timestamp`, an RFC 3339 string or a whole number of milliseconds since the epoch
 * for a timestamp, as JSON and the rules journal carry times; `undefined` for an unset field) and is read
 * through a converter chosen once, at compile time, from its declared type. Converting on read means a
 * host object is handed over as it is, never copied to change its representation.
 */

import type { FieldDecl } from "../env.js";
import { checkedTimestamp, parseDuration, parseTimestamp } from "../runtime/time.js";
import {
  CelError,
  CelMap,
  Duration,
  INT64_MAX,
  INT64_MIN,
  type Result,
  Timestamp,
  UINT64_MAX,
  UInt,
  type Value,
} from "../runtime/values.js";
import type { Type } from "../types.js";
import { LaidOut, Layout } from "./layout.js";

export type HostReader = (raw: unknown) => Result;

const EMPTY_BYTES = new Uint8Array(0);
const NANOS_PER_MILLI = 1_000_000n;
const EMPTY_LIST: readonly Value[] = Object.freeze([]);

const wrong = (raw: unknown, type: string) =>
  new CelError(`host value of type ${typeof raw} is not a ${type}`);

// The readers of the scalar types capture nothing: one each serves every field and variable of its type.
const readInt: HostReader = (raw) => {
  if (raw === undefined || raw === null) return 0n;
  if (typeof raw === "bigint") return raw >= INT64_MIN && raw <= INT64_MAX ? raw : wrong(raw, "int");
  if (typeof raw === "number" && Number.isSafeInteger(raw)) return BigInt(raw);
  return wrong(raw, "int");
};
const readDouble: HostReader = (raw) =>
  raw === undefined || raw === null ? 0 : typeof raw === "number" ? raw : wrong(raw, "double");
const readBool: HostReader = (raw) =>
  raw === undefined || raw === null ? false : typeof raw === "boolean" ? raw : wrong(raw, "bool");
const readString: HostReader = (raw) =>
  raw === undefined || raw === null ? "" : typeof raw === "string" ? raw : wrong(raw, "string");

/** A converter for values declared with `type`; unset (`undefined` or `null`) reads as the zero value. */
export function hostReader(type: Type): HostReader {
  switch (type.kind) {
    case "int":
      return readInt;
    case "uint":
      return (raw) => {
        if (raw === undefined || raw === null) return new UInt(0n);
        if (raw instanceof UInt) return raw;
        if (typeof raw === "bigint" && raw >= 0n && raw <= UINT64_MAX) return new UInt(raw);
        if (typeof raw === "number" && Number.isSafeInteger(raw) && raw >= 0) return new UInt(BigInt(raw));
        return wrong(raw, "uint");
      };
    case "double":
      return readDouble;
    case "bool":
      return readBool;
    case "string":
      return readString;
    case "bytes":
      return (raw) =>
        raw === undefined || raw === null
          ? EMPTY_BYTES
          : raw instanceof Uint8Array
            ? raw
            : wrong(raw, "bytes");
    case "timestamp":
      return (raw) => {
        if (raw === undefined || raw === null) return new Timestamp(0n);
        if (raw instanceof Timestamp) return raw;
        if (typeof raw === "number" && Number.isSafeInteger(raw))
          return checkedTimestamp(BigInt(raw) * NANOS_PER_MILLI);
        return typeof raw === "string" ? parseTimestamp(raw) : wrong(raw, "timestamp");
      };
    case "duration":
      return (raw) => {
        if (raw === undefined || raw === null) return new Duration(0n);
        if (raw instanceof Duration) return raw;
        return typeof raw === "string" ? parseDuration(raw) : wrong(raw, "duration");
      };
    case "list": {
      if (type.elem.kind === "string") return stringList;
      const elem = hostReader(type.elem);
      const check = VERBATIM_ELEMENTS[type.elem.kind];
      return (raw) => {
        if (raw === undefined || raw === null) return EMPTY_LIST;
        if (!Array.isArray(raw)) return wrong(raw, "list");
        // Bools and doubles are already CEL values: check them, but do not copy the list.
        if (check !== undefined) {
          for (const x of raw) if (!check(x)) return wrong(x, `${type.elem.kind} list element`);
          return raw as readonly Value[];
        }
        const out: Value[] = [];
        for (const x of raw) {
          const v = elem(x);
          if (v instanceof CelError) return v;
          out.push(v);
        }
        return out;
      };
    }
    case "map": {
      const key = KEY_FROM_PROPERTY[type.key.kind] ?? ((k: string): Result => k);
      const value = hostReader(type.value);
      return (raw) => {
        if (raw === undefined || raw === null) return CelMap.from([]);
        if (raw instanceof CelMap) return raw;
        if (typeof raw !== "object") return wrong(raw, "map");
        const pairs: [Value, Value][] = [];
        for (const [k, x] of Object.entries(raw)) {
          const kv = key(k);
          if (kv instanceof CelError) return kv;
          const v = value(x);
          if (v instanceof CelError) return v;
          pairs.push([kv, v]);
        }
        return CelMap.from(pairs);
      };
    }
    case "object":
      // Events arrive as plain objects, or laid out from one; anything else object-like would read as
      // unset fields. A laid-out object is read whole as the object it was decoded from.
      return (raw) =>
        raw === undefined || raw === null
          ? {}
          : raw instanceof LaidOut
            ? (raw.source as Value)
            : typeof raw === "object" && !Array.isArray(raw)
              ? (raw as Value)
              : wrong(raw, type.name);
    default:
      return dynReader;
  }
}

/**
 * The `typeof` of host values that `hostReader(type)` returns as they are (a string for `string`, a
 * boolean for `bool`, a number for `double`), so a caller may skip the reader for them; undefined when every value is converted.
 */
export function verbatimTypeof(type: Type): "string" | "boolean" | "number" | undefined {
  return VERBATIM_TYPEOF[type.kind];
}

const VERBATIM_TYPEOF: Readonly<Partial<Record<Type["kind"], "string" | "boolean" | "number">>> = {
  string: "string",
  bool: "boolean",
  double: "number",
};

/** Whether `read` is the reader of a list of strings, which returns a list only when every element is a string. */
export const readsStringList = (read: HostReader): boolean => read === stringList;

/** A list of strings (`paths`, the commonest list field): each element checked, the list never copied. */
function stringList(raw: unknown): Result {
  if (raw === undefined || raw === null) return EMPTY_LIST;
  if (!Array.isArray(raw)) return wrong(raw, "list");
  for (let i = 0; i < raw.length; i++) {
    const x: unknown = raw[i];
    if (typeof x !== "string") return wrong(x, "string list element");
  }
  return raw as readonly Value[];
}

const VERBATIM_ELEMENTS: Readonly<Partial<Record<Type["kind"], (x: unknown) => boolean>>> = {
  bool: (x) => typeof x === "boolean",
  double: (x) => typeof x === "number",
};

/** A JS object's property names are strings; a map declared with other keys reads them back. */
const KEY_FROM_PROPERTY: Readonly<Partial<Record<Type["kind"], (k: string) => Result>>> = {
  int: (k) =>
    /^-?\d+$/.test(k) && BigInt(k) >= INT64_MIN && BigInt(k) <= INT64_MAX
      ? BigInt(k)
      : new CelError(`map key "${k}" is not an int`),
  uint: (k) =>
    /^\d+$/.test(k) && BigInt(k) <= UINT64_MAX
      ? new UInt(BigInt(k))
      : new CelError(`map key "${k}" is not a uint`),
  bool: (k) => (k === "true" ? true : k === "false" ? false : new CelError(`map key "${k}" is not a bool`)),
};

function isPlainObject(raw: unknown): boolean {
  if (typeof raw !== "object" || raw === null) return false;
  const proto = Object.getPrototypeOf(raw);
  return proto === Object.prototype || proto === null;
}

/**
 * Host data of no declared type, read with JSON's mapping: a plain object is a `map(string, dyn)`, an
 * array a list, a number a double; CEL values (bigints, `Timestamp`s, `CelMap`s…) pass as they are.
 */
export function dynReader(raw: unknown): Result {
  if (raw instanceof LaidOut) return dynReader(raw.source);
  if (raw === undefined || typeof raw === "function" || typeof raw === "symbol")
    return new CelError("no such attribute");
  if (Array.isArray(raw)) {
    const out: Value[] = [];
    for (const x of raw) {
      const v = dynReader(x);
      if (v instanceof CelError) return v;
      out.push(v);
    }
    return out;
  }
  if (isPlainObject(raw)) {
    const pairs: [Value, Value][] = [];
    for (const [k, x] of Object.entries(raw as object)) {
      const v = dynReader(x);
      if (v instanceof CelError) return v;
      pairs.push([k, v]);
    }
    return CelMap.from(pairs);
  }
  return raw as Value;
}

/** One bit per field of a presence mask held in an int32. */
const MAX_FIELDS = 31;

const LAYOUTS = new WeakMap<object, Layout | undefined>();

/**
 * The layout of an object type's fields, each unset field's zero being what its reader gives for
 * `undefined`. The same object for the same declaration, which is how the compiler and a decoder
 * agree; undefined for a type with more fields than a presence mask holds.
 */
export function layoutOf(fields: Readonly<Record<string, FieldDecl>>): Layout | undefined {
  if (LAYOUTS.has(fields)) return LAYOUTS.get(fields);
  const names = Object.keys(fields);
  const layout =
    names.length > MAX_FIELDS
      ? undefined
      : new Layout(
          names,
          names.map((n) => hostReader((fields[n] as FieldDecl).type)(undefined)),
        );
  LAYOUTS.set(fields, layout);
  return layout;
}
