/**
 * Macro expansion, done while the AST is built so later phases only ever see comprehensions.
 *
 * Macros are keyed by name, argument count and call style, as in the reference implementation: the
 * receiver-style `e.exists(x, p)` is a macro, while a global `exists(sel, within)` (a rules primitive)
 * stays an ordinary call. The expansions are the reference implementation's, node for node, so the AST
 * compares equal with its parser's.
 */
import { ACCUMULATOR, type AstBuilder, type CallExpr, type ComprehensionExpr, type Expr } from "../ast.js";
import { Op } from "../operators.js";

export interface MacroError {
  readonly message: string;
  readonly offset: number;
}

type Expander = (b: AstBuilder, offset: number, target: Expr, args: readonly Expr[]) => Expr | MacroError;

/** Names the standard environment expands, with the expander for each receiver-style arity. */
const RECEIVER_MACROS: Readonly<Record<string, Readonly<Record<number, Expander>>>> = {
  all: { 2: quantifier("all") },
  exists: { 2: quantifier("exists") },
  exists_one: { 2: quantifier("exists_one") },
  // The reference parser also expands the camel-case spelling.
  existsOne: { 2: quantifier("exists_one") },
  map: { 2: mapMacro, 3: mapMacro },
  filter: { 2: filterMacro },
};

/** Names the iteration variable may not take, because they are (or were) the accumulator's. */
const ACCUMULATOR_NAMES = new Set([ACCUMULATOR, "__result__"]);

export function isReceiverMacro(name: string, argCount: number): boolean {
  return Object.hasOwn(RECEIVER_MACROS, name) && RECEIVER_MACROS[name]?.[argCount] !== undefined;
}

/**
 * Expands `target.name(args…)` and records the call as written under the comprehension's id.
 * The caller has checked `isReceiverMacro`.
 */
export function expandReceiverMacro(
  b: AstBuilder,
  offset: number,
  name: string,
  target: Expr,
  args: readonly Expr[],
): Expr | MacroError {
  const expander = RECEIVER_MACROS[name]?.[args.length];
  if (expander === undefined) throw new Error(`no macro ${name}/${args.length}`);
  const expanded = expander(b, offset, target, args);
  if ("kind" in expanded) b.macroCalls.set(expanded.id, callAsWritten(b, offset, name, target, args));
  return expanded;
}

/** `has(e.f)`: a test-only select. */
export function expandHas(b: AstBuilder, offset: number, arg: Expr): Expr | MacroError {
  if (arg.kind !== "select" || arg.testOnly) {
    return { message: "invalid argument to has() macro", offset: b.offsets.get(arg.id) ?? offset };
  }
  return b.select(offset, arg.operand, arg.field, true);
}

function callAsWritten(
  b: AstBuilder,
  offset: number,
  name: string,
  target: Expr,
  args: readonly Expr[],
): CallExpr {
  return b.call(offset, name, args, target);
}

function iterationVariable(b: AstBuilder, arg: Expr, notIdent: string): string | MacroError {
  const offset = b.offsets.get(arg.id) ?? 0;
  if (arg.kind !== "ident") return { message: notIdent, offset };
  if (ACCUMULATOR_NAMES.has(arg.name))
    return { message: "iteration variable overwrites accumulator variable", offset };
  return arg.name;
}

/** A comprehension over `target` with the macros' accumulator; the parts are the macro's own. */
function fold(
  b: AstBuilder,
  offset: number,
  iterVar: string,
  target: Expr,
  parts: Pick<ComprehensionExpr, "accuInit" | "loopCondition" | "loopStep" | "result">,
): Expr {
  const { accuInit, loopCondition, loopStep, result } = parts;
  return b.comprehension(offset, {
    iterVar,
    iterRange: target,
    accuVar: ACCUMULATOR,
    accuInit,
    loopCondition,
    loopStep,
    result,
  });
}

function quantifier(kind: "all" | "exists" | "exists_one"): Expander {
  return (b, offset, target, args) => {
    const [varArg, predicate] = args as [Expr, Expr];
    const iterVar = iterationVariable(b, varArg, "argument must be a simple name");
    if (typeof iterVar !== "string") return iterVar;
    const accu = () => b.ident(offset, ACCUMULATOR);
    switch (kind) {
      case "all":
        return fold(b, offset, iterVar, target, {
          accuInit: b.literal(offset, { type: "bool", value: true }),
          loopCondition: b.call(offset, Op.notStrictlyFalse, [accu()]),
          loopStep: b.call(offset, Op.logicalAnd, [accu(), predicate]),
          result: accu(),
        });
      case "exists":
        return fold(b, offset, iterVar, target, {
          accuInit: b.literal(offset, { type: "bool", value: false }),
          loopCondition: b.call(offset, Op.notStrictlyFalse, [b.call(offset, Op.logicalNot, [accu()])]),
          loopStep: b.call(offset, Op.logicalOr, [accu(), predicate]),
          result: accu(),
        });
      case "exists_one":
        return fold(b, offset, iterVar, target, {
          accuInit: b.literal(offset, { type: "int", value: 0n }),
          loopCondition: b.literal(offset, { type: "bool", value: true }),
          loopStep: b.call(offset, Op.conditional, [
            predicate,
            b.call(offset, Op.add, [accu(), b.literal(offset, { type: "int", value: 1n })]),
            accu(),
          ]),
          result: b.call(offset, Op.equals, [accu(), b.literal(offset, { type: "int", value: 1n })]),
        });
    }
  };
}

/** `e.map(x, t)` and `e.map(x, p, t)`. */
function mapMacro(b: AstBuilder, offset: number, target: Expr, args: readonly Expr[]): Expr | MacroError {
  const iterVar = iterationVariable(b, args[0] as Expr, "argument is not an identifier");
  if (typeof iterVar !== "string") return iterVar;
  const transform = args[args.length - 1] as Expr;
  const filter = args.length === 3 ? args[1] : undefined;
  const accu = () => b.ident(offset, ACCUMULATOR);
  const append = b.call(offset, Op.add, [accu(), b.list(offset, [transform])]);
  return fold(b, offset, iterVar, target, {
    accuInit: b.list(offset, []),
    loopCondition: b.literal(offset, { type: "bool", value: true }),
    loopStep: filter === undefined ? append : b.call(offset, Op.conditional, [filter, append, accu()]),
    result: accu(),
  });
}

/** `e.filter(x, p)`. */
function filterMacro(b: AstBuilder, offset: number, target: Expr, args: readonly Expr[]): Expr | MacroError {
  const [varArg, predicate] = args as [Expr, Expr];
  const iterVar = iterationVariable(b, varArg, "argument is not an identifier");
  if (typeof iterVar !== "string") return iterVar;
  const accu = () => b.ident(offset, ACCUMULATOR);
  const append = b.call(offset, Op.add, [accu(), b.list(offset, [b.ident(offset, iterVar)])]);
  return fold(b, offset, iterVar, target, {
    accuInit: b.list(offset, []),
    loopCondition: b.literal(offset, { type: "bool", value: true }),
    loopStep: b.call(offset, Op.conditional, [predicate, append, accu()]),
    result: accu(),
  });
}
