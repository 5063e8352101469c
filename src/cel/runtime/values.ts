/**
 * CEL's runtime values in JavaScript.
 *
 *   int → bigint        uint → UInt          double → number     bool → boolean
 *   string → string     bytes → Uint8Array   null → null         list → readonly Value[]
 *   map → CelMap        timestamp → Timestamp   duration → Duration   type → TypeValue
 *   object → a plain JS object whose static type the checker knows (an event from the journal)
 *
 * Ints are bigints so every 64-bit value is exact; doubles stay numbers, so `typeof` tells the two apart
 * even under `dyn`. Errors are values too (`CelError`), returned, never thrown: only cost exhaustion
 * escapes an evaluation.
 */
export type Value =
  | boolean
  | bigint
  | number
  | string
  | null
  | Uint8Array
  | readonly Value[]
  | CelMap
  | UInt
  | Timestamp
  | Duration
  | TypeValue
  | ObjectValue;

/** A value of a declared object type: read field by field, missing fields being their zero value. */
export interface ObjectValue {
  readonly [field: string]: unknown;
}

export type Result = Value | CelError;

export class CelError {
  constructor(readonly message: string) {}
}

export const isError = (v: unknown): v is CelError => v instanceof CelError;

export class UInt {
  constructor(readonly value: bigint) {}
}

/** An instant, as nanoseconds since 1970-01-01T00:00:00Z, within 0001-01-01 to 9999-12-31 (UTC). */
export class Timestamp {
  constructor(readonly nanos: bigint) {}
}

/** A signed span of time, as int64 nanoseconds. */
export class Duration {
  constructor(readonly nanos: bigint) {}
}

/** A type as a value: what `type(x)` returns and `int`, `list`, `map`… denote. */
export class TypeValue {
  constructor(readonly name: string) {}
}

export const INT64_MIN = -(1n << 63n);
export const INT64_MAX = (1n << 63n) - 1n;
export const UINT64_MAX = (1n << 64n) - 1n;
export const NANOS_PER_SECOND = 1_000_000_000n;
/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999999Z, in nanoseconds since the epoch. */
export const TIMESTAMP_MIN = -62_135_596_800n * NANOS_PER_SECOND;
export const TIMESTAMP_MAX = 253_402_300_799n * NANOS_PER_SECOND + 999_999_999n;

/** A map key as JS `Map` compares it: ints and uints of one value are one key, as CEL requires. */
type KeyOf = string | boolean | bigint;

/** A CEL map. Keys are ints, uints, bools or strings; numeric keys compare by value across types. */
export class CelMap {
  private readonly entries = new Map<KeyOf, readonly [Value, Value]>();

  /** Builds a map, or names the first duplicate or invalid key. */
  static from(pairs: Iterable<readonly [Value, Value]>): CelMap | CelError {
    const m = new CelMap();
    for (const [k, v] of pairs) {
      const key = mapKey(k);
      if (key === undefined) return new CelError(`unsupported key type: ${typeName(k)}`);
      if (m.entries.has(key)) return new CelError(`Failed with repeated key: ${debugString(k)}`);
      m.entries.set(key, [k, v]);
    }
    return m;
  }

  /** A map whose keys are known to be distinct strings (a literal's, checked at compile time). */
  static ofDistinctStrings(keys: readonly string[], values: readonly Value[]): CelMap {
    const m = new CelMap();
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as string;
      m.entries.set(k, [k, values[i] as Value]);
    }
    return m;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value under `key`, or undefined; a double finds the int or uint of its value. */
  get(key: Value): Value | undefined {
    const k = lookupKey(key);
    return k === undefined ? undefined : this.entries.get(k)?.[1];
  }

  has(key: Value): boolean {
    const k = lookupKey(key);
    return k !== undefined && this.entries.has(k);
  }

  *keys(): IterableIterator<Value> {
    for (const [k] of this.entries.values()) yield k;
  }

  *pairs(): IterableIterator<readonly [Value, Value]> {
    yield* this.entries.values();
  }
}

function mapKey(k: Value): KeyOf | undefined {
  if (typeof k === "string" || typeof k === "boolean" || typeof k === "bigint") return k;
  if (k instanceof UInt) return k.value;
  return undefined;
}

function lookupKey(k: Value): KeyOf | undefined {
  if (typeof k === "number") return Number.isInteger(k) ? BigInt(k) : undefined;
  return mapKey(k);
}

export function isObjectValue(v: Value): v is ObjectValue {
  return (
    typeof v === "object" &&
    v !== null &&
    !Array.isArray(v) &&
    !(v instanceof Uint8Array) &&
    !(v instanceof CelMap) &&
    !(v instanceof UInt) &&
    !(v instanceof Timestamp) &&
    !(v instanceof Duration) &&
    !(v instanceof TypeValue)
  );
}

/** The runtime type name of a value, as `type(v)` reports it. */
export function typeName(v: Value): string {
  switch (typeof v) {
    case "boolean":
      return "bool";
    case "bigint":
      return "int";
    case "number":
      return "double";
    case "string":
      return "string";
    default:
      if (v === null) return "null_type";
      if (Array.isArray(v)) return "list";
      if (v instanceof Uint8Array) return "bytes";
      if (v instanceof CelMap) return "map";
      if (v instanceof UInt) return "uint";
      if (v instanceof Timestamp) return "google.protobuf.Timestamp";
      if (v instanceof Duration) return "google.protobuf.Duration";
      if (v instanceof TypeValue) return "type";
      return "object";
  }
}

/** A short rendering for error messages. */
export function debugString(v: Value): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "bigint") return v.toString();
  if (v instanceof UInt) return `${v.value}u`;
  if (v instanceof TypeValue) return v.name;
  return String(v);
}
