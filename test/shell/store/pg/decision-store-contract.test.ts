/**
 * Issue 34: DecisionStore's methods outside the commit path on PostgreSQL (PgDecisionStore,
 * pgReadShadows) answer as SQLite's over the same decisions: the holds in force and the shadow records,
 * an action's progress recorded, and the settling at start of what a previous daemon left unfinished
 * (a stop still waiting for a hook-fed run's next call survives it), each leaving rule_actions alike.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { type ActionState, DecisionStore, readShadows } from "../../../../src/shell/store/decision-store.js";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgDecisionStore, pgReadShadows } from "../../../../src/shell/store/pg/pg-decision-store.js";
import { PgRuleReads } from "../../../../src/shell/store/pg/pg-rule-reads.js";
import { RuleReads } from "../../../../src/shell/store/rule-reads.js";
import { runs } from "../../../property-runs.js";
import { tempStores } from "../temp-stores.js";
import { openFreshPgStore } from "./pg-store.js";
import { planArb, populate, tableOnBoth } from "./same-decisions.js";

const stores = tempStores("decision-store-contract-");
const pgStores: OpenedPgStore[] = [];
afterAll(async () => {
  for (const s of pgStores.splice(0)) await s.close();
});

const STATES: readonly ActionState[] = [
  "pending",
  "started",
  "ok",
  "error",
  "timeout",
  "dropped",
  "suppressed",
  "undelivered",
  "unknown",
];

const progress = fc.array(
  fc.record({
    fire: fc.nat(),
    /** The action a step names when it names none planned. */
    action: fc.constantFrom("notify" as const, "stop" as const),
    state: fc.constantFrom(...STATES),
    detail: fc.option(fc.string({ maxLength: 8 }), { nil: undefined }),
    after: fc.nat(5_000),
  }),
  { maxLength: 30 },
);

describe("DecisionStore's reads and action states on PostgreSQL", () => {
  it("answers the holds, shadows, action progress and the settling at start as SQLite's does", async () => {
    let settled = 0;
    let waiting = 0;
    await fc.assert(
      fc.asyncProperty(
        planArb,
        progress,
        fc.integer({ min: 1, max: 4 }),
        fc.nat(10_000),
        async (plan, steps, startedStops, settleAfter) => {
          const sqlite = stores.open(stores.storeFile());
          const pg = await openFreshPgStore("decision_store", 3);
          pgStores.push(pg);
          try {
            const { rows, fires } = await populate(sqlite, pg, plan);
            const lite = new DecisionStore(sqlite.db);
            const post = new PgDecisionStore(pg.pool);
            // The same decisions stored alike on both, which every answer below rests on.
            for (const [table, order] of [
              ["rule_fires", "fire_id"],
              ["rule_holds", "id"],
              ["rule_annotations", "fire_id"],
              ["rule_suppressed", "hash, rule"],
              ["rule_shadows", "hash"],
              ["agent_run_stops", "run"],
            ] as const) {
              const both = await tableOnBoth(sqlite, pg, table, order);
              expect(both.pg, table).toEqual(both.sqlite);
            }
            expect(await post.activeHolds()).toEqual(lite.activeHolds());
            expect(await pgReadShadows(pg.pool)).toEqual(readShadows(sqlite.db));
            const last = rows[rows.length - 1]?.at ?? 0;
            // Each step names an action the fires planned, or (one in n + 1) one no fire planned.
            const planned = fires.flatMap((f) =>
              f.actions.flatMap((a) =>
                a.kind === "notify" || a.kind === "stop" ? [[f.id, a.kind] as const] : [],
              ),
            );
            for (const s of steps) {
              const [fire, action] = planned[s.fire % (planned.length + 1)] ?? ["f-0-0", s.action];
              lite.setActionState(fire, action, s.state, s.detail, last + s.after);
              await post.setActionState(fire, action, s.state, s.detail, last + s.after);
            }
            // The first stops started last: those with a hook-fed run's stop (same-decisions.ts) wait on it.
            for (const [fire] of planned.filter(([, a]) => a === "stop").slice(0, startedStops)) {
              lite.setActionState(fire, "stop", "started", undefined, last);
              await post.setActionState(fire, "stop", "started", undefined, last);
            }
            const actions = await tableOnBoth(sqlite, pg, "rule_actions", "fire_id, action");
            expect(actions.pg).toEqual(actions.sqlite);
            const [liteReads, postReads] = [new RuleReads(sqlite.db), new PgRuleReads(pg.pool)];
            expect(await postReads.actionsInFlight()).toBe(liteReads.actionsInFlight());
            const started = (await tableOnBoth(sqlite, pg, "rule_actions", "fire_id, action")).sqlite.filter(
              (a) => (a as { state: string }).state === "started",
            ).length;
            const at = last + settleAfter;
            const answer = lite.settleInterrupted(at);
            expect(await post.settleInterrupted(at)).toEqual(answer);
            settled += answer.undelivered + answer.unknown;
            if (answer.unknown < started) waiting++;
            const after = await tableOnBoth(sqlite, pg, "rule_actions", "fire_id, action");
            expect(after.pg).toEqual(after.sqlite);
            for (const state of ["undelivered", "unknown"] as const)
              for (const since of [0, last, at - 1, at])
                expect(await postReads.stopsSince(state, since)).toBe(liteReads.stopsSince(state, since));
            expect(await postReads.actionsInFlight()).toBe(liteReads.actionsInFlight());
          } finally {
            await pg.close();
            pgStores.splice(pgStores.indexOf(pg), 1);
          }
        },
      ),
      { numRuns: runs(8) },
    );
    // The plans reach actions to settle.
    expect(settled).toBeGreaterThan(0);
    // And a started stop still waiting for a hook-fed run, which the settling leaves.
    expect(waiting).toBeGreaterThan(0);
  }, 240_000);
});
