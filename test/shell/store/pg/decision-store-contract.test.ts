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
    await fc.assert(
      fc.asyncProperty(planArb, progress, fc.nat(10_000), async (plan, steps, settleAfter) => {
        const sqlite = stores.open(stores.storeFile());
        const pg = await openFreshPgStore("decision_store", 3);
        pgStores.push(pg);
        try {
          const { rows, fires } = await populate(sqlite, pg, plan);
          const lite = new DecisionStore(sqlite.db);
          const post = new PgDecisionStore(pg.pool);
          expect(await post.activeHolds()).toEqual(lite.activeHolds());
          expect(await pgReadShadows(pg.pool)).toEqual(readShadows(sqlite.db));
          const last = rows[rows.length - 1]?.at ?? 0;
          for (const s of steps) {
            // Fires past the log's end name no action: the update changes nothing on either.
            const fire = fires[s.fire % (fires.length + 1)]?.id ?? "f-0-0";
            lite.setActionState(fire, s.action, s.state, s.detail, last + s.after);
            await post.setActionState(fire, s.action, s.state, s.detail, last + s.after);
          }
          const actions = await tableOnBoth(sqlite, pg, "rule_actions", "fire_id, action");
          expect(actions.pg).toEqual(actions.sqlite);
          const [liteReads, postReads] = [new RuleReads(sqlite.db), new PgRuleReads(pg.pool)];
          expect(await postReads.actionsInFlight()).toBe(liteReads.actionsInFlight());
          const at = last + settleAfter;
          const answer = lite.settleInterrupted(at);
          expect(await post.settleInterrupted(at)).toEqual(answer);
          settled += answer.undelivered + answer.unknown;
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
      }),
      { numRuns: runs(8) },
    );
    // The plans reach actions to settle.
    expect(settled).toBeGreaterThan(0);
  }, 240_000);
});
