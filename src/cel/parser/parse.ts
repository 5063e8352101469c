/**
 * `parse`: source text to an `Ast`, or the diagnostics that say why not.
 *
 *     text ─ limits ─▶ tokens (lexer) ─▶ AST (grammar with build and macro actions) ─ depth check ─▶ Ast
 *
 * Each stage stops the pipeline when it reports errors: the lexer's before the grammar runs, and the
 * grammar's syntax errors before anything the actions reported.
 */
import type { ILexingError, IRecognitionException, IToken } from "chevrotain";
import { type Ast, AstBuilder, type Expr } from "../ast.js";
import type { Diagnostic } from "../diagnostics.js";
import { codePointLength, hasSurrogate, Source } from "../source.js";
import { AstActions } from "./build.js";
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
  const builder = new AstBuilder(maxDepth);
  const actions = new AstActions(builder);
  fastGrammar ??= new CelGrammar(false);
  const parsed = runGrammar(fastGrammar, lexed.tokens, actions, maxDepth, text.length);
  if ("errors" in parsed) {
    if (parsed.errors[0]?.code !== "syntax") return fail(parsed.errors);
    recoveringGrammar ??= new CelGrammar(true);
    const recovered = runGrammar(
      recoveringGrammar,
      lexed.tokens,
      new AstActions(new AstBuilder(maxDepth)),
      maxDepth,
      text.length,
    );
    return fail("errors" in recovered ? recovered.errors : parsed.errors);
  }
  if (actions.diagnostics.length > 0) return fail(actions.diagnostics);

  if (builder.tooDeep !== undefined) {
    return fail([depthDiagnostic(maxDepth, builder.offsets.get(builder.tooDeep.id) ?? 0)]);
  }
  return { ok: true, ast: builder.finish(parsed.expr, source) };
}

function runGrammar(
  grammar: CelGrammar,
  tokens: IToken[],
  actions: AstActions,
  maxDepth: number,
  end: number,
): { expr: Expr } | { errors: Diagnostic[] } {
  grammar.start(tokens, actions, maxDepth);
  try {
    const expr = grammar.expr();
    if (grammar.errors.length > 0) return { errors: grammar.errors.map((e) => syntaxDiagnostic(e, end)) };
    return { expr };
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
  if (!hasSurrogate(text)) return -1;
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
