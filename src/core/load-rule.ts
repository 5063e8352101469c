/** One rule file's text to a loaded rule or a disabled one: the schema check, then compilation. */
import { compileRule, type RuleLoad } from "./compile-rule.js";
import { parseRuleFile } from "./rule-file.js";

export function loadRuleFile(file: string, text: string): RuleLoad {
  const parsed = parseRuleFile(file, text);
  return parsed.ok ? compileRule(parsed.spec) : { ok: false, problem: parsed.problem };
}
