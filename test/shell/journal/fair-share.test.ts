/**
 * Issue 26 ("the bounded admission queue is fair per harness"): one flooding agent cannot crowd out the
 * others' rows. Each harness (a row's `harness`, else its source) may hold at most a share of the queue.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type JournalWriter,
  type Offer,
  SHARE_DIVISOR,
  tenantOf,
} from "../../../src/shell/journal/journal-writer.js";
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import { DaemonMetrics } from "../../../src/shell/support/metrics.js";
import { runs } from "../../property-runs.js";
import { tempStores } from "../store/temp-stores.js";
import { testWriter } from "./test-writer.js";

const { storeFile, open } = tempStores("harness-fair-share-");
const QUEUE = 40;
const SHARE = QUEUE / SHARE_DIVISOR;

const row = (harness: string | undefined, n: number): Offer => ({
  source: "observer",
  kind: "run_event",
  event: {
    type: "mark",
    mark: "user-message",
    ...(harness === undefined ? {} : { harness, run: `${harness}#${n}` }),
    session: String(n),
  },
});

function writerWith(metrics = new DaemonMetrics(), db = open(storeFile()).db): JournalWriter {
  return testWriter(db, new JournalTable(db), { clock: () => 1_000, queueLimit: QUEUE, metrics });
}

describe("finding 4: the admission queue is fair per harness", () => {
  it("finding 4: a flooding harness cannot crowd out another harness's rows (its full share drops its own rows, counted)", async () => {
    const metrics = new DaemonMetrics();
    const writer = writerWith(metrics);
    // The flood comes first and offers far more than the queue holds, in one group and one by one.
    const flood = writer.offerGroup(
      Array.from({ length: QUEUE * 3 }, (_, i) => row("flood", i)),
      undefined,
    );
    for (let i = 0; i < QUEUE; i++) writer.offer(row("flood", 1000 + i));
    expect(flood.queued).toBe(SHARE);
    const quiet = Array.from({ length: SHARE }, (_, i) => writer.offer(row("quiet", i)));
    expect(quiet.map((r) => r.kind)).toEqual(Array(SHARE).fill("queued"));
    const share = (await metrics.journalShareDropped.get()).values;
    expect(share).toEqual([
      expect.objectContaining({ labels: { source: "observer" }, value: QUEUE * 4 - SHARE }),
    ]);
    await writer.close();
  });

  it("finding 4: whatever the offers, no harness holds more than its share, and a harness under its share is refused only by a full queue", async () => {
    // One store for every case: each case's writer commits its queue on close.
    const db = open(storeFile()).db;
    const metrics = new DaemonMetrics();
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            harness: fc.option(fc.constantFrom("a", "b", "c", "d", "e", "f"), { nil: undefined }),
            rows: fc.integer({ min: 1, max: 25 }),
          }),
          { maxLength: 30 },
        ),
        async (groups) => {
          const writer = writerWith(metrics, db);
          const held = new Map<string, number>();
          let total = 0;
          let n = 0;
          for (const g of groups) {
            const offers = Array.from({ length: g.rows }, () => row(g.harness, n++));
            const tenant = tenantOf(offers[0] as Offer);
            const before = held.get(tenant) ?? 0;
            const { queued } = writer.offerGroup(offers, undefined);
            // The model: the first rows that fit both the queue and the tenant's share.
            const expected = Math.max(0, Math.min(g.rows, QUEUE - total, SHARE - before));
            expect(queued).toBe(expected);
            held.set(tenant, before + queued);
            total += queued;
            expect(held.get(tenant)).toBeLessThanOrEqual(SHARE);
            expect(writer.queued).toBe(total);
          }
          await writer.close();
        },
      ),
      { numRuns: runs(100) },
    );
  });

  it("finding 4: committed rows free their harness's share", async () => {
    const writer = writerWith();
    const first = Array.from({ length: SHARE }, (_, i) => writer.offer(row("a", i)));
    expect(writer.offer(row("a", 99)).kind).toBe("dropped");
    await Promise.all(first.map((r) => (r.kind === "queued" ? r.seq : undefined)));
    expect(writer.offer(row("a", 100)).kind).toBe("queued");
    await writer.close();
  });
});
