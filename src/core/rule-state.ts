/**
 * What a loaded rule is doing, as the evaluator will treat it on the next row (REQ-6, REQ-9, REQ-10):
 * active, in shadow until a time, or disabled by a cost overrun; and how a fire's effective level came
 * from its declared one. ListRules, GetStatus, explain and the daemon's rules gauge all say it this way.
 */
import type { Level } from "./rule-file.js";
import { type ActiveRule, needsEnforce, type RuleSet, skipsShadow } from "./rule-set.js";
import type { CoreState } from "./state.js";

export type RuleStateName = "active" | "shadow" | "disabled";

export type RuleState =
  | { readonly state: "disabled"; readonly disabledReason: "cost_exceeded"; readonly disabledMessage: string }
  | { readonly state: "active"; readonly shadowSince: number | undefined }
  /** `shadowSince` and `shadowUntil` undefined: the shadow starts at the next row. */
  | {
      readonly state: "shadow";
      readonly shadowSince: number | undefined;
      readonly shadowUntil: number | undefined;
    };

export function ruleState(active: ActiveRule, set: RuleSet, state: CoreState): RuleState {
  const { hash } = active.rule;
  if (state.costExceeded[hash] === true)
    return {
      state: "disabled",
      disabledReason: "cost_exceeded",
      disabledMessage: "an evaluation overran the cost limit; disabled until the next load",
    };
  // REQ-9: a starter rule, or a zero shadow period, is active from the next row whatever is recorded;
  // otherwise a hash is in shadow until its record says it completed.
  const shadow = state.shadows[hash];
  if (skipsShadow(active, set.shadowPeriod) || shadow?.completed === true)
    return { state: "active", shadowSince: shadow?.since };
  return {
    state: "shadow",
    shadowSince: shadow?.since,
    shadowUntil: shadow === undefined ? undefined : shadow.since + set.shadowPeriod,
  };
}

/** How many loaded rules are in each state. */
export function ruleStateCounts(set: RuleSet, state: CoreState): Readonly<Record<RuleStateName, number>> {
  const counts = { active: 0, shadow: 0, disabled: 0 };
  for (const r of set.rules) counts[ruleState(r, set, state).state]++;
  return counts;
}

/**
 * REQ-10: how `enforce` bears on a rule of this declared level: listed there; or not listed, so a hold
 * or stop rule acts at notify; or not listed and not needed below hold.
 */
export type Enforcement = "listed" | "capped" | "not_needed";

export const enforcement = (declared: Level, listed: boolean): Enforcement =>
  listed ? "listed" : needsEnforce(declared) ? "capped" : "not_needed";

/** REQ-18's derivation of the effective level, as the fire recorded it. */
export function levelDerivation(declared: Level, effective: Level, shadow: boolean): string {
  const head = `declared ${declared}, effective ${effective}`;
  // The fire keeps both levels: a hold or stop rule kept its level only if it was listed.
  const listed = needsEnforce(declared) && declared === effective;
  const why = {
    listed: "listed in [memory.rules] enforce",
    capped: "not in [memory.rules] enforce",
    not_needed: "annotate and notify need no enforce",
  }[enforcement(declared, listed)];
  return `${head}: ${why}${shadow ? "; in shadow, so no level acted" : ""}`;
}
