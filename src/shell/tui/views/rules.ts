/**
 * Rules: `harness rules list` (source, short hash, mode, declared and effective level, last fire), with
 * each rule's fires over the last 24 hours as a sparkline, one character an hour (CountFires).
 */
import { HOUR } from "../../../core/durations.js";
import type { RuleInfo } from "../../rpc/gen/harness/v1/rules_pb.js";
import { layout } from "../columns.js";
import type { ConsoleSnapshot } from "../console-data.js";
import { instant, relative, sparkline, type TuiText } from "../text.js";
import type { ViewSpec } from "./view.js";

const table = (screen: number) =>
  layout(
    [
      { title: "NAME", width: 26, upTo: 40 },
      { title: "FIRES 24H", width: 26 },
      { title: "MODE", width: 12 },
      { title: "LEVEL", width: 16 },
    ],
    "SOURCE HASH LAST",
    screen,
  );

/** Fires per hour of the last 24, oldest first, of each rule (both modes). */
export function hourly(s: ConsoleSnapshot): Map<string, number[]> {
  const now = Number(s.nowMs);
  const first = Math.floor(now / HOUR) * HOUR - 23 * HOUR;
  const out = new Map<string, number[]>();
  for (const c of s.counts) {
    const i = (Number(c.hourMs) - first) / HOUR;
    if (i < 0 || i > 23) continue;
    const series = out.get(c.rule) ?? Array.from({ length: 24 }, () => 0);
    series[i] = (series[i] ?? 0) + c.fires;
    out.set(c.rule, series);
  }
  return out;
}

/** The mode in a few characters: `active`, `shadow 6d23h`, `disabled`. */
function shortMode(r: RuleInfo, now: number): string {
  if (r.state === "shadow")
    return r.shadowUntilMs === 0n
      ? "shadow"
      : `shadow ${relative(Number(r.shadowUntilMs), now).replace(/^in /, "")}`;
  return r.state;
}

function detail(r: RuleInfo, t: TuiText, series: readonly number[]): string[] {
  const e = t.printable;
  return [
    `rule ${e(r.name)} (${e(r.source)})`,
    `  file      ${e(r.file)}`,
    `  hash      ${e(r.hash)}`,
    `  mode      ${e(t.ruleMode(r))}`,
    `  level     declared ${e(r.declaredLevel)}, effective ${e(r.effectiveLevel)}${r.enforced ? " (enforced)" : ""}`,
    `  on        ${e(r.on)}, target ${e(r.target)}`,
    `  fires     ${r.fires24h} in 24h, ${r.fires7d} in 7d, ${r.suppressed} suppressed`,
    `  24h       |${sparkline(series)}| (one column an hour, oldest left)`,
    `  last fire ${r.lastFireId === "" ? "never" : `${e(r.lastFireId)} at ${instant(r.lastFireAtMs)}`}`,
  ];
}

export const rulesView: ViewSpec = {
  name: "Rules",
  header: (screen) => table(screen).header,
  empty: "no rules loaded",
  rows: (s, t, screen) => {
    const l = table(screen);
    const series = hourly(s);
    const now = Number(s.nowMs);
    return s.rules.map((r) => {
      const spark = series.get(r.name) ?? Array.from({ length: 24 }, () => 0);
      const levels =
        r.state === "disabled" && r.declaredLevel === ""
          ? r.disabledReason
          : `${r.declaredLevel}/${r.effectiveLevel}`;
      const last = r.lastFireId === "" ? "-" : `${relative(Number(r.lastFireAtMs), now)} (${r.lastFireId})`;
      return {
        id: r.name,
        text: l.line(
          [t.printable(r.name), `|${sparkline(spark)}|`, shortMode(r, now), t.printable(levels)],
          `${t.printable(r.source)} ${r.hash.slice(0, 12) || "-"} ${t.printable(last)}`,
        ),
        drill: { kind: "lines" as const, title: `rule ${t.printable(r.name)}`, lines: detail(r, t, spark) },
      };
    });
  },
};
