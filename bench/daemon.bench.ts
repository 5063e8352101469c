/**
 * `npm run bench:daemon`: issue 5's three daemon figures, each next to its floor in the same run, on
 * temporary stores with `synchronous=FULL`:
 * 1. admission throughput of tool rows through `JournalWriter`, next to raw batched inserts of the same
 *    rows into the same schema, and through the full RPC path (`JournalService.Append` over the socket);
 * 2. live latency from `Append` returning to the fire committed, at 1,000 rows/s offered;
 * 3. backtest of one starter rule over a month of journal read from the store, next to a bare
 *    sequential read with JSON parsing.
 *
 * Producers run in a worker thread, as they would in a process of their own: the daemon's event loop
 * then carries only the daemon's work, and both sides read the same monotonic clock.
 * With `STORE=postgres`, sections 1 and 2 run the real daemon on PostgreSQL too, beside SQLite in the
 * same run (issue 34's goals: RPC admission ≥ 50% of SQLite's, live p99 ≤ 3× SQLite's), and section 3
 * runs `bench:pg-backtest` after SQLite's (a backtest ≥ 50% of a bare streamed read there).
 * Env: SECTIONS (admission,live,backtest), ADMIT_ROWS, REPS, LIVE_SECONDS, DAYS, ROWS_PER_DAY,
 * BACKTEST_REPS, BACKTEST_RULES (comma-separated; default every starter rule), STORE.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import type { JsonObject } from "@bufbuild/protobuf";
import { DAY } from "../src/core/durations.js";
import type { EventFields } from "../src/core/journal.js";
import { STARTER_FILES } from "../src/core/starter-pack.generated.js";
import { loadStarterPack } from "../src/core/starter-pack.js";
import { DaemonApp } from "../src/shell/app/daemon-app.js";
import { type BacktestRequest, replay } from "../src/shell/backtest/replay.js";
import { JournalWriter } from "../src/shell/journal/journal-writer.js";
import { journalClient } from "../src/shell/rpc/client.js";
import type { AppendResponse } from "../src/shell/rpc/gen/harness/v1/journal_pb.js";
import { DecisionStore, type Decisions } from "../src/shell/store/decision-store.js";
import { JournalCommits } from "../src/shell/store/journal-commits.js";
import { JournalTable } from "../src/shell/store/journal-table.js";
import { type Db, type OpenedStore, openStore, openStoreReadOnly } from "../src/shell/store/open-store.js";
import { PgEvaluatorLog } from "../src/shell/store/pg/pg-write-ports.js";
import { INDEXED_COLUMNS } from "../src/shell/store/schema.js";
import { SqliteJournalLog } from "../src/shell/store/sqlite-write-ports.js";
import { createLog } from "../src/shell/support/log.js";
import { DaemonMetrics } from "../src/shell/support/metrics.js";
import { makeClusterDir, type PgDatabase, pgDatabase, stopCluster } from "../test/support/pg-cluster.js";
import { type BenchRow, journalRows, REPO, toolEvents } from "./journal-rows.js";

const setting = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const ADMIT_ROWS = setting("ADMIT_ROWS", 50_000);
const REPS = setting("REPS", 5);
const LIVE_SECONDS = setting("LIVE_SECONDS", 25);
const DAYS = setting("DAYS", 30);
const ROWS_PER_DAY = setting("ROWS_PER_DAY", 50_000);
const BACKTEST_REPS = setting("BACKTEST_REPS", 3);
/**
 * `STORE=postgres`: the admission and live sections run the real daemon on PostgreSQL too, beside
 * SQLite in the same run (a throwaway cluster on a unix socket, fsync on: test/support/pg-cluster.ts).
 */
const ON_PG = process.env.STORE === "postgres";
// A tool-row rule with two primitives (distinct and exists): the rule that runs on most of the journal.
const BACKTEST_RULES = (
  process.env.BACKTEST_RULES ?? STARTER_FILES.map(([f]) => path.basename(f, ".toml")).join(",")
)
  .split(",")
  .filter((r) => r !== "");

/** Rows per admission batch: the writer's batch and the largest Append. */
const BATCH = 1_000;
/** The live producer offers this many rows every 10 ms: 1,000 rows/s. */
const ROWS_PER_TICK = 10;
const TICK_NS = 10_000_000n;
/** Seconds the live producer runs before its samples count, so JIT warm-up is not measured. */
const LIVE_WARMUP_S = 3;
/** A rule that fires on one known row: a graph_event `collision_started` with scope file, per run. */
const LIVE_RULE = "same-file-collision";
const T0 = Date.parse("2026-10-01T00:00:00Z");
const PAGE = 5_000;

const now = (): bigint => process.hrtime.bigint();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const wire = (kind: string, event: EventFields) => ({ kind, event: event as JsonObject });
const notAdmitted = (r: AppendResponse): number =>
  r.results.filter((x) => x.result.case !== "admitted").length;

// ---------------------------------------------------------------------------------------------------
// The producer worker.

type Job =
  | {
      readonly mode: "throughput";
      readonly socketPath: string;
      readonly token: string;
      readonly rows: number;
    }
  | {
      readonly mode: "live";
      readonly socketPath: string;
      readonly observerToken: string;
      readonly graphToken: string;
      readonly seconds: number;
    };

interface ThroughputResult {
  readonly ns: number;
  readonly notAdmitted: number;
}

interface LiveSample {
  readonly seq: number;
  readonly sent: bigint;
  readonly returned: bigint;
}

interface LiveResult {
  readonly samples: readonly LiveSample[];
  readonly offered: number;
  readonly notAdmitted: number;
}

/** One producer sending 1,000-event Appends back to back, each awaited as `harness journal append` does. */
async function throughputProducer(job: Extract<Job, { mode: "throughput" }>): Promise<ThroughputResult> {
  const client = journalClient({ socketPath: job.socketPath }, job.token);
  const events = toolEvents(job.rows).map((e) => wire("run_event", e));
  let missed = 0;
  // The first Appends of a fresh worker run cold code and open the connection.
  for (let i = 0; i < 3; i++) missed += notAdmitted(await client.append({ events: events.slice(0, BATCH) }));
  const start = now();
  for (let i = 0; i < events.length; i += BATCH)
    missed += notAdmitted(await client.append({ events: events.slice(i, i + BATCH) }));
  return { ns: Number(now() - start), notAdmitted: missed };
}

/**
 * 1,000 rows/s as the fleet sends them: every 10 ms an observer Append of tool rows, and every other
 * tick one of the ten rows is instead a collision from the graph producer, on a fresh run so the
 * rule's per-run cooldown never suppresses it. Appends are not awaited before the next send (producers
 * never wait); a late tick is sent at once, so the offered rate holds on average.
 */
async function liveProducer(job: Extract<Job, { mode: "live" }>): Promise<LiveResult> {
  const observer = journalClient({ socketPath: job.socketPath }, job.observerToken);
  const graph = journalClient({ socketPath: job.socketPath }, job.graphToken);
  const tools = toolEvents(10_000).map((e) => wire("run_event", e));
  const samples: LiveSample[] = [];
  const inflight: Promise<void>[] = [];
  let offered = 0;
  let missed = 0;
  let nextTool = 0;
  const start = now();
  const measuredFrom = start + BigInt(Math.round(LIVE_WARMUP_S * 1e9));
  const end = measuredFrom + BigInt(Math.round(job.seconds * 1e9));
  for (let k = 0; ; k++) {
    const due = start + BigInt(k) * TICK_NS;
    if (due >= end) break;
    const wait = Number(due - now()) / 1e6;
    if (wait > 0) await sleep(wait);
    const collision = k % 2 === 1;
    const events = Array.from(
      { length: ROWS_PER_TICK - (collision ? 1 : 0) },
      () => tools[nextTool++ % tools.length] as ReturnType<typeof wire>,
    );
    offered += events.length;
    inflight.push(
      observer.append({ events }).then((r) => {
        missed += notAdmitted(r);
      }),
    );
    if (!collision) continue;
    const event = wire("graph_event", {
      type: "collision_started",
      scope: "file",
      repo: REPO,
      path: "internal/pkg1/file1.go",
      harness: "h1",
      run: `h1#live-${k}`,
    });
    offered++;
    const sent = now();
    inflight.push(
      graph.append({ events: [event] }).then((r) => {
        const returned = now();
        const result = r.results[0]?.result;
        if (result?.case !== "admitted") missed++;
        else if (sent >= measuredFrom) samples.push({ seq: Number(result.value.seq), sent, returned });
      }),
    );
  }
  await Promise.all(inflight);
  return { samples, offered, notAdmitted: missed };
}

function runWorker<T>(job: Job): Promise<T> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: job });
    worker.once("message", resolve);
    worker.once("error", reject);
    worker.once("exit", (code) => {
      if (code !== 0) reject(new Error(`producer worker exited ${code}`));
    });
  });
}

// ---------------------------------------------------------------------------------------------------
// Stores and daemons on temporary directories.

function tempDir(): { readonly dir: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "harness-bench-"));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

function withStore<T>(fn: (store: OpenedStore) => T): T {
  const tmp = tempDir();
  const store = openStore(path.join(tmp.dir, "harness.db"), "daemon bench");
  try {
    return fn(store);
  } finally {
    store.close();
    tmp.remove();
  }
}

const STARTER_NAMES = loadStarterPack().flatMap((l) => (l.ok ? [l.rule.spec.name] : []));

/**
 * A daemon on a temporary XDG tree: its own config, observer and graph credentials (random 32-byte
 * tokens in 0600 files, as `[server.producers]` requires), no metrics listener, and, with `rules`
 * false, every starter rule disabled so the evaluator only advances its cursor.
 */
async function withDaemon<T>(
  rules: boolean,
  fn: (daemon: DaemonApp, tokens: { readonly observer: string; readonly graph: string }) => Promise<T>,
  pg?: PgDatabase,
): Promise<T> {
  const tmp = tempDir();
  const sub = (name: string) => {
    const d = path.join(tmp.dir, name);
    fs.mkdirSync(d, { recursive: true, mode: 0o700 });
    return d;
  };
  const env = {
    HOME: tmp.dir,
    XDG_CONFIG_HOME: sub("config"),
    XDG_STATE_HOME: sub("state"),
    XDG_RUNTIME_DIR: sub("run"),
  };
  const tokens = {
    observer: randomBytes(32).toString("base64url"),
    graph: randomBytes(32).toString("base64url"),
  };
  const files = Object.entries(tokens).map(([source, token]) => {
    const file = path.join(tmp.dir, `${source}.token`);
    fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
    return `${source} = ${JSON.stringify(file)}`;
  });
  fs.writeFileSync(
    path.join(sub("config/harness"), "harness.toml"),
    [
      "[memory.rules]",
      `disable = ${JSON.stringify(rules ? [] : STARTER_NAMES)}`,
      "[server]",
      'metrics_listen = ""',
      "[server.producers]",
      ...files,
      "[agents]",
      'listen = ""',
      ...(pg === undefined
        ? []
        : ["[store]", `url = "postgresql://${pg.user}@/${pg.database}?host=${pg.host}"`]),
    ].join("\n"),
  );
  try {
    const daemon = await DaemonApp.start({ env, log: createLog({ level: "error" }) });
    try {
      return await fn(daemon, tokens);
    } finally {
      await daemon.close();
    }
  } finally {
    tmp.remove();
  }
}

/** Raw batched inserts into the journal's schema: prepared statements, one transaction per batch. */
function rawInserter(db: Db): (rows: readonly BenchRow[]) => void {
  const cols = ["kind", "type", "at", "source", ...INDEXED_COLUMNS, "event"];
  const insertRow = db.prepare(
    `INSERT INTO rule_journal (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`,
  );
  const insertPath = db.prepare("INSERT INTO rule_journal_paths (seq, ord, path) VALUES (?, ?, ?)");
  const insert = db.transaction((rows: readonly BenchRow[]) => {
    for (const { kind, source, at, event } of rows) {
      const values: unknown[] = [kind, event.type, at, source];
      for (const c of INDEXED_COLUMNS) {
        const v = event[c];
        values.push(typeof v === "string" ? v : typeof v === "boolean" ? Number(v) : null);
      }
      values.push(JSON.stringify(event));
      const seq = insertRow.run(values).lastInsertRowid;
      const paths: unknown[] = Array.isArray(event.paths)
        ? event.paths
        : typeof event.path === "string"
          ? [event.path]
          : [];
      paths.forEach((p, ord) => {
        insertPath.run(seq, ord, p);
      });
    }
  });
  return (rows) => insert.immediate(rows);
}

// ---------------------------------------------------------------------------------------------------
// 1. Admission throughput.

function admitRaw(events: readonly EventFields[]): number {
  return withStore((store) => {
    const insert = rawInserter(store.db);
    const start = now();
    for (let i = 0; i < events.length; i += BATCH) {
      const at = Date.now();
      insert(
        events.slice(i, i + BATCH).map((event) => ({ kind: "run_event", source: "observer", at, event })),
      );
    }
    return Number(now() - start);
  });
}

/** Every row offered at once (the queue sized to hold them), timed until the last seq resolves. */
async function admitWriter(events: readonly EventFields[]): Promise<number> {
  const tmp = tempDir();
  const store = openStore(path.join(tmp.dir, "harness.db"), "daemon bench");
  try {
    const writer = new JournalWriter(new SqliteJournalLog(new JournalCommits(store.db), undefined), {
      queueLimit: events.length,
      batchSize: BATCH,
      clock: Date.now,
      metrics: new DaemonMetrics(),
      onCommitted: () => {},
      // A failed batch also rejects its rows' seqs, which Promise.all below reports.
      onError: () => {},
    });
    const start = now();
    const seqs = events.map((event) => {
      const offered = writer.offer({ source: "observer", kind: "run_event", event });
      if (offered.kind === "dropped") throw new Error("the writer dropped a row");
      return offered.seq;
    });
    await Promise.all(seqs);
    const ns = Number(now() - start);
    await writer.close();
    return ns;
  } finally {
    store.close();
    tmp.remove();
  }
}

async function admitRpc(rows: number, rules: boolean, pg?: PgDatabase): Promise<number> {
  return withDaemon(
    rules,
    async (daemon, tokens) => {
      const r = await runWorker<ThroughputResult>({
        mode: "throughput",
        socketPath: daemon.socketPath,
        token: tokens.observer,
        rows,
      });
      if (r.notAdmitted > 0) throw new Error(`${r.notAdmitted} events were not admitted`);
      return r.ns;
    },
    pg,
  );
}

// ---------------------------------------------------------------------------------------------------
// 2. Live latency.

/** Commits the daemon made during the live run, and the time its one thread spent inside them. */
interface CommitLoad {
  journal: { count: number; ns: number };
  decisions: { count: number; ns: number };
}

/**
 * The commit is observed by wrapping `DecisionStore.prototype.commit` (no product code changes): the
 * time is taken on the daemon's thread the moment the fire's transaction has returned, so it costs a
 * Map.set per fire and no polling connection competes for the two cores. `JournalCommits.prototype.commit`
 * is wrapped the same way, only to count the journal's commits (the producers' batches and the derived
 * rows with their cursors) and the time they block the thread.
 */
async function liveLatency(pg?: PgDatabase): Promise<{
  result: LiveResult;
  committed: ReadonlyMap<number, bigint>;
  load: CommitLoad;
}> {
  const committed = new Map<number, bigint>();
  const load: CommitLoad = { journal: { count: 0, ns: 0 }, decisions: { count: 0, ns: 0 } };
  const commit = DecisionStore.prototype.commit;
  const journalCommit = JournalCommits.prototype.commit;
  const pgCommit = PgEvaluatorLog.prototype.commit;
  // PostgreSQL's evaluator commit is asynchronous: the fire is committed when its promise resolves.
  PgEvaluatorLog.prototype.commit = async function (this: PgEvaluatorLog, d: Decisions, options) {
    const start = now();
    await pgCommit.call(this, d, options);
    const at = now();
    load.decisions.count++;
    load.decisions.ns += Number(at - start);
    for (const fire of d.fires) if (fire.rule === LIVE_RULE) committed.set(fire.seq, at);
  };
  DecisionStore.prototype.commit = function (this: DecisionStore, d: Decisions): void {
    const start = now();
    commit.call(this, d);
    const at = now();
    load.decisions.count++;
    load.decisions.ns += Number(at - start);
    for (const fire of d.fires) if (fire.rule === LIVE_RULE) committed.set(fire.seq, at);
  };
  JournalCommits.prototype.commit = function <T>(this: JournalCommits, work: () => T): T {
    const start = now();
    try {
      return journalCommit.call(this, work) as T;
    } finally {
      load.journal.count++;
      load.journal.ns += Number(now() - start);
    }
  };
  try {
    return await withDaemon(
      true,
      async (daemon, tokens) => {
        const result = await runWorker<LiveResult>({
          mode: "live",
          socketPath: daemon.socketPath,
          observerToken: tokens.observer,
          graphToken: tokens.graph,
          seconds: LIVE_SECONDS,
        });
        // The last rows may still be in evaluation when the last Append returns.
        for (let i = 0; i < 100 && result.samples.some((s) => !committed.has(s.seq)); i++) await sleep(20);
        return { result, committed, load };
      },
      pg,
    );
  } finally {
    DecisionStore.prototype.commit = commit;
    JournalCommits.prototype.commit = journalCommit;
    PgEvaluatorLog.prototype.commit = pgCommit;
  }
}

/** The floor under the live figure: one evaluator-sized FULL commit (the cursor update) on this disk. */
function fullCommit(): number[] {
  return withStore((store) => {
    const cursor = store.db.prepare("UPDATE evaluator SET cursor = cursor + 1 WHERE id = 1");
    const commit = store.db.transaction(() => cursor.run());
    const times: number[] = [];
    for (let i = 0; i < 500; i++) {
      const start = now();
      commit.immediate();
      times.push(Number(now() - start) / 1e6);
    }
    return times.sort((a, b) => a - b);
  });
}

// ---------------------------------------------------------------------------------------------------
// 3. Backtest over the store.

/** Writes the month of rows with raw inserts; building is not measured, so it skips fsync. */
function buildJournal(file: string, n: number): number {
  const start = now();
  const store = openStore(file, "daemon bench");
  try {
    store.db.pragma("synchronous = OFF");
    const insert = rawInserter(store.db);
    let batch: BenchRow[] = [];
    for (const row of journalRows(n, ROWS_PER_DAY, T0)) {
      batch.push(row);
      if (batch.length === 10_000) {
        insert(batch);
        batch = [];
      }
    }
    insert(batch);
  } finally {
    store.close();
  }
  return Number(now() - start) / 1e9;
}

/** The floor: every row's columns in seq order, pages of 5,000, the event JSON parsed, nothing kept. */
function bareRead(db: Db): number {
  const page = db.prepare("SELECT seq, kind, at, event FROM rule_journal WHERE seq > ? ORDER BY seq LIMIT ?");
  let n = 0;
  for (let seq = 0; ; ) {
    const rows = page.all(seq, PAGE) as { seq: number; event: string }[];
    for (const r of rows) if ((JSON.parse(r.event) as EventFields).type !== "") n++;
    if (rows.length < PAGE) return n;
    seq = (rows[rows.length - 1] as { seq: number }).seq;
  }
}

// ---------------------------------------------------------------------------------------------------
// Reporting.

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const quantile = (sorted: readonly number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
const int = (x: number) => Math.round(x).toLocaleString("en-US");
const pct = (x: number) => `${(100 * x).toFixed(0)}%`;
const ms = (x: number) => x.toFixed(2);
const verdict = (ok: boolean) => (ok ? "met" : "MISSED");
const line = (label: string, value: string, note = "") =>
  console.log(`  ${label.padEnd(40)} ${value.padStart(14)}  ${note}`);
const gc = () => globalThis.gc?.();
/** Other work on the machine moves every figure here, so each section says how busy it was. */
const load = () => `load ${os.loadavg()[0]?.toFixed(1)} on ${os.cpus().length} cores`;

/** 1. Admission: the four paths alternate within each repetition, so drift lands on all alike. */
async function admissionSection(pgDir: string | undefined): Promise<void> {
  const events = toolEvents(ADMIT_ROWS);
  admitRaw(events.slice(0, 5 * BATCH));
  await admitWriter(events.slice(0, 5 * BATCH));
  const ns = {
    raw: [] as number[],
    writer: [] as number[],
    rpc: [] as number[],
    rpcRules: [] as number[],
    pgRpc: [] as number[],
    pgRpcRules: [] as number[],
  };
  for (let rep = 0; rep < REPS; rep++) {
    gc();
    ns.raw.push(admitRaw(events));
    gc();
    ns.writer.push(await admitWriter(events));
    gc();
    ns.rpc.push(await admitRpc(ADMIT_ROWS, false));
    gc();
    ns.rpcRules.push(await admitRpc(ADMIT_ROWS, true));
    if (pgDir === undefined) continue;
    gc();
    ns.pgRpc.push(await admitRpc(ADMIT_ROWS, false, await pgDatabase(pgDir, `bench_admit_${rep}`)));
    gc();
    ns.pgRpcRules.push(await admitRpc(ADMIT_ROWS, true, await pgDatabase(pgDir, `bench_admit_rules_${rep}`)));
  }
  const rate = (xs: readonly number[]) => ADMIT_ROWS / (median(xs) / 1e9);
  const raw = rate(ns.raw);
  console.log(
    `\n1. admission: ${int(ADMIT_ROWS)} tool rows (2 paths each), batches of ${BATCH}, synchronous=FULL; median of ${REPS}; ${load()}`,
  );
  line("raw INSERTs, one transaction per batch", `${int(raw)} rows/s`, "(issue: about 47,000)");
  line(
    "JournalWriter",
    `${int(rate(ns.writer))} rows/s`,
    `${pct(rate(ns.writer) / raw)} of raw; goal ≥ 70%: ${verdict(rate(ns.writer) / raw >= 0.7)}`,
  );
  line("RPC Append, rules disabled", `${int(rate(ns.rpc))} rows/s`, `${pct(rate(ns.rpc) / raw)} of raw`);
  line(
    "RPC Append, starter pack evaluating",
    `${int(rate(ns.rpcRules))} rows/s`,
    `${pct(rate(ns.rpcRules) / raw)} of raw`,
  );
  if (pgDir === undefined) return;
  const versus = (pg: readonly number[], sqlite: readonly number[]) =>
    `${pct(rate(pg) / rate(sqlite))} of SQLite's; goal ≥ 50%: ${verdict(rate(pg) / rate(sqlite) >= 0.5)}`;
  line("PostgreSQL: RPC Append, rules disabled", `${int(rate(ns.pgRpc))} rows/s`, versus(ns.pgRpc, ns.rpc));
  line(
    "PostgreSQL: RPC Append, starter pack",
    `${int(rate(ns.pgRpcRules))} rows/s`,
    versus(ns.pgRpcRules, ns.rpcRules),
  );
}

/** 2. Live latency, with the commit floor and the commit load that explain it. */
async function liveSection(pgDir: string | undefined): Promise<void> {
  const onSqlite = await liveRun(undefined);
  if (pgDir === undefined) return;
  const onPg = await liveRun(await pgDatabase(pgDir, "bench_live"));
  const ratio = onPg / onSqlite;
  line("p99 PostgreSQL / SQLite", ratio.toFixed(2), `goal ≤ 3: ${verdict(ratio <= 3)}`);
}

/** One live run on SQLite (or, given `pg`, PostgreSQL): its figures printed, its p99 returned. */
async function liveRun(pg: PgDatabase | undefined): Promise<number> {
  const commits = pg === undefined ? fullCommit() : undefined;
  const { result, committed, load: commitLoad } = await liveLatency(pg);
  const after = result.samples.map((s) => {
    const c = committed.get(s.seq);
    return c === undefined ? Number.POSITIVE_INFINITY : Number(c - s.returned) / 1e6;
  });
  const early = after.filter((x) => x <= 0).length;
  const sorted = after.map((x) => Math.max(0, x)).sort((a, b) => a - b);
  const endToEnd = result.samples
    .map((s) => Number((committed.get(s.seq) ?? s.sent) - s.sent) / 1e6)
    .sort((a, b) => a - b);
  const roundTrip = result.samples.map((s) => Number(s.returned - s.sent) / 1e6).sort((a, b) => a - b);
  const p = (xs: readonly number[]) =>
    `${ms(quantile(xs, 0.5))} / ${ms(quantile(xs, 0.99))} / ${ms(xs[xs.length - 1] ?? 0)}`;
  const p99 = quantile(sorted, 0.99);
  const runS = LIVE_SECONDS + LIVE_WARMUP_S;
  console.log(
    `\n2. live${pg === undefined ? "" : " on PostgreSQL"}: ${int(result.offered / runS)} rows/s offered for ${LIVE_SECONDS} s after ${LIVE_WARMUP_S} s warm-up, starter pack, ${result.samples.length} ${LIVE_RULE} fires; ms p50 / p99 / max; ${load()}`,
  );
  line("Append returned → fire committed", p(sorted), `goal p99 < 10 ms: ${verdict(p99 < 10)}`);
  line("fire committed before its Append returned", `${early} of ${sorted.length}`, "(counted as 0 above)");
  line("Append sent → returned", p(roundTrip));
  line("Append sent → fire committed", p(endToEnd));
  if (commits !== undefined)
    line("one FULL commit of the cursor (floor)", p(commits), "(issue: about 0.14 ms)");
  const perS = (c: { count: number }) => int(c.count / runS);
  if (pg === undefined)
    line(
      "commits/s: journal batches, evaluator",
      `${perS(commitLoad.journal)}, ${perS(commitLoad.decisions)}`,
      `the daemon thread spent ${pct((commitLoad.journal.ns + commitLoad.decisions.ns) / (runS * 1e9))} of the run in those transactions`,
    );
  else
    line("evaluator commits/s", perS(commitLoad.decisions), "(each awaited: the thread is free meanwhile)");
  if (result.notAdmitted > 0) line("events not admitted", String(result.notAdmitted));
  return p99;
}

/**
 * 3. Backtest: the store is built once; in each repetition the bare read and the replay of each rule
 * alternate, so drift lands on all alike. Every starter rule is measured: the kind a rule watches decides
 * how many rows it evaluates (a run_event rule meets most rows, a graph_event rule few).
 */
/**
 * 3. With `STORE=postgres`, the backtest's PostgreSQL figures (a backtest's share of a bare streamed
 * read there) come from `bench:pg-backtest`, run here as a child over `PG_BACKTEST_ROWS` rows (default
 * 300,000) of the same mix, its own cluster and SQLite's figures beside them.
 */
function backtestSection(pgDir?: string): void {
  sqliteBacktest();
  if (pgDir === undefined) return;
  console.log(`\n3b. backtest on PostgreSQL (bench:pg-backtest); ${load()}`);
  const r = spawnSync(
    process.execPath,
    ["--expose-gc", fileURLToPath(new URL("./pg-backtest.bench.js", import.meta.url))],
    {
      stdio: "inherit",
      env: { ...process.env, ROWS: process.env.PG_BACKTEST_ROWS ?? "300000", REPS: String(BACKTEST_REPS) },
    },
  );
  if (r.status !== 0) throw new Error(`bench:pg-backtest exited ${r.status ?? r.signal}`);
}

function sqliteBacktest(): void {
  const tmp = tempDir();
  try {
    const file = path.join(tmp.dir, "harness.db");
    const built = buildJournal(file, DAYS * ROWS_PER_DAY);
    const store = openStoreReadOnly(file);
    try {
      const last = new JournalTable(store.db).last();
      const requests = BACKTEST_RULES.map((rule): BacktestRequest => {
        const text = STARTER_FILES.find(([f]) => f === `starter-rules/${rule}.toml`)?.[1];
        if (text === undefined) throw new Error(`no starter rule ${rule}`);
        return {
          file: `rules/${rule}.toml`,
          text,
          sinceMs: DAYS * DAY,
          nowMs: last.at,
          enforce: [],
          shadowPeriod: 0,
          shadows: {},
          loaded: [],
        };
      });
      const bareTimes: number[] = [];
      const times = requests.map(() => [] as number[]);
      const fires = requests.map(() => 0);
      for (let rep = 0; rep < BACKTEST_REPS; rep++) {
        gc();
        const start = now();
        if (bareRead(store.db) !== last.seq) throw new Error("the bare read missed rows");
        bareTimes.push(Number(now() - start));
        for (const [i, request] of requests.entries()) {
          gc();
          const t0 = now();
          let n = 0;
          replay(new JournalTable(store.db), request, {
            start: () => {},
            fires: (fs) => {
              n += fs.length;
            },
            summary: (c) => {
              if (c.rows !== last.seq) throw new Error(`the replay saw ${c.rows} rows of ${last.seq}`);
            },
          });
          times[i]?.push(Number(now() - t0));
          fires[i] = n;
        }
      }
      const rowsPerS = (xs: readonly number[]) => last.seq / (median(xs) / 1e9);
      const bare = rowsPerS(bareTimes);
      console.log(
        `\n3. backtest from the store: ${DAYS} days × ${int(ROWS_PER_DAY)} rows (${int(last.seq)} rows, built in ${built.toFixed(0)} s); median of ${BACKTEST_REPS}; ${load()}`,
      );
      line("bare read, pages of 5,000, JSON.parse", `${int(bare)} rows/s`, "(issue: about 270,000)");
      for (const [i, rule] of BACKTEST_RULES.entries()) {
        const ratio = rowsPerS(times[i] ?? []) / bare;
        line(
          `replay(): ${rule}`,
          `${int(rowsPerS(times[i] ?? []))} rows/s`,
          `${pct(ratio)} of bare; goal ≥ 70%: ${verdict(ratio >= 0.7)}; ${fires[i]} fires`,
        );
      }
    } finally {
      store.close();
    }
  } finally {
    tmp.remove();
  }
}

const SECTIONS = { admission: admissionSection, live: liveSection, backtest: backtestSection };

async function main(): Promise<void> {
  const cpu = os.cpus();
  console.log(
    `node ${process.version}, ${os.platform()} ${os.arch()}, ${cpu.length} × ${cpu[0]?.model ?? "?"}, store in ${os.tmpdir()}${globalThis.gc === undefined ? " (run with --expose-gc between phases)" : ""}`,
  );
  const chosen = (process.env.SECTIONS ?? Object.keys(SECTIONS).join(",")).split(",");
  const pgDir = ON_PG ? path.join(os.tmpdir(), `harness-pg-bench-daemon-${process.pid}`) : undefined;
  if (pgDir !== undefined) makeClusterDir(pgDir);
  try {
    for (const name of chosen) {
      const section = SECTIONS[name as keyof typeof SECTIONS];
      if (section === undefined)
        throw new Error(`SECTIONS: no section ${name} (${Object.keys(SECTIONS).join(", ")})`);
      gc();
      await section(pgDir);
    }
  } finally {
    if (pgDir !== undefined) stopCluster(pgDir);
  }
}

if (isMainThread) await main();
else {
  const job = workerData as Job;
  parentPort?.postMessage(
    job.mode === "throughput" ? await throughputProducer(job) : await liveProducer(job),
  );
}
