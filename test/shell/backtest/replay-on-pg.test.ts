/**
 * A backtest over the journal on PostgreSQL (issue 34 item 3) gives the fires of the same backtest over
 * the same journal on SQLite: every starter rule, over a fleet's journal committed to both, the stretch
 * starting mid-journal so the windows are seeded from rows before it, the rows streamed through a
 * server-side cursor in pages far smaller than the journal. As a property: any generated journal, cut
 * into any batches, and any stretch give the same fires and counts on both.
 */
import * as path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BacktestCounts, ReplayedFire } from "../../../src/core/backtest.js";
import { STARTER_FILES } from "../../../src/core/starter-pack.generated.js";
import { type BacktestRequest, type BacktestSink, replay } from "../../../src/shell/backtest/replay.js";
import { replayOnPg } from "../../../src/shell/backtest/replay-on-pg.js";
import { JournalCommits } from "../../../src/shell/store/journal-commits.js";
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import type { OpenedStore } from "../../../src/shell/store/open-store.js";
import { type OpenedPgStore, openPgStore } from "../../../src/shell/store/pg/open-pg-store.js";
import { PgJournal } from "../../../src/shell/store/pg/pg-journal.js";
import { runs, runsTimeout } from "../../property-runs.js";
import { pgOptions } from "../../support/pg-cluster.js";
import { freshPgDatabase, openFreshPgStore } from "../store/pg/pg-store.js";
import { batchesOf, fleetRows, sameJournal } from "../store/pg/same-journal.js";
import { tempStores } from "../store/temp-stores.js";

interface Replayed {
  readonly fires: ReplayedFire[];
  readonly counts: BacktestCounts | undefined;
  readonly range: [number, number] | undefined;
}

const collector = (): { sink: BacktestSink; result: Replayed } => {
  const result = {
    fires: [] as ReplayedFire[],
    counts: undefined as BacktestCounts | undefined,
    range: undefined as [number, number] | undefined,
  };
  return {
    result,
    sink: {
      start: (s) => {
        result.range = [s.fromSeq, s.toSeq];
      },
      fires: (fs) => result.fires.push(...fs),
      summary: (c) => {
        result.counts = c;
      },
    },
  };
};

const requestFor = (file: string, text: string, nowMs: number, sinceMs: number): BacktestRequest => ({
  file: `rules/${path.basename(file)}`,
  text,
  sinceMs,
  nowMs,
  enforce: ["budget-exhaustion-recurring", "loop-stop-recurs"],
  shadowPeriod: 0,
  shadows: {},
  loaded: [],
});

/** Each starter rule replayed on both; the pairs of results. */
async function bothWays(
  sqlite: OpenedStore,
  pool: OpenedPgStore["pool"],
  nowMs: number,
  sinceMs: number,
  page: number,
): Promise<{ rule: string; sqlite: Replayed; pg: Replayed }[]> {
  const out = [];
  for (const [file, text] of STARTER_FILES) {
    const request = requestFor(file, text, nowMs, sinceMs);
    const onSqlite = collector();
    replay(new JournalTable(sqlite.db), request, onSqlite.sink);
    const onPg = collector();
    await replayOnPg(pool, request, onPg.sink, page);
    out.push({ rule: path.basename(file, ".toml"), sqlite: onSqlite.result, pg: onPg.result });
  }
  return out;
}

describe("a backtest on PostgreSQL", () => {
  const stores = tempStores("harness-replay-on-pg-");

  describe("over a fleet's journal on both backends", () => {
    let pgStore: OpenedPgStore;
    beforeAll(async () => {
      pgStore = await openFreshPgStore("replay_on_pg");
    });
    afterAll(async () => {
      await pgStore?.close();
    });

    it("gives every starter rule the fires and counts it gets on SQLite, the windows seeded from before the stretch", async () => {
      const sqlite = stores.open(stores.storeFile());
      const rows = fleetRows(3, 11);
      const ats = await sameJournal(
        new PgJournal(pgStore.pool),
        new JournalCommits(sqlite.db),
        batchesOf(rows, [37, 1, 120, 5, 64]),
      );
      const nowMs = ats.at(-1) as number;
      // The stretch starts a third of the way in: the rows before it only fill the windows.
      const sinceMs = nowMs - (ats[Math.floor(ats.length / 3)] as number);
      const results = await bothWays(sqlite, pgStore.pool, nowMs, sinceMs, 97);
      let fired = 0;
      for (const r of results) {
        expect(r.pg, r.rule).toEqual(r.sqlite);
        expect(r.pg.counts?.rows, r.rule).toBeLessThan(rows.length);
        fired += r.pg.fires.length;
      }
      expect(fired).toBeGreaterThan(0);
    });
  });

  it(
    "gives the fires SQLite gives over any generated journal, cut into any batches, for any stretch",
    async () => {
      let n = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 1_000_000 }),
          fc.integer({ min: 50, max: 600 }),
          fc.array(fc.integer({ min: 1, max: 80 }), { minLength: 1, maxLength: 6 }),
          fc.double({ min: 0, max: 1, noNaN: true }),
          fc.integer({ min: 1, max: 300 }),
          async (seed, size, sizes, startAt, page) => {
            const db = await freshPgDatabase(`replay_on_pg_property_${n++}`);
            const pgStore = await openPgStore({ ...pgOptions(db), max: 2 });
            const sqlite = stores.open(stores.storeFile());
            try {
              const rows = fleetRows(2, seed).slice(0, size);
              const ats = await sameJournal(
                new PgJournal(pgStore.pool),
                new JournalCommits(sqlite.db),
                batchesOf(rows, sizes),
              );
              const nowMs = ats.at(-1) as number;
              const sinceMs = nowMs - (ats[Math.floor(startAt * (ats.length - 1))] as number) + 1;
              for (const r of await bothWays(sqlite, pgStore.pool, nowMs, sinceMs, page))
                expect(r.pg, r.rule).toEqual(r.sqlite);
            } finally {
              await pgStore.close();
            }
          },
        ),
        { numRuns: runs(15) },
      );
    },
    runsTimeout(120_000),
  );
});
