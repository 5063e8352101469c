import { expect, it } from "vitest";
import { loadRuleFile } from "../../../src/core/load-rule.js";
import { assembleRuleSet } from "../../../src/core/rule-set.js";
import { backtestRequest } from "../../../src/shell/backtest/backtest-request.js";
import { backtestRule } from "../../../src/shell/backtest/replay.js";

const text = (path: string) => `name = "first-hold"
description = "d"
on = "attempt_event"
when = '"${path}" in event.paths'
level = "hold"
target = "harness"
message = "held"
`;

it("a backtest gives the file the level the pins in force would give it: enforced as pinned, capped when changed", () => {
  const loaded = loadRuleFile("rules/first-hold.toml", text("ci.yml"));
  if (!loaded.ok) throw new Error("the rule must load");
  const ruleSet = assembleRuleSet({
    starter: [],
    policy: [{ repo: "ops", loads: [loaded] }],
    enforce: [`first-hold@${loaded.rule.hash}`],
    shadowPeriod: 0,
  });
  const request = (fileText: string) =>
    backtestRequest({
      file: "first-hold.toml",
      text: fileText,
      sinceMs: 86_400_000,
      nowMs: 0,
      ruleSet,
      shadows: {},
    });
  expect(request(text("ci.yml")).enforce).toEqual([`first-hold@${loaded.rule.hash}`]);
  expect(backtestRule(request(text("ci.yml"))).enforced).toBe(true);
  expect(backtestRule(request(text("Makefile"))).enforced).toBe(false);
});
