/**
 * A `Program`: an expression parsed, checked and compiled once, immutable, run many times. The only thing
 * the rules core runs.
 */
import type { Ast } from "./ast.js";
import { type CheckedAst, check, resolveUnchecked } from "./check/checker.js";
import type { Validator } from "./check/validators.js";
import { compileChecked } from "./compile/compiler.js";
import { type Activation, CostLimitExceeded, type Frame, type Node } from "./compile/frame.js";
import { estimateCost } from "./cost/estimate.js";
import type { Range } from "./cost/range.js";
import type { Diagnostic } from "./diagnostics.js";
import type { Env } from "./env.js";
import { type ParseOptions, parse } from "./parser/parse.js";
import { CelError, type Result, type Value } from "./runtime/values.js";
import type { Source } from "./source.js";
import { formatType, type Type, typeEquals } from "./types.js";

export type Evaluation =
  | { readonly kind: "value"; readonly value: Value; readonly cost: number }
  | { readonly kind: "error"; readonly error: CelError; readonly cost: number }
  | { readonly kind: "cost_exceeded"; readonly cost: number; readonly limit: number };

const NO_SLOTS: Value[] = [];
const NO_VARS: Activation = {};

/** What `evaluateValue` gives for an evaluation stopped by its cost limit. */
export const COST_EXCEEDED: unique symbol = Symbol("cost_exceeded");

type SpareFrame = { vars: Activation; slots: Value[]; cost: number; limit: number };

export class Program {
  private estimate: Range | undefined;
  /**
   * The frame evaluations reuse: the rules core evaluates every program on every row, and a frame made
   * per evaluation was most of what it allocated. An evaluation that finds it taken (none can today: a
   * program never runs itself) makes its own.
   */
  private spare: SpareFrame | undefined;

  constructor(
    readonly checked: CheckedAst,
    private readonly env: Env,
    private readonly node: Node,
    private readonly slots: number,
  ) {}

  get resultType(): Type {
    return this.checked.resultType;
  }

  /** The static bound on what one evaluation can charge, for inputs within the declared sizes. */
  estimateCost(): Range {
    this.estimate ??= estimateCost(this.checked, this.env);
    return this.estimate;
  }

  /** Runs the program over `vars`; stops with `cost_exceeded` once it has charged more than `costLimit`. */
  evaluate(vars: Activation, costLimit = Number.POSITIVE_INFINITY): Evaluation {
    const frame = this.frame(vars, costLimit);
    try {
      const v = this.node(frame);
      return v instanceof CelError
        ? { kind: "error", error: v, cost: frame.cost }
        : { kind: "value", value: v, cost: frame.cost };
    } catch (e) {
      if (e instanceof CostLimitExceeded) return { kind: "cost_exceeded", cost: e.cost, limit: e.limit };
      throw e;
    } finally {
      this.release(frame);
    }
  }

  /** `evaluate` for a caller that needs only the value: no record of the evaluation is made. */
  evaluateValue(vars: Activation, costLimit = Number.POSITIVE_INFINITY): Result | typeof COST_EXCEEDED {
    const frame = this.frame(vars, costLimit);
    try {
      return this.node(frame);
    } catch (e) {
      if (e instanceof CostLimitExceeded) return COST_EXCEEDED;
      throw e;
    } finally {
      this.release(frame);
    }
  }

  private frame(vars: Activation, limit: number): Frame {
    const spare = this.spare;
    if (spare === undefined)
      // Slots are written only by comprehensions; a program without one shares an empty array.
      return { vars, slots: this.slots === 0 ? NO_SLOTS : new Array(this.slots), cost: 0, limit };
    this.spare = undefined;
    spare.vars = vars;
    spare.cost = 0;
    spare.limit = limit;
    return spare;
  }

  /** The frame back as the spare, holding on to nothing of its evaluation's variables. */
  private release(frame: Frame): void {
    const spare = frame as SpareFrame;
    spare.vars = NO_VARS;
    this.spare = spare;
  }
}

export type CompileResult =
  | { readonly ok: true; readonly program: Program }
  | {
      readonly ok: false;
      readonly stage: "parse" | "check" | "compile";
      readonly source: Source;
      readonly errors: readonly Diagnostic[];
    };

export interface CompileOptions extends ParseOptions {
  /** The type the expression must have (a rule's `when` must be `bool`). */
  readonly resultType?: Type;
  /** Checks on the checked tree (nesting limits, the rules core's literal rules). */
  readonly validators?: readonly Validator[];
}

/** Source text to a `Program`, stopping at the first phase that reports errors. */
export function compile(text: string, env: Env, options: CompileOptions = {}): CompileResult {
  const parsed = parse(text, options);
  if (!parsed.ok) return { ok: false, stage: "parse", source: parsed.source, errors: parsed.errors };
  return compileAst(parsed.ast, env, options);
}

export function compileAst(
  ast: Ast,
  env: Env,
  options: Omit<CompileOptions, keyof ParseOptions> = {},
): CompileResult {
  const checked = check(ast, env);
  if (!checked.ok) return { ok: false, stage: "check", source: ast.source, errors: checked.errors };
  const actual = checked.checked.resultType;
  const { resultType } = options;
  if (resultType !== undefined && !typeEquals(actual, resultType) && actual.kind !== "dyn") {
    const message = `expected type '${formatType(resultType)}' but found '${formatType(actual)}'`;
    return { ok: false, stage: "check", source: ast.source, errors: [{ code: "check", message, offset: 0 }] };
  }
  const invalid = (options.validators ?? []).flatMap((v) => v(checked.checked));
  if (invalid.length > 0) return { ok: false, stage: "check", source: ast.source, errors: invalid };
  const compiled = compileChecked(checked.checked, env);
  if (!compiled.ok) return { ok: false, stage: "compile", source: ast.source, errors: compiled.errors };
  return {
    ok: true,
    program: new Program(checked.checked, env, compiled.compiled.node, compiled.compiled.slots),
  };
}

/** A program compiled without type checking: every value is dispatched at run time. */
export function compileUnchecked(ast: Ast, env: Env): CompileResult {
  const checked = resolveUnchecked(ast, env);
  const compiled = compileChecked(checked, env);
  if (!compiled.ok) return { ok: false, stage: "compile", source: ast.source, errors: compiled.errors };
  return { ok: true, program: new Program(checked, env, compiled.compiled.node, compiled.compiled.slots) };
}
