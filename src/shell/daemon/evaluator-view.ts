/**
 * The evaluator as the rest of the daemon may read it (RuleService, backtests, propose_rule): the rule
 * set in force and the state as last committed, never the evaluator itself.
 */
import type { RuleSet } from "../../core/rule-set.js";
import type { CoreState } from "../../core/state.js";

export interface EvaluatorView {
  readonly rules: RuleSet;
  readonly state: CoreState;
  /**
   * The seq of the last row evaluated whose decisions are committed: what the rows up to it fired, held
   * and changed is committed (the cursor of rows that changed nothing is stored a moment later).
   */
  readonly cursor: number;
  /** The `at` of that row; 0 before any. */
  readonly lastEvaluatedAt: number;
  /** REQ-20's lag at `now`, seconds (the gauge's value). */
  lagSeconds(now: number): number;
}
