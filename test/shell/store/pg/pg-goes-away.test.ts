/**
 * Issue 34 item 4, at the journal writer: the database goes away (its server crashes mid-stream, as a
 * host losing power stops it) and comes back. Producers offer keyed groups throughout, as Append does;
 * while the server is away their groups are answered with an error, never left waiting; a producer
 * retries an unanswered group with its key, as `harness journal append` does. Once the server is back
 * the writer commits again by itself, every acknowledged group is in the journal exactly once, every
 * retried group once (a retry of a group whose commit landed before its answer was lost is answered
 * `repeated`, not appended twice), and seqs have no gap and `at` never goes back.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventFields } from "../../../../src/core/journal.js";
import { JournalWriter } from "../../../../src/shell/journal/journal-writer.js";
import { type OpenedPgStore, openPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgJournalLog } from "../../../../src/shell/store/pg/pg-write-ports.js";
import type { GroupResult } from "../../../../src/shell/store/write-ports.js";
import { DaemonMetrics } from "../../../../src/shell/support/metrics.js";
import { type OwnCluster, ownCluster } from "../../../support/pg-own-cluster.js";

let cluster: OwnCluster;
let store: OpenedPgStore;
beforeAll(async () => {
  cluster = ownCluster();
  store = await openPgStore({ ...cluster.options, max: 4, connectionTimeoutMillis: 2_000 });
}, 120_000);
afterAll(async () => {
  await store?.close().catch(() => {});
  cluster?.remove();
});

const GROUPS = 120;
const ROWS = 3;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const groupOf = (g: number): { source: "observer"; kind: "run_event"; event: EventFields }[] =>
  Array.from({ length: ROWS }, (_, i) => ({
    source: "observer",
    kind: "run_event",
    event: { type: "mark", harness: "h", run: "h#1", mark: "turn_end", group: g, row: i },
  }));

describe("the database goes away and comes back", () => {
  it("loses no acknowledged row, answers what it could not commit with an error, and commits again by itself", async () => {
    const errors: Error[] = [];
    const writer = new JournalWriter(new PgJournalLog(store.pool), {
      queueLimit: 10_000,
      batchSize: 8,
      clock: Date.now,
      metrics: new DaemonMetrics(),
      onCommitted: () => {},
      onError: (e) => errors.push(e),
    });
    const offer = (g: number): Promise<GroupResult> => {
      const { result } = writer.offerGroup(groupOf(g), {
        source: "observer",
        key: `group-${g}`,
        answer: (seqs) => JSON.stringify(seqs),
      });
      if (result === undefined) throw new Error(`group ${g} was dropped`);
      return result;
    };
    const answered = new Map<number, GroupResult>();
    const failed: number[] = [];
    const first: Promise<unknown>[] = [];
    for (let g = 0; g < GROUPS; g++) {
      if (g === 40) cluster.crash();
      if (g === 80) cluster.start();
      first.push(
        offer(g).then(
          (r) => answered.set(g, r),
          () => failed.push(g),
        ),
      );
      await sleep(5);
    }
    await Promise.all(first);
    // While the server was away, groups were answered, with an error.
    expect(failed.length).toBeGreaterThan(0);
    expect(errors.length).toBeGreaterThan(0);
    // The producer's retries, with the same keys, once the server is back.
    for (const g of failed) answered.set(g, await offer(g));
    await writer.close();
    expect([...answered.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: GROUPS }, (_, g) => g));

    const rows = (
      await store.pool.query<{ seq: number; at: number; event: string }>(
        "SELECT seq, at, event FROM rule_journal ORDER BY seq",
      )
    ).rows;
    expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
    for (let i = 1; i < rows.length; i++)
      expect(rows[i]?.at).toBeGreaterThanOrEqual(rows[i - 1]?.at as number);
    // Each group's rows exactly once, whether acknowledged first time, committed on retry, or repeated.
    const count = new Map<number, number>();
    for (const r of rows) {
      const g = (JSON.parse(r.event) as { group: number }).group;
      count.set(g, (count.get(g) ?? 0) + 1);
    }
    expect([...count.entries()].filter(([, n]) => n !== ROWS)).toEqual([]);
    expect(count.size).toBe(GROUPS);
    // Every acknowledged group's seqs hold its own rows.
    for (const [g, r] of answered) {
      const seqs = r.kind === "committed" ? r.seqs : (JSON.parse(r.answer) as number[]);
      expect(seqs.map((s) => (JSON.parse(rows[s - 1]?.event as string) as { group: number }).group)).toEqual(
        Array(ROWS).fill(g),
      );
    }
  }, 120_000);
});
