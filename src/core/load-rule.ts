/** One rule file's text to a loaded rule or a disabled one: the schema check, then compilation. */
import { compileRule, type RuleLoad } from "./compile-rule.js";
import { parseRuleFile } from "./rule-file.js";

/**
 * The largest rule file read, in bytes. A rule is a dozen short keys (a `when` of a few hundred
 * characters, a message of at most 280): 256 KiB leaves room for comments and refuses, before any
 * parsing, the file that would cost the loader time or memory.
 */
export const MAX_RULE_FILE_BYTES = 256 * 1024;

export function loadRuleFile(file: string, text: string): RuleLoad {
  const parsed = parseRuleFile(file, text);
  return parsed.ok ? compileRule(parsed.spec) : { ok: false, problem: parsed.problem };
}

/**
 * A rule file's bytes (at most `MAX_RULE_FILE_BYTES + 1` of them, so an oversized file is known
 * without reading it all) to a loaded or disabled rule: too large or not UTF-8 is a `schema` problem.
 */
export function loadRuleFileBytes(file: string, bytes: Uint8Array): RuleLoad {
  if (bytes.length > MAX_RULE_FILE_BYTES) {
    const message = `the file is larger than ${MAX_RULE_FILE_BYTES / 1024} KiB, the limit for a rule file`;
    return { ok: false, problem: { reason: "schema", file, message } };
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, problem: { reason: "schema", file, message: "the file is not valid UTF-8" } };
  }
  return loadRuleFile(file, text);
}
