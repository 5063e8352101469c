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
export { codePointLength, Source } from "./source.js";

import type { Ast } from "./ast.js";
import { CelSyntaxError } from "./diagnostics.js";
import { type ParseOptions, parse } from "./parser/parse.js";

/** `parse`, throwing a `CelSyntaxError` (with every diagnostic) instead of returning them. */
export function parseOrThrow(text: string, options?: ParseOptions): Ast {
  const result = parse(text, options);
  if (!result.ok) throw new CelSyntaxError(result.source, result.errors);
  return result.ast;
}

export type { CheckedAst, CheckResult, Reference } from "./check/checker.js";
export { check } from "./check/checker.js";
export type { Validator } from "./check/validators.js";
export { comprehensionNestingLimit } from "./check/validators.js";
export type { Activation } from "./compile/frame.js";
export { CostLimitExceeded } from "./compile/frame.js";
export { layoutOf } from "./compile/host.js";
export { LaidOut, Layout } from "./compile/layout.js";
export { COST } from "./cost/constants.js";
export { estimateCost } from "./cost/estimate.js";
export type { Range } from "./cost/range.js";
export type {
  CallSite,
  EnvOptions,
  FieldDecl,
  FixedCost,
  FunctionDecl,
  ObjectTypeDecl,
  OverloadDecl,
  PreparedCall,
  SizeBound,
  VariableDecl,
} from "./env.js";
export { Env } from "./env.js";
export type { CompileOptions, CompileResult, Evaluation } from "./program.js";
export { COST_EXCEEDED, compile, compileAst, Program } from "./program.js";
export { parseDuration, parseTimestamp } from "./runtime/time.js";
export type { Result, Value } from "./runtime/values.js";
export { CelError, CelMap, Duration, Timestamp, TypeValue, UInt } from "./runtime/values.js";
export type { Type } from "./types.js";
export { formatType, T } from "./types.js";

import { Env } from "./env.js";
import { standardFunctions } from "./std/index.js";

/** CEL's standard environment: the standard library and macros, no variables. Extend it to declare some. */
export const standardEnv = new Env({ functions: standardFunctions });
