/**
 * REQ-5's load-time rules for the windowed primitives, as a CEL validator: the selector is a map
 * literal of string-literal keys from the indexed set with values of the field's type, `distinct`'s
 * field is a string literal from the same set, the window is a literal `duration("…")` from 1m to 7d,
 * and a rule makes at most 8 calls.
 */
import {
  CelError,
  type CheckedAst,
  type Diagnostic,
  type Expr,
  parseDuration as parseCelDuration,
  T,
  type Validator,
} from "../cel/index.js";
import { primitiveArgs, primitiveCallsIn } from "./primitive-calls.js";
import { INDEXED_FIELDS, isIndexedField } from "./window.js";

export const MAX_PRIMITIVE_CALLS = 8;
const MIN_WINDOW_NS = 60n * 1_000_000_000n;
const MAX_WINDOW_NS = 7n * 24n * 3600n * 1_000_000_000n;

export const primitiveRules: Validator = (checked: CheckedAst) => {
  const errors: Diagnostic[] = [];
  const at = (e: Expr) => checked.offsets.get(e.id) ?? 0;
  const fail = (e: Expr, message: string) => errors.push({ code: "validation", message, offset: at(e) });
  let calls = 0;
  for (const e of primitiveCallsIn(checked.expr)) {
    calls++;
    if (calls === MAX_PRIMITIVE_CALLS + 1)
      fail(e, `a rule may call count, distinct and exists at most ${MAX_PRIMITIVE_CALLS} times`);
    const { field, selector: sel, within } = primitiveArgs(e);
    if (field !== undefined) {
      if (field.kind !== "literal" || field.value.type !== "string" || !isIndexedField(field.value.value)) {
        fail(
          field,
          `the field of distinct must be a string literal naming an indexed field (${INDEXED_FIELDS.join(", ")})`,
        );
      }
    }
    if (sel !== undefined) selector(sel, e.fn, checked, fail);
    if (within !== undefined) window(within, e.fn, fail);
  }
  return errors;
};

function selector(sel: Expr, fn: string, checked: CheckedAst, fail: (e: Expr, m: string) => void): void {
  if (sel.kind !== "map") {
    fail(sel, `the selector of ${fn} must be a map literal such as {"type": "closed"}`);
    return;
  }
  for (const { key, value } of sel.entries) {
    if (key.kind !== "literal" || key.value.type !== "string") {
      fail(key, `a selector key of ${fn} must be a string literal, not a computed one`);
      continue;
    }
    const name = key.value.value;
    if (!isIndexedField(name)) {
      fail(key, `unknown selector key '${name}': the indexed fields are ${INDEXED_FIELDS.join(", ")}`);
      continue;
    }
    const want = name === "is_error" ? T.bool : T.string;
    const got = checked.types.get(value.id);
    if (got?.kind !== want.kind) {
      fail(
        value,
        `the value for selector key '${name}' must be a ${want.kind}, found ${got?.kind ?? "unknown"}`,
      );
    }
  }
}

function window(within: Expr, fn: string, fail: (e: Expr, m: string) => void): void {
  const arg =
    within.kind === "call" && within.fn === "duration" && within.target === undefined
      ? within.args[0]
      : undefined;
  if (
    arg === undefined ||
    arg.kind !== "literal" ||
    arg.value.type !== "string" ||
    (within.kind === "call" && within.args.length !== 1)
  ) {
    fail(within, `the window of ${fn} must be a literal duration("…"), not a computed one`);
    return;
  }
  const d = parseCelDuration(arg.value.value);
  if (d instanceof CelError) {
    // The parser's reason, which for "7d" says that CEL has no day unit and what to write instead.
    fail(within, `the window of ${fn} must be a CEL duration from 1m to 168h: ${d.message}`);
  } else if (d.nanos < MIN_WINDOW_NS || d.nanos > MAX_WINDOW_NS) {
    fail(
      within,
      `the window of ${fn} must be from 1m to 7d (duration("168h")), found duration("${arg.value.value}")`,
    );
  }
}
