/**
 * Issue 34: the policy repos' last good commits on PostgreSQL answer as SQLite's: the same records and
 * look-ups give the same answers and leave the same table on both.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { LastGoodCommits } from "../../../../src/shell/store/last-good-commits.js";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgLastGoodCommits } from "../../../../src/shell/store/pg/pg-last-good-commits.js";
import { runs } from "../../../property-runs.js";
import { tempStores } from "../temp-stores.js";
import { openFreshPgStore } from "./pg-store.js";
import { tableOnBoth } from "./same-decisions.js";

const stores = tempStores("last-good-contract-");
const pgStores: OpenedPgStore[] = [];
afterAll(async () => {
  for (const s of pgStores.splice(0)) await s.close();
});

const repo = fc.constantFrom("forge/a", "forge/b", "forge/A");
const call = fc.oneof(
  fc.record({ op: fc.constant("get" as const), repo }),
  fc.record({
    op: fc.constant("record" as const),
    good: fc.record({
      repo,
      branch: fc.constantFrom("main", "trunk"),
      commit: fc.stringMatching(/^[0-9a-f]{1,8}$/),
      loadedAt: fc.nat(),
    }),
  }),
);

describe("LastGoodCommits on PostgreSQL", () => {
  it("answers the same calls as SQLite's and leaves the same rows", async () => {
    const pg = await openFreshPgStore("last_good", 2);
    pgStores.push(pg);
    const post = new PgLastGoodCommits(pg.pool);
    await fc.assert(
      fc.asyncProperty(fc.array(call, { maxLength: 30 }), async (calls) => {
        await pg.pool.query("DELETE FROM policy_last_good");
        const sqlite = stores.open(stores.storeFile());
        const lite = new LastGoodCommits(sqlite.db);
        for (const c of calls) {
          if (c.op === "get") expect(await post.get(c.repo)).toEqual(lite.get(c.repo));
          else {
            lite.record(c.good);
            await post.record(c.good);
          }
        }
        const both = await tableOnBoth(sqlite, pg, "policy_last_good", "repo");
        expect(both.pg).toEqual(both.sqlite);
      }),
      { numRuns: runs(40) },
    );
  });
});
