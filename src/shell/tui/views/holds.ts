/** Holds: each hold in force, and the condition that will release it; `c` clears one (ClearHold). */
import { formatDuration } from "../../../core/durations.js";
import { cell, clockTime, instant } from "../text.js";
import type { ViewSpec } from "./view.js";

export const holdsView: ViewSpec = {
  name: "Holds",
  header: `${"HARNESS".padEnd(16)} ${"RULE".padEnd(22)} ${"SINCE".padEnd(8)} ${"FIRE".padEnd(10)} RELEASED WHEN`,
  empty: "no holds in force",
  rows: (s, t) =>
    s.holds
      .filter((h) => h.releasedAtMs === 0n && h.hold !== undefined)
      .map((h) => {
        const hold = h.hold as NonNullable<typeof h.hold>;
        const p = t.printable;
        const when = `when false on every tick for ${formatDuration(Number(h.cooldownMs))}${
          h.falseSinceMs === 0n ? " (true now)" : ` (false since ${instant(h.falseSinceMs)})`
        }, or c`;
        return {
          id: `${hold.harness}\u0000${hold.rule}`,
          text: `${cell(p(hold.harness), 16)} ${cell(p(hold.rule), 22)} ${clockTime(hold.sinceMs)} ${cell(p(hold.fireId), 10)} ${when}`,
          drill: { kind: "fire" as const, fireId: hold.fireId },
          hold: { harness: hold.harness, rule: hold.rule },
        };
      }),
};
