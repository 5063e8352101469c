/**
 * What one journal row comes to (SPEC-0029 REQ-7 to REQ-13): its fires, each rule's evaluation, the
 * holds it released and the state ops it emitted. `evaluate` returns it; the live evaluator commits it
 * and acts on it, backtest and lint fold it. Types only, so every module that reads an outcome depends
 * on this one and not on the evaluator.
 */
import type { JournalRow } from "./journal.js";
import type { Level } from "./rule-file.js";
import type { StateOp } from "./state.js";
import type { ResolvedTarget } from "./targets.js";
import type { IndexedField, Selector } from "./window.js";

export type Mode = "shadow" | "active";
export type Action = "none" | "annotate" | "notify" | "hold" | "stop" | "no_target" | "target_gone";

/** One primitive call of an evaluation, with its arguments and result, for explain. */
export interface PrimitiveCall {
  readonly fn: "count" | "distinct" | "exists";
  readonly field?: IndexedField;
  readonly selector: Selector;
  readonly withinMs: number;
  readonly result: number | boolean;
}

export interface Fire {
  readonly id: string;
  readonly rule: string;
  readonly hash: string;
  readonly seq: number;
  readonly at: number;
  readonly kind: JournalRow["kind"];
  readonly type: string;
  readonly target: ResolvedTarget | undefined;
  readonly declaredLevel: Level;
  readonly effectiveLevel: Level;
  readonly mode: Mode;
  readonly action: Action;
  /** For a stop: the run it stops, the target run or, for a harness target, the harness's run in flight. */
  readonly stopRun?: string;
  readonly message: string;
  readonly primitives: readonly PrimitiveCall[];
}

export type EvaluationResult =
  | "false"
  | "fired"
  | "suppressed"
  | "eval_error"
  | "store_error"
  | "cost_exceeded";

export interface RuleEvaluation {
  readonly rule: string;
  readonly hash: string;
  readonly result: EvaluationResult;
  /** For eval_error and store_error: the error; for suppressed: the fire whose cooldown held it. */
  readonly detail?: string;
}

export interface RowOutcome {
  readonly fires: readonly Fire[];
  readonly evaluations: readonly RuleEvaluation[];
  readonly releases: readonly {
    readonly harness: string;
    readonly rule: string;
    readonly cause: "condition_cleared";
  }[];
  readonly delta: readonly StateOp[];
}
