/**
 * Which run an agent session is now, on SQLite (`AgentSessionRuns`) and PostgreSQL
 * (`PgAgentSessionRuns`): the same sessions' runs and generations, and the same journal, give the same
 * answers and leave the same `agent_session_runs` rows; an insert one refuses the other refuses too.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentSessionRuns } from "../../../../src/shell/store/agent-session-runs.js";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgAgentSessionRuns } from "../../../../src/shell/store/pg/pg-agent-session-runs.js";
import type { PgNewRow } from "../../../../src/shell/store/pg/pg-journal.js";
import { runs } from "../../../property-runs.js";
import { appendBoth, type BothStores, bothStores, tableOnBoth } from "./both-stores.js";
import { openFreshPgStore } from "./pg-store.js";

const { reset } = bothStores("harness-session-runs-contract-");
let pg: OpenedPgStore;
beforeAll(async () => {
  pg = await openFreshPgStore("session_runs_contract", 4);
});
afterAll(async () => {
  await pg?.close();
});

const HARNESSES = ["impl", "review"];
const SESSIONS = ["s1", "s2"];
const RUNS = ["impl#s1", "impl#s1~2", "impl#s1~3", "review#s2"];

/** A closed row's reason: a string, none, an empty one, and shapes admission refuses but the store holds. */
const REASONS: readonly unknown[] = ["stale", undefined, "", 7, null, { why: "x" }, ["a", 1], true];

const row = (run: string, type: string, reason?: unknown): PgNewRow => ({
  kind: "run_event",
  source: "ledger",
  event: {
    type,
    harness: run.split("#")[0] as string,
    run,
    ...(reason === undefined ? {} : { reason }),
  } as PgNewRow["event"],
});

type Op =
  | { readonly op: "row"; readonly run: number; readonly type: string; readonly reason: number }
  | {
      readonly op: "add";
      readonly harness: number;
      readonly session: number;
      readonly run: number;
      readonly generation: number;
    }
  | { readonly op: "latestOf"; readonly harness: number; readonly session: number }
  | { readonly op: "sessionOf" | "closedReason" | "taken"; readonly run: number };

const run = fc.nat(RUNS.length - 1);
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    op: fc.constant("row" as const),
    run,
    type: fc.constantFrom("opened", "tool", "closed"),
    reason: fc.nat(REASONS.length - 1),
  }),
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("add" as const),
      harness: fc.nat(HARNESSES.length - 1),
      session: fc.nat(SESSIONS.length - 1),
      run,
      // 1 breaks the table's check on both.
      generation: fc.integer({ min: 1, max: 4 }),
    }),
  },
  fc.record({
    op: fc.constant("latestOf" as const),
    harness: fc.nat(HARNESSES.length - 1),
    session: fc.nat(SESSIONS.length - 1),
  }),
  fc.record({ op: fc.constantFrom("sessionOf" as const, "closedReason" as const, "taken" as const), run }),
);

/** An answer, or that the call was refused. */
async function outcome<T>(call: () => T | Promise<T>): Promise<{ value: T } | { refused: true }> {
  try {
    return { value: await call() };
  } catch {
    return { refused: true };
  }
}

async function both(b: BothStores, o: Op, at: number): Promise<[unknown, unknown]> {
  const s = new AgentSessionRuns(b.sqlite.db);
  const p = new PgAgentSessionRuns(b.pg.pool);
  switch (o.op) {
    case "row":
      await appendBoth(b, [row(RUNS[o.run] as string, o.type, REASONS[o.reason])]);
      return [undefined, undefined];
    case "add": {
      const [h, session] = [HARNESSES[o.harness] as string, SESSIONS[o.session] as string];
      const next = { run: RUNS[o.run] as string, generation: o.generation };
      return [
        await outcome(() => s.add(h, session, next, at)),
        await outcome(() => p.add(h, session, next, at)),
      ];
    }
    case "latestOf": {
      const [h, session] = [HARNESSES[o.harness] as string, SESSIONS[o.session] as string];
      return [s.latestOf(h, session), await p.latestOf(h, session)];
    }
    case "sessionOf":
      return [s.sessionOf(RUNS[o.run] as string), await p.sessionOf(RUNS[o.run] as string)];
    case "closedReason":
      return [s.closedReason(RUNS[o.run] as string), await p.closedReason(RUNS[o.run] as string)];
    case "taken":
      return [s.taken(RUNS[o.run] as string), await p.taken(RUNS[o.run] as string)];
  }
}

/** Every read of every run and session, and the table, on both. */
async function expectSameReads(b: BothStores): Promise<void> {
  const s = new AgentSessionRuns(b.sqlite.db);
  const p = new PgAgentSessionRuns(b.pg.pool);
  for (const r of RUNS) {
    expect(await p.closedReason(r), r).toEqual(s.closedReason(r));
    expect(await p.taken(r), r).toEqual(s.taken(r));
    expect(await p.sessionOf(r), r).toEqual(s.sessionOf(r));
  }
  for (const h of HARNESSES)
    for (const session of SESSIONS) expect(await p.latestOf(h, session)).toEqual(s.latestOf(h, session));
  const rows = await tableOnBoth(b, "agent_session_runs", "run");
  expect(rows.pg).toEqual(rows.sqlite);
}

describe("an agent session's runs on SQLite and PostgreSQL", () => {
  it("a session's later runs and their generations, and its runs' closed rows, read the same", async () => {
    const b = await reset(pg);
    const s = new AgentSessionRuns(b.sqlite.db);
    const p = new PgAgentSessionRuns(b.pg.pool);
    await appendBoth(b, [
      row("impl#s1", "opened"),
      row("impl#s1", "closed", "stale"),
      row("impl#s1", "closed", "late"),
      // Shapes admission refuses, read as SQLite's json_extract gives them.
      row("impl#s1~2", "closed", { why: "x" }),
      row("impl#s1~3", "closed", 7),
    ]);
    for (const [i, next] of [
      { run: "impl#s1~2", generation: 2 },
      { run: "impl#s1~3", generation: 3 },
    ].entries()) {
      s.add("impl", "s1", next, 10 + i);
      await p.add("impl", "s1", next, 10 + i);
    }
    expect(await p.latestOf("impl", "s1")).toEqual({ run: "impl#s1~3", generation: 3 });
    expect(await p.latestOf("impl", "s1")).toEqual(s.latestOf("impl", "s1"));
    expect(await p.latestOf("review", "s1")).toEqual(s.latestOf("review", "s1"));
    expect(await p.sessionOf("impl#s1~2")).toEqual(s.sessionOf("impl#s1~2"));
    await expectSameReads(b);
    expect(await p.taken("nobody")).toBe(s.taken("nobody"));
    expect(await p.closedReason("impl#s1")).toBe("stale");
    expect(await p.closedReason("impl#s1~2")).toBe('{"why":"x"}');
    expect(await p.closedReason("impl#s1~3")).toBe("");
    // A generation taken already is refused on both.
    const again = { run: "impl#s1~4", generation: 3 };
    expect(() => s.add("impl", "s1", again, 20)).toThrow();
    await expect(p.add("impl", "s1", again, 20)).rejects.toThrow();
    await expectSameReads(b);
  });

  it("same calls give the same answers and the same rows", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 24 }), async (ops) => {
        const b = await reset(pg);
        for (const [i, o] of ops.entries()) {
          const [fromSqlite, fromPg] = await both(b, o, 100 + i);
          expect(fromPg, `${o.op} at ${i}`).toEqual(fromSqlite);
        }
        await expectSameReads(b);
      }),
      { numRuns: runs(40) },
    );
  });
});
