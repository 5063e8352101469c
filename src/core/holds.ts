/**
 * Hold releases that are not a rule's condition clearing (SPEC-0029 REQ-11 (b) and (c)): the operator's
 * `harness rules clear <harness> [--rule <name>]`, and a reload that leaves the holding rule absent,
 * disabled, changed in hash, or out of enforce. Each is a state delta with its cause, like any other.
 */
import type { Release } from "./outcome.js";
import type { RuleSet } from "./rule-set.js";
import type { CoreState, StateOp } from "./state.js";

export interface ReleaseResult {
  readonly delta: readonly StateOp[];
  readonly releases: readonly Release[];
}

/**
 * Releases the harness's holds (only `rule`'s when given), recording the operator `by` when known; none
 * found is the caller's "hold not found".
 */
export function clearHolds(state: CoreState, harness: string, rule?: string, by?: string): ReleaseResult {
  const delta: StateOp[] = [];
  const releases: Release[] = [];
  for (const [key, hold] of Object.entries(state.holds)) {
    if (hold.harness !== harness || (rule !== undefined && hold.rule !== rule)) continue;
    const who = by === undefined ? {} : { by };
    delta.push({ op: "release", key, cause: "operator", ...who });
    releases.push({ harness, rule: hold.rule, fireId: hold.fireId, cause: "operator", ...who });
  }
  return { delta, releases };
}

/**
 * Releases every hold the new rule set no longer backs: same name, same hash, loaded and enforced; `by`
 * the operator who asked for the reload, when one did.
 */
export function releaseOnReload(state: CoreState, ruleSet: RuleSet, by?: string): ReleaseResult {
  const backing = new Set(
    ruleSet.rules.filter((r) => r.enforced).map((r) => `${r.rule.spec.name}\u0000${r.rule.hash}`),
  );
  const delta: StateOp[] = [];
  const releases: Release[] = [];
  for (const [key, hold] of Object.entries(state.holds)) {
    if (backing.has(`${hold.rule}\u0000${hold.hash}`)) continue;
    const who = by === undefined ? {} : { by };
    delta.push({ op: "release", key, cause: "reload", ...who });
    releases.push({ harness: hold.harness, rule: hold.rule, fireId: hold.fireId, cause: "reload", ...who });
  }
  return { delta, releases };
}
