/**
 * RuleService.Backtest (SPEC-0029 REQ-8, REQ-17): checks the request and the rule file on the daemon's
 * thread, so a bad file gets its load reason as INVALID_ARGUMENT before anything streams, then relays a
 * worker's replay: a start, the fires in batches in seq order, a summary. The rule set in force at the
 * call gives the fires their levels and modes; the replay itself never touches the daemon's state.
 * With `diff`, the loaded rule of the file's name is replayed beside it in the same pass, and its fires
 * and counts go out as `loaded_fires` and the summary's `loaded`.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { BacktestCounts } from "../../core/backtest.js";
import type { RuleSource } from "../../core/rule-set.js";
import { backtestRequest, DEFAULT_BACKTEST_SINCE, sinceRefusal } from "../backtest/backtest-request.js";
import type { BacktestRunner } from "../backtest/backtest-runner.js";
import { backtestRule } from "../backtest/replay.js";
import type { EvaluatorView } from "../daemon/evaluator-view.js";
import { InvalidArgumentError, RuleRefusedError, SinceTooLongError } from "../errors.js";
import { fireOf } from "./fire-wire.js";
import type { BacktestRequest, BacktestResponseSchema, RuleService } from "./gen/harness/v1/rules_pb.js";
import { DEFAULT_READ_MAX_BYTES } from "./limits.js";
import { toConnectError } from "./status.js";

export interface BacktestDeps {
  readonly runner: BacktestRunner;
  readonly evaluator: EvaluatorView;
  /** The daemon's clock, ms: the stretch ends at the call. */
  readonly clock: () => number;
  /** `[memory.rules] journal_retention`, ms, as in force. */
  readonly retentionMs: () => number;
}

type Part = MessageInitShape<typeof BacktestResponseSchema>;

export function backtestMethod(deps: BacktestDeps): ServiceImpl<typeof RuleService>["backtest"] {
  return async function* backtest(req: BacktestRequest, ctx: HandlerContext): AsyncGenerator<Part> {
    const context = `Backtest ${req.file}`;
    try {
      const request = checked(req, deps);
      for await (const m of deps.runner.run(request, ctx.signal)) {
        switch (m.part) {
          case "start":
            yield {
              part: {
                case: "start",
                value: {
                  rule: m.start.rule,
                  hash: m.start.hash,
                  sinceMs: BigInt(request.sinceMs),
                  fromSeq: BigInt(m.start.fromSeq),
                  toSeq: BigInt(m.start.toSeq),
                  nowMs: BigInt(request.nowMs),
                  ...(m.start.loaded === undefined
                    ? {}
                    : { loadedHash: m.start.loaded.hash, loadedSource: sourceText(m.start.loaded.source) }),
                },
              },
            };
            break;
          case "fires":
            yield {
              part: {
                case: "fires",
                value:
                  m.loaded === true ? { loadedFires: m.fires.map(fireOf) } : { fires: m.fires.map(fireOf) },
              },
            };
            break;
          case "summary":
            yield {
              part: {
                case: "summary",
                value: {
                  ...summaryOf(m.counts),
                  ...(m.loaded === undefined ? {} : { loaded: summaryOf(m.loaded) }),
                },
              },
            };
            break;
          case "rule_error":
            throw new RuleRefusedError(m.problem);
          case "error":
            throw new Error(`the replay failed: ${m.message}`);
        }
      }
    } catch (e) {
      throw toConnectError(e, context);
    }
  };
}

const summaryOf = (c: BacktestCounts) => ({
  rows: BigInt(c.rows),
  evalErrors: BigInt(c.evalErrors),
  storeErrors: BigInt(c.storeErrors),
  fires: BigInt(c.fires),
  suppressed: BigInt(c.suppressed),
  costExceeded: BigInt(c.costExceeded),
  evaluations: BigInt(c.evaluations),
});

/** The loaded version's source on the wire: `starter`, or `policy:<repo>`. */
const sourceText = (s: RuleSource): string => (s.kind === "starter" ? "starter" : `policy:${s.repo}`);

/** The replay the call asks for, or the sentinel that refuses it. */
function checked(req: BacktestRequest, deps: BacktestDeps) {
  if (req.file === "" || req.text === "")
    throw new InvalidArgumentError(req.file, "Backtest needs the rule file's name and its text");
  if (Buffer.byteLength(req.text, "utf8") > DEFAULT_READ_MAX_BYTES)
    throw new InvalidArgumentError(req.file, "the rule file is larger than a request may carry");
  const sinceMs = req.sinceMs === 0n ? DEFAULT_BACKTEST_SINCE : Number(req.sinceMs);
  const refusal = sinceRefusal(sinceMs, deps.retentionMs());
  if (refusal !== undefined)
    throw req.sinceMs < 0n
      ? new InvalidArgumentError(req.file, refusal)
      : new SinceTooLongError(req.file, refusal);
  const request = backtestRequest({
    file: req.file,
    text: req.text,
    sinceMs,
    nowMs: deps.clock(),
    ruleSet: deps.evaluator.rules,
    shadows: deps.evaluator.state.shadows,
    diff: req.diff,
  });
  // Compiled here too, so a file that would not load is refused before a worker starts.
  backtestRule(request);
  return request;
}
