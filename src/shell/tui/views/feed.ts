/** Feed: fires as they commit, newest on top, with the holds placed and released and the stream's gaps. */
import type { FeedEntry } from "../feed-ring.js";
import { cell, clockTime, outcome, type TuiText, targetOf } from "../text.js";
import type { Row, ViewSpec } from "./view.js";

function row(e: FeedEntry, t: TuiText): Row {
  const p = t.printable;
  switch (e.kind) {
    case "fire": {
      const f = e.fire;
      return {
        id: f.fireId,
        text: `${clockTime(f.atMs)} ${cell(p(f.rule), 22)} ${cell(f.mode, 6)} ${cell(f.effectiveLevel, 8)} ${cell(p(targetOf(f)), 12)} ${p(outcome(f))}: ${p(f.message)}`,
        drill: { kind: "fire", fireId: f.fireId },
      };
    }
    case "hold":
    case "released": {
      const h = e.hold.hold;
      const verb = e.kind === "hold" ? "HELD" : `RELEASED (${p(e.hold.releaseCause)})`;
      const at = e.kind === "hold" ? (h?.sinceMs ?? 0n) : e.hold.releasedAtMs;
      return {
        id: `${e.kind}:${h?.fireId ?? ""}:${e.key[1]}`,
        text: `${clockTime(at)} ${verb} harness ${p(h?.harness ?? "?")} by rule ${p(h?.rule ?? "?")} (fire ${p(h?.fireId ?? "?")})`,
        ...(h === undefined ? {} : { drill: { kind: "fire" as const, fireId: h.fireId } }),
      };
    }
    case "gap":
      return {
        id: `gap:${e.key[1]}`,
        text: `${clockTime(e.atMs)} GAP: the stream missed ${e.missed} events; the feed read them back from the store`,
      };
    case "notice":
      return { id: `notice:${e.key[1]}`, text: `${clockTime(e.atMs)} ${p(e.text)}` };
  }
}

export const feedView: ViewSpec = {
  name: "Feed",
  header: `${"TIME".padEnd(8)} ${"RULE".padEnd(22)} ${"MODE".padEnd(6)} ${"LEVEL".padEnd(8)} ${"TARGET".padEnd(12)} ACTION: MESSAGE`,
  empty: "no fires yet: they appear here as the daemon commits them",
  rows: (s, t) => s.feed.map((e) => row(e, t)),
  lazy: {
    size: (s) => s.feed.length,
    slice: (s, t, from, to) => s.feed.slice(from, to).map((e) => row(e, t)),
  },
};
