/**
 * `npm run bench:pg-write`: the daemon's write path on PostgreSQL beside SQLite, in one run (issue 34),
 * before the daemon itself runs on PostgreSQL: the journal writer and the evaluator over each backend's
 * doors (`src/shell/store/write-ports.ts`), with no RPC in front.
 * 1. admission: `ROWS` tool rows offered at once through `JournalWriter`, batches of 1,000, timed until
 *    the last row's seq resolves; median of `REPS`, the backends alternating.
 * 2. live: 1,000 rows/s offered for `LIVE_SECONDS` (10 every 10 ms), one of them a row the starter
 *    pack's `same-file-collision` fires on; the writer and the evaluator scheduled as the daemon
 *    schedules them; the time from the offer to that fire's commit, p50 / p99 / max.
 * PostgreSQL is a throwaway cluster on a unix socket, fsync on (test/support/pg-cluster.ts); SQLite a
 * temporary store with `synchronous = FULL`. Env: ROWS (20,000), REPS (5), LIVE_SECONDS (15).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { assembleRuleSet } from "../src/core/rule-set.js";
import { loadStarterPack } from "../src/core/starter-pack.js";
import { Evaluator } from "../src/shell/daemon/evaluator.js";
import { JournalWriter, type Offer } from "../src/shell/journal/journal-writer.js";
import { openStore } from "../src/shell/store/open-store.js";
import { type OpenedPgStore, openPgStore } from "../src/shell/store/pg/open-pg-store.js";
import { PgJournal } from "../src/shell/store/pg/pg-journal.js";
import { PgEvaluatorLog, PgJournalLog } from "../src/shell/store/pg/pg-write-ports.js";
import { Stores } from "../src/shell/store/stores.js";
import type { EvaluatorLog, JournalLog } from "../src/shell/store/write-ports.js";
import { DaemonMetrics } from "../src/shell/support/metrics.js";
import { makeClusterDir, pgDatabase, pgOptions, stopCluster } from "../test/support/pg-cluster.js";
import { REPO, toolEvents } from "./journal-rows.js";

const setting = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const ROWS = setting("ROWS", 20_000);
const REPS = setting("REPS", 5);
const LIVE_SECONDS = setting("LIVE_SECONDS", 15);
const LIVE_WARMUP_S = 2;
const LIVE_RULE = "same-file-collision";

const now = (): bigint => process.hrtime.bigint();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const quantile = (sorted: readonly number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
const int = (x: number) => Math.round(x).toLocaleString("en-US");
const load = () => `load ${os.loadavg()[0]?.toFixed(1)} on ${os.cpus().length} cores`;
const line = (label: string, value: string, note = "") =>
  console.log(`  ${label.padEnd(40)} ${value.padStart(14)}  ${note}`);

/** A backend's doors over a fresh store, and how to drop it. */
interface Backend {
  readonly name: string;
  readonly journal: JournalLog;
  readonly evaluator: EvaluatorLog;
  close(): Promise<void>;
}

type Fresh = (label: string) => Promise<Backend>;

function sqliteBackends(tmp: string): Fresh {
  let n = 0;
  return async () => {
    const store = openStore(path.join(tmp, `harness-${n++}.db`), "pg-write bench");
    const stores = new Stores(store);
    return {
      name: "sqlite",
      journal: stores.journalLog(),
      evaluator: stores.evaluatorLog(),
      close: async () => store.close(),
    };
  };
}

function pgBackends(dir: string): Fresh {
  return async (label) => {
    const store: OpenedPgStore = await openPgStore({ ...pgOptions(await pgDatabase(dir, label)), max: 4 });
    const journal = new PgJournal(store.pool);
    return {
      name: "postgresql",
      journal: new PgJournalLog(store.pool),
      evaluator: new PgEvaluatorLog(store.pool, journal),
      close: () => store.close(),
    };
  };
}

const writerOver = (log: JournalLog, onCommitted: () => void = () => {}) =>
  new JournalWriter(log, {
    queueLimit: 1_000_000,
    batchSize: 1_000,
    clock: Date.now,
    metrics: new DaemonMetrics(),
    onCommitted,
    onError: () => {},
  });

async function admit(backend: Backend): Promise<number> {
  const writer = writerOver(backend.journal);
  const start = now();
  const seqs = toolEvents(ROWS).map((event) => {
    const offered = writer.offer({ source: "observer", kind: "run_event", event });
    if (offered.kind === "dropped") throw new Error("the writer dropped a row");
    return offered.seq;
  });
  await Promise.all(seqs);
  const ns = Number(now() - start);
  await writer.close();
  return ns;
}

/** The writer and the evaluator as the daemon runs them: a pass after each commit, passes one at a time. */
async function live(backend: Backend): Promise<number[]> {
  const ruleSet = assembleRuleSet({ starter: loadStarterPack(), policy: [], shadowPeriod: 0 });
  const offeredAt = new Map<number, bigint>();
  const latencies: number[] = [];
  let measuring = false;
  const evaluator = await Evaluator.open(ruleSet, {
    log: backend.evaluator,
    metrics: new DaemonMetrics(),
    clock: Date.now,
    dispatch: (c) => {
      const at = now();
      for (const f of c.fires) {
        const sent = offeredAt.get(f.seq);
        if (f.rule === LIVE_RULE && sent !== undefined && measuring) latencies.push(Number(at - sent) / 1e6);
      }
    },
  });
  let running: Promise<void> | undefined;
  let again = false;
  const pass = () => {
    if (running !== undefined) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        while ((await evaluator.step(20)) > 0);
      } while (again);
    })().finally(() => {
      running = undefined;
    });
  };
  const writer = writerOver(backend.journal, pass);
  const tools = toolEvents(1_000);
  let k = 0;
  const end = Date.now() + (LIVE_SECONDS + LIVE_WARMUP_S) * 1000;
  const measureFrom = Date.now() + LIVE_WARMUP_S * 1000;
  while (Date.now() < end) {
    measuring = Date.now() >= measureFrom;
    for (let i = 0; i < 9; i++)
      writer.offer({
        source: "observer",
        kind: "run_event",
        event: tools[k++ % tools.length] as Offer["event"],
      });
    const sent = now();
    const offered = writer.offer({
      source: "graph",
      kind: "graph_event",
      event: {
        type: "collision_started",
        scope: "file",
        repo: REPO,
        path: "internal/pkg1/file1.go",
        harness: "h1",
        run: `h1#live-${k}`,
      },
    });
    if (offered.kind === "queued") void offered.seq.then((seq) => offeredAt.set(seq, sent));
    await sleep(10);
  }
  await writer.close();
  while (running !== undefined) await running;
  while ((await evaluator.step(1_000)) > 0);
  return latencies.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const dir = path.join(os.tmpdir(), `harness-pg-bench-write-${process.pid}`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "harness-pg-write-"));
  makeClusterDir(dir);
  try {
    const fresh: Fresh[] = [sqliteBackends(tmp), pgBackends(dir)];
    const admitted = fresh.map(() => [] as number[]);
    let db = 0;
    for (let rep = 0; rep < REPS; rep++)
      for (const [i, make] of fresh.entries()) {
        const backend = await make(`bench_admit_${db++}`);
        admitted[i]?.push(await admit(backend));
        await backend.close();
      }
    const rate = (xs: readonly number[]) => ROWS / (median(xs) / 1e9);
    const sqliteRate = rate(admitted[0] ?? []);
    const pgRate = rate(admitted[1] ?? []);
    console.log(
      `\n1. admission: ${int(ROWS)} tool rows through JournalWriter, batches of 1,000; median of ${REPS}; ${load()}`,
    );
    line("SQLite, synchronous=FULL", `${int(sqliteRate)} rows/s`);
    line(
      "PostgreSQL, fsync on",
      `${int(pgRate)} rows/s`,
      `${((100 * pgRate) / sqliteRate).toFixed(0)}% of SQLite's; goal ≥ 50%: ${pgRate / sqliteRate >= 0.5 ? "met" : "MISSED"}`,
    );
    const p99s: number[] = [];
    console.log(
      `\n2. live: 1,000 rows/s offered for ${LIVE_SECONDS} s after ${LIVE_WARMUP_S} s, starter pack; offer → ${LIVE_RULE} fire committed, ms p50 / p99 / max; ${load()}`,
    );
    for (const make of fresh) {
      const backend = await make(`bench_live_${db++}`);
      const xs = await live(backend);
      await backend.close();
      p99s.push(quantile(xs, 0.99));
      line(
        `${backend.name} (${xs.length} fires)`,
        `${quantile(xs, 0.5).toFixed(2)} / ${quantile(xs, 0.99).toFixed(2)} / ${(xs.at(-1) ?? 0).toFixed(2)}`,
      );
    }
    const ratio = (p99s[1] ?? 0) / (p99s[0] ?? 1);
    line("p99 PostgreSQL / SQLite", ratio.toFixed(2), `goal ≤ 3: ${ratio <= 3 ? "met" : "MISSED"}`);
  } finally {
    stopCluster(dir);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
