/**
 * RuleService (SPEC-0029 REQ-17): the operator's one view of the rules, which the CLI, doctor and later
 * the TUI read through, never through a private path. The handlers read only what `RuleServiceDeps`
 * gives them: the evaluator's rule set and its state as last committed, the store's fire log, actions,
 * annotations and holds (through the store door's `RuleReadsPort`, so a read sees what has been
 * committed), and the journal metrics. The control methods call back into the daemon, which does the
 * work between two journal rows.
 *
 * The methods come in parts, each in its own module: holds, reloads, rules, the fire log, annotations
 * and status.
 *
 * Every failure a caller can act on is a typed `SentinelError` (`../errors.ts`), with one ConnectRPC code and an
 * `ErrorDetail` naming it (`status.ts`), so the CLI maps it to one exit code (docs/cli.md). Anything else is a fault of
 * the daemon, wrapped with the method and what it was asked about.
 */
import { annotationMethods } from "./rule-service-annotations.js";
import type { RuleServiceDeps, RuleServiceImpl } from "./rule-service-deps.js";
import { fireMethods } from "./rule-service-fires.js";
import { holdMethods } from "./rule-service-holds.js";
import { reloadMethods } from "./rule-service-reload.js";
import { ruleMethods } from "./rule-service-rules.js";
import { statusMethod } from "./rule-service-status.js";

export type { RuleServiceDeps } from "./rule-service-deps.js";

/**
 * The unary methods but the proposals'. Backtest and WatchEvents stream, each from its own module, the
 * proposal methods have theirs (`proposal-service.ts`), and the daemon serves them together.
 */
export function ruleService(
  deps: RuleServiceDeps,
): Omit<RuleServiceImpl, "backtest" | "watchEvents" | "listProposals" | "recordProposal"> {
  return {
    ...holdMethods(deps),
    ...reloadMethods(deps),
    ...ruleMethods(deps),
    ...fireMethods(deps),
    ...annotationMethods(deps),
    getStatus: statusMethod(deps),
  };
}
