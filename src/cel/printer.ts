/**
 * The canonical printer: an AST back to CEL text.
 *
 * Its output is the normalized form of a `when` that rule content hashes are computed over (SPEC-0029
 * REQ-9), so it is deterministic and total over parsed trees: one spacing style, strings in double quotes
 * with one escaping style, parentheses only where the parser needs them to rebuild the same tree, and
 * macros in the call form the author wrote. `parse(print(ast))` gives back `ast`, node for node.
 */
import { type Ast, assertNever, type CallExpr, type Expr, type Literal } from "./ast.js";
import { BINARY_PRECEDENCE, BINARY_SYMBOL, type BinaryOperator, isBinaryOperator, Op } from "./operators.js";

/** A tree the printer cannot express as text (only hand-built trees; never a parsed one). */
export class PrintError extends Error {
  override name = "PrintError";
}

export function print(ast: Pick<Ast, "expr" | "macroCalls">): string {
  return new Printer(ast.macroCalls).expr(ast.expr);
}

// Binding strength of each printed form: a child prints bare when it binds at least as tightly as its
// position needs, and in parentheses otherwise.
const CONDITIONAL = 0;
const UNARY = 6;
const PRIMARY = 7;

const IDENTIFIER = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
const QUOTABLE_FIELD = /^[a-zA-Z0-9_.\-/ ]+$/;
const KEYWORDS = new Set(["true", "false", "null", "in"]);

class Printer {
  constructor(private readonly macroCalls: ReadonlyMap<number, CallExpr>) {}

  expr(e: Expr): string {
    switch (e.kind) {
      case "literal":
        return literal(e.value);
      case "ident":
        return e.name;
      case "select":
        if (e.testOnly) return `has(${this.operand(e.operand)}.${field(e.field)})`;
        return `${this.operand(e.operand)}.${field(e.field)}`;
      case "call":
        return this.call(e);
      case "list":
        return `[${e.elements.map((x) => this.expr(x)).join(", ")}]`;
      case "map":
        return `{${e.entries.map((en) => `${this.expr(en.key)}: ${this.expr(en.value)}`).join(", ")}}`;
      case "struct":
        return `${e.typeName}{${e.fields.map((f) => `${field(f.name)}: ${this.expr(f.value)}`).join(", ")}}`;
      case "comprehension": {
        const call = this.macroCalls.get(e.id);
        if (call === undefined)
          throw new PrintError("a comprehension that no macro produced has no CEL text");
        return this.call(call);
      }
      default:
        return assertNever(e);
    }
  }

  private call(e: CallExpr): string {
    const [a, b, c] = e.args;
    if (e.target === undefined) {
      if (
        e.fn === Op.conditional &&
        c !== undefined &&
        b !== undefined &&
        a !== undefined &&
        e.args.length === 3
      ) {
        return `${this.wrap(a, CONDITIONAL + 1)} ? ${this.wrap(b, CONDITIONAL + 1)} : ${this.expr(c)}`;
      }
      if (isBinaryOperator(e.fn) && e.args.length === 2) return this.binary(e, e.fn);
      if (e.fn === Op.logicalNot && e.args.length === 1) return `!${this.unaryOperand(a as Expr, false)}`;
      if (e.fn === Op.negate && e.args.length === 1) return `-${this.unaryOperand(a as Expr, true)}`;
      if (e.fn === Op.index && e.args.length === 2)
        return `${this.operand(a as Expr)}[${this.expr(b as Expr)}]`;
      if (!IDENTIFIER.test(e.fn.startsWith(".") ? e.fn.slice(1) : e.fn)) {
        throw new PrintError(`function name '${e.fn}' has no CEL spelling`);
      }
      return `${e.fn}(${this.list(e.args)})`;
    }
    if (!IDENTIFIER.test(e.fn)) throw new PrintError(`method name '${e.fn}' has no CEL spelling`);
    return `${this.operand(e.target)}.${e.fn}(${this.list(e.args)})`;
  }

  private list(args: readonly Expr[]): string {
    return args.map((x) => this.expr(x)).join(", ");
  }

  private binary(e: CallExpr, fn: BinaryOperator): string {
    const p = BINARY_PRECEDENCE[fn];
    const symbol = BINARY_SYMBOL[fn];
    if (fn === Op.logicalAnd || fn === Op.logicalOr) {
      // The parser balances a chain of one logical operator; a tree of that shape prints as a flat chain,
      // any other shape with its inner links parenthesized.
      const terms = flatten(e, fn);
      if (isBalanced(e, fn, terms)) return terms.map((t) => this.wrap(t, p + 1)).join(` ${symbol} `);
    }
    const [left, right] = e.args as [Expr, Expr];
    const leftMin = fn === Op.logicalAnd || fn === Op.logicalOr ? p + 1 : p;
    return `${this.wrap(left, leftMin)} ${symbol} ${this.wrap(right, p + 1)}`;
  }

  /**
   * The operand of a unary operator. A run of the same operator would cancel out when reparsed, `!-x` is
   * not CEL, and `-` before a numeric literal would fold into it: each needs parentheses.
   */
  private unaryOperand(x: Expr, negate: boolean): string {
    const unary =
      x.kind === "call" &&
      x.target === undefined &&
      (x.fn === Op.logicalNot || x.fn === Op.negate) &&
      x.args.length === 1;
    if (unary || (negate && this.startsWithNumber(x))) return `(${this.expr(x)})`;
    return this.wrap(x, UNARY);
  }

  /** Whether the printed form of `e` begins with an int or double literal (which a `-` would absorb). */
  private startsWithNumber(e: Expr): boolean {
    let x: Expr = e;
    for (;;) {
      if (x.kind === "literal") return x.value.type === "int" || x.value.type === "double";
      if (x.kind === "select" && !x.testOnly) x = x.operand;
      else if (x.kind === "call" && x.target !== undefined) x = x.target;
      else if (x.kind === "call" && x.fn === Op.index && x.args.length === 2) x = x.args[0] as Expr;
      else if (x.kind === "comprehension" && this.macroCalls.get(x.id)?.target !== undefined) {
        x = this.macroCalls.get(x.id)?.target as Expr;
      } else return false;
    }
  }

  /** A receiver, select operand or indexed value: must bind as a primary. */
  private operand(x: Expr): string {
    return this.wrap(x, PRIMARY);
  }

  private wrap(x: Expr, min: number): string {
    const s = this.expr(x);
    return strength(x) < min ? `(${s})` : s;
  }
}

function strength(e: Expr): number {
  if (e.kind !== "call" || e.target !== undefined) return PRIMARY;
  if (e.fn === Op.conditional && e.args.length === 3) return CONDITIONAL;
  if (isBinaryOperator(e.fn) && e.args.length === 2) return BINARY_PRECEDENCE[e.fn];
  if ((e.fn === Op.logicalNot || e.fn === Op.negate) && e.args.length === 1) return UNARY;
  return PRIMARY;
}

/** The terms of a maximal chain of `fn`, left to right. */
function flatten(e: Expr, fn: BinaryOperator): Expr[] {
  if (e.kind === "call" && e.target === undefined && e.fn === fn && e.args.length === 2) {
    return [...flatten(e.args[0] as Expr, fn), ...flatten(e.args[1] as Expr, fn)];
  }
  return [e];
}

/** Whether `e` is the tree the parser's balancer builds over `terms` (see `parser/build.ts`). */
function isBalanced(e: Expr, fn: BinaryOperator, terms: readonly Expr[]): boolean {
  const matches = (node: Expr, lo: number, hi: number): boolean => {
    if (node.kind !== "call" || node.fn !== fn || node.target !== undefined || node.args.length !== 2)
      return false;
    const mid = (lo + hi + 1) >> 1;
    const [left, right] = node.args as [Expr, Expr];
    const leftOk = mid === lo ? left === terms[mid] : matches(left, lo, mid - 1);
    const rightOk = mid === hi ? right === terms[mid + 1] : matches(right, mid + 1, hi);
    return leftOk && rightOk;
  };
  return matches(e, 0, terms.length - 2);
}

function field(name: string): string {
  if (IDENTIFIER.test(name) && !KEYWORDS.has(name)) return name;
  if (QUOTABLE_FIELD.test(name)) return `\`${name}\``;
  throw new PrintError(`field name '${name}' has no CEL spelling`);
}

export function literal(v: Literal): string {
  switch (v.type) {
    case "null":
      return "null";
    case "bool":
      return v.value ? "true" : "false";
    case "int":
      return v.value.toString();
    case "uint":
      return `${v.value}u`;
    case "double":
      return double(v.value);
    case "string":
      return quoteString(v.value);
    case "bytes":
      return quoteBytes(v.value);
    default:
      return assertNever(v);
  }
}

function double(n: number): string {
  if (Number.isNaN(n)) return 'double("NaN")';
  if (!Number.isFinite(n)) return n > 0 ? 'double("Infinity")' : 'double("-Infinity")';
  if (Object.is(n, -0)) return "-0.0";
  const s = String(n);
  return /[.e]/.test(s) ? s : `${s}.0`;
}

const CHAR_ESCAPES: Readonly<Record<number, string>> = {
  7: "\\a",
  8: "\\b",
  9: "\\t",
  10: "\\n",
  11: "\\v",
  12: "\\f",
  13: "\\r",
  34: '\\"',
  92: "\\\\",
};

/** Printable ASCII but the quote and the backslash: what most strings are, and all print as themselves. */
const PLAIN_ASCII = /^[ !#-[\]-~]*$/;

function quoteString(s: string): string {
  if (PLAIN_ASCII.test(s)) return `"${s}"`;
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    const esc = CHAR_ESCAPES[cp];
    if (esc !== undefined) out += esc;
    else if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) out += `\\x${hex(cp, 2)}`;
    else if (!isPrintable(ch)) out += cp <= 0xffff ? `\\u${hex(cp, 4)}` : `\\U${hex(cp, 8)}`;
    else out += ch;
  }
  return `${out}"`;
}

function quoteBytes(bytes: Uint8Array): string {
  let out = 'b"';
  for (const byte of bytes) {
    const esc = CHAR_ESCAPES[byte];
    if (esc !== undefined) out += esc;
    else if (byte >= 0x20 && byte < 0x7f) out += String.fromCharCode(byte);
    else out += `\\x${hex(byte, 2)}`;
  }
  return `${out}"`;
}

const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/u;

function isPrintable(ch: string): boolean {
  return !NON_PRINTABLE.test(ch);
}

function hex(n: number, width: number): string {
  return n.toString(16).toUpperCase().padStart(width, "0");
}
