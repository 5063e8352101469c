/**
 * CEL's grammar as a chevrotain parser with embedded actions: the rules call `AstActions` as they
 * recognise each construct, so the parse yields the typed AST directly and no concrete syntax tree is
 * built (measured, the CST and a pass over it cost as much again as the parse). `grammar/cel.ebnf` is the
 * same grammar on paper, and `grammar/diagrams.html` is generated from this class (`npm run grammar`).
 *
 * Binary operators are one flat list (`binary`) whose precedence the actions climb, instead of one
 * rule per level: fewer rule calls per token, and one place that knows the levels (`operators.ts`).
 * A few things the grammar accepts so that the actions can reject them with a precise message: the
 * optional-syntax markers (`a.?b`, `[?x]`), unary `!` followed by `-`, and `{…}` after any member (only a
 * qualified name may construct a message).
 *
 * Chevrotain runs every rule once with stand-in tokens to record the grammar (`performSelfAnalysis`), so
 * everything that is not grammar sits inside `ACTION`, which that recording skips.
 */
import type { IOrAlt, IParserErrorMessageProvider, IToken, TokenType } from "chevrotain";
import type { Expr, MapEntry, StructField } from "../ast.js";
import type { AstActions, OperandState, Primary } from "./build.js";
import { EmbeddedActionsParser, EOF } from "./chevrotain.js";
import {
  allTokens,
  Bang,
  BinaryOp,
  Bytes,
  Colon,
  Comma,
  Dot,
  EscIdentifier,
  False,
  Identifier,
  LBracket,
  LCurly,
  LParen,
  Minus,
  Null,
  NumFloat,
  NumInt,
  NumUInt,
  Question,
  RBracket,
  RCurly,
  RParen,
  StringLit,
  True,
} from "./tokens.js";

const NONE: readonly IToken[] = [];

function append(xs: IToken[] | undefined, x: IToken): IToken[] {
  if (xs === undefined) return [x];
  xs.push(x);
  return xs;
}

/** Raised from inside a rule when expressions nest deeper than the limit; aborts the parse. */
export class NestingLimitError extends Error {
  readonly offset: number;
  constructor(offset: number) {
    super("nesting limit");
    this.offset = offset;
  }
}

export class CelGrammar extends EmbeddedActionsParser {
  /** Maximum nesting of `expr`; set per parse. */
  private nestingLimit = 250;
  private nesting = 0;
  /** What the rules build with; set per parse. */
  private actions: AstActions | undefined;

  /**
   * `recovering` grammars re-synchronise after an error to report several; the others stop at the first
   * and are about a third faster, so `parse` tries one of those first. A recovering parse's tree is
   * never used: where it recovers, a rule returns a placeholder so the actions have something to hold.
   */
  constructor(recovering: boolean) {
    super(allTokens, {
      recoveryEnabled: recovering,
      maxLookahead: 3,
      errorMessageProvider: messages,
      skipValidations: process.env.NODE_ENV === "production",
    });
    this.performSelfAnalysis();
  }

  /** Readies the grammar for one parse of `tokens`, building through `actions`. */
  start(tokens: IToken[], actions: AstActions, nestingLimit: number): void {
    this.input = tokens;
    this.actions = actions;
    this.nestingLimit = nestingLimit;
    this.nesting = 0;
  }

  /** The actions of the parse under way; only ever called inside `ACTION` or during recovery. */
  private get act(): AstActions {
    if (this.actions === undefined) throw new Error("CelGrammar: parse without start()");
    return this.actions;
  }

  private readonly placeholder = { recoveryValueFunc: (): Expr => this.act.placeholder() };
  private readonly noItems = { recoveryValueFunc: (): never[] => [] };

  readonly expr = this.RULE(
    "expr",
    (): Expr => {
      this.ACTION(this.enterExpr);
      try {
        const condition = this.SUBRULE(this.binary);
        const branches = this.OPTION(() => {
          const question = this.CONSUME(Question);
          const then = this.SUBRULE2(this.binary);
          this.CONSUME(Colon);
          const otherwise = this.SUBRULE(this.expr);
          return { question, then, otherwise };
        });
        return this.ACTION(() =>
          branches === undefined
            ? condition
            : this.act.conditional(branches.question, condition, branches.then, branches.otherwise),
        );
      } finally {
        this.ACTION(this.leaveExpr);
      }
    },
    this.placeholder,
  );

  // Made once rather than as a closure per `expr`, the rule most often entered.
  private readonly enterExpr = (): void => {
    if (++this.nesting > this.nestingLimit) throw new NestingLimitError(this.LA(1).startOffset);
  };
  private readonly leaveExpr = (): void => {
    this.nesting--;
  };

  readonly binary = this.RULE(
    "binary",
    (): Expr => {
      const operands = [this.SUBRULE(this.operand)];
      const operators: IToken[] = [];
      this.MANY(() => {
        operators.push(this.CONSUME(BinaryOp));
        operands.push(this.SUBRULE2(this.operand));
      });
      return this.ACTION(() => this.act.binary(operands, operators));
    },
    this.placeholder,
  );

  /**
   * One operand of a binary chain: prefix operators, a primary and its suffixes. Unary, member and
   * primary are one rule (not three) because each rule call costs about as much as a token: this is the
   * parser's hottest path.
   */
  readonly operand = this.RULE(
    "operand",
    (): Expr => {
      // Most operands have no prefix: their arrays are made only when one is there.
      let bangs: IToken[] | undefined;
      let minuses: IToken[] | undefined;
      this.MANY(() => {
        bangs = append(bangs, this.CONSUME(Bang));
      });
      this.MANY2(() => {
        minuses = append(minuses, this.CONSUME(Minus));
      });
      const op = this.ACTION(() =>
        this.act.startOperand(bangs ?? NONE, minuses ?? NONE, this.LA(1)),
      ) as OperandState;
      const primary = this.OR(this.primaries);
      this.ACTION(() => this.act.primary(op, primary));
      this.MANY3(() => this.SUBRULE(this.suffix, { ARGS: [op] }));
      return this.ACTION(() => this.act.endOperand(op));
    },
    this.placeholder,
  );

  /**
   * The alternatives of an operand's primary, made once instead of on every operand (chevrotain's
   * performance guide: "caching arrays of alternatives"); none of them closes over a rule's locals.
   */
  private readonly primaries: IOrAlt<Primary>[] = [
    {
      ALT: () => {
        const leadingDot = this.OPTION(() => this.CONSUME(Dot));
        const id = this.CONSUME(Identifier);
        const call = this.OPTION2(() => {
          const open = this.CONSUME(LParen);
          this.ACTION(() => this.act.openGlobalCall(id));
          const args = this.OPTION3(() => this.SUBRULE(this.exprList)) ?? [];
          this.CONSUME(RParen);
          return this.ACTION(() => this.act.globalCall(leadingDot, id, open, args));
        });
        return call ?? this.ACTION(() => this.act.name(leadingDot, id));
      },
    },
    {
      ALT: () => {
        this.CONSUME2(LParen);
        const nested = this.SUBRULE(this.expr);
        this.CONSUME2(RParen);
        return nested;
      },
    },
    {
      ALT: () => {
        const open = this.CONSUME(LBracket);
        const items = this.OPTION4(() =>
          this.OR2([
            { ALT: () => this.SUBRULE(this.listInits) },
            { ALT: () => this.emptyAfter(this.CONSUME(Comma)) },
          ]),
        );
        this.CONSUME(RBracket);
        return this.ACTION(() => this.act.list(open, items ?? []));
      },
    },
    {
      ALT: () => {
        const open = this.CONSUME(LCurly);
        const entries = this.OPTION5(() =>
          this.OR3([
            { ALT: () => this.SUBRULE(this.mapInits) },
            { ALT: () => this.emptyAfter(this.CONSUME2(Comma)) },
          ]),
        );
        this.CONSUME(RCurly);
        return this.ACTION(() => this.act.map(open, entries ?? []));
      },
    },
    { ALT: () => this.CONSUME(NumFloat) },
    { ALT: () => this.CONSUME(NumUInt) },
    { ALT: () => this.CONSUME(NumInt) },
    { ALT: () => this.CONSUME(StringLit) },
    { ALT: () => this.CONSUME(Bytes) },
    { ALT: () => this.CONSUME(True) },
    { ALT: () => this.CONSUME(False) },
    { ALT: () => this.CONSUME(Null) },
  ];

  /** One suffix of the operand `op`: a field, a method call, an index or a message construction. */
  readonly suffix = this.RULE("suffix", (op: OperandState): void => {
    this.OR([
      {
        ALT: () => {
          const dot = this.CONSUME(Dot);
          const optional = this.OPTION(() => this.CONSUME(Question));
          this.ACTION(() => this.act.dot(op, dot, optional));
          this.OR2([
            {
              ALT: () => {
                const id = this.CONSUME(Identifier);
                const called = this.OPTION2(() => {
                  const open = this.CONSUME(LParen);
                  this.ACTION(() => this.act.openMemberCall(op));
                  const args = this.OPTION3(() => this.SUBRULE(this.exprList)) ?? [];
                  this.CONSUME(RParen);
                  this.ACTION(() => this.act.memberCall(op, id, open, args));
                  return true;
                });
                if (called === undefined) this.ACTION(() => this.act.field(op, dot, id));
              },
            },
            {
              ALT: () => {
                const id = this.CONSUME(EscIdentifier);
                this.ACTION(() => this.act.escapedField(op, dot, id));
              },
            },
          ]);
        },
      },
      {
        ALT: () => {
          const open = this.CONSUME(LBracket);
          const optional = this.OPTION4(() => this.CONSUME2(Question));
          this.ACTION(() => this.act.openIndex(op, open, optional));
          const index = this.SUBRULE(this.expr);
          this.CONSUME(RBracket);
          this.ACTION(() => this.act.index(op, open, index));
        },
      },
      {
        ALT: () => {
          const open = this.CONSUME(LCurly);
          this.ACTION(() => this.act.openStruct(op, open));
          const fields = this.OPTION5(() =>
            this.OR3([
              { ALT: () => this.SUBRULE(this.fieldInits) },
              { ALT: () => this.emptyAfter(this.CONSUME(Comma)) },
            ]),
          );
          this.CONSUME(RCurly);
          this.ACTION(() => this.act.struct(op, open, fields ?? []));
        },
      },
    ]);
  });

  readonly exprList = this.RULE(
    "exprList",
    (): Expr[] => {
      const items = [this.SUBRULE(this.expr)];
      this.MANY(() => {
        this.CONSUME(Comma);
        items.push(this.SUBRULE2(this.expr));
      });
      return items;
    },
    this.noItems,
  );

  /** Items with an optional trailing comma; the comma is decided here, where two tokens of lookahead see it. */
  readonly listInits = this.RULE(
    "listInits",
    (): Expr[] => {
      const items = [this.SUBRULE(this.listElement)];
      this.MANY(() => {
        this.CONSUME(Comma);
        items.push(this.SUBRULE2(this.listElement));
      });
      this.OPTION(() => this.CONSUME2(Comma));
      return items;
    },
    this.noItems,
  );

  readonly listElement = this.RULE(
    "listElement",
    (): Expr => {
      const optional = this.OPTION(() => this.CONSUME(Question));
      this.ACTION(() => this.act.optionalMarker(optional));
      return this.SUBRULE(this.expr);
    },
    this.placeholder,
  );

  /** Items with an optional trailing comma; the comma is decided here, where two tokens of lookahead see it. */
  readonly mapInits = this.RULE(
    "mapInits",
    (): MapEntry[] => {
      const items = [this.SUBRULE(this.mapEntry)];
      this.MANY(() => {
        this.CONSUME(Comma);
        items.push(this.SUBRULE2(this.mapEntry));
      });
      this.OPTION(() => this.CONSUME2(Comma));
      return items;
    },
    this.noItems,
  );

  readonly mapEntry = this.RULE(
    "mapEntry",
    (): MapEntry => {
      const optional = this.OPTION(() => this.CONSUME(Question));
      this.ACTION(() => this.act.optionalMarker(optional));
      const key = this.SUBRULE(this.expr);
      const colon = this.CONSUME(Colon);
      const value = this.SUBRULE2(this.expr);
      return this.ACTION(() => this.act.mapEntry(colon, key, value));
    },
    { recoveryValueFunc: () => this.act.placeholderEntry() },
  );

  /** Items with an optional trailing comma; the comma is decided here, where two tokens of lookahead see it. */
  readonly fieldInits = this.RULE(
    "fieldInits",
    (): StructField[] => {
      const items = [this.SUBRULE(this.fieldInit)];
      this.MANY(() => {
        this.CONSUME(Comma);
        items.push(this.SUBRULE2(this.fieldInit));
      });
      this.OPTION(() => this.CONSUME2(Comma));
      return items;
    },
    this.noItems,
  );

  readonly fieldInit = this.RULE(
    "fieldInit",
    (): StructField => {
      const optional = this.OPTION(() => this.CONSUME(Question));
      this.ACTION(() => this.act.optionalMarker(optional));
      const name = this.OR([
        { ALT: () => this.CONSUME(Identifier) },
        { ALT: () => this.CONSUME(EscIdentifier) },
      ]);
      const colon = this.CONSUME(Colon);
      const value = this.SUBRULE(this.expr);
      return this.ACTION(() => this.act.fieldInit(name, colon, value));
    },
    { recoveryValueFunc: () => this.act.placeholderField() },
  );

  /** No items, after a lone comma where items may stand (`[,]` is an empty list, as in the reference grammar). */
  private emptyAfter(_comma: IToken): never[] {
    return [];
  }
}

const shown = (t: IToken): string => (t.tokenType === EOF ? "<EOF>" : `'${t.image}'`);
const label = (t: TokenType): string => (t === EOF ? "<EOF>" : (t.LABEL ?? t.name));
const oneOf = (paths: TokenType[][][]): string => {
  const firsts = [...new Set(paths.flat().map((path) => (path[0] === undefined ? "<EOF>" : label(path[0]))))];
  return firsts.length === 1 ? (firsts[0] as string) : `{${firsts.join(", ")}}`;
};

/** Messages in the reference parser's words, so both read alike in a rule author's terminal. */
const messages: IParserErrorMessageProvider = {
  buildMismatchTokenMessage: ({ expected, actual }) =>
    `Syntax error: mismatched input ${shown(actual)} expecting ${label(expected)}`,
  buildNotAllInputParsedMessage: ({ firstRedundant }) =>
    `Syntax error: mismatched input ${shown(firstRedundant)} expecting <EOF>`,
  buildNoViableAltMessage: ({ expectedPathsPerAlt, actual }) =>
    `Syntax error: mismatched input ${shown(actual[0] as IToken)} expecting ${oneOf(expectedPathsPerAlt)}`,
  buildEarlyExitMessage: ({ expectedIterationPaths, actual }) =>
    `Syntax error: mismatched input ${shown(actual[0] as IToken)} expecting ${oneOf([expectedIterationPaths])}`,
};
