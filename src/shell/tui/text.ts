/**
 * How the TUI turns what the daemon sent into text: the renderers it shares with the CLI (handed in by
 * `harness tui`, so that an explanation reads exactly as `harness rules explain` prints it), times,
 * durations and sparklines. Every string a producer or agent supplied goes through `printable` before
 * it reaches a view: a cell is escaped once, where a row is built.
 */
import { formatDuration } from "../../core/durations.js";
import { rfc3339Seconds } from "../../core/instants.js";
import type { ExplainFireResponse, FireInfo, HoldRecord, RuleInfo } from "../rpc/gen/harness/v1/rules_pb.js";

export interface TuiText {
  /** Escapes what could drive or deceive a terminal (`cli/render/printable.ts`). */
  readonly printable: (s: string) => string;
  /** REQ-18's explanation as `harness rules explain` prints it, unescaped. */
  readonly explanation: (x: ExplainFireResponse) => string[];
  /** A rule's mode as `rules list` says it: active, shadow until <time>, disabled: <reason>. */
  readonly ruleMode: (r: RuleInfo) => string;
  /** A hold's state as `rules holds` says it. */
  readonly holdState: (h: HoldRecord) => string;
}

/** `HH:MM:SS` (UTC), for the feed's narrow time column. */
export const clockTime = (ms: bigint | number): string =>
  Number(ms) === 0 ? "--:--:--" : rfc3339Seconds(Number(ms)).slice(11, 19);

/** An RFC 3339 time to the second, or `-` for the protocol's "not set". */
export const instant = (ms: bigint | number): string => (Number(ms) === 0 ? "-" : rfc3339Seconds(Number(ms)));

/** `in 6d23h`, `3m ago`: a time relative to now, to the minute. */
export function relative(ms: number, nowMs: number): string {
  const d = Math.round((ms - nowMs) / 60_000) * 60_000;
  if (d === 0) return "now";
  return d > 0 ? `in ${formatDuration(d)}` : `${formatDuration(-d)} ago`;
}

const BARS = " ▁▂▃▄▅▆▇█";

/** One character per value, scaled to the largest; a zero is a blank, any fire at least the lowest bar. */
export function sparkline(values: readonly number[]): string {
  const max = Math.max(0, ...values);
  return values
    .map((v) => (v <= 0 || max === 0 ? BARS[0] : BARS[Math.max(1, Math.round((v / max) * 8))]))
    .join("");
}

/** A column: cut to `width` with `…`, or padded to it. */
export function cell(s: string, width: number): string {
  if (s.length > width) return `${s.slice(0, Math.max(0, width - 1))}…`;
  return s.padEnd(width);
}

/** What became of a fire's actions: `notify ok`, `stop undelivered (no [supervisor] stop…)`. */
export function outcome(f: FireInfo): string {
  if (f.actions.length === 0) return f.action;
  return f.actions.map((a) => `${a.action} ${a.state}${a.detail === "" ? "" : ` (${a.detail})`}`).join(", ");
}

/** A fire's target as the feed shows it. */
export const targetOf = (f: FireInfo): string =>
  f.targetKind === ""
    ? "(no target)"
    : f.targetKind === "harness"
      ? f.targetKey
      : `${f.targetKind} ${f.targetKey}`;
