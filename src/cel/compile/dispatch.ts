/** Which overload a call runs: fixed at compile time when the argument types decide it, else per call. */
import type { OverloadDecl } from "../env.js";
import {
  CelError,
  CelMap,
  Duration,
  isObjectValue,
  Timestamp,
  TypeValue,
  UInt,
  type Value,
} from "../runtime/values.js";
import type { Type } from "../types.js";

/** Whether a runtime value belongs to a parameter type (type parameters and dyn take anything). */
export function accepts(t: Type, v: Value): boolean {
  switch (t.kind) {
    case "int":
      return typeof v === "bigint";
    case "uint":
      return v instanceof UInt;
    case "double":
      return typeof v === "number";
    case "bool":
      return typeof v === "boolean";
    case "string":
      return typeof v === "string";
    case "bytes":
      return v instanceof Uint8Array;
    case "null_type":
      return v === null;
    case "timestamp":
      return v instanceof Timestamp;
    case "duration":
      return v instanceof Duration;
    case "list":
      return Array.isArray(v);
    case "map":
      return v instanceof CelMap;
    case "type":
      return v instanceof TypeValue;
    case "object":
      return isObjectValue(v);
    default:
      return true;
  }
}

export function noSuchOverload(fn: string): CelError {
  return new CelError(`no such overload: ${fn}`);
}

/** The first overload whose parameters accept these runtime values. */
export function selectOverload(
  overloads: readonly OverloadDecl[],
  args: readonly Value[],
): OverloadDecl | undefined {
  for (const o of overloads) {
    let ok = true;
    const params = o.runtimeParams ?? o.params;
    for (let i = 0; i < args.length; i++) {
      if (!accepts(params[i] as Type, args[i] as Value)) {
        ok = false;
        break;
      }
    }
    if (ok) return o;
  }
  return undefined;
}
