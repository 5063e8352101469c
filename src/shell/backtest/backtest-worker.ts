/**
 * The Backtest RPC's worker, a child process (`support/process-worker.ts` says why not a thread): one
 * replay over its own read-only connection to the store, so a long backtest never delays the daemon's
 * event loop or its evaluator. On PostgreSQL its rows stream from one snapshot (`replay-on-pg.ts`). It
 * posts the replay's parts as they come; the daemon terminates it once the summary is read, or when the
 * caller goes away.
 */
import { RuleRefusedError } from "../errors.js";
import { openStoreReadOnly } from "../store/open-store.js";
import { openPgReadOnly } from "../store/pg/open-pg-store.js";
import { pgPoolConfigOf } from "../store/pg/pg-config.js";
import { Stores } from "../store/stores.js";
import { workerPort } from "../support/process-worker.js";
import type { WorkerInput, WorkerMessage } from "./backtest-runner.js";
import { type BacktestSink, replay } from "./replay.js";
import { replayOnPg } from "./replay-on-pg.js";

/** A FETCH of one page taking this long means the server is stuck: the backtest fails rather than hangs. */
const PG_STATEMENT_TIMEOUT_MS = 60_000;

const port = await workerPort<WorkerInput>();
const { store, request } = port.workerData;
const post = (m: WorkerMessage) => port.postMessage(m);
const sink: BacktestSink = {
  start: (start) => post({ part: "start", start }),
  fires: (fires, loaded) => post({ part: "fires", fires, ...(loaded ? { loaded } : {}) }),
  summary: (counts, loaded) => post({ part: "summary", counts, ...(loaded === undefined ? {} : { loaded }) }),
};

try {
  if (store.backend === "sqlite") {
    const opened = openStoreReadOnly(store.path);
    try {
      replay(new Stores(opened).journal, request, sink);
    } finally {
      opened.close();
    }
  } else {
    const opened = openPgReadOnly(pgPoolConfigOf(store.config), {
      max: 1,
      statementTimeoutMs: PG_STATEMENT_TIMEOUT_MS,
    });
    try {
      await replayOnPg(opened.pool, request, sink);
    } finally {
      await opened.close();
    }
  }
} catch (e) {
  post(
    e instanceof RuleRefusedError
      ? { part: "rule_error", problem: e.problem }
      : { part: "error", message: (e as Error).message },
  );
}
