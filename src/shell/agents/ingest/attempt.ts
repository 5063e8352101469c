/**
 * A live PreToolUse: its attempt row (`attempt_event`) is judged by the rules before the hook answers.
 * The answer waits for the row's evaluation, not only its commit, so an enforced stop whose `when`
 * matches the attempt is recorded before the verdict is asked, and the very call is refused. The wait is
 * bounded (`ATTEMPT_BUDGET_MS`): the agent is blocked on it. An attempt that could not be admitted
 * (dropped, refused, not stored) or not evaluated in time is answered by the harness's fail mode
 * (`fail-mode.ts`), as a daemon out of reach is (docs/decisions/0005-attempt-event.md).
 */
import type { FailMode, FailPolicy } from "./fail-mode.js";
import { ALLOW, type AnswerFormat, type HookAnswer } from "./hook-answer.js";
import type { Gate } from "./hook-event.js";

/**
 * How long a live PreToolUse waits for its attempt's evaluation. Well within the hook's own timeout
 * (10 s at install) and the forwarder's share of it; an evaluator this far behind is a daemon in
 * trouble, answered as one out of reach.
 */
export const ATTEMPT_BUDGET_MS = 2_000;

/** Resolves true once the evaluator has evaluated (and committed the outcome of) row `seq`, false after `budgetMs`. */
export type AwaitEvaluated = (seq: number, budgetMs: number) => Promise<boolean>;

/** Whether a live attempt was judged: admitted and evaluated within the budget. */
export async function attemptJudged(
  admitted: { readonly seq?: number },
  evaluated: AwaitEvaluated,
): Promise<boolean> {
  if (admitted.seq === undefined) return false;
  try {
    return await evaluated(admitted.seq, ATTEMPT_BUDGET_MS);
  } catch {
    return false;
  }
}

/** An attempt the rules could not judge, answered by the fail mode: told to the decision export. */
export interface FailModeAnswer {
  readonly harness: string;
  readonly run: string;
  readonly tool: string;
  /** The attempt's row, when it was admitted (and then not evaluated in time). */
  readonly seq: number | undefined;
  readonly result: FailMode;
  /** `harness`: its hook's `--fail` mode; `global`: `[agents] on_unreachable`. */
  readonly source: "harness" | "global";
  /** Why it was not judged: the budget, or why its row was not admitted. */
  readonly reason: string;
}

/**
 * The answer to an attempt the rules could not judge, when the fail mode refuses it; undefined when the
 * fail mode lets the call be answered by the run's verdict as it stands.
 */
export function unjudgedAnswer(
  format: { readonly answer: AnswerFormat },
  gate: Gate,
  policy: FailPolicy,
  why: string,
): HookAnswer | undefined {
  if (policy.mode === "allow" || gate !== "tool") return undefined;
  const answer = format.answer(gate, {
    kind: "deny",
    reason: `the harness rules could not judge this tool call (${why}), and ${policy.source} refuses it; try again, or ask the operator`,
  });
  return answer === ALLOW ? undefined : answer;
}
