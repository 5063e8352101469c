/**
 * A run's life, once, end to end through the installed hooks: real `harness hook` processes (the
 * command path) and the daemon's http endpoint, for Claude Code and Codex, against a real daemon whose
 * enforced stop rule stops a run at its first edit. A stopped run is closed once, refuses every row after
 * its close, and its session comes back as a new run only after `harness rules resume <run>`.
 */
import * as fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentRunStops } from "../../support/store-reads.js";
import { TestFleet } from "../daemon-harness.js";
import { makeRepo, rowsOf, runHook } from "./hook-harness.js";
import { claudeCode, codex } from "./payloads.js";

const EDIT_STOPS = `name = "edit-stops"
description = "A run edited a file; stop it."
on = "run_event"
when = 'event.type == "tool" && event.action == "edit"'
level = "stop"
cooldown = "1m"
target = "run"
message = "{{run}} edited a file"
`;

let fleet: TestFleet;
let repo: string;
let hooksUrl: string;
let tokens: { observer: string; ledger: string };

beforeAll(async () => {
  repo = makeRepo();
  fleet = new TestFleet({
    enforce: ["edit-stops"],
    rules: [{ name: "edit-stops", text: EDIT_STOPS }],
    config: '[agents]\nlisten = "127.0.0.1:0"',
  });
  const started = await fleet.start();
  hooksUrl = /hooks (http:\S+)/.exec(started)?.[1] as string;
  const read = (s: "observer" | "ledger") => fs.readFileSync(fleet.tokens.get(s) as string, "utf8").trim();
  tokens = { observer: read("observer"), ledger: read("ledger") };
}, 30_000);

afterAll(async () => {
  await fleet.dispose();
  fs.rmSync(repo, { recursive: true, force: true });
});

type Agent = "claude-code" | "codex";
type Path = "command" | "http";

/** One hook call of `agent` by `path`: what the agent reads on stdout. */
async function call(agent: Agent, path: Path, payload: object): Promise<string> {
  if (path === "command") {
    const r = await runHook(fleet, agent, JSON.stringify(payload));
    expect(r.code, r.stderr).toBe(0);
    return r.stdout;
  }
  const res = await fetch(`${hooksUrl}${agent}?harness=impl`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.observer}`, "x-harness-ledger-token": tokens.ledger },
    body: JSON.stringify(payload),
  });
  expect(res.status).toBe(200);
  return res.text();
}

const payloadsOf = (agent: Agent, session: string) =>
  agent === "claude-code" ? claudeCode(repo, session) : codex(repo, session);

/** The PreToolUse answer's refusal text, in either agent's format. */
const refusal = (stdout: string): string => {
  const a = JSON.parse(stdout);
  return a.stopReason ?? a.hookSpecificOutput?.permissionDecisionReason ?? "";
};

/** A session whose first edit stopped it, the stop delivered by its next PreToolUse. */
async function stopped(agent: Agent, path: Path, session: string) {
  const p = payloadsOf(agent, session);
  const run = `impl#${session}`;
  await call(agent, path, p.SessionStart);
  await call(agent, path, p.PostToolUse);
  await fleet.until(() => agentRunStops(fleet).some((s) => s.run === run), "the stop");
  const answer = await call(agent, path, p.PreToolUse);
  expect(refusal(answer)).toContain(`harness rules resume ${run}`);
  expect(answer).toContain('"deny"');
  await fleet.until(() => rowsOf(fleet, session).some((r) => r.type === "closed"), "the closed row");
  return { p, run };
}

const cases: [Agent, Path][] = [
  ["claude-code", "command"],
  ["claude-code", "http"],
  ["codex", "command"],
  ["codex", "http"],
];

describe.each(cases)("%s, %s path", (agent, path) => {
  it("A released session resumes as a new run", async () => {
    const session = `sess-resume-${agent}-${path}`;
    const { p, run } = await stopped(agent, path, session);
    const resume = { ...p.SessionStart, source: "resume" };

    // Not released: the session's start is refused and recorded nowhere.
    await call(agent, path, resume);
    expect(refusal(await call(agent, path, p.PreToolUse))).toContain(`harness rules resume ${run}`);
    expect(rowsOf(fleet, session).filter((r) => r.type === "opened")).toHaveLength(1);

    if (path === "command") {
      // `harness rules resume`: the stop is released; its fire's hold on the harness is not.
      const released = await fleet.cli(["rules", "resume", run]);
      expect(released.code, released.stderr).toBe(0);
      expect(released.stdout).toContain(`released ${run}`);
      expect(await call(agent, path, resume)).not.toContain("continue");
      // A new run, first seen now: the stop's hold holds it, as it holds every new session.
      expect(refusal(await call(agent, path, p.PreToolUse))).toContain("harness rules clear impl");
      expect((await fleet.cli(["rules", "clear", "impl"])).code).toBe(0);
    } else {
      // `harness rules clear`: the fire's hold released, and the stops that fire made with it.
      expect((await fleet.cli(["rules", "clear", "impl"])).code).toBe(0);
      expect(await call(agent, path, resume)).not.toContain("continue");
    }
    // The new run's calls are its own.
    expect(await call(agent, path, p.PreToolUse)).not.toContain('"deny"');
    const rows = rowsOf(fleet, session);
    expect(rows.filter((r) => r.type === "opened").map((r) => r.event.run)).toEqual([run, `${run}~2`]);
    expect(rows.filter((r) => r.type === "closed").map((r) => r.event.run)).toEqual([run]);
  });

  it("A closed run gets no second close", async () => {
    const session = `sess-close-${agent}-${path}`;
    const { p, run } = await stopped(agent, path, session);
    const closedAt = rowsOf(fleet, session).find((r) => r.type === "closed")?.seq as number;

    // The agent goes on talking to a closed run: its prompt, its turn's end, its session's end.
    await call(agent, path, p.UserPromptSubmit);
    await call(agent, path, p.Stop);
    await call(agent, path, { ...p.PostToolUse, tool_use_id: "toolu_late" });
    if ("SessionEnd" in p) await call(agent, path, p.SessionEnd);
    await call(agent, path, p.PreToolUse);

    const rows = rowsOf(fleet, session);
    expect(rows.filter((r) => r.type === "closed")).toMatchObject([
      { event: { run, outcome: "cancelled", reason: "rule_stop" } },
    ]);
    expect(rows.filter((r) => r.seq > closedAt)).toEqual([]);
  });
});
