/**
 * Folding `evaluate` over rows: the live evaluator does it one committed row at a time, and backtest
 * (SPEC-0029 REQ-8) does it over a stretch of the journal through one rule, starting with no cooldowns
 * and no holds, its windows looking back into older rows. Same function, same rows, same fires.
 */
import { evaluate, type Fire, type RowOutcome } from "./evaluate.js";
import type { JournalRow } from "./journal.js";
import type { ActiveRule, RuleSet } from "./rule-set.js";
import { type CoreState, emptyState, StateAccumulator } from "./state.js";
import type { WindowReader } from "./window.js";

/** The window reader bound to one row: rows with seq at most its seq, `now` its `at`. */
export type WindowFor = (row: JournalRow) => WindowReader;

export interface FoldResult {
  readonly state: CoreState;
  readonly outcomes: readonly RowOutcome[];
}

export function fold(
  ruleSet: RuleSet,
  rows: readonly JournalRow[],
  state: CoreState,
  windowFor: WindowFor,
): FoldResult {
  const acc = new StateAccumulator(state);
  const outcomes: RowOutcome[] = [];
  for (const row of rows) {
    const outcome = evaluate(ruleSet, row, acc.current, windowFor(row));
    acc.apply(outcome.delta);
    outcomes.push(outcome);
  }
  return { state: acc.current, outcomes };
}

export interface BacktestResult {
  readonly fires: readonly Fire[];
  readonly rowsEvaluated: number;
  readonly evalErrors: number;
  readonly storeErrors: number;
  /** For a hold rule: each simulated hold, from its fire to its release (undefined while still held). */
  readonly holds: readonly {
    readonly harness: string;
    readonly from: number;
    readonly until: number | undefined;
  }[];
}

/**
 * Replays `rows` (the last `--since` of the journal, in seq order) through one rule. Shadow state is
 * the live one's (passed in `shadows`), so modes match the live fire log.
 */
export function backtest(
  rule: ActiveRule,
  rows: readonly JournalRow[],
  windowFor: WindowFor,
  options: {
    readonly shadowPeriod: number;
    readonly shadows?: CoreState["shadows"];
    readonly costLimit?: number;
  },
): BacktestResult {
  const ruleSet: RuleSet = {
    rules: [rule],
    disabled: [],
    shadowPeriod: options.shadowPeriod,
    unknownEnforced: [],
    ...(options.costLimit === undefined ? {} : { costLimit: options.costLimit }),
  };
  const { outcomes } = fold(ruleSet, rows, { ...emptyState, shadows: options.shadows ?? {} }, windowFor);
  const fires = outcomes.flatMap((o) => o.fires);
  const evaluations = outcomes.flatMap((o) => o.evaluations);
  const holds: { harness: string; from: number; until: number | undefined }[] = [];
  // Spans come from the state ops themselves: a hold placed, and the release that ended it.
  const open = new Map<string, { harness: string; from: number; until: number | undefined }>();
  for (const [i, o] of outcomes.entries()) {
    const at = rows[i]?.at ?? 0;
    for (const op of o.delta) {
      if (op.op === "hold") {
        const span: { harness: string; from: number; until: number | undefined } = {
          harness: op.hold.harness,
          from: at,
          until: undefined,
        };
        open.set(op.key, span);
        holds.push(span);
      } else if (op.op === "release") {
        const span = open.get(op.key);
        if (span !== undefined) span.until = at;
        open.delete(op.key);
      }
    }
  }
  return {
    fires,
    rowsEvaluated: evaluations.length,
    evalErrors: evaluations.filter((e) => e.result === "eval_error").length,
    storeErrors: evaluations.filter((e) => e.result === "store_error").length,
    holds,
  };
}
