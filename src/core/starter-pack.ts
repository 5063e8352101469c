/** The starter pack (REQ-14), loaded through the same loader as any policy rule. */

import type { RuleLoad } from "./compile-rule.js";
import { loadRuleFile } from "./load-rule.js";
import { STARTER_FILES } from "./starter-pack.generated.js";

export function loadStarterPack(): readonly RuleLoad[] {
  return STARTER_FILES.map(([file, text]) => loadRuleFile(file, text));
}
