/**
 * The Backtest RPC's worker thread: one replay over its own read-only connection to the store, so a
 * long backtest never delays the daemon's event loop or its evaluator. It posts the replay's parts as
 * they come and ends; the daemon terminates it when the caller goes away.
 */
import { parentPort, workerData } from "node:worker_threads";
import { RuleRefusedError } from "../errors.js";
import { openStoreReadOnly } from "../store/open-store.js";
import { Stores } from "../store/stores.js";
import type { WorkerInput, WorkerMessage } from "./backtest-runner.js";
import { replay } from "./replay.js";

const { storePath, request } = workerData as WorkerInput;
const post = (m: WorkerMessage) => parentPort?.postMessage(m);

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
