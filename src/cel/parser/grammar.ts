/**
 * CEL's grammar as a chevrotain CST parser. `grammar/cel.ebnf` is the same grammar on paper, and
 * `grammar/cst.d.ts` and `grammar/diagrams.html` are generated from this class (`npm run grammar`).
 *
 * Binary operators are one flat list (`binary`) whose precedence the AST builder climbs, instead of one
 * rule per level: fewer rule calls per token, and one place that knows the levels (`operators.ts`).
 * A few things the grammar accepts so that the builder can reject them with a precise message: the
 * optional-syntax markers (`a.?b`, `[?x]`), unary `!` followed by `-`, and `{…}` after any member (only a
 * qualified name may construct a message).
 */
import { CstParser, EOF, type IParserErrorMessageProvider, type IToken, type TokenType } from "chevrotain";
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

/** Raised from inside a rule when expressions nest deeper than the limit; aborts the parse. */
export class NestingLimitError extends Error {
  readonly offset: number;
  constructor(offset: number) {
    super("nesting limit");
    this.offset = offset;
  }
}

export class CelGrammar extends CstParser {
  /** Maximum nesting of `expr`; set per parse. */
  nestingLimit = 250;
  private nesting = 0;

  /**
   * `recovering` grammars re-synchronise after an error to report several; the others stop at the first
   * and are about a third faster, so `parse` tries one of those first.
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

  resetNesting(): void {
    this.nesting = 0;
  }

  readonly expr = this.RULE("expr", () => {
    this.ACTION(() => {
      if (++this.nesting > this.nestingLimit) throw new NestingLimitError(this.LA(1).startOffset);
    });
    try {
      this.SUBRULE(this.binary, { LABEL: "condition" });
      this.OPTION(() => {
        this.CONSUME(Question);
        this.SUBRULE2(this.binary, { LABEL: "then" });
        this.CONSUME(Colon);
        this.SUBRULE(this.expr, { LABEL: "else" });
      });
    } finally {
      this.ACTION(() => {
        this.nesting--;
      });
    }
  });

  readonly binary = this.RULE("binary", () => {
    this.SUBRULE(this.operand, { LABEL: "operands" });
    this.MANY(() => {
      this.CONSUME(BinaryOp, { LABEL: "operators" });
      this.SUBRULE2(this.operand, { LABEL: "operands" });
    });
  });

  /**
   * One operand of a binary chain: prefix operators, a primary and its suffixes. Unary, member and
   * primary are one rule (not three) because each rule call costs about as much as a token: this is the
   * parser's hottest path.
   */
  readonly operand = this.RULE("operand", () => {
    this.MANY(() => this.CONSUME(Bang));
    this.MANY2(() => this.CONSUME(Minus));
    this.OR([
      {
        ALT: () => {
          this.OPTION(() => this.CONSUME(Dot, { LABEL: "leadingDot" }));
          this.CONSUME(Identifier);
          this.OPTION2(() => {
            this.CONSUME(LParen);
            this.OPTION3(() => this.SUBRULE(this.exprList, { LABEL: "args" }));
            this.CONSUME(RParen);
          });
        },
      },
      {
        ALT: () => {
          this.CONSUME2(LParen, { LABEL: "nestedOpen" });
          this.SUBRULE(this.expr, { LABEL: "nested" });
          this.CONSUME2(RParen);
        },
      },
      {
        ALT: () => {
          this.CONSUME(LBracket);
          this.OPTION4(() =>
            this.OR2([{ ALT: () => this.SUBRULE(this.listInits) }, { ALT: () => this.CONSUME(Comma) }]),
          );
          this.CONSUME(RBracket);
        },
      },
      {
        ALT: () => {
          this.CONSUME(LCurly);
          this.OPTION5(() =>
            this.OR3([{ ALT: () => this.SUBRULE(this.mapInits) }, { ALT: () => this.CONSUME2(Comma) }]),
          );
          this.CONSUME(RCurly);
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
    ]);
    this.MANY3(() => this.SUBRULE(this.suffix));
  });

  readonly suffix = this.RULE("suffix", () => {
    this.OR([
      {
        ALT: () => {
          this.CONSUME(Dot);
          this.OPTION(() => this.CONSUME(Question, { LABEL: "optional" }));
          this.OR2([
            {
              ALT: () => {
                this.CONSUME(Identifier);
                this.OPTION2(() => {
                  this.CONSUME(LParen);
                  this.OPTION3(() => this.SUBRULE(this.exprList, { LABEL: "args" }));
                  this.CONSUME(RParen);
                });
              },
            },
            { ALT: () => this.CONSUME(EscIdentifier) },
          ]);
        },
      },
      {
        ALT: () => {
          this.CONSUME(LBracket);
          this.OPTION4(() => this.CONSUME2(Question, { LABEL: "optional" }));
          this.SUBRULE(this.expr, { LABEL: "index" });
          this.CONSUME(RBracket);
        },
      },
      {
        ALT: () => {
          this.CONSUME(LCurly);
          this.OPTION5(() =>
            this.OR3([{ ALT: () => this.SUBRULE(this.fieldInits) }, { ALT: () => this.CONSUME(Comma) }]),
          );
          this.CONSUME(RCurly);
        },
      },
    ]);
  });

  readonly exprList = this.RULE("exprList", () => {
    this.SUBRULE(this.expr, { LABEL: "items" });
    this.MANY(() => {
      this.CONSUME(Comma);
      this.SUBRULE2(this.expr, { LABEL: "items" });
    });
  });

  /** Items with an optional trailing comma; the comma is decided here, where two tokens of lookahead see it. */
  readonly listInits = this.RULE("listInits", () => {
    this.SUBRULE(this.listElement, { LABEL: "items" });
    this.MANY(() => {
      this.CONSUME(Comma);
      this.SUBRULE2(this.listElement, { LABEL: "items" });
    });
    this.OPTION(() => this.CONSUME2(Comma, { LABEL: "trailingComma" }));
  });

  readonly listElement = this.RULE("listElement", () => {
    this.OPTION(() => this.CONSUME(Question, { LABEL: "optional" }));
    this.SUBRULE(this.expr, { LABEL: "value" });
  });

  /** Items with an optional trailing comma; the comma is decided here, where two tokens of lookahead see it. */
  readonly mapInits = this.RULE("mapInits", () => {
    this.SUBRULE(this.mapEntry, { LABEL: "items" });
    this.MANY(() => {
      this.CONSUME(Comma);
      this.SUBRULE2(this.mapEntry, { LABEL: "items" });
    });
    this.OPTION(() => this.CONSUME2(Comma, { LABEL: "trailingComma" }));
  });

  readonly mapEntry = this.RULE("mapEntry", () => {
    this.OPTION(() => this.CONSUME(Question, { LABEL: "optional" }));
    this.SUBRULE(this.expr, { LABEL: "key" });
    this.CONSUME(Colon);
    this.SUBRULE2(this.expr, { LABEL: "value" });
  });

  /** Items with an optional trailing comma; the comma is decided here, where two tokens of lookahead see it. */
  readonly fieldInits = this.RULE("fieldInits", () => {
    this.SUBRULE(this.fieldInit, { LABEL: "items" });
    this.MANY(() => {
      this.CONSUME(Comma);
      this.SUBRULE2(this.fieldInit, { LABEL: "items" });
    });
    this.OPTION(() => this.CONSUME2(Comma, { LABEL: "trailingComma" }));
  });

  readonly fieldInit = this.RULE("fieldInit", () => {
    this.OPTION(() => this.CONSUME(Question, { LABEL: "optional" }));
    this.OR([{ ALT: () => this.CONSUME(Identifier) }, { ALT: () => this.CONSUME(EscIdentifier) }]);
    this.CONSUME(Colon);
    this.SUBRULE(this.expr, { LABEL: "value" });
  });
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
