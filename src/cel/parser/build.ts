/**
 * Builds the typed AST from chevrotain's concrete syntax tree: climbs operator precedence over the flat
 * `binary` lists, balances `&&`/`||` chains as the reference parser does, folds a single `-` into a
 * numeric literal, expands macros, and rejects what the grammar let through only to name it precisely.
 */
import type { IToken } from "chevrotain";
import type {
  BinaryCstNode,
  ExprCstNode,
  ExprListCstNode,
  FieldInitsCstNode,
  OperandCstChildren,
  OperandCstNode,
  SuffixCstNode,
} from "../../../grammar/cst.js";
import type { AstBuilder, Expr, Literal, StructField } from "../ast.js";
import type { Diagnostic, DiagnosticCode } from "../diagnostics.js";
import { BINARY_PRECEDENCE, type BinaryOperator, Op } from "../operators.js";
import {
  decodeBytes,
  decodeDouble,
  decodeInt,
  decodeString,
  decodeUint,
  type LiteralError,
} from "./literals.js";
import { expandHas, expandReceiverMacro, isReceiverMacro, type MacroError } from "./macros.js";

/** Identifiers CEL reserves for embedding languages; they may not name variables or functions. */
const RESERVED = new Set([
  "as",
  "break",
  "const",
  "continue",
  "else",
  "for",
  "function",
  "if",
  "import",
  "let",
  "loop",
  "namespace",
  "package",
  "return",
  "var",
  "void",
  "while",
]);

const OPERATOR_BY_TOKEN: Readonly<Record<string, BinaryOperator>> = {
  OrOr: Op.logicalOr,
  AndAnd: Op.logicalAnd,
  EqEq: Op.equals,
  NotEq: Op.notEquals,
  Less: Op.less,
  LessEq: Op.lessEquals,
  Greater: Op.greater,
  GreaterEq: Op.greaterEquals,
  In: Op.in,
  Plus: Op.add,
  Minus: Op.subtract,
  Star: Op.multiply,
  Slash: Op.divide,
  Percent: Op.modulo,
};

const LOWEST_BINARY = 1;
const HIGHEST_BINARY = 5;

/** A member expression that is still a plain qualified name, which `{…}` may turn into a type name. */
interface NameParts {
  readonly leadingDot: IToken | undefined;
  /** Each part with the dot before it (none for the first). */
  readonly parts: { readonly name: string; readonly token: IToken; readonly dot: IToken | undefined }[];
}

export class CstToAst {
  readonly diagnostics: Diagnostic[] = [];

  constructor(private readonly b: AstBuilder) {}

  expr(node: ExprCstNode): Expr {
    const c = node.children;
    const condition = this.binary(first(c.condition));
    if (c.Question === undefined) return condition;
    const then = this.binary(first(c.then));
    const otherwise = this.expr(first(c.else));
    return this.b.call(first(c.Question).startOffset, Op.conditional, [condition, then, otherwise]);
  }

  private binary(node: BinaryCstNode): Expr {
    const operands = node.children.operands.map((u) => this.operand(u));
    const operators = node.children.operators ?? [];
    if (operators.length === 0) return first(operands);
    let next = 0;
    const fnOf = (t: IToken): BinaryOperator => OPERATOR_BY_TOKEN[t.tokenType.name] as BinaryOperator;
    const precedenceAt = (i: number): number => {
      const t = operators[i];
      return t === undefined ? 0 : BINARY_PRECEDENCE[fnOf(t)];
    };
    // Operands are consumed left to right; each level gathers its run of same-level operators.
    const level = (p: number): Expr => {
      if (p > HIGHEST_BINARY) return operands[next] as Expr;
      let left = level(p + 1);
      if (p === BINARY_PRECEDENCE[Op.logicalOr] || p === BINARY_PRECEDENCE[Op.logicalAnd]) {
        const terms = [left];
        const ops: IToken[] = [];
        while (precedenceAt(next) === p) {
          ops.push(operators[next] as IToken);
          next++;
          terms.push(level(p + 1));
        }
        return ops.length === 0 ? left : this.balance(fnOf(first(ops)), terms, ops);
      }
      while (precedenceAt(next) === p) {
        const op = operators[next] as IToken;
        next++;
        left = this.b.call(op.startOffset, fnOf(op), [left, level(p + 1)]);
      }
      return left;
    };
    return level(LOWEST_BINARY);
  }

  /** A chain of one logical operator as a balanced tree, split as the reference parser splits it. */
  private balance(fn: BinaryOperator, terms: Expr[], ops: IToken[]): Expr {
    const tree = (lo: number, hi: number): Expr => {
      const mid = (lo + hi + 1) >> 1;
      const left = mid === lo ? (terms[mid] as Expr) : tree(lo, mid - 1);
      const right = mid === hi ? (terms[mid + 1] as Expr) : tree(mid + 1, hi);
      return this.b.call((ops[mid] as IToken).startOffset, fn, [left, right]);
    };
    return tree(0, ops.length - 1);
  }

  private operand(node: OperandCstNode): Expr {
    const c = node.children;
    const bangs = c.Bang ?? [];
    const minuses = c.Minus ?? [];
    // A lone `-` before a number is part of the literal (so -9223372036854775808 exists); an even run
    // of `-` or `!` cancels out, as in the reference parser.
    const signedLiteral = minuses.length === 1 && (c.NumInt !== undefined || c.NumFloat !== undefined);
    if (bangs.length > 0 && minuses.length > 0 && !signedLiteral) {
      return this.fail("syntax", `Syntax error: mismatched input '-' after '!'`, first(minuses).startOffset);
    }
    let e = this.member(c, signedLiteral ? first(minuses) : undefined);
    if (!signedLiteral && minuses.length % 2 === 1)
      e = this.b.call(first(minuses).startOffset, Op.negate, [e]);
    if (bangs.length % 2 === 1) e = this.b.call(first(bangs).startOffset, Op.logicalNot, [e]);
    return e;
  }

  /** The primary and its suffixes; `sign` is the `-` folded into a numeric literal primary. */
  private member(c: OperandCstChildren, sign: IToken | undefined): Expr {
    const suffixes = c.suffix ?? [];
    let name = sign === undefined ? nameOf(c) : undefined;
    let e: Expr | undefined = name === undefined ? this.primary(c, sign) : undefined;
    const materialize = (): Expr => {
      if (e !== undefined) return e;
      e = this.nameToExpr(name as NameParts);
      name = undefined;
      return e;
    };
    for (const s of suffixes) {
      const sc = s.children;
      if (sc.Dot !== undefined) {
        const dot = first(sc.Dot);
        if (sc.optional !== undefined)
          return this.fail("unsupported_syntax", "unsupported syntax '.?'", dot.startOffset);
        if (sc.EscIdentifier !== undefined) {
          const field = first(sc.EscIdentifier).image.slice(1, -1);
          e = this.b.select(dot.startOffset, materialize(), field);
          continue;
        }
        const id = first(sc.Identifier as IToken[]);
        if (sc.LParen !== undefined) {
          e = this.memberCall(materialize(), id.image, first(sc.LParen).startOffset, sc.args);
        } else if (name !== undefined) {
          name.parts.push({ name: id.image, token: id, dot });
        } else {
          e = this.b.select(dot.startOffset, materialize(), id.image);
        }
      } else if (sc.LBracket !== undefined) {
        const open = first(sc.LBracket);
        if (sc.optional !== undefined)
          return this.fail("unsupported_syntax", "unsupported syntax '[?'", open.startOffset);
        const operand = materialize();
        e = this.b.call(open.startOffset, Op.index, [operand, this.expr(first(sc.index as ExprCstNode[]))]);
      } else {
        e = this.struct(s, name);
        name = undefined;
      }
    }
    return materialize();
  }

  private struct(s: SuffixCstNode, name: NameParts | undefined): Expr {
    const open = first(s.children.LCurly as IToken[]);
    if (name === undefined) {
      return this.fail(
        "syntax",
        "Syntax error: message construction needs a type name before '{'",
        open.startOffset,
      );
    }
    const typeName = (name.leadingDot ? "." : "") + name.parts.map((p) => p.name).join(".");
    const fields = this.fieldInits(s.children.fieldInits?.[0]);
    return this.b.struct(open.startOffset, typeName, fields);
  }

  private fieldInits(node: FieldInitsCstNode | undefined): StructField[] {
    if (node === undefined) return [];
    return node.children.items.map((f) => {
      const c = f.children;
      if (c.optional !== undefined)
        this.fail("unsupported_syntax", "unsupported syntax '?'", first(c.optional).startOffset);
      const name =
        c.Identifier !== undefined
          ? first(c.Identifier).image
          : first(c.EscIdentifier as IToken[]).image.slice(1, -1);
      const value = this.expr(first(c.value));
      return this.b.structField(first(c.Colon).startOffset, name, value);
    });
  }

  private nameToExpr(name: NameParts): Expr {
    const [head, ...rest] = name.parts as [NameParts["parts"][0], ...NameParts["parts"]];
    let e = this.ident(head.token, name.leadingDot);
    // A select sits at the dot before its field, as in the reference parser.
    for (const part of rest) e = this.b.select((part.dot ?? part.token).startOffset, e, part.name);
    return e;
  }

  private ident(token: IToken, leadingDot: IToken | undefined): Expr {
    if (RESERVED.has(token.image)) {
      return this.fail("reserved_identifier", `reserved identifier: ${token.image}`, token.startOffset);
    }
    const offset = (leadingDot ?? token).startOffset;
    return this.b.ident(offset, (leadingDot ? "." : "") + token.image);
  }

  private memberCall(target: Expr, fn: string, offset: number, argList: ExprListCstNode[] | undefined): Expr {
    const args = this.args(argList);
    if (isReceiverMacro(fn, args.length))
      return this.orFail(expandReceiverMacro(this.b, offset, fn, target, args));
    return this.b.call(offset, fn, args, target);
  }

  private args(argList: ExprListCstNode[] | undefined): Expr[] {
    return argList === undefined ? [] : first(argList).children.items.map((a) => this.expr(a));
  }

  private primary(c: OperandCstChildren, sign: IToken | undefined): Expr {
    if (c.Identifier !== undefined) {
      const id = first(c.Identifier);
      const leadingDot = c.leadingDot?.[0];
      if (c.LParen === undefined) return this.ident(id, leadingDot);
      if (RESERVED.has(id.image)) {
        return this.fail("reserved_identifier", `reserved identifier: ${id.image}`, id.startOffset);
      }
      const offset = first(c.LParen).startOffset;
      const args = this.args(c.args);
      if (id.image === "has" && leadingDot === undefined && args.length === 1) {
        return this.orFail(expandHas(this.b, offset, first(args)));
      }
      return this.b.call(offset, (leadingDot ? "." : "") + id.image, args);
    }
    if (c.nested !== undefined) return this.expr(first(c.nested));
    if (c.LBracket !== undefined) {
      const items = c.listInits?.[0]?.children.items ?? [];
      const elements = items.map((item) => {
        const opt = item.children.optional;
        if (opt !== undefined)
          this.fail("unsupported_syntax", "unsupported syntax '?'", first(opt).startOffset);
        return this.expr(first(item.children.value));
      });
      return this.b.list(first(c.LBracket).startOffset, elements);
    }
    if (c.LCurly !== undefined) {
      const items = c.mapInits?.[0]?.children.items ?? [];
      const entries = items.map((item) => {
        const ic = item.children;
        if (ic.optional !== undefined)
          this.fail("unsupported_syntax", "unsupported syntax '?'", first(ic.optional).startOffset);
        const key = this.expr(first(ic.key));
        const value = this.expr(first(ic.value));
        return this.b.mapEntry(first(ic.Colon).startOffset, key, value);
      });
      return this.b.map(first(c.LCurly).startOffset, entries);
    }
    return this.literal(c, sign);
  }

  private literal(c: OperandCstChildren, sign: IToken | undefined): Expr {
    const token = literalToken(c);
    const negated = sign !== undefined;
    let decoded: Literal | LiteralError;
    switch (token.tokenType.name) {
      case "NumInt":
        decoded = decodeInt(token.image, negated);
        break;
      case "NumUInt":
        decoded = decodeUint(token.image);
        break;
      case "NumFloat":
        decoded = decodeDouble(token.image, negated);
        break;
      case "StringLit":
        decoded = decodeString(token.image);
        break;
      case "Bytes":
        decoded = decodeBytes(token.image);
        break;
      case "True":
        decoded = { type: "bool", value: true };
        break;
      case "False":
        decoded = { type: "bool", value: false };
        break;
      default:
        decoded = { type: "null" };
    }
    const offset = (sign ?? token).startOffset;
    if ("error" in decoded) {
      const code =
        decoded.error.includes("escape") || decoded.error.includes("code point")
          ? "invalid_escape"
          : "invalid_literal";
      return this.fail(code, decoded.error, decoded.at === 0 ? offset : token.startOffset + decoded.at);
    }
    return this.b.literal(offset, decoded);
  }

  private orFail(result: Expr | MacroError): Expr {
    if ("kind" in result) return result;
    return this.fail("macro", result.message, result.offset);
  }

  /** Records a diagnostic and stands a placeholder in for the node, so later errors are found too. */
  private fail(code: DiagnosticCode, message: string, offset: number): Expr {
    this.diagnostics.push({ code, message, offset });
    return this.b.ident(offset, "<error>");
  }
}

function first<T>(xs: readonly T[] | undefined): T {
  const x = xs?.[0];
  if (x === undefined) throw new Error("malformed syntax tree: missing child");
  return x;
}

function literalToken(c: OperandCstChildren): IToken {
  const t = (c.NumInt ??
    c.NumFloat ??
    c.StringLit ??
    c.NumUInt ??
    c.Bytes ??
    c.True ??
    c.False ??
    c.Null)?.[0];
  if (t === undefined) throw new Error("malformed syntax tree: empty operand");
  return t;
}

/** A primary that is a bare (optionally leading-dot) identifier starts a possible qualified name. */
function nameOf(c: OperandCstChildren): NameParts | undefined {
  if (c.Identifier === undefined || c.LParen !== undefined) return undefined;
  const token = first(c.Identifier);
  return { leadingDot: c.leadingDot?.[0], parts: [{ name: token.image, token, dot: undefined }] };
}
