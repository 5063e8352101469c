/**
 * A third agent joins through the adapter registry alone: "pilot" (`fixture-adapter.ts`, defined in
 * test/) is registered with `AGENTS.with(pilot)` and handed to a real daemon's composition root
 * (`DaemonApp.start({ agents })`), to the CLI's install and to the command forwarder, nothing else
 * changed. It is installed (its settings file written with its events, tokens minted, doctor seeing it),
 * its calls forwarded and ingested as rows of its own, and gated: once a hold is on the harness, a new
 * session's `ask` is refused in pilot's own answer format.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { AGENTS } from "../../../src/shell/agents/adapters/registry.js";
import { runCommandHook } from "../../../src/shell/agents/forwarder/hook-forwarder.js";
import { agentsStatus } from "../../../src/shell/agents/install/agents-status.js";
import { runAgents } from "../../../src/shell/cli/commands/agents.js";
import { AgentsDaemon } from "./agents-daemon.js";
import { pilot } from "./fixture-adapter.js";

/** Two failing tool calls of one harness within an hour hold it. */
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

const agents = AGENTS.with(pilot);
let d: AgentsDaemon;
let project: string;

beforeAll(async () => {
  d = await AgentsDaemon.start({ rules: [FAILURES_HOLD], enforce: ["tool-failures-hold"], agents });
  project = path.join(d.fleet.root, "project");
  fs.mkdirSync(project);
}, 30_000);

afterAll(() => d.dispose());

const lines = () => {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { env: d.fleet.env, out: (l: string) => out.push(l), err: (l: string) => err.push(l) },
  };
};

/** The words after `hook` of the command install wrote for `event` (none of them needs quoting here). */
function installedHook(event: string): string[] {
  const settings = JSON.parse(fs.readFileSync(path.join(project, ".pilot", "hooks.json"), "utf8")) as {
    hooks: Record<string, { hooks: { command: string }[] }[]>;
  };
  const command = settings.hooks[event]?.[0]?.hooks[0]?.command ?? "";
  const words = command.split(" ").map((w) => w.replace(/^'(.*)'$/, "$1"));
  return words.slice(words.indexOf("hook") + 1);
}

/** One hook call of pilot through the forwarder, as the installed command makes it. */
async function call(event: string, payload: Record<string, unknown>) {
  const { out, err, io } = lines();
  const code = await runCommandHook(
    installedHook(event),
    { ...io, stdin: async () => Buffer.from(JSON.stringify({ kind: event, ...payload })) },
    agents,
  );
  return { code, out: out.join(""), err: err.join("\n") };
}

it("a fixture agent registered through the registry alone is installed, ingested and gated end to end", async () => {
  const installed = lines();
  const code = await runAgents(
    "install",
    "pilot",
    { harness: "impl", project },
    installed.io,
    undefined,
    agents,
  );
  expect(code, installed.err.join("\n")).toBe(0);
  expect(installed.out.join("\n")).toContain("pilot hooks for harness impl written to");
  expect(installedHook("tool").slice(0, 3)).toEqual(["pilot", "--harness", "impl"]);
  const [status] = agentsStatus(d.fleet.env, agents).adapters;
  expect(status).toMatchObject({ install: { agent: "pilot", harness: "impl" }, present: 3, expected: 3 });
  // The registry this build knows has no pilot: neither the forwarder nor install takes it.
  expect(
    await runCommandHook(installedHook("tool"), { ...lines().io, stdin: async () => Buffer.from("{}") }),
  ).toBe(1);
  expect(await runAgents("install", "pilot", { harness: "impl", project }, lines().io)).toBe(2);

  expect((await call("start", { sid: "s1" })).code).toBe(0);
  for (const n of [1, 2]) {
    const r = await call("tool", { sid: "s1", tool: "Bash", failed: true, call: `c${n}` });
    expect(r, r.err).toMatchObject({ code: 0, out: "" });
  }
  await d.until(async () => (await d.check("impl", "impl#later")).kind === "held", "the hold on impl");
  const [opened] = d.rows("opened");
  expect(opened).toMatchObject({
    adapter: "pilot",
    run: "impl#s1",
    session: "s1",
    trigger: "pilot",
    hook_fed: true,
  });
  expect(d.rows("tool").map((r) => [r.adapter, r.run, r.tool, r.is_error])).toEqual([
    ["pilot", "impl#s1", "Bash", true],
    ["pilot", "impl#s1", "Bash", true],
  ]);

  const asked = await call("ask", { sid: "s2" });
  expect(asked.code).toBe(0);
  const answer = JSON.parse(asked.out) as { refuse: string };
  expect(answer.refuse).toMatch(
    /^impl is held by rule tool-failures-hold \(fire .+\); run `harness rules clear impl` to release it$/,
  );
  // A session seen before the hold keeps working: only new ones are held.
  expect(await call("ask", { sid: "s1" })).toMatchObject({ code: 0, out: "" });
});

it("the registry refuses an agent whose name or hook is taken, or is not a path segment", () => {
  expect(() => agents.with(pilot)).toThrow("the agent pilot is already registered");
  expect(() => AGENTS.with({ ...pilot, name: "Pilot" })).toThrow('"Pilot" is not an agent name');
  const challenge = { ...pilot.hooks[0], name: "challenge" };
  expect(() => AGENTS.with({ ...pilot, hooks: [challenge] })).toThrow('"challenge" is not a hook name');
});
