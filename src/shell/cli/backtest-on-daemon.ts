/**
 * The daemon's `RuleService.Backtest` as the CLI reads it: the streamed start, fires and summary, read to
 * the end, as one report. `harness rules backtest` and `harness rules propose` both ask it.
 */
import type { BacktestCounts, ReplayedFire } from "../../core/backtest.js";
import type { BacktestReport, BacktestStart } from "../backtest/replay.js";
import type { RuleClient } from "../rpc/client.js";
import { replayedFireOf } from "../rpc/fire-wire.js";

/** One rule file's backtest over the last `sinceMs` of the journal, run by the daemon. */
export async function backtestOnDaemon(
  client: RuleClient,
  file: string,
  text: string,
  sinceMs: number,
): Promise<BacktestReport> {
  let start: BacktestStart | undefined;
  let counts: BacktestCounts | undefined;
  const fires: ReplayedFire[] = [];
  // Read to the end of the stream, not just to the summary: a response left half-read keeps the
  // connection, and this process, waiting.
  for await (const { part } of client.backtest({ file, text, sinceMs: BigInt(sinceMs) })) {
    if (part.case === "start")
      start = {
        rule: part.value.rule,
        hash: part.value.hash,
        fromSeq: Number(part.value.fromSeq),
        toSeq: Number(part.value.toSeq),
      };
    else if (part.case === "fires")
      fires.push(
        ...part.value.fires.map((f) =>
          replayedFireOf(f, (m: string) => new Error(`the daemon sent a bad fire: ${m}`)),
        ),
      );
    else if (part.case === "summary") {
      const s = part.value;
      counts = {
        rows: Number(s.rows),
        evaluations: Number(s.evaluations),
        evalErrors: Number(s.evalErrors),
        storeErrors: Number(s.storeErrors),
        suppressed: Number(s.suppressed),
        costExceeded: Number(s.costExceeded),
        fires: Number(s.fires),
      };
    }
  }
  if (start === undefined || counts === undefined)
    throw new Error("the daemon ended the backtest without its start or summary");
  return { start, sinceMs, fires, counts, ranOn: "daemon" };
}
