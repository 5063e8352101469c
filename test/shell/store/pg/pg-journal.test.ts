import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { openPgStore, PgStoreOpenError } from "../../../../src/shell/store/pg/open-pg-store.js";
import { type PgGroup, type PgGroupResult, PgJournal } from "../../../../src/shell/store/pg/pg-journal.js";
import { PG_SCHEMA_VERSION } from "../../../../src/shell/store/pg/pg-schema.js";
import { pgOptions } from "../../../support/pg-cluster.js";
import { freshPgDatabase, openFreshPgStore } from "./pg-store.js";

const row = (n: number, extra: Record<string, unknown> = {}) => ({
  kind: "run_event" as const,
  source: "observer" as const,
  event: { type: "tool_called", harness: "h1", n, ...extra },
});

/** The seqs a committed group got. */
function seqsOf(r: PgGroupResult | undefined): readonly number[] {
  if (r?.kind !== "committed") throw new Error(`not committed: ${JSON.stringify(r)}`);
  return r.seqs;
}

const group = (rows: number[], key?: string): PgGroup => ({
  rows: rows.map((n) => row(n)),
  key:
    key === undefined
      ? undefined
      : { source: "observer" as const, key, answer: (seqs) => JSON.stringify({ first: seqs[0] }) },
});

describe("the journal on PostgreSQL", () => {
  let store: OpenedPgStore;
  let journal: PgJournal;

  beforeAll(async () => {
    store = await openFreshPgStore("pg_journal");
    journal = new PgJournal(store.pool);
  });
  afterAll(async () => {
    await store?.close();
  });

  it("appends batches with consecutive seqs from 1 and reads them back in seq order", async () => {
    const first = await journal.commit([group([1, 2]), group([3])]);
    expect(first.results).toEqual([
      { kind: "committed", seqs: [1, 2] },
      { kind: "committed", seqs: [3] },
    ]);
    const second = await journal.commit([group([4])]);
    expect(second.results).toEqual([{ kind: "committed", seqs: [4] }]);
    expect(second.at).toBeGreaterThanOrEqual(first.at);
    const rows = await journal.rowsAfter(0, 10);
    expect(rows.map((r) => [r.seq, r.event.n])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
    ]);
    expect(rows[0]?.at).toBe(first.at);
    expect(await journal.last()).toEqual({ seq: 4, at: second.at });
    expect(await journal.atOf(4)).toBe(second.at);
    expect(await journal.atOf(99)).toBeUndefined();
    const ranged: number[] = [];
    for await (const r of journal.rowsInRange(2, 4, 2)) ranged.push(r.seq);
    expect(ranged).toEqual([2, 3, 4]);
    expect(await journal.firstAdmittedAfter(first.at - 1)).toBe(1);
  });

  it("an append with a known key appends nothing and answers what the first one stored", async () => {
    const first = await journal.commit([group([10, 11], "k1")]);
    const seqs = seqsOf(first.results[0]);
    const again = await journal.commit([group([12], "k1"), group([13])]);
    expect(again.results[0]).toEqual({ kind: "repeated", answer: JSON.stringify({ first: seqs[0] }) });
    expect(again.results[1]).toEqual({ kind: "committed", seqs: [(seqs[1] as number) + 1] });
    expect(await journal.answer("observer", "k1")).toBe(JSON.stringify({ first: seqs[0] }));
    // The same key twice in one batch: the second group repeats the first.
    const twice = await journal.commit([group([14], "k2"), group([15], "k2")]);
    expect(twice.results[1]).toEqual({
      kind: "repeated",
      answer: JSON.stringify({ first: seqsOf(twice.results[0])[0] }),
    });
    const all = await journal.rowsAfter(0, 100);
    expect(all.filter((r) => r.event.n === 12 || r.event.n === 15)).toEqual([]);
  });

  it("a batch that fails before its commit leaves nothing, and the next batch takes its seqs", async () => {
    const before = await journal.last();
    const failing = new PgJournal(store.pool, {
      beforeCommit: () => Promise.reject(new Error("failpoint")),
    });
    await expect(failing.commit([group([20], "k3")])).rejects.toThrow("failpoint");
    expect(await journal.last()).toEqual(before);
    expect(await journal.answer("observer", "k3")).toBeUndefined();
    const next = await journal.commit([group([21], "k3")]);
    expect(next.results).toEqual([{ kind: "committed", seqs: [before.seq + 1] }]);
  });

  it("a row's at never goes back, even when the database's clock does", async () => {
    // The head remembers the last at: set it an hour ahead, as if the clock had stepped back since.
    const ahead = Date.now() + 3_600_000;
    await store.pool.query("UPDATE journal_head SET at = $1", [ahead]);
    const r = await journal.commit([group([30])]);
    expect(r.at).toBe(ahead);
    const [last] = await journal.rowsAfter((await journal.last()).seq - 1, 1);
    expect(last?.at).toBe(ahead);
  });

  it("stores the indexed columns, the paths and the peer beside the event", async () => {
    const r = await journal.commit([
      {
        rows: [
          {
            kind: "run_event",
            source: "observer" as const,
            event: {
              type: "files_changed",
              harness: "h2",
              run: "r1",
              is_error: true,
              paths: ["a.ts", "b.ts"],
            },
            peer: { name: "cn", fingerprint: "ff" },
          },
        ],
      },
    ]);
    const seq = seqsOf(r.results[0])[0];
    const stored = await store.pool.query(
      "SELECT harness, run, is_error, peer_name, peer_fingerprint FROM rule_journal WHERE seq = $1",
      [seq],
    );
    expect(stored.rows).toEqual([
      { harness: "h2", run: "r1", is_error: true, peer_name: "cn", peer_fingerprint: "ff" },
    ]);
    const paths = await store.pool.query(
      "SELECT ord, path FROM rule_journal_paths WHERE seq = $1 ORDER BY ord",
      [seq],
    );
    expect(paths.rows).toEqual([
      { ord: 0, path: "a.ts" },
      { ord: 1, path: "b.ts" },
    ]);
  });
});

describe("the PostgreSQL schema's version", () => {
  it("is brought to this harness's at open, once, and a newer one is refused", async () => {
    const db = await freshPgDatabase("pg_schema");
    const opened = await Promise.all([openPgStore(pgOptions(db)), openPgStore(pgOptions(db))]);
    const [a, b] = opened as [OpenedPgStore, OpenedPgStore];
    const v = await a.pool.query("SELECT version FROM harness_schema");
    expect(v.rows).toEqual([{ version: PG_SCHEMA_VERSION }]);
    await a.pool.query("UPDATE harness_schema SET version = version + 1");
    await Promise.all([a.close(), b.close()]);
    const refused = openPgStore(pgOptions(db));
    await expect(refused).rejects.toBeInstanceOf(PgStoreOpenError);
    await expect(refused).rejects.toThrow(/schema version \d+ is newer than this harness knows/);
  });

  it("refuses a server whose commits could be lost after their answer", async () => {
    const db = await freshPgDatabase("pg_durability");
    const refused = openPgStore({ ...pgOptions(db), options: "-c synchronous_commit=off" });
    await expect(refused).rejects.toThrow(/synchronous_commit is off/);
  });
});
