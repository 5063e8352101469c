/**
 * What runs beside the daemon in worker processes, on PostgreSQL (issue 34 item 3): the Backtest RPC's
 * workers and the journal query workers, given `[store]` rather than a file, each open a read-only pool
 * of their own (reading the password and TLS files themselves) and answer what the same workers answer
 * over the same journal on SQLite. The workers are the built ones (`dist/`), as the daemon runs them.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BacktestRunner, type WorkerMessage } from "../../../../dist/shell/backtest/backtest-runner.js";
import { JournalQueryPool } from "../../../../dist/shell/journal-query/journal-query-pool.js";
import { STARTER_FILES } from "../../../../src/core/starter-pack.generated.js";
import type { BacktestRequest } from "../../../../src/shell/backtest/replay.js";
import type { StoreConfig } from "../../../../src/shell/config/global-config.js";
import type { StoreLocation } from "../../../../src/shell/config/store-location.js";
import { JournalCommits } from "../../../../src/shell/store/journal-commits.js";
import { type OpenedStore, openStore } from "../../../../src/shell/store/open-store.js";
import { type OpenedPgStore, openPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgJournal } from "../../../../src/shell/store/pg/pg-journal.js";
import { pgOptions } from "../../../support/pg-cluster.js";
import { freshPgDatabase, storeOf } from "./pg-store.js";
import { batchesOf, fleetRows, sameJournal } from "./same-journal.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "harness-pg-workers-"));
let sqlite: OpenedStore;
let pgStore: OpenedPgStore;
let onSqlite: StoreLocation;
let onPg: StoreLocation;
let ats: number[];
let rows: number;

beforeAll(async () => {
  const db = await freshPgDatabase("pg_workers");
  pgStore = await openPgStore({ ...pgOptions(db), max: 2 });
  sqlite = openStore(path.join(dir, "harness.db"), "pg workers test");
  ats = await sameJournal(
    new PgJournal(pgStore.pool),
    new JournalCommits(sqlite.db),
    batchesOf(fleetRows(2, 5), [50, 3, 200]),
  );
  rows = fleetRows(2, 5).length;
  onSqlite = { backend: "sqlite", path: path.join(dir, "harness.db") };
  onPg = {
    backend: "postgres",
    config: storeOf(`postgresql://${db.user}@/${db.database}?host=${db.host}`, "pool_max = 2"),
  };
});

afterAll(async () => {
  sqlite?.close();
  await pgStore?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function backtest(where: StoreLocation, request: BacktestRequest): Promise<WorkerMessage[]> {
  const runner = new BacktestRunner(where);
  const parts: WorkerMessage[] = [];
  try {
    for await (const m of runner.run(request, new AbortController().signal)) parts.push(m);
  } finally {
    await runner.close();
  }
  return parts;
}

describe("the daemon's workers on PostgreSQL", () => {
  it("a backtest worker given [store] streams every starter rule's parts as the SQLite worker does", async () => {
    const nowMs = ats.at(-1) as number;
    let fires = 0;
    for (const [file, text] of STARTER_FILES) {
      const request: BacktestRequest = {
        file: `rules/${path.basename(file)}`,
        text,
        sinceMs: nowMs - (ats[Math.floor(ats.length / 2)] as number),
        nowMs,
        enforce: [],
        shadowPeriod: 0,
        shadows: {},
        loaded: [],
      };
      const a = await backtest(onSqlite, request);
      const b = await backtest(onPg, request);
      expect(b, file).toEqual(a);
      expect(b.at(-1)?.part, file).toBe("summary");
      for (const m of b) if (m.part === "fires") fires += m.fires.length;
    }
    expect(fires).toBeGreaterThan(0);
  });

  it("a backtest worker whose database refuses it ends with an error part, never a hang", async () => {
    const refused: StoreLocation = {
      backend: "postgres",
      config: { ...(onPg as { config: StoreConfig }).config, database: "no_such_database" },
    };
    const parts = await backtest(refused, {
      file: "rules/x.toml",
      text: (STARTER_FILES[0] as readonly [string, string])[1],
      sinceMs: 60_000,
      nowMs: ats.at(-1) as number,
      enforce: [],
      shadowPeriod: 0,
      shadows: {},
      loaded: [],
    });
    expect(parts).toEqual([{ part: "error", message: expect.stringContaining("no_such_database") }]);
  });

  it("journal query workers given [store] answer queries and counts as the SQLite workers do", async () => {
    const a = new JournalQueryPool(onSqlite);
    const b = new JournalQueryPool(onPg);
    try {
      const queries = [
        { kind: "run_event", limit: 50 },
        { kind: "run_event", newest: true, limit: 7 },
        { type: "tool", fields: [["tool", "Bash"]] as const, limit: 30 },
      ];
      for (const q of queries) expect(await b.query(q), JSON.stringify(q)).toEqual(await a.query(q));
      const count = { selector: [["kind", "run_event"]] as const, within: "1h" };
      const distinct = {
        fn: "distinct",
        field: "harness",
        selector: [["type", "tool"]] as const,
        within: "24h",
      };
      for (const c of [count, distinct])
        expect(await b.count(c), JSON.stringify(c)).toEqual(await a.count(c));
      // A refused request is refused alike, as the caller's to fix.
      const wrong = { kind: "no_such_kind" };
      const refusal = (await a.query(wrong).catch((e: Error) => e)) as Error;
      expect(refusal.name).toBe("InvalidArgumentError");
      await expect(b.query(wrong)).rejects.toThrow(refusal.message);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("a worker's pool is read-only: a write through it is refused by the server", async () => {
    const { openPgReadOnly } = await import("../../../../src/shell/store/pg/open-pg-store.js");
    const { pgPoolConfigOf } = await import("../../../../src/shell/store/pg/pg-config.js");
    const reader = openPgReadOnly(pgPoolConfigOf((onPg as { config: StoreConfig }).config), {
      max: 1,
      statementTimeoutMs: 1_000,
    });
    try {
      await expect(reader.pool.query("DELETE FROM rule_journal")).rejects.toThrow(/read-only transaction/);
      await expect(reader.pool.query("SELECT pg_sleep(3)")).rejects.toThrow(/statement timeout/);
      expect(
        (await reader.pool.query<{ n: number }>("SELECT COUNT(*)::int AS n FROM rule_journal")).rows[0]?.n,
      ).toBe(rows);
    } finally {
      await reader.close();
    }
  });
});
