/**
 * `npm run bench:pg-order` (issue 34, decision 0019): how the journal's seqs are given on PostgreSQL,
 * the alternatives side by side in one run on a throwaway cluster (test/support/pg-cluster.ts: fsync on,
 * as the server's default). Each writer is a connection of its own appending batches back to back, each
 * batch one transaction; printed per writer count and batch size: rows/s (median of the samples, the
 * alternatives alternating within each sample) and each one's ratio to a sequence alone.
 *
 * - `head`: the journal's head row locked `SELECT … FOR UPDATE` first in each transaction (the choice);
 * - `advisory`: a transaction-scoped advisory lock, then the last row's seq and at read from the journal;
 * - `sequence`: `nextval` alone, no lock: seqs in allocation order, not commit order, and `at` from each
 *   transaction's clock, so it is the ceiling, not a design: a reader would still need the commit-order
 *   check (decision 0019 says why it is not built);
 * - `PgJournal`: the module itself (`head` with all the columns, paths and the keys' statement).
 *
 * The first three insert the same rows (seq, kind, type, at, source, harness, event) with one statement.
 * Env: SAMPLES (default 5), BATCHES (per writer per sample, default 40), WRITERS (default "1,4,8"),
 * BATCH_ROWS (default "1,50").
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type pg from "pg";
import { type OpenedPgStore, openPgStore } from "../src/shell/store/pg/open-pg-store.js";
import { type PgGroup, PgJournal } from "../src/shell/store/pg/pg-journal.js";
import { makeClusterDir, pgDatabase, pgOptions, stopCluster } from "../test/support/pg-cluster.js";

const SAMPLES = Number(process.env.SAMPLES ?? 5);
const BATCHES = Number(process.env.BATCHES ?? 40);
const list = (v: string | undefined, d: string) => (v ?? d).split(",").map(Number);
const WRITERS = list(process.env.WRITERS, "1,4,8");
const BATCH_ROWS = list(process.env.BATCH_ROWS, "1,50");

interface BenchRow {
  readonly type: string;
  readonly harness: string;
  readonly event: string;
}

const rowsOf = (n: number, w: number): BenchRow[] =>
  Array.from({ length: n }, (_, i) => {
    const event = { type: "tool", harness: `h${w}`, tool: "Bash", i, pad: "x".repeat(200) };
    return { type: event.type, harness: event.harness, event: JSON.stringify(event) };
  });

const CLOCK_MS = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";
const INSERT = (seqFrom: string, at: string, from = "") => `
INSERT INTO rule_journal (seq, kind, type, at, source, harness, event)
SELECT ${seqFrom}, 'run_event', r.type, ${at}, 'observer', r.harness, r.event
FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS r(type, harness, event, ord)${from}`;
const columns = (rows: readonly BenchRow[]) => [
  rows.map((r) => r.type),
  rows.map((r) => r.harness),
  rows.map((r) => r.event),
];

type Append = (client: pg.PoolClient, rows: readonly BenchRow[]) => Promise<void>;

const STRATEGIES: Readonly<Record<string, Append>> = {
  head: async (c, rows) => {
    const h = await c.query<{ seq: number }>("SELECT seq FROM journal_head WHERE id = 1 FOR UPDATE");
    const { seq } = h.rows[0] as { seq: number };
    // As the module does: the head advanced and the rows inserted in one statement.
    await c.query(
      `WITH head AS (
         UPDATE journal_head SET seq = ${seq} + $4, at = greatest(at, ${CLOCK_MS}) WHERE id = 1 RETURNING at
       ) ${INSERT(`${seq} + r.ord`, "head.at", ", head")}`,
      [...columns(rows), rows.length],
    );
  },
  advisory: async (c, rows) => {
    await c.query("SELECT pg_advisory_xact_lock(hashtext('rule_journal'))");
    const last = await c.query<{ seq: number; at: number }>(
      "SELECT seq, at FROM rule_journal ORDER BY seq DESC LIMIT 1",
    );
    const { seq, at } = last.rows[0] ?? { seq: 0, at: 0 };
    await c.query(INSERT(`${seq} + r.ord`, `greatest(${at}, ${CLOCK_MS})`), columns(rows));
  },
  sequence: async (c, rows) => {
    await c.query(INSERT("nextval('bench_seq')", CLOCK_MS), columns(rows));
  },
};

/** One sample: `writers` connections each committing BATCHES batches of `size` rows; rows/s. */
async function sample(
  stores: readonly OpenedPgStore[],
  append: (store: OpenedPgStore, w: number) => Promise<void>,
  rowsPerBatch: number,
): Promise<number> {
  const start = process.hrtime.bigint();
  await Promise.all(
    stores.map(async (s, w) => {
      for (let b = 0; b < BATCHES; b++) await append(s, w);
    }),
  );
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return (stores.length * BATCHES * rowsPerBatch) / seconds;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function main(): Promise<void> {
  const dir = path.join(os.tmpdir(), `harness-pg-bench-${process.pid}`);
  makeClusterDir(dir);
  try {
    const names = [...Object.keys(STRATEGIES), "PgJournal"];
    console.log(
      `bench:pg-order: ${SAMPLES} samples, ${BATCHES} batches per writer per sample, fsync on; rows/s (median)`,
    );
    console.log(
      [
        "writers",
        "rows/batch",
        ...names.map((n) => `${n} rows/s`),
        ...names.map((n) => `${n}/sequence`),
      ].join("\t"),
    );
    for (const writers of WRITERS)
      for (const size of BATCH_ROWS) {
        // A database per alternative, each with the journal's schema and its writers' connections.
        const dbs = await Promise.all(names.map((n) => pgDatabase(dir, `bench_${n}`)));
        const stores = await Promise.all(
          dbs.map((db) =>
            Promise.all(Array.from({ length: writers }, () => openPgStore({ ...pgOptions(db), max: 1 }))),
          ),
        );
        await (stores[names.indexOf("sequence")] as OpenedPgStore[])[0]?.pool.query(
          "CREATE SEQUENCE bench_seq",
        );
        const byWriter = Array.from({ length: writers }, (_, w) => rowsOf(size, w));
        const groups: PgGroup[][] = byWriter.map((rows) => [
          {
            rows: rows.map((r) => ({ kind: "run_event", source: "observer", event: JSON.parse(r.event) })),
          },
        ]);
        const appends = names.map((name) => {
          const strategy = STRATEGIES[name];
          if (strategy === undefined) {
            const journals = new Map<OpenedPgStore, PgJournal>();
            return async (s: OpenedPgStore, w: number) => {
              const j = journals.get(s) ?? new PgJournal(s.pool);
              journals.set(s, j);
              await j.commit(groups[w] as PgGroup[]);
            };
          }
          return async (s: OpenedPgStore, w: number) => {
            const c = await s.pool.connect();
            try {
              await c.query("BEGIN");
              await strategy(c, byWriter[w] as BenchRow[]);
              await c.query("COMMIT");
            } catch (e) {
              await c.query("ROLLBACK");
              throw e;
            } finally {
              c.release();
            }
          };
        });
        const results: number[][] = names.map(() => []);
        // One warm-up sample each, then the samples, the alternatives taking turns within each.
        for (let s = 0; s <= SAMPLES; s++)
          for (const [k, append] of appends.entries()) {
            const rate = await sample(stores[k] as OpenedPgStore[], append, size);
            if (s > 0) results[k]?.push(rate);
          }
        const medians = results.map(median);
        const ceiling = medians[names.indexOf("sequence")] as number;
        console.log(
          [
            writers,
            size,
            ...medians.map((m) => m.toFixed(0)),
            ...medians.map((m) => (m / ceiling).toFixed(2)),
          ].join("\t"),
        );
        await Promise.all(stores.flat().map((s) => s.close()));
      }
  } finally {
    stopCluster(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
