import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Fire } from "../../../src/core/outcome.js";
import { ActionRunner } from "../../../src/shell/daemon/actions.js";
import type { NotifyEvent } from "../../../src/shell/notify/index.js";
import { AgentRunStops } from "../../../src/shell/store/agent-run-stops.js";
import { promised } from "../../../src/shell/store/async-port.js";
import { type ActionState, DecisionStore } from "../../../src/shell/store/decision-store.js";
import { type OpenedStore, openStore } from "../../../src/shell/store/open-store.js";
import { createLog } from "../../../src/shell/support/log.js";
import { actions } from "../../support/store-reads.js";

const opened: OpenedStore[] = [];
afterEach(() => {
  for (const s of opened.splice(0)) {
    const file = s.db.name;
    s.close();
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
});

const fire = {
  id: "f1",
  rule: "r",
  hash: "h",
  seq: 1,
  at: 0,
  kind: "run_event",
  type: "closed",
  target: { kind: "harness", key: "impl", harness: "impl" },
  declaredLevel: "notify",
  effectiveLevel: "notify",
  mode: "active",
  action: "notify",
  actions: [{ kind: "notify" }],
  message: "m",
  primitives: [],
} as unknown as Fire;

describe("ActionRunner's record of a notification", () => {
  it("leaves it pending while it waits in the hook's queue, and records it started when its hook starts", async () => {
    const s = openStore(
      path.join(fs.mkdtempSync(path.join(os.tmpdir(), "harness-actions-")), "h.db"),
      "test",
    );
    opened.push(s);
    const decisions = new DecisionStore(s.db);
    decisions.commit({ cursor: 1, ops: [], fires: [fire], suppressed: new Map() });
    const queued: NotifyEvent[] = [];
    const runner = runnerOver(promised(decisions), promised(new AgentRunStops(s.db)), (e) => queued.push(e));
    const state = () => actions(s, { fireId: "f1" })[0]?.state;
    runner.dispatch({ fires: [fire], releases: [], evaluations: [] });
    expect(queued.map((e) => e.fireId)).toEqual(["f1"]);
    // A crash now finds it pending: its hook never ran, so it is recorded undelivered, not unknown.
    expect(state()).toBe("pending");
    await runner.notifyStarted("f1");
    expect(state()).toBe("started");
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A runner whose store writes are the test's, with no hook or stop command behind it. */
const runnerOver = (
  decisions: ConstructorParameters<typeof ActionRunner>[0],
  runStops: ConstructorParameters<typeof ActionRunner>[4],
  notify: (e: NotifyEvent) => void = () => undefined,
) =>
  new ActionRunner(
    decisions,
    {
      notify,
      wantsEvent: () => true,
      stopCommand: undefined,
      stopTimeoutMs: 1_000,
      env: {},
    },
    createLog({ level: "silent" }),
    () => 5,
    runStops,
  );

describe("ActionRunner over a store whose writes take time", () => {
  it("starts no action whose start is not recorded: no longer pending, or the store refused it", async () => {
    const tried: string[] = [];
    for (const answer of [false, "throws"] as const) {
      const runner = runnerOver(
        {
          startAction: async (fireId) => {
            tried.push(fireId);
            if (answer === "throws") throw new Error("this daemon does not lead");
            return answer;
          },
          setActionState: async () => undefined,
        },
        { ruleStop: async () => undefined },
      );
      expect(await runner.notifyStarted(`f-${answer}`)).toBe(false);
    }
    expect(tried).toEqual(["f-false", "f-throws"]);
  });

  it("records an action's states in the order they happened, whichever write is slower", async () => {
    const landed: ActionState[] = [];
    const runner = runnerOver(
      {
        // `started` takes longer to land than the result that follows it, as a round trip may.
        startAction: async () => {
          await sleep(30);
          landed.push("started");
          return true;
        },
        setActionState: async (_fireId, _action, state) => {
          landed.push(state);
        },
      },
      { ruleStop: async () => undefined },
    );
    void runner.notifyStarted("f1");
    runner.notifyOutcome("f1", "ok", "exit 0");
    await runner.drain();
    expect(landed).toEqual(["started", "ok"]);
  });

  it("tells when the stops of hook-fed runs it dispatched are recorded", async () => {
    let recorded = false;
    const runner = runnerOver(
      { setActionState: async () => undefined, startAction: async () => true },
      {
        ruleStop: async () => {
          await sleep(30);
          recorded = true;
        },
      },
    );
    const stop = {
      ...fire,
      action: "stop",
      actions: [{ kind: "stop", harness: "impl", run: "impl#1", sessions: ["impl#s1"] }],
    } as unknown as Fire;
    runner.dispatch({ fires: [stop], releases: [], evaluations: [] });
    expect(recorded).toBe(false);
    await runner.stopsRecorded();
    expect(recorded).toBe(true);
  });
});
