/**
 * Holds and stops on hook-fed runs, the loop guard, collisions from the file-edge projector and the
 * stale run closer (issue 17), each against a real daemon: rows admitted as the hooks' ingest admits
 * them (marked hook-fed), and each hook call answered by the daemon's run verdicts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { HOUR, MINUTE } from "../../../src/core/durations.js";
import { runNode } from "../../../src/core/targets.js";
import { RunVerdict, StopCause } from "../../../src/shell/rpc/gen/harness/v1/agents_pb.js";
import { actions, agentRunStops, annotations, fires, holds } from "../../support/store-reads.js";
import { AgentsDaemon, REPO, session } from "./agents-daemon.js";

const daemons: AgentsDaemon[] = [];
afterEach(async () => {
  for (const d of daemons.splice(0)) await d.dispose();
});
const start = async (options: Parameters<typeof AgentsDaemon.start>[0] = {}) => {
  const d = await AgentsDaemon.start(options);
  daemons.push(d);
  return d;
};

/** A policy hold rule over hook rows: two failing tool calls of one harness within an hour hold it. */
const FAILURES_HOLD = {
  name: "tool-failures-hold",
  text: `name = "tool-failures-hold"
description = "Two failing tool calls of one harness within 1h; hold it."
on = "run_event"
when = '''
event.type == "tool" && event.is_error
  && count({"type": "tool", "harness": event.harness, "is_error": true}, duration("1h")) >= 2
'''
level = "hold"
cooldown = "6h"
target = "harness"
message = "{{harness}} keeps failing tool calls"
`,
};

/** A policy stop rule over hook rows: a run that runs the forbidden command is stopped. */
const FORBIDDEN_STOPS = {
  name: "forbidden-command-stops",
  text: `name = "forbidden-command-stops"
description = "A run ran the forbidden command; stop it."
on = "run_event"
when = '''
event.type == "tool" && event.digest == "${"f".repeat(64)}"
'''
level = "stop"
cooldown = "1m"
target = "run"
message = "{{run}} ran the forbidden command"
`,
};

/** The same, for every run of the harness in flight. */
const FORBIDDEN_STOPS_HARNESS = {
  name: "forbidden-command-stops-harness",
  text: FORBIDDEN_STOPS.text
    .replaceAll("forbidden-command-stops", "forbidden-command-stops-harness")
    .replace('target = "run"', 'target = "harness"'),
};

describe("holds on hook-fed runs", () => {
  it("A held harness cannot start working", async () => {
    const d = await start({ rules: [FAILURES_HOLD], enforce: ["tool-failures-hold"] });
    const s1 = session("impl", "s1");
    await d.hookRows("ledger", [s1.opened()]);
    await d.hookRows("observer", [
      s1.tool({ is_error: true }),
      s1.tool({ is_error: true, digest: "1".repeat(64) }),
    ]);
    await d.until(() => holds(d, { inForce: true }).length === 1, "the hold");
    const fireId = holds(d)[0]?.fire_id as string;

    const s2 = session("impl", "s2");
    await d.hookRows("ledger", [s2.opened()]);
    expect(await d.check("impl", s2.run)).toEqual({
      kind: "held",
      rule: "tool-failures-hold",
      fireId,
      clearCommand: "harness rules clear impl",
    });
    const rpc = await d.checkRun("impl", s2.run);
    expect(rpc.verdict).toBe(RunVerdict.HELD);
    expect(rpc.clearCommand).toBe("harness rules clear impl");
    expect(rpc.message).toBe(
      `impl is held by rule tool-failures-hold (fire ${fireId}); run \`harness rules clear impl\` to release it`,
    );
    // Another harness is not held.
    const other = session("docs", "s1");
    await d.hookRows("ledger", [other.opened()]);
    expect(await d.check("docs", other.run)).toEqual({ kind: "allow" });

    const cleared = await d.fleet.cli(["rules", "clear", "impl"]);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(await d.check("impl", s2.run)).toEqual({ kind: "allow" });
    expect((await d.checkRun("impl", s2.run)).verdict).toBe(RunVerdict.ALLOW);
  });

  it("finding 9: a session first seen after the hold is held though its opened row never arrives; one first seen before it keeps working", async () => {
    const d = await start({ rules: [FAILURES_HOLD], enforce: ["tool-failures-hold"] });
    const s1 = session("impl", "s1");
    // Seen before the hold by a tool call alone (started before the hooks were installed, or its start
    // lost): a running process, which REQ-11 does not stop.
    const before = session("impl", "before");
    await d.hookRows("observer", [before.tool({})]);
    await d.hookRows("ledger", [s1.opened()]);
    await d.hookRows("observer", [s1.tool({ is_error: true }), s1.tool({ is_error: true })]);
    await d.until(() => holds(d, { inForce: true }).length === 1, "the hold");
    expect(await d.check("impl", before.run)).toEqual({ kind: "allow" });
    expect((await d.checkRun("impl", before.run)).verdict).toBe(RunVerdict.ALLOW);
    // First seen after the hold, by a tool row or by nothing but this call: no opened row lets it
    // through.
    const late = session("impl", "late");
    await d.hookRows("observer", [late.tool({})]);
    expect((await d.check("impl", late.run)).kind).toBe("held");
    expect((await d.checkRun("impl", late.run)).verdict).toBe(RunVerdict.HELD);
    expect((await d.check("impl", "impl#first-call")).kind).toBe("held");
    // Its SessionStart arriving late (from the spool) changes nothing.
    await d.hookRows("ledger", [late.opened()]);
    expect((await d.check("impl", late.run)).kind).toBe("held");
  });

  it("A session already running is not stopped by a hold", async () => {
    const d = await start({ rules: [FAILURES_HOLD], enforce: ["tool-failures-hold"] });
    const s1 = session("impl", "s1");
    await d.hookRows("ledger", [s1.opened()]);
    await d.hookRows("observer", [s1.tool({ is_error: true }), s1.tool({ is_error: true })]);
    await d.until(() => holds(d, { inForce: true }).length === 1, "the hold");
    const s2 = session("impl", "s2");
    await d.hookRows("ledger", [s2.opened()]);
    expect(await d.check("impl", s1.run)).toEqual({ kind: "allow" });
    expect((await d.checkRun("impl", s1.run)).verdict).toBe(RunVerdict.ALLOW);
    expect((await d.check("impl", s2.run)).kind).toBe("held");
  });
});

describe("stops on hook-fed runs", () => {
  it("A stopped run ends at its next tool call", async () => {
    const d = await start({
      rules: [FORBIDDEN_STOPS],
      enforce: ["forbidden-command-stops"],
    });
    const a = session("impl", "a");
    const b = session("impl", "b");
    // Two sessions of one harness in flight; the stop is for the older one.
    await d.hookRows("ledger", [a.opened(), b.opened()]);
    await d.hookRows("observer", [a.tool({ digest: "f".repeat(64) })]);
    await d.settled();
    const fire = fires(d, { rule: "forbidden-command-stops" });
    expect(fire.map((x) => x.action)).toEqual(["stop"]);
    const fireId = fire[0]?.fire_id as string;
    await d.until(
      () => actions(d, { action: "stop", state: "started" }).length === 1,
      "the stop waiting for the run's next hook call",
    );
    // CheckRun reports it and delivers nothing.
    const peeked = await d.checkRun("impl", a.run);
    expect(peeked.verdict).toBe(RunVerdict.STOPPED);
    expect(peeked.stoppedBy).toBe(StopCause.RULE);
    expect(peeked.fireId).toBe(fireId);
    expect(d.rows("closed")).toEqual([]);

    const stopped = {
      kind: "stopped",
      rule: "forbidden-command-stops",
      fireId,
      by: "rule",
      run: a.run,
      resumeCommand: `harness rules resume ${a.run}`,
      released: false,
    };
    // Two calls of the run answered at once: each is stopped, and the stop is delivered once.
    expect(await Promise.all([d.check("impl", a.run), d.check("impl", a.run)])).toEqual([stopped, stopped]);
    const closed = d.rows("closed");
    expect(closed).toMatchObject([
      {
        run: a.run,
        harness: "impl",
        session: "a",
        outcome: "cancelled",
        reason: "rule_stop",
        hook_fed: true,
        source: "ledger",
      },
    ]);
    expect(actions(d, { fireId, action: "stop" }).map((x) => ({ state: x.state, detail: x.detail }))).toEqual(
      [{ state: "ok", detail: `delivered to ${a.run} at its next hook call` }],
    );
    // Every later call of the run stays stopped, and the run is closed once.
    expect(await d.check("impl", a.run)).toEqual(stopped);
    expect(await d.check("impl", a.run)).toEqual(stopped);
    expect(d.rows("closed")).toHaveLength(1);
    // The other session was opened before the stop's hold: it keeps working.
    expect(await d.check("impl", b.run)).toEqual({ kind: "allow" });
    await d.settled();
    expect(d.app.daemon.view.state.sessions).toEqual({ [b.run]: "impl" });
  });

  it("a stop whose run closes before its next hook call is recorded undelivered", async () => {
    const d = await start({ rules: [FORBIDDEN_STOPS], enforce: ["forbidden-command-stops"] });
    const a = session("impl", "a");
    await d.hookRows("ledger", [a.opened()]);
    await d.hookRows("observer", [a.tool({ digest: "f".repeat(64) })]);
    await d.until(() => actions(d, { action: "stop", state: "started" }).length === 1, "the stop waiting");
    await d.hookRows("ledger", [a.closed("success", "logout")]);
    await d.settled();
    expect(actions(d, { action: "stop" }).map((x) => ({ state: x.state, detail: x.detail }))).toEqual([
      { state: "undelivered", detail: `${a.run} closed before its next hook call` },
    ]);
    // A late call of the run is still refused, and closes nothing again.
    expect((await d.check("impl", a.run)).kind).toBe("stopped");
    expect(d.rows("closed")).toHaveLength(1);
  });

  it("A harness stop of two sessions in flight records each run's delivery on its own", async () => {
    const d = await start({
      rules: [FORBIDDEN_STOPS_HARNESS],
      enforce: ["forbidden-command-stops-harness"],
    });
    const a = session("impl", "a");
    const b = session("impl", "b");
    await d.hookRows("ledger", [a.opened(), b.opened()]);
    await d.hookRows("observer", [a.tool({ digest: "f".repeat(64) })]);
    await d.until(
      () => actions(d, { action: "stop", state: "started" }).length === 1,
      "the stop waiting for both runs' next hook calls",
    );
    const action = () => actions(d, { action: "stop" }).map((x) => ({ state: x.state, detail: x.detail }));
    expect(action()).toEqual([
      {
        state: "started",
        detail: `waiting for the next hook call of ${a.run}; waiting for the next hook call of ${b.run}`,
      },
    ]);
    // The first run is told at its next hook call; the other still waits.
    expect((await d.check("impl", a.run)).kind).toBe("stopped");
    expect(action()).toEqual([
      {
        state: "started",
        detail: `delivered to ${a.run} at its next hook call; waiting for the next hook call of ${b.run}`,
      },
    ]);
    // The other ends its session before a hook call takes the stop.
    await d.hookRows("ledger", [b.closed("success", "prompt_input_exit")]);
    await d.settled();
    expect(action()).toEqual([
      {
        state: "ok",
        detail: `delivered to ${a.run} at its next hook call; ${b.run} closed before its next hook call`,
      },
    ]);
    expect(agentRunStops(d)).toEqual([
      { run: a.run, outcome: "delivered", settled: true },
      { run: b.run, outcome: "closed_first", settled: true },
    ]);
    // A late call of the closed run is still refused, and closes nothing.
    expect((await d.check("impl", b.run)).kind).toBe("stopped");
    expect(d.rows("closed").map((r) => [r.run, r.reason])).toEqual([
      [a.run, "rule_stop"],
      [b.run, "prompt_input_exit"],
    ]);
  });

  it("A stop for a hook-fed run already closed is target_gone", async () => {
    const d = await start({ rules: [FORBIDDEN_STOPS], enforce: ["forbidden-command-stops"] });
    const a = session("impl", "a");
    await d.hookRows("ledger", [a.opened(), a.closed()]);
    // A late tool row of the closed session (PostToolUse after SessionEnd).
    await d.hookRows("observer", [a.tool({ digest: "f".repeat(64) })]);
    await d.settled();
    expect(fires(d).map((x) => x.action)).toEqual(["target_gone"]);
    expect((await d.check("impl", a.run)).kind).not.toBe("stopped");
  });
});

describe("the loop guard on hook-fed runs", () => {
  it("An agent in a loop is stopped", async () => {
    const d = await start();
    const s = session("worker", "s1");
    await d.hookRows("ledger", [s.opened()]);
    const same = s.tool({ tool: "Read", action: "read", digest: "a".repeat(64) });
    // A user message starts the streak over: seven, a message, then eight.
    await d.hookRows("observer", [...Array(7).fill(same), s.mark("user-message"), ...Array(7).fill(same)]);
    await d.settled();
    expect(d.rows("loop_stopped")).toEqual([]);
    expect(await d.check("worker", s.run)).toEqual({ kind: "allow" });
    await d.hookRows("observer", [same]);
    await d.settled();
    const trips = d.rows("loop_stopped");
    expect(trips).toMatchObject([
      { harness: "worker", run: s.run, tool: "Read", digest: "a".repeat(64), source: "loopguard" },
    ]);
    const verdict = {
      kind: "stopped",
      rule: "loop-guard",
      fireId: `journal:${trips[0]?.seq}`,
      by: "loop_guard",
      run: s.run,
      resumeCommand: `harness rules resume ${s.run}`,
      released: false,
    };
    expect(await d.check("worker", s.run)).toEqual(verdict);
    expect(d.rows("closed")).toMatchObject([
      { run: s.run, session: "s1", outcome: "cancelled", reason: "operator", hook_fed: true },
    ]);
    // Late calls of the stopped run neither trip it again nor close it again.
    await d.hookRows("observer", Array(8).fill(same));
    await d.settled();
    expect(await d.check("worker", s.run)).toEqual(verdict);
    expect(d.rows("loop_stopped")).toHaveLength(1);
    expect(d.rows("closed")).toHaveLength(1);
  });

  it("the loop guard counts tool rows only: a call's attempt is never part of a streak", async () => {
    const d = await start();
    const s = session("worker", "s1");
    await d.hookRows("ledger", [s.opened()]);
    const same = s.tool({ tool: "Read", action: "read", digest: "c".repeat(64) });
    const { is_error: _, ...fields } = same;
    const attempt = { ...fields, kind: "attempt_event" };
    // Seven calls, each its attempt then its tool row: fourteen rows of one tool and digest, no trip.
    await d.hookRows("observer", Array.from({ length: 7 }, () => [attempt, same]).flat());
    await d.settled();
    expect(d.rows("tool", "attempt_event")).toHaveLength(7);
    expect(d.rows("loop_stopped")).toEqual([]);
    expect(await d.check("worker", s.run)).toEqual({ kind: "allow" });
    // The eighth call's tool row trips it.
    await d.hookRows("observer", [attempt, same]);
    await d.settled();
    expect(d.rows("loop_stopped")).toHaveLength(1);
  });

  it("loop-stop-recurs notifies when the guard stops a harness's agents twice in 24h", async () => {
    const d = await start();
    for (const id of ["s1", "s2"]) {
      const s = session("worker", id);
      await d.hookRows("ledger", [s.opened()]);
      await d.hookRows("observer", Array(8).fill(s.tool({ digest: "b".repeat(64) })));
      await d.settled();
      expect((await d.check("worker", s.run)).kind).toBe("stopped");
    }
    await d.until(() => d.fleet.delivered().some((p) => p.rule === "loop-stop-recurs"), "rule_fired");
    expect(fires(d, { rule: "loop-stop-recurs" }).map((x) => x.action)).toEqual(["notify"]);
  });
});

describe("starter rules on hook rows", () => {
  it("Two agents editing one file start a collision", async () => {
    const d = await start();
    const impl = session("impl", "s1");
    const review = session("review", "s7");
    await d.hookRows("ledger", [impl.opened(), review.opened()]);
    await d.hookRows("observer", [impl.edit("internal/writer.go", "README.md")]);
    await d.hookRows("observer", [impl.edit("internal/writer.go")]);
    await d.hookRows("observer", [review.edit("internal/writer.go")]);
    await d.settled();
    const started = d.rows("collision_started", "graph_event");
    expect(started).toEqual([
      {
        type: "collision_started",
        scope: "file",
        repo: REPO,
        branch: "main",
        path: "internal/writer.go",
        harness: "review",
        run: review.run,
        harnesses: ["impl", "review"],
        runs: [impl.run, review.run],
        seq: expect.any(Number),
        source: "graph",
      },
    ]);
    // One edge per run and path, the first time.
    expect(d.rows("edge_added", "graph_event").map((r) => [r.from, r.to])).toEqual([
      [runNode(impl.run), `file:${REPO}:internal/writer.go`],
      [runNode(impl.run), `file:${REPO}:README.md`],
      [runNode(review.run), `file:${REPO}:internal/writer.go`],
    ]);
    await d.until(() => annotations(d).length > 0, "the annotation");
    expect(
      annotations(d)
        .filter((x) => x.rule === "same-file-collision")
        .map((x) => ({ rule: x.rule, node: x.node })),
    ).toEqual([{ rule: "same-file-collision", node: runNode(review.run) }]);

    await d.hookRows("ledger", [review.closed()]);
    await d.settled();
    expect(d.rows("edge_ended", "graph_event").map((r) => r.run)).toEqual([review.run]);
    expect(d.rows("collision_ended", "graph_event")).toMatchObject([
      { path: "internal/writer.go", run: review.run, harnesses: ["impl"], runs: [impl.run] },
    ]);
  });

  it("A verify step that keeps failing across sessions notifies", async () => {
    const d = await start();
    const verify = { tool: "Bash", action: "verify", is_error: true, digest: "c".repeat(64) };
    for (const id of ["s1", "s2"]) {
      const s = session("impl", id);
      await d.hookRows("ledger", [s.opened()]);
      await d.hookRows("observer", [s.tool(verify)]);
      await d.hookRows("ledger", [s.closed()]);
    }
    await d.until(() => d.fleet.delivered().some((p) => p.rule === "repeated-verify-failure"), "rule_fired");
    const fired = d.fleet.delivered().filter((p) => p.rule === "repeated-verify-failure");
    expect(fired).toMatchObject([{ event: "rule_fired", harness: "impl", level: "notify" }]);
  });
});

describe("the stale run closer", () => {
  it("closes a hook-fed run that sent nothing for stale_after, on the minute tick", async () => {
    let offset = 0;
    const clock = () => Date.now() + offset;
    const d = await start({ clock, tickMs: 100, config: '[agents]\nlisten = ""\nstale_after = "12h"' });
    const quiet = session("impl", "quiet");
    const busy = session("impl", "busy");
    const supervised = { harness: "nightly", run: "nightly#1" };
    await d.hookRows("ledger", [quiet.opened(), busy.opened()]);
    await d.append("ledger", [{ type: "opened", ...supervised }]);
    offset += 11 * HOUR;
    await d.hookRows("observer", [busy.tool({})]);
    await new Promise((r) => setTimeout(r, 300));
    expect(d.rows("closed")).toEqual([]);
    offset += 1 * HOUR + MINUTE;
    await d.until(() => d.rows("closed").length > 0, "the stale run closed");
    await new Promise((r) => setTimeout(r, 300));
    expect(d.rows("closed")).toMatchObject([
      {
        run: quiet.run,
        harness: "impl",
        adapter: "claude-code",
        outcome: "interrupted",
        reason: "stale",
        source: "ledger",
      },
    ]);
    await d.settled();
    expect(d.app.daemon.view.state.sessions).toEqual({ [busy.run]: "impl" });
    // A late row of the closed run does not open it again to be closed a second time.
    await d.hookRows("observer", [quiet.tool({})]);
    offset += 13 * HOUR;
    await d.until(() => d.rows("closed").length > 1, "the busy run closed stale in its turn");
    await new Promise((r) => setTimeout(r, 300));
    expect(d.rows("closed").map((r) => r.run)).toEqual([quiet.run, busy.run]);
  });
});
