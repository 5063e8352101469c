/**
 * A harness's own fail mode (`harness agents install --fail closed|open`): the hooks install writes,
 * run as the agents run them (`/bin/sh -c` with the payload on stdin), against a daemon killed and a
 * daemon hung (SIGSTOP: it accepts connections and never answers). A closed harness's PreToolUse is
 * denied on both paths, an open one's allowed even where the global `[agents] on_unreachable` denies;
 * the settings written carry Claude Code's `onFailure: "block"` on PreToolUse alone, and Codex's none.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, freePort, runProcess, TestFleet } from "../daemon-harness.js";
import { makeRepo } from "./hook-harness.js";
import { claudeCode, codex } from "./payloads.js";

type Handler = Record<string, unknown>;
type Settings = { hooks: Record<string, { hooks: Handler[] }[]> };

let repo: string;
let fleet: TestFleet;
const projects: Record<string, string> = {};

const settingsOf = (agent: "claude-code" | "codex", harness: string): Settings =>
  JSON.parse(
    fs.readFileSync(
      agent === "claude-code"
        ? path.join(projects[harness] as string, ".claude", "settings.local.json")
        : path.join(projects[harness] as string, ".codex", "hooks.json"),
      "utf8",
    ),
  ) as Settings;

const handler = (s: Settings, event: string): Handler => s.hooks[event]?.[0]?.hooks[0] as Handler;

/** The installed PreToolUse command, run as the agent runs it. */
function runInstalled(agent: "claude-code" | "codex", harness: string, payload: string): Promise<CliResult> {
  const command = String(handler(settingsOf(agent, harness), "PreToolUse").command);
  return runProcess("/bin/sh", ["-c", command], { env: fleet.env, stdin: payload });
}

const CASES = [
  { agent: "claude-code", harness: "cc-closed", fail: "closed" },
  { agent: "claude-code", harness: "cc-open", fail: "open" },
  { agent: "codex", harness: "cx-closed", fail: "closed" },
  { agent: "codex", harness: "cx-open", fail: "open" },
] as const;

const payload = (agent: "claude-code" | "codex", session: string): string =>
  JSON.stringify((agent === "claude-code" ? claudeCode : codex)(repo, session).PreToolUse);

/** Every case's PreToolUse at once (a hung daemon makes each wait for its forwarder's timeout). */
async function allPreToolUse(session: string): Promise<Record<string, CliResult>> {
  const results = await Promise.all(
    CASES.map((c) => runInstalled(c.agent, c.harness, payload(c.agent, session))),
  );
  return Object.fromEntries(CASES.map((c, i) => [c.harness, results[i] as CliResult]));
}

function expectFailModes(results: Record<string, CliResult>, why: RegExp): void {
  for (const c of CASES) {
    const r = results[c.harness] as CliResult;
    expect(r.code, c.harness).toBe(0);
    if (c.fail === "open") {
      expect(r.stdout, c.harness).toBe("");
      expect(r.stderr, c.harness).toMatch(/PreToolUse allowed by this harness's fail mode \(--fail open\)/);
    } else {
      const answer = JSON.parse(r.stdout) as { hookSpecificOutput: Record<string, string> };
      expect(answer.hookSpecificOutput, c.harness).toMatchObject({ permissionDecision: "deny" });
      expect(answer.hookSpecificOutput.permissionDecisionReason).toMatch(
        /cannot be reached, and this harness's fail mode \(--fail closed\) refuses tools until it can/,
      );
      expect(r.stderr, c.harness).toMatch(/PreToolUse denied by this harness's fail mode \(--fail closed\)/);
    }
    expect(r.stderr, c.harness).toMatch(why);
  }
}

beforeAll(async () => {
  repo = makeRepo();
  // The global default denies: an open harness must still be allowed, so its own mode is what answers.
  fleet = new TestFleet({
    config: `[agents]\nlisten = "127.0.0.1:${await freePort()}"\non_unreachable = "deny"`,
  });
  await fleet.start();
  for (const c of CASES) {
    const dir = path.join(fleet.root, c.harness);
    fs.mkdirSync(dir);
    projects[c.harness] = dir;
    const r = await fleet.cli([
      "agents",
      "install",
      c.agent,
      "--harness",
      c.harness,
      "--project",
      dir,
      "--fail",
      c.fail,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`(command mode, failing ${c.fail})`);
  }
}, 60_000);

afterAll(async () => {
  await fleet.dispose();
  fs.rmSync(repo, { recursive: true, force: true });
});

describe("A harness fails closed or open as installed", () => {
  it("the settings carry the mode: --fail on every command, onFailure block on Claude Code's PreToolUse only", () => {
    const cc = settingsOf("claude-code", "cc-closed");
    for (const [event, groups] of Object.entries(cc.hooks)) {
      const h = groups[0]?.hooks[0] as Handler;
      expect(String(h.command)).toMatch(/ --fail closed$/);
      if (event === "PreToolUse")
        expect(h).toMatchObject({ type: "command", onFailure: "block", timeout: 10 });
      else expect(h).not.toHaveProperty("onFailure");
    }
    for (const [harness, agent] of [
      ["cc-open", "claude-code"],
      ["cx-closed", "codex"],
      ["cx-open", "codex"],
    ] as const)
      for (const groups of Object.values(settingsOf(agent, harness).hooks))
        expect(groups[0]?.hooks[0], harness).not.toHaveProperty("onFailure");
  });

  it("Claude Code's http hook fails closed through onFailure and the fail query parameter", async () => {
    const dir = path.join(fleet.root, "cc-http");
    fs.mkdirSync(dir);
    projects["cc-http"] = dir;
    const r = await fleet.cli([
      "agents",
      "install",
      "claude-code",
      "--harness",
      "cc-http",
      "--project",
      dir,
      "--mode",
      "http",
      "--fail",
      "closed",
      "--json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ mode: "http", fail: "closed" });
    const pre = handler(settingsOf("claude-code", "cc-http"), "PreToolUse");
    expect(pre).toMatchObject({ type: "http", onFailure: "block" });
    expect(new URL(String(pre.url)).search).toBe("?harness=cc-http&fail=closed");
    expect(handler(settingsOf("claude-code", "cc-http"), "PostToolUse")).not.toHaveProperty("onFailure");
  });

  it("doctor shows each harness's mode", async () => {
    const r = await fleet.cli(["doctor"]);
    for (const c of CASES)
      expect(r.stdout).toContain(`${c.agent} for ${c.harness} (command, fails ${c.fail})`);
  });

  it("install --fail with a mode that is neither closed nor open is refused, nothing written", async () => {
    const r = await fleet.cli([
      "agents",
      "install",
      "codex",
      "--harness",
      "cx-bad",
      "--project",
      fleet.root,
      "--fail",
      "maybe",
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--fail must be closed or open");
    expect(fs.existsSync(path.join(fleet.root, ".codex", "hooks.json"))).toBe(false);
  });

  it("Fail closed denies while the daemon is down, fail open allows", async () => {
    // Up: every harness's call is answered by the rules, whatever its mode.
    const up = await allPreToolUse("sess-up");
    for (const c of CASES)
      expect(up[c.harness], c.harness).toMatchObject({ code: 0, stdout: "", stderr: "" });

    // Hung: the daemon accepts and never answers; each forwarder gives up at its timeout (5 s).
    fleet.signal("SIGSTOP");
    try {
      expectFailModes(await allPreToolUse("sess-hung"), /the daemon cannot be reached at /);
    } finally {
      fleet.signal("SIGCONT");
    }

    // Killed: nothing listens.
    await fleet.kill();
    expectFailModes(await allPreToolUse("sess-killed"), /the daemon cannot be reached at /);
  }, 60_000);
});
