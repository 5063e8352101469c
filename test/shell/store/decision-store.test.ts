import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DecisionStore } from "../../../src/shell/store/decision-store.js";
import { type OpenedStore, openStore } from "../../../src/shell/store/open-store.js";

const opened: OpenedStore[] = [];
afterEach(() => {
  for (const s of opened.splice(0)) {
    const file = s.db.name;
    s.close();
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
});

/** A store with one fire whose notify and stop actions are in the given states. */
function storeWith(states: { readonly notify: string; readonly stop: string }): OpenedStore {
  const s = openStore(
    path.join(fs.mkdtempSync(path.join(os.tmpdir(), "harness-decisions-")), "h.db"),
    "test",
  );
  opened.push(s);
  s.db
    .prepare(
      `INSERT INTO rule_fires (fire_id, seq, at, rule, hash, kind, type, declared_level, effective_level, mode,
         action, message, primitives)
       VALUES ('f1', 1, 0, 'r', 'h', 'run_event', 'tool', 'stop', 'stop', 'active', 'stop', 'm', '[]')`,
    )
    .run();
  const action = s.db.prepare(
    "INSERT INTO rule_actions (fire_id, action, state, updated_at) VALUES ('f1', ?, ?, 0)",
  );
  action.run("notify", states.notify);
  action.run("stop", states.stop);
  return s;
}

const stateOf = (s: OpenedStore, action: string) =>
  s.db.prepare("SELECT state, detail, updated_at FROM rule_actions WHERE action = ?").get(action) as {
    state: string;
    detail: string;
    updated_at: number;
  };

describe("DecisionStore at a start after a crash", () => {
  it("records a started action unknown: it may have run", () => {
    const s = storeWith({ notify: "started", stop: "started" });
    expect(new DecisionStore(s.db).settleInterrupted(5)).toEqual({ undelivered: 0, unknown: 2 });
    for (const a of ["notify", "stop"])
      expect(stateOf(s, a)).toEqual({
        state: "unknown",
        detail: "the daemon stopped after the action started: it may have run",
        updated_at: 5,
      });
  });

  it("records a pending action undelivered: it never started", () => {
    const s = storeWith({ notify: "pending", stop: "pending" });
    expect(new DecisionStore(s.db).settleInterrupted(5)).toEqual({ undelivered: 2, unknown: 0 });
    for (const a of ["notify", "stop"])
      expect(stateOf(s, a)).toMatchObject({
        state: "undelivered",
        detail: "the daemon stopped before the action started",
      });
  });

  it("leaves finished actions as they were", () => {
    const s = storeWith({ notify: "ok", stop: "timeout" });
    expect(new DecisionStore(s.db).settleInterrupted(5)).toEqual({ undelivered: 0, unknown: 0 });
    expect(stateOf(s, "notify").state).toBe("ok");
    expect(stateOf(s, "stop").state).toBe("timeout");
  });
});
