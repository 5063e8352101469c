/**
 * A replay over the store decodes a row's event only where the rule or its windows read more than the
 * row's type: the fires, holds and counts are those of the core's backtest over every row decoded.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { backtest, replayedFire } from "../../../src/core/backtest.js";
import type { EventKind } from "../../../src/core/kinds.js";
import { STARTER_FILES } from "../../../src/core/starter-pack.generated.js";
import { indexedWindows, selectorShapes } from "../../../src/core/window-index.js";
import { type BacktestRequest, backtestRule, replay } from "../../../src/shell/backtest/replay.js";
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import { openStore } from "../../../src/shell/store/open-store.js";
import { fleetMonth } from "../fleet-month.js";

const FROM = Date.parse("2026-09-01T00:00:00Z");
const DAYS = 30;

describe("a replay over the store decodes only the events it reads", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "replay-decode-"));
  const store = openStore(path.join(dir, "harness.db"), "test");
  const journal = new JournalTable(store.db);
  store.db.transaction(() => {
    for (const { kind, admitted_at, ...event } of fleetMonth({ from: FROM, days: DAYS, seed: 7 }))
      journal.append({
        kind: kind as EventKind,
        source: kind === "tick" ? "tick" : "observer",
        at: Date.parse(admitted_at),
        event: event as { type: string },
      });
  })();
  const last = journal.last();
  const all = [...journal.rowsInRange(1, last.seq)];
  afterAll(() => {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Rules whose guards test columns after a primitive, one of them against a zero value (`false`). */
  const GUARDED: [string, string][] = [
    [
      "rules/guarded-late.toml",
      [
        'name = "guarded-late"',
        'description = "d"',
        'on = "run_event"',
        `when = 'exists({"type": "tool", "action": "edit"}, duration("1h")) && !event.is_error'`,
        'level = "notify"',
        'target = "harness"',
        'message = "m"',
      ].join("\n"),
    ],
    [
      "rules/guarded-closed.toml",
      [
        'name = "guarded-closed"',
        'description = "d"',
        'on = "run_event"',
        `when = 'exists({"type": "closed", "outcome": "failed"}, duration("2h")) && event.type == "closed" && event.outcome == "failed"'`,
        'level = "notify"',
        'target = "harness"',
        'message = "m"',
      ].join("\n"),
    ],
  ];

  for (const [file, text] of [...STARTER_FILES, ...GUARDED]) {
    const name = path.basename(file, ".toml");
    it(`${name}: the fires and counts of a backtest over every row decoded`, () => {
      const request: BacktestRequest = {
        file: `rules/${name}.toml`,
        text,
        sinceMs: (DAYS - 8) * 86_400_000,
        nowMs: last.at,
        enforce: ["budget-exhaustion-recurring", "loop-stop-recurs"],
        shadowPeriod: 0,
        shadows: {},
        loaded: [],
      };
      const fires: unknown[] = [];
      let counts: unknown;
      replay(new JournalTable(store.db), request, {
        start: () => {},
        fires: (fs) => fires.push(...fs),
        summary: (c) => {
          counts = c;
        },
      });
      const active = backtestRule(request);
      const stretchAfter = request.nowMs - request.sinceMs;
      const windows = indexedWindows(all, selectorShapes([active.rule]));
      const expected = backtest(
        active,
        all.filter((r) => r.at > stretchAfter),
        windows,
        { shadowPeriod: 0, shadows: {} },
      );
      expect(fires).toEqual(expected.fires.map(replayedFire));
      expect(counts).toEqual(expected.counts);
      expect(expected.counts.fires).toBeGreaterThan(0);
    });
  }

  it("reads a row's type from its column and leaves the event of a row nothing reads undecoded", () => {
    const rows = [
      ...journal.rowsInRangeTyped(
        1,
        last.seq,
        (kind, type) => kind === "graph_event" && type === "edge_added",
      ),
    ];
    expect(rows.map((r) => [r.seq, r.kind, r.at, r.event.type])).toEqual(
      all.map((r) => [r.seq, r.kind, r.at, r.event.type]),
    );
    rows.forEach((r, i) => {
      const full = all[i];
      expect(r.event).toEqual(
        r.kind === "graph_event" && r.event.type === "edge_added" ? full?.event : { type: full?.event.type },
      );
    });
  });

  it("reads no event text of a kind and type the decodable types rule out, and asks nothing of such a row", () => {
    const asked = new Set<string>();
    const rows = [
      ...journal.rowsInRangeTyped(
        1,
        last.seq,
        (kind, type, values) => {
          asked.add(`${kind}/${type}`);
          return values[0] === "verify";
        },
        ["action"],
        new Map([["run_event", new Set(["tool"])]]),
      ),
    ];
    expect([...asked]).toEqual(["run_event/tool"]);
    rows.forEach((r, i) => {
      const full = all[i]?.event as Record<string, unknown>;
      const decoded = r.kind === "run_event" && r.event.type === "tool" && full.action === "verify";
      const known =
        typeof full.action === "string" ? { type: full.type, action: full.action } : { type: full.type };
      expect(r.event).toEqual(decoded ? full : known);
    });
    expect(rows.some((r) => r.event.action === "verify" && r.event.is_error !== undefined)).toBe(true);
  });
});
