/**
 * Shadow: the rules still shadowing, grouped by rule: how many shadow fires in the last 7 days (counted
 * by the daemon, CountFires), the last fire, and when each goes active.
 */
import type { ConsoleSnapshot } from "../console-data.js";
import { cell, instant, relative } from "../text.js";
import type { ViewSpec } from "./view.js";

/** Shadow fires per rule over the counted window. */
export function shadowCounts(s: ConsoleSnapshot): Map<string, number> {
  const out = new Map<string, number>();
  for (const c of s.counts) if (c.mode === "shadow") out.set(c.rule, (out.get(c.rule) ?? 0) + c.fires);
  return out;
}

export const shadowView: ViewSpec = {
  name: "Shadow",
  header: `${"RULE".padEnd(26)} ${"FIRES 7D".padEnd(8)} ${"LAST FIRE".padEnd(12)} GOES ACTIVE`,
  empty: "no rule is shadowing: every loaded rule acts at its effective level",
  rows: (s, t) => {
    const counts = shadowCounts(s);
    const now = Number(s.nowMs);
    return s.rules
      .filter((r) => r.state === "shadow" || (counts.get(r.name) ?? 0) > 0)
      .map((r) => {
        const until = Number(r.shadowUntilMs);
        const active =
          r.state !== "shadow"
            ? `active now (${r.state})`
            : until === 0
              ? "when its shadow starts (next row)"
              : `${instant(until)} (${relative(until, now)})`;
        const last = r.lastFireAtMs === 0n ? "never" : relative(Number(r.lastFireAtMs), now);
        return {
          id: r.name,
          text: `${cell(t.printable(r.name), 26)} ${cell(String(counts.get(r.name) ?? 0), 8)} ${cell(last, 12)} ${active}`,
          ...(r.lastFireId === "" ? {} : { drill: { kind: "fire" as const, fireId: r.lastFireId } }),
        };
      });
  },
};
