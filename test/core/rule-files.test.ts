import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { starterPackModule } from "../../scripts/starter-pack-source.js";
import { parseTimestamp, Timestamp } from "../../src/cel/index.js";
import { COST_LIMIT, compileRule, contentHash } from "../../src/core/compile-rule.js";
import { WINDOW } from "../../src/core/environments.js";
import { loadRuleFile } from "../../src/core/load-rule.js";
import { parseRuleFile, type RuleSpec } from "../../src/core/rule-file.js";
import { STARTER_FILES } from "../../src/core/starter-pack.generated.js";
import { loadStarterPack } from "../../src/core/starter-pack.js";
import { type IndexedRow, scanReader } from "../../src/core/window.js";

function ruleFile(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([k, v]) => `${k} = ${v.includes("\n") ? `'''\n${v}\n'''` : JSON.stringify(v)}`)
    .join("\n");
}

const base = {
  name: "churn",
  description: "Files edited by many runs",
  on: "run_event",
  when: 'event.type == "tool"',
  level: "notify",
  target: "harness",
  message: "{{harness}} churns {{path}}",
};

function spec(overrides: Record<string, string> = {}): RuleSpec {
  const r = parseRuleFile("rules/churn.toml", ruleFile({ ...base, ...overrides }));
  if (!r.ok) throw new Error(r.problem.message);
  return r.spec;
}

function load(overrides: Record<string, string> = {}, file = "rules/churn.toml") {
  return loadRuleFile(file, ruleFile({ ...base, ...overrides }));
}

const NOW = Date.parse("2026-10-01T12:00:00Z");
const at = (ms: number) => new Timestamp(BigInt(ms) * 1_000_000n);

describe("REQ-3 rule files", () => {
  it("An unknown key disables one rule", () => {
    const bad = load({ action: "restart" });
    expect(bad).toMatchObject({
      ok: false,
      problem: { reason: "schema", key: "action", line: 8, column: 1 },
    });
    expect(!bad.ok && bad.problem.message).toBe("unknown key action");
    expect(load().ok).toBe(true);
  });

  it("A message cannot quote agent text", () => {
    const bad = load({ message: "{{harness}} said {{summary}}" });
    expect(bad).toMatchObject({ ok: false, problem: { reason: "schema", key: "message" } });
    expect(!bad.ok && bad.problem.message).toContain("{{summary}}");
  });

  it("checks every key of the table", () => {
    const cases: [Record<string, string>, string][] = [
      [{ name: "Churn" }, "name"],
      [{ name: "other" }, "name"],
      [{ description: "two\nlines" }, "description"],
      [{ description: "x".repeat(201) }, "description"],
      [{ on: "run" }, "on"],
      [{ level: "page" }, "level"],
      [{ cooldown: "30s" }, "cooldown"],
      [{ cooldown: "8d" }, "cooldown"],
      [{ cooldown: "soon" }, "cooldown"],
      [{ target: "repo" }, "target"],
      [{ target: "node", level: "hold" }, "target"],
      [{ target: "fleet", level: "annotate" }, "target"],
      [{ message: "x".repeat(281) }, "message"],
    ];
    for (const [overrides, key] of cases) {
      const r = load(overrides);
      expect(r, JSON.stringify(overrides)).toMatchObject({ ok: false, problem: { reason: "schema", key } });
    }
    const { message: _, ...withoutMessage } = base;
    const missing = loadRuleFile("rules/churn.toml", ruleFile(withoutMessage));
    expect(!missing.ok && missing.problem.message).toBe("missing required key message");
  });

  it("names the line and column of a TOML syntax error", () => {
    const r = loadRuleFile("rules/churn.toml", 'name = "churn"\nwhen = [\n');
    expect(r).toMatchObject({ ok: false, problem: { reason: "schema", file: "rules/churn.toml", line: 3 } });
  });

  it("accepts Go-style cooldowns with days, defaulting to 1h", () => {
    expect(spec({ cooldown: "1h30m" }).cooldown).toBe(90 * 60_000);
    expect(spec({ cooldown: "7d" }).cooldown).toBe(7 * 86_400_000);
    expect(spec({ cooldown: "90s" }).cooldown).toBe(90_000);
    expect(spec().cooldown).toBe(3_600_000);
  });
});

describe("REQ-4 to REQ-6 compilation", () => {
  it("A misspelled field fails at load, not at 3 a.m.", () => {
    const r = load({ when: 'event.outcom == "failed"' });
    expect(r).toMatchObject({ ok: false, problem: { reason: "compile", key: "when", line: 4, column: 14 } });
    expect(!r.ok && r.problem.message).toBe("undefined field 'outcom'");
  });

  it("requires a bool", () => {
    expect(load({ when: "event.exit_code + 1" })).toMatchObject({
      ok: false,
      problem: { reason: "compile" },
    });
  });

  it("Time comes only from now", () => {
    const r = load({ when: 'timestamp("2026-09-27T00:00:00Z") < now' });
    if (!r.ok) throw new Error(r.problem.message);
    const vars = { event: { type: "tool" }, now: parseTimestamp("2026-10-01T00:00:00Z") };
    const live = r.rule.program.evaluate(vars, COST_LIMIT);
    const later = r.rule.program.evaluate(vars, COST_LIMIT);
    expect(live).toEqual(later);
    expect(live).toMatchObject({ kind: "value", value: true });
    expect(load({ when: "now() > now" }).ok).toBe(false);
  });

  it("An unset field is a zero, not an error", () => {
    const r = load({ when: "event.exit_code == 0" });
    if (!r.ok) throw new Error(r.problem.message);
    expect(r.rule.program.evaluate({ event: { type: "tool" }, now: at(NOW) }, COST_LIMIT)).toMatchObject({
      kind: "value",
      value: true,
    });
  });

  it("A computed window is rejected", () => {
    const r = load({ when: 'count({"type": "closed"}, duration(event.tool)) > 0' });
    expect(r).toMatchObject({ ok: false, problem: { reason: "compile" } });
    expect(!r.ok && r.problem.message).toContain("window of count must be a literal duration");
  });

  it("refuses non-literal selectors, unknown keys, wrong value types, bad fields and windows, a ninth call", () => {
    const bad = [
      ['count(event.paths.size() > 0 ? {"type": "a"} : {"type": "b"}, duration("1h")) > 0', "map literal"],
      ['count({event.type: "x"}, duration("1h")) > 0', "string literal"],
      ['count({"summary": "x"}, duration("1h")) > 0', "unknown selector key 'summary'"],
      ['count({"is_error": "yes"}, duration("1h")) > 0', "must be a bool"],
      ['distinct(event.type, {"type": "x"}, duration("1h")) > 0', "field of distinct"],
      ['exists({"type": "x"}, duration("30s"))', "from 1m to 7d"],
      ['exists({"type": "x"}, duration("169h"))', "from 1m to 7d"],
      [
        Array.from({ length: 9 }, () => 'exists({"type": "x"}, duration("1h"))').join(" || "),
        "at most 8 times",
      ],
    ];
    for (const [when, message] of bad) {
      const r = load({ when: when as string });
      expect(!r.ok && r.problem.reason, when).toBe("compile");
      expect(!r.ok && r.problem.message, when).toContain(message);
    }
    expect(
      load({ when: 'exists({"type": "x"}, duration("168h")) && event.paths.exists(p, p == "a")' }).ok,
    ).toBe(true);
  });

  it("limits comprehension nesting to 2", () => {
    const r = load({ when: "event.paths.exists(a, event.paths.exists(b, event.paths.exists(c, a == c)))" });
    expect(!r.ok && r.problem.message).toContain("more than the limit of 2");
  });

  it("disables a rule whose estimated cost exceeds 5,000 units with reason cost_estimate", () => {
    const r = load({ when: "event.paths.exists(a, event.paths.exists(b, a.contains(b)))" });
    expect(r).toMatchObject({ ok: false, problem: { reason: "cost_estimate" } });
  });

  it("The current row counts", () => {
    const r = load({
      when: 'event.type == "closed" && count({"type": "closed", "harness": event.harness, "outcome": "failed"}, duration("1h")) >= 3',
    });
    if (!r.ok) throw new Error(r.problem.message);
    const rows: IndexedRow[] = [1, 2, 3].map((seq) => ({
      seq,
      at: NOW - (3 - seq) * 60_000,
      kind: "run_event",
      fields: { type: "closed", harness: "nightly", outcome: "failed" },
      paths: [],
    }));
    const verdict = (seq: number) =>
      r.rule.program.evaluate(
        {
          event: { type: "closed", harness: "nightly" },
          now: at(rows[seq - 1]?.at ?? 0),
          [WINDOW]: scanReader(rows, seq, rows[seq - 1]?.at ?? 0),
        },
        COST_LIMIT,
      );
    expect(verdict(2)).toMatchObject({ kind: "value", value: false });
    expect(verdict(3)).toMatchObject({ kind: "value", value: true, cost: expect.any(Number) });
  });

  it("points a compile error at its line and column in the file", () => {
    const text = [
      'name = "churn"',
      'description = "x"',
      'on = "run_event"',
      `when = 'event.type == "tool" && count({"path": event.path}, duration("1h")) >'`,
      'level = "notify"',
      'target = "harness"',
      'message = "m"',
    ].join("\n");
    const r = loadRuleFile("rules/churn.toml", text);
    expect(r).toMatchObject({ ok: false, problem: { reason: "compile", line: 4, column: 78 } });
  });
});

describe("REQ-9 content hash", () => {
  const hashOf = (overrides: Record<string, string>) => {
    const r = compileRule(spec(overrides));
    if (!r.ok) throw new Error(r.problem.message);
    return r.rule.hash;
  };

  it("Rewording keeps its clock", () => {
    expect(hashOf({ description: "Something else", message: "{{run}} again" })).toBe(hashOf({}));
    expect(hashOf({ when: 'event.type=="tool" // reformatted' })).toBe(hashOf({}));
    expect(hashOf({ cooldown: "60m" })).toBe(hashOf({}));
    expect(hashOf({ cooldown: "1h" })).toBe(hashOf({}));
  });

  it("A changed expression starts over", () => {
    const when = (n: number) => `count({"type": "closed"}, duration("1h")) >= ${n}`;
    expect(hashOf({ when: when(3) })).not.toBe(hashOf({ when: when(2) }));
    expect(hashOf({ level: "annotate" })).not.toBe(hashOf({}));
    expect(hashOf({ target: "run" })).not.toBe(hashOf({}));
    expect(hashOf({ cooldown: "2h" })).not.toBe(hashOf({}));
    expect(contentHash(spec({ on: "graph_event" }), 'event.type == "tool"')).not.toBe(hashOf({}));
  });
});

describe("REQ-14 starter pack", () => {
  const TABLE: Record<string, [string, string, string, number]> = {
    "same-file-collision": ["graph_event", "annotate", "run", 30 * 60_000],
    "repeated-verify-failure": ["run_event", "notify", "harness", 2 * 3_600_000],
    "restart-into-same-failure": ["run_event", "hold", "harness", 3_600_000],
    "budget-exhaustion-recurring": ["run_event", "hold", "harness", 6 * 3_600_000],
    "cross-run-churn": ["graph_event", "annotate", "node", 24 * 3_600_000],
    "loop-stop-recurs": ["run_event", "notify", "harness", 12 * 3_600_000],
  };

  it("loads all six rules of the table through the ordinary loader", () => {
    const loads = loadStarterPack();
    expect(loads).toHaveLength(6);
    for (const l of loads) {
      if (!l.ok) throw new Error(`${l.problem.file}: ${l.problem.message}`);
      const { name, on, level, target, cooldown } = l.rule.spec;
      expect([on, level, target, cooldown], name).toEqual(TABLE[name]);
      expect(l.rule.estimatedCost.max <= BigInt(COST_LIMIT), name).toBe(true);
    }
  });

  it("embeds the files of starter-rules/ (run `npm run starter-pack` after editing them)", () => {
    expect(STARTER_FILES.map(([f]) => f)).toHaveLength(6);
    const generated = readFileSync(
      new URL("../../src/core/starter-pack.generated.ts", import.meta.url),
      "utf8",
    );
    expect(starterPackModule()).toBe(generated);
  });
});
