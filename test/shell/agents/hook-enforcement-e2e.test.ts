/**
 * Holds bite on real agents (issue 17), end to end: real `harness hook claude-code` processes against
 * a real `harness daemon` whose enforced starter rule holds the harness. A session first seen after the
 * hold (its SessionStart arrived or not) has its PreToolUse denied, naming the rule, the fire and the clear command; after
 * `harness rules clear`, the same call is allowed. Stops reach hook-fed runs at their next hook call,
 * beside a supervisor's runs stopped through `[supervisor] stop`.
 */
import * as fs from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { actions, fires, holds } from "../../support/store-reads.js";
import { ERROR_STREAK_STOPS, jsonl, TestFleet } from "../daemon-harness.js";
import { makeRepo, rowsOf, runHook } from "./hook-harness.js";
import { claudeCode } from "./payloads.js";

let fleet: TestFleet;
let repo: string;

beforeAll(async () => {
  repo = makeRepo();
  fleet = new TestFleet({ enforce: ["budget-exhaustion-recurring"], config: '[agents]\nlisten = ""' });
  await fleet.start();
}, 30_000);

afterAll(async () => {
  await fleet.dispose();
  fs.rmSync(repo, { recursive: true, force: true });
});

const budgetExceeded = (n: number) => ({
  kind: "run_event",
  type: "closed",
  harness: "impl",
  run: `impl#old-${n}`,
  outcome: "budget_exceeded",
});

it("A held harness cannot start working: a new session's tool call is denied until the hold is cleared", async () => {
  const ledger = fleet.tokens.get("ledger") as string;
  const appended = await fleet.cli(
    ["journal", "append", "--token-file", ledger],
    jsonl([budgetExceeded(1), budgetExceeded(2)]),
  );
  expect(appended.code, appended.stderr).toBe(0);
  await fleet.until(() => holds(fleet, { harness: "impl", inForce: true }).length === 1, "the hold on impl");
  const payloads = claudeCode(repo, "sess-held");
  expect((await runHook(fleet, "claude-code", JSON.stringify(payloads.SessionStart))).code).toBe(0);

  const denied = await runHook(fleet, "claude-code", JSON.stringify(payloads.PreToolUse));
  expect(denied.code).toBe(0);
  const answer = JSON.parse(denied.stdout);
  expect(answer.hookSpecificOutput).toMatchObject({
    hookEventName: "PreToolUse",
    permissionDecision: "deny",
  });
  const reason: string = answer.hookSpecificOutput.permissionDecisionReason;
  expect(reason).toContain("budget-exhaustion-recurring");
  expect(reason).toContain("harness rules clear impl");

  expect((await fleet.cli(["rules", "clear", "impl"])).code).toBe(0);
  const allowed = await runHook(fleet, "claude-code", JSON.stringify(payloads.PreToolUse));
  expect(allowed.code).toBe(0);
  expect(allowed.stdout).not.toContain('"deny"');
});

it("finding 9: while a hold is on, a new session whose SessionStart never arrives has its first PreToolUse held, and a session seen before the hold keeps working (REQ-11)", async () => {
  const f = new TestFleet({ enforce: ["budget-exhaustion-recurring"], config: '[agents]\nlisten = ""' });
  await f.start();
  try {
    // Seen before the hold by a tool call alone: its SessionStart never reached the daemon.
    const before = claudeCode(repo, "sess-before");
    expect((await runHook(f, "claude-code", JSON.stringify(before.PostToolUse))).code).toBe(0);
    await f.until(() => rowsOf(f, "sess-before").length === 1, "the earlier session's row");

    const ledger = f.tokens.get("ledger") as string;
    const appended = await f.cli(
      ["journal", "append", "--token-file", ledger],
      jsonl([budgetExceeded(1), budgetExceeded(2)]),
    );
    expect(appended.code, appended.stderr).toBe(0);
    await f.until(() => holds(f, { harness: "impl", inForce: true }).length === 1, "the hold on impl");

    // A new session whose SessionStart was set aside or lost: its first call is its first row.
    const lost = await runHook(f, "claude-code", JSON.stringify(claudeCode(repo, "sess-lost").PreToolUse));
    expect(lost.code).toBe(0);
    const answer = JSON.parse(lost.stdout);
    expect(answer.hookSpecificOutput).toMatchObject({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
    });
    expect(answer.hookSpecificOutput.permissionDecisionReason).toContain("harness rules clear impl");
    // Once its first row is in the journal (after the hold), its calls are still held.
    const lostPayloads = claudeCode(repo, "sess-lost");
    expect((await runHook(f, "claude-code", JSON.stringify(lostPayloads.PostToolUse))).code).toBe(0);
    await f.until(() => rowsOf(f, "sess-lost").length === 1, "the new session's row");
    const again = await runHook(f, "claude-code", JSON.stringify(lostPayloads.PreToolUse));
    expect(JSON.parse(again.stdout).hookSpecificOutput?.permissionDecision).toBe("deny");

    const running = await runHook(f, "claude-code", JSON.stringify(before.PreToolUse));
    expect(running.code).toBe(0);
    expect(running.stdout).not.toContain('"deny"');
  } finally {
    await f.dispose();
  }
});

it("A stopped run ends at its next tool call, and its later prompts are refused", async () => {
  const f = new TestFleet({
    enforce: ["error-streak-stops"],
    rules: [{ name: "error-streak-stops", text: ERROR_STREAK_STOPS }],
    config: '[agents]\nlisten = ""',
  });
  await f.start();
  try {
    const payloads = claudeCode(repo, "sess-stop");
    // Two failed tool calls: two tool_use_ids (one id twice would be one call, admitted once).
    for (const p of [
      payloads.SessionStart,
      payloads.PostToolUseFailure,
      { ...payloads.PostToolUseFailure, tool_use_id: "toolu_03" },
    ])
      expect((await runHook(f, "claude-code", JSON.stringify(p))).code).toBe(0);
    await f.until(() => fires(f, { rule: "error-streak-stops" }).length === 1, "the stop");

    const stopped = JSON.parse((await runHook(f, "claude-code", JSON.stringify(payloads.PreToolUse))).stdout);
    expect(stopped.continue).toBe(false);
    expect(stopped.stopReason).toContain("error-streak-stops");
    expect(stopped.hookSpecificOutput?.permissionDecision).toBe("deny");

    const prompt = await runHook(f, "claude-code", JSON.stringify(payloads.UserPromptSubmit));
    expect(JSON.parse(prompt.stdout).continue).toBe(false);
    const closedRow = () =>
      rowsOf(f).find((r) => r.type === "closed" && r.event.run === "impl#sess-stop")?.event;
    await f.until(() => closedRow() !== undefined, "the run's closed row");
    expect(closedRow()).toMatchObject({
      outcome: "cancelled",
      reason: "rule_stop",
      session: "sess-stop",
      hook_fed: true,
    });
  } finally {
    await f.dispose();
  }
});

it("A mixed fleet: a rule stop reaches a hook-fed run at its next hook call, and a supervised run through [supervisor] stop", async () => {
  const f = new TestFleet({
    enforce: ["error-streak-stops"],
    rules: [{ name: "error-streak-stops", text: ERROR_STREAK_STOPS }],
    recordStops: true,
    config: '[agents]\nlisten = ""',
  });
  await f.start();
  try {
    // The supervisor's run: its observer writes the same adapter as the hooks, through Append.
    const supervised = { harness: "nightly", run: "nightly#41", adapter: "claude-code", session: "s-41" };
    const failing = {
      kind: "run_event",
      type: "tool",
      ...supervised,
      tool: "Bash",
      action: "verify",
      is_error: true,
    };
    const opened = await f.cli(
      ["journal", "append", "--token-file", f.tokens.get("ledger") as string],
      jsonl([{ kind: "run_event", type: "opened", ...supervised }]),
    );
    expect(opened.code, opened.stderr).toBe(0);
    const tools = await f.cli(
      ["journal", "append", "--token-file", f.tokens.get("observer") as string],
      jsonl([failing, failing]),
    );
    expect(tools.code, tools.stderr).toBe(0);
    // A hand-run agent with hooks.
    const payloads = claudeCode(repo, "sess-mixed");
    // Two failed tool calls: two tool_use_ids (one id twice would be one call, admitted once).
    for (const p of [
      payloads.SessionStart,
      payloads.PostToolUseFailure,
      { ...payloads.PostToolUseFailure, tool_use_id: "toolu_03" },
    ])
      expect((await runHook(f, "claude-code", JSON.stringify(p))).code).toBe(0);
    await f.until(() => fires(f, { rule: "error-streak-stops" }).length === 2, "both stops");
    await f.until(() => f.stopped().length === 1, "the supervisor's stop");
    expect(f.stopped()[0]?.slice(0, 3)).toEqual(["nightly", "nightly#41", "error-streak-stops"]);

    const stopped = JSON.parse((await runHook(f, "claude-code", JSON.stringify(payloads.PreToolUse))).stdout);
    expect(stopped.continue).toBe(false);
    expect(stopped.hookSpecificOutput?.permissionDecision).toBe("deny");
    await f.until(
      () => rowsOf(f).some((r) => r.type === "closed" && r.event.run === "impl#sess-mixed"),
      "the hook-fed run's closed row",
    );
    // The supervisor was asked to stop its own run only.
    expect(f.stopped().map((a) => a[1])).toEqual(["nightly#41"]);
    expect(actions(f, { action: "stop" }).map((a) => a.state)).toEqual(["ok", "ok"]);
  } finally {
    await f.dispose();
  }
});

it("A producer's Append cannot mark its rows hook-fed", async () => {
  const appended = await fleet.cli(
    ["journal", "append", "--token-file", fleet.tokens.get("observer") as string],
    jsonl([
      {
        kind: "run_event",
        type: "mark",
        harness: "impl",
        run: "impl#forged",
        mark: "turn-end",
        hook_fed: true,
      },
    ]),
  );
  expect(appended.code).not.toBe(0);
  expect(appended.stderr).toContain("hook_fed is set by the daemon's hook ingest, never by a producer");
  expect(rowsOf(fleet).filter((r) => r.event.run === "impl#forged")).toEqual([]);
});
