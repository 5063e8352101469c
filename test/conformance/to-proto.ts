/**
 * Our AST as the reference's `cel.expr.Expr` protobuf message, so the package's debug-string printer
 * (a port of cel-go's `ToDebugString`) can render both trees in one form for comparison.
 */

import {
  type Constant,
  ConstantSchema,
  ExprSchema,
  type Expr as PbExpr,
} from "@bufbuild/cel-spec/cel/expr/syntax_pb.js";
import { create } from "@bufbuild/protobuf";
import type { Expr, Literal } from "../../src/cel/index.js";

export function toProto(e: Expr): PbExpr {
  const id = BigInt(e.id);
  switch (e.kind) {
    case "literal":
      return create(ExprSchema, { id, exprKind: { case: "constExpr", value: constant(e.value) } });
    case "ident":
      return create(ExprSchema, { id, exprKind: { case: "identExpr", value: { name: e.name } } });
    case "select":
      return create(ExprSchema, {
        id,
        exprKind: {
          case: "selectExpr",
          value: { operand: toProto(e.operand), field: e.field, testOnly: e.testOnly },
        },
      });
    case "call":
      return create(ExprSchema, {
        id,
        exprKind: {
          case: "callExpr",
          value: {
            function: e.fn,
            args: e.args.map(toProto),
            ...(e.target === undefined ? {} : { target: toProto(e.target) }),
          },
        },
      });
    case "list":
      return create(ExprSchema, {
        id,
        exprKind: { case: "listExpr", value: { elements: e.elements.map(toProto) } },
      });
    case "map":
      return create(ExprSchema, {
        id,
        exprKind: {
          case: "structExpr",
          value: {
            entries: e.entries.map((en) => ({
              id: BigInt(en.id),
              keyKind: { case: "mapKey" as const, value: toProto(en.key) },
              value: toProto(en.value),
            })),
          },
        },
      });
    case "struct":
      return create(ExprSchema, {
        id,
        exprKind: {
          case: "structExpr",
          value: {
            messageName: e.typeName,
            entries: e.fields.map((f) => ({
              id: BigInt(f.id),
              keyKind: { case: "fieldKey" as const, value: f.name },
              value: toProto(f.value),
            })),
          },
        },
      });
    case "comprehension":
      return create(ExprSchema, {
        id,
        exprKind: {
          case: "comprehensionExpr",
          value: {
            iterVar: e.iterVar,
            iterRange: toProto(e.iterRange),
            accuVar: e.accuVar,
            accuInit: toProto(e.accuInit),
            loopCondition: toProto(e.loopCondition),
            loopStep: toProto(e.loopStep),
            result: toProto(e.result),
          },
        },
      });
  }
}

function constant(v: Literal): Constant {
  switch (v.type) {
    case "null":
      return create(ConstantSchema, { constantKind: { case: "nullValue", value: 0 } });
    case "bool":
      return create(ConstantSchema, { constantKind: { case: "boolValue", value: v.value } });
    case "int":
      return create(ConstantSchema, { constantKind: { case: "int64Value", value: v.value } });
    case "uint":
      return create(ConstantSchema, { constantKind: { case: "uint64Value", value: v.value } });
    case "double":
      return create(ConstantSchema, { constantKind: { case: "doubleValue", value: v.value } });
    case "string":
      return create(ConstantSchema, { constantKind: { case: "stringValue", value: v.value } });
    case "bytes":
      return create(ConstantSchema, { constantKind: { case: "bytesValue", value: v.value } });
  }
}
