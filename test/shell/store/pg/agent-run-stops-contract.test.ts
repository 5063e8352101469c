/**
 * Stops of hook-fed runs on SQLite (`AgentRunStops`) and PostgreSQL (`PgAgentRunStops`): the same calls
 * give the same answers, and leave the same `agent_run_stops` rows and `rule_actions` states.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentRunStop,
  AgentRunStops,
  LOOP_GUARD_RULE,
} from "../../../../src/shell/store/agent-run-stops.js";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgAgentRunStops } from "../../../../src/shell/store/pg/pg-agent-run-stops.js";
import { runs } from "../../../property-runs.js";
import { appendBoth, type BothStores, bothStores, decideBoth, fireOf, tableOnBoth } from "./both-stores.js";
import { openFreshPgStore } from "./pg-store.js";

const { reset } = bothStores("harness-run-stops-contract-");
let pg: OpenedPgStore;
beforeAll(async () => {
  pg = await openFreshPgStore("run_stops_contract", 6);
});
afterAll(async () => {
  await pg?.close();
});

const HARNESSES = ["impl", "review"];
const RUNS = ["impl#a", "impl#b", "impl#c", "review#a"];
const RULES = ["loop", "budget"];
/** Fire i is rule i % 2's, on harness i % 2. */
const FIRES = 3;
const fireId = (i: number) => `f-${i}`;

async function withFires(): Promise<BothStores> {
  const b = await reset(pg);
  const seqs = await appendBoth(
    b,
    Array.from({ length: FIRES }, (_, i) => ({
      kind: "run_event" as const,
      source: "observer" as const,
      event: { type: "tool", harness: HARNESSES[i % 2] as string, run: RUNS[i] as string, tool: "Bash" },
    })),
  );
  await decideBoth(
    b,
    seqs.map((seq, i) =>
      fireOf({
        id: fireId(i),
        rule: RULES[i % 2] as string,
        seq,
        target: { kind: "harness", key: HARNESSES[i % 2] as string, harness: HARNESSES[i % 2] as string },
      }),
    ),
  );
  return b;
}

const harnessOf = (run: string) => run.split("#")[0] as string;
const closedRow = (run: string) => ({
  kind: "run_event" as const,
  source: "ledger" as const,
  event: { type: "closed", harness: harnessOf(run), run, outcome: "success" },
});

async function expectSameTables(b: BothStores): Promise<void> {
  const stops = await tableOnBoth(b, "agent_run_stops", "run");
  expect(stops.pg).toEqual(stops.sqlite);
  const actions = await tableOnBoth(b, "rule_actions", "fire_id, action");
  expect(actions.pg).toEqual(actions.sqlite);
}

type Op =
  | { readonly op: "closed"; readonly run: number }
  | { readonly op: "ruleStop"; readonly fire: number; readonly runs: readonly number[] }
  | { readonly op: "loopGuardStop"; readonly run: number }
  | { readonly op: "get"; readonly run: number }
  | { readonly op: "released"; readonly run: number; readonly by: string | undefined }
  | {
      readonly op: "releasedWithHold";
      readonly fire: number;
      readonly loopGuard: boolean;
      readonly by: string | undefined;
    }
  | { readonly op: "delivered"; readonly run: number }
  | { readonly op: "closedFirst"; readonly run: number };

const run = fc.nat(RUNS.length - 1);
const by = fc.option(fc.constantFrom("operator", "clear"), { nil: undefined });
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant("closed" as const), run }),
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("ruleStop" as const),
      fire: fc.nat(FIRES - 1),
      runs: fc.array(run, { maxLength: 4 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("loopGuardStop" as const), run }) },
  fc.record({ op: fc.constant("get" as const), run }),
  fc.record({ op: fc.constant("released" as const), run, by }),
  fc.record({
    op: fc.constant("releasedWithHold" as const),
    fire: fc.nat(FIRES - 1),
    // The loop guard's stops are not a rule's: releasing its "rule" with a hold releases none of them.
    loopGuard: fc.boolean(),
    by,
  }),
  { weight: 2, arbitrary: fc.record({ op: fc.constant("delivered" as const), run }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("closedFirst" as const), run }) },
);

/** A stop for a run that has none: delivering it settles nothing on either backend. */
const noStop = (run: string): AgentRunStop => ({
  run,
  harness: "impl",
  rule: "loop",
  fireId: fireId(0),
  by: "rule",
  deliveredAt: undefined,
  releasedAt: undefined,
});

/** One call on both backends: the answers, SQLite's first. */
async function both(b: BothStores, o: Op, at: number): Promise<[unknown, unknown]> {
  const s = new AgentRunStops(b.sqlite.db);
  const p = new PgAgentRunStops(b.pg.pool);
  switch (o.op) {
    case "closed":
      await appendBoth(b, [closedRow(RUNS[o.run] as string)]);
      return [undefined, undefined];
    case "ruleStop": {
      const fire = { id: fireId(o.fire), rule: RULES[o.fire % 2] as string };
      const harness = HARNESSES[o.fire % 2] as string;
      const names = o.runs.map((r) => RUNS[r] as string);
      return [s.ruleStop(fire, harness, names, at), await p.ruleStop(fire, harness, names, at)];
    }
    case "loopGuardStop": {
      const name = RUNS[o.run] as string;
      const stop = { run: name, harness: harnessOf(name), loopSeq: at, at };
      return [s.loopGuardStop(stop), await p.loopGuardStop(stop)];
    }
    case "get":
      return [s.get(RUNS[o.run] as string), await p.get(RUNS[o.run] as string)];
    case "released":
      return [s.released(RUNS[o.run] as string, at, o.by), await p.released(RUNS[o.run] as string, at, o.by)];
    case "releasedWithHold": {
      const h = HARNESSES[o.fire % 2] as string;
      const r = o.loopGuard ? LOOP_GUARD_RULE : (RULES[o.fire % 2] as string);
      return [s.releasedWithHold(h, r, at, o.by), await p.releasedWithHold(h, r, at, o.by)];
    }
    case "delivered": {
      const name = RUNS[o.run] as string;
      const stop = s.get(name) ?? noStop(name);
      return [s.delivered(stop, at), await p.delivered(stop, at)];
    }
    case "closedFirst":
      return [s.closedFirst(RUNS[o.run] as string, at), await p.closedFirst(RUNS[o.run] as string, at)];
  }
}

describe("stops of hook-fed runs on SQLite and PostgreSQL", () => {
  it("a rule's stop of several runs, then delivered, closed first and released, leaves the same rows and action state", async () => {
    const b = await withFires();
    const s = new AgentRunStops(b.sqlite.db);
    const p = new PgAgentRunStops(b.pg.pool);
    // impl#c closed before the stop was recorded: it settles closed_first at once.
    await appendBoth(b, [closedRow("impl#c")]);
    const fire = { id: fireId(0), rule: "loop" };
    const stopped = ["impl#a", "impl#b", "impl#c"];
    s.ruleStop(fire, "impl", stopped, 10);
    await p.ruleStop(fire, "impl", stopped, 10);
    await expectSameTables(b);
    expect(await p.get("impl#a")).toEqual(s.get("impl#a"));
    expect((await p.get("impl#c"))?.deliveredAt).toBe(10);

    const a = s.get("impl#a") as AgentRunStop;
    expect(await p.delivered(a, 20)).toBe(s.delivered(a, 20));
    expect(await p.delivered(a, 21)).toBe(s.delivered(a, 21));
    await expectSameTables(b);

    s.closedFirst("impl#b", 30);
    await p.closedFirst("impl#b", 30);
    expect(await p.released("impl#a", 40, "operator")).toBe(s.released("impl#a", 40, "operator"));
    expect(await p.released("impl#a", 41)).toBe(s.released("impl#a", 41));
    expect(await p.releasedWithHold("impl", "loop", 50, "clear")).toBe(
      s.releasedWithHold("impl", "loop", 50, "clear"),
    );
    // The loop guard's stop is no rule's: clearing a hold releases it under no rule's name.
    const loop = { run: "review#a", harness: "review", loopSeq: 3, at: 60 };
    s.loopGuardStop(loop);
    await p.loopGuardStop(loop);
    expect(await p.releasedWithHold("review", LOOP_GUARD_RULE, 70)).toBe(
      s.releasedWithHold("review", LOOP_GUARD_RULE, 70),
    );
    await expectSameTables(b);
    const actions = await tableOnBoth(b, "rule_actions", "fire_id");
    expect(actions.pg[0]).toMatchObject({
      fire_id: "f-0",
      state: "ok",
      detail:
        "delivered to impl#a at its next hook call; impl#b closed before its next hook call; impl#c closed before its next hook call",
      updated_at: 30,
    });
  });

  it("a stop settled inside the caller's transaction commits with it, or not at all", async () => {
    const b = await withFires();
    const p = new PgAgentRunStops(b.pg.pool);
    await p.ruleStop({ id: fireId(0), rule: "loop" }, "impl", ["impl#a", "impl#b"], 10);
    const before = await tableOnBoth(b, "agent_run_stops", "run");
    const client = await b.pg.pool.connect();
    try {
      await client.query("BEGIN");
      expect(await p.delivered((await p.get("impl#a")) as AgentRunStop, 20, client)).toBe(true);
      await p.closedFirst("impl#b", 20, client);
      await p.loopGuardStop({ run: "impl#c", harness: "impl", loopSeq: 1, at: 20 }, client);
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
    expect((await tableOnBoth(b, "agent_run_stops", "run")).pg).toEqual(before.pg);
    expect((await tableOnBoth(b, "rule_actions", "fire_id")).pg[0]).toMatchObject({ state: "started" });
  });

  it("two runs of one fire settled at once on PostgreSQL sum its action up from both", async () => {
    const b = await withFires();
    const p = new PgAgentRunStops(b.pg.pool);
    await p.ruleStop({ id: fireId(0), rule: "loop" }, "impl", ["impl#a", "impl#b"], 10);
    const first = await b.pg.pool.connect();
    try {
      await first.query("BEGIN");
      await p.delivered((await p.get("impl#a")) as AgentRunStop, 20, first);
      // The second settles impl#b while the first has not committed, and must wait to sum up.
      const second = p.delivered((await p.get("impl#b")) as AgentRunStop, 21);
      const waiting = async () => {
        await first.query("SELECT pg_stat_clear_snapshot()");
        const r = await first.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        return r.rows[0]?.n;
      };
      while ((await waiting()) !== 1) await new Promise((resolve) => setTimeout(resolve, 5));
      await first.query("COMMIT");
      expect(await second).toBe(true);
    } finally {
      first.release();
    }
    expect((await tableOnBoth(b, "rule_actions", "fire_id")).pg[0]).toMatchObject({
      state: "ok",
      detail: "delivered to impl#a at its next hook call; delivered to impl#b at its next hook call",
    });
  });

  it("same calls give the same answers and the same rows", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 24 }), async (ops) => {
        const b = await withFires();
        for (const [i, o] of ops.entries()) {
          const [fromSqlite, fromPg] = await both(b, o, 100 + i);
          expect(fromPg, `${o.op} at ${i}`).toEqual(fromSqlite);
          await expectSameTables(b);
        }
      }),
      { numRuns: runs(40) },
    );
  });
});
