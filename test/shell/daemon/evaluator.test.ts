import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { fold } from "../../../src/core/backtest.js";
import type { EventFields } from "../../../src/core/journal.js";
import { loadRuleFile } from "../../../src/core/load-rule.js";
import { assembleRuleSet } from "../../../src/core/rule-set.js";
import { emptyState } from "../../../src/core/state.js";
import { indexedWindows, selectorShapes } from "../../../src/core/window-index.js";
import { Evaluator } from "../../../src/shell/daemon/evaluator.js";
import type { JournalWriter } from "../../../src/shell/journal/journal-writer.js";
import { DecisionStore } from "../../../src/shell/store/decision-store.js";
import { JournalCommits } from "../../../src/shell/store/journal-commits.js";
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import { type Db, type OpenedStore, openStore } from "../../../src/shell/store/open-store.js";
import { SqliteEvaluatorLog } from "../../../src/shell/store/sqlite-write-ports.js";
import { DaemonMetrics } from "../../../src/shell/support/metrics.js";
import { runs } from "../../property-runs.js";
import { fires as firesIn } from "../../support/store-reads.js";
import { testWriter } from "../journal/test-writer.js";
import { plannedLines, recordedLines } from "../recorded-actions.js";
import { firesOf, type Input, input, reachingInputs, ruleSet } from "./live-inputs.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const tempStore = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "harness-eval-"));
  dirs.push(d);
  return path.join(d, "harness.db");
};

/** The evaluator's view of the store over `db`, as the daemon opens it. */
const evaluatorLog = (db: Db, journal: JournalTable) =>
  new SqliteEvaluatorLog(new JournalCommits(db, journal), new DecisionStore(db));

/** Admits the inputs through the writer on a fake clock, evaluating with restarts at the given points. */
async function runLive(file: string, inputs: readonly Input[], restarts: ReadonlySet<number>, slice: number) {
  let now = Date.parse("2026-11-01T00:00:00Z");
  let opened: OpenedStore | undefined;
  let evaluator: Evaluator | undefined;
  let writer: JournalWriter | undefined;
  const start = async () => {
    opened = openStore(file, "test");
    const journal = new JournalTable(opened.db);
    const metrics = new DaemonMetrics();
    writer = testWriter(opened.db, journal, {
      queueLimit: 100_000,
      batchSize: 7,
      clock: () => now,
      metrics,
    });
    evaluator = await Evaluator.open(ruleSet, {
      log: evaluatorLog(opened.db, journal),
      metrics,
      clock: () => now,
      dispatch: () => {},
      quietBatch: 5,
    });
  };
  await start();
  for (const [i, inp] of inputs.entries()) {
    if (restarts.has(i)) {
      await writer?.close();
      opened?.close();
      await start();
    }
    now += inp.advance;
    writer?.offer({ source: inp.source, kind: inp.kind, event: inp.event });
    if (i % slice === 0) {
      await writer?.flush();
      await evaluator?.step(1_000);
    }
  }
  await writer?.close();
  while (((await evaluator?.step(1_000)) ?? 0) > 0);
  // As the daemon's close does; the restarts above do not, as a crash would not.
  await evaluator?.saveCursor();
  const o = opened as OpenedStore;
  const rows = new JournalTable(o.db).rowsAfter(0, 1_000_000);
  const fires = firesIn(o);
  const cursor = new DecisionStore(o.db).cursor();
  const actions = recordedLines(o);
  o.close();
  return { rows, fires, cursor, actions };
}

describe("live evaluation through the store", () => {
  it("fires what a fold of the core over the admitted rows fires, and records the actions it plans, across restarts", async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        fc.array(input, { minLength: 1, maxLength: 150, size: "max" }),
        fc.uniqueArray(fc.nat(150), { maxLength: 3 }),
        fc.integer({ min: 1, max: 9 }),
        async (inputs, restartAt, slice) => {
          const file = tempStore();
          const live = await runLive(file, inputs, new Set(restartAt), slice);
          expect(live.rows.map((r) => r.seq)).toEqual(live.rows.map((_, i) => i + 1));
          for (let i = 1; i < live.rows.length; i++)
            expect((live.rows[i]?.at ?? 0) >= (live.rows[i - 1]?.at ?? 0)).toBe(true);
          expect(live.cursor).toBe(live.rows.length);
          const shapes = selectorShapes(ruleSet.rules.map((r) => r.rule));
          const expected = fold(
            ruleSet,
            live.rows,
            emptyState,
            indexedWindows(live.rows, shapes),
          ).outcomes.flatMap((o) => o.fires);
          for (const f of live.fires) seen.add(`${f.rule}:${f.action}`);
          expect(
            live.fires.map((f) => ({
              fire_id: f.fire_id,
              seq: f.seq,
              rule: f.rule,
              hash: f.hash,
              target_key: f.target_key,
              effective_level: f.effective_level,
              mode: f.mode,
              action: f.action,
              message: f.message,
            })),
          ).toEqual(firesOf(expected));
          expect(live.actions).toEqual(new Map(expected.map((f) => [f.id, plannedLines(f.actions, false)])));
        },
      ),
      { numRuns: runs(40), examples: [[[...reachingInputs], [3], 2]] },
    );
    // The cases must reach the rules they are meant to test, holds among them (the example makes sure).
    expect([...seen].sort()).toEqual(expect.arrayContaining(["repeated-verify-failure:notify"]));
    expect(
      [...seen].some((s) => s.endsWith(":hold") || s.endsWith(":stop")),
      [...seen].join(" "),
    ).toBe(true);
    // Each case opens SQLite stores; the soak's 50x cases take minutes.
  }, 600_000);
});

describe("rows that change nothing", () => {
  it("store their cursor only when saved or with the next commit, and a crash before evaluates them again", async () => {
    const file = tempStore();
    const now = Date.parse("2026-11-01T00:00:00Z");
    const open = async () => {
      const opened = openStore(file, "test");
      const journal = new JournalTable(opened.db);
      const metrics = new DaemonMetrics();
      const writer = testWriter(opened.db, journal, {
        clock: () => now,
        metrics,
      });
      const decisions = new DecisionStore(opened.db);
      const evaluator = await Evaluator.open(ruleSet, {
        log: evaluatorLog(opened.db, journal),
        metrics,
        clock: () => now,
        dispatch: () => {},
      });
      return { opened, writer, decisions, evaluator };
    };
    const quiet = { type: "tool", harness: "impl", run: "impl#1", action: "edit", is_error: false };
    const offer = async (n: number, event: EventFields) => {
      for (let i = 0; i < n; i++) d.writer.offer({ source: "observer", kind: "run_event", event });
      await d.writer.flush();
    };
    let d = await open();
    // The first rows change state (each rule's shadow starts), so they commit.
    await offer(2, quiet);
    expect(await d.evaluator.step(1_000)).toBe(2);
    expect([d.evaluator.cursorUnsaved, d.decisions.cursor()]).toEqual([false, 2]);
    await offer(3, quiet);
    expect(await d.evaluator.step(1_000)).toBe(3);
    expect([d.evaluator.cursor, d.evaluator.cursorUnsaved, d.decisions.cursor()]).toEqual([5, true, 2]);
    // A crash: the three rows are evaluated again at the restart, and again change nothing.
    await d.writer.close();
    d.opened.close();
    d = await open();
    expect(d.evaluator.cursor).toBe(2);
    expect(await d.evaluator.step(1_000)).toBe(3);
    expect(d.decisions.cursor()).toBe(2);
    await d.evaluator.saveCursor();
    expect([d.evaluator.cursorUnsaved, d.decisions.cursor()]).toEqual([false, 5]);
    // A row that fires commits the quiet rows' cursor with its own.
    const failing = { ...quiet, action: "verify", is_error: true, digest: "d1", repo: "forge.example/o/r" };
    await offer(2, quiet);
    await offer(1, failing);
    await offer(1, { ...failing, run: "impl#2" });
    await d.evaluator.step(1_000);
    const fired = firesIn(d.opened).at(-1)?.seq;
    expect(fired).toBeDefined();
    expect(d.decisions.cursor()).toBeGreaterThanOrEqual(fired as number);
    await d.writer.close();
    d.opened.close();
  });
});

describe("reloading the rule set", () => {
  const policyRuleSet = (when: string) =>
    assembleRuleSet({
      starter: [],
      policy: [
        {
          repo: "ops",
          loads: [
            loadRuleFile(
              "rules/closing.toml",
              [
                'name = "closing"',
                'description = "closes in a row"',
                'on = "run_event"',
                `when = '${when}'`,
                'level = "notify"',
                'target = "harness"',
                'message = "{{rule}} {{harness}}"',
              ].join("\n"),
            ),
          ],
        },
      ],
      shadowPeriod: 0,
    });

  it("A reload that adds a literal to a selector's key set indexes the rows it reaches", async () => {
    const opened = openStore(tempStore(), "test");
    let now = Date.parse("2026-11-01T00:00:00Z");
    const journal = new JournalTable(opened.db);
    const metrics = new DaemonMetrics();
    const writer = testWriter(opened.db, journal, {
      queueLimit: 1_000,
      batchSize: 1,
      clock: () => now,
      metrics,
    });
    const fired: string[] = [];
    // Before the reload the only selector of key set {type, harness} names type "tool": closed rows
    // reach no selector and are not indexed.
    const evaluator = await Evaluator.open(
      policyRuleSet('count({"type": "tool", "harness": event.harness}, duration("1h")) >= 100'),
      {
        log: evaluatorLog(opened.db, journal),
        metrics,
        clock: () => now,
        dispatch: (d) => {
          for (const f of d.fires) fired.push(`${f.rule}@${f.seq}`);
        },
      },
    );
    const closed = async () => {
      now += 60_000;
      writer.offer({
        source: "ledger",
        kind: "run_event",
        event: { type: "closed", harness: "h", run: `h#${now}`, outcome: "failed" },
      });
      await writer.flush();
      await evaluator.step(1_000);
    };
    await closed();
    await closed();
    await closed();
    // The same key set, now with type "closed": the three closed rows before the reload count.
    await evaluator.swapRuleSet(
      policyRuleSet('count({"type": "closed", "harness": event.harness}, duration("1h")) >= 4'),
    );
    await closed();
    await writer.close();
    opened.close();
    expect(fired).toEqual(["closing@4"]);
  });
});

describe("what others read of the evaluator", () => {
  it("is what is committed: a hold and the cursor show only once the commit that makes them durable is done", async () => {
    const opened = openStore(tempStore(), "test");
    const journal = new JournalTable(opened.db);
    const metrics = new DaemonMetrics();
    const now = Date.parse("2026-11-01T00:00:00Z");
    const writer = testWriter(opened.db, journal, { clock: () => now, metrics });
    // The store's commits wait at a gate the test opens, as a round trip to a database would.
    const inner = evaluatorLog(opened.db, journal);
    let opening: (() => void) | undefined;
    const gated: typeof inner = Object.assign(Object.create(inner) as typeof inner, {
      commit: async (...args: Parameters<typeof inner.commit>) => {
        if (args[0].fires.length > 0) await new Promise<void>((resolve) => (opening = resolve));
        return inner.commit(...args);
      },
    });
    const ruleSet = assembleRuleSet({
      starter: [],
      policy: [
        {
          repo: "ops",
          loads: [
            loadRuleFile(
              "rules/holding.toml",
              [
                'name = "holding"',
                'description = "holds a harness whose run failed"',
                'on = "run_event"',
                `when = 'event.type == "closed" && event.outcome == "failed"'`,
                'level = "hold"',
                'target = "harness"',
                'message = "{{rule}} {{harness}}"',
              ].join("\n"),
            ),
          ],
        },
      ],
      shadowPeriod: 0,
      enforce: ["holding"],
    });
    const dispatched: string[] = [];
    const evaluator = await Evaluator.open(ruleSet, {
      log: gated,
      metrics,
      clock: () => now,
      dispatch: (c) => {
        for (const f of c.fires) dispatched.push(f.rule);
      },
    });
    writer.offer({
      source: "ledger",
      kind: "run_event",
      event: { type: "opened", harness: "h", run: "h#1" },
    });
    writer.offer({
      source: "ledger",
      kind: "run_event",
      event: { type: "closed", harness: "h", run: "h#1", outcome: "failed" },
    });
    await writer.flush();
    const step = evaluator.step(1_000);
    while (opening === undefined) await new Promise((r) => setImmediate(r));
    // Row 2 placed a hold, not yet committed, and row 1's run in flight commits with it: readers see
    // neither row settled, no hold, nothing dispatched.
    expect([evaluator.cursor, Object.keys(evaluator.state.holds), dispatched]).toEqual([0, [], []]);
    opening();
    expect(await step).toBe(2);
    expect([evaluator.cursor, Object.keys(evaluator.state.holds).length, dispatched]).toEqual([
      2,
      1,
      ["holding"],
    ]);
    await writer.close();
    opened.close();
  });
});

describe("a store that goes away", () => {
  it("a failed commit keeps the evaluator from going on until it has read the committed state back, and the fires are the fold's", async () => {
    const opened = openStore(tempStore(), "test");
    const journal = new JournalTable(opened.db);
    const metrics = new DaemonMetrics();
    let now = Date.parse("2026-11-01T00:00:00Z");
    const writer = testWriter(opened.db, journal, { clock: () => now, metrics, queueLimit: 10_000 });
    const inner = evaluatorLog(opened.db, journal);
    // Armed, the store is away for the next commit that carries a fire and for the read back after it;
    // the commit after those lands.
    let armed = false;
    let readBackFails = false;
    const flaky: typeof inner = Object.assign(Object.create(inner) as typeof inner, {
      commit: async (...args: Parameters<typeof inner.commit>) => {
        if (armed && args[0].fires.length > 0) {
          armed = false;
          readBackFails = true;
          throw new Error("the store is away");
        }
        return inner.commit(...args);
      },
      loadState: async (...args: Parameters<typeof inner.loadState>) => {
        if (readBackFails) {
          readBackFails = false;
          throw new Error("the store is still away");
        }
        return inner.loadState(...args);
      },
    });
    const evaluator = await Evaluator.open(ruleSet, {
      log: flaky,
      metrics,
      clock: () => now,
      dispatch: () => {},
    });
    const inputs = fc.sample(fc.array(input, { minLength: 60, maxLength: 60 }), {
      numRuns: 1,
      seed: 34,
    })[0] as Input[];
    let failures = 0;
    for (const [i, inp] of inputs.entries()) {
      now += inp.advance;
      writer.offer({ source: inp.source, kind: inp.kind, event: inp.event });
      await writer.flush();
      if (i === 10 || i === 30) armed = true;
      await evaluator.step(1_000).catch(() => failures++);
    }
    while ((await evaluator.step(1_000)) > 0);
    await evaluator.saveCursor();
    expect(failures).toBeGreaterThan(0);
    const rows = journal.rowsAfter(0, 1_000);
    const expected = fold(
      ruleSet,
      rows,
      emptyState,
      indexedWindows(rows, selectorShapes(ruleSet.rules.map((r) => r.rule))),
    ).outcomes.flatMap((o) => o.fires);
    expect(expected.length).toBeGreaterThan(0);
    expect(
      firesIn(opened).map((f) => ({
        fire_id: f.fire_id,
        seq: f.seq,
        rule: f.rule,
        hash: f.hash,
        target_key: f.target_key,
        effective_level: f.effective_level,
        mode: f.mode,
        action: f.action,
        message: f.message,
      })),
    ).toEqual(firesOf(expected));
    await writer.close();
    opened.close();
  });
});
