/** A tree's structure without ids or offsets, for comparing two parses of the same meaning. */
import type { Expr, Literal } from "../../src/cel/index.js";

export type Shape = string | number | boolean | null | Shape[] | { [k: string]: Shape };

export function shape(e: Expr): Shape {
  switch (e.kind) {
    case "literal":
      return { literal: literalShape(e.value) };
    case "ident":
      return { ident: e.name };
    case "select":
      return { select: shape(e.operand), field: e.field, testOnly: e.testOnly };
    case "call":
      return { call: e.fn, target: e.target === undefined ? null : shape(e.target), args: e.args.map(shape) };
    case "list":
      return { list: e.elements.map(shape) };
    case "map":
      return { map: e.entries.map((en) => [shape(en.key), shape(en.value)]) };
    case "struct":
      return { struct: e.typeName, fields: e.fields.map((f) => [f.name, shape(f.value)]) };
    case "comprehension":
      return {
        comprehension: e.iterVar,
        range: shape(e.iterRange),
        accu: e.accuVar,
        init: shape(e.accuInit),
        condition: shape(e.loopCondition),
        step: shape(e.loopStep),
        result: shape(e.result),
      };
  }
}

function literalShape(v: Literal): Shape {
  switch (v.type) {
    case "null":
      return "null";
    case "bool":
      return v.value;
    case "int":
    case "uint":
      return `${v.type}:${v.value}`;
    case "double":
      return `double:${Object.is(v.value, -0) ? "-0" : String(v.value)}`;
    case "string":
      return `string:${JSON.stringify(v.value)}`;
    case "bytes":
      return `bytes:${Array.from(v.value).join(",")}`;
  }
}
