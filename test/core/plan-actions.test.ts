import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FireAction, Mode } from "../../src/core/outcome.js";
import { type FirePlan, type PlanState, planActions } from "../../src/core/plan-actions.js";
import { atLeast, LEVELS, type Level } from "../../src/core/rule-file.js";
import { annotationNode, type ResolvedTarget } from "../../src/core/targets.js";
import { runs } from "../property-runs.js";

const state = (
  options: { held?: boolean; inFlight?: string | undefined; sessions?: readonly string[] } = {},
): PlanState => ({
  held: () => options.held === true,
  runInFlight: () => options.inFlight,
  sessionsOf: () => options.sessions ?? [],
});
const runTarget = (run: string): ResolvedTarget => ({ kind: "run", key: run, harness: "h", run });
const harnessTarget = (harness: string): ResolvedTarget => ({
  kind: "harness",
  key: harness,
  harness,
  run: undefined,
});
const FLEET: ResolvedTarget = { kind: "fleet", key: "fleet", harness: undefined, run: undefined };
const NODE: ResolvedTarget = { kind: "node", key: "file:r:a.go", harness: "h", run: "h#1" };

describe("the actions a fire plans (REQ-10 to REQ-12)", () => {
  const cases: [string, Level, ResolvedTarget | undefined, PlanState, FirePlan][] = [
    [
      "annotate writes the node's annotation",
      "annotate",
      NODE,
      state(),
      { action: "annotate", actions: [{ kind: "annotate", node: "file:r:a.go" }] },
    ],
    ["a fleet target has no node to annotate", "annotate", FLEET, state(), { action: "none", actions: [] }],
    [
      "notify on the fleet only notifies",
      "notify",
      FLEET,
      state(),
      { action: "notify", actions: [{ kind: "notify" }] },
    ],
    [
      "notify also annotates the run's node",
      "notify",
      runTarget("h#1"),
      state(),
      {
        action: "notify",
        actions: [{ kind: "annotate", node: "run:h#1" }, { kind: "notify" }],
      },
    ],
    [
      "hold also holds the harness",
      "hold",
      harnessTarget("h"),
      state(),
      {
        action: "hold",
        actions: [
          { kind: "annotate", node: "harness:h" },
          { kind: "notify" },
          { kind: "hold", harness: "h" },
        ],
      },
    ],
    [
      "a harness its rule holds already is not held twice",
      "hold",
      harnessTarget("h"),
      state({ held: true }),
      { action: "hold", actions: [{ kind: "annotate", node: "harness:h" }, { kind: "notify" }] },
    ],
    [
      "stop also stops the target run in flight",
      "stop",
      runTarget("h#1"),
      state({ inFlight: "h#1" }),
      {
        action: "stop",
        actions: [
          { kind: "annotate", node: "run:h#1" },
          { kind: "notify" },
          { kind: "hold", harness: "h" },
          { kind: "stop", harness: "h", run: "h#1" },
        ],
      },
    ],
    [
      "A late stop does not hit the next run",
      "stop",
      runTarget("h#41"),
      state({ inFlight: "h#42" }),
      {
        action: "target_gone",
        actions: [{ kind: "annotate", node: "run:h#41" }, { kind: "notify" }, { kind: "hold", harness: "h" }],
      },
    ],
    [
      "a stop reaches a hook-fed run in flight that is not the harness's latest",
      "stop",
      runTarget("h#a"),
      state({ inFlight: "h#b", sessions: ["h#a", "h#b"] }),
      {
        action: "stop",
        actions: [
          { kind: "annotate", node: "run:h#a" },
          { kind: "notify" },
          { kind: "hold", harness: "h" },
          { kind: "stop", harness: "h", run: "h#a", sessions: ["h#a"] },
        ],
      },
    ],
    [
      "a harness target stops every hook-fed run of it in flight",
      "stop",
      harnessTarget("h"),
      state({ inFlight: "h#b", sessions: ["h#a", "h#b"] }),
      {
        action: "stop",
        actions: [
          { kind: "annotate", node: "harness:h" },
          { kind: "notify" },
          { kind: "hold", harness: "h" },
          { kind: "stop", harness: "h", run: "h#b", sessions: ["h#a", "h#b"] },
        ],
      },
    ],
    [
      "a stop for a hook-fed run already closed is target_gone",
      "stop",
      runTarget("h#a"),
      state({ inFlight: undefined, sessions: ["h#b"] }),
      {
        action: "target_gone",
        actions: [{ kind: "annotate", node: "run:h#a" }, { kind: "notify" }, { kind: "hold", harness: "h" }],
      },
    ],
    [
      "a harness target stops the run in flight",
      "stop",
      harnessTarget("h"),
      state({ inFlight: "h#7" }),
      {
        action: "stop",
        actions: [
          { kind: "annotate", node: "harness:h" },
          { kind: "notify" },
          { kind: "hold", harness: "h" },
          { kind: "stop", harness: "h", run: "h#7" },
        ],
      },
    ],
    [
      "a harness target with no run in flight is held",
      "stop",
      harnessTarget("h"),
      state(),
      {
        action: "hold",
        actions: [
          { kind: "annotate", node: "harness:h" },
          { kind: "notify" },
          { kind: "hold", harness: "h" },
        ],
      },
    ],
    [
      "hold on a run that names no harness takes no action",
      "hold",
      { kind: "run", key: "h#1", harness: undefined, run: "h#1" },
      state(),
      { action: "no_target", actions: [] },
    ],
    [
      "a fire without its target takes no action",
      "stop",
      undefined,
      state(),
      { action: "no_target", actions: [] },
    ],
  ];
  it.each(cases)("%s", (_, level, target, s, plan) => {
    expect(planActions(level, "active", target, s)).toEqual(plan);
  });

  it("In shadow no level acts", () => {
    for (const level of LEVELS)
      expect(planActions(level, "shadow", runTarget("h#1"), state({ inFlight: "h#1" }))).toEqual({
        action: "none",
        actions: [],
      });
  });
});

const level = fc.constantFrom(...LEVELS);
const mode = fc.constantFrom<Mode>("shadow", "active");
const harness = fc.constantFrom("h", "g");
const run = fc.constantFrom("h#1", "h#2", "g#1");
const target: fc.Arbitrary<ResolvedTarget | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.constant(FLEET),
  fc
    .record({
      kind: fc.constant("run" as const),
      run,
      harness: fc.option(harness, { nil: undefined }),
    })
    .map((t) => ({ ...t, key: t.run })),
  harness.map(harnessTarget),
  fc.record({
    kind: fc.constant("node" as const),
    key: fc.constantFrom("file:r:a.go", "fact:1"),
    harness: fc.option(harness, { nil: undefined }),
    run: fc.option(run, { nil: undefined }),
  }),
);
const planState = fc
  .record({ held: fc.boolean(), inFlight: fc.option(run, { nil: undefined }) })
  .map((o) => state(o));

const kinds = (actions: readonly FireAction[]) => actions.map((a) => a.kind);

describe("properties of the plans", () => {
  it("a shadow fire, or one without its target, plans no action", () => {
    fc.assert(
      fc.property(level, target, planState, (l, t, s) => {
        expect(planActions(l, "shadow", t, s).actions).toEqual([]);
        expect(planActions(l, "active", undefined, s)).toEqual({ action: "no_target", actions: [] });
      }),
      { numRuns: runs(200) },
    );
  });

  it("actions are cumulative by level: a lower level's actions begin a higher one's", () => {
    fc.assert(
      fc.property(level, level, mode, target, planState, (a, b, m, t, s) => {
        const [lower, higher] = atLeast(b, a) ? [a, b] : [b, a];
        // Hold and stop need the target's harness; without one they act not at all (REQ-3).
        fc.pre(t?.harness !== undefined || !atLeast(higher, "hold"));
        const low = planActions(lower, m, t, s).actions;
        expect(planActions(higher, m, t, s).actions.slice(0, low.length)).toEqual(low);
      }),
      { numRuns: runs(300) },
    );
  });

  it("actions come in level order, each kind once, and the fire log's word agrees with them", () => {
    const order = ["annotate", "notify", "hold", "stop"];
    fc.assert(
      fc.property(level, mode, target, planState, (l, m, t, s) => {
        const plan = planActions(l, m, t, s);
        const ks = kinds(plan.actions);
        expect(ks).toEqual(order.filter((k) => ks.includes(k as FireAction["kind"])));
        expect(ks.includes("stop")).toBe(plan.action === "stop");
        if (plan.action === "no_target" || plan.action === "none") expect(ks).toEqual([]);
        if (plan.action === "annotate") expect(ks).toEqual(["annotate"]);
        // Nothing above the level acts, and only hold and stop act on a harness.
        if (ks.includes("notify")) expect(atLeast(l, "notify")).toBe(true);
        if (ks.includes("hold") || ks.includes("stop")) expect(atLeast(l, "hold")).toBe(true);
        if (ks.includes("stop")) expect(l).toBe("stop");
      }),
      { numRuns: runs(300) },
    );
  });

  it("an annotation names the target's node, a hold the harness not yet held, a stop the run in flight", () => {
    fc.assert(
      fc.property(level, target, fc.boolean(), fc.option(run, { nil: undefined }), (l, t, held, inFlight) => {
        const plan = planActions(l, "active", t, state({ held, inFlight }));
        for (const a of plan.actions) {
          if (a.kind === "annotate") expect(a.node).toBe(t === undefined ? undefined : annotationNode(t));
          if (a.kind === "hold") {
            expect(held).toBe(false);
            expect(a.harness).toBe(t?.harness);
          }
          if (a.kind === "stop") {
            expect(a).toEqual({ kind: "stop", harness: t?.harness, run: inFlight });
            if (t?.kind === "run") expect(t.run).toBe(inFlight);
          }
        }
      }),
      { numRuns: runs(300) },
    );
  });
});
