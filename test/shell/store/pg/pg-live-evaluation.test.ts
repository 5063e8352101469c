/**
 * Issue 34: live evaluation on PostgreSQL folds the core exactly as backtest does. Rows are admitted
 * through the journal writer into PostgreSQL's journal (each row's `at` the database's clock), evaluated
 * through PostgreSQL's decisions with restarts between (a new writer and evaluator on the stored cursor,
 * as after a crash); the fire log then equals a fold of the core over the rows read back, and each
 * fire's planned actions are recorded. Derived rows' writes commit with their rows.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { fold } from "../../../../src/core/backtest.js";
import { emptyState } from "../../../../src/core/state.js";
import { indexedWindows, selectorShapes } from "../../../../src/core/window-index.js";
import { Evaluator } from "../../../../src/shell/daemon/evaluator.js";
import { JournalWriter } from "../../../../src/shell/journal/journal-writer.js";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgJournal } from "../../../../src/shell/store/pg/pg-journal.js";
import { PgEvaluatorLog, PgJournalLog } from "../../../../src/shell/store/pg/pg-write-ports.js";
import { DaemonMetrics } from "../../../../src/shell/support/metrics.js";
import { runs } from "../../../property-runs.js";
import { firesOf, type Input, input, reachingInputs, ruleSet } from "../../daemon/live-inputs.js";
import { openFreshPgStore } from "./pg-store.js";

const stores: OpenedPgStore[] = [];
afterAll(async () => {
  for (const s of stores.splice(0)) await s.close();
});

const fresh = async (): Promise<OpenedPgStore> => {
  const store = await openFreshPgStore("live_eval", 4);
  stores.push(store);
  return store;
};

async function runLive(
  store: OpenedPgStore,
  inputs: readonly Input[],
  restarts: ReadonlySet<number>,
  slice: number,
) {
  let now = Date.parse("2026-11-01T00:00:00Z");
  const journal = new PgJournal(store.pool);
  const metrics = new DaemonMetrics();
  const start = async () => ({
    writer: new JournalWriter(new PgJournalLog(store.pool), {
      queueLimit: 100_000,
      batchSize: 7,
      clock: () => now,
      metrics,
      onCommitted: () => {},
      onError: (e) => {
        throw e;
      },
    }),
    evaluator: await Evaluator.open(ruleSet, {
      log: new PgEvaluatorLog(store.pool, journal),
      metrics,
      clock: () => now,
      dispatch: () => {},
      quietBatch: 5,
    }),
  });
  let d = await start();
  for (const [i, inp] of inputs.entries()) {
    if (restarts.has(i)) {
      await d.writer.close();
      d = await start();
    }
    now += inp.advance;
    d.writer.offer({ source: inp.source, kind: inp.kind, event: inp.event });
    if (i % slice === 0) {
      await d.writer.flush();
      await d.evaluator.step(1_000);
    }
  }
  await d.writer.close();
  while ((await d.evaluator.step(1_000)) > 0);
  await d.evaluator.saveCursor();
  const rows = await journal.rowsAfter(0, 1_000_000);
  const fires = (
    await store.pool.query(
      "SELECT fire_id, seq, rule, hash, target_key, effective_level, mode, action, message FROM rule_fires ORDER BY seq, fire_id",
    )
  ).rows;
  const actions = (
    await store.pool.query<{ fire_id: string; action: string }>(
      "SELECT fire_id, action FROM rule_actions ORDER BY fire_id, action",
    )
  ).rows.map((r) => `${r.fire_id}:${r.action}`);
  const cursor = (await store.pool.query<{ cursor: number }>("SELECT cursor FROM evaluator WHERE id = 1"))
    .rows[0]?.cursor;
  return { rows, fires, actions, cursor };
}

describe("live evaluation on PostgreSQL", () => {
  it("fires what a fold of the core over the committed rows fires, and records the actions it plans, across restarts", async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        fc.array(input, { minLength: 1, maxLength: 120, size: "max" }),
        fc.uniqueArray(fc.nat(120), { maxLength: 3 }),
        fc.integer({ min: 1, max: 9 }),
        async (inputs, restartAt, slice) => {
          const live = await runLive(await fresh(), inputs, new Set(restartAt), slice);
          expect(live.rows.map((r) => r.seq)).toEqual(live.rows.map((_, i) => i + 1));
          expect(live.cursor).toBe(live.rows.length);
          const shapes = selectorShapes(ruleSet.rules.map((r) => r.rule));
          const expected = fold(
            ruleSet,
            live.rows,
            emptyState,
            indexedWindows(live.rows, shapes),
          ).outcomes.flatMap((o) => o.fires);
          for (const f of expected) seen.add(`${f.rule}:${f.action}`);
          expect(live.fires).toEqual(firesOf(expected));
          expect(live.actions).toEqual(
            expected
              .flatMap((f) =>
                f.actions
                  .filter((a) => a.kind === "notify" || a.kind === "stop")
                  .map((a) => `${f.id}:${a.kind}`),
              )
              .sort(),
          );
        },
      ),
      { numRuns: runs(12), examples: [[[...reachingInputs], [3], 2]] },
    );
    // The cases reach a rule that notifies and one that holds (the example makes sure of both).
    expect([...seen]).toEqual(
      expect.arrayContaining(["repeated-verify-failure:notify", "restart-into-same-failure:hold"]),
    );
  }, 120_000);
});
