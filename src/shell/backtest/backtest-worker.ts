/**
 * The Backtest RPC's worker, a child process (`support/process-worker.ts` says why not a thread): one
 * replay over its own read-only connection to the store, so a long backtest never delays the daemon's
 * event loop or its evaluator. It posts the replay's parts as they come; the daemon terminates it once
 * the summary is read, or when the caller goes away.
 */
import { RuleRefusedError } from "../errors.js";
import { openStoreReadOnly } from "../store/open-store.js";
import { Stores } from "../store/stores.js";
import { workerPort } from "../support/process-worker.js";
import type { WorkerInput, WorkerMessage } from "./backtest-runner.js";
import { replay } from "./replay.js";

const port = await workerPort<WorkerInput>();
const { storePath, request } = port.workerData;
const post = (m: WorkerMessage) => port.postMessage(m);

try {
  const store = openStoreReadOnly(storePath);
  try {
    replay(new Stores(store).journal, request, {
      start: (start) => post({ part: "start", start }),
      fires: (fires, loaded) => post({ part: "fires", fires, ...(loaded ? { loaded } : {}) }),
      summary: (counts, loaded) =>
        post({ part: "summary", counts, ...(loaded === undefined ? {} : { loaded }) }),
    });
  } finally {
    store.close();
  }
} catch (e) {
  post(
    e instanceof RuleRefusedError
      ? { part: "rule_error", problem: e.problem }
      : { part: "error", message: (e as Error).message },
  );
}
