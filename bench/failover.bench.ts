/**
 * `npm run bench:failover` (issue 35 item 2): what a takeover costs on a week's journal on PostgreSQL,
 * on a throwaway cluster (test/support/pg-cluster.ts), in one run.
 *
 * 1. In process, over the same store, REPS times each, alternating, medians: the evaluator opened cold
 *    (its window index rebuilt from the week's rows: what a takeover would cost without a warm index)
 *    beside opened warm (a follower's index handed over: only the rows after it are read). Beside them,
 *    what a follower pays once, at its start, to warm its index, and the index's size and heap.
 * 2. Real daemons (the built CLI): a leader and a follower on the database, `[store] lease` LEASE; the
 *    leader killed with SIGKILL, two rows that fire appended through the follower at once; the time
 *    from the kill to the follower's lead, and to the fire committed.
 *
 * The journal is bench/journal-rows.ts' mix, written with raw inserts, its evaluator cursor at its end.
 * Env: DAYS (default 7), ROWS_PER_DAY (default 50,000), REPS (default 3), LEASE (default "3s").
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { DAY } from "../src/core/durations.js";
import { assembleRuleSet } from "../src/core/rule-set.js";
import { loadStarterPack } from "../src/core/starter-pack.js";
import { Evaluator } from "../src/shell/daemon/evaluator.js";
import { FollowerView } from "../src/shell/daemon/follower-view.js";
import { journalClient } from "../src/shell/rpc/client.js";
import { type OpenedPgStore, openPgStore } from "../src/shell/store/pg/open-pg-store.js";
import { PgJournal } from "../src/shell/store/pg/pg-journal.js";
import { PgEvaluatorLog } from "../src/shell/store/pg/pg-write-ports.js";
import { DaemonMetrics } from "../src/shell/support/metrics.js";
import {
  makeClusterDir,
  type PgDatabase,
  pgDatabase,
  pgOptions,
  stopCluster,
} from "../test/support/pg-cluster.js";
import { type BenchRow, journalRows } from "./journal-rows.js";
import { pgInsert } from "./pg-rows.js";

const setting = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const DAYS = setting("DAYS", 7);
const ROWS_PER_DAY = setting("ROWS_PER_DAY", 50_000);
const REPS = setting("REPS", 3);
const LEASE = process.env.LEASE ?? "3s";
const ROWS = DAYS * ROWS_PER_DAY;
const CLI = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../../dist/shell/cli/main.js");

const now = () => process.hrtime.bigint();
const ms = (from: bigint) => Number(now() - from) / 1e6;
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const gc = () => globalThis.gc?.();

/** A week of rows ending now, the evaluator's cursor at the last: a store a leader was keeping up with. */
async function build(store: OpenedPgStore): Promise<number> {
  const t0 = Date.now() - DAYS * DAY;
  let batch: BenchRow[] = [];
  let seq = 1;
  let lastAt = 0;
  for (const row of journalRows(ROWS, ROWS_PER_DAY, t0)) {
    batch.push(row);
    lastAt = row.at;
    if (batch.length === 5_000) {
      await pgInsert(store, batch, seq);
      seq += batch.length;
      batch = [];
    }
  }
  if (batch.length > 0) await pgInsert(store, batch, seq);
  const last = seq + batch.length - 1;
  await store.pool.query("UPDATE journal_head SET seq = $1, at = $2 WHERE id = 1", [last, lastAt]);
  await store.pool.query("UPDATE evaluator SET cursor = $1 WHERE id = 1", [last]);
  await store.pool.query("ANALYZE rule_journal");
  return last;
}

async function inProcess(store: OpenedPgStore): Promise<void> {
  const ruleSet = assembleRuleSet({ starter: loadStarterPack(), policy: [], shadowPeriod: 0 });
  const log = new PgEvaluatorLog(store.pool, new PgJournal(store.pool));
  const open = (warm?: Awaited<ReturnType<FollowerView["handOver"]>>) =>
    Evaluator.open(ruleSet, {
      log,
      metrics: new DaemonMetrics(),
      clock: Date.now,
      dispatch: () => {},
      ...(warm === undefined ? {} : { warm }),
    });
  const cold: number[] = [];
  const warmUp: number[] = [];
  const handover: number[] = [];
  // The index's heap: one follower's view held while the heap is read on either side of it.
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const held = await FollowerView.open(ruleSet, log);
  gc();
  const heapMiB = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
  const indexRows = (await held.handOver()).feed.size;
  for (let rep = 0; rep < REPS; rep++) {
    gc();
    let t = now();
    await open();
    cold.push(ms(t));
    gc();
    t = now();
    const follower = await FollowerView.open(ruleSet, log);
    warmUp.push(ms(t));
    const warm = await follower.handOver();
    // A leader kept going meanwhile: the rows after the index are what the handover reads.
    t = now();
    await open(warm);
    handover.push(ms(t));
  }
  console.log(`\n1. In process, ${ROWS.toLocaleString()} rows (${DAYS} days), medians of ${REPS}:`);
  console.log(`   evaluator opened cold (window index rebuilt)   ${median(cold).toFixed(0)} ms`);
  console.log(`   evaluator opened warm (follower's index)       ${median(handover).toFixed(0)} ms`);
  console.log(
    `   ratio warm / cold                              ${(median(handover) / median(cold)).toFixed(3)}`,
  );
  console.log(`   a follower's warm-up, once at its start        ${median(warmUp).toFixed(0)} ms`);
  console.log(
    `   its window index: ${indexRows.toLocaleString()} entries, ${heapMiB.toFixed(1)} MiB of heap`,
  );
}

/** A daemon on the database, started with the built CLI; resolves once it says where it listens. */
function startDaemon(
  db: PgDatabase,
  dir: string,
  ledger: string,
): Promise<{ child: ChildProcess; out: () => string; socket: string }> {
  const sub = (name: string) => {
    const d = path.join(dir, name);
    fs.mkdirSync(d, { recursive: true, mode: 0o700 });
    return d;
  };
  const env = {
    PATH: process.env.PATH,
    HOME: dir,
    XDG_CONFIG_HOME: sub("config"),
    XDG_STATE_HOME: sub("state"),
    XDG_RUNTIME_DIR: sub("run"),
  };
  fs.writeFileSync(
    path.join(sub("config/harness"), "harness.toml"),
    [
      "[memory.rules]",
      'enforce = ["budget-exhaustion-recurring"]',
      "[server]",
      'metrics_listen = ""',
      "[server.producers]",
      `ledger = ${JSON.stringify(ledger)}`,
      "[agents]",
      'listen = ""',
      "[store]",
      `url = "postgresql://${db.user}@/${db.database}?host=${db.host}"`,
      `lease = ${JSON.stringify(LEASE)}`,
    ].join("\n"),
  );
  const child = spawn(process.execPath, [CLI, "daemon"], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  return new Promise((resolve, reject) => {
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
      if (/harness daemon: store /.test(err))
        resolve({ child, out: () => out, socket: path.join(dir, "run", "harness.sock") });
    });
    child.on("exit", (code) => reject(new Error(`daemon exited ${code}: ${err}`)));
  });
}

async function realDaemons(db: PgDatabase, store: OpenedPgStore): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "harness-failover-bench-"));
  const ledger = path.join(dir, "ledger.token");
  fs.writeFileSync(ledger, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600 });
  const children: ChildProcess[] = [];
  try {
    let t = now();
    const leader = await startDaemon(db, path.join(dir, "a"), ledger);
    children.push(leader.child);
    const leaderStart = ms(t);
    t = now();
    const follower = await startDaemon(db, path.join(dir, "b"), ledger);
    children.push(follower.child);
    const followerStart = ms(t);
    const token = fs.readFileSync(ledger, "utf8").trim();
    const client = journalClient({ socketPath: follower.socket }, token);
    const closed = (n: number) => ({
      kind: "run_event",
      event: {
        type: "closed",
        harness: "failover",
        run: `failover#${n}`,
        outcome: "budget_exceeded",
        cause_digest: "",
      },
    });
    const killed = now();
    leader.child.kill("SIGKILL");
    await client.append({ events: [closed(1), closed(2)] });
    let led: number | undefined;
    let fired: number | undefined;
    while (fired === undefined || led === undefined) {
      if (ms(killed) > 60_000) throw new Error(`no takeover in 60 s: ${follower.out()}`);
      if (led === undefined && follower.out().includes("this daemon leads")) led = ms(killed);
      if (fired === undefined) {
        const r = await store.pool.query("SELECT 1 FROM rule_fires WHERE harness = 'failover' LIMIT 1");
        if (r.rows.length > 0) fired = ms(killed);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    console.log(`\n2. Real daemons, lease ${LEASE}:`);
    console.log(
      `   leader start ${leaderStart.toFixed(0)} ms; follower start (with its warm-up) ${followerStart.toFixed(0)} ms`,
    );
    console.log(`   SIGKILL of the leader -> the follower leads     ${led.toFixed(0)} ms`);
    console.log(`   SIGKILL of the leader -> the new rows' fire     ${fired.toFixed(0)} ms`);
    console.log(`   of which after the lead (the handover)          ${(fired - led).toFixed(0)} ms`);
  } finally {
    for (const c of children) c.kill("SIGKILL");
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const cluster = path.join(os.tmpdir(), `harness-pg-bench-failover-${process.pid}`);
  makeClusterDir(cluster);
  try {
    const db = await pgDatabase(cluster, "failover_bench");
    const store = await openPgStore(pgOptions(db));
    try {
      const t = now();
      const last = await build(store);
      console.log(
        `bench:failover: ${last.toLocaleString()} rows built in ${(ms(t) / 1000).toFixed(1)} s; load ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(" ")} on ${os.cpus().length} cores`,
      );
      const size = await store.pool.query<{ bytes: string }>(
        "SELECT (pg_total_relation_size('rule_journal') + pg_total_relation_size('rule_journal_paths'))::text AS bytes",
      );
      const bytes = Number(size.rows[0]?.bytes);
      console.log(
        `   the journal on disk, with its indexes and paths: ${(bytes / 2 ** 20).toFixed(0)} MiB, ${(bytes / last).toFixed(0)} bytes a row`,
      );
      await inProcess(store);
      await realDaemons(db, store);
    } finally {
      await store.close();
    }
  } finally {
    stopCluster(cluster);
    fs.rmSync(cluster, { recursive: true, force: true });
  }
}

await main();
