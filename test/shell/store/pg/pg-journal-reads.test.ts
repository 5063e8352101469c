/**
 * The journal streamed on PostgreSQL (issue 34 item 3): rows in seq order through a server-side cursor,
 * never more than two pages of them held (the one handed on and the next, fetched meanwhile), from one snapshot that rows committed later do not enter.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JournalRow } from "../../../../src/core/journal.js";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgJournal, type PgNewRow } from "../../../../src/shell/store/pg/pg-journal.js";
import { PgJournalSnapshot } from "../../../../src/shell/store/pg/pg-journal-reads.js";
import { openFreshPgStore } from "./pg-store.js";

const ROWS = 6_000;
const BATCH = 500;

const row = (i: number): PgNewRow => ({
  kind: i % 10 === 0 ? "tick" : "run_event",
  source: i % 10 === 0 ? "tick" : "observer",
  event: i % 10 === 0 ? { type: "tick" } : { type: "tool", harness: `h${i % 4}`, tool: "Bash", i },
});

const collect = async (rows: AsyncIterable<JournalRow>): Promise<JournalRow[]> => {
  const out: JournalRow[] = [];
  for await (const r of rows) out.push(r);
  return out;
};

describe("the journal streamed from a PostgreSQL snapshot", () => {
  let store: OpenedPgStore;
  let journal: PgJournal;
  let all: JournalRow[];

  beforeAll(async () => {
    store = await openFreshPgStore("journal_reads");
    journal = new PgJournal(store.pool);
    for (let b = 0; b < ROWS / BATCH; b++)
      await journal.commit([{ rows: Array.from({ length: BATCH }, (_, i) => row(b * BATCH + i)) }]);
    all = await collect(journal.rowsInRange(1, ROWS));
  });
  afterAll(async () => {
    await store?.close();
  });

  const withSnapshot = async <T>(use: (s: PgJournalSnapshot) => Promise<T>): Promise<T> => {
    const snapshot = await PgJournalSnapshot.open(store.pool);
    try {
      return await use(snapshot);
    } finally {
      await snapshot.close();
    }
  };

  it("streams a large journal in seq order holding at most two pages of rows", async () => {
    await withSnapshot(async (snapshot) => {
      const page = 128;
      let most = 0;
      const seen: JournalRow[] = [];
      for await (const r of snapshot.rows({}, page)) {
        most = Math.max(most, snapshot.held);
        seen.push(r);
      }
      expect(seen).toEqual(all);
      expect(most).toBeLessThanOrEqual(2 * page);
      expect(most).toBeGreaterThan(0);
      expect(snapshot.held).toBe(0);
    });
  });

  it("reads the rows after a seq, up to a seq and within a time range", async () => {
    const mid = all[ROWS / 2] as JournalRow;
    const late = all[(3 * ROWS) / 4] as JournalRow;
    const stretches = [
      { afterSeq: 1_234 },
      { toSeq: 777 },
      { afterSeq: 100, toSeq: 4_321 },
      { afterAt: mid.at },
      { untilAt: mid.at },
      { afterAt: mid.at, untilAt: late.at, afterSeq: 10 },
      { afterSeq: ROWS },
    ];
    await withSnapshot(async (snapshot) => {
      for (const s of stretches)
        expect(await collect(snapshot.rows(s, 333)), JSON.stringify(s)).toEqual(
          all.filter(
            (r) =>
              r.seq > (s.afterSeq ?? 0) &&
              r.seq <= (s.toSeq ?? Number.MAX_SAFE_INTEGER) &&
              r.at > (s.afterAt ?? -1) &&
              r.at <= (s.untilAt ?? Number.MAX_SAFE_INTEGER),
          ),
        );
    });
  });

  it("sees neither rows nor a last row committed after it opened", async () => {
    await withSnapshot(async (snapshot) => {
      const before = await snapshot.last();
      await journal.commit([{ rows: [row(1), row(2)] }]);
      expect(await snapshot.last()).toEqual(before);
      const seen = await collect(snapshot.rows({ afterSeq: before.seq - 3 }, 2));
      expect(seen.map((r) => r.seq)).toEqual([before.seq - 2, before.seq - 1, before.seq]);
      expect(await journal.last()).toEqual(expect.objectContaining({ seq: before.seq + 2 }));
    });
  });

  it("closes a stream's cursor when its reader stops early, so the snapshot reads on", async () => {
    await withSnapshot(async (snapshot) => {
      let n = 0;
      for await (const _ of snapshot.rows({}, 50)) if (++n === 75) break;
      expect(snapshot.held).toBe(0);
      const typed = await collect(snapshot.rowsInRangeTyped(10, 20, () => false, ["harness"], undefined, 4));
      expect(typed.map((r) => r.seq)).toEqual(all.slice(9, 20).map((r) => r.seq));
      expect(typed.find((r) => r.kind === "run_event")?.event).toEqual({
        type: "tool",
        harness: expect.any(String),
      });
    });
  });

  it("refuses a page that is not a row count", async () => {
    await withSnapshot(async (snapshot) => {
      await expect(collect(snapshot.rows({}, 0))).rejects.toThrow(RangeError);
    });
  });
});
