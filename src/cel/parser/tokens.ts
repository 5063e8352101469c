/**
 * CEL's lexis as chevrotain tokens, in matching order: chevrotain takes the first pattern that matches,
 * so longer forms precede their prefixes (`<=` before `<`, a float before an int, a string before the
 * identifier its prefix letter would start).
 *
 * String and bytes tokens accept any backslash escape; which escapes are legal is decided when the literal
 * is decoded (`literals.ts`), so a bad escape gets its own message and position instead of a bare
 * "unexpected character".
 */
import type { TokenType } from "chevrotain";
import { createToken, Lexer } from "./chevrotain.js";

const ESCAPED_BODY = {
  double: String.raw`"(?:\\[^\n\r]|[^\\"\n\r])*"`,
  single: String.raw`'(?:\\[^\n\r]|[^\\'\n\r])*'`,
  tripleDouble: String.raw`"""(?:\\[\s\S]|[^\\])*?"""`,
  tripleSingle: String.raw`'''(?:\\[\s\S]|[^\\])*?'''`,
};
const RAW_BODY = {
  double: String.raw`"[^"\n\r]*"`,
  single: String.raw`'[^'\n\r]*'`,
  tripleDouble: String.raw`"""[\s\S]*?"""`,
  tripleSingle: String.raw`'''[\s\S]*?'''`,
};
// Triple-quoted forms come first so `"""a"""` is not read as `""` followed by `"a"`.
const STRING_BODY =
  `(?:[rR](?:${RAW_BODY.tripleDouble}|${RAW_BODY.tripleSingle}|${RAW_BODY.double}|${RAW_BODY.single})` +
  `|${ESCAPED_BODY.tripleDouble}|${ESCAPED_BODY.tripleSingle}|${ESCAPED_BODY.double}|${ESCAPED_BODY.single})`;

export const WhiteSpace = createToken({
  name: "WhiteSpace",
  pattern: /[\t\n\f\r ]+/,
  group: Lexer.SKIPPED,
  line_breaks: true,
});
export const Comment = createToken({ name: "Comment", pattern: /\/\/[^\n\r]*/, group: Lexer.SKIPPED });

export const Bytes = createToken({
  name: "Bytes",
  label: "bytes literal",
  pattern: new RegExp(`[bB]${STRING_BODY}`),
  start_chars_hint: ["b", "B"],
  line_breaks: true,
});
export const StringLit = createToken({
  name: "StringLit",
  label: "string literal",
  pattern: new RegExp(STRING_BODY),
  start_chars_hint: ["r", "R", '"', "'"],
  line_breaks: true,
});
/**
 * A triple quote that is never closed. Without this token the lexer would read `'''abc` as the empty
 * string `''` followed by an unterminated `'abc`, and point at the wrong quote. Never reaches the parser.
 */
export const UnterminatedTripleString = createToken({
  name: "UnterminatedTripleString",
  pattern: { exec: unterminatedTriple },
  start_chars_hint: ["b", "B", "r", "R", '"', "'"],
  line_breaks: true,
});

function unterminatedTriple(text: string, offset: number): RegExpExecArray | null {
  let i = offset;
  if (text[i] === "b" || text[i] === "B") i++;
  let raw = false;
  if (text[i] === "r" || text[i] === "R") {
    raw = true;
    i++;
  }
  const quote = text.slice(i, i + 3);
  if (quote !== "'''" && quote !== '"""') return null;
  for (let j = i + 3; j < text.length; j++) {
    if (!raw && text[j] === "\\") j++;
    else if (text.startsWith(quote, j)) return null;
  }
  const match = [text.slice(offset)] as unknown as RegExpExecArray;
  match.index = offset;
  return match;
}

/** An opening quote with no closing one; never reaches the parser (the lexer pass reports it). */
export const UnterminatedString = createToken({
  name: "UnterminatedString",
  pattern: /[bB]?[rR]?(?:"""[\s\S]*|'''[\s\S]*|"[^\n\r]*|'[^\n\r]*)/,
  start_chars_hint: ["b", "B", "r", "R", '"', "'"],
  line_breaks: true,
});

export const NumFloat = createToken({
  name: "NumFloat",
  label: "double literal",
  pattern: /\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\.\d+(?:[eE][+-]?\d+)?/,
  start_chars_hint: [".", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"],
});
export const NumUInt = createToken({
  name: "NumUInt",
  label: "uint literal",
  pattern: /(?:0x[0-9a-fA-F]+|\d+)[uU]/,
});
export const NumInt = createToken({ name: "NumInt", label: "int literal", pattern: /0x[0-9a-fA-F]+|\d+/ });

/** Every binary operator; the parser consumes the category and climbs precedence on the result. */
export const BinaryOp = createToken({ name: "BinaryOp", label: "binary operator", pattern: Lexer.NA });

const op = (name: string, image: string, binary = true): TokenType =>
  createToken({
    name,
    label: `'${image}'`,
    pattern: image,
    ...(binary ? { categories: [BinaryOp] } : {}),
  });

export const OrOr = op("OrOr", "||");
export const AndAnd = op("AndAnd", "&&");
export const EqEq = op("EqEq", "==");
export const NotEq = op("NotEq", "!=");
export const LessEq = op("LessEq", "<=");
export const GreaterEq = op("GreaterEq", ">=");
export const Less = op("Less", "<");
export const Greater = op("Greater", ">");
export const Bang = op("Bang", "!", false);
export const Plus = op("Plus", "+");
export const Minus = op("Minus", "-");
export const Star = op("Star", "*");
export const Slash = op("Slash", "/");
export const Percent = op("Percent", "%");
export const Question = op("Question", "?", false);
export const Colon = op("Colon", ":", false);
export const Comma = op("Comma", ",", false);
export const Dot = op("Dot", ".", false);
export const LParen = op("LParen", "(", false);
export const RParen = op("RParen", ")", false);
export const LBracket = op("LBracket", "[", false);
export const RBracket = op("RBracket", "]", false);
export const LCurly = op("LCurly", "{", false);
export const RCurly = op("RCurly", "}", false);

export const Identifier = createToken({
  name: "Identifier",
  label: "identifier",
  pattern: /[_a-zA-Z][_a-zA-Z0-9]*/,
});
const keyword = (name: string, image: string, categories: TokenType[] = []): TokenType =>
  createToken({ name, label: `'${image}'`, pattern: image, longer_alt: Identifier, categories });
export const True = keyword("True", "true");
export const False = keyword("False", "false");
export const Null = keyword("Null", "null");
export const In = keyword("In", "in", [BinaryOp]);
/** A backtick-quoted field name: ``a.`content-type` ``. */
export const EscIdentifier = createToken({
  name: "EscIdentifier",
  label: "quoted identifier",
  pattern: /`[a-zA-Z0-9_.\-/ ]+`/,
});

export const allTokens: TokenType[] = [
  WhiteSpace,
  Comment,
  UnterminatedTripleString,
  Bytes,
  StringLit,
  UnterminatedString,
  NumFloat,
  NumUInt,
  NumInt,
  BinaryOp,
  OrOr,
  AndAnd,
  EqEq,
  NotEq,
  LessEq,
  GreaterEq,
  Less,
  Greater,
  Bang,
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
  Question,
  Colon,
  Comma,
  Dot,
  LParen,
  RParen,
  LBracket,
  RBracket,
  LCurly,
  RCurly,
  True,
  False,
  Null,
  In,
  Identifier,
  EscIdentifier,
];

export const celLexer = new Lexer(allTokens, {
  positionTracking: "onlyOffset",
  ensureOptimizations: true,
});
