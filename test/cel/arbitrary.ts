/**
 * fast-check generators of CEL ASTs, built through the same `AstBuilder` and macro expander the parser
 * uses, so every generated tree is one the parser could produce.
 */
import fc from "fast-check";
import { type Ast, AstBuilder, type Expr, type Literal, Op, Source } from "../../src/cel/index.js";
import { expandHas, expandReceiverMacro } from "../../src/cel/parser/macros.js";

/** A tree to build: plain data, so fast-check can shrink it. */
export type Recipe =
  | { readonly t: "lit"; readonly value: Literal }
  | { readonly t: "ident"; readonly name: string }
  | { readonly t: "select"; readonly operand: Recipe; readonly field: string }
  | { readonly t: "has"; readonly operand: Recipe; readonly field: string }
  | { readonly t: "call"; readonly fn: string; readonly args: readonly Recipe[] }
  | { readonly t: "method"; readonly target: Recipe; readonly fn: string; readonly args: readonly Recipe[] }
  | { readonly t: "op"; readonly fn: string; readonly args: readonly Recipe[] }
  | { readonly t: "list"; readonly elements: readonly Recipe[] }
  | { readonly t: "map"; readonly entries: readonly (readonly [Recipe, Recipe])[] }
  | {
      readonly t: "struct";
      readonly typeName: string;
      readonly fields: readonly (readonly [string, Recipe])[];
    }
  | {
      readonly t: "macro";
      readonly name: string;
      readonly target: Recipe;
      readonly v: string;
      readonly args: readonly Recipe[];
    };

const RESERVED = new Set(
  "true false null in as break const continue else for function if import let loop namespace package return var void while has".split(
    " ",
  ),
);
const MACRO_NAMES = new Set(["all", "exists", "exists_one", "existsOne", "map", "filter"]);

const name = fc
  .stringMatching(/^[a-z_][a-z0-9_]{0,4}$/)
  .filter((n) => !RESERVED.has(n) && !MACRO_NAMES.has(n));
const ident = fc.oneof(
  name,
  name.map((n) => `.${n}`),
);
const field = fc.oneof(
  { weight: 4, arbitrary: name },
  fc.constantFrom("content-type", "in", "a.b", "/x y", "true"),
);
const typeName = fc.array(name, { minLength: 1, maxLength: 3 }).map((parts) => parts.join("."));

const INT64 = { min: -(1n << 63n), max: (1n << 63n) - 1n };
const literal: fc.Arbitrary<Literal> = fc.oneof(
  fc.constant<Literal>({ type: "null" }),
  fc.boolean().map((value): Literal => ({ type: "bool", value })),
  fc.bigInt(INT64).map((value): Literal => ({ type: "int", value })),
  fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map((value): Literal => ({ type: "uint", value })),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((value): Literal => ({ type: "double", value })),
  fc.string({ unit: "grapheme" }).map((value): Literal => ({ type: "string", value })),
  fc.string({ unit: "binary" }).map((value): Literal => ({ type: "string", value })),
  fc.uint8Array({ maxLength: 8 }).map((value): Literal => ({ type: "bytes", value })),
);

const BINARY = [
  Op.logicalOr,
  Op.logicalAnd,
  Op.equals,
  Op.notEquals,
  Op.less,
  Op.lessEquals,
  Op.greater,
  Op.greaterEquals,
  Op.in,
  Op.add,
  Op.subtract,
  Op.multiply,
  Op.divide,
  Op.modulo,
];

export const recipe: fc.Arbitrary<Recipe> = fc.letrec<{ r: Recipe }>((tie) => {
  const r = tie("r");
  const few = fc.array(r, { maxLength: 3 });
  return {
    r: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      literal.map((value): Recipe => ({ t: "lit", value })),
      ident.map((n): Recipe => ({ t: "ident", name: n })),
      fc.record({ t: fc.constant("select" as const), operand: r, field }),
      fc.record({ t: fc.constant("has" as const), operand: r, field }),
      fc.record({ t: fc.constant("call" as const), fn: name, args: few }),
      fc.record({ t: fc.constant("method" as const), target: r, fn: name, args: few }),
      fc.record({ t: fc.constant("op" as const), fn: fc.constantFrom(...BINARY), args: fc.tuple(r, r) }),
      fc.record({
        t: fc.constant("op" as const),
        fn: fc.constantFrom(Op.logicalNot, Op.negate),
        args: fc.tuple(r),
      }),
      fc.record({ t: fc.constant("op" as const), fn: fc.constant(Op.index), args: fc.tuple(r, r) }),
      fc.record({ t: fc.constant("op" as const), fn: fc.constant(Op.conditional), args: fc.tuple(r, r, r) }),
      fc.record({ t: fc.constant("list" as const), elements: few }),
      fc.record({ t: fc.constant("map" as const), entries: fc.array(fc.tuple(r, r), { maxLength: 3 }) }),
      fc.record({
        t: fc.constant("struct" as const),
        typeName,
        fields: fc.array(fc.tuple(field, r), { maxLength: 3 }),
      }),
      fc.oneof(
        fc.record({
          t: fc.constant("macro" as const),
          name: fc.constantFrom("all", "exists", "exists_one", "filter", "map"),
          target: r,
          v: name,
          args: fc.tuple(r),
        }),
        fc.record({
          t: fc.constant("macro" as const),
          name: fc.constant("map"),
          target: r,
          v: name,
          args: fc.tuple(r, r),
        }),
      ),
    ),
  };
}).r;

/** Builds the recipe into an `Ast`, as the parser would have built it. */
export function build(rec: Recipe): Ast {
  const b = new AstBuilder();
  const go = (x: Recipe): Expr => {
    switch (x.t) {
      case "lit":
        return b.literal(0, x.value);
      case "ident":
        return b.ident(0, x.name);
      case "select":
        return b.select(0, go(x.operand), x.field);
      case "has": {
        const e = expandHas(b, 0, b.select(0, go(x.operand), x.field));
        if (!("kind" in e)) throw new Error(e.message);
        return e;
      }
      case "call":
        return b.call(0, x.fn, x.args.map(go));
      case "method":
        return b.call(0, x.fn, x.args.map(go), go(x.target));
      case "op":
        return b.call(0, x.fn, x.args.map(go));
      case "list":
        return b.list(0, x.elements.map(go));
      case "map":
        return b.map(
          0,
          x.entries.map(([k, v]) => b.mapEntry(0, go(k), go(v))),
        );
      case "struct":
        return b.struct(
          0,
          x.typeName,
          x.fields.map(([f, v]) => b.structField(0, f, go(v))),
        );
      case "macro": {
        const e = expandReceiverMacro(b, 0, x.name, go(x.target), [b.ident(0, x.v), ...x.args.map(go)]);
        if (!("kind" in e)) throw new Error(e.message);
        return e;
      }
    }
  };
  return b.finish(go(rec), new Source(""));
}
