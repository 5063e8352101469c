/**
 * Shadow: the rules still shadowing, grouped by rule: how many shadow fires in the last 7 days (counted
 * by the daemon, CountFires), the last fire, and when each goes active.
 */

import { layout } from "../columns.js";
import type { ConsoleSnapshot } from "../console-data.js";
import { instant, relative } from "../text.js";
import type { ViewSpec } from "./view.js";

const table = (screen: number) =>
  layout(
    [
      { title: "RULE", width: 26, upTo: 40 },
      { title: "FIRES 7D", width: 8 },
      { title: "LAST FIRE", width: 12 },
    ],
    "GOES ACTIVE",
    screen,
  );

/** Shadow fires per rule over the counted window. */
export function shadowCounts(s: ConsoleSnapshot): Map<string, number> {
  const out = new Map<string, number>();
  for (const c of s.counts) if (c.mode === "shadow") out.set(c.rule, (out.get(c.rule) ?? 0) + c.fires);
  return out;
}

export const shadowView: ViewSpec = {
  name: "Shadow",
  header: (screen) => table(screen).header,
  empty: "no rule is shadowing: every loaded rule acts at its effective level",
  rows: (s, t, screen) => {
    const l = table(screen);
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
          text: l.line([t.printable(r.name), String(counts.get(r.name) ?? 0), last], active),
          ...(r.lastFireId === "" ? {} : { drill: { kind: "fire" as const, fireId: r.lastFireId } }),
        };
      });
  },
};
