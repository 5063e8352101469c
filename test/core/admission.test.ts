import { describe, expect, it } from "vitest";
import { admissionProblems } from "../../src/core/admission.js";
import { MAX_PATHS } from "../../src/core/kinds.js";

describe("admission of a row's event", () => {
  it("admits a well-formed event of each kind", () => {
    expect(
      admissionProblems("run_event", {
        type: "tool",
        at: 1_790_000_000_000,
        harness: "impl",
        run: "impl#41",
        action: "verify",
        is_error: true,
        exit_code: 2,
        paths: ["internal/a.go"],
      }),
    ).toEqual([]);
    expect(admissionProblems("tick", { type: "tick" })).toEqual([]);
  });

  it("refuses a field outside the kind's set, naming it: no summaries, output lines or fact values", () => {
    expect(admissionProblems("run_event", { type: "tool", summary: "the agent said…" })).toEqual([
      { field: "summary", reason: "unknown_field", message: "summary is not a run_event field" },
    ]);
    expect(admissionProblems("fact_event", { type: "recorded", value: "secret text" })[0]?.field).toBe(
      "value",
    );
    expect(admissionProblems("tick", { type: "tick", harness: "h" })[0]?.field).toBe("harness");
  });

  it("refuses wrong types and anything past the bounds, without truncating", () => {
    const problems = (event: Record<string, unknown>) =>
      admissionProblems("run_event", { type: "tool", ...event }).map((p) => p.message);
    expect(problems({ is_error: "yes" })).toEqual(["is_error must be a bool"]);
    expect(problems({ exit_code: 1.5 })).toEqual(["exit_code must be an integer"]);
    expect(problems({ harness: "h".repeat(257) })).toEqual(["harness is longer than 256 characters"]);
    expect(problems({ paths: Array.from({ length: MAX_PATHS + 1 }, (_, i) => `f${i}`) })).toEqual([
      "paths holds more than 64 entries",
    ]);
    expect(problems({ paths: ["/etc/passwd"] })).toEqual([
      'paths entry "/etc/passwd" must be repo-relative, not absolute',
    ]);
    expect(problems({ paths: ["a/../../b"] })).toEqual(["paths entry \"a/../../b\" must not contain '..'"]);
    expect(problems({ digest: "a\ud800" })).toEqual([
      "digest is not well-formed Unicode (it holds an unpaired surrogate)",
    ]);
    expect(problems({ paths: ["ok/😀.go", "b\udc00"] })).toEqual([
      "paths holds an entry that is not well-formed Unicode (it holds an unpaired surrogate)",
    ]);
    expect(admissionProblems("graph_event", { type: "edge_added", path: "C:\\x" })[0]?.message).toBe(
      "path must be repo-relative, not absolute",
    );
  });

  it("refuses C0 and C1 control characters and DEL in every string field and list entry, naming the field and the character", () => {
    const problems = (kind: "run_event" | "graph_event" | "fact_event", event: Record<string, unknown>) =>
      admissionProblems(kind, { type: "t", ...event }).map((p) => `${p.field}: ${p.message}`);
    expect(problems("run_event", { run: "impl#\u0000" })).toEqual([
      "run: run holds a control character (U+0000)",
    ]);
    expect(problems("run_event", { harness: "\u001b[2Jimpl" })).toEqual([
      "harness: harness holds a control character (U+001B)",
    ]);
    expect(problems("run_event", { digest: "ab\u007f" })).toEqual([
      "digest: digest holds a control character (U+007F)",
    ]);
    expect(problems("graph_event", { path: "a\u009bb" })).toEqual([
      "path: path holds a control character (U+009B)",
    ]);
    expect(problems("run_event", { paths: ["ok.go", "a\tb.go"] })).toEqual([
      "paths: paths holds an entry that holds a control character (U+0009)",
    ]);
    expect(problems("fact_event", { type: "re\ncorded" })).toEqual([
      "type: type holds a control character (U+000A)",
    ]);
    // Printable text past ASCII is not a control character.
    expect(problems("run_event", { harness: "imp\u00a0l\u00e9😀" })).toEqual([]);
  });

  it("gives each refusal a reason from the closed set, for the rejected-events counter", () => {
    const reasons = (event: Record<string, unknown>) =>
      admissionProblems("run_event", { type: "tool", ...event }).map((p) => p.reason);
    expect(reasons({ summary: "x" })).toEqual(["unknown_field"]);
    expect(reasons({ is_error: "yes", exit_code: 1.5, at: "now", paths: "a" })).toEqual([
      "bad_type",
      "bad_type",
      "bad_type",
      "bad_type",
    ]);
    expect(reasons({ harness: "h".repeat(257), paths: ["x".repeat(1025)] })).toEqual([
      "too_long",
      "too_long",
    ]);
    expect(reasons({ paths: Array.from({ length: MAX_PATHS + 1 }, () => "f") })).toEqual(["too_many"]);
    expect(reasons({ paths: ["/etc/passwd"] })).toEqual(["bad_path"]);
    expect(reasons({ run: "\u0000", paths: ["\u009b"] })).toEqual(["control_character", "control_character"]);
    expect(reasons({ run: "\ud800" })).toEqual(["not_unicode"]);
  });

  it("requires a type", () => {
    expect(admissionProblems("run_event", {})).toEqual([
      { field: "type", reason: "missing_field", message: "type is required" },
    ]);
  });
});
