/**
 * The CEL library's public entry point. Everything outside `src/cel` (the rules core, the conformance
 * runner, benchmarks, the CLI) uses CEL only through what this file exports.
 *
 *     const result = parse('event.type == "tool"');
 *     if (result.ok) console.log(print(result.ast));
 *     else console.error(renderDiagnostics(result.source, result.errors));
 */
export type {
  Ast,
  CallExpr,
  ComprehensionExpr,
  Expr,
  ExprKind,
  IdentExpr,
  ListExpr,
  Literal,
  LiteralExpr,
  MapEntry,
  MapExpr,
  SelectExpr,
  StructExpr,
  StructField,
} from "./ast.js";
export { ACCUMULATOR, AstBuilder, children } from "./ast.js";
export type { Diagnostic, DiagnosticCode } from "./diagnostics.js";
export { CelSyntaxError, renderDiagnostic, renderDiagnostics } from "./diagnostics.js";
export { Op } from "./operators.js";
export type { ParseOptions, ParseResult } from "./parser/parse.js";
export { DEFAULT_MAX_CODE_POINTS, DEFAULT_MAX_DEPTH, parse } from "./parser/parse.js";
export { PrintError, print } from "./printer.js";
export type { Location } from "./source.js";
export { Source } from "./source.js";

import type { Ast } from "./ast.js";
import { CelSyntaxError } from "./diagnostics.js";
import { type ParseOptions, parse } from "./parser/parse.js";

/** `parse`, throwing a `CelSyntaxError` (with every diagnostic) instead of returning them. */
export function parseOrThrow(text: string, options?: ParseOptions): Ast {
  const result = parse(text, options);
  if (!result.ok) throw new CelSyntaxError(result.source, result.errors);
  return result.ast;
}
