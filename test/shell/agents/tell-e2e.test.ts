/**
 * The agent hears the rules, end to end through the hooks as `harness agents install` writes them: real
 * `harness hook claude-code|codex` processes against a real daemon (the command path), and the daemon's
 * http hook endpoint (the http path). Two sessions of one project (one harness) editing one file collide;
 * the session whose edit started the collision is told, once, in the next answer that can carry
 * context, which other runs hold the file, fenced as untrusted data; a shadow fire is never told.
 * The answers are checked in the shapes the agents document: `hookSpecificOutput.additionalContext`
 * beside its `hookEventName`, at the events each agent takes it (Codex rejects it on PreToolUse).
 */
import * as fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOLD_PREAMBLE, TOLD_SOURCE } from "../../../src/shell/agents/enforcement/told-text.js";
import { readTokenFile } from "../../../src/shell/rpc/credentials.js";
import { fires, journalRows, toldFires } from "../../support/store-reads.js";
import { TestFleet } from "../daemon-harness.js";
import { AgentsDaemon } from "./agents-daemon.js";
import { makeRepo, runHook } from "./hook-harness.js";
import { claudeCode, codex } from "./payloads.js";

const REPO = "forge.example/org/reduit";

/** Annotates the run on every edit, in its shadow week (`shadow_period = "7d"`): it fires, never acts. */
const SHADOW_RULE = {
  name: "edit-watch",
  text: `name = "edit-watch"
description = "A rule still in its shadow week: annotates the run on each edit."
on = "run_event"
when = '''
event.type == "tool" && event.action == "edit"
'''
level = "annotate"
cooldown = "1m"
target = "run"
message = "{{run}} edited {{path}}"
`,
};

type Agent = "claude-code" | "codex";
type Send = (agent: Agent, payload: Record<string, unknown>) => Promise<string>;

/** A Claude Code edit of `file`, or a Codex `apply_patch` of it, by session `id`. */
function edit(agent: Agent, repo: string, id: string, file: string): Record<string, unknown> {
  if (agent === "claude-code") {
    const p = claudeCode(repo, id).PostToolUse;
    return { ...p, tool_input: { ...p.tool_input, file_path: `${repo}/${file}` }, tool_use_id: `t-${file}` };
  }
  const patch = ["*** Begin Patch", `*** Update File: ${file}`, "@@", "-a", "+b", "*** End Patch"].join("\n");
  return { ...codex(repo, id).PostToolUse, tool_input: { command: patch }, tool_use_id: `c-${file}` };
}

const events = (agent: Agent, repo: string, id: string) =>
  agent === "claude-code" ? claudeCode(repo, id) : codex(repo, id);

/** The answer's context for the model, as both agents read it, or undefined when it carries none. */
function contextOf(answer: string): { event: string; text: string } | undefined {
  if (answer === "") return undefined;
  const out = JSON.parse(answer).hookSpecificOutput;
  return typeof out?.additionalContext === "string"
    ? { event: out.hookEventName, text: out.additionalContext }
    : undefined;
}

/** The fenced data in a told text: our sentence, then the untrusted-data wrapper's JSON. */
function toldData(text: string) {
  expect(text.startsWith(TOLD_PREAMBLE)).toBe(true);
  const wrapped = JSON.parse(text.slice(TOLD_PREAMBLE.length)).harness_memory_data;
  expect(wrapped).toMatchObject({ version: 1, source: TOLD_SOURCE, trust: "untrusted" });
  return wrapped.data as { run: string; fires: Record<string, unknown>[] };
}

const until = async (done: () => boolean, what: string) => {
  const start = Date.now();
  while (!done()) {
    if (Date.now() - start > 10_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

/**
 * Two sessions of `agent` in one project (one harness) edit `file`: the second edit starts a collision
 * naming both runs, the starter rule fires for the run that started it, and the first session's end ends it
 * (for Claude Code: Codex has no SessionEnd).
 */
async function twoSessionsCollide(
  store: Parameters<typeof fires>[0],
  send: Send,
  agent: Agent,
  repo: string,
  file: string,
): Promise<void> {
  const [a, b] = [`${agent}-${file}-a`, `${agent}-${file}-b`];
  for (const id of [a, b]) await send(agent, events(agent, repo, id).SessionStart);
  for (const id of [a, b]) await send(agent, edit(agent, repo, id, file));
  const collisions = (type: string) =>
    journalRows(store, { kind: "graph_event", type })
      .map((r) => r.event)
      .filter((e) => e.path === file);
  await until(
    () => fires(store, { rule: "same-file-collision", run: `impl#${b}` }).length === 1,
    "same-file-collision",
  );
  expect(collisions("collision_started")).toEqual([
    {
      type: "collision_started",
      scope: "file",
      repo: REPO,
      branch: "feature",
      path: file,
      harness: "impl",
      run: `impl#${b}`,
      harnesses: ["impl"],
      runs: [`impl#${a}`, `impl#${b}`],
    },
  ]);
  expect(fires(store, { rule: "same-file-collision", run: `impl#${b}` })).toMatchObject([
    { harness: "impl", mode: "active", action: "annotate" },
  ]);
  // The session that ends its edits ends the collision: fewer than two runs hold the file. Codex sends no
  // SessionEnd (its runs close when they go quiet, `[agents] stale_after`).
  if (agent === "codex") return;
  await send(agent, claudeCode(repo, a).SessionEnd);
  await until(() => collisions("collision_ended").length === 1, "collision_ended");
  expect(collisions("collision_ended")[0]).toMatchObject({
    run: `impl#${a}`,
    harnesses: ["impl"],
    runs: [`impl#${b}`],
  });
}

/**
 * Two sessions of `agent` edit `file`; the second is told, at its next call that can carry context, that
 * the first holds the file, and then never again; the first is told nothing.
 */
async function secondEditorIsTold(
  store: Parameters<typeof fires>[0],
  send: Send,
  agent: Agent,
  repo: string,
  file: string,
): Promise<void> {
  const [first, second] = [`${agent}-${file}-1`, `${agent}-${file}-2`];
  for (const id of [first, second]) expect(await send(agent, events(agent, repo, id).SessionStart)).toBe("");
  expect(await send(agent, edit(agent, repo, first, file))).toBe("");
  expect(await send(agent, edit(agent, repo, second, file))).toBe("");
  const run = `impl#${second}`;
  await until(() => fires(store, { rule: "same-file-collision", run }).length === 1, "the collision's fire");
  const fire = fires(store, { rule: "same-file-collision", run })[0];

  const next = events(agent, repo, second);
  if (agent === "codex") {
    // Codex rejects additionalContext on PreToolUse: the fire waits for the prompt.
    expect(await send(agent, next.PreToolUse)).toBe("");
  }
  const carrier = agent === "codex" ? next.UserPromptSubmit : next.PreToolUse;
  const told = contextOf(await send(agent, carrier));
  expect(told?.event).toBe(carrier.hook_event_name);
  const data = toldData(told?.text as string);
  expect(data).toEqual({
    run,
    fires: [
      {
        rule: "same-file-collision",
        level: "annotate",
        fire: fire?.fire_id,
        message: `${run} started a collision on ${file} in ${REPO}`,
        other_runs_editing_the_file: [`impl#${first}`],
        repo: REPO,
        path: file,
        branch: "feature",
      },
    ],
  });
  expect(toldFires(store, run).map((t) => t.fire_id)).toEqual([fire?.fire_id]);
  // Once: the next answers carry nothing, and the first editor was never told.
  expect(await send(agent, carrier)).toBe("");
  expect(await send(agent, next.UserPromptSubmit)).toBe("");
  expect(await send(agent, events(agent, repo, first).UserPromptSubmit)).toBe("");
  expect(toldFires(store, `impl#${first}`)).toEqual([]);
}

/** One session of `agent` edits `file`: the shadow rule fires, and no answer tells it. */
async function shadowIsNeverTold(
  store: Parameters<typeof fires>[0],
  send: Send,
  agent: Agent,
  repo: string,
  file: string,
): Promise<void> {
  const id = `${agent}-${file}-shadow`;
  const run = `impl#${id}`;
  expect(await send(agent, events(agent, repo, id).SessionStart)).toBe("");
  expect(await send(agent, edit(agent, repo, id, file))).toBe("");
  await until(() => fires(store, { rule: "edit-watch", run }).length === 1, "the shadow fire");
  expect(fires(store, { rule: "edit-watch", run })[0]).toMatchObject({
    mode: "shadow",
    effective_level: "annotate",
  });
  const next = events(agent, repo, id);
  for (const p of [next.PreToolUse, next.UserPromptSubmit, edit(agent, repo, id, `${file}.2`)])
    expect(await send(agent, p)).toBe("");
  expect(toldFires(store, run)).toEqual([]);
}

describe("the command path (harness hook)", () => {
  let fleet: TestFleet;
  let repo: string;
  const send: Send = async (agent, payload) => {
    const r = await runHook(fleet, agent, JSON.stringify(payload));
    expect(r.code, r.stderr).toBe(0);
    return r.stdout;
  };

  beforeAll(async () => {
    repo = makeRepo();
    fleet = new TestFleet({ rules: [SHADOW_RULE], shadowPeriod: "7d", config: '[agents]\nlisten = ""' });
    await fleet.start();
  }, 30_000);

  afterAll(async () => {
    await fleet.dispose();
    fs.rmSync(repo, { recursive: true, force: true });
  });

  it("Two sessions of one project collide", async () => {
    await twoSessionsCollide(fleet, send, "claude-code", repo, "src/both-cc.ts");
    await twoSessionsCollide(fleet, send, "codex", repo, "src/both-cx.ts");
  });

  it("The second editor is told who else edits the file", async () => {
    await secondEditorIsTold(fleet, send, "claude-code", repo, "src/told-cc.ts");
    await secondEditorIsTold(fleet, send, "codex", repo, "src/told-cx.ts");
  });

  it("A shadow fire is never told", async () => {
    await shadowIsNeverTold(fleet, send, "claude-code", repo, "src/shadow-cc.ts");
    await shadowIsNeverTold(fleet, send, "codex", repo, "src/shadow-cx.ts");
  });
});

describe("the http path (the daemon's hook endpoint)", () => {
  let d: AgentsDaemon;
  let repo: string;
  let tokens: { observer: string; ledger: string };
  const send: Send = async (agent, payload) => {
    const res = await fetch(`${d.app.hooksUrl}${agent}?harness=impl`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.observer}`, "x-harness-ledger-token": tokens.ledger },
      body: JSON.stringify(payload),
    });
    expect(res.status).toBe(200);
    return res.text();
  };

  beforeAll(async () => {
    repo = makeRepo();
    d = await AgentsDaemon.start({
      rules: [SHADOW_RULE],
      shadowPeriod: "7d",
      config: '[agents]\nlisten = "127.0.0.1:0"',
    });
    tokens = {
      observer: await readTokenFile(d.fleet.tokens.get("observer") as string),
      ledger: await readTokenFile(d.fleet.tokens.get("ledger") as string),
    };
  }, 30_000);

  afterAll(async () => {
    await d.dispose();
    fs.rmSync(repo, { recursive: true, force: true });
  });

  it("Two sessions of one project collide", async () => {
    await twoSessionsCollide(d, send, "claude-code", repo, "src/both-cc.ts");
    await twoSessionsCollide(d, send, "codex", repo, "src/both-cx.ts");
  });

  it("The second editor is told who else edits the file", async () => {
    await secondEditorIsTold(d, send, "claude-code", repo, "src/told-cc.ts");
    await secondEditorIsTold(d, send, "codex", repo, "src/told-cx.ts");
  });

  it("A shadow fire is never told", async () => {
    await shadowIsNeverTold(d, send, "claude-code", repo, "src/shadow-cc.ts");
    await shadowIsNeverTold(d, send, "codex", repo, "src/shadow-cx.ts");
  });
});
