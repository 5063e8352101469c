/**
 * Issue 34: RuleReads on PostgreSQL answers every read as SQLite's does over the same journal and the
 * same decisions: each read with its limits, filters and cursors, and each page of a walk that follows
 * a cursor to the end.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgRuleReads } from "../../../../src/shell/store/pg/pg-rule-reads.js";
import { RuleReads } from "../../../../src/shell/store/rule-reads.js";
import { runs } from "../../../property-runs.js";
import { tempStores } from "../temp-stores.js";
import { openFreshPgStore } from "./pg-store.js";
import { HARNESSES, hashOf, NODES, planArb, populate, RULES, RUNS } from "./same-decisions.js";

const stores = tempStores("rule-reads-contract-");
const pgStores: OpenedPgStore[] = [];
afterAll(async () => {
  for (const s of pgStores.splice(0)) await s.close();
});

/** `read` on both; the answers, which the caller compares. */
type Both = <T>(read: (r: RuleReads | PgRuleReads) => T | Promise<T>) => Promise<T>;

/** Whether an answer holds anything, so a check can say the plans reached it. */
const some = (a: unknown): boolean =>
  Array.isArray(a) ? a.length > 0 : typeof a === "number" ? a > 0 : a !== undefined;

describe("RuleReads on PostgreSQL", () => {
  it("answers every read, limit, filter and page as SQLite's does over the same decisions", async () => {
    const reached = new Set<string>();
    await fc.assert(
      fc.asyncProperty(planArb, fc.constantFrom(1, 2, 5, 1000), async (plan, limit) => {
        const sqlite = stores.open(stores.storeFile());
        const pg = await openFreshPgStore("rule_reads", 3);
        pgStores.push(pg);
        try {
          const { rows, fires } = await populate(sqlite, pg, plan);
          const lite = new RuleReads(sqlite.db);
          const post = new PgRuleReads(pg.pool);
          const same: Both = async (read) => {
            const a = await read(lite);
            expect(await read(post)).toEqual(a);
            return a;
          };
          const seqs = [0, 1, Math.ceil(rows.length / 2), rows.length, rows.length + 1];
          const ats = [0, ...rows.map((r) => r.at)].filter((_, i) => i % 7 === 0 || i === rows.length);
          const fireIds = [...fires.map((f) => f.id), "f-999-0"];
          const hashes = [...RULES.map(hashOf), "h-none"];

          for (const h of hashes) {
            await same((r) => r.lastFire(h));
            if (some(await same((r) => r.suppressed(h)))) reached.add("suppressed");
            for (const s of seqs) await same((r) => r.firesOf(h, s));
          }
          for (const id of fireIds) {
            await same((r) => r.fire(id));
            await same((r) => r.actions(id));
            if (some(await same((r) => r.holdOf(id)))) reached.add("holdOf");
          }
          for (const rule of [undefined, ...RULES])
            for (const harness of [undefined, ...HARNESSES])
              for (const sinceMs of [0, rows[Math.floor(rows.length / 2)]?.at ?? 0])
                for (const beforeSeq of [undefined, Math.ceil(rows.length / 2)])
                  await same((r) =>
                    r.fires(
                      {
                        ...(rule === undefined ? {} : { rule }),
                        ...(harness === undefined ? {} : { harness }),
                        sinceMs,
                        ...(beforeSeq === undefined ? {} : { beforeSeq }),
                      },
                      limit,
                    ),
                  );
          // Paging back through the log as the fire list does: each page before the last one's seq.
          let before: number | undefined;
          for (let page = 0; page < fires.length + 1; page++) {
            const from = before;
            const [a, b] = [
              lite.fires({ sinceMs: 0, ...(from === undefined ? {} : { beforeSeq: from }) }, limit),
              await post.fires({ sinceMs: 0, ...(from === undefined ? {} : { beforeSeq: from }) }, limit),
            ];
            expect(b).toEqual(a);
            if (a.length === 0) break;
            before = a[a.length - 1]?.seq;
          }
          for (const s of seqs) {
            await same((r) => r.journalRow(s));
            await same((r) => r.firesAfterSeq(s, limit));
            for (const run of RUNS)
              if (some(await same((r) => r.runRowsBefore(run, s, limit)))) reached.add("runRowsBefore");
          }
          for (let s = 0; s <= rows.length + 1; s++)
            if ((await same((r) => r.firesAtSeq(s))).length > 10) reached.add("ten fires of a row");
          await same((r) => r.fires({ sinceMs: 0 }, fires.length + 1));
          // Following the log forwards a page at a time, by seq and by rowid.
          let seq = 0;
          for (let page = 0; page <= fires.length; page++) {
            const a = lite.firesAfterSeq(seq, limit);
            expect(await post.firesAfterSeq(seq, limit)).toEqual(a);
            if (a.length === 0) break;
            seq = a[a.length - 1]?.seq as number;
          }
          for (const rowid of [0, 1, Math.floor(fires.length / 2), fires.length, fires.length + 3])
            await same((r) => r.firesAfter(rowid));
          await same((r) => r.journalRows());
          await same((r) => r.journal.last());
          for (const at of [...ats, Number.MAX_SAFE_INTEGER]) {
            await same((r) => r.journal.firstAdmittedAfter(at - 1));
            await same((r) => r.journal.firstAdmittedAfter(at));
          }
          for (const run of [...RUNS, "none"])
            if (some(await same((r) => r.loopStop(run)))) reached.add("loopStop");
          for (const harness of [undefined, ...HARNESSES])
            if (some(await same((r) => r.releasedHolds(harness, limit)))) reached.add("releasedHolds");
          for (const node of [undefined, ...NODES, "none"])
            if (some(await same((r) => r.annotations(node, limit)))) reached.add("annotations");
          for (const at of [...ats, Number.MAX_SAFE_INTEGER])
            if (some(await same((r) => r.fireCounts(at)))) reached.add("fireCounts");
          let after = "";
          for (let page = 0; page <= NODES.length; page++) {
            const a = lite.annotatedNodes(after, limit);
            expect(await post.annotatedNodes(after, limit)).toEqual(a);
            if (a.length === 0) break;
            after = a[a.length - 1]?.node as string;
          }
          await same((r) => r.actionsInFlight());
          for (const state of ["undelivered", "unknown"] as const)
            for (const at of ats) await same((r) => r.stopsSince(state, at));
        } finally {
          await pg.close();
          pgStores.splice(pgStores.indexOf(pg), 1);
        }
      }),
      { numRuns: runs(8) },
    );
    expect([...reached].sort()).toEqual(
      [
        "annotations",
        "fireCounts",
        "holdOf",
        "loopStop",
        "releasedHolds",
        "runRowsBefore",
        "suppressed",
        "ten fires of a row",
      ].sort(),
    );
  }, 240_000);
});
