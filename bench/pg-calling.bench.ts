/**
 * `npm run bench:pg-calling` (issue 34): what the store objects' calling convention costs per call on
 * PostgreSQL, side by side: a query awaited (an asynchronous port), the same query made synchronous by
 * a worker thread that runs it while the caller blocks in `Atomics.wait` (the store objects kept
 * synchronous), and, for scale, a SQLite point read through better-sqlite3, called as today and
 * awaited behind an async function (what an asynchronous port costs the SQLite path). Printed: median µs per call
 * over SAMPLES samples of CALLS calls (defaults 15 and 500), for a point read by primary key and for an
 * append transaction of one row (PgJournal.commit, awaited; fsync on).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Worker } from "node:worker_threads";
import { JournalTable } from "../src/shell/store/journal-table.js";
import { openStore } from "../src/shell/store/open-store.js";
import { openPgStore } from "../src/shell/store/pg/open-pg-store.js";
import { PgJournal } from "../src/shell/store/pg/pg-journal.js";
import { makeClusterDir, pgDatabase, pgOptions, stopCluster } from "../test/support/pg-cluster.js";

const SAMPLES = Number(process.env.SAMPLES ?? 15);
const CALLS = Number(process.env.CALLS ?? 500);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** As `perCall`, with no await between the calls: the SQLite store as the daemon calls it today. */
function perCallSync(fn: () => unknown): number {
  const samples: number[] = [];
  for (let s = 0; s <= SAMPLES; s++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i++) fn();
    if (s > 0) samples.push(Number(process.hrtime.bigint() - start) / CALLS / 1000);
  }
  return median(samples);
}

async function perCall(fn: () => unknown): Promise<number> {
  const samples: number[] = [];
  for (let s = 0; s <= SAMPLES; s++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i++) await fn();
    if (s > 0) samples.push(Number(process.hrtime.bigint() - start) / CALLS / 1000);
  }
  return median(samples);
}

async function main(): Promise<void> {
  const dir = path.join(os.tmpdir(), `harness-pg-calling-${process.pid}`);
  const sqliteDir = fs.mkdtempSync(path.join(os.tmpdir(), "harness-calling-"));
  makeClusterDir(dir);
  try {
    const db = await pgDatabase(dir, "calling");
    const store = await openPgStore({ ...pgOptions(db), max: 1 });
    const journal = new PgJournal(store.pool);
    const row = {
      kind: "run_event" as const,
      source: "observer" as const,
      event: { type: "tool", harness: "h" },
    };
    await journal.commit([{ rows: [row] }]);
    const read = "SELECT seq, at FROM rule_journal WHERE seq = 1";

    const buffer = new SharedArrayBuffer(8 + 65_536);
    const state = new Int32Array(buffer, 0, 2);
    const bytes = new Uint8Array(buffer, 8);
    const worker = new Worker(new URL("./pg-sync-worker.js", import.meta.url), {
      workerData: { buffer, options: pgOptions(db) },
    });
    const querySync = (sql: string): unknown => {
      const req = new TextEncoder().encode(sql);
      bytes.set(req);
      Atomics.store(state, 1, req.length);
      Atomics.store(state, 0, 1);
      Atomics.notify(state, 0);
      while (Atomics.load(state, 0) !== 2) Atomics.wait(state, 0, 1);
      const out = JSON.parse(new TextDecoder().decode(bytes.slice(0, Atomics.load(state, 1))));
      Atomics.store(state, 0, 0);
      return out;
    };

    const sqlite = openStore(path.join(sqliteDir, "harness.db"), "calling bench");
    const table = new JournalTable(sqlite.db);
    sqlite.db.transaction(() => table.append({ ...row, at: Date.now() })).immediate();

    const results: [string, number][] = [
      ["PostgreSQL point read, awaited", await perCall(() => store.pool.query(read))],
      ["PostgreSQL point read, sync over a worker", await perCall(() => querySync(read))],
      ["SQLite point read (JournalTable.atOf, which prepares each call)", perCallSync(() => table.atOf(1))],
      ["SQLite point read, awaited (a promise port over it)", await perCall(async () => table.atOf(1))],
      ["PostgreSQL append of one row, awaited", await perCall(() => journal.commit([{ rows: [row] }]))],
      [
        "SQLite append of one row (BEGIN IMMEDIATE, synchronous=FULL)",
        await perCall(() =>
          sqlite.db.transaction(() => table.append({ ...row, at: Date.now() })).immediate(),
        ),
      ],
    ];
    console.log(`bench:pg-calling: median µs per call, ${SAMPLES} samples of ${CALLS} calls`);
    for (const [name, us] of results) console.log(`${name}\t${us.toFixed(1)}`);
    await worker.terminate();
    sqlite.close();
    await store.close();
  } finally {
    stopCluster(dir);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(sqliteDir, { recursive: true, force: true });
  }
}

await main();
