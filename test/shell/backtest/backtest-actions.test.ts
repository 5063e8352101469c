/**
 * The actions of issue 15's "house": `evaluate` plans each fire's actions, the live evaluator only
 * carries them out, and a backtest's fires carry the same plans. A real daemon evaluates the fleet-month
 * fixture live, with the starter hold rule restart-into-same-failure and two stop rules enforced (one
 * stopping the target run, one the harness's run in flight), recording every stop command it runs;
 * then every loaded rule is backtested over the same store through the core's `BacktestFold`, as the
 * daemon's replay runs it, and each fire's actions are compared with what the store and the stop
 * commands recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BacktestFire, BacktestFold } from "../../../src/core/backtest.js";
import { loadRuleFile } from "../../../src/core/load-rule.js";
import { atLeast, type Level } from "../../../src/core/rule-file.js";
import { type ActiveRule, activeRule } from "../../../src/core/rule-set.js";
import { loadStarterPack } from "../../../src/core/starter-pack.js";
import { selectorShapes, WindowFeed } from "../../../src/core/window-index.js";
import { readShadows } from "../../../src/shell/store/decision-store.js";
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import { openStoreReadOnly } from "../../../src/shell/store/open-store.js";
import { evaluatorCursor, fires } from "../../support/store-reads.js";
import { TestFleet } from "../daemon-harness.js";
import { evaluateMonthLive } from "../fleet-month.js";
import { plannedLines, recordedLines } from "../recorded-actions.js";

const rule = (name: string, fields: Record<string, string>) => ({
  name,
  text: Object.entries({ name, description: "test rule", ...fields })
    .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
    .join("\n"),
});
/** Over the month these stop, find their run gone (a budget close ends it first), and hold. */
const STOP_RULES = [
  rule("halt-run", {
    on: "run_event",
    when: '(event.type == "closed" && event.outcome == "budget_exceeded") || (event.type == "tool" && event.action == "verify" && event.is_error && count({"type": "tool", "action": "verify", "is_error": true, "run": event.run}, duration("1h")) >= 3)',
    level: "stop",
    target: "run",
    cooldown: "1h",
    message: "{{rule}} stops {{run}}",
  }),
  rule("halt-harness", {
    on: "run_event",
    when: 'event.type == "loop_stopped" || (event.type == "tool" && event.action == "verify" && event.is_error && count({"type": "tool", "action": "verify", "is_error": true, "harness": event.harness}, duration("2h")) >= 4)',
    level: "stop",
    target: "harness",
    cooldown: "6h",
    message: "{{rule}} stops {{harness}}",
  }),
];
// budget-exhaustion-recurring is left out: declared hold, it acts at notify.
const ENFORCE = ["restart-into-same-failure", "halt-run", "halt-harness"];

/** A fire as compared: its row, its rule, the fire log's word and its actions as lines. */
type Compared = readonly [seq: number, rule: string, action: string, actions: readonly string[]];

const loadedRules = (): ActiveRule[] => [
  ...loadStarterPack().map((load) => {
    if (!load.ok) throw new Error(load.problem.message);
    return activeRule(load.rule, { kind: "starter" }, ENFORCE.includes(load.rule.spec.name));
  }),
  ...STOP_RULES.map((r) => {
    const load = loadRuleFile(`rules/${r.name}.toml`, r.text);
    if (!load.ok) throw new Error(load.problem.message);
    return activeRule(load.rule, { kind: "policy", repo: "test" }, true);
  }),
];

/**
 * Each rule backtested over the store's journal up to the evaluator's cursor, from its first row, as
 * the daemon's replay folds it; and each harness's first opened row.
 */
function backtestEach(storePath: string, rules: readonly ActiveRule[]) {
  const store = openStoreReadOnly(storePath);
  try {
    const cursor = evaluatorCursor(store);
    const shadows = readShadows(store.db);
    const folds = rules.map((active) => ({
      name: active.rule.spec.name,
      fold: new BacktestFold(active, { shadowPeriod: 0, shadows }),
      feed: new WindowFeed(selectorShapes([active.rule])),
      fires: [] as BacktestFire[],
    }));
    const firstOpened = new Map<string, number>();
    for (const row of new JournalTable(store.db).rowsInRange(1, cursor)) {
      const { type, harness } = row.event;
      if (
        row.kind === "run_event" &&
        type === "opened" &&
        typeof harness === "string" &&
        !firstOpened.has(harness)
      )
        firstOpened.set(harness, row.seq);
      for (const f of folds) {
        f.feed.add(row);
        f.fires.push(...f.fold.step(row, f.feed.readerAt(row.at)));
      }
    }
    const fires = new Map(folds.map((f) => [f.name, [...f.fires, ...f.fold.finish().fires]]));
    return { cursor, fires, firstOpened };
  } finally {
    store.close();
  }
}

interface LiveFire {
  readonly seq: number;
  readonly rule: string;
  readonly action: string;
  readonly level: Level;
  /** The target's harness. */
  readonly harness: string | undefined;
  readonly actions: readonly string[];
}

/** The fires live evaluation recorded, each with its actions; a stop's run is the one its command got. */
function liveFires(storePath: string, stopRuns: ReadonlyMap<string, string>): LiveFire[] {
  const store = openStoreReadOnly(storePath);
  try {
    const lines = recordedLines(store, stopRuns);
    return fires(store).map((r) => ({
      seq: r.seq,
      rule: r.rule,
      action: r.action,
      level: r.effective_level as Level,
      harness: r.harness ?? undefined,
      actions: lines.get(r.fire_id) ?? [],
    }));
  } finally {
    store.close();
  }
}

describe("the actions of backtest and live evaluation over a month of fleet", () => {
  const fleet = new TestFleet({ enforce: ENFORCE, rules: STOP_RULES, recordStops: true });
  let lastImported = 0;

  beforeAll(async () => {
    lastImported = await evaluateMonthLive(fleet);
    // Stopping waits for the stop commands still running, so every action is on record.
    await fleet.stop();
  }, 180_000);

  afterAll(() => fleet.dispose());

  it("Over the fleet-month fixture, the actions a backtest's fires carry equal the actions live evaluation recorded, for annotate and notify fires, and for hold and stop fires over an interval where the rule's hash and the enforce list did not change, starting from each harness's first `opened` row", () => {
    // One load and no reload: every rule's hash and the enforce list hold for the whole month.
    const rules = loadedRules();
    const backtests = backtestEach(fleet.storePath, rules);
    expect(backtests.cursor).toBeGreaterThanOrEqual(lastImported);
    // The stop command's arguments: harness, run, rule, fire id, seq.
    const stopRuns = new Map(fleet.stopped().map((argv) => [argv[3] as string, argv[1] as string]));
    const live = liveFires(fleet.storePath, stopRuns);
    // Hold and stop act on the harness's run in flight, which a replay knows from the harness's first
    // opened row on; annotate and notify read no such state.
    const inInterval = (seq: number, level: Level, harness: string | undefined): boolean =>
      !atLeast(level, "hold") ||
      (harness !== undefined && (backtests.firstOpened.get(harness) ?? Infinity) < seq);

    const seen = new Set<string>();
    for (const active of rules) {
      const name = active.rule.spec.name;
      const backtested: Compared[] = (backtests.fires.get(name) ?? [])
        .filter(({ fire }) => inInterval(fire.seq, fire.effectiveLevel, fire.target?.harness))
        .map(({ fire }) => [fire.seq, name, fire.action, plannedLines(fire.actions, true)]);
      const recorded: Compared[] = live
        .filter((f) => f.rule === name && inInterval(f.seq, f.level, f.harness))
        .map((f) => [f.seq, name, f.action, f.actions]);
      expect(backtested, name).toEqual(recorded);
      for (const [, , action, lines] of recorded) {
        seen.add(action);
        for (const line of lines) seen.add(line.split(" ")[0] as string);
      }
    }
    // Not a vacuous month: every kind of action was compared, and stops that found their run ended.
    expect([...seen]).toEqual(expect.arrayContaining(["annotate", "notify", "hold", "stop", "target_gone"]));
  });
});
