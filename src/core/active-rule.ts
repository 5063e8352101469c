/**
 * A loaded rule as a rule set holds it: with its source, whether it is listed in `enforce`, and the
 * record of a false evaluation made once. Its own module so that the rule set's plan (`rule-plan.ts`)
 * and the rule set (`rule-set.ts`) both build on it without importing each other.
 */
import type { LoadedRule } from "./compile-rule.js";
import type { RuleEvaluation } from "./outcome.js";

export type RuleSource = { readonly kind: "starter" } | { readonly kind: "policy"; readonly repo: string };

export interface ActiveRule {
  readonly rule: LoadedRule;
  readonly source: RuleSource;
  /** Listed in `[memory.rules] enforce`: may act at hold or stop. */
  readonly enforced: boolean;
  /** The record of an evaluation that comes out false, made once: most of a rule's evaluations do. */
  readonly falseEvaluation: RuleEvaluation;
}

export function activeRule(rule: LoadedRule, source: RuleSource, enforced: boolean): ActiveRule {
  return {
    rule,
    source,
    enforced,
    falseEvaluation: { rule: rule.spec.name, hash: rule.hash, result: "false" },
  };
}
