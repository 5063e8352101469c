/**
 * Where the daemon runs backtests (SPEC-0029 REQ-17): each in a worker process (`support/process-worker.ts`) with its own read-only
 * connection (to the SQLite file, or to PostgreSQL), at most two at once. A third is refused at once rather than queued, so a caller learns
 * the daemon is busy instead of waiting behind a month-long replay. A backtest holds its slot until its
 * stream ends, not just while its worker replays: the fires a slow reader has not taken yet wait in the
 * daemon, and two slots bound them too. Ending, failing, or the caller going away frees the slot.
 */
import type { BacktestCounts, ReplayedFire } from "../../core/backtest.js";
import type { RuleProblem } from "../../core/rule-file.js";
import type { StoreLocation } from "../config/store-location.js";
import { BacktestBusyError } from "../errors.js";
import { failpoint } from "../support/failpoints.js";
import { ProcessWorker } from "../support/process-worker.js";
import type { BacktestRequest, BacktestStart } from "./replay.js";

export const MAX_CONCURRENT_BACKTESTS = 2;

export interface WorkerInput {
  readonly store: StoreLocation;
  readonly request: BacktestRequest;
}

export type WorkerMessage =
  | { readonly part: "start"; readonly start: BacktestStart }
  // `loaded`: with diff, the loaded version's fires and counts, not the file's.
  | { readonly part: "fires"; readonly fires: readonly ReplayedFire[]; readonly loaded?: true }
  | { readonly part: "summary"; readonly counts: BacktestCounts; readonly loaded?: BacktestCounts }
  | { readonly part: "rule_error"; readonly problem: RuleProblem }
  | { readonly part: "error"; readonly message: string };

/** The worker's module beside this one: compiled `.js`, or `.ts` when the daemon runs from source. */
const WORKER_URL = new URL(
  import.meta.url.endsWith(".ts") ? "./backtest-worker.ts" : "./backtest-worker.js",
  import.meta.url,
);

export class BacktestRunner {
  private running = 0;
  private readonly workers = new Set<ProcessWorker>();

  constructor(private readonly store: StoreLocation) {}

  /**
   * Starts a replay and yields its parts as the worker posts them. Throws `BacktestBusyError` at once
   * when both slots are taken. Breaking out of the loop, or `signal` aborting, terminates the worker.
   */
  run(request: BacktestRequest, signal: AbortSignal): AsyncGenerator<WorkerMessage> {
    if (this.running >= MAX_CONCURRENT_BACKTESTS)
      throw new BacktestBusyError(request.file, MAX_CONCURRENT_BACKTESTS);
    this.running++;
    const worker = new ProcessWorker(WORKER_URL, {
      store: this.store,
      request,
    } satisfies WorkerInput);
    this.workers.add(worker);
    worker.once("exit", () => this.workers.delete(worker));
    return messages(worker, signal, () => {
      this.running--;
    });
  }

  /** Stops every backtest in flight (the daemon is closing). */
  async close(): Promise<void> {
    await Promise.all([...this.workers].map((w) => w.terminate()));
  }
}

async function* messages(
  worker: ProcessWorker,
  signal: AbortSignal,
  release: () => void,
): AsyncGenerator<WorkerMessage> {
  const queue: WorkerMessage[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  worker.on("message", (m: WorkerMessage) => {
    queue.push(m);
    notify();
  });
  worker.on("error", (e: Error) => {
    queue.push({ part: "error", message: e.message });
    notify();
  });
  worker.once("exit", () => {
    ended = true;
    notify();
  });
  let released = false;
  const releaseOnce = () => {
    if (released) return;
    released = true;
    release();
  };
  // A caller that stops reading and then goes away leaves this generator suspended at a yield for good
  // (the transport's write waits for a drain that never comes), so its finally never runs: the slot and
  // the queued parts are let go here, when the call is aborted.
  const abort = () => {
    queue.length = 0;
    void worker.terminate();
    releaseOnce();
  };
  signal.addEventListener("abort", abort, { once: true });
  try {
    for (;;) {
      const m = queue.shift();
      if (m !== undefined) {
        // The worker is replaying: where the failover matrix kills the daemon mid-backtest.
        failpoint("backtest.running");
        yield m;
        if (m.part === "summary" || m.part === "error" || m.part === "rule_error") return;
        continue;
      }
      if (signal.aborted) return;
      if (ended) {
        yield { part: "error", message: "the backtest worker exited before its summary" };
        return;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    signal.removeEventListener("abort", abort);
    await worker.terminate();
    releaseOnce();
  }
}
