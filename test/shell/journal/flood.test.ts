/**
 * Flood (issue 5): producers offer far more than the evaluator can take. They never block; the queue
 * drops what it cannot hold and counts it; dropped = offered − admitted exactly; seqs stay contiguous
 * and `at` never decreases; memory stays bounded; and afterwards live fires equal a backtest's.
 */
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fold } from "../../../src/core/backtest.js";
import type { JournalRow } from "../../../src/core/journal.js";
import { emptyState } from "../../../src/core/state.js";
import { indexedWindows, selectorShapes } from "../../../src/core/window-index.js";
import { DaemonApp } from "../../../src/shell/app/daemon-app.js";
import { loadRuleSet } from "../../../src/shell/policy/rule-source.js";
import { createLog } from "../../../src/shell/support/log.js";
import { coreRows, evaluatorCaughtUp, fires } from "../../support/store-reads.js";
import { TestFleet } from "../daemon-harness.js";

const fleets: TestFleet[] = [];
afterEach(async () => {
  for (const f of fleets.splice(0)) await f.dispose();
});

const quietLog = () => createLog({ level: "silent" });

describe("flood", () => {
  it("drops exactly what it cannot admit, never blocks, and live fires equal the backtest after", async () => {
    const f = new TestFleet({ enforce: ["budget-exhaustion-recurring"] });
    fleets.push(f);
    const daemon = await DaemonApp.start({
      env: f.env,
      configPath: path.join(f.root, "config", "harness", "harness.toml"),
      log: quietLog(),
    });
    const OFFERED = 60_000;
    const heapBefore = process.memoryUsage().heapUsed;
    let maxHeap = heapBefore;
    const pending: Promise<readonly { kind: string }[]>[] = [];
    for (let i = 0; i < OFFERED; i += 1_000) {
      const batch = Array.from({ length: 1_000 }, (_, j) => {
        const n = i + j;
        const harness = `h${n % 7}`;
        return n % 50 === 0
          ? { kind: "run_event", type: "closed", harness, run: `${harness}#${n}`, outcome: "budget_exceeded" }
          : {
              kind: "run_event",
              type: "tool",
              harness,
              run: `${harness}#${n >> 8}`,
              action: "verify",
              is_error: n % 3 === 0,
              digest: `d${n % 5}`,
              repo: "r",
            };
      });
      pending.push(
        daemon.admit(
          "ledger",
          batch.filter((e) => e.type === "closed"),
        ),
      );
      pending.push(
        daemon.admit(
          "observer",
          batch.filter((e) => e.type !== "closed"),
        ),
      );
      maxHeap = Math.max(maxHeap, process.memoryUsage().heapUsed);
      // Producers offer a dozen batches each turn of the event loop, far more than the writer commits
      // (a batch a turn) or the evaluator takes (a 20 ms slice a turn): the queue must overflow.
      if ((i / 1_000) % 12 === 11) await new Promise((r) => setImmediate(r));
    }
    const results = (await Promise.all(pending)).flat();
    const admitted = results.filter((r) => r.kind === "admitted").length;
    const dropped = results.filter((r) => r.kind === "dropped").length;
    expect(admitted + dropped).toBe(OFFERED);
    expect(dropped, "the flood overflowed the queue").toBeGreaterThan(0);
    // The producers' drops, counted per source. The daemon's own minute tick may land in the flood and be
    // dropped too (it queues like any row), so it is counted apart.
    const droppedBySource = (await daemon.metrics.journalDropped.get()).values;
    const producerDrops = droppedBySource
      .filter((v) => v.labels.source === "ledger" || v.labels.source === "observer")
      .reduce((s, v) => s + v.value, 0);
    expect(producerDrops).toBe(dropped);
    expect(
      droppedBySource.filter((v) => !["ledger", "observer", "tick"].includes(String(v.labels.source))),
    ).toEqual([]);
    await f.until(() => evaluatorCaughtUp(f), "evaluation to catch up", 120_000);
    await daemon.close();
    expect(maxHeap - heapBefore, "memory stays bounded while flooded").toBeLessThan(512 * 2 ** 20);

    const rows = coreRows(f);
    expect(rows.filter((r) => r.kind !== "tick").length).toBe(admitted);
    expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
    for (let i = 1; i < rows.length; i++)
      expect((rows[i] as JournalRow).at >= (rows[i - 1] as JournalRow).at).toBe(true);
    const ruleSet = loadRuleSet(daemon.config);
    const expected = fold(
      ruleSet,
      rows,
      emptyState,
      indexedWindows(rows, selectorShapes(ruleSet.rules.map((r) => r.rule))),
    )
      .outcomes.flatMap((o) => o.fires)
      .map((x) => ({ fire_id: x.id, rule: x.rule, action: x.action }));
    const live = fires(f).map((x) => ({ fire_id: x.fire_id, rule: x.rule, action: x.action }));
    expect(live).toEqual(expected);
    expect(live.length).toBeGreaterThan(0);
  });
});
