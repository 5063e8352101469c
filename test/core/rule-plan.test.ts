import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { WINDOW } from "../../src/core/environments.js";
import { evaluate } from "../../src/core/evaluate.js";
import type { JournalRow } from "../../src/core/journal.js";
import { EVENT_LAYOUTS } from "../../src/core/kinds.js";
import { loadRuleFile } from "../../src/core/load-rule.js";
import { PlannedRule } from "../../src/core/rule-plan.js";
import { activeRule, assembleRuleSet, planOf, type RuleSet } from "../../src/core/rule-set.js";
import { loadStarterPack } from "../../src/core/starter-pack.js";
import { emptyState, StateAccumulator } from "../../src/core/state.js";
import { scanReader } from "../../src/core/window.js";
import { runs } from "../property-runs.js";

const T0 = Date.parse("2026-10-01T00:00:00Z");
const starter = (): RuleSet => assembleRuleSet({ starter: loadStarterPack(), policy: [], shadowPeriod: 0 });
const TYPES = [
  "tool",
  "closed",
  "opened",
  "loop_stopped",
  "edge_added",
  "collision_started",
  "",
  "x".repeat(256),
];

/** Operands a `when` may chain with `&&`: field guards, and others that read, loop, fail or cost. */
const OPERANDS = [
  'event.type == "tool"',
  '"closed" == event.type',
  "event.is_error",
  "!event.is_error",
  'event.action == "verify"',
  'event.outcome == ""',
  'count({"type": "tool", "harness": event.harness}, duration("1h")) >= 1',
  'event.paths.exists(p, p.startsWith("a"))',
  "event.exit_code / 0 == 1",
  'event.type != "tool"',
];

/** Events of admitted shapes, some fields unset, and a few with a value of another type (hand-built). */
const events = fc.record(
  {
    type: fc.constantFrom("tool", "closed", "", "x".repeat(256), 5),
    action: fc.constantFrom("verify", "read", ""),
    is_error: fc.constantFrom(true, false, "yes"),
    outcome: fc.constantFrom("", "failed"),
    harness: fc.constantFrom("h1", "h2"),
    paths: fc.array(fc.constantFrom("a/b", "c/d", "x".repeat(200)), { maxLength: 64 }),
    exit_code: fc.constantFrom(0n, 1n),
  },
  { requiredKeys: [] },
);

describe("the rule plan", () => {
  it("a field guard answers false only where the program, run whole, answers false within the limit", () => {
    let guarded = 0;
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...OPERANDS), { minLength: 1, maxLength: 5 }),
        events,
        fc.constantFrom(1, 10, 100, 150, 300, 1_000, 5_000, Number.POSITIVE_INFINITY),
        (operands, event, limit) => {
          const load = loadRuleFile(
            "rules/guarded.toml",
            [
              'name = "guarded"',
              'description = "d"',
              'on = "run_event"',
              `when = '${operands.join(" && ")}'`,
              'level = "notify"',
              'target = "harness"',
              'message = "m"',
            ].join("\n"),
          );
          if (!load.ok) throw new Error(load.problem.message);
          const planned = new PlannedRule(activeRule(load.rule, { kind: "policy", repo: "ops" }, false));
          if (!planned.falseOn(EVENT_LAYOUTS.run_event.layOut(event).values, limit)) return;
          guarded++;
          const r = load.rule.program.evaluate({ event, now: T0, [WINDOW]: scanReader([], 0, T0) }, limit);
          expect(r).toMatchObject({ kind: "value", value: false });
        },
      ),
      { numRuns: runs(400) },
    );
    expect(guarded).toBeGreaterThan(0);
  });

  it("a type guard turns a row away only where the rule's program answers false within the limit", () => {
    const set = starter();
    const guarded = planOf(set).all.filter((p) => p.turnsAway("no such type", Number.POSITIVE_INFINITY));
    // Every starter rule tests its event type first.
    expect(guarded.map((p) => p.rule.spec.name)).toEqual(set.rules.map((r) => r.rule.spec.name));
    for (const p of guarded)
      for (const type of TYPES)
        for (const limit of [0, 1, 2, 3, 5, 10, 100, 5_000]) {
          if (!p.turnsAway(type, limit)) continue;
          const r = p.rule.program.evaluate(
            { event: { type, harness: "h", run: "h#1" }, now: T0, [WINDOW]: scanReader([], 0, T0) },
            limit,
          );
          expect({ rule: p.rule.spec.name, type, limit, r }).toMatchObject({
            r: { kind: "value", value: false },
          });
        }
  });

  it("under a limit below the guard's charge the rule runs and overruns, as it did unguarded", () => {
    const set = { ...starter(), costLimit: 1 };
    const row: JournalRow = { seq: 1, at: T0, kind: "run_event", event: { type: "tool", harness: "h" } };
    const outcome = evaluate(set, row, emptyState, scanReader([], 1, T0));
    const run = outcome.evaluations.filter((e) => e.rule === "budget-exhaustion-recurring");
    expect(run).toEqual([expect.objectContaining({ result: "cost_exceeded" })]);
  });

  it("a rule set with a new rule starts its shadow on state whose shadows had all completed", () => {
    const acc = new StateAccumulator(emptyState);
    const set = assembleRuleSet({ starter: loadStarterPack(), policy: [], shadowPeriod: 7 * 86_400_000 });
    const tick = (seq: number): JournalRow => ({
      seq,
      at: T0 + seq * 60_000,
      kind: "tick",
      event: { type: "tick" },
    });
    for (let seq = 1; seq <= 3; seq++)
      acc.apply(evaluate(set, tick(seq), acc.current, scanReader([], seq, T0)).delta);
    const added = loadRuleFile(
      "rules/new-rule.toml",
      'name = "new-rule"\ndescription = "d"\non = "tick"\nwhen = "true"\nlevel = "notify"\ntarget = "fleet"\nmessage = "m"',
    );
    const more = assembleRuleSet({
      starter: loadStarterPack(),
      policy: [{ repo: "ops", loads: [added] }],
      shadowPeriod: 7 * 86_400_000,
    });
    const outcome = evaluate(more, tick(4), acc.current, scanReader([], 4, T0));
    const hash = more.rules.find((r) => r.rule.spec.name === "new-rule")?.rule.hash;
    expect(outcome.delta).toContainEqual({ op: "shadow_since", hash, since: tick(4).at });
    expect(outcome.fires.map((f) => [f.rule, f.mode])).toEqual([["new-rule", "shadow"]]);
  });
});
