/** Holds: each hold in force, and the condition that will release it; `c` clears one (ClearHold). */
import { formatDuration } from "../../../core/durations.js";
import { layout } from "../columns.js";
import { clockTime, instant } from "../text.js";
import type { ViewSpec } from "./view.js";

const table = (screen: number) =>
  layout(
    [
      { title: "HARNESS", width: 16, upTo: 40 },
      { title: "RULE", width: 22, upTo: 40 },
      { title: "SINCE", width: 8 },
      { title: "FIRE", width: 10, upTo: 16 },
    ],
    "RELEASED WHEN",
    screen,
  );

export const holdsView: ViewSpec = {
  name: "Holds",
  header: (screen) => table(screen).header,
  empty: "no holds in force",
  rows: (s, t, screen) => {
    const l = table(screen);
    return s.holds
      .filter((h) => h.releasedAtMs === 0n && h.hold !== undefined)
      .map((h) => {
        const hold = h.hold as NonNullable<typeof h.hold>;
        const p = t.printable;
        const when = `when false on every tick for ${formatDuration(Number(h.cooldownMs))}${
          h.falseSinceMs === 0n ? " (true now)" : ` (false since ${instant(h.falseSinceMs)})`
        }, or c`;
        return {
          id: `${hold.harness}\u0000${hold.rule}`,
          text: l.line([p(hold.harness), p(hold.rule), clockTime(hold.sinceMs), p(hold.fireId)], when),
          drill: { kind: "fire" as const, fireId: hold.fireId },
          hold: { harness: hold.harness, rule: hold.rule },
        };
      });
  },
};
