/**
 * `harness rules backtest <file> [--since 30d] [--diff] [--json] [--store PATH]` (SPEC-0029 REQ-8): asks the
 * daemon's `RuleService.Backtest` to replay the journal through one rule file, and prints each fire and
 * the counts. With no daemon answering it runs the same replay itself over a read-only connection to the
 * store, with the rule set the daemon would load from the same config. Either way the output is the
 * same, and a backtest that finds nothing says so: "0 fires in 30d over <n> rows".
 *
 * `--diff` (beyond the SPEC): when a loaded rule has the file's name, the replay runs both versions in
 * one pass over the same rows, and what is printed is the fires the file adds and removes against the
 * loaded version (`../../backtest/fire-diff.ts`), their messages escaped for the terminal.
 */

import type { BacktestCounts, ReplayedFire } from "../../../core/backtest.js";
import { formatDuration, parseDuration } from "../../../core/durations.js";
import { rfc3339Seconds } from "../../../core/instants.js";
import { MAX_RULE_FILE_BYTES, ruleFileText } from "../../../core/rule-file-bytes.js";
import { DEFAULT_BACKTEST_SINCE } from "../../backtest/backtest-request.js";
import { diffFires } from "../../backtest/fire-diff.js";
import type { BacktestReport, LoadedReplay } from "../../backtest/replay.js";
import type { StoreReplayRefusal } from "../../backtest/replay-on-store.js";
import { ruleClient, unreachable } from "../../rpc/client.js";
import { readBounded } from "../../support/bounded-read.js";
import { backtestOnDaemon } from "../backtest-on-daemon.js";
import { failed } from "../client.js";
import { type Common, EXIT, type Io, table } from "../io.js";
import { printable } from "../render/printable.js";
import { clientTarget, readToken } from "../target.js";

export interface RulesBacktestOptions extends Common {
  readonly since?: string | undefined;
  readonly store?: string | undefined;
  readonly diff?: boolean | undefined;
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
  const target = await clientTarget({ ...options, env: io.env });
  const token = await readToken(target, "rules backtest");
  if ("error" in token) {
    io.err(token.error);
    return EXIT.error;
  }
  let report: BacktestReport;
  try {
    report = await backtestOnDaemon(
      ruleClient(target.rpc, token.token),
      file,
      text,
      sinceMs,
      options.diff === true,
    );
  } catch (e) {
    // The store to replay is the local daemon's: a remote daemon that does not answer has none here.
    if (!unreachable(e) || target.remote) return failed("rules backtest", target.where, e, io);
    // Loaded only here: the store, the core and CEL are not what a call to the daemon needs.
    const { replayOnStore } = await import("../../backtest/replay-on-store.js");
    const local = await replayOnStore(
      {
        file,
        text,
        sinceMs,
        diff: options.diff === true,
        config: options.config,
        store: options.store,
        env: io.env,
      },
      (line) => io.err(`harness rules backtest: ${line}`),
    );
    if (!local.ok) {
      io.err(`harness rules backtest: ${local.message}`);
      return EXIT_FOR_REFUSAL[local.refusal];
    }
    report = local.report;
  }
  if (options.diff === true) {
    if (options.json === true) io.out(JSON.stringify(diffJson(report)));
    else for (const line of diffLines(report)) io.out(printable(line));
    return EXIT.ok;
  }
  for (const line of options.json === true ? [JSON.stringify(reportJson(report))] : reportLines(report))
    io.out(line);
  return EXIT.ok;
}

/** Where a loaded rule came from, as a reader says it. */
const sourceWords = (l: LoadedReplay): string =>
  l.source.kind === "starter" ? "the embedded starter pack" : `the policy repo ${l.source.repo}`;

/** `--json --diff`: the plain report, and what the file adds and removes (`diff.loaded` null: no rule has the name). */
export function diffJson(r: BacktestReport) {
  const l = r.loaded;
  if (l === undefined) return { ...reportJson(r), diff: { loaded: null } };
  const d = diffFires(l.fires, r.fires);
  const withMessage = (f: ReplayedFire) => ({ ...fireJson(f), message: f.message });
  return {
    ...reportJson(r),
    diff: {
      loaded: {
        hash: l.hash,
        source: l.source.kind === "starter" ? "starter" : `policy:${l.source.repo}`,
        fires: l.counts.fires,
        eval_errors: l.counts.evalErrors,
        store_errors: l.counts.storeErrors,
        suppressed: l.counts.suppressed,
        cost_exceeded: l.counts.costExceeded,
      },
      added: d.added.map(withMessage),
      removed: d.removed.map(withMessage),
    },
  };
}

/**
 * `--diff`'s readable form: the heading, then what the file adds and removes against the loaded version
 * (by row and target), each with its message, and both versions' counts. With no loaded rule of the
 * name, that is said first and the plain backtest follows.
 */
export function diffLines(r: BacktestReport): string[] {
  const l = r.loaded;
  if (l === undefined)
    return [
      `no loaded rule is named ${r.start.rule}: nothing to diff against; the plain backtest follows`,
      ...reportLines(r),
    ];
  const [heading, ...rest] = reportLines(r);
  const d = diffFires(l.fires, r.fires);
  const same = l.hash === r.start.hash ? "; the same content hash" : "";
  const lines = [
    heading as string,
    `against the loaded ${r.start.rule} (${l.hash.slice(0, 12)}, from ${sourceWords(l)}${same}) over the same rows: ${plural(d.added.length, "fire", "fires")} added, ${d.removed.length} removed`,
  ];
  const section = (title: string, fires: readonly ReplayedFire[]) => {
    if (fires.length === 0) return;
    lines.push(
      "",
      `${title} (${fires.length}):`,
      ...table(
        ["SEQ", "AT", "KIND/TYPE", "TARGET", "LEVEL", "MESSAGE"],
        fires.map((f) => [
          String(f.seq),
          rfc3339Seconds(f.at),
          `${f.kind}/${f.type}`,
          // Escaped per cell, so the columns line up as shown.
          f.target === undefined ? "(none: no_target)" : printable(`${f.target.kind} ${f.target.key}`),
          f.level,
          printable(f.message),
        ]),
      ),
    );
  };
  section("added: the file fires, the loaded version does not", d.added);
  section("removed: the loaded version fires, the file does not", d.removed);
  lines.push("", `file: ${rest[rest.length - 1] as string}`, `loaded: ${countsLine(l.counts, r.sinceMs)}`);
  return lines;
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
    fires: r.fires.map(fireJson),
  };
}

/** One fire in the JSON form, as `fires` lists them. */
function fireJson(f: ReplayedFire) {
  return {
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
  lines.push(countsLine(r.counts, r.sinceMs));
  return lines;
}

/** The counts, zero fires stated plainly: "0 fires in 30d over <n> rows (…)". */
function countsLine(c: BacktestCounts, sinceMs: number): string {
  const extra = [
    plural(c.evalErrors, "eval_error", "eval_errors"),
    plural(c.storeErrors, "store_error", "store_errors"),
    `${c.suppressed} suppressed by cooldown`,
    ...(c.costExceeded > 0 ? [`${c.costExceeded} over the cost limit`] : []),
  ];
  return `${plural(c.fires, "fire", "fires")} in ${formatDuration(sinceMs)} over ${c.rows} rows (${extra.join(", ")})`;
}
