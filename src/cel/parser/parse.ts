/**
 * `parse`: source text to an `Ast`, or the diagnostics that say why not.
 *
 *     text ─ limits ─▶ tokens (lexer) ─▶ CST (grammar) ─▶ AST (build, macros) ─ depth check ─▶ Ast
 *
 * Each stage stops the pipeline when it reports errors, so later stages only see well-formed input.
 */
import type { ILexingError, IRecognitionException, IToken } from "chevrotain";
import type { ExprCstNode } from "../../../grammar/cst.js";
import { type Ast, AstBuilder, type Expr } from "../ast.js";
import type { Diagnostic } from "../diagnostics.js";
import { codePointLength, Source } from "../source.js";
import { CstToAst } from "./build.js";
import { CelGrammar, NestingLimitError } from "./grammar.js";
import { celLexer, UnterminatedString, UnterminatedTripleString } from "./tokens.js";

export interface ParseOptions {
  /**
   * How deeply expressions may nest, in parser recursion and in AST depth. Default 100: chevrotain's
   * frames before the JIT warms up overflow Node's default stack near 170 levels, and a limit must hold
   * the same in every process (lint and load must agree). CEL requires at least 32.
   */
  readonly maxDepth?: number;
  /** The largest expression accepted, in code points. Default 100,000. */
  readonly maxCodePoints?: number;
  /** Names the text in rendered errors (a file and key, say). Default `<input>`. */
  readonly description?: string;
}

export const DEFAULT_MAX_DEPTH = 100;
export const DEFAULT_MAX_CODE_POINTS = 100_000;

export type ParseResult =
  | { readonly ok: true; readonly ast: Ast }
  | { readonly ok: false; readonly source: Source; readonly errors: readonly Diagnostic[] };

let fastGrammar: CelGrammar | undefined;
let recoveringGrammar: CelGrammar | undefined;

export function parse(text: string, options: ParseOptions = {}): ParseResult {
  const source = new Source(text, options.description);
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const fail = (errors: Diagnostic[]): ParseResult => ({ ok: false, source, errors });

  const maxCodePoints = options.maxCodePoints ?? DEFAULT_MAX_CODE_POINTS;
  // Cheap bound first: a string has at least length/2 code points.
  if (
    text.length > maxCodePoints &&
    (text.length > 2 * maxCodePoints || codePointLength(text) > maxCodePoints)
  ) {
    return fail([
      {
        code: "size_limit",
        message: `expression code point size exceeds limit: size: ${codePointLength(text)}, limit ${maxCodePoints}`,
        offset: 0,
      },
    ]);
  }
  const loneSurrogate = findLoneSurrogate(text);
  if (loneSurrogate >= 0) {
    return fail([
      { code: "syntax", message: "Syntax error: invalid UTF-16 (lone surrogate)", offset: loneSurrogate },
    ]);
  }

  const lexed = celLexer.tokenize(text);
  const lexErrors = lexed.errors.map(lexingDiagnostic(text));
  for (const t of lexed.tokens) {
    if (t.tokenType === UnterminatedString || t.tokenType === UnterminatedTripleString) {
      lexErrors.push({
        code: "unterminated_string",
        message: "Syntax error: unterminated string literal",
        offset: t.startOffset,
      });
    }
  }
  if (lexErrors.length > 0) return fail(lexErrors.sort((a, b) => a.offset - b.offset));

  // Most input is well-formed: parse without recovery first, and again with it only to report every
  // error of an input that has some.
  fastGrammar ??= new CelGrammar(false);
  let parsed = runGrammar(fastGrammar, lexed.tokens, maxDepth, text.length);
  if ("errors" in parsed && parsed.errors[0]?.code === "syntax") {
    recoveringGrammar ??= new CelGrammar(true);
    parsed = runGrammar(recoveringGrammar, lexed.tokens, maxDepth, text.length);
  }
  if ("errors" in parsed) return fail(parsed.errors);
  const cst = parsed.cst;

  const builder = new AstBuilder(maxDepth);
  const toAst = new CstToAst(builder);
  let expr: Expr;
  try {
    expr = toAst.expr(cst);
  } catch (e) {
    if (e instanceof RangeError) return fail([stackDiagnostic()]);
    throw e;
  }
  if (toAst.diagnostics.length > 0) return fail(toAst.diagnostics);

  if (builder.tooDeep !== undefined) {
    return fail([depthDiagnostic(maxDepth, builder.offsets.get(builder.tooDeep.id) ?? 0)]);
  }
  return { ok: true, ast: builder.finish(expr, source) };
}

function runGrammar(
  grammar: CelGrammar,
  tokens: IToken[],
  maxDepth: number,
  end: number,
): { cst: ExprCstNode } | { errors: Diagnostic[] } {
  grammar.input = tokens;
  grammar.nestingLimit = maxDepth;
  grammar.resetNesting();
  try {
    const cst = grammar.expr() as ExprCstNode;
    if (grammar.errors.length > 0) return { errors: grammar.errors.map((e) => syntaxDiagnostic(e, end)) };
    return { cst };
  } catch (e) {
    if (e instanceof NestingLimitError) return { errors: [depthDiagnostic(maxDepth, e.offset)] };
    if (e instanceof RangeError) return { errors: [stackDiagnostic()] };
    throw e;
  }
}

function depthDiagnostic(limit: number, offset: number): Diagnostic {
  return { code: "depth_limit", message: `expression nesting exceeds limit: ${limit}`, offset };
}

/** The JS stack ran out before the nesting limit did (a caller deep in its own stack, or a raised limit). */
function stackDiagnostic(): Diagnostic {
  return { code: "depth_limit", message: "expression nesting exceeds the parser's stack", offset: 0 };
}

function findLoneSurrogate(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    const d = text.charCodeAt(i + 1);
    if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) i++;
    else return i;
  }
  return -1;
}

function lexingDiagnostic(text: string): (e: ILexingError) => Diagnostic {
  return (e) => {
    const ch = String.fromCodePoint(text.codePointAt(e.offset) ?? 0);
    return { code: "syntax", message: `Syntax error: unexpected character '${ch}'`, offset: e.offset };
  };
}

function syntaxDiagnostic(e: IRecognitionException, end: number): Diagnostic {
  const offset = Number.isNaN(e.token.startOffset) ? end : e.token.startOffset;
  return { code: "syntax", message: e.message, offset };
}
