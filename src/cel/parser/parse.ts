/**
 * `parse`: source text to an `Ast`, or the diagnostics that say why not.
 *
 *     text ─ limits ─▶ tokens (lexer) ─▶ CST (grammar) ─▶ AST (build, macros) ─ depth check ─▶ Ast
 *
 * Each stage stops the pipeline when it reports errors, so later stages only see well-formed input.
 */
import type { ILexingError, IRecognitionException, IToken } from "chevrotain";
import type { ExprCstNode } from "../../../grammar/cst.js";
import { type Ast, AstBuilder, children, type Expr } from "../ast.js";
import type { Diagnostic } from "../diagnostics.js";
import { codePointLength, Source } from "../source.js";
import { CstToAst } from "./build.js";
import { CelGrammar, NestingLimitError } from "./grammar.js";
import { celLexer, UnterminatedString } from "./tokens.js";

export interface ParseOptions {
  /** How deeply expressions may nest, in parser recursion and in AST depth. Default 250. */
  readonly maxDepth?: number;
  /** The largest expression accepted, in code points. Default 100,000. */
  readonly maxCodePoints?: number;
  /** Names the text in rendered errors (a file and key, say). Default `<input>`. */
  readonly description?: string;
}

export const DEFAULT_MAX_DEPTH = 250;
export const DEFAULT_MAX_CODE_POINTS = 100_000;

export type ParseResult =
  | { readonly ok: true; readonly ast: Ast }
  | { readonly ok: false; readonly source: Source; readonly errors: readonly Diagnostic[] };

let grammar: CelGrammar | undefined;

export function parse(text: string, options: ParseOptions = {}): ParseResult {
  const source = new Source(text, options.description);
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const fail = (errors: Diagnostic[]): ParseResult => ({ ok: false, source, errors });

  const maxCodePoints = options.maxCodePoints ?? DEFAULT_MAX_CODE_POINTS;
  // Cheap bound first: a string has at least length/2 code points.
  if (text.length > maxCodePoints && (text.length > 2 * maxCodePoints || codePointLength(text) > maxCodePoints)) {
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
    return fail([{ code: "syntax", message: "Syntax error: invalid UTF-16 (lone surrogate)", offset: loneSurrogate }]);
  }

  const lexed = celLexer.tokenize(text);
  const lexErrors = lexed.errors.map(lexingDiagnostic(text));
  for (const t of lexed.tokens) {
    if (t.tokenType === UnterminatedString) {
      lexErrors.push({ code: "unterminated_string", message: "Syntax error: unterminated string literal", offset: t.startOffset });
    }
  }
  if (lexErrors.length > 0) return fail(lexErrors.sort((a, b) => a.offset - b.offset));

  grammar ??= new CelGrammar();
  grammar.input = lexed.tokens;
  grammar.nestingLimit = maxDepth;
  grammar.resetNesting();
  let cst: ExprCstNode;
  try {
    cst = grammar.expr() as ExprCstNode;
  } catch (e) {
    if (e instanceof NestingLimitError) return fail([depthDiagnostic(maxDepth, e.offset)]);
    if (e instanceof RangeError) return fail([depthDiagnostic(maxDepth, 0)]);
    throw e;
  }
  if (grammar.errors.length > 0) return fail(grammar.errors.map((e) => syntaxDiagnostic(e, text.length)));

  const builder = new AstBuilder();
  const toAst = new CstToAst(builder);
  let expr: Expr;
  try {
    expr = toAst.expr(cst);
  } catch (e) {
    if (e instanceof RangeError) return fail([depthDiagnostic(maxDepth, 0)]);
    throw e;
  }
  if (toAst.diagnostics.length > 0) return fail(toAst.diagnostics);

  const deepest = deepestNode(expr, maxDepth);
  if (deepest !== undefined) return fail([depthDiagnostic(maxDepth, builder.offsets.get(deepest.id) ?? 0)]);
  return { ok: true, ast: builder.finish(expr, source) };
}

function depthDiagnostic(limit: number, offset: number): Diagnostic {
  return { code: "depth_limit", message: `expression nesting exceeds limit: ${limit}`, offset };
}

/** The first node found deeper than `limit`, walking iteratively so depth cannot overflow the stack. */
function deepestNode(root: Expr, limit: number): Expr | undefined {
  const stack: [Expr, number][] = [[root, 1]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [e, depth] = top;
    if (depth > limit) return e;
    for (const c of children(e)) stack.push([c, depth + 1]);
  }
  return undefined;
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

export type { IToken };
