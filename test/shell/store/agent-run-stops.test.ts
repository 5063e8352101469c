import { describe, expect, it } from "vitest";
import { AgentRunStops } from "../../../src/shell/store/agent-run-stops.js";
import { DecisionStore } from "../../../src/shell/store/decision-store.js";
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import type { Db } from "../../../src/shell/store/open-store.js";
import { tempStores } from "./temp-stores.js";

const { storeFile, open } = tempStores("harness-run-stops-");

/** A fire whose stop action is pending, as the evaluator commits it. */
function fire(db: Db, id: string): { id: string; rule: string } {
  db.prepare(
    `INSERT INTO rule_fires (fire_id, seq, at, rule, hash, kind, type, declared_level, effective_level, mode, action, message, primitives)
     VALUES (?, 1, 0, 'r', 'h', 'run_event', 'tool', 'stop', 'stop', 'active', 'stop', 'm', '[]')`,
  ).run(id);
  db.prepare(
    "INSERT INTO rule_actions (fire_id, action, state, updated_at) VALUES (?, 'stop', 'pending', 0)",
  ).run(id);
  return { id, rule: "r" };
}
const action = (db: Db, id: string) =>
  db.prepare("SELECT state, detail FROM rule_actions WHERE fire_id = ?").get(id) as {
    state: string;
    detail: string;
  };

describe("stops of hook-fed runs", () => {
  it("wait for the run's next hook call across a restart, then are delivered once", () => {
    const file = storeFile();
    const s = open(file);
    const f = fire(s.db, "f-1-0");
    new AgentRunStops(s.db).ruleStop(f, "impl", ["impl#a"], 10);
    expect(action(s.db, f.id)).toEqual({
      state: "started",
      detail: "waiting for the next hook call of impl#a",
    });
    s.close();
    const again = open(file);
    // A restart marks started actions unknown, but not a stop still waiting for its hook.
    new DecisionStore(again.db).settleInterrupted(20);
    expect(action(again.db, f.id).state).toBe("started");
    const stops = new AgentRunStops(again.db);
    const stop = stops.get("impl#a");
    expect(stop).toMatchObject({ rule: "r", fireId: f.id, by: "rule", deliveredAt: undefined });
    expect(stops.delivered(stop as NonNullable<typeof stop>, 30)).toBe(true);
    expect(stops.delivered(stop as NonNullable<typeof stop>, 40)).toBe(false);
    expect(action(again.db, f.id)).toEqual({
      state: "ok",
      detail: "delivered to impl#a at its next hook call",
    });
  });

  it("is settled undelivered when the run closed before the stop was recorded", () => {
    const s = open(storeFile());
    const f = fire(s.db, "f-1-0");
    s.db.transaction(() =>
      new JournalTable(s.db).append({
        kind: "run_event",
        source: "ledger",
        at: 5,
        event: { type: "closed", harness: "impl", run: "impl#a", outcome: "success" },
      }),
    )();
    const stops = new AgentRunStops(s.db);
    stops.ruleStop(f, "impl", ["impl#a"], 10);
    expect(action(s.db, f.id)).toEqual({
      state: "undelivered",
      detail: "impl#a closed before its next hook call",
    });
    // The run stays stopped; a late call delivers nothing more.
    expect(stops.get("impl#a")?.deliveredAt).toBe(10);
  });
});
