/**
 * The reads of a hook-fed run's verdict, of the derivers' rebuild and of doctor, on SQLite
 * (`AgentRunReads`, `AgentReads`, `DerivedCursors`) and PostgreSQL (their `Pg` counterparts): over the
 * same journal, built on both with PostgreSQL's commits and SQLite's `JournalCommits`, the same fires
 * and sessions in flight, the same calls give the same answers.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentReads } from "../../../../src/shell/store/agent-reads.js";
import { AgentRunReads } from "../../../../src/shell/store/agent-run-reads.js";
import { DerivedCursors } from "../../../../src/shell/store/derived-cursors.js";
import { JournalCommits } from "../../../../src/shell/store/journal-commits.js";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgAgentReads } from "../../../../src/shell/store/pg/pg-agent-reads.js";
import { PgAgentRunReads } from "../../../../src/shell/store/pg/pg-agent-run-reads.js";
import { PgDerivedCursors } from "../../../../src/shell/store/pg/pg-derived-cursors.js";
import { PgJournal } from "../../../../src/shell/store/pg/pg-journal.js";
import { runs } from "../../../property-runs.js";
import { type BothStores, bothStores, decideBoth, fireOf, tableOnBoth } from "./both-stores.js";
import { openFreshPgStore } from "./pg-store.js";
import { batchesOf, fleetRows, sameJournal } from "./same-journal.js";

const { reset } = bothStores("harness-agent-reads-contract-");
let pg: OpenedPgStore;
beforeAll(async () => {
  pg = await openFreshPgStore("agent_reads_contract", 4);
});
afterAll(async () => {
  await pg?.close();
});

const HARNESSES = ["impl", "review", "nightly", "worker", "bare", "nobody"];
const NAMES = ["stale-runs", "loop-guard", "stop-settler"];

interface Journal {
  readonly b: BothStores;
  /** Runs with rows, and one without. */
  readonly runs: readonly string[];
  readonly last: number;
  readonly fires: readonly string[];
}

/** Two days of fleet in uneven batches (so many rows share an `at`), a bare run_event, some fires. */
async function journal(): Promise<Journal> {
  const b = await reset(pg);
  const rows = fleetRows(2, 7);
  rows.push({ kind: "run_event", source: "ledger", event: { type: "closed", harness: "bare" } });
  await sameJournal(
    new PgJournal(b.pg.pool),
    new JournalCommits(b.sqlite.db),
    batchesOf(rows, [1, 37, 5, 120, 2]),
  );
  const runs = [
    ...new Set(rows.flatMap((r) => (typeof r.event.run === "string" ? [r.event.run] : []))),
    "impl#unseen",
  ];
  const fires = [10, 200, rows.length].map((seq, i) =>
    fireOf({ id: `f-${i}`, rule: "r", seq, target: { kind: "harness", key: "impl", harness: "impl" } }),
  );
  await decideBoth(b, fires);
  return { b, runs, last: rows.length, fires: [...fires.map((f) => f.id), "f-none"] };
}

type Op =
  | { readonly op: "inFlight"; readonly run: number; readonly present: boolean }
  | { readonly op: "replayFrom"; readonly cursor: number; readonly recentMs: number }
  | { readonly op: "firstSeq"; readonly run: number }
  | { readonly op: "fireSeq"; readonly fire: number }
  | { readonly op: "lastRunEvent"; readonly harness: number }
  | { readonly op: "setCursor"; readonly name: number; readonly cursor: number }
  | { readonly op: "getCursor"; readonly name: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant("inFlight" as const), run: fc.nat(), present: fc.boolean() }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("replayFrom" as const),
      // Past the last row too: the cursor's row is then missing.
      cursor: fc.nat(),
      recentMs: fc.oneof(fc.nat(20), fc.constant(10 ** 12)),
    }),
  },
  fc.record({ op: fc.constant("firstSeq" as const), run: fc.nat() }),
  fc.record({ op: fc.constant("fireSeq" as const), fire: fc.nat() }),
  fc.record({ op: fc.constant("lastRunEvent" as const), harness: fc.nat(HARNESSES.length - 1) }),
  fc.record({ op: fc.constant("setCursor" as const), name: fc.nat(NAMES.length - 1), cursor: fc.nat(1_000) }),
  fc.record({ op: fc.constant("getCursor" as const), name: fc.nat(NAMES.length - 1) }),
);

async function both(j: Journal, o: Op, at: number): Promise<[unknown, unknown]> {
  const { b } = j;
  const run = (i: number) => j.runs[i % j.runs.length] as string;
  switch (o.op) {
    case "inFlight": {
      const harness = o.present ? run(o.run).split("#")[0] : undefined;
      await decideBoth(b, [], [{ at, op: { op: "session_in_flight", run: run(o.run), harness } }]);
      return [undefined, undefined];
    }
    case "replayFrom": {
      const cursor = o.cursor % (j.last + 3);
      return [
        new AgentRunReads(b.sqlite.db).replayFrom(cursor, o.recentMs),
        await new PgAgentRunReads(b.pg.pool).replayFrom(cursor, o.recentMs),
      ];
    }
    case "firstSeq":
      return [
        new AgentRunReads(b.sqlite.db).firstSeq(run(o.run)),
        await new PgAgentRunReads(b.pg.pool).firstSeq(run(o.run)),
      ];
    case "fireSeq": {
      const id = j.fires[o.fire % j.fires.length] as string;
      return [new AgentRunReads(b.sqlite.db).fireSeq(id), await new PgAgentRunReads(b.pg.pool).fireSeq(id)];
    }
    case "lastRunEvent": {
      const h = HARNESSES[o.harness] as string;
      return [new AgentReads(b.sqlite.db).lastRunEvent(h), await new PgAgentReads(b.pg.pool).lastRunEvent(h)];
    }
    case "setCursor": {
      const name = NAMES[o.name] as string;
      return [
        new DerivedCursors(b.sqlite.db).set(name, o.cursor),
        await new PgDerivedCursors(b.pg.pool).set(name, o.cursor),
      ];
    }
    case "getCursor": {
      const name = NAMES[o.name] as string;
      return [new DerivedCursors(b.sqlite.db).get(name), await new PgDerivedCursors(b.pg.pool).get(name)];
    }
  }
}

describe("the agent runs' reads on SQLite and PostgreSQL", () => {
  it("firstSeq, fireSeq, replayFrom and doctor's last run_event read the same over the same journal", async () => {
    const j = await journal();
    const { b } = j;
    const s = new AgentRunReads(b.sqlite.db);
    const p = new PgAgentRunReads(b.pg.pool);
    for (const run of j.runs) expect(await p.firstSeq(run), run).toEqual(s.firstSeq(run));
    expect(await p.firstSeq("impl#unseen")).toBeUndefined();
    for (const id of j.fires) expect(await p.fireSeq(id), id).toEqual(s.fireSeq(id));
    for (const h of HARNESSES)
      expect(await new PgAgentReads(b.pg.pool).lastRunEvent(h), h).toEqual(
        new AgentReads(b.sqlite.db).lastRunEvent(h),
      );
    expect(await new PgAgentReads(b.pg.pool).lastRunEvent("bare")).toMatchObject({
      run: null,
      adapter: null,
    });
    expect(await new PgAgentReads(b.pg.pool).lastRunEvent("impl")).toMatchObject({ adapter: "claude-code" });

    // Two runs in flight: the rebuild starts at the first one's opened row, whatever the cursor.
    const opened = j.runs.slice(3, 5);
    await decideBoth(
      b,
      [],
      opened.map((run) => ({ at: 1, op: { op: "session_in_flight", run, harness: run.split("#")[0] } })),
    );
    const first = Math.min(...opened.map((run) => s.firstSeq(run) as number));
    for (const cursor of [0, 1, 150, j.last, j.last + 2])
      for (const recentMs of [0, 2, 10 ** 12]) {
        const want = s.replayFrom(cursor, recentMs);
        expect(await p.replayFrom(cursor, recentMs), `${cursor} ${recentMs}`).toBe(want);
        expect(want).toBeLessThanOrEqual(Math.min(first, cursor + 1));
      }
  });

  it("a derived cursor set inside the caller's transaction commits with it, or not at all", async () => {
    const { b } = await journal();
    const cursors = new PgDerivedCursors(b.pg.pool);
    await cursors.set("loop-guard", 3);
    await cursors.set("loop-guard", 5);
    new DerivedCursors(b.sqlite.db).set("loop-guard", 3);
    new DerivedCursors(b.sqlite.db).set("loop-guard", 5);
    expect(await cursors.get("loop-guard")).toBe(new DerivedCursors(b.sqlite.db).get("loop-guard"));
    const client = await b.pg.pool.connect();
    try {
      await client.query("BEGIN");
      await cursors.set("loop-guard", 9, client);
      expect(await cursors.get("loop-guard")).toBe(5);
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
    expect(await cursors.get("loop-guard")).toBe(5);
    expect(await cursors.get("stale-runs")).toBe(new DerivedCursors(b.sqlite.db).get("stale-runs"));
  });

  it("same calls give the same answers", async () => {
    const j = await journal();
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 30 }), async (ops) => {
        // The journal stays; each case starts with no session in flight and no cursor.
        for (const table of ["sessions_in_flight", "derived_cursors"]) {
          j.b.sqlite.db.prepare(`DELETE FROM ${table}`).run();
          await j.b.pg.pool.query(`DELETE FROM ${table}`);
        }
        for (const [i, o] of ops.entries()) {
          const [fromSqlite, fromPg] = await both(j, o, i);
          expect(fromPg, `${o.op} at ${i}`).toEqual(fromSqlite);
        }
        const cursors = await tableOnBoth(j.b, "derived_cursors", "name");
        expect(cursors.pg).toEqual(cursors.sqlite);
      }),
      { numRuns: runs(40) },
    );
  });
});
