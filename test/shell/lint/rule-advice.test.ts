import { describe, expect, it } from "vitest";
import type { LoadedRule } from "../../../src/core/compile-rule.js";
import { loadRuleFile } from "../../../src/core/load-rule.js";
import { loadStarterPack } from "../../../src/core/starter-pack.js";
import { adviseRule } from "../../../src/shell/lint/rule-advice.js";
import { lintRuleFiles } from "../../../src/shell/lint/rule-files.js";
import { checkout, lintJson, ruleText } from "./checkout-fixture.js";

function rule(when: string, on = "run_event"): LoadedRule {
  const r = loadRuleFile(
    "rules/r.toml",
    ruleText("r", { on: JSON.stringify(on), when: JSON.stringify(when) }),
  );
  if (!r.ok) throw new Error(r.problem.message);
  return r.rule;
}

const advice = (when: string, on?: string) =>
  adviseRule(rule(when, on)).map((a) => `${a.reason} @${a.offset}`);

describe("lint's advice", () => {
  it("says nothing about the starter rules", () => {
    for (const l of loadStarterPack()) {
      if (!l.ok) throw new Error(l.problem.message);
      expect(adviseRule(l.rule), l.rule.spec.name).toEqual([]);
    }
  });

  it("flags a comparison with a value the kind never carries, at the value", () => {
    expect(advice('event.type == "closd"')).toEqual(["unknown_value @14"]);
    expect(advice('"closd" == event.type')).toEqual(["unknown_value @0"]);
    expect(adviseRule(rule('event.type == "tool" && event.action != "verfy"'))[0]?.message).toMatch(
      /^this comparison is always true: a run_event never has action "verfy"/,
    );
    expect(advice('event.scope == "repo"', "graph_event")).toEqual(["unknown_value @15"]);
    expect(advice('event.stance == "against"', "fact_event")).toEqual(["unknown_value @16"]);
  });

  it("leaves alone the zero value, open fields and values of another kind's field", () => {
    expect(advice('event.type == ""')).toEqual([]);
    expect(advice('event.edge == "copied"', "graph_event")).toEqual([]);
    expect(advice('event.reason == "whatever"')).toEqual([]);
    expect(advice('event.harness == "closd"')).toEqual([]);
    expect(advice('event.type == "tick"', "tick")).toEqual([]);
    // A comprehension variable named event is not the event.
    expect(advice('[{"type": "closd"}].exists(event, event.type == "closd")')).toEqual([]);
  });

  it("flags a when that can never be true, or is always true, only when certain", () => {
    expect(advice("false && event.is_error")).toEqual(["never_true @0"]);
    expect(advice("event.is_error && 1 > 2")).toEqual(["never_true @0"]);
    expect(advice("!(true || event.is_error)")).toEqual(["never_true @0"]);
    expect(advice('1 / 0 == 1 && event.type == "tool"')).toEqual(["never_true @0"]);
    expect(advice("event.is_error || true")).toEqual(["always_true @0"]);
    expect(advice('size("abc") == 3')).toEqual(["always_true @0"]);
    expect(advice('1 > 2 ? event.is_error : event.type == "tool"')).toEqual([]);
    // An error on one side of || does not make it certain: the other side may be true.
    expect(advice("1 / 0 == 1 || event.is_error")).toEqual([]);
    expect(advice("event.is_error")).toEqual([]);
    expect(advice('event.paths.exists(p, p == "a")')).toEqual([]);
    expect(advice('count({"type": "tool"}, duration("1h")) > 1')).toEqual([]);
  });

  it("flags a primitive selector no row of its kind can match", () => {
    expect(advice('count({"type": "closd"}, duration("1h")) > 1')).toEqual(["selector_never_matches @6"]);
    expect(advice('exists({"edge": "edited"}, duration("1h"))')).toEqual(["selector_never_matches @7"]);
    expect(advice('exists({"kind": "graph_event", "tool": "x"}, duration("1h"))')).toEqual([
      "selector_never_matches @7",
    ]);
    expect(advice('exists({"kind": "graph", "type": "x"}, duration("1h"))')).toEqual([
      "selector_never_matches @7",
    ]);
    expect(advice('distinct("run", {"is_error": true, "kind": "tick"}, duration("1h")) > 1')).toEqual([
      "selector_never_matches @16",
    ]);
    // A non-literal value, the zero value, or a field the kind carries may match.
    expect(advice('exists({"edge": event.harness}, duration("1h"))')).toEqual([]);
    expect(advice('exists({"kind": "graph_event", "edge": "edited"}, duration("1h"))')).toEqual([]);
    expect(advice('exists({"path": "a.go"}, duration("1h"))')).toEqual([]);
    expect(advice('exists({"edge": ""}, duration("1h"))')).toEqual([]);
  });
});

describe("duplicate names in one checkout", () => {
  it("fails both files with duplicate_name, at their name keys", () => {
    const text = new TextEncoder().encode(ruleText("twin"));
    const { findings, loaded } = lintRuleFiles([
      { file: "rules/twin.toml", bytes: text },
      { file: "rules/twin.toml", bytes: text },
    ]);
    expect(findings).toMatchObject([
      { file: "rules/twin.toml", line: 1, column: 1, severity: "error", reason: "duplicate_name" },
      { file: "rules/twin.toml", line: 1, column: 1, severity: "error", reason: "duplicate_name" },
    ]);
    expect(loaded.size).toBe(0);
  });
});

describe("two files under rules/ with one name", () => {
  it("fails a nested namesake of a top-level rule", () => {
    const { exitCode, findings } = lintJson(
      checkout({
        "rules/churn.toml": ruleText("churn"),
        "rules/old/churn.toml": ruleText("churn"),
        "rules/old/other.toml": ruleText("other"),
      }),
    );
    expect(exitCode).toBe(1);
    expect(findings.map((f) => [f.file, f.severity, f.reason])).toEqual([
      ["rules/old/", "notice", "ignored"],
      ["rules/old/churn.toml", "error", "duplicate_name"],
    ]);
  });
});
