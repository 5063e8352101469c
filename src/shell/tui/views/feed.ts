/**
 * Feed: fires as they commit, newest on top, with the holds placed and released, the guards' decisions
 * (the loop guard's stops, the stale run closer's closes) and the stream's gaps.
 */

import type { JournalRowIds } from "../../rpc/gen/harness/v1/journal_query_pb.js";
import { type Layout, layout } from "../columns.js";
import type { FeedEntry } from "../feed-ring.js";
import { clockTime, outcome, type TuiText, targetOf } from "../text.js";
import type { Row, ViewSpec } from "./view.js";

const table = (screen: number) =>
  layout(
    [
      { title: "TIME", width: 8 },
      { title: "RULE", width: 22, upTo: 40 },
      { title: "MODE", width: 6 },
      { title: "LEVEL", width: 8 },
      { title: "TARGET", width: 12, upTo: 48 },
    ],
    "ACTION: MESSAGE",
    screen,
  );

/** A text field of a journal row's indexed fields; "?" when it has none. */
function field(row: JournalRowIds, name: string): string {
  const v = row.fields.find((f) => f.field === name)?.value;
  return v?.case === "text" ? v.value : "?";
}

function row(e: FeedEntry, t: TuiText, l: Layout): Row {
  const p = t.printable;
  switch (e.kind) {
    case "fire": {
      const f = e.fire;
      return {
        id: f.fireId,
        text: l.line(
          [clockTime(f.atMs), p(f.rule), f.mode, f.effectiveLevel, p(targetOf(f))],
          `${p(outcome(f))}: ${p(f.message)}`,
        ),
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
    case "loop_stop": {
      const id = `journal:${e.row.seq}`;
      return {
        id,
        text: `${clockTime(e.row.atMs)} LOOP STOP run ${p(field(e.row, "run"))} of harness ${p(field(e.row, "harness"))}: the same ${p(field(e.row, "tool"))} call over and over (${id})`,
        drill: { kind: "fire", fireId: id },
      };
    }
    case "stale_close": {
      const id = `journal:${e.row.seq}`;
      return {
        id,
        text: `${clockTime(e.row.atMs)} STALE CLOSE ${p(e.sentence)} (${id})`,
        drill: { kind: "fire", fireId: id },
      };
    }
    case "notice":
      return { id: `notice:${e.key[1]}`, text: `${clockTime(e.atMs)} ${p(e.text)}` };
  }
}

export const feedView: ViewSpec = {
  name: "Feed",
  header: (screen) => table(screen).header,
  empty: "no fires yet: they appear here as the daemon commits them",
  rows: (s, t, screen) => {
    const l = table(screen);
    return s.feed.map((e) => row(e, t, l));
  },
  lazy: {
    size: (s) => s.feed.length,
    slice: (s, t, from, to, screen) => {
      const l = table(screen);
      return s.feed.slice(from, to).map((e) => row(e, t, l));
    },
  },
};
