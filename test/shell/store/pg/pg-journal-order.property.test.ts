/**
 * One order under concurrency (issue 34, decision 0019): writer connections append batches at once,
 * some paused or failed inside their transactions while holding the head, some repeating an Append key
 * another writer sent, while a reader follows the journal from a cursor in seq order. The reader never
 * sees a gap (so no row can commit below its cursor), `at` never goes back in seq order, every
 * acknowledged group is in the journal once with the seqs it was given, and nothing else is.
 */
import fc from "fast-check";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JournalRow } from "../../../../src/core/journal.js";
import { type OpenedPgStore, openPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { type PgGroup, type PgGroupResult, PgJournal } from "../../../../src/shell/store/pg/pg-journal.js";
import { runs, runsTimeout } from "../../../property-runs.js";
import { type PgDatabase, pgOptions } from "../../../support/pg-cluster.js";
import { freshPgDatabase } from "./pg-store.js";

interface GroupPlan {
  readonly size: number;
  readonly key: string | undefined;
}
interface BatchPlan {
  readonly groups: readonly GroupPlan[];
  /** ms to hold the head before committing. */
  readonly pause: number;
  /** The batch fails before its commit. */
  readonly fail: boolean;
}

const batchArb: fc.Arbitrary<BatchPlan> = fc.record({
  groups: fc.array(
    fc.record({
      size: fc.integer({ min: 1, max: 4 }),
      key: fc.option(fc.constantFrom("a", "b", "c", "d"), { nil: undefined }),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  pause: fc.constantFrom(0, 0, 0, 1, 4),
  fail: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
});
const workloadArb = fc.array(fc.array(batchArb, { minLength: 1, maxLength: 6 }), {
  minLength: 2,
  maxLength: 4,
});

const WRITERS = 4;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What a writer was told about one group it appended. */
interface Acked {
  readonly id: string;
  readonly size: number;
  readonly key: string | undefined;
  readonly result: PgGroupResult;
}

describe("the journal's order on PostgreSQL under concurrent writers", () => {
  let db: PgDatabase;
  let writers: OpenedPgStore[];
  let reader: OpenedPgStore;
  let cases = 0;

  beforeAll(async () => {
    db = await freshPgDatabase("pg_order");
    // One connection per writer, so the writers' transactions really run at once.
    writers = await Promise.all(
      Array.from({ length: WRITERS }, () => openPgStore({ ...pgOptions(db), max: 1 })),
    );
    reader = await openPgStore({ ...pgOptions(db), max: 1 });
  });
  afterAll(async () => {
    await Promise.all([...(writers ?? []), reader].map((s) => s?.close()));
  });

  it(
    "a reader in seq order sees no gap, at never goes back, and every acknowledged row is there once",
    async () => {
      await fc.assert(
        fc.asyncProperty(workloadArb, async (workload) => {
          cases++;
          const prefix = `case${cases}`;
          const readerJournal = new PgJournal(reader.pool);
          const start = (await readerJournal.last()).seq;
          const acked: Acked[] = [];
          const failed: string[] = [];
          let writing = true;
          const write = async (plans: readonly BatchPlan[], w: number, pool: pg.Pool) => {
            let plan: BatchPlan | undefined;
            const journal = new PgJournal(pool, {
              beforeCommit: async () => {
                if (plan === undefined) return;
                if (plan.pause > 0) await sleep(plan.pause);
                if (plan.fail) throw new Error("failpoint");
              },
            });
            for (const [b, p] of plans.entries()) {
              plan = p;
              const groups: PgGroup[] = p.groups.map((g, i) => ({
                rows: Array.from({ length: g.size }, (_, r) => ({
                  kind: "run_event" as const,
                  source: "observer" as const,
                  event: { type: "tool", id: `${prefix}/${w}/${b}/${i}`, r },
                })),
                key:
                  g.key === undefined
                    ? undefined
                    : {
                        source: "observer" as const,
                        key: `${prefix}/${g.key}`,
                        answer: (seqs) => JSON.stringify({ id: `${prefix}/${w}/${b}/${i}`, seqs }),
                      },
              }));
              try {
                const { results } = await journal.commit(groups);
                results.forEach((result, i) => {
                  const g = p.groups[i] as GroupPlan;
                  acked.push({ id: `${prefix}/${w}/${b}/${i}`, size: g.size, key: g.key, result });
                });
              } catch (e) {
                expect((e as Error).message).toBe("failpoint");
                p.groups.forEach((_, i) => {
                  failed.push(`${prefix}/${w}/${b}/${i}`);
                });
              }
            }
          };
          const seen: JournalRow[] = [];
          const read = async () => {
            let cursor = start;
            for (;;) {
              const last = !writing;
              const page = await readerJournal.rowsAfter(cursor, 5);
              for (const row of page) {
                // Seqs are given with no gap, in commit order: a gap here would be a row still to
                // commit below the cursor.
                expect(row.seq).toBe(cursor + 1);
                cursor = row.seq;
                seen.push(row);
              }
              if (last && page.length === 0) return;
            }
          };
          const reading = read();
          // Awaited after the writers; until then its failure must not count as unhandled.
          reading.catch(() => {});
          await Promise.all(workload.map((plans, w) => write(plans, w, (writers[w] as OpenedPgStore).pool)));
          writing = false;
          await reading;

          // Nothing appeared below what the reader read: the journal after start is what it saw.
          const all: JournalRow[] = [];
          for await (const row of readerJournal.rowsInRange(start + 1, Number.MAX_SAFE_INTEGER))
            all.push(row);
          expect(all.map((r) => r.seq)).toEqual(seen.map((r) => r.seq));
          for (let i = 1; i < seen.length; i++)
            expect((seen[i] as JournalRow).at).toBeGreaterThanOrEqual((seen[i - 1] as JournalRow).at);

          const byId = new Map<string, JournalRow[]>();
          for (const row of seen) {
            const id = row.event.id as string;
            byId.set(id, [...(byId.get(id) ?? []), row]);
          }
          const firstOfKey = new Map<string, Acked>();
          for (const a of acked) {
            const rows = byId.get(a.id) ?? [];
            if (a.result.kind === "committed") {
              expect(rows.map((r) => r.seq)).toEqual(a.result.seqs);
              expect(rows.map((r) => r.event.r)).toEqual(Array.from({ length: a.size }, (_, r) => r));
              if (a.key !== undefined) {
                expect(firstOfKey.has(a.key)).toBe(false);
                firstOfKey.set(a.key, a);
              }
            } else expect(rows).toEqual([]);
          }
          for (const a of acked)
            if (a.result.kind === "repeated") {
              const first = firstOfKey.get(a.key as string);
              if (first?.result.kind !== "committed")
                throw new Error(`${a.id}: repeated, but no group committed its key ${a.key}`);
              expect(JSON.parse(a.result.answer)).toEqual({ id: first.id, seqs: first.result.seqs });
            }
          for (const id of failed) expect(byId.get(id)).toBeUndefined();
          const ackedIds = new Set(acked.map((a) => a.id));
          for (const id of byId.keys()) expect(ackedIds.has(id)).toBe(true);
        }),
        { numRuns: runs(6) },
      );
    },
    runsTimeout(60_000),
  );
});
