/**
 * The daemon's `RuleService.Backtest` as the CLI reads it: the streamed start, fires and summary, read to
 * the end, as one report. `harness rules backtest` and `harness rules propose` both ask it.
 */
import type { BacktestCounts, ReplayedFire } from "../../core/backtest.js";
import type { RuleSource } from "../../core/rule-set.js";
import type { BacktestReport, BacktestStart } from "../backtest/replay.js";
import type { RuleClient } from "../rpc/client.js";
import { replayedFireOf } from "../rpc/fire-wire.js";
import type { BacktestFire, BacktestSummary } from "../rpc/gen/harness/v1/rules_pb.js";

/** The wire's `loaded_source` back to a rule source: `starter`, or `policy:<repo>`. */
function sourceOf(text: string): RuleSource {
  if (text === "starter") return { kind: "starter" };
  if (text.startsWith("policy:")) return { kind: "policy", repo: text.slice("policy:".length) };
  throw new Error(`the daemon sent an unknown rule source: ${JSON.stringify(text.slice(0, 80))}`);
}

const countsOf = (s: BacktestSummary): BacktestCounts => ({
  rows: Number(s.rows),
  evaluations: Number(s.evaluations),
  evalErrors: Number(s.evalErrors),
  storeErrors: Number(s.storeErrors),
  suppressed: Number(s.suppressed),
  costExceeded: Number(s.costExceeded),
  fires: Number(s.fires),
});

/**
 * One rule file's backtest over the last `sinceMs` of the journal, run by the daemon; with `diff`, the
 * loaded rule of the same name beside it over the same rows (`loaded`, absent when none has the name).
 */
export async function backtestOnDaemon(
  client: RuleClient,
  file: string,
  text: string,
  sinceMs: number,
  diff = false,
): Promise<BacktestReport> {
  let start: BacktestStart | undefined;
  let counts: BacktestCounts | undefined;
  let loadedCounts: BacktestCounts | undefined;
  const fires: ReplayedFire[] = [];
  const loadedFires: ReplayedFire[] = [];
  const fireOf = (f: BacktestFire) =>
    replayedFireOf(f, (m: string) => new Error(`the daemon sent a bad fire: ${m}`));
  // Read to the end of the stream, not just to the summary: a response left half-read keeps the
  // connection, and this process, waiting.
  for await (const { part } of client.backtest({ file, text, sinceMs: BigInt(sinceMs), diff })) {
    if (part.case === "start")
      start = {
        rule: part.value.rule,
        hash: part.value.hash,
        fromSeq: Number(part.value.fromSeq),
        toSeq: Number(part.value.toSeq),
        ...(part.value.loadedHash === ""
          ? {}
          : { loaded: { hash: part.value.loadedHash, source: sourceOf(part.value.loadedSource) } }),
      };
    else if (part.case === "fires") {
      fires.push(...part.value.fires.map(fireOf));
      loadedFires.push(...part.value.loadedFires.map(fireOf));
    } else if (part.case === "summary") {
      counts = countsOf(part.value);
      if (part.value.loaded !== undefined) loadedCounts = countsOf(part.value.loaded);
    }
  }
  if (start === undefined || counts === undefined)
    throw new Error("the daemon ended the backtest without its start or summary");
  const loaded =
    start.loaded === undefined || loadedCounts === undefined
      ? {}
      : { loaded: { ...start.loaded, fires: loadedFires, counts: loadedCounts } };
  return { start, sinceMs, fires, counts, ranOn: "daemon", ...loaded };
}
