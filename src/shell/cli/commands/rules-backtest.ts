/**
 * `harness rules backtest <file> [--since 30d] [--json] [--store PATH]` (SPEC-0029 REQ-8): asks the
 * daemon's `RuleService.Backtest` to replay the journal through one rule file, and prints each fire and
 * the counts. With no daemon answering it runs the same replay itself over a read-only connection to the
 * store, with the rule set the daemon would load from the same config. Either way the output is the
 * same, and a backtest that finds nothing says so: "0 fires in 30d over <n> rows".
 */

import { formatDuration, parseDuration } from "../../../core/durations.js";
import { rfc3339Seconds } from "../../../core/instants.js";
import { MAX_RULE_FILE_BYTES, ruleFileText } from "../../../core/rule-file-bytes.js";
import { DEFAULT_BACKTEST_SINCE } from "../../backtest/backtest-request.js";
import type { BacktestReport } from "../../backtest/replay.js";
import type { StoreReplayRefusal } from "../../backtest/replay-on-store.js";
import { ruleClient, unreachable } from "../../rpc/client.js";
import { readBounded } from "../../support/bounded-read.js";
import { backtestOnDaemon } from "../backtest-on-daemon.js";
import { failed } from "../client.js";
import { type Common, EXIT, type Io, table } from "../io.js";
import { clientTarget } from "../target.js";

export interface RulesBacktestOptions extends Common {
  readonly since?: string | undefined;
  readonly store?: string | undefined;
}

const EXIT_FOR_REFUSAL: Readonly<Record<StoreReplayRefusal, number>> = {
  config: EXIT.failed,
  since: EXIT.usage,
  store: EXIT.unreachable,
  rule: EXIT.failed,
};

export async function runBacktest(file: string, options: RulesBacktestOptions, io: Io): Promise<number> {
  const sinceMs = options.since === undefined ? DEFAULT_BACKTEST_SINCE : parseDuration(options.since);
  if (sinceMs === undefined || sinceMs <= 0) {
    io.err(`harness rules backtest: --since ${options.since}: not a duration (e.g. 30d, 12h)`);
    return EXIT.usage;
  }
  // Read as every rule file is (the daemon's clones, lint): at most one byte past the limit, UTF-8.
  const bytes = readBounded(file, MAX_RULE_FILE_BYTES);
  if ("error" in bytes) {
    io.err(`harness rules backtest: ${file}: ${bytes.error}`);
    return EXIT.usage;
  }
  const read = ruleFileText(file, bytes.bytes);
  if (!read.ok) {
    // A problem with the whole file stands at 1:1, as lint and the daemon's refusals place it.
    io.err(`harness rules backtest: ${file}:1:1: ${read.problem.reason}: ${read.problem.message}`);
    return EXIT.failed;
  }
  const { text } = read;
  const target = await clientTarget({ socket: options.socket, config: options.config, env: io.env });
  let report: BacktestReport;
  try {
    report = await backtestOnDaemon(ruleClient({ socketPath: target.socketPath }), file, text, sinceMs);
  } catch (e) {
    if (!unreachable(e)) return failed("rules backtest", target.socketPath, e, io);
    // Loaded only here: the store, the core and CEL are not what a call to the daemon needs.
    const { replayOnStore } = await import("../../backtest/replay-on-store.js");
    const local = await replayOnStore(
      { file, text, sinceMs, config: options.config, store: options.store, env: io.env },
      (line) => io.err(`harness rules backtest: ${line}`),
    );
    if (!local.ok) {
      io.err(`harness rules backtest: ${local.message}`);
      return EXIT_FOR_REFUSAL[local.refusal];
    }
    report = local.report;
  }
  for (const line of options.json === true ? [JSON.stringify(reportJson(report))] : reportLines(report))
    io.out(line);
  return EXIT.ok;
}

/** The JSON form scripts and reviewers rely on (REQ-18): one object, fires in seq order. */
export function reportJson(r: BacktestReport) {
  return {
    rule: r.start.rule,
    hash: r.start.hash,
    since: formatDuration(r.sinceMs),
    from_seq: r.start.fromSeq,
    to_seq: r.start.toSeq,
    rows: r.counts.rows,
    evaluations: r.counts.evaluations,
    eval_errors: r.counts.evalErrors,
    store_errors: r.counts.storeErrors,
    suppressed: r.counts.suppressed,
    cost_exceeded: r.counts.costExceeded,
    ran_on: r.ranOn,
    fires: r.fires.map((f) => ({
      seq: f.seq,
      at: rfc3339Seconds(f.at),
      kind: f.kind,
      type: f.type,
      target: f.target === undefined ? null : { kind: f.target.kind, key: f.target.key },
      declared_level: f.declaredLevel,
      level: f.level,
      mode: f.mode,
      ...(f.hold === undefined
        ? {}
        : {
            hold_span: {
              from: rfc3339Seconds(f.at),
              until: f.hold.until === undefined ? null : rfc3339Seconds(f.hold.until.at),
              until_seq: f.hold.until?.seq ?? null,
            },
          }),
    })),
  };
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The readable form: a heading, one line per fire, and the counts, zero fires stated plainly. */
export function reportLines(r: BacktestReport): string[] {
  const since = formatDuration(r.sinceMs);
  const lines = [
    `backtest ${r.start.rule} (${r.start.hash.slice(0, 12)}) over the last ${since}: ${
      r.start.fromSeq === 0 ? "no rows" : `rows ${r.start.fromSeq}..${r.start.toSeq}`
    }${r.ranOn === "store" ? ", read from the store" : ""}`,
  ];
  if (r.fires.length > 0)
    lines.push(
      "",
      ...table(
        ["AT", "SEQ", "KIND/TYPE", "TARGET", "LEVEL", "MODE", "HOLD"],
        r.fires.map((f) => [
          rfc3339Seconds(f.at),
          String(f.seq),
          `${f.kind}/${f.type}`,
          f.target === undefined ? "(none: no_target)" : `${f.target.kind} ${f.target.key}`,
          f.level === f.declaredLevel ? f.level : `${f.level} (declared ${f.declaredLevel})`,
          f.mode,
          f.hold === undefined
            ? "-"
            : f.hold.until === undefined
              ? "held to the end"
              : `until ${rfc3339Seconds(f.hold.until.at)} (seq ${f.hold.until.seq})`,
        ]),
      ),
      "",
    );
  const c = r.counts;
  const extra = [
    plural(c.evalErrors, "eval_error", "eval_errors"),
    plural(c.storeErrors, "store_error", "store_errors"),
    `${c.suppressed} suppressed by cooldown`,
    ...(c.costExceeded > 0 ? [`${c.costExceeded} over the cost limit`] : []),
  ];
  lines.push(`${plural(c.fires, "fire", "fires")} in ${since} over ${c.rows} rows (${extra.join(", ")})`);
  return lines;
}
