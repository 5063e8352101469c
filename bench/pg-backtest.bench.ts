/**
 * `npm run bench:pg-backtest` (issue 34 item 3): a backtest over the journal on PostgreSQL next to a
 * bare streamed read of the same rows there (the goal: the backtest at least 50% of the bare
 * read's rows/s), with SQLite's same two figures beside them, all in one run over the same rows on a
 * throwaway cluster (test/support/pg-cluster.ts). Within each repetition the four take turns, each
 * rule's replay on one backend and then the other, so drift lands on all alike; medians printed.
 *
 * - PostgreSQL bare read: one read-only snapshot, every row through a server-side cursor a page at a
 *   time (`PgJournalSnapshot.rows`), the event JSON parsed, nothing kept;
 * - PostgreSQL backtest: `replayOnPg` of each starter rule over every row (the same cursor reads);
 * - SQLite bare read and backtest: as `bench:daemon`'s section 3 (pages of 5,000 on the primary key).
 *
 * The journal is bench/journal-rows.ts' mix, written with raw inserts (building is not measured).
 * Env: ROWS (default 300,000), ROWS_PER_DAY (default 50,000), REPS (default 3), PAGE (rows per FETCH,
 * default the module's 1,000), BACKTEST_RULES (comma-separated; default every starter rule).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { DAY } from "../src/core/durations.js";
import type { EventFields } from "../src/core/journal.js";
import { STARTER_FILES } from "../src/core/starter-pack.generated.js";
import { type BacktestRequest, type BacktestSink, replay } from "../src/shell/backtest/replay.js";
import { replayOnPg } from "../src/shell/backtest/replay-on-pg.js";
import { JournalTable } from "../src/shell/store/journal-table.js";
import { type Db, openStore, openStoreReadOnly } from "../src/shell/store/open-store.js";
import { type OpenedPgStore, openPgStore } from "../src/shell/store/pg/open-pg-store.js";
import { PgJournalSnapshot, STREAM_PAGE } from "../src/shell/store/pg/pg-journal-reads.js";
import { makeClusterDir, pgDatabase, pgOptions, stopCluster } from "../test/support/pg-cluster.js";
import { type BenchRow, journalRows } from "./journal-rows.js";
import { pgInsert } from "./pg-rows.js";

const setting = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const ROWS = setting("ROWS", 300_000);
const ROWS_PER_DAY = setting("ROWS_PER_DAY", 50_000);
const REPS = setting("REPS", 3);
const PAGE = setting("PAGE", STREAM_PAGE);
const SQLITE_PAGE = 5_000;
const BACKTEST_RULES = (
  process.env.BACKTEST_RULES ?? STARTER_FILES.map(([f]) => path.basename(f, ".toml")).join(",")
)
  .split(",")
  .filter((r) => r !== "");
const T0 = Date.parse("2026-06-01T00:00:00Z");
const BUILD_BATCH = 5_000;

const now = () => process.hrtime.bigint();
const gc = () => globalThis.gc?.();

// ---------------------------------------------------------------------------------------------------
// Building the same journal on both backends.

/** Writes ROWS rows to both; the seconds it took. */
async function build(sqliteFile: string, pg: OpenedPgStore): Promise<number> {
  const start = now();
  const store = openStore(sqliteFile, "pg-backtest bench");
  try {
    store.db.pragma("synchronous = OFF");
    const table = new JournalTable(store.db);
    const append = store.db.transaction((rows: readonly BenchRow[]) => {
      for (const row of rows) table.append(row);
    });
    let batch: BenchRow[] = [];
    let seq = 1;
    const flush = async () => {
      append(batch);
      await pgInsert(pg, batch, seq);
      seq += batch.length;
      batch = [];
    };
    for (const row of journalRows(ROWS, ROWS_PER_DAY, T0)) {
      batch.push(row);
      if (batch.length === BUILD_BATCH) await flush();
    }
    if (batch.length > 0) await flush();
    const last = seq - 1;
    await pg.pool.query("UPDATE journal_head SET seq = $1, at = $2 WHERE id = 1", [last, table.last().at]);
    await pg.pool.query("ANALYZE rule_journal");
  } finally {
    store.close();
  }
  return Number(now() - start) / 1e9;
}

// ---------------------------------------------------------------------------------------------------
// The four figures.

/** The SQLite floor: every row in seq order, pages on the primary key, the event parsed, nothing kept. */
function sqliteBare(db: Db): number {
  const page = db.prepare("SELECT seq, kind, at, event FROM rule_journal WHERE seq > ? ORDER BY seq LIMIT ?");
  let n = 0;
  for (let seq = 0; ; ) {
    const rows = page.all(seq, SQLITE_PAGE) as { seq: number; event: string }[];
    for (const r of rows) if ((JSON.parse(r.event) as EventFields).type !== "") n++;
    if (rows.length < SQLITE_PAGE) return n;
    seq = (rows[rows.length - 1] as { seq: number }).seq;
  }
}

/** The PostgreSQL floor: every row through the snapshot's cursor, parsed (`rows` parses), nothing kept. */
async function pgBare(pg: OpenedPgStore): Promise<number> {
  const snapshot = await PgJournalSnapshot.open(pg.pool);
  try {
    let n = 0;
    for await (const r of snapshot.rows({}, PAGE)) if (r.event.type !== "") n++;
    return n;
  } finally {
    await snapshot.close();
  }
}

/** A sink that counts fires and checks the replay saw every row. */
const counting = (rows: number, fires: { n: number }): BacktestSink => ({
  start: () => {},
  fires: (fs) => {
    fires.n += fs.length;
  },
  summary: (c) => {
    if (c.rows !== rows) throw new Error(`the replay saw ${c.rows} rows of ${rows}`);
  },
});

// ---------------------------------------------------------------------------------------------------
// Reporting.

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const int = (x: number) => Math.round(x).toLocaleString("en-US");
const pct = (x: number) => `${(100 * x).toFixed(0)}%`;
const load = () =>
  `load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")} on ${os.cpus().length} cores`;

async function main(): Promise<void> {
  const dir = path.join(os.tmpdir(), `harness-pg-bench-backtest-${process.pid}`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "harness-pg-backtest-"));
  makeClusterDir(dir);
  let pg: OpenedPgStore | undefined;
  try {
    pg = await openPgStore({ ...pgOptions(await pgDatabase(dir, "bench_backtest")), max: 2 });
    const file = path.join(tmp, "harness.db");
    const built = await build(file, pg);
    const sqlite = openStoreReadOnly(file);
    try {
      const last = new JournalTable(sqlite.db).last();
      const requests = BACKTEST_RULES.map((rule): BacktestRequest => {
        const text = STARTER_FILES.find(([f]) => f === `starter-rules/${rule}.toml`)?.[1];
        if (text === undefined) throw new Error(`no starter rule ${rule}`);
        return {
          file: `rules/${rule}.toml`,
          text,
          sinceMs: last.at - T0 + DAY,
          nowMs: last.at,
          enforce: [],
          shadowPeriod: 0,
          shadows: {},
          loaded: [],
        };
      });
      const ns = {
        sqliteBare: [] as number[],
        pgBare: [] as number[],
        sqlite: requests.map(() => [] as number[]),
        pg: requests.map(() => [] as number[]),
      };
      const fires = requests.map(() => ({ sqlite: { n: 0 }, pg: { n: 0 } }));
      // One warm-up repetition, not counted.
      for (let rep = 0; rep <= REPS; rep++) {
        const keep = <T>(xs: T[], x: T) => {
          if (rep > 0) xs.push(x);
        };
        gc();
        let t = now();
        if (sqliteBare(sqlite.db) !== last.seq) throw new Error("the SQLite bare read missed rows");
        keep(ns.sqliteBare, Number(now() - t));
        gc();
        t = now();
        if ((await pgBare(pg)) !== last.seq) throw new Error("the PostgreSQL bare read missed rows");
        keep(ns.pgBare, Number(now() - t));
        for (const [i, request] of requests.entries()) {
          const f = fires[i] as (typeof fires)[number];
          f.sqlite.n = 0;
          f.pg.n = 0;
          gc();
          t = now();
          replay(new JournalTable(sqlite.db), request, counting(last.seq, f.sqlite));
          keep(ns.sqlite[i] as number[], Number(now() - t));
          gc();
          t = now();
          await replayOnPg(pg.pool, request, counting(last.seq, f.pg), PAGE);
          keep(ns.pg[i] as number[], Number(now() - t));
          if (f.sqlite.n !== f.pg.n)
            throw new Error(`${BACKTEST_RULES[i]}: ${f.sqlite.n} fires on SQLite, ${f.pg.n} on PostgreSQL`);
        }
      }
      const rate = (xs: readonly number[]) => last.seq / (median(xs) / 1e9);
      const sqliteBareRate = rate(ns.sqliteBare);
      const pgBareRate = rate(ns.pgBare);
      console.log(
        `bench:pg-backtest: ${int(last.seq)} rows (${int(ROWS_PER_DAY)} a day, built in ${built.toFixed(0)} s), PostgreSQL pages of ${int(PAGE)}, SQLite pages of ${int(SQLITE_PAGE)}; rows/s, median of ${REPS}; ${load()}`,
      );
      console.log(
        [
          "read",
          "SQLite rows/s",
          "SQLite % of bare",
          "PostgreSQL rows/s",
          "PostgreSQL % of bare",
          "PG/SQLite",
          "fires",
        ].join("\t"),
      );
      console.log(
        [
          "bare read",
          int(sqliteBareRate),
          "100%",
          int(pgBareRate),
          "100%",
          pct(pgBareRate / sqliteBareRate),
          "",
        ].join("\t"),
      );
      for (const [i, rule] of BACKTEST_RULES.entries()) {
        const s = rate(ns.sqlite[i] as number[]);
        const p = rate(ns.pg[i] as number[]);
        const ratio = p / pgBareRate;
        console.log(
          [
            `backtest ${rule}`,
            int(s),
            pct(s / sqliteBareRate),
            int(p),
            `${pct(ratio)} (goal ≥ 50%: ${ratio >= 0.5 ? "met" : "MISSED"})`,
            pct(p / s),
            String(fires[i]?.pg.n),
          ].join("\t"),
        );
      }
    } finally {
      sqlite.close();
    }
  } finally {
    await pg?.close();
    stopCluster(dir);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
