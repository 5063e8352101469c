/**
 * Finding 8's duration message: CEL has no day unit (cel-go's `time.ParseDuration` stops at hours), so
 * `duration("7d")` stays invalid, and the refusal says so and what to write, in the CEL library and in the
 * windowed primitives' load-time check.
 */
import { describe, expect, it } from "vitest";
import { CelError, parseDuration } from "../../src/cel/index.js";
import { loadRuleFile } from "../../src/core/load-rule.js";

const ruleWithin = (window: string) =>
  loadRuleFile(
    "rules/weekly.toml",
    [
      'name = "weekly"',
      'description = "two closes over budget in a window"',
      'on = "run_event"',
      `when = '''event.type == "closed" && count({"type": "closed"}, duration("${window}")) >= 2'''`,
      'level = "annotate"',
      'target = "run"',
      'message = "{{run}}"',
      "",
    ].join("\n"),
  );

describe("durations have no day unit", () => {
  it('finding 8: duration("7d") says CEL durations have no d unit and to write duration("168h")', () => {
    const parsed = parseDuration("7d");
    expect(parsed).toBeInstanceOf(CelError);
    expect((parsed as CelError).message).toBe(
      'unknown unit "d" in duration "7d": CEL durations have no "d" unit, so write duration("168h")',
    );
    expect((parseDuration("1d12h") as CelError).message).toMatch(/no "d" unit, so write days as hours/);

    const load = ruleWithin("7d");
    expect(load.ok).toBe(false);
    if (load.ok) return;
    expect(load.problem).toMatchObject({ reason: "compile", key: "when" });
    expect(load.problem.message).toBe(
      'the window of count must be a CEL duration from 1m to 168h: unknown unit "d" in duration "7d": CEL durations have no "d" unit, so write duration("168h")',
    );
    expect(load.problem.message).not.toMatch(/from 1m to 7d/);
  });

  it('finding 8: a window of duration("168h") loads', () => {
    const load = ruleWithin("168h");
    expect(load.ok && load.rule.spec.name).toBe("weekly");
    expect(ruleWithin("169h").ok).toBe(false);
  });
});
