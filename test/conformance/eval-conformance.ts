/**
 * Evaluation and type-check conformance over the cel-spec conformance suite.
 *
 * A case is run when its section is a standard-environment section and it needs no protobuf message
 * type (beyond google.protobuf.Timestamp and Duration, which are CEL's timestamp and duration); every
 * other case is reported as not applicable, with the reason, never silently dropped.
 */

import {
  type Type as PbType,
  Type_PrimitiveType,
  Type_WellKnownType,
} from "@bufbuild/cel-spec/cel/expr/checked_pb.js";
import type { Value as PbValue } from "@bufbuild/cel-spec/cel/expr/value_pb.js";
import { createRegistry } from "@bufbuild/protobuf";
import {
  anyUnpack,
  DurationSchema,
  type Duration as PbDuration,
  type Timestamp as PbTimestamp,
  TimestampSchema,
} from "@bufbuild/protobuf/wkt";
import { type FunctionDecl, parse, standardEnv, type VariableDecl } from "../../src/cel/index.js";
import { compileAst, compileUnchecked, type Evaluation } from "../../src/cel/program.js";
import {
  CelError,
  CelMap,
  Duration,
  Timestamp,
  TypeValue,
  typeName,
  UInt,
  type Value,
} from "../../src/cel/runtime/values.js";
import { T, type Type } from "../../src/cel/types.js";
import type { Case } from "./suites.js";

export type EvalOutcome = "pass" | "fail" | "not_applicable";

export interface EvalCaseResult {
  readonly path: string;
  readonly expr: string;
  readonly outcome: EvalOutcome;
  readonly detail?: string;
  /** Whether the checker's result type matched the data's (undefined when not compared). */
  readonly typeMatches?: boolean;
  readonly typeDetail?: string;
}

/** The standard-environment sections the target covers. */
export const STANDARD_SECTIONS = new Set([
  "basic",
  "comparisons",
  "conversions",
  "fp_math",
  "integer_math",
  "lists",
  "logic",
  "macros",
  "namespace",
  "parse",
  "plumbing",
  "string",
  "timestamps",
  "type_deductions",
  "fields",
]);

class NotApplicable extends Error {}

const registry = createRegistry(TimestampSchema, DurationSchema);
const MESSAGE_NAME =
  /\b(TestAllTypes|NestedTestAllTypes|NestedMessage|NestedEnum|GlobalEnum|google\.protobuf\.(?!Timestamp\b|Duration\b)\w+|cel\.expr\.conformance)/;

function toType(t: PbType | undefined): Type {
  const k = t?.typeKind;
  switch (k?.case) {
    case undefined:
      return T.dyn;
    case "dyn":
      return T.dyn;
    case "null":
      return T.null;
    case "primitive":
      switch (k.value) {
        case Type_PrimitiveType.BOOL:
          return T.bool;
        case Type_PrimitiveType.INT64:
          return T.int;
        case Type_PrimitiveType.UINT64:
          return T.uint;
        case Type_PrimitiveType.DOUBLE:
          return T.double;
        case Type_PrimitiveType.STRING:
          return T.string;
        case Type_PrimitiveType.BYTES:
          return T.bytes;
        default:
          throw new NotApplicable("unspecified primitive type");
      }
    case "wellKnown":
      if (k.value === Type_WellKnownType.TIMESTAMP) return T.timestamp;
      if (k.value === Type_WellKnownType.DURATION) return T.duration;
      throw new NotApplicable("google.protobuf.Any");
    case "listType":
      return T.list(toType(k.value.elemType));
    case "mapType":
      return T.map(toType(k.value.keyType), toType(k.value.valueType));
    case "messageType":
      if (k.value === "google.protobuf.Timestamp") return T.timestamp;
      if (k.value === "google.protobuf.Duration") return T.duration;
      throw new NotApplicable(`message type ${k.value}`);
    case "typeParam":
      return T.param(k.value);
    case "type":
      return T.type(toType(k.value));
    case "abstractType":
      throw new NotApplicable(`abstract type ${k.value.name}`);
    default:
      throw new NotApplicable(`type kind ${k?.case}`);
  }
}

function toValue(v: PbValue | undefined): Value {
  const k = v?.kind;
  switch (k?.case) {
    case "nullValue":
      return null;
    case "boolValue":
    case "stringValue":
    case "doubleValue":
      return k.value;
    case "int64Value":
      return k.value;
    case "uint64Value":
      return new UInt(k.value);
    case "bytesValue":
      return k.value;
    case "listValue":
      return k.value.values.map(toValue);
    case "mapValue": {
      const m = CelMap.from(k.value.entries.map((e) => [toValue(e.key), toValue(e.value)] as const));
      if (!(m instanceof CelMap)) throw new Error(m.message);
      return m;
    }
    case "typeValue":
      return new TypeValue(k.value);
    case "objectValue": {
      const unpacked = anyUnpack(k.value, registry);
      if (unpacked?.$typeName === "google.protobuf.Timestamp") {
        const ts = unpacked as PbTimestamp;
        return new Timestamp(ts.seconds * 1_000_000_000n + BigInt(ts.nanos));
      }
      if (unpacked?.$typeName === "google.protobuf.Duration") {
        const d = unpacked as PbDuration;
        return new Duration(d.seconds * 1_000_000_000n + BigInt(d.nanos));
      }
      throw new NotApplicable(`message value ${k.value.typeUrl}`);
    }
    default:
      throw new NotApplicable(`value kind ${k?.case}`);
  }
}

/** Same type and same value, recursively (stricter than CEL's `==`, which equates 1 and 1u). */
function sameValue(a: Value, b: Value): boolean {
  if (typeName(a) !== typeName(b)) return false;
  if (typeof a === "number") return Number.isNaN(a) ? Number.isNaN(b as number) : a === b;
  if (Array.isArray(a)) {
    const bl = b as readonly Value[];
    return a.length === bl.length && a.every((x, i) => sameValue(x, bl[i] as Value));
  }
  if (a instanceof CelMap) {
    const bm = b as CelMap;
    if (a.size !== bm.size) return false;
    for (const [k, v] of a.pairs()) {
      const other = bm.get(k);
      if (other === undefined || !sameValue(v, other)) return false;
    }
    return true;
  }
  if (a instanceof Uint8Array) return Buffer.from(a).equals(Buffer.from(b as Uint8Array));
  if (a instanceof UInt) return a.value === (b as UInt).value;
  if (a instanceof Timestamp || a instanceof Duration) return a.nanos === (b as Timestamp).nanos;
  if (a instanceof TypeValue) return a.name === (b as TypeValue).name;
  return a === b;
}

/** Our type in the data's spelling (`timestamp`, `null`, `list(int)`). */
function dataTypeName(t: Type): string {
  switch (t.kind) {
    case "null_type":
      return "null";
    case "list":
      return `list(${dataTypeName(t.elem)})`;
    case "map":
      return `map(${dataTypeName(t.key)}, ${dataTypeName(t.value)})`;
    case "type":
      return t.param === undefined ? "type" : `type(${dataTypeName(t.param)})`;
    case "object":
    case "param":
      return t.name;
    default:
      return t.kind;
  }
}

function show(e: Evaluation): string {
  if (e.kind === "value") return `${typeName(e.value)} ${String(e.value)}`;
  return e.kind === "error" ? `error: ${e.error.message}` : "cost exceeded";
}

export function runEvalCase(c: Case): EvalCaseResult {
  const t = c.test.original;
  const base = { path: c.path, expr: t.expr };
  try {
    if (!STANDARD_SECTIONS.has(c.section))
      throw new NotApplicable(`section ${c.section} is not standard-environment`);
    if (MESSAGE_NAME.test(t.expr) || MESSAGE_NAME.test(t.container))
      throw new NotApplicable("needs a protobuf message type");
    if (t.disableMacros) throw new NotApplicable("macros disabled");
    const variables: VariableDecl[] = [];
    const functions: FunctionDecl[] = [];
    for (const d of t.typeEnv) {
      if (d.declKind.case === "ident") variables.push({ name: d.name, type: toType(d.declKind.value.type) });
      else if (d.declKind.case === "function") {
        // Declared for type deduction only: these cases are check-only, so nothing calls them.
        const overloads = d.declKind.value.overloads.map((o) => ({
          id: o.overloadId,
          params: o.params.map(toType),
          result: toType(o.resultType),
          receiver: o.isInstanceFunction,
          impl: () => new CelError(`${d.name} has no implementation in the conformance runner`),
        }));
        functions.push({ name: d.name, overloads });
      }
    }
    const bindings: Record<string, unknown> = {};
    for (const [name, ev] of Object.entries(t.bindings)) {
      if (ev.kind.case !== "value") throw new NotApplicable("binding is not a value");
      bindings[name] = toValue(ev.kind.value);
    }
    const expected = t.resultMatcher;
    if (expected.case === "unknown" || expected.case === "anyUnknowns") throw new NotApplicable("unknowns");
    const expectedValue =
      expected.case === "value"
        ? toValue(expected.value)
        : expected.case === "typedResult" && expected.value.result !== undefined
          ? toValue(expected.value.result)
          : undefined;
    const deducedType =
      expected.case === "typedResult" && expected.value.deducedType !== undefined
        ? toType(expected.value.deducedType)
        : undefined;

    const env = standardEnv.extend({ container: t.container, variables, functions });
    const parsed = parse(t.expr);
    if (!parsed.ok) return { ...base, outcome: "fail", detail: `parse: ${parsed.errors[0]?.message}` };
    const compiled = t.disableCheck ? compileUnchecked(parsed.ast, env) : compileAst(parsed.ast, env);
    if (!compiled.ok)
      return { ...base, outcome: "fail", detail: `${compiled.stage}: ${compiled.errors[0]?.message}` };
    const resultType = compiled.program.resultType;
    const typeResult =
      t.disableCheck || c.test.type === undefined
        ? {}
        : {
            typeMatches: dataTypeName(resultType) === c.test.type,
            typeDetail: `${dataTypeName(resultType)} vs ${c.test.type}`,
          };
    if (deducedType !== undefined && dataTypeName(deducedType) !== dataTypeName(resultType)) {
      return {
        ...base,
        outcome: "fail",
        detail: `deduced ${dataTypeName(resultType)}, want ${dataTypeName(deducedType)}`,
        ...typeResult,
      };
    }
    if (t.checkOnly) return { ...base, outcome: "pass", ...typeResult };
    const result = compiled.program.evaluate(bindings);
    const wantsError = expected.case === "evalError" || expected.case === "anyEvalErrors";
    const pass = wantsError
      ? result.kind === "error"
      : result.kind === "value" && expectedValue !== undefined && sameValue(result.value, expectedValue);
    const want = wantsError
      ? "an error"
      : expectedValue === undefined
        ? "?"
        : `${typeName(expectedValue)} ${String(expectedValue)}`;
    return {
      ...base,
      outcome: pass ? "pass" : "fail",
      detail: `got ${show(result)}, want ${want}`,
      ...typeResult,
    };
  } catch (e) {
    if (e instanceof NotApplicable) return { ...base, outcome: "not_applicable", detail: e.message };
    return { ...base, outcome: "fail", detail: `threw: ${e instanceof Error ? e.stack : String(e)}` };
  }
}
