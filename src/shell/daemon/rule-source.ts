/**
 * The rule set the daemon serves (SPEC-0029 REQ-2): the embedded starter pack, with the operator's
 * `[memory.rules]` `enforce`, `disable` and `shadow_period` applied. Policy-repo rules join it with the
 * policy-repo issue (their clones, the default-branch gate and last-good commits).
 */
import { assembleRuleSet, type RuleSet } from "../../core/rule-set.js";
import { loadStarterPack } from "../../core/starter-pack.js";
import type { GlobalConfig } from "../config/global-config.js";

export function loadRuleSet(config: GlobalConfig): RuleSet {
  const { enforce, disable, shadowPeriod } = config.memory.rules;
  return assembleRuleSet({ starter: loadStarterPack(), policy: [], enforce, disable, shadowPeriod });
}
