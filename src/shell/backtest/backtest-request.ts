/**
 * What a backtest asks for, the same from the daemon and from the CLI replaying over the store: the
 * stretch (`--since`, 30 days unless given, refused beyond retention minus the 7 days its windows look
 * back) and the rule set in force, whose enforce list, shadow records and sources give the fires the
 * levels and modes live evaluation would have given them.
 */
import { DAY, formatDuration } from "../../core/durations.js";
import { formatEnforceEntry } from "../../core/enforce-entry.js";
import { parseRuleFile } from "../../core/rule-file.js";
import type { RuleSet } from "../../core/rule-set.js";
import type { CoreState } from "../../core/state.js";
import { MAX_WINDOW_MS } from "../../core/window.js";
import type { BacktestRequest } from "./replay.js";

export const DEFAULT_BACKTEST_SINCE = 30 * DAY;

/** Why `since` cannot be replayed, or undefined when it can. */
export function sinceRefusal(sinceMs: number, retentionMs: number): string | undefined {
  if (!Number.isSafeInteger(sinceMs) || sinceMs <= 0) return `--since must be a positive duration`;
  const most = retentionMs - MAX_WINDOW_MS;
  if (sinceMs > most)
    return `--since ${formatDuration(sinceMs)} is longer than journal_retention (${formatDuration(retentionMs)}) minus the 7d its windows look back: at most ${formatDuration(most)}`;
  return undefined;
}

export function backtestRequest(input: {
  readonly file: string;
  readonly text: string;
  readonly sinceMs: number;
  readonly nowMs: number;
  readonly ruleSet: RuleSet;
  readonly shadows: CoreState["shadows"];
  /** `--diff`: replay the loaded rule of the file's name beside it, when there is one. */
  readonly diff?: boolean;
}): BacktestRequest {
  const { ruleSet } = input;
  const against = input.diff === true ? loadedOfName(input.file, input.text, ruleSet) : undefined;
  return {
    file: input.file,
    text: input.text,
    sinceMs: input.sinceMs,
    nowMs: input.nowMs,
    // The entries in force: each enforced rule (pinned to its hash when only a pin enforces it), and the
    // names that match no loaded rule.
    enforce: [
      ...ruleSet.rules
        .filter((r) => r.enforced)
        .map((r) =>
          formatEnforceEntry({
            name: r.rule.spec.name,
            hash: ruleSet.pinned.includes(r.rule.spec.name) ? r.rule.hash : undefined,
          }),
        ),
      ...ruleSet.unknownEnforced,
    ],
    shadowPeriod: ruleSet.shadowPeriod,
    shadows: input.shadows,
    loaded: ruleSet.rules.map((r) => ({ name: r.rule.spec.name, hash: r.rule.hash, source: r.source })),
    ...(ruleSet.costLimit === undefined ? {} : { costLimit: ruleSet.costLimit }),
    ...(against === undefined ? {} : { against }),
  };
}

/** The loaded rule named as the file's rule is, if any (a file that does not parse is refused later). */
function loadedOfName(file: string, text: string, ruleSet: RuleSet): BacktestRequest["against"] {
  const parsed = parseRuleFile(file, text);
  if (!parsed.ok) return undefined;
  const loaded = ruleSet.rules.find((r) => r.rule.spec.name === parsed.spec.name);
  return loaded === undefined ? undefined : { spec: loaded.rule.spec, source: loaded.source };
}
