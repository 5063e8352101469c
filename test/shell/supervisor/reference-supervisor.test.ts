/**
 * The reference supervisor against a real in-process daemon on a temporary store and socket: one test
 * per scenario of SPEC-0029 REQ-11 and REQ-12 that needs a supervisor. The daemon runs the stop command
 * and the tests run `harness rules clear` as the built programs (`dist/`, which `npm test` builds
 * before the tests run). The daemon's sandbox and the fleet's tool events are `harness demo`'s.
 *
 * The stop scenarios need an enforced stop rule, and the daemon loads only the starter pack until policy
 * repos land; so these daemons load their rules through `DaemonOptions.loadRules`, adding a policy repo
 * `test` holding the rules a test names.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadRuleFile } from "../../../src/core/load-rule.js";
import { assembleRuleSet, type RuleSet } from "../../../src/core/rule-set.js";
import { loadStarterPack } from "../../../src/core/starter-pack.js";
import type { GlobalConfig } from "../../../src/shell/config/global-config.js";
import { type RunningDaemon, Sandbox } from "../../../src/shell/demo/demo.js";
import { type ToolCall, toolEvent } from "../../../src/shell/demo/fleet-sim.js";
import { HoldRefusal } from "../../../src/shell/supervisor/errors.js";
import type { SupervisorEvent } from "../../../src/shell/supervisor/events.js";
import type { FleetJournal } from "../../../src/shell/supervisor/fleet-journal.js";
import type { ReferenceSupervisor } from "../../../src/shell/supervisor/reference-supervisor.js";
import type { Run } from "../../../src/shell/supervisor/runs.js";
import { stopEntryPath } from "../../../src/shell/supervisor/stop-command.js";
import { actions, fires, journalRows } from "../../support/store-reads.js";

/** The starter pack plus a policy repo `test` holding the rules a test names, as the daemon assembles them. */
const withRules =
  (rules: readonly { readonly name: string; readonly text: string }[]) =>
  (config: GlobalConfig): RuleSet => {
    const { enforce, disable, shadowPeriod } = config.memory.rules;
    const loads = rules.map((r) => loadRuleFile(`rules/${r.name}.toml`, r.text));
    return assembleRuleSet({
      starter: loadStarterPack(),
      policy: loads.length === 0 ? [] : [{ repo: "test", loads }],
      enforce,
      disable,
      shadowPeriod,
    });
  };

const CLI = fileURLToPath(new URL("../../../dist/shell/cli/main.js", import.meta.url));

/** Stops the run it names when that run makes three failing tool calls within 10 minutes. */
const ERROR_STREAK_STOPS = `name = "error-streak-stops"
description = "A run made three failing tool calls within 10m; stop it."
on = "run_event"
when = '''
event.type == "tool" && event.is_error
  && count({"type": "tool", "run": event.run, "is_error": true}, duration("10m")) >= 3
'''
level = "stop"
cooldown = "1m"
target = "run"
message = "{{run}} made three failing tool calls in 10m"
`;

/** Counts the loop guard's trips and stops the harness: the guard has already stopped it. */
const LOOP_STOP_STOPS = `name = "loop-stop-stops"
description = "The loop guard stopped a harness; stop it for good."
on = "run_event"
when = '''
event.type == "loop_stopped"
  && count({"type": "loop_stopped", "harness": event.harness}, duration("24h")) >= 1
'''
level = "stop"
cooldown = "1m"
target = "harness"
message = "the loop guard stopped {{harness}} (run {{run}})"
`;

const REPO = "forge.example/org/reduit";
const spec = (name: string, kind: "scheduled" | "resident", nextRun?: number) => ({
  name,
  kind,
  adapter: "claude",
  repo: REPO,
  branch: "main",
  ...(nextRun === undefined ? {} : { nextRun }),
});

const failingCall = (n: number): ToolCall => ({
  tool: "Bash",
  action: "exec",
  input: { command: `make step-${n}` },
  isError: true,
});

interface JournalRow {
  readonly seq: number;
  readonly type: string;
  readonly source: string;
  readonly run: string;
  readonly outcome: string | null;
  readonly reason: string | undefined;
}

class TestFleet {
  readonly events: SupervisorEvent[] = [];

  constructor(
    readonly sandbox: Sandbox,
    readonly daemon: RunningDaemon,
    readonly journal: FleetJournal,
    readonly supervisor: ReferenceSupervisor,
  ) {}

  settle = async (): Promise<void> => {
    await this.daemon.evaluated(this.journal.lastSeq);
    await this.daemon.actionsDone();
  };

  rows(harness: string): JournalRow[] {
    return journalRows(this.daemon.daemon.store, { harness }).map((r) => ({
      seq: r.seq,
      type: r.type,
      source: r.source,
      run: r.run as string,
      outcome: r.outcome,
      reason: r.event.reason as string | undefined,
    }));
  }

  fires(rule: string) {
    return fires(this.daemon.daemon.store, { rule });
  }

  actions(fireId: string) {
    return actions(this.daemon.daemon.store, { fireId }).map((a) => ({ action: a.action, state: a.state }));
  }

  deliveries(): Record<string, unknown>[] {
    return readFileSync(this.sandbox.deliveries, "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  async tool(run: Run, call: ToolCall, at?: string): Promise<boolean> {
    await this.journal.producer("observer").append([toolEvent(run, call, at)]);
    const digest = toolEvent(run, call).digest as string;
    return this.supervisor.observeTool(run, call.tool, digest);
  }

  /** nightly ran out of budget twice: budget-exhaustion-recurring holds it. */
  async holdNightly(): Promise<string> {
    this.supervisor.define(spec("nightly", "scheduled"));
    for (let i = 0; i < 2; i++) {
      const r = await this.supervisor.fire("nightly");
      if (r.kind !== "spawned") throw new Error(`nightly's firing ${i + 1} was skipped: ${r.message}`);
      await this.supervisor.exit(r.run, { outcome: "budget_exceeded", lastLine: "budget exceeded" });
    }
    await this.settle();
    const [fire] = this.fires("budget-exhaustion-recurring");
    expect(fire).toMatchObject({ harness: "nightly", action: "hold" });
    return (fire as { fire_id: string }).fire_id;
  }
}

const open: TestFleet[] = [];

async function fleet(options: {
  readonly enforce: readonly string[];
  readonly rules?: readonly { readonly name: string; readonly text: string }[];
}): Promise<TestFleet> {
  const sandbox = Sandbox.create({ enforce: options.enforce, shadowPeriod: "0s", notifyCooldown: "0s" });
  const daemon = await sandbox.startDaemon({ loadRules: withRules(options.rules ?? []) });
  const journal = sandbox.journal();
  let f: TestFleet | undefined;
  const supervisor = await sandbox.startSupervisor(journal, (e) => f?.events.push(e));
  f = new TestFleet(sandbox, daemon, journal, supervisor);
  open.push(f);
  return f;
}

afterEach(async () => {
  for (const f of open.splice(0)) {
    await f.supervisor.shutdown();
    await f.daemon.close();
    f.sandbox.remove();
  }
});

function run(argv: readonly string[], env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, argv, { env }, (e, stdout, stderr) =>
      resolve({ code: e === null ? 0 : typeof e.code === "number" ? e.code : 1, stdout, stderr }),
    );
  });
}

beforeAll(() => {
  for (const file of [CLI, stopEntryPath()])
    expect(existsSync(file), `${file}: npm test builds dist/ before the tests run`).toBe(true);
});

describe("the reference supervisor against the daemon", () => {
  it("Firings under a hold are skipped", async () => {
    const f = await fleet({ enforce: ["budget-exhaustion-recurring"] });
    await f.holdNightly();
    const heldAt = f.journal.lastSeq;

    const first = await f.supervisor.fire("nightly");
    const second = await f.supervisor.fire("nightly");
    await f.settle();

    for (const r of [first, second]) {
      expect(r.kind).toBe("skipped");
      if (r.kind === "skipped") {
        expect(r.reason).toBe("rule_hold");
        expect(r.message).toContain("budget-exhaustion-recurring");
      }
    }
    expect(f.supervisor.inFlight("nightly")).toBeUndefined();
    // Both firings are ledger rows closed skipped/rule_hold, and nothing after the hold opened a run.
    expect(f.rows("nightly").filter((r) => r.seq > heldAt)).toEqual([
      {
        seq: expect.any(Number),
        type: "closed",
        source: "ledger",
        run: "nightly#3",
        outcome: "skipped",
        reason: "rule_hold",
      },
      {
        seq: expect.any(Number),
        type: "closed",
        source: "ledger",
        run: "nightly#4",
        outcome: "skipped",
        reason: "rule_hold",
      },
    ]);
    expect(f.events.filter((e) => e.kind === "spawned").map((e) => e.kind === "spawned" && e.run)).toEqual([
      "nightly#1",
      "nightly#2",
    ]);
  });

  it("Start does not bypass a hold", async () => {
    const f = await fleet({ enforce: ["budget-exhaustion-recurring"] });
    const fireId = await f.holdNightly();

    const refused = await f.supervisor.start("nightly").then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(HoldRefusal);
    expect((refused as HoldRefusal).rules).toEqual(["budget-exhaustion-recurring"]);
    expect((refused as Error).message).toContain(`held by rule budget-exhaustion-recurring (fire ${fireId})`);
    expect((refused as Error).message).toContain("harness rules clear nightly");
    expect(f.supervisor.inFlight("nightly")).toBeUndefined();

    const clear = await run([CLI, "rules", "clear", "nightly"], f.sandbox.env);
    expect(clear).toMatchObject({
      code: 0,
      stdout: `released nightly: hold by rule budget-exhaustion-recurring (fire ${fireId})\n`,
    });

    const started = await f.supervisor.start("nightly");
    expect(started.id).toBe("nightly#3");
    await f.settle();
    expect(f.rows("nightly").at(-1)).toMatchObject({ type: "opened", run: "nightly#3" });
  });

  it("A late stop does not hit the next run", async () => {
    const f = await fleet({
      enforce: ["error-streak-stops"],
      rules: [{ name: "error-streak-stops", text: ERROR_STREAK_STOPS }],
    });
    f.supervisor.define(spec("impl", "resident", 41));
    const impl41 = await f.supervisor.start("impl");
    const before = new Date().toISOString();
    await f.tool(impl41, failingCall(1));
    await f.tool(impl41, failingCall(2));
    const impl42 = await f.supervisor.exit(impl41, {
      outcome: "failed",
      exitCode: 1,
      lastLine: "make: *** Error 2",
    });
    expect(impl42?.id).toBe("impl#42");
    // The observer delivers impl#41's third failure late, after impl#42 started.
    await f.tool(impl41, failingCall(3), before);
    await f.settle();

    const [fire] = f.fires("error-streak-stops");
    expect(fire).toMatchObject({ run: "impl#41", action: "target_gone" });
    expect(f.actions((fire as { fire_id: string }).fire_id).map((a) => a.action)).not.toContain("stop");
    expect(f.supervisor.inFlight("impl")).toBe(impl42);
    expect(impl42?.running).toBe(true);
    expect(
      f
        .rows("impl")
        .filter((r) => r.run === "impl#42")
        .map((r) => r.type),
    ).toEqual(["opened"]);

    // A stop that raced impl#41's end reaches the supervisor anyway: it stops nothing.
    const rowsBefore = f.rows("impl").length;
    const late = await run(
      [
        stopEntryPath(),
        "stop",
        "--socket",
        f.sandbox.supervisorSocket,
        "impl",
        "impl#41",
        "error-streak-stops",
        "f-9-0",
        "9",
      ],
      f.sandbox.env,
    );
    expect(late).toMatchObject({
      code: 0,
      stdout: "impl#41 is not in flight (impl#42 is): nothing stopped\n",
    });
    await f.settle();
    expect(impl42?.running).toBe(true);
    expect(f.rows("impl")).toHaveLength(rowsBefore);
  });

  it("A rule stop closes the run in flight cancelled, reason rule_stop, and sends no loop_stopped", async () => {
    const f = await fleet({
      enforce: ["error-streak-stops"],
      rules: [{ name: "error-streak-stops", text: ERROR_STREAK_STOPS }],
    });
    f.supervisor.define(spec("impl", "resident", 7));
    const impl7 = await f.supervisor.start("impl");
    for (let n = 1; n <= 3; n++) await f.tool(impl7, failingCall(n));
    await f.settle();
    // The stop command's ledger row arrives after the actions are done; wait for it too.
    await f.settle();

    const [fire] = f.fires("error-streak-stops");
    expect(fire).toMatchObject({ run: "impl#7", action: "stop" });
    expect(f.actions((fire as { fire_id: string }).fire_id)).toEqual([
      { action: "notify", state: "ok" },
      { action: "stop", state: "ok" },
    ]);
    expect(impl7.running).toBe(false);
    expect(f.rows("impl").filter((r) => r.type === "closed" || r.type === "loop_stopped")).toEqual([
      {
        seq: expect.any(Number),
        type: "closed",
        source: "ledger",
        run: "impl#7",
        outcome: "cancelled",
        reason: "rule_stop",
      },
    ]);
    // The stop cleared impl's enabled intent: its restart policy does not bring it back.
    expect(f.supervisor.inFlight("impl")).toBeUndefined();
    expect(f.events).toContainEqual(
      expect.objectContaining({
        kind: "rule_stop",
        run: "impl#7",
        rule: "error-streak-stops",
        result: "stopped",
      }),
    );
  });

  it("Both guards see a loop", async () => {
    const f = await fleet({
      enforce: ["loop-stop-stops"],
      rules: [{ name: "loop-stop-stops", text: LOOP_STOP_STOPS }],
    });
    f.supervisor.define(spec("worker", "resident"));
    const worker = await f.supervisor.start("worker");
    const comment: ToolCall = { tool: "Bash", action: "exec", input: { command: "gh issue comment 118" } };
    const trips: boolean[] = [];
    for (let i = 0; i < 8; i++) trips.push(await f.tool(worker, comment));
    expect(trips).toEqual([false, false, false, false, false, false, false, true]);
    await f.settle();

    // Stopped once, by the guard: one loop_stopped from the loop guard, one close, no rule stop.
    expect(f.rows("worker").filter((r) => r.type !== "tool" && r.type !== "opened")).toEqual([
      {
        seq: expect.any(Number),
        type: "loop_stopped",
        source: "loopguard",
        run: "worker#1",
        outcome: null,
        reason: undefined,
      },
      {
        seq: expect.any(Number),
        type: "closed",
        source: "ledger",
        run: "worker#1",
        outcome: "cancelled",
        reason: "operator",
      },
    ]);
    expect(f.events.filter((e) => e.kind === "rule_stop")).toEqual([]);
    const [fire] = f.fires("loop-stop-stops");
    expect(fire).toMatchObject({ harness: "worker", run: "worker#1" });
    expect(f.actions((fire as { fire_id: string }).fire_id)).toEqual([{ action: "notify", state: "ok" }]);
    // rule_fired comes from the rule; the hook never hears a loop_stopped from it.
    expect(f.deliveries().filter((d) => d.event === "rule_fired")).toEqual([
      expect.objectContaining({ rule: "loop-stop-stops", harness: "worker", declared_level: "stop" }),
    ]);
  });
});
