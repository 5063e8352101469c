/**
 * The rule set the daemon serves (SPEC-0029 REQ-2): the embedded starter pack and the policy repos'
 * rules (`clone-rules.ts` reads the clones), with the operator's `[memory.rules]` `enforce`, `disable`
 * and `shadow_period` applied. The daemon loads it at start and on every reload; a backtest with no
 * daemon running loads the same set, so its fires are the ones the daemon would give.
 */
import { assembleRuleSet, type RuleSet } from "../../core/rule-set.js";
import { loadStarterPack } from "../../core/starter-pack.js";
import type { GlobalConfig } from "../config/global-config.js";
import {
  type LastGoodRecord,
  type PolicyCloneStatus,
  type PolicyLoads,
  PolicyRuleSource,
} from "./clone-rules.js";

/** A loaded rule set, and the state of each policy clone it was read from (GetStatus, doctor). */
export interface RuleSetLoad {
  readonly ruleSet: RuleSet;
  readonly clones: readonly PolicyCloneStatus[];
}

export function loadRuleSet(config: GlobalConfig, policy: readonly PolicyLoads[] = []): RuleSet {
  const { enforce, disable, shadowPeriod } = config.memory.rules;
  return assembleRuleSet({ starter: loadStarterPack(), policy, enforce, disable, shadowPeriod });
}

/**
 * The loader of the served rule set: each call reads the declared repos' clones (compiling only the
 * commits it has not served yet) and assembles them with the starter pack.
 */
export function servedRuleSets(
  lastGood: LastGoodRecord,
  env: NodeJS.ProcessEnv,
  clock: () => number,
): (config: GlobalConfig) => Promise<RuleSetLoad> {
  const policy = new PolicyRuleSource(lastGood, env, clock);
  return async (config) => {
    const { policy: loads, clones } = await policy.load(config.policyRepos);
    return { ruleSet: loadRuleSet(config, loads), clones };
  };
}
