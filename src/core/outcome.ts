/**
 * What one journal row comes to (SPEC-0029 REQ-7 to REQ-13): its fires, each with the actions it asks
 * for, each rule's evaluation, the holds it released and the state ops it emitted. `evaluate` returns
 * it; the live evaluator commits it and then carries the actions out, backtest and lint fold it. Types
 * only, so every module that reads an outcome depends on this one and not on the evaluator.
 */
import type { JournalRow } from "./journal.js";
import type { Level } from "./rule-file.js";
import type { ReleaseCause, StateOp } from "./state.js";
import type { ResolvedTarget } from "./targets.js";
import type { IndexedField, Selector } from "./window.js";

export type Mode = "shadow" | "active";
/** What the fire log records a fire did, in one word: its strongest action, or why it took none. */
export type Action = "none" | "annotate" | "notify" | "hold" | "stop" | "no_target" | "target_gone";

/** Attaches the fire's annotation to the target's graph node; written in the fire's own commit. */
export interface AnnotateAction {
  readonly kind: "annotate";
  readonly node: string;
}
/** Delivers rule_fired to the notify hook, after the commit. */
export interface NotifyAction {
  readonly kind: "notify";
}
/** Holds the harness: placed by the fire's `hold` state op, announced after the commit. */
export interface HoldAction {
  readonly kind: "hold";
  readonly harness: string;
}
/**
 * Stops the harness's run in flight through the supervisor, after the commit; or, with `sessions`, the
 * hook-fed runs it names, each at its next hook call (`hook-runs.ts`).
 */
export interface StopAction {
  readonly kind: "stop";
  readonly harness: string;
  readonly run: string;
  /** The hook-fed runs in flight this stop reaches, in name order; absent for a supervisor's run. */
  readonly sessions?: readonly string[];
}
/** What an active fire asks the shell to do, in level order: levels are cumulative (REQ-10). */
export type FireAction = AnnotateAction | NotifyAction | HoldAction | StopAction;

/** The hold a fire placed, if it placed one. */
export const holdPlaced = (fire: Pick<Fire, "actions">): HoldAction | undefined =>
  fire.actions.find((a): a is HoldAction => a.kind === "hold");

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
  /** What the shell does for the fire; none in shadow, for a missing target, or a fleet annotation. */
  readonly actions: readonly FireAction[];
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

/** A hold ended (REQ-11), with the fire that placed it. */
export interface Release {
  readonly harness: string;
  readonly rule: string;
  readonly fireId: string;
  readonly cause: ReleaseCause;
  /** The operator who released it (an operator's control token's label, decision 0018), when one did. */
  readonly by?: string;
}

export interface RowOutcome {
  readonly fires: readonly Fire[];
  readonly evaluations: readonly RuleEvaluation[];
  /** Holds whose rule stayed false on every tick for its cooldown. */
  readonly releases: readonly (Release & { readonly cause: "condition_cleared" })[];
  readonly delta: readonly StateOp[];
}
