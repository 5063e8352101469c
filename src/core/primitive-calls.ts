/**
 * Where a rule's `when` calls the windowed primitives (REQ-5): the one walk that the load checks
 * (`primitive-rules.ts`), the window index's key sets (`window-index.ts`), lint's advice and
 * RuleService's count all share, so "a call of count, distinct or exists" means one thing everywhere.
 */
import { type CallExpr, children, type Expr } from "../cel/index.js";
import { PRIMITIVE_NAMES } from "./environments.js";

export type PrimitiveName = (typeof PRIMITIVE_NAMES)[number];

/** A global call of count, distinct or exists (a method call of the same name is not one). */
export interface PrimitiveCallExpr extends CallExpr {
  readonly fn: PrimitiveName;
}

export const isPrimitiveCall = (e: Expr): e is PrimitiveCallExpr =>
  e.kind === "call" && e.target === undefined && (PRIMITIVE_NAMES as readonly string[]).includes(e.fn);

/** Every subexpression of `e`, `e` first, depth first. */
export function* subexpressions(e: Expr): Generator<Expr> {
  yield e;
  for (const c of children(e)) yield* subexpressions(c);
}

/** The primitive calls in `e`, in source order. */
export function* primitiveCallsIn(e: Expr): Generator<PrimitiveCallExpr> {
  for (const x of subexpressions(e)) if (isPrimitiveCall(x)) yield x;
}

/** A call's arguments by role: `distinct(field, selector, within)`, `count|exists(selector, within)`. */
export function primitiveArgs(call: PrimitiveCallExpr): {
  readonly field: Expr | undefined;
  readonly selector: Expr | undefined;
  readonly within: Expr | undefined;
} {
  const [a, b, c] = call.args;
  return call.fn === "distinct"
    ? { field: a, selector: b, within: c }
    : { field: undefined, selector: a, within: b };
}
