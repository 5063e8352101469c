/**
 * A chain of `&&` or `||` runs as one closure over its operands. Its results are checked here against
 * the binary form, modelled directly on the parsed tree: each operand evaluated alone (its value and
 * what it charged), combined pair by pair with CEL's error-absorbing rule, left operand first.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type Activation,
  CelError,
  type Evaluation,
  type Expr,
  Op,
  parseOrThrow,
  print,
  type Result,
  standardEnv,
  T,
} from "../../src/cel/index.js";
import { compile } from "../../src/cel/program.js";
import { runs } from "../property-runs.js";

const env = standardEnv.extend({
  variables: [
    { name: "b", type: T.bool },
    { name: "x", type: T.dyn },
  ],
});

/** Operands: bools, errors with distinct messages, a non-bool under dyn, and ones that charge. */
const OPERANDS = [
  "true",
  "false",
  "b",
  "x",
  "1 / 0 > 0",
  "[1][2] == 1",
  "{'a': true}['k']",
  "dyn('s')",
  "size('abcdefghijklmnopqrstuvwxyz') > 1",
  "'abcdefghijklmnopqrstuvwxyz'.startsWith(string(x))",
  "[1, 2, 3].exists(i, i == 2)",
  "!b",
];

type Tree = string | { readonly op: "&&" | "||"; readonly terms: readonly Tree[]; readonly parens: boolean };

const trees: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom(...OPERANDS),
    fc.record({
      op: fc.constantFrom("&&" as const, "||" as const),
      terms: fc.array(tie("tree"), { minLength: 2, maxLength: 6 }),
      parens: fc.boolean(),
    }),
  ),
})).tree;

/** Each chain written flat (`a && b && c`), as the parser balances it. */
function render(t: Tree): string {
  if (typeof t === "string") return `(${t})`;
  return `(${t.terms.map(render).join(` ${t.op} `)})`;
}

/** Some chains nested explicitly to the left (`((a && b) && c)`), the others written flat. */
function renderNested(t: Tree): string {
  if (typeof t === "string") return `(${t})`;
  if (t.parens) {
    // Left-nested explicitly: ((a && b) && c) && d.
    let acc = renderNested(t.terms[0] as Tree);
    for (const term of t.terms.slice(1)) acc = `(${acc} ${t.op} ${renderNested(term)})`;
    return acc;
  }
  return `(${t.terms.map(renderNested).join(` ${t.op} `)})`;
}

const bindings: fc.Arbitrary<Activation> = fc.record({
  b: fc.boolean(),
  x: fc.constantFrom<unknown>(true, false, "s", 1, "abc"),
});

interface Outcome {
  readonly kind: Evaluation["kind"];
  readonly value?: unknown;
  readonly message?: string;
  readonly cost: number;
}

function outcome(r: Evaluation): Outcome {
  if (r.kind === "value") return { kind: r.kind, value: r.value, cost: r.cost };
  if (r.kind === "error") return { kind: r.kind, message: r.error.message, cost: r.cost };
  return { kind: r.kind, cost: r.cost };
}

class Exhausted {
  constructor(readonly cost: number) {}
}

/** The binary form over the parsed tree: each operand compiled alone, charged against what is left. */
function reference(text: string, vars: Activation, limit: number): Outcome {
  const ast = parseOrThrow(text);
  let spent = 0;
  const leaf = (e: Expr): Result => {
    const c = compile(print({ expr: e, macroCalls: ast.macroCalls }), env);
    if (!c.ok) throw new Error(`operand ${print({ expr: e, macroCalls: ast.macroCalls })} did not compile`);
    const r = c.program.evaluate(vars, limit - spent);
    if (r.kind === "cost_exceeded") throw new Exhausted(spent + r.cost);
    spent += r.cost;
    return r.kind === "value" ? r.value : r.error;
  };
  const evaluate = (e: Expr): Result => {
    if (e.kind !== "call" || (e.fn !== Op.logicalAnd && e.fn !== Op.logicalOr)) return leaf(e);
    const stopOn = e.fn === Op.logicalOr;
    const l = evaluate(e.args[0] as Expr);
    if (l === stopOn) return stopOn;
    const r = evaluate(e.args[1] as Expr);
    if (r === stopOn) return stopOn;
    if (l instanceof CelError) return l;
    if (r instanceof CelError) return r;
    if (typeof l !== "boolean" || typeof r !== "boolean") return new CelError(`no such overload: ${e.fn}`);
    return !stopOn;
  };
  try {
    const v = evaluate(ast.expr);
    return v instanceof CelError
      ? { kind: "error", message: v.message, cost: spent }
      : { kind: "value", value: v, cost: spent };
  } catch (e) {
    if (e instanceof Exhausted) return { kind: "cost_exceeded", cost: e.cost };
    throw e;
  }
}

function compiled(text: string) {
  const c = compile(text, env);
  if (!c.ok) throw new Error(`${text} did not compile`);
  return c.program;
}

describe("a chain of && or || run as one closure", () => {
  it("gives the binary form's value, error and cost for generated chains and bindings", () => {
    fc.assert(
      fc.property(trees, fc.boolean(), bindings, (tree, nested, vars) => {
        const text = nested ? renderNested(tree) : render(tree);
        expect(outcome(compiled(text).evaluate(vars))).toEqual(
          reference(text, vars, Number.POSITIVE_INFINITY),
        );
      }),
      { numRuns: runs(400) },
    );
  });

  it("stops at a cost limit where the binary form stops, with the same cost", () => {
    fc.assert(
      fc.property(trees, bindings, fc.double({ min: 0, max: 1, noNaN: true }), (tree, vars, share) => {
        const text = render(tree);
        const program = compiled(text);
        const full = program.evaluate(vars).cost;
        const limit = Math.floor(full * share);
        expect(outcome(program.evaluate(vars, limit))).toEqual(reference(text, vars, limit));
      }),
      { numRuns: runs(300) },
    );
  });

  it.each([
    ["false && (1 / 0 > 0) && true", { kind: "value", value: false, cost: 0 }],
    ["(1 / 0 > 0) && true && false", { kind: "value", value: false, cost: 1 }],
    ["([1][2] == 1) && (1 / 0 > 0) && true", { kind: "error", message: "index out of bounds: 2", cost: 13 }],
    ["true || dyn('s') || false", { kind: "value", value: true, cost: 0 }],
    ["(dyn('s') && true) && (1 / 0 > 0)", { kind: "error", message: "no such overload: _&&_", cost: 2 }],
    ["dyn('s') && (true && (1 / 0 > 0))", { kind: "error", message: "divide by zero", cost: 2 }],
  ])("%s", (text, want) => {
    const got = outcome(compiled(text).evaluate({ b: true, x: true }));
    expect(got).toEqual(want);
    expect(got).toEqual(reference(text, { b: true, x: true }, Number.POSITIVE_INFINITY));
  });
});
