import { describe, expect, it } from "vitest";
import { WINDOW } from "../../src/core/environments.js";
import { evaluate } from "../../src/core/evaluate.js";
import type { JournalRow } from "../../src/core/journal.js";
import { loadRuleFile } from "../../src/core/load-rule.js";
import { planOf } from "../../src/core/rule-plan.js";
import { assembleRuleSet, type RuleSet } from "../../src/core/rule-set.js";
import { loadStarterPack } from "../../src/core/starter-pack.js";
import { emptyState, StateAccumulator } from "../../src/core/state.js";
import { scanReader } from "../../src/core/window.js";

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

describe("the rule plan", () => {
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
