import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BacktestFold, backtest, fold, type WindowFor } from "../../src/core/backtest.js";
import type { RuleLoad } from "../../src/core/compile-rule.js";
import { evaluate } from "../../src/core/evaluate.js";
import { indexRow, type JournalRow } from "../../src/core/journal.js";
import { loadRuleFile } from "../../src/core/load-rule.js";
import type { Fire } from "../../src/core/outcome.js";
import { assembleRuleSet, type RuleSet } from "../../src/core/rule-set.js";
import { loadStarterPack } from "../../src/core/starter-pack.js";
import { applyDelta, type CoreState, emptyState, StateAccumulator } from "../../src/core/state.js";
import { scanReader, selectorOf } from "../../src/core/window.js";
import {
  indexedWindows,
  type SelectorShape,
  selectorShapes,
  WindowIndex,
} from "../../src/core/window-index.js";
import { runs } from "../property-runs.js";

const T0 = Date.parse("2026-10-01T00:00:00Z");
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

/** Rows numbered in order, each `at` ms after T0 as given. */
function journal(
  rows: readonly (readonly [number, JournalRow["kind"], Record<string, unknown>])[],
): JournalRow[] {
  return rows.map(([at, kind, event], i) => ({
    seq: i + 1,
    at: T0 + at,
    kind,
    event: { type: "tick", ...event },
  }));
}

const windowOver = (rows: readonly JournalRow[]): WindowFor => {
  const indexed = rows.map(indexRow);
  return (row) => scanReader(indexed, row.seq, row.at);
};

function policyRule(name: string, fields: Record<string, string>): RuleLoad {
  const text = Object.entries({
    name,
    description: "test rule",
    target: "harness",
    message: "{{rule}} on {{harness}}",
    ...fields,
  })
    .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
    .join("\n");
  return loadRuleFile(`rules/${name}.toml`, text);
}

function ruleSet(
  options: { policy?: RuleLoad[]; enforce?: string[]; shadowPeriod?: number; costLimit?: number } = {},
): RuleSet {
  const set = assembleRuleSet({
    starter: loadStarterPack(),
    policy: options.policy === undefined ? [] : [{ repo: "ops", loads: options.policy }],
    enforce: options.enforce ?? [],
    shadowPeriod: options.shadowPeriod ?? 7 * DAY,
  });
  expect(set.disabled).toEqual([]);
  return options.costLimit === undefined ? set : { ...set, costLimit: options.costLimit };
}

function run(set: RuleSet, rows: readonly JournalRow[], state: CoreState = emptyState) {
  return fold(set, rows, state, windowOver(rows));
}

const firesOf = (outcomes: ReturnType<typeof run>["outcomes"], rule: string): Fire[] =>
  outcomes.flatMap((o) => o.fires).filter((f) => f.rule === rule);

const verify = (run: string, isError: boolean) => ({
  type: "tool",
  harness: "impl",
  run,
  action: "verify",
  is_error: isError,
  repo: "forge.example/org/reduit",
  digest: "d1",
});

describe("REQ-13 cooldown", () => {
  it("One alert per cooldown", () => {
    const rows = journal(
      [0, 5, 10, 15, 20, 25].map((m, i) => [m * MIN, "run_event", verify(i % 2 ? "impl#2" : "impl#1", true)]),
    );
    const { outcomes } = run(ruleSet(), rows);
    expect(firesOf(outcomes, "repeated-verify-failure")).toHaveLength(1);
    const suppressed = outcomes
      .flatMap((o) => o.evaluations)
      .filter((e) => e.rule === "repeated-verify-failure" && e.result === "suppressed");
    expect(suppressed).toHaveLength(4);
    expect(suppressed[0]?.detail).toBe("f-2-0");
  });
});

describe("REQ-9 shadow mode", () => {
  it("A merged rule waits a week", () => {
    const rule = policyRule("verify-flake", {
      on: "run_event",
      when: 'event.type == "tool" && event.is_error',
      level: "notify",
      cooldown: "1h",
    });
    const rows = journal([
      [0, "run_event", verify("impl#1", true)],
      [6 * DAY, "run_event", verify("impl#1", true)],
      [8 * DAY, "run_event", verify("impl#1", true)],
    ]);
    const fires = firesOf(run(ruleSet({ policy: [rule] }), rows).outcomes, "verify-flake");
    expect(fires.map((f) => [f.mode, f.action, f.actions.length])).toEqual([
      ["shadow", "none", 0],
      ["shadow", "none", 0],
      ["active", "notify", 2],
    ]);
  });

  it("An empty policy repo still sees collisions", () => {
    const rows = journal([
      [
        0,
        "graph_event",
        {
          type: "collision_started",
          scope: "file",
          repo: "r",
          path: "internal/store/store.go",
          run: "a#7",
          harness: "a",
        },
      ],
    ]);
    const [fire] = firesOf(run(ruleSet(), rows).outcomes, "same-file-collision");
    expect(fire).toMatchObject({
      mode: "active",
      declaredLevel: "annotate",
      action: "annotate",
      target: { kind: "run", key: "a#7" },
    });
  });

  it("starter rules never shadow", () => {
    const rows = journal([
      [0, "graph_event", { type: "collision_started", scope: "file", run: "a#1", harness: "a" }],
    ]);
    const [fire] = firesOf(run(ruleSet(), rows).outcomes, "same-file-collision");
    expect(fire).toMatchObject({ mode: "active", action: "annotate", target: { kind: "run", key: "a#1" } });
  });
});

describe("REQ-10 to REQ-12 levels, holds and stops", () => {
  /** A stop rule for the event's run, on every tool row. */
  const halt = () =>
    policyRule("halt", { on: "run_event", when: 'event.type == "tool"', level: "stop", target: "run" });

  it("An unlisted stop rule only notifies", () => {
    const rule = halt();
    const rows = journal([[0, "run_event", { type: "tool", harness: "impl", run: "impl#1" }]]);
    const [fire] = firesOf(run(ruleSet({ policy: [rule], shadowPeriod: 0 }), rows).outcomes, "halt");
    expect(fire).toMatchObject({ declaredLevel: "stop", effectiveLevel: "notify", action: "notify" });
    expect(fire?.actions).toEqual([{ kind: "annotate", node: "run:impl#1" }, { kind: "notify" }]);
  });

  it("An enforced stop rule stops the run in flight, and holds its harness", () => {
    const rule = halt();
    const rows = journal([
      [0, "run_event", { type: "opened", harness: "impl", run: "impl#1" }],
      [MIN, "run_event", { type: "tool", harness: "impl", run: "impl#1" }],
    ]);
    const { outcomes, state } = run(ruleSet({ policy: [rule], shadowPeriod: 0, enforce: ["halt"] }), rows);
    const [fire] = firesOf(outcomes, "halt");
    expect(fire).toMatchObject({ action: "stop" });
    expect(fire?.actions).toEqual([
      { kind: "annotate", node: "run:impl#1" },
      { kind: "notify" },
      { kind: "hold", harness: "impl" },
      { kind: "stop", harness: "impl", run: "impl#1" },
    ]);
    expect(Object.values(state.holds)).toMatchObject([{ harness: "impl", rule: "halt", fireId: fire?.id }]);
  });

  it("A late stop does not hit the next run", () => {
    const rule = halt();
    const rows = journal([
      [0, "run_event", { type: "opened", harness: "impl", run: "impl#41" }],
      [1 * MIN, "run_event", { type: "closed", harness: "impl", run: "impl#41", outcome: "success" }],
      [2 * MIN, "run_event", { type: "opened", harness: "impl", run: "impl#42" }],
      [3 * MIN, "run_event", { type: "tool", harness: "impl", run: "impl#41" }],
    ]);
    const { outcomes, state } = run(ruleSet({ policy: [rule], shadowPeriod: 0, enforce: ["halt"] }), rows);
    const [fire] = firesOf(outcomes, "halt");
    expect(fire).toMatchObject({ effectiveLevel: "stop", action: "target_gone" });
    // It still annotates, notifies and holds: only the stop has nothing left to reach.
    expect(fire?.actions.map((a) => a.kind)).toEqual(["annotate", "notify", "hold"]);
    expect(state.runs.impl).toBe("impl#42");
  });

  it("A hold-level starter rule needs the operator", () => {
    const closed = (m: number) =>
      [
        m * MIN,
        "run_event",
        { type: "closed", harness: "nightly", run: `nightly#${m}`, outcome: "failed", cause_digest: "c1" },
      ] as const;
    const { outcomes, state } = run(ruleSet(), journal([closed(0), closed(10), closed(20)]));
    expect(firesOf(outcomes, "restart-into-same-failure")).toMatchObject([
      { declaredLevel: "hold", effectiveLevel: "notify", action: "notify" },
    ]);
    expect(state.holds).toEqual({});
  });

  it("A hold clears when its evidence ages out", () => {
    const budget = (at: number, n: number) =>
      [
        at,
        "run_event",
        { type: "closed", harness: "nightly", run: `nightly#${n}`, outcome: "budget_exceeded" },
      ] as const;
    const ticks = Array.from({ length: 36 }, (_, h) => [HOUR + h * HOUR, "tick", { type: "tick" }] as const);
    const rows = journal([budget(0, 1), budget(30 * MIN, 2), ...ticks]);
    const { outcomes, state } = run(ruleSet({ enforce: ["budget-exhaustion-recurring"] }), rows);
    const [fire] = firesOf(outcomes, "budget-exhaustion-recurring");
    expect(fire).toMatchObject({ action: "hold" });
    const released = outcomes.findIndex((o) => o.releases.length > 0);
    expect(outcomes[released]?.releases).toEqual([
      {
        harness: "nightly",
        rule: "budget-exhaustion-recurring",
        fireId: fire?.id,
        cause: "condition_cleared",
      },
    ]);
    // The window is (now - 24h, now]: the first close leaves it at the 24h tick, the count drops below 2,
    // and after the rule has been false on every tick for its 6h cooldown the hold is released.
    expect((rows[released]?.at ?? 0) - T0).toBe(30 * HOUR);
    expect(state.holds).toEqual({});
  });
});

describe("REQ-12 and REQ-13 together", () => {
  it("Both guards see a loop", () => {
    const rule = policyRule("loops", {
      on: "run_event",
      when: 'event.type == "loop_stopped" && count({"type": "loop_stopped", "harness": event.harness}, duration("1h")) >= 1',
      level: "stop",
    });
    const rows = journal([
      [0, "run_event", { type: "opened", harness: "worker", run: "worker#1" }],
      [
        MIN,
        "run_event",
        { type: "loop_stopped", harness: "worker", run: "worker#1", tool: "Bash", digest: "d" },
      ],
    ]);
    const { outcomes, state } = run(ruleSet({ policy: [rule], shadowPeriod: 0, enforce: ["loops"] }), rows);
    // The guard's trip ended the run in flight, so the rule finds nothing left to stop (stopped once,
    // by the guard); its hold stands.
    expect(firesOf(outcomes, "loops")).toMatchObject([
      {
        effectiveLevel: "stop",
        action: "hold",
        actions: [{ kind: "annotate" }, { kind: "notify" }, { kind: "hold", harness: "worker" }],
      },
    ]);
    expect(state.runs.worker).toBeUndefined();
  });

  it("The hook can explain itself", () => {
    const closed = (m: number) =>
      [
        m * MIN,
        "run_event",
        { type: "closed", harness: "nightly", run: `nightly#${m}`, outcome: "failed", cause_digest: "c1" },
      ] as const;
    const [fire] = firesOf(
      run(ruleSet(), journal([closed(0), closed(10), closed(20)])).outcomes,
      "restart-into-same-failure",
    );
    expect(fire?.primitives).toEqual([
      {
        fn: "count",
        selector: selectorOf("run_event", {
          type: "closed",
          harness: "nightly",
          outcome: "failed",
          cause_digest: "c1",
        }),
        withinMs: HOUR,
        result: 3,
      },
    ]);
    expect(fire).toMatchObject({ id: "f-3-0", seq: 3, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });
});

describe("the review's regressions", () => {
  /** A fleet rule that matches every tick, with a 5m cooldown, and a tick a minute for `minutes`. */
  const everyTick = () =>
    policyRule("every", { on: "tick", when: "true", level: "notify", target: "fleet", cooldown: "5m" });
  const ticks = (minutes: number) =>
    journal(Array.from({ length: minutes }, (_, m) => [m * MIN, "tick", { type: "tick" }] as const));

  it("a tick rule's fresh cooldown survives the tick that expires the old one", () => {
    const fires = firesOf(
      run(ruleSet({ policy: [everyTick()], shadowPeriod: 0 }), ticks(12)).outcomes,
      "every",
    );
    expect(fires.map((f) => (f.at - T0) / MIN)).toEqual([0, 5, 10]);
  });

  it("run-out cooldowns are swept on the first tick of each quarter hour and suppress nothing meanwhile", () => {
    const { outcomes, state } = run(ruleSet({ policy: [everyTick()], shadowPeriod: 0 }), ticks(31));
    // A fire every five minutes, whether or not a sweep has dropped the entry that ran out before it.
    expect(firesOf(outcomes, "every").map((f) => (f.at - T0) / MIN)).toEqual([0, 5, 10, 15, 20, 25, 30]);
    const sweeps = outcomes.flatMap((o, m) =>
      o.delta.some((op) => op.op === "cooldown_expired") ? [m] : [],
    );
    expect(sweeps).toEqual([15, 30]);
    expect(Object.values(state.cooldowns).map((c) => (c.until - T0) / MIN)).toEqual([35]);
  });

  it("a fire lists only its own rule's primitive calls, exists as exists", () => {
    const plain = policyRule("a", { on: "run_event", when: 'event.type == "tool"', level: "notify" });
    const counting = policyRule("b", {
      on: "run_event",
      when: 'exists({"type": "tool"}, duration("1h"))',
      level: "notify",
    });
    const rows = journal([[0, "run_event", { type: "tool", harness: "h", run: "h#1" }]]);
    const { outcomes } = run(ruleSet({ policy: [plain, counting], shadowPeriod: 0 }), rows);
    expect(firesOf(outcomes, "a")[0]?.primitives).toEqual([]);
    expect(firesOf(outcomes, "b")[0]?.primitives).toMatchObject([{ fn: "exists", result: true }]);
  });

  it("a rule for a rare kind starts its shadow at the next row of any kind", () => {
    const rule = policyRule("rare", {
      on: "graph_event",
      when: 'event.type == "edge_added"',
      level: "notify",
    });
    const rows = journal([
      [0, "tick", { type: "tick" }],
      [8 * DAY, "graph_event", { type: "edge_added", harness: "h", run: "h#1" }],
    ]);
    expect(firesOf(run(ruleSet({ policy: [rule] }), rows).outcomes, "rare")).toMatchObject([
      { mode: "active" },
    ]);
  });

  it("backtest hold spans follow the hold and release ops, not the fires", () => {
    const rule = policyRule("holdy", {
      on: "run_event",
      when: 'event.type == "closed"',
      level: "hold",
      cooldown: "1m",
    });
    const rows = journal([
      [0, "run_event", { type: "closed", harness: "h", run: "h#1" }],
      [5 * MIN, "run_event", { type: "closed", harness: "h", run: "h#2" }],
      ...Array.from({ length: 4 }, (_, i) => [(10 + i) * MIN, "tick", { type: "tick" }] as const),
    ]);
    const set = ruleSet({ policy: [rule], shadowPeriod: 0, enforce: ["holdy"] });
    const active = set.rules.find((r) => r.rule.spec.name === "holdy");
    if (active === undefined) throw new Error("holdy not loaded");
    const replay = backtest(active, rows, windowOver(rows), { shadowPeriod: 0 });
    expect(replay.fires).toHaveLength(2);
    // The second fire meets the hold the first placed: one span, never released (the condition stays true).
    expect(replay.fires.map((f) => f.hold)).toEqual([{ harness: "h" }, undefined]);
  });

  it("backtest streams fires in seq order, each hold fire waiting until its hold ends", () => {
    const rule = policyRule("holdy", {
      on: "run_event",
      when: 'event.type == "closed" && count({"kind": "run_event", "harness": event.harness, "type": "closed"}, duration("10m")) >= 1',
      level: "hold",
      cooldown: "1m",
    });
    const rows = journal([
      [0, "run_event", { type: "closed", harness: "h", run: "h#1" }],
      [MIN, "run_event", { type: "closed", harness: "g", run: "g#1" }],
      ...Array.from({ length: 14 }, (_, i) => [(2 + i) * MIN, "tick", { type: "tick" }] as const),
    ]);
    const set = ruleSet({ policy: [rule], shadowPeriod: 0, enforce: ["holdy"] });
    const active = set.rules.find((r) => r.rule.spec.name === "holdy");
    if (active === undefined) throw new Error("holdy not loaded");
    const fold = new BacktestFold(active, { shadowPeriod: 0 });
    const window = windowOver(rows);
    const streamed = rows.map((row) => fold.step(row, window(row)).map((f) => [row.seq, f.fire.seq]));
    // Each fire waits on its own hold and comes back with the tick that releases it, in seq order.
    const whole = backtest(active, rows, windowOver(rows), { shadowPeriod: 0 });
    const untils = whole.fires.map((f) => f.hold?.until?.seq);
    expect(untils.every((u) => u !== undefined)).toBe(true);
    expect(streamed.flat()).toEqual([
      [untils[0], 1],
      [untils[1], 2],
    ]);
    expect(whole.counts).toMatchObject({ rows: rows.length, evaluations: 2, fires: 2 });
  });

  it("indexes a selector whose kind is computed for every kind it may name", () => {
    const rule = policyRule("computed", {
      on: "run_event",
      when: 'count({"kind": event.type == "x" ? "run_event" : "graph_event", "type": "edge_added"}, duration("1h")) >= 1',
      level: "notify",
    });
    const rows = journal([
      [0, "graph_event", { type: "edge_added", harness: "h", run: "h#1" }],
      [MIN, "run_event", { type: "tool", harness: "h", run: "h#1" }],
    ]);
    const set = ruleSet({ policy: [rule], shadowPeriod: 0 });
    const shapes = selectorShapes(set.rules.map((r) => r.rule));
    const scanned = fold(set, rows, emptyState, windowOver(rows));
    const indexed = fold(set, rows, emptyState, indexedWindows(rows, shapes));
    expect(indexed.outcomes).toEqual(scanned.outcomes);
    expect(firesOf(indexed.outcomes, "computed")).toHaveLength(1);
  });
});

describe("REQ-7 order", () => {
  it("Order is by sequence, not source timestamp", () => {
    // A tool row whose own time is earlier is admitted after a closed row: evaluation follows seq.
    const rows: JournalRow[] = [
      {
        seq: 1,
        at: T0,
        kind: "run_event",
        event: { type: "closed", harness: "h", run: "h#1", outcome: "failed", at: T0 },
      },
      {
        seq: 2,
        at: T0 + 1000,
        kind: "run_event",
        event: { type: "tool", harness: "h", run: "h#1", at: T0 - 60_000 },
      },
    ];
    const { outcomes } = run(ruleSet(), rows);
    expect(outcomes.map((o) => o.evaluations[0]?.rule && rows[outcomes.indexOf(o)]?.seq)).toEqual([1, 2]);
  });
});

describe("REQ-6 isolation", () => {
  it("One bad rule does not stop the rest", () => {
    const bad = policyRule("a", { on: "run_event", when: "event.exit_code / 0 == 1", level: "notify" });
    const good = policyRule("b", { on: "run_event", when: 'event.type == "tool"', level: "notify" });
    const rows = journal([[0, "run_event", { type: "tool", harness: "impl", run: "impl#1" }]]);
    const { outcomes } = run(ruleSet({ policy: [bad, good], shadowPeriod: 0 }), rows);
    expect(outcomes[0]?.evaluations.find((e) => e.rule === "a")).toMatchObject({
      result: "eval_error",
      detail: "divide by zero",
    });
    expect(firesOf(outcomes, "b")).toHaveLength(1);
  });

  it("A runtime cost overrun disables only that rule", () => {
    const heavy = policyRule("a", {
      on: "run_event",
      when: 'event.paths.exists(p, p == "x")',
      level: "notify",
    });
    const light = policyRule("b", { on: "run_event", when: 'event.type == "tool"', level: "notify" });
    const paths = Array.from({ length: 64 }, (_, i) => `dir/file${i}.go`);
    const rows = journal([
      [0, "run_event", { type: "tool", harness: "impl", run: "impl#1", paths }],
      [MIN, "run_event", { type: "tool", harness: "impl", run: "impl#1", paths }],
    ]);
    const { outcomes, state } = run(
      ruleSet({ policy: [heavy, light], shadowPeriod: 0, costLimit: 50 }),
      rows,
    );
    expect(outcomes[0]?.evaluations.find((e) => e.rule === "a")?.result).toBe("cost_exceeded");
    expect(outcomes[1]?.evaluations.find((e) => e.rule === "a")).toBeUndefined();
    expect(firesOf(outcomes, "b")).toHaveLength(1);
    expect(Object.keys(state.costExceeded)).toHaveLength(1);
  });
});

describe("messages", () => {
  it("render identifiers only, redacted", () => {
    const rule = policyRule("m", {
      on: "run_event",
      when: 'event.type == "tool"',
      level: "notify",
      message: "{{rule}} {{level}} {{harness}} {{branch}} {{at}}",
    });
    const rows = journal([
      [
        0,
        "run_event",
        { type: "tool", harness: "impl", run: "impl#1", branch: "https://bob:hunter2@forge.example/x" },
      ],
    ]);
    const [fire] = firesOf(run(ruleSet({ policy: [rule], shadowPeriod: 0 }), rows).outcomes, "m");
    expect(fire?.message).toBe("m notify impl https://[redacted]@forge.example/x 2026-10-01T00:00:00Z");
  });
});

/**
 * Generated journals: tool, mark, opened, closed, loop_stopped, attempts (hook-fed or not), graph events
 * and ticks over two harnesses.
 */
const journals = fc
  .array(
    fc.record({
      gap: fc.integer({ min: 0, max: 90 * MIN }),
      kind: fc.constantFrom("run_event", "run_event", "run_event", "attempt_event", "graph_event", "tick"),
      harness: fc.constantFrom("impl", "nightly"),
      n: fc.integer({ min: 1, max: 3 }),
      type: fc.constantFrom("tool", "opened", "closed", "loop_stopped"),
      action: fc.constantFrom("verify", "edit"),
      isError: fc.boolean(),
      outcome: fc.constantFrom("failed", "budget_exceeded", "success"),
      digest: fc.constantFrom("d1", "d2"),
      graphType: fc.constantFrom("edge_added", "collision_started"),
      path: fc.constantFrom("a.go", "b.go"),
      tool: fc.constantFrom("Bash", "Edit"),
      hookFed: fc.boolean(),
    }),
    { maxLength: 60 },
  )
  .map((specs) => {
    let at = 0;
    return specs.map((s, i): JournalRow => {
      at += s.gap;
      const run = `${s.harness}#${s.n}`;
      const event =
        s.kind === "tick"
          ? { type: "tick" }
          : s.kind === "attempt_event"
            ? {
                type: "tool",
                harness: s.harness,
                run,
                tool: s.tool,
                action: s.action,
                digest: s.digest,
                repo: "r",
                ...(s.hookFed ? { hook_fed: true } : {}),
              }
            : s.kind === "graph_event"
              ? {
                  type: s.graphType,
                  edge: "edited",
                  scope: "file",
                  repo: "r",
                  path: s.path,
                  harness: s.harness,
                  run,
                }
              : {
                  type: s.type,
                  harness: s.harness,
                  run,
                  action: s.action,
                  is_error: s.isError,
                  outcome: s.outcome,
                  cause_digest: "c1",
                  tool: s.tool,
                  digest: s.digest,
                  repo: "r",
                };
      return { seq: i + 1, at: T0 + at, kind: s.kind as JournalRow["kind"], event };
    });
  });

/** A journal that reaches attempt-stops, attempt-holds and bash-tools-counted: random seeds may miss one. */
const REACHES_EVERY_ATTEMPT_FIRE: JournalRow[] = [
  ["run_event", { type: "opened" }],
  ["attempt_event", { type: "tool", tool: "Edit", action: "edit", digest: "d2", hook_fed: true }],
  ["run_event", { type: "tool", tool: "Bash", action: "verify", is_error: false, digest: "d1" }],
  ["run_event", { type: "tool", tool: "Bash", action: "verify", is_error: false, digest: "d1" }],
  ["attempt_event", { type: "tool", tool: "Bash", action: "verify", digest: "d1", hook_fed: true }],
  ["attempt_event", { type: "tool", tool: "Bash", action: "verify", digest: "d1", hook_fed: true }],
].map(([kind, fields], i) => ({
  seq: i + 1,
  at: T0 + i * MIN,
  kind: kind as JournalRow["kind"],
  event: { harness: "impl", run: "impl#1", repo: "r", ...(fields as { type: string }) },
}));

const ENFORCE = ["restart-into-same-failure", "budget-exhaustion-recurring", "loop-stop-recurs"];
/**
 * Rules over attempts, and one over tool rows whose selector names a tool but no kind: it defaults to
 * the rule's `on`, so attempts are never counted with the tool rows.
 */
const ATTEMPT_RULES = [
  policyRule("attempt-stops", {
    on: "attempt_event",
    when: 'event.tool == "Bash" && count({"digest": event.digest, "harness": event.harness}, duration("2h")) >= 2',
    level: "stop",
    target: "run",
    cooldown: "1m",
  }),
  policyRule("attempt-holds", {
    on: "attempt_event",
    when: 'event.action == "verify" && exists({"tool": "Edit", "harness": event.harness}, duration("30m"))',
    level: "hold",
    cooldown: "10m",
  }),
  policyRule("bash-tools-counted", {
    on: "run_event",
    when: 'event.type == "tool" && count({"tool": "Bash"}, duration("2h")) >= 2',
    level: "notify",
    cooldown: "1m",
  }),
];
/** Stop rules the generated journals set off: a harness target (stops or holds) and a run target (late). */
const HALTS = [
  policyRule("halt-harness", {
    on: "run_event",
    when: 'event.type == "tool" && event.is_error',
    level: "stop",
    cooldown: "1m",
  }),
  policyRule("halt-run", {
    on: "run_event",
    when: 'event.type == "closed" || (event.type == "tool" && !event.is_error)',
    level: "stop",
    target: "run",
    cooldown: "1m",
  }),
];

describe("properties of the fold", () => {
  it("an interrupted fold, its state serialized and restored, equals one uninterrupted fold", () => {
    fc.assert(
      fc.property(journals, fc.nat(), (rows, cut) => {
        const set = ruleSet({ enforce: ENFORCE });
        const whole = fold(set, rows, emptyState, windowOver(rows));
        const at = rows.length === 0 ? 0 : cut % (rows.length + 1);
        const first = fold(set, rows.slice(0, at), emptyState, windowOver(rows));
        const restored = JSON.parse(JSON.stringify(first.state)) as CoreState;
        const second = fold(set, rows.slice(at), restored, windowOver(rows));
        expect([...first.outcomes, ...second.outcomes]).toEqual(whole.outcomes);
        expect(second.state).toEqual(whole.state);
      }),
      { numRuns: runs(150) },
    );
  });

  it("a backtest of each rule lists exactly the (seq, target) pairs of its live fires", () => {
    const fired = new Set<string>();
    fc.assert(
      fc.property(journals, (rows) => {
        const set = ruleSet({
          enforce: [...ENFORCE, "attempt-stops", "attempt-holds"],
          policy: ATTEMPT_RULES,
          shadowPeriod: 0,
        });
        const live = fold(set, rows, emptyState, windowOver(rows)).outcomes.flatMap((o) => o.fires);
        for (const f of live) fired.add(`${f.rule} ${f.action}`);
        for (const active of set.rules) {
          const replay = backtest(active, rows, windowOver(rows), { shadowPeriod: set.shadowPeriod });
          const pairs = (fs: readonly Fire[]) =>
            fs.map((f) => [f.seq, f.target?.key, f.mode, f.effectiveLevel]);
          expect(pairs(replay.fires.map((f) => f.fire)), active.rule.spec.name).toEqual(
            pairs(live.filter((f) => f.rule === active.rule.spec.name)),
          );
        }
      }),
      { numRuns: runs(150), examples: [[REACHES_EVERY_ATTEMPT_FIRE]] },
    );
    // Every run, whatever the seed, includes a journal reaching the attempts' enforced stop and hold.
    expect([...fired]).toEqual(
      expect.arrayContaining(["attempt-stops stop", "attempt-holds hold", "bash-tools-counted notify"]),
    );
  });

  it("adding a rule that fails on every row changes no other rule's fires", () => {
    const failing: RuleLoad[] = [
      policyRule("zz-error", { on: "run_event", when: "event.exit_code / 0 == 1", level: "notify" }),
      // Fits the 5,000-unit estimate, overruns the 1,000-unit limit injected below on every graph row.
      policyRule("aa-cost", {
        on: "graph_event",
        when: `[${Array.from({ length: 200 }, (_, i) => i).join(", ")}].exists(x, x == -1)`,
        level: "notify",
      }),
    ];
    fc.assert(
      fc.property(journals, (rows) => {
        const fires = (set: RuleSet) =>
          fold(set, rows, emptyState, windowOver(rows))
            .outcomes.flatMap((o) => o.fires)
            .filter((f) => f.rule !== "zz-error" && f.rule !== "aa-cost")
            .map((f) => [f.rule, f.seq, f.action]);
        // Every starter rule's estimate is under 300 units, so 1,000 binds only the failing rule.
        const plain = ruleSet({ enforce: ENFORCE, costLimit: 1000 });
        const withFailing = ruleSet({ enforce: ENFORCE, policy: failing, shadowPeriod: 0, costLimit: 1000 });
        const failed = fold(withFailing, rows, emptyState, windowOver(rows)).outcomes.flatMap(
          (o) => o.evaluations,
        );
        if (rows.some((r) => r.kind === "graph_event")) {
          expect(failed.some((e) => e.rule === "aa-cost" && e.result === "cost_exceeded")).toBe(true);
        }
        expect(fires(withFailing)).toEqual(fires({ ...plain, shadowPeriod: 0 }));
      }),
      { numRuns: runs(100) },
    );
  });

  it("a fire plans a hold exactly when its row places one, and stops only the run in flight", () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(journals, (rows) => {
        const set = ruleSet({
          enforce: [...ENFORCE, "halt-harness", "halt-run", "attempt-stops", "attempt-holds"],
          policy: [...HALTS, ...ATTEMPT_RULES],
          shadowPeriod: 0,
        });
        const acc = new StateAccumulator(emptyState);
        for (const row of rows) {
          const outcome = evaluate(set, row, acc.current, windowOver(rows)(row));
          const placed = outcome.delta.flatMap((op) => (op.op === "hold" ? [op.hold.fireId] : []));
          const planned = outcome.fires.filter((f) => f.actions.some((a) => a.kind === "hold"));
          expect(planned.map((f) => f.id)).toEqual(placed);
          acc.apply(outcome.delta);
          // The row's own opened, closed or loop_stopped has moved the run in flight before any rule ran.
          for (const f of outcome.fires) {
            seen.add(f.action);
            for (const a of f.actions) {
              if (a.kind !== "stop") continue;
              // A hook-fed run's stop names the sessions in flight; any other, the harness's run in flight.
              if (a.sessions === undefined) expect(acc.current.runs[a.harness]).toBe(a.run);
              else for (const r of a.sessions) expect(acc.current.sessions[r]).toBe(a.harness);
            }
          }
        }
      }),
      { numRuns: runs(100) },
    );
    // The generator reaches every outcome of an enforced stop.
    expect([...seen]).toEqual(expect.arrayContaining(["stop", "hold", "target_gone"]));
  });

  it("state changes only through its deltas", () => {
    fc.assert(
      fc.property(journals, (rows) => {
        const set = ruleSet({ enforce: ENFORCE });
        const { outcomes, state } = fold(set, rows, emptyState, windowOver(rows));
        expect(outcomes.reduce((s, o) => applyDelta(s, o.delta), emptyState)).toEqual(state);
      }),
      { numRuns: runs(50) },
    );
  });
});

describe("the window index", () => {
  it("forgets the tuple it looked up last once a row is added or what it found is pruned", () => {
    const shape: SelectorShape = {
      kind: "run_event",
      keys: ["harness"],
      distinctFields: [],
      literals: new Map(),
    };
    const index = new WindowIndex([shape]);
    const sel = selectorOf("run_event", { harness: "h" });
    const row = (seq: number, at: number): JournalRow => ({
      seq,
      at,
      kind: "run_event",
      event: { type: "tool", harness: "h", run: "h#1" },
    });
    // Asked before any row reached the tuple, then again after one did.
    expect(index.readerAt(T0).count(sel, HOUR)).toBe(0);
    index.add(row(1, T0));
    expect(index.readerAt(T0).count(sel, HOUR)).toBe(1);
    // The tuple's bucket pruned away, and a later row making a new one.
    index.prune(T0);
    index.add(row(2, T0 + MIN));
    expect(index.readerAt(T0 + MIN).count(sel, HOUR)).toBe(1);
  });

  it("agrees with a naive scan of the rows, and so does every fold over it", () => {
    fc.assert(
      fc.property(journals, (rows) => {
        const set = ruleSet({ enforce: ENFORCE });
        const shapes = selectorShapes(set.rules.map((r) => r.rule));
        const scanned = fold(set, rows, emptyState, windowOver(rows));
        const indexed = fold(set, rows, emptyState, indexedWindows(rows, shapes));
        expect(indexed.outcomes).toEqual(scanned.outcomes);
      }),
      { numRuns: runs(150) },
    );
  });

  it("prunes what no window can reach and still answers like the scan", () => {
    const shapes = [
      { kind: "run_event" as const, keys: ["harness" as const], distinctFields: ["run" as const] },
    ].map((x) => ({
      ...x,
      keys: [...x.keys],
      distinctFields: [...x.distinctFields],
      literals: new Map(),
    }));
    const rows = journal(
      [0, 3 * DAY, 6 * DAY, 8 * DAY, 9 * DAY, 10 * DAY].map(
        (at, i) => [at, "run_event", { type: "tool", harness: "h", run: `h#${i}` }] as const,
      ),
    );
    const windows = indexedWindows(rows, shapes);
    const sel = selectorOf("run_event", { harness: "h" });
    for (const row of rows) {
      const indexed = windows(row);
      const scan = scanReader(rows.map(indexRow), row.seq, row.at);
      expect([indexed.count(sel, 7 * DAY), indexed.distinct("run", sel, 7 * DAY)]).toEqual([
        scan.count(sel, 7 * DAY),
        scan.distinct("run", sel, 7 * DAY),
      ]);
    }
  });

  it("indexes only rows a literal selector can reach, and answers like the scan", () => {
    const rule = policyRule("verify", {
      on: "run_event",
      when: 'count({"type": "tool", "action": "verify", "repo": event.repo}, duration("1h")) >= 1 || count({"type": "closed", "action": "verify", "repo": "r"}, duration("1h")) >= 1',
      level: "notify",
    });
    if (!rule.ok) throw new Error(rule.problem.message);
    const shapes = selectorShapes([rule.rule]);
    // `repo` is computed in one selector, so only `type` and `action` filter, `type` by either literal.
    expect(shapes.map((s) => [...s.literals].map(([k, v]) => [k, [...v].sort()]))).toEqual([
      [
        ["type", ["closed", "tool"]],
        ["action", ["verify"]],
      ],
    ]);
    const rows = journal([
      [0, "run_event", { type: "tool", action: "verify", repo: "r", harness: "h", run: "h#1" }],
      [MIN, "run_event", { type: "tool", action: "edit", repo: "r", harness: "h", run: "h#1" }],
      [2 * MIN, "run_event", { type: "closed", action: "verify", repo: "r", harness: "h", run: "h#1" }],
      [3 * MIN, "run_event", { type: "opened", repo: "r", harness: "h", run: "h#2" }],
    ]);
    const index = new WindowIndex(shapes);
    for (const row of rows) index.add(row);
    expect(index.size).toBe(2);
    const reader = index.readerAt(T0 + 3 * MIN);
    const scan = scanReader(rows.map(indexRow), 4, T0 + 3 * MIN);
    for (const [type, action] of [
      ["tool", "verify"],
      ["tool", "edit"],
      ["closed", "verify"],
    ] as const) {
      const sel = selectorOf("run_event", { type, action, repo: "r" });
      expect(reader.count(sel, HOUR), `${type} ${action}`).toBe(
        type === "tool" && action === "edit" ? 0 : scan.count(sel, HOUR),
      );
    }
  });

  it("answers count and distinct like the scan for every selector shape, path keys included", () => {
    const rows = journal([
      [0, "graph_event", { type: "edge_added", edge: "edited", repo: "r", path: "a.go", run: "x#1" }],
      [MIN, "graph_event", { type: "edge_added", edge: "edited", repo: "r", path: "a.go", run: "x#2" }],
      [2 * MIN, "run_event", { type: "tool", harness: "h", run: "h#1", paths: ["a.go", "a.go", "b.go"] }],
      [90 * MIN, "graph_event", { type: "edge_added", edge: "edited", repo: "r", path: "a.go", run: "x#1" }],
    ]);
    const shapes = [
      {
        kind: "graph_event" as const,
        keys: ["edge", "path", "repo"] as const,
        distinctFields: ["run"] as const,
      },
      { kind: "run_event" as const, keys: ["path"] as const, distinctFields: ["path"] as const },
    ].map((s) => ({ ...s, keys: [...s.keys], distinctFields: [...s.distinctFields], literals: new Map() }));
    const windows = indexedWindows(rows, shapes);
    const last = rows[3] as JournalRow;
    const indexed = windows(last);
    const scan = scanReader(rows.map(indexRow), last.seq, last.at);
    const sel = selectorOf("graph_event", { edge: "edited", repo: "r", path: "a.go" });
    for (const within of [HOUR, 2 * HOUR]) {
      expect(indexed.count(sel, within)).toBe(scan.count(sel, within));
      expect(indexed.distinct("run", sel, within)).toBe(scan.distinct("run", sel, within));
    }
    const byPath = selectorOf("run_event", { path: "a.go" });
    expect(indexed.count(byPath, 2 * HOUR)).toBe(1);
    expect(scan.count(byPath, 2 * HOUR)).toBe(1);
  });
});

describe("attempts (attempt_event)", () => {
  const attempt = (run: string, fields: Record<string, unknown> = {}) => ({
    type: "tool",
    harness: "impl",
    run,
    tool: "Bash",
    action: "exec",
    digest: "d1",
    hook_fed: true,
    ...fields,
  });
  const tool = (run: string) => ({ type: "tool", harness: "impl", run, tool: "Bash", action: "exec" });

  it("a selector without a kind on a run_event rule counts tool rows, never attempts", () => {
    const counting = policyRule("bash-thrice", {
      on: "run_event",
      when: 'event.type == "tool" && count({"tool": "Bash"}, duration("1h")) >= 3',
      level: "notify",
    });
    // Each call is an attempt then a tool row: two calls are four Bash rows, two of each kind.
    const rows = journal([
      [0, "attempt_event", attempt("impl#1")],
      [MIN, "run_event", tool("impl#1")],
      [2 * MIN, "attempt_event", attempt("impl#1")],
      [3 * MIN, "run_event", tool("impl#1")],
    ]);
    const { outcomes } = run(ruleSet({ policy: [counting], shadowPeriod: 0 }), rows);
    expect(firesOf(outcomes, "bash-thrice")).toEqual([]);
    const third = journal([
      [0, "attempt_event", attempt("impl#1")],
      [MIN, "run_event", tool("impl#1")],
      [2 * MIN, "run_event", tool("impl#1")],
      [3 * MIN, "run_event", tool("impl#1")],
    ]);
    expect(
      firesOf(run(ruleSet({ policy: [counting], shadowPeriod: 0 }), third).outcomes, "bash-thrice"),
    ).toHaveLength(1);
  });

  it("an enforced stop on an attempt stops its hook-fed run, whether or not its opening arrived", () => {
    const stops = policyRule("push-stops", {
      on: "attempt_event",
      when: 'event.tool == "Bash" && event.digest == "d1"',
      level: "stop",
      target: "run",
    });
    const rows = journal([
      [0, "run_event", { type: "opened", harness: "impl", run: "impl#1", hook_fed: true }],
      [MIN, "attempt_event", attempt("impl#1")],
      // Its SessionStart never arrived: the attempt is the run's first row.
      [2 * MIN, "attempt_event", attempt("impl#2")],
    ]);
    const { outcomes, state } = run(
      ruleSet({ policy: [stops], enforce: ["push-stops"], shadowPeriod: 0 }),
      rows,
    );
    const fired = firesOf(outcomes, "push-stops");
    expect(fired.map((f) => [f.seq, f.kind, f.action])).toEqual([
      [2, "attempt_event", "stop"],
      [3, "attempt_event", "stop"],
    ]);
    expect(fired.map((f) => f.actions.find((a) => a.kind === "stop"))).toEqual([
      { kind: "stop", harness: "impl", run: "impl#1", sessions: ["impl#1"] },
      { kind: "stop", harness: "impl", run: "impl#2", sessions: ["impl#2"] },
    ]);
    expect(state.sessions).toEqual({ "impl#1": "impl", "impl#2": "impl" });
  });

  it("an attempt not marked hook-fed is no session in flight", () => {
    const rows = journal([[0, "attempt_event", attempt("impl#1", { hook_fed: undefined })]]);
    expect(run(ruleSet(), rows).state.sessions).toEqual({});
  });
});
