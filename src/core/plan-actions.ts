/**
 * What a fire does (SPEC-0029 REQ-10 to REQ-12), decided in the core so that live evaluation, backtest
 * and lint see the same actions. Levels are cumulative: annotate attaches an annotation to the target's
 * node, notify also delivers rule_fired, hold also holds the target's harness, stop also stops the run
 * in flight. In shadow no level acts. The shell carries the plan out after its commit and decides
 * nothing itself.
 */
import type { Action, FireAction, Mode } from "./outcome.js";
import { atLeast, type Level } from "./rule-file.js";
import { annotationNode, type ResolvedTarget } from "./targets.js";

/** What a plan reads of the state as the fire finds it. */
export interface PlanState {
  /** Whether the fire's rule already holds the harness: a fire places no second hold. */
  readonly held: (harness: string) => boolean;
  readonly runInFlight: (harness: string) => string | undefined;
  /** The harness's hook-fed runs in flight (`hook-runs.ts`), in name order. */
  readonly sessionsOf: (harness: string) => readonly string[];
}

export interface FirePlan {
  /** The fire log's one word for the plan. */
  readonly action: Action;
  readonly actions: readonly FireAction[];
}

const NO_TARGET: FirePlan = { action: "no_target", actions: [] };
const IN_SHADOW: FirePlan = { action: "none", actions: [] };
const NOTIFY: FireAction = { kind: "notify" };

/** The plan of a fire at its effective `level`; `target` undefined when the event lacks the field. */
export function planActions(
  level: Level,
  mode: Mode,
  target: ResolvedTarget | undefined,
  state: PlanState,
): FirePlan {
  // REQ-3: a fire whose event lacks the field its target needs takes no action.
  if (target === undefined) return NO_TARGET;
  if (mode === "shadow") return IN_SHADOW;
  const actions: FireAction[] = [];
  // A fleet target has no node and is not annotated.
  const node = annotationNode(target);
  if (node !== undefined) actions.push({ kind: "annotate", node });
  if (!atLeast(level, "notify")) return { action: node === undefined ? "none" : "annotate", actions };
  actions.push(NOTIFY);
  if (!atLeast(level, "hold")) return { action: "notify", actions };
  // Hold and stop act on the target's harness: without one, the fire takes no action at all.
  const { harness } = target;
  if (harness === undefined) return NO_TARGET;
  if (!state.held(harness)) actions.push({ kind: "hold", harness });
  if (level === "hold") return { action: "hold", actions };
  const run = state.runInFlight(harness);
  // Hook-fed runs: a harness may have several in flight; a run target stops its own, a harness target
  // every one (REQ-12's "the run in flight", once per session). Each is stopped at its next hook call.
  const sessions = state.sessionsOf(harness);
  if (target.kind === "run" && target.run !== undefined && sessions.includes(target.run)) {
    actions.push({ kind: "stop", harness, run: target.run, sessions: [target.run] });
    return { action: "stop", actions };
  }
  if (target.kind === "harness" && sessions.length > 0) {
    actions.push({ kind: "stop", harness, run: run ?? (sessions.at(-1) as string), sessions });
    return { action: "stop", actions };
  }
  // A stop reaches only the run in flight: a late fire for a run that has ended stops nothing.
  if (target.kind === "run" && target.run !== run) return { action: "target_gone", actions };
  // A harness target stops the run in flight, if any; with none, the hold is the action.
  if (run === undefined) return { action: "hold", actions };
  actions.push({ kind: "stop", harness, run });
  return { action: "stop", actions };
}
