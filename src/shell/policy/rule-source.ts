/**
 * The rule set the daemon serves (SPEC-0029 REQ-2): the embedded starter pack and the policy repos'
 * rules (`../policy/clone-rules.ts` reads the clones), with the operator's `[memory.rules]` `enforce`,
 * `disable` and `shadow_period` applied.
 */
import { assembleRuleSet, type RuleSet } from "../../core/rule-set.js";
import { loadStarterPack } from "../../core/starter-pack.js";
import type { GlobalConfig } from "../config/global-config.js";
import type { PolicyLoads } from "./clone-rules.js";

export function loadRuleSet(config: GlobalConfig, policy: readonly PolicyLoads[] = []): RuleSet {
  const { enforce, disable, shadowPeriod } = config.memory.rules;
  return assembleRuleSet({ starter: loadStarterPack(), policy, enforce, disable, shadowPeriod });
}
