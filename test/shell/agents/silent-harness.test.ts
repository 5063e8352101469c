/**
 * Seeing the flow, the rest, end to end against a real daemon with the built CLI: doctor names an
 * installed harness that has sent nothing since install (Codex's trust step said), until one hook call
 * arrives; install prints Codex's `notify` line (which, run as Codex runs it, records a turn end) and
 * leaves the operator's config.toml alone; Claude Code subagent calls give rows carrying the subagent's
 * id and type; Codex's SessionEnd closes its run.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "smol-toml";
import { afterAll, beforeAll, expect, it } from "vitest";
import { journalRows } from "../../support/store-reads.js";
import { TestFleet } from "../daemon-harness.js";
import { makeRepo, rowsOf, runHook } from "./hook-harness.js";
import { claudeCode, codex, codexNotify } from "./payloads.js";

let fleet: TestFleet;
let repo: string;
let project: string;

beforeAll(async () => {
  repo = makeRepo();
  fleet = new TestFleet({ config: '[agents]\nlisten = ""' });
  project = path.join(fleet.root, "project");
  fs.mkdirSync(project, { recursive: true });
  await fleet.start();
}, 30_000);

afterAll(async () => {
  await fleet.dispose();
  fs.rmSync(repo, { recursive: true, force: true });
});

const TRUST =
  "Codex runs project and user hooks only once trusted: open /hooks in Codex and trust them; `codex exec` skips untrusted hooks silently";

it("A harness that never sent a row is named by doctor", async () => {
  const install = await fleet.cli(["agents", "install", "codex", "--harness", "impl", "--project", project]);
  expect(install.code, install.stderr).toBe(0);
  const installedAt = (
    JSON.parse(
      fs.readFileSync(path.join(fleet.root, "state", "harness", "agents", "installs.json"), "utf8"),
    ) as { installs: { installedAt: string }[] }
  ).installs[0]?.installedAt;
  expect(installedAt).toMatch(/^\d{4}-/);
  const silent = await fleet.cli(["doctor"]);
  expect(silent.stdout).toContain(
    ` warn: codex for impl: no row since install at ${installedAt}; ${TRUST}\n`,
  );

  // One hook call of that harness: doctor no longer warns of it.
  const r = await runHook(fleet, "codex", JSON.stringify(codex(repo, "sess-silent").SessionStart));
  expect(r.code, r.stderr).toBe(0);
  await fleet.until(() => rowsOf(fleet, "sess-silent").length === 1, "the opened row");
  const heard = await fleet.cli(["doctor"]);
  expect(heard.stdout).not.toContain("no row since install");
  expect(heard.stdout).toMatch(/ pass: impl: last row seq \d+ run_event\/opened from ledger \(codex\)/);
});

it("Codex: install writes SessionEnd and prints the notify line, never editing the operator's config.toml", async () => {
  const hooksFile = path.join(project, ".codex", "hooks.json");
  const hooks = (JSON.parse(fs.readFileSync(hooksFile, "utf8")) as { hooks: Record<string, unknown> }).hooks;
  expect(Object.keys(hooks)).toContain("SessionEnd");
  const config = path.join(project, ".codex", "config.toml");
  const printed = await fleet.cli(["agents", "install", "codex", "--harness", "impl", "--project", project]);
  const line =
    /^ {2}note: to record each turn's end through Codex's notify program as well, add this line to (\S+), above its first \[table\] \(install does not edit TOML files\): (notify = .*)$/m.exec(
      printed.stdout,
    );
  expect(line?.[1]).toBe(config);
  expect(fs.existsSync(config)).toBe(false);
  // The printed line is TOML whose argv runs our notify hook, no token on it.
  const argv = (parse(line?.[2] ?? "") as { notify: string[] }).notify;
  expect(argv.slice(argv.indexOf("hook"), argv.indexOf("hook") + 3)).toEqual([
    "hook",
    "codex-notify",
    "--harness",
  ]);
  expect(argv.join(" ")).not.toContain(fleet.tokens.get("observer") as string);
  // Run as Codex runs it, the turn's JSON its last argument: a turn-end mark of this harness.
  const ran = spawnSync(
    argv[0] as string,
    [...argv.slice(1), JSON.stringify(codexNotify(repo, "sess-notify"))],
    {
      env: fleet.env,
      encoding: "utf8",
    },
  );
  expect(ran.status, ran.stderr).toBe(0);
  await fleet.until(() => rowsOf(fleet, "sess-notify").length === 1, "the notify's row");
  expect(rowsOf(fleet, "sess-notify")[0]?.event).toMatchObject({
    harness: "impl",
    mark: "turn-end",
    adapter: "codex",
  });

  // The operator added it: install says it is there.
  const theirs = '# mine\nmodel = "gpt-5"\n\n[tui]\nnotifications = true\n';
  fs.writeFileSync(config, `${line?.[2]}\n${theirs}`);
  const same = await fleet.cli(["agents", "install", "codex", "--harness", "impl", "--project", project]);
  expect(same.stdout).toContain(`note: ${config} already runs codex-notify for harness impl`);

  // A notify program of the operator's own is reported, and the file left byte for byte.
  const own = `notify = ["notify-send", "codex"]\n${theirs}`;
  fs.writeFileSync(config, own);
  const other = await fleet.cli(["agents", "install", "codex", "--harness", "impl", "--project", project]);
  expect(other.stdout).toContain(
    `note: ${config} already sets notify = ["notify-send","codex"]; Codex runs one notify program, so ours is not added (install never edits that file): keep yours, or replace it with: notify = [`,
  );
  expect(fs.readFileSync(config, "utf8")).toBe(own);
});

it("Codex's SessionEnd closes its run", async () => {
  const p = codex(repo, "sess-cx-end");
  for (const payload of [
    p.SessionStart,
    { ...p.SessionStart, hook_event_name: "SessionEnd", reason: "other" },
  ]) {
    const r = await runHook(fleet, "codex", JSON.stringify(payload));
    expect(r.code, r.stderr).toBe(0);
  }
  await fleet.until(() => rowsOf(fleet, "sess-cx-end").length === 2, "the opened and closed rows");
  expect(rowsOf(fleet, "sess-cx-end").map((r) => [r.type, r.source, r.event.outcome])).toEqual([
    ["opened", "ledger", undefined],
    ["closed", "ledger", "interrupted"],
  ]);
});

it("rows of a Claude Code subagent carry its id and type; the parent's carry neither", async () => {
  const p = claudeCode(repo, "sess-sub");
  const inside = { agent_id: "agent-7", agent_type: "Explore" };
  const calls = [
    p.SessionStart,
    p.SubagentStart,
    { ...p.PreToolUse, ...inside },
    { ...p.PostToolUse, ...inside },
    // Not an identifier the journal can hold: left out, the row still recorded.
    { ...p.PostToolUseFailure, agent_id: "x".repeat(300), agent_type: "Plan\u001b[31m" },
    p.Stop,
  ];
  for (const payload of calls) {
    const r = await runHook(fleet, "claude-code", JSON.stringify(payload));
    expect(r.code, r.stderr).toBe(0);
  }
  await fleet.until(() => rowsOf(fleet, "sess-sub").length === 5, "the run's rows");
  expect(
    rowsOf(fleet, "sess-sub").map((r) => [
      r.type,
      r.event.mark ?? r.event.tool,
      r.event.subagent_id,
      r.event.subagent_type,
    ]),
  ).toEqual([
    ["opened", undefined, undefined, undefined],
    ["mark", "subagent", "agent-7", "Explore"],
    ["tool", "Edit", "agent-7", "Explore"],
    ["tool", "Bash", undefined, undefined],
    ["mark", "turn-end", undefined, undefined],
  ]);
  const attempts = journalRows(fleet, { kind: "attempt_event" }).filter(
    (r) => r.event.session === "sess-sub",
  );
  expect(attempts.map((r) => [r.event.subagent_id, r.event.subagent_type])).toEqual([["agent-7", "Explore"]]);
});
