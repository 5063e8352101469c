/**
 * Issue 34: the notify hook's cooldowns on PostgreSQL answer as SQLite's: the same calls (record,
 * look up, forget those sent by a time) give the same answers and leave the same table on both.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { NotifyCooldowns } from "../../../../src/shell/store/notify-cooldowns.js";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgNotifyCooldowns } from "../../../../src/shell/store/pg/pg-notify-cooldowns.js";
import { runs } from "../../../property-runs.js";
import { tempStores } from "../temp-stores.js";
import { openFreshPgStore } from "./pg-store.js";
import { tableOnBoth } from "./same-decisions.js";

const stores = tempStores("notify-cooldowns-contract-");
const pgStores: OpenedPgStore[] = [];
afterAll(async () => {
  for (const s of pgStores.splice(0)) await s.close();
});

const key = fc.record({
  harness: fc.constantFrom("impl", "review"),
  event: fc.constantFrom("rule_fired", "run_failed"),
  rule: fc.constantFrom("a", "b", ""),
});
const call = fc.oneof(
  fc.record({ op: fc.constant("lastSent" as const), key }),
  fc.record({ op: fc.constant("recordSent" as const), key, at: fc.nat(5) }),
  fc.record({ op: fc.constant("forgetSentBy" as const), at: fc.nat(5) }),
);

describe("NotifyCooldowns on PostgreSQL", () => {
  it("answers the same calls as SQLite's and leaves the same cooldowns", async () => {
    const pg = await openFreshPgStore("notify_cooldowns", 2);
    pgStores.push(pg);
    const post = new PgNotifyCooldowns(pg.pool);
    await fc.assert(
      fc.asyncProperty(fc.array(call, { maxLength: 40 }), async (calls) => {
        await pg.pool.query("DELETE FROM notify_cooldowns");
        const sqlite = stores.open(stores.storeFile());
        const lite = new NotifyCooldowns(sqlite.db);
        for (const c of calls) {
          if (c.op === "lastSent") expect(await post.lastSent(c.key)).toBe(lite.lastSent(c.key));
          else if (c.op === "recordSent") {
            lite.recordSent(c.key, c.at);
            await post.recordSent(c.key, c.at);
          } else {
            lite.forgetSentBy(c.at);
            await post.forgetSentBy(c.at);
          }
        }
        const both = await tableOnBoth(sqlite, pg, "notify_cooldowns", "harness, event, rule");
        expect(both.pg).toEqual(both.sqlite);
      }),
      { numRuns: runs(40) },
    );
  });
});
