import { describe, expect, it } from "vitest";
import { checkout, lintJson, ruleText } from "./checkout-fixture.js";

const RULE = ruleText("repeat-fail", {
  when: JSON.stringify(
    'event.type == "closed" && event.outcome == "failed" && count({"type": "closed", "harness": event.harness, "outcome": "failed"}, duration("1h")) >= 2',
  ),
  cooldown: '"30m"',
});

const failed = (at: string, harness = "nightly") =>
  `{ admitted = ${at}, type = "closed", harness = "${harness}", run = "${harness}#1", outcome = "failed" }`;

function lintTests(tests: string) {
  return lintJson(checkout({ "rules/repeat-fail.toml": RULE, "tests/repeat-fail.toml": tests }));
}

describe("rule tests", () => {
  it("passes cases whose fires are the expected (seq, target) pairs, or none", () => {
    const { exitCode, findings } = lintTests(`
[[case]]
name = "the second failure in an hour fires"
rows = [
  ${failed("2026-10-01T09:00:00Z")},
  ${failed("2026-10-01T09:20:00Z")},
  ${failed("2026-10-01T09:40:00Z")},
]
# The third is inside the 30m cooldown of the second.
fires = [{ seq = 2, target = "nightly" }]

[[case]]
name = "failures two hours apart do not"
rows = [${failed("2026-10-01T09:00:00Z")}, ${failed("2026-10-01T11:00:00Z")}]
fires = []
`);
    expect(findings).toEqual([]);
    expect(exitCode).toBe(0);
  });

  it("fails a case at its line, saying what was expected and what fired", () => {
    const { exitCode, findings } = lintTests(`[[case]]
name = "passes"
rows = [${failed("2026-10-01T09:00:00Z")}]
fires = []

[[case]]
name = "wrong"
rows = [${failed("2026-10-01T09:00:00Z", "a")}, ${failed("2026-10-01T09:01:00Z", "a")}]
fires = [{ seq = 1, target = "a" }]
`);
    expect(exitCode).toBe(1);
    expect(findings).toEqual([
      {
        file: "tests/repeat-fail.toml",
        line: 6,
        column: 1,
        severity: "error",
        reason: "test_failed",
        message: 'case "wrong": expected (1, "a"), got (2, "a")',
      },
    ]);
  });

  it("refuses unknown keys, unknown event fields and rows the journal would refuse", () => {
    const cases: [string, string][] = [
      [
        `[[case]]\nname = "x"\nrows = [${failed("2026-10-01T09:00:00Z")}]\nfires = []\nexpect = 1\n`,
        "unknown key expect",
      ],
      [
        `[[case]]\nname = "x"\nrows = [{ admitted = 2026-10-01T09:00:00Z, type = "closed", summary = "agent text" }]\nfires = []\n`,
        "the journal would refuse it: summary is not a run_event field",
      ],
      [`[[case]]\nname = "x"\nrows = [{ type = "closed" }]\nfires = []\n`, "admitted must be a date-time"],
      [
        `[[case]]\nname = "x"\nrows = [${failed("2026-10-01T09:00:00Z")}]\nfires = [{ seq = 1, target = "nightly", mode = "active" }]\n`,
        "unknown key mode",
      ],
      [
        `[[case]]\nname = "x"\nrows = [${failed("2026-10-01T09:00:00Z")}]\nfires = [{ seq = 2, target = "x" }]\n`,
        "seq must be",
      ],
      [`[[case]]\nname = "x"\nrows = [${failed("2026-10-01T09:00:00Z")}]\n`, "needs fires"],
      [
        `[[case]]\nname = "x"\nrows = [${failed("2026-10-01T09:00:00Z")}, ${failed("2026-10-01T08:00:00Z")}]\nfires = []\n`,
        "must not go back in time",
      ],
      [`title = "tests"\n`, "unknown key title"],
    ];
    for (const [text, message] of cases) {
      const { exitCode, findings } = lintTests(text);
      expect(exitCode, text).toBe(1);
      expect(findings, text).toHaveLength(1);
      expect(findings[0]).toMatchObject({ reason: "test_format", severity: "error" });
      expect(findings[0]?.message, text).toContain(message);
    }
  });

  it("reports a test for a rule that is not there, and skips the tests of a rule that fails", () => {
    const orphan = lintJson(checkout({ "tests/ghost.toml": "[[case]]\n" }));
    expect(orphan.findings).toMatchObject([
      { file: "tests/ghost.toml", severity: "error", reason: "test_format" },
    ]);
    const broken = lintJson(
      checkout({
        "rules/repeat-fail.toml": RULE.replace("level", "lvl"),
        "tests/repeat-fail.toml": `[[case]]\nname = "x"\nrows = [${failed("2026-10-01T09:00:00Z")}]\nfires = []\n`,
      }),
    );
    expect(broken.findings.map((f) => [f.file, f.severity, f.reason])).toEqual([
      ["rules/repeat-fail.toml", "error", "schema"],
      ["tests/repeat-fail.toml", "notice", "test_format"],
    ]);
  });

  it("counts an evaluation error in a case as a failure", () => {
    const rule = ruleText("div", {
      when: JSON.stringify('event.type == "closed" && 10 / event.exit_code > 1'),
    });
    const { exitCode, findings } = lintJson(
      checkout({
        "rules/div.toml": rule,
        "tests/div.toml": `[[case]]\nname = "zero"\nrows = [{ admitted = 2026-10-01T09:00:00Z, type = "closed", harness = "h", exit_code = 0 }]\nfires = []\n`,
      }),
    );
    expect(exitCode).toBe(1);
    expect(findings).toMatchObject([
      { reason: "test_failed", line: 1, message: expect.stringContaining("row 1: eval_error") },
    ]);
  });
});
