/** One rule file's text to a loaded rule or a disabled one: the schema check, then compilation. */
import { compileRule, type RuleLoad } from "./compile-rule.js";
import { parseRuleFile } from "./rule-file.js";
import { ruleFileText } from "./rule-file-bytes.js";

export function loadRuleFile(file: string, text: string): RuleLoad {
  const parsed = parseRuleFile(file, text);
  return parsed.ok ? compileRule(parsed.spec) : { ok: false, problem: parsed.problem };
}

/** A rule file's bytes to a loaded or disabled rule. */
export function loadRuleFileBytes(file: string, bytes: Uint8Array): RuleLoad {
  const text = ruleFileText(file, bytes);
  return text.ok ? loadRuleFile(file, text.text) : { ok: false, problem: text.problem };
}
