/**
 * The command hook when the daemon cannot be reached: its calls wait in the spool and are delivered,
 * in order, before the next call's own; PreToolUse is allowed, or denied under
 * `[agents] on_unreachable = "deny"`.
 */
import * as fs from "node:fs";
import * as http from "node:http";
import * as path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Spool } from "../../../src/shell/agents/forwarder/spool.js";
import { TestFleet } from "../daemon-harness.js";
import { makeRepo, rowsOf, runHook } from "./hook-harness.js";
import { claudeCode, codex } from "./payloads.js";

let repo: string;
const fleets: TestFleet[] = [];
const fleetWith = (config: string) => {
  const f = new TestFleet({ config });
  fleets.push(f);
  return f;
};
const spoolOf = (f: TestFleet) => new Spool(path.join(f.root, "state", "harness", "agents", "spool"));

beforeAll(() => {
  repo = makeRepo();
});
afterEach(async () => {
  for (const f of fleets.splice(0)) await f.dispose();
});
afterAll(() => fs.rmSync(repo, { recursive: true, force: true }));

describe("The daemon is down and nothing is lost", () => {
  it("calls made while it is down are delivered in order, before the next call's own row", async () => {
    const fleet = fleetWith('[agents]\nlisten = ""');
    const p = claudeCode(repo, "sess-down");
    // Never started: the socket does not exist.
    for (const event of ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"] as const) {
      const r = await runHook(fleet, "claude-code", JSON.stringify(p[event]));
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(
        event === "PreToolUse"
          ? /^harness hook: the daemon cannot be reached at .*; PreToolUse allowed by \[agents\] on_unreachable = "allow"\n$/
          : /^harness hook: the daemon cannot be reached at .*; the call waits in .*spool for the next call that reaches it\n$/,
      );
    }
    const spool = spoolOf(fleet);
    expect(spool.entries()).toHaveLength(4);
    // The spool keeps only what a row is built from: no prompt, no tool output.
    for (const name of spool.entries()) {
      const text = fs.readFileSync(path.join(spool.dir, name), "utf8");
      expect(text).not.toContain("SECRET");
      expect(fs.statSync(path.join(spool.dir, name)).mode & 0o777).toBe(0o600);
    }

    await fleet.start();
    const r = await runHook(fleet, "claude-code", JSON.stringify(p.SessionEnd));
    expect(r).toMatchObject({ code: 0, stdout: "", stderr: "" });
    await fleet.until(() => rowsOf(fleet, "sess-down").length === 5, "the five rows");
    const rows = rowsOf(fleet, "sess-down");
    expect(
      rows.map((row) => [row.event.type, row.event.mark ?? row.event.action ?? row.event.outcome]),
    ).toEqual([
      ["opened", undefined],
      ["mark", "user-message"],
      ["tool", "edit"],
      ["mark", "turn-end"],
      ["closed", "success"],
    ]);
    // Spooled rows carry the time the hook received them; the live row is timed by its admission.
    expect(rows.slice(0, 4).every((row) => typeof row.event.at === "number")).toBe(true);
    expect(rows[4]?.event.at).toBeUndefined();
    expect(rows[2]?.event.paths).toEqual(["src/a.ts"]);
    expect(spool.entries()).toEqual([]);
  });

  it("a daemon without the hook endpoint (404) is treated as unreachable: the call waits", async () => {
    // A daemon built before the hook endpoint answers its path 404, as any server does a path it lacks.
    const fleet = new TestFleet({ config: '[agents]\nlisten = ""' });
    fleets.push(fleet);
    const older = http.createServer((_req, res) => res.writeHead(404).end("not found"));
    await new Promise<void>((resolve) => older.listen(fleet.socketPath, resolve));
    try {
      // A generous bound: the 404 server shares this worker, and under load the default 5 s can pass
      // before it answers, which would be "cannot be reached", not the 404 this test is about.
      const r = await runHook(fleet, "claude-code", JSON.stringify(claudeCode(repo, "sess-404").Stop), [
        "--timeout",
        "30000",
      ]);
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/^harness hook: the daemon answered HTTP 404; the call waits in .*spool/);
      expect(spoolOf(fleet).entries()).toHaveLength(1);
    } finally {
      await new Promise((resolve) => older.close(resolve));
    }
  });

  it("a payload that can never be a row is not spooled: a clear line, the tool runs", async () => {
    const fleet = fleetWith('[agents]\nlisten = ""');
    for (const body of ["{}", "not json", '{"session_id": "s"}']) {
      const r = await runHook(fleet, "claude-code", body);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(
        /^harness hook: the payload (is not a JSON object|has no string (session_id|hook_event_name)), and the daemon cannot be reached at .*; not recorded, the tool runs\n$/,
      );
    }
    expect(spoolOf(fleet).entries()).toEqual([]);
  });

  it("a full spool counts what it drops in its overflow file", async () => {
    const fleet = fleetWith('[agents]\nlisten = ""');
    const spool = spoolOf(fleet);
    fs.mkdirSync(spool.dir, { recursive: true, mode: 0o700 });
    const entry = JSON.stringify({
      v: 1,
      adapter: "claude-code",
      harness: "impl",
      observer_token_file: fleet.tokens.get("observer"),
      ledger_token_file: fleet.tokens.get("ledger"),
      at: 1,
      payload: claudeCode(repo, "sess-queued").Stop,
    });
    for (let i = 0; i < 1000; i++)
      fs.writeFileSync(path.join(spool.dir, `${String(i).padStart(15, "0")}-1-${i}.json`), entry, {
        mode: 0o600,
      });
    const r = await runHook(fleet, "claude-code", JSON.stringify(claudeCode(repo, "sess-full").Stop));
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/the spool .* is full; the call is dropped and counted in its overflow file\n$/);
    expect(spool.overflowCount()).toBe(1);
    expect(spool.entries()).toHaveLength(1000);
  });
});

describe("Deny when unreachable", () => {
  it('on_unreachable = "deny": PreToolUse is denied with a reason, in each agent\'s format', async () => {
    const fleet = fleetWith('[agents]\nlisten = ""\non_unreachable = "deny"');
    const cc = await runHook(fleet, "claude-code", JSON.stringify(claudeCode(repo, "sess-deny").PreToolUse), [
      "--timeout",
      "500",
    ]);
    expect(cc.code).toBe(0);
    const answer = JSON.parse(cc.stdout) as { hookSpecificOutput: Record<string, string> };
    expect(answer.hookSpecificOutput).toMatchObject({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
    });
    expect(answer.hookSpecificOutput.permissionDecisionReason).toMatch(/on_unreachable = "deny"/);
    expect(cc.stderr).toMatch(/PreToolUse denied by \[agents\] on_unreachable/);

    const cx = await runHook(fleet, "codex", JSON.stringify(codex(repo, "sess-deny").PreToolUse));
    const codexAnswer = JSON.parse(cx.stdout) as Record<string, unknown>;
    expect(codexAnswer).not.toHaveProperty("continue");
    expect(codexAnswer).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });

    // Only tools are refused: a prompt or a tool's result still goes on, and is spooled.
    const post = await runHook(
      fleet,
      "claude-code",
      JSON.stringify(claudeCode(repo, "sess-deny").PostToolUse),
    );
    expect(post).toMatchObject({ code: 0, stdout: "" });
  });

  it("the default allows, and a reachable daemon's answer is not affected by the setting", async () => {
    const down = fleetWith('[agents]\nlisten = ""');
    const r = await runHook(down, "claude-code", JSON.stringify(claudeCode(repo, "sess-allow").PreToolUse));
    expect(r).toMatchObject({ code: 0, stdout: "" });

    const up = fleetWith('[agents]\nlisten = ""\non_unreachable = "deny"');
    await up.start();
    const live = await runHook(up, "claude-code", JSON.stringify(claudeCode(repo, "sess-allow").PreToolUse));
    expect(live).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });
});
