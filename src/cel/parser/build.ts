/**
 * The grammar's semantic actions: they build the typed AST while the parser runs, so no concrete syntax
 * tree is ever made. They climb operator precedence over the flat `binary` lists, balance `&&`/`||`
 * chains as the reference parser does, fold a single `-` into a numeric literal, expand macros, and
 * reject what the grammar let through only to name it precisely.
 *
 * The parser calls them in source order, and they build nodes and report diagnostics in exactly that
 * order. Where a construct is rejected, the rest of it is still parsed, but nothing inside it reports:
 * `a.?b(c.?d)` has one diagnostic, for the first `.?`, as a rule author would expect.
 */
import type { IToken, TokenType } from "chevrotain";
import type { AstBuilder, Expr, Literal, MapEntry, StructField } from "../ast.js";
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
import {
  AndAnd,
  Bytes,
  EqEq,
  EscIdentifier,
  False,
  Greater,
  GreaterEq,
  In,
  Less,
  LessEq,
  Minus,
  NotEq,
  NumFloat,
  NumInt,
  NumUInt,
  OrOr,
  Percent,
  Plus,
  Slash,
  Star,
  StringLit,
  True,
} from "./tokens.js";

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

/** Each binary operator token's function and precedence, keyed by the token type (not its name): hot. */
const BINARY_BY_TOKEN: ReadonlyMap<TokenType, { readonly fn: BinaryOperator; readonly precedence: number }> =
  new Map(
    (
      [
        [OrOr, Op.logicalOr],
        [AndAnd, Op.logicalAnd],
        [EqEq, Op.equals],
        [NotEq, Op.notEquals],
        [Less, Op.less],
        [LessEq, Op.lessEquals],
        [Greater, Op.greater],
        [GreaterEq, Op.greaterEquals],
        [In, Op.in],
        [Plus, Op.add],
        [Minus, Op.subtract],
        [Star, Op.multiply],
        [Slash, Op.divide],
        [Percent, Op.modulo],
      ] as const
    ).map(([token, fn]) => [token, { fn, precedence: BINARY_PRECEDENCE[fn] }]),
  );

const LOWEST_BINARY = 1;
const HIGHEST_BINARY = 5;

/** A member expression that is still a plain qualified name, which `{…}` may turn into a type name. */
export interface NameParts {
  readonly leadingDot: IToken | undefined;
  /** Each part with the dot before it (none for the first). */
  readonly parts: { readonly name: string; readonly token: IToken; readonly dot: IToken | undefined }[];
}

/**
 * What a primary alternative hands over: a built expression, a name its suffixes may still extend, or a
 * literal token, decoded once the operand's sign is known.
 */
export type Primary = Expr | NameParts | IToken;

/** One operand while its suffixes are parsed: `!`/`-` prefixes, the expression so far or a pending name. */
export interface OperandState {
  readonly bangs: readonly IToken[];
  readonly minuses: readonly IToken[];
  /** The lone `-` folded into a numeric literal primary. */
  readonly sign: IToken | undefined;
  /** The operand's value, once rejected as a whole (`!-x`): the rest of it builds nothing. */
  readonly rejected: Expr | undefined;
  /** The members were rejected (`a.?b`): later suffixes build nothing, the prefixes still apply. */
  skipping: boolean;
  name: NameParts | undefined;
  e: Expr | undefined;
}

export class AstActions {
  readonly diagnostics: Diagnostic[] = [];
  /** Rejected constructs being parsed; diagnostics inside them are not reported. */
  private muted = 0;

  constructor(private readonly b: AstBuilder) {}

  /** Stands in for a node the parser recovered over; only a recovering parse, whose tree is dropped, sees it. */
  placeholder(): Expr {
    return this.b.ident(0, "<error>");
  }

  placeholderEntry(): MapEntry {
    return this.b.mapEntry(0, this.placeholder(), this.placeholder());
  }

  placeholderField(): StructField {
    return this.b.structField(0, "<error>", this.placeholder());
  }

  conditional(question: IToken, condition: Expr, then: Expr, otherwise: Expr): Expr {
    return this.b.call(question.startOffset, Op.conditional, [condition, then, otherwise]);
  }

  binary(operands: readonly Expr[], operators: readonly IToken[]): Expr {
    if (operators.length === 0) return operands[0] as Expr;
    let next = 0;
    const fnOf = (t: IToken): BinaryOperator =>
      (BINARY_BY_TOKEN.get(t.tokenType) as { fn: BinaryOperator }).fn;
    const precedenceAt = (i: number): number => {
      const t = operators[i];
      return t === undefined ? 0 : (BINARY_BY_TOKEN.get(t.tokenType)?.precedence ?? 0);
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
        return ops.length === 0 ? left : this.balance(fnOf(ops[0] as IToken), terms, ops);
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

  /**
   * An operand's prefixes are read; `next` is the token its primary starts with. A lone `-` before a
   * number is part of the literal (so -9223372036854775808 exists); an even run of `-` or `!` cancels
   * out, as in the reference parser; `!` followed by `-` is rejected.
   */
  startOperand(bangs: readonly IToken[], minuses: readonly IToken[], next: IToken): OperandState {
    const numeric = next.tokenType === NumInt || next.tokenType === NumFloat;
    const signedLiteral = minuses.length === 1 && numeric;
    let rejected: Expr | undefined;
    if (bangs.length > 0 && minuses.length > 0 && !signedLiteral) {
      rejected = this.fail(
        "syntax",
        `Syntax error: mismatched input '-' after '!'`,
        (minuses[0] as IToken).startOffset,
      );
      this.muted++;
    }
    return {
      bangs,
      minuses,
      sign: signedLiteral ? minuses[0] : undefined,
      rejected,
      skipping: false,
      name: undefined,
      e: undefined,
    };
  }

  primary(op: OperandState, p: Primary): void {
    if (op.rejected !== undefined) return;
    if ("tokenType" in p) op.e = this.literal(p, op.sign);
    else if ("parts" in p) op.name = p;
    else op.e = p;
  }

  endOperand(op: OperandState): Expr {
    if (op.rejected !== undefined) {
      this.muted--;
      return op.rejected;
    }
    if (op.skipping) this.muted--;
    let e = op.e ?? this.materialize(op);
    const minus = op.minuses[0];
    if (op.sign === undefined && op.minuses.length % 2 === 1 && minus !== undefined)
      e = this.b.call(minus.startOffset, Op.negate, [e]);
    const bang = op.bangs[0];
    if (op.bangs.length % 2 === 1 && bang !== undefined)
      e = this.b.call(bang.startOffset, Op.logicalNot, [e]);
    return e;
  }

  /** A bare (optionally leading-dot) identifier starts a possible qualified name. */
  name(leadingDot: IToken | undefined, token: IToken): NameParts {
    return { leadingDot, parts: [{ name: token.image, token, dot: undefined }] };
  }

  /** `f(`: the arguments that follow are not reported on when `f` is reserved (the call is rejected). */
  openGlobalCall(id: IToken): void {
    if (RESERVED.has(id.image)) {
      this.fail("reserved_identifier", `reserved identifier: ${id.image}`, id.startOffset);
      this.muted++;
    }
  }

  globalCall(leadingDot: IToken | undefined, id: IToken, open: IToken, args: Expr[]): Expr {
    if (RESERVED.has(id.image)) {
      this.muted--;
      return this.b.ident(id.startOffset, "<error>");
    }
    if (id.image === "has" && leadingDot === undefined && args.length === 1) {
      return this.orFail(expandHas(this.b, open.startOffset, args[0] as Expr));
    }
    return this.b.call(open.startOffset, (leadingDot ? "." : "") + id.image, args);
  }

  /** `.` or `.?` after a member; `.?` rejects the rest of the operand. */
  dot(op: OperandState, dot: IToken, optional: IToken | undefined): void {
    if (optional !== undefined) this.skip(op, "unsupported syntax '.?'", dot.startOffset);
  }

  /** `.f` with no call: one more part of a pending name, or a field selection. */
  field(op: OperandState, dot: IToken, id: IToken): void {
    if (op.skipping || op.rejected !== undefined) return;
    if (op.name !== undefined) op.name.parts.push({ name: id.image, token: id, dot });
    else op.e = this.b.select(dot.startOffset, op.e as Expr, id.image);
  }

  /** ``.`f` ``: always a field selection, never part of a name. */
  escapedField(op: OperandState, dot: IToken, id: IToken): void {
    if (op.skipping || op.rejected !== undefined) return;
    op.e = this.b.select(dot.startOffset, this.target(op), id.image.slice(1, -1));
  }

  /** `.f(`: the member so far is the call's target, built before its arguments. */
  openMemberCall(op: OperandState): void {
    if (op.skipping || op.rejected !== undefined) return;
    this.target(op);
  }

  memberCall(op: OperandState, id: IToken, open: IToken, args: Expr[]): void {
    if (op.skipping || op.rejected !== undefined) return;
    const target = op.e as Expr;
    const fn = id.image;
    op.e = isReceiverMacro(fn, args.length)
      ? this.orFail(expandReceiverMacro(this.b, open.startOffset, fn, target, args))
      : this.b.call(open.startOffset, fn, args, target);
  }

  /** `[` or `[?`: the member so far is indexed, and built before the index. */
  openIndex(op: OperandState, open: IToken, optional: IToken | undefined): void {
    if (optional !== undefined) this.skip(op, "unsupported syntax '[?'", open.startOffset);
    if (op.skipping || op.rejected !== undefined) return;
    this.target(op);
  }

  index(op: OperandState, open: IToken, index: Expr): void {
    if (op.skipping || op.rejected !== undefined) return;
    op.e = this.b.call(open.startOffset, Op.index, [op.e as Expr, index]);
  }

  /** `{` after a member: message construction, which needs a qualified name before it. */
  openStruct(op: OperandState, open: IToken): void {
    if (op.skipping || op.rejected !== undefined) return;
    if (op.name === undefined) {
      op.e = this.fail(
        "syntax",
        "Syntax error: message construction needs a type name before '{'",
        open.startOffset,
      );
      this.muted++;
    }
  }

  struct(op: OperandState, open: IToken, fields: StructField[]): void {
    if (op.skipping || op.rejected !== undefined) return;
    const name = op.name;
    if (name === undefined) {
      this.muted--;
      return;
    }
    const typeName = (name.leadingDot ? "." : "") + name.parts.map((p) => p.name).join(".");
    op.e = this.b.struct(open.startOffset, typeName, fields);
    op.name = undefined;
  }

  /** `?` before a list element, map entry or field initializer. */
  optionalMarker(marker: IToken | undefined): void {
    if (marker !== undefined) this.fail("unsupported_syntax", "unsupported syntax '?'", marker.startOffset);
  }

  list(open: IToken, elements: readonly Expr[]): Expr {
    return this.b.list(open.startOffset, elements);
  }

  map(open: IToken, entries: readonly MapEntry[]): Expr {
    return this.b.map(open.startOffset, entries);
  }

  mapEntry(colon: IToken, key: Expr, value: Expr): MapEntry {
    return this.b.mapEntry(colon.startOffset, key, value);
  }

  fieldInit(name: IToken, colon: IToken, value: Expr): StructField {
    const field = name.tokenType === EscIdentifier ? name.image.slice(1, -1) : name.image;
    return this.b.structField(colon.startOffset, field, value);
  }

  /** Rejects the rest of an operand's members; only the first rejection reports. */
  private skip(op: OperandState, message: string, offset: number): void {
    if (op.skipping || op.rejected !== undefined) return;
    op.e = this.fail("unsupported_syntax", message, offset);
    op.skipping = true;
    this.muted++;
  }

  /** The member so far as an expression, turning a pending name into identifier and selects. */
  private target(op: OperandState): Expr {
    if (op.e === undefined) op.e = this.materialize(op);
    return op.e;
  }

  private materialize(op: OperandState): Expr {
    const name = op.name as NameParts;
    op.name = undefined;
    const parts = name.parts;
    let e = this.ident((parts[0] as NameParts["parts"][0]).token, name.leadingDot);
    // A select sits at the dot before its field, as in the reference parser.
    for (let i = 1; i < parts.length; i++) {
      const part = parts[i] as NameParts["parts"][0];
      e = this.b.select((part.dot ?? part.token).startOffset, e, part.name);
    }
    return e;
  }

  private ident(token: IToken, leadingDot: IToken | undefined): Expr {
    if (RESERVED.has(token.image)) {
      return this.fail("reserved_identifier", `reserved identifier: ${token.image}`, token.startOffset);
    }
    const offset = (leadingDot ?? token).startOffset;
    return this.b.ident(offset, (leadingDot ? "." : "") + token.image);
  }

  private literal(token: IToken, sign: IToken | undefined): Expr {
    const negated = sign !== undefined;
    let decoded: Literal | LiteralError;
    switch (token.tokenType) {
      case NumInt:
        decoded = decodeInt(token.image, negated);
        break;
      case NumUInt:
        decoded = decodeUint(token.image);
        break;
      case NumFloat:
        decoded = decodeDouble(token.image, negated);
        break;
      case StringLit:
        decoded = decodeString(token.image);
        break;
      case Bytes:
        decoded = decodeBytes(token.image);
        break;
      case True:
        decoded = { type: "bool", value: true };
        break;
      case False:
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
    if (this.muted === 0) this.diagnostics.push({ code, message, offset });
    return this.b.ident(offset, "<error>");
  }
}
