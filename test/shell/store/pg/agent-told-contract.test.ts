/**
 * What hook-fed runs are told, on SQLite (`AgentTold`) and PostgreSQL (`PgAgentTold`): over the same
 * journal and fire log, the same tellings read the same fires (in (seq, fire_id) order, with their
 * journal rows, or none once pruned), and record the same `agent_told` rows. On PostgreSQL alone, two
 * tellings of one run at once still tell each fire once.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Level } from "../../../../src/core/rule-file.js";
import { AgentTold, type FireToTell, type TellQuery } from "../../../../src/shell/store/agent-told.js";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgAgentTold } from "../../../../src/shell/store/pg/pg-agent-told.js";
import { runs } from "../../../property-runs.js";
import { appendBoth, type BothStores, bothStores, decideBoth, fireOf, tableOnBoth } from "./both-stores.js";
import { openFreshPgStore } from "./pg-store.js";

const { reset } = bothStores("harness-told-contract-");
let pg: OpenedPgStore;
beforeAll(async () => {
  pg = await openFreshPgStore("told_contract", 6);
});
afterAll(async () => {
  await pg?.close();
});

const RUNS = ["impl#s1", "impl#s2", "review#s3"];
const harnessOf = (run: string) => run.split("#")[0] as string;
const LEVELS: readonly Level[] = ["annotate", "notify", "hold", "stop"];
/** Fire id prefixes whose byte order is not their order in any locale's collation. */
const PREFIXES = ["a", "B", "é", "_", "Z"];

type Choice = "all" | "first" | "none" | "everyOther" | "allTwiceAndUnknown";
type Op =
  | {
      readonly op: "row";
      readonly run: number;
      /** Fires on the row, each targeting its run or harness. */
      readonly fires: readonly {
        readonly prefix: number;
        readonly target: "run" | "harness";
        readonly shadow: boolean;
        readonly level: Level;
      }[];
    }
  | { readonly op: "prune"; readonly back: number }
  | {
      readonly op: "tell";
      readonly run: number;
      readonly levels: readonly Level[];
      readonly limit: number;
      /** The run's first seq, none, or another seq. */
      readonly first: "true" | "none" | number;
      readonly choice: Choice;
    };

const run = fc.nat(RUNS.length - 1);
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("row" as const),
      run,
      fires: fc.array(
        fc.record({
          prefix: fc.nat(PREFIXES.length - 1),
          target: fc.constantFrom("run" as const, "harness" as const),
          shadow: fc.boolean(),
          level: fc.constantFrom(...LEVELS),
        }),
        { maxLength: 3 },
      ),
    }),
  },
  fc.record({ op: fc.constant("prune" as const), back: fc.nat(4) }),
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("tell" as const),
      run,
      levels: fc.subarray([...LEVELS]),
      limit: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.constant(-1)),
      first: fc.oneof(fc.constant("true" as const), fc.constant("none" as const), fc.nat(12)),
      choice: fc.constantFrom<Choice>("all", "first", "none", "everyOther", "allTwiceAndUnknown"),
    }),
  },
);

/** What `choose` tells of the fires read: the ids, and as its result, what it was handed. */
const chooser =
  (choice: Choice) =>
  (fires: readonly FireToTell[]): { told: string[]; result: readonly FireToTell[] } => {
    const ids = fires.map((f) => f.fireId);
    const told =
      choice === "all"
        ? ids
        : choice === "first"
          ? ids.slice(0, 1)
          : choice === "none"
            ? []
            : choice === "everyOther"
              ? ids.filter((_, i) => i % 2 === 0)
              : [...ids, ...ids, "not-read"];
    return { told, result: fires };
  };

/** The case's journal and fire log, as built so far. */
interface Built {
  seqs: number[];
  fires: number;
  firstSeq: Map<string, number>;
}

async function both(b: BothStores, built: Built, o: Op, at: number): Promise<[unknown, unknown]> {
  switch (o.op) {
    case "row": {
      const name = RUNS[o.run] as string;
      const [seq] = (await appendBoth(b, [
        {
          kind: "run_event",
          source: "observer",
          event: { type: "tool", harness: harnessOf(name), run: name, tool: "Edit" },
        },
      ])) as [number];
      built.seqs.push(seq);
      if (!built.firstSeq.has(name)) built.firstSeq.set(name, seq);
      await decideBoth(
        b,
        o.fires.map((f) =>
          fireOf({
            id: `${PREFIXES[f.prefix]}${built.fires++}`,
            rule: "r",
            seq,
            target: {
              kind: f.target,
              key: f.target === "run" ? name : harnessOf(name),
              harness: harnessOf(name),
            },
            level: f.level,
            mode: f.shadow ? "shadow" : "active",
          }),
        ),
      );
      return [undefined, undefined];
    }
    case "prune": {
      // Retention's prune of a fire's row: the fire stays, its row is gone. Never the last row, as
      // retention never prunes it: SQLite would give its seq again.
      const seq = built.seqs.at(-2 - o.back);
      if (seq === undefined) return [undefined, undefined];
      b.sqlite.db.prepare("DELETE FROM rule_journal WHERE seq = ?").run(seq);
      await b.pg.pool.query("DELETE FROM rule_journal WHERE seq = $1", [seq]);
      return [undefined, undefined];
    }
    case "tell": {
      const name = RUNS[o.run] as string;
      const q: TellQuery = {
        run: name,
        harness: harnessOf(name),
        firstSeq: o.first === "true" ? built.firstSeq.get(name) : o.first === "none" ? undefined : o.first,
        levels: o.levels,
        limit: o.limit,
      };
      return [
        new AgentTold(b.sqlite.db).tell(q, at, chooser(o.choice)),
        await new PgAgentTold(b.pg.pool).tell(q, at, chooser(o.choice)),
      ];
    }
  }
}

async function expectSameTold(b: BothStores): Promise<void> {
  const told = await tableOnBoth(b, "agent_told", "run, fire_id");
  expect(told.pg).toEqual(told.sqlite);
}

describe("what hook-fed runs are told, on SQLite and PostgreSQL", () => {
  it("tells a run's fires and its harness's since its first row, oldest first, each once, the same on both", async () => {
    const b = await reset(pg);
    const built: Built = { seqs: [], fires: 0, firstSeq: new Map() };
    const fire = (prefix: number, target: "run" | "harness", level: Level = "notify", shadow = false) => ({
      prefix,
      target,
      shadow,
      level,
    });
    // A harness fire before impl#s2's first row is not told to it; one after is.
    await both(b, built, { op: "row", run: 0, fires: [fire(0, "harness"), fire(1, "run")] }, 1);
    await both(b, built, { op: "row", run: 1, fires: [fire(2, "harness"), fire(3, "run", "annotate")] }, 2);
    await both(
      b,
      built,
      { op: "row", run: 0, fires: [fire(4, "run", "stop"), fire(0, "run", "notify", true)] },
      3,
    );
    const tell = (run: number, limit: number): Op => ({
      op: "tell",
      run,
      levels: ["annotate", "notify"],
      limit,
      first: "true",
      choice: "all",
    });
    const [s1, p1] = await both(b, built, tell(1, 10), 4);
    expect(p1).toEqual(s1);
    // One row's fires by fire_id's bytes: "_" before "é", "B" before "a".
    expect((p1 as FireToTell[]).map((f) => f.fireId)).toEqual(["_3", "é2"]);
    expect((p1 as FireToTell[])[0]?.row).toEqual({
      kind: "run_event",
      type: "tool",
      event: JSON.stringify({ type: "tool", harness: "impl", run: "impl#s2", tool: "Edit" }),
    });
    // A run told a page at a time: what it was told is a prefix, read past the last fire told.
    const [s2, p2] = await both(b, built, tell(0, 2), 5);
    expect(p2).toEqual(s2);
    expect((p2 as FireToTell[]).map((f) => f.fireId)).toEqual(["B1", "a0"]);
    await both(b, built, { op: "prune", back: 0 }, 6);
    const [s3, p3] = await both(b, built, tell(0, 2), 7);
    expect(p3).toEqual(s3);
    expect(p3).toMatchObject([{ fireId: "é2", row: undefined }]);
    await expectSameTold(b);
  });

  it("same tellings over the same journal and fires give the same fires and the same rows", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 24 }), async (ops) => {
        const b = await reset(pg);
        const built: Built = { seqs: [], fires: 0, firstSeq: new Map() };
        for (const [i, o] of ops.entries()) {
          const [fromSqlite, fromPg] = await both(b, built, o, 100 + i);
          expect(fromPg, `${o.op} at ${i}`).toEqual(fromSqlite);
        }
        await expectSameTold(b);
      }),
      { numRuns: runs(40) },
    );
  });

  it("two tellings of one run at once on PostgreSQL tell each fire once", async () => {
    const b = await reset(pg);
    const built: Built = { seqs: [], fires: 0, firstSeq: new Map() };
    for (let i = 0; i < 4; i++)
      await both(
        b,
        built,
        { op: "row", run: 0, fires: [{ prefix: 0, target: "run", shadow: false, level: "notify" }] },
        i,
      );
    // Another transaction's uncommitted record of a0 holds every telling at its insert, once read:
    // the tellings overlap for certain, and each would tell all four if nothing kept them apart.
    const other = await b.pg.pool.connect();
    try {
      await other.query("BEGIN");
      await other.query("INSERT INTO agent_told (run, fire_id, seq, told_at) VALUES ('impl#s1', 'a0', 1, 0)");
      const told = new PgAgentTold(b.pg.pool);
      const q: TellQuery = { run: "impl#s1", harness: "impl", firstSeq: 1, levels: ["notify"], limit: 10 };
      const answers = Promise.all(
        Array.from({ length: 4 }, () =>
          told.tell(q, 9, (fires) => ({
            told: fires.map((f) => f.fireId),
            result: fires.map((f) => f.fireId),
          })),
        ),
      );
      // Until all four wait on a lock (the view is read afresh: a transaction keeps its first reading).
      const waiting = async () => {
        await other.query("SELECT pg_stat_clear_snapshot()");
        const r = await other.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        return r.rows[0]?.n;
      };
      while ((await waiting()) !== 4) await new Promise((resolve) => setTimeout(resolve, 5));
      await other.query("ROLLBACK");
      expect((await answers).flat().sort()).toEqual(["a0", "a1", "a2", "a3"]);
    } finally {
      other.release();
    }
  });
});
