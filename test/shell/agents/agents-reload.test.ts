/**
 * The reload matrix (issue 16) for the keys issue 17 added: `[graph] project_file_edges`, `[agents]
 * verify_patterns`, `stale_after` and `tell` are read from the config in force at each row, hook call or
 * tick, so a reload applies them to the next one; `[agents] listen` is a listening address and is named as
 * needing a restart.
 */
import * as fs from "node:fs";
import * as http from "node:http";
import * as path from "node:path";
import { afterEach, expect, it } from "vitest";
import { AgentsDaemon, session } from "./agents-daemon.js";
import { claudeCode } from "./payloads.js";

const daemons: AgentsDaemon[] = [];
afterEach(async () => {
  for (const d of daemons.splice(0)) await d.dispose();
});

const configFile = (d: AgentsDaemon) => path.join(d.fleet.root, "config", "harness", "harness.toml");
const appendConfig = (d: AgentsDaemon, lines: string) =>
  fs.writeFileSync(configFile(d), `${fs.readFileSync(configFile(d), "utf8")}\n${lines}\n`);

it("a [graph] project_file_edges turned off by a reload derives no edge from the next rows", async () => {
  const d = await AgentsDaemon.start();
  daemons.push(d);
  const impl = session("impl", "s1");
  const review = session("review", "s2");
  await d.hookRows("ledger", [impl.opened(), review.opened()]);
  await d.hookRows("observer", [impl.edit("a.go")]);
  await d.settled();
  expect(d.rows("edge_added", "graph_event")).toHaveLength(1);

  appendConfig(d, "[graph]\nproject_file_edges = false");
  await d.app.reload();
  await d.hookRows("observer", [review.edit("a.go"), impl.edit("b.go")]);
  await d.settled();
  expect(d.rows("edge_added", "graph_event")).toHaveLength(1);
  expect(d.rows("collision_started", "graph_event")).toEqual([]);
});

it("an [agents] listen changed by a reload is named as needing a restart", async () => {
  const d = await AgentsDaemon.start({ config: '[agents]\nlisten = "127.0.0.1:0"' });
  daemons.push(d);
  fs.writeFileSync(
    configFile(d),
    fs.readFileSync(configFile(d), "utf8").replace(/^listen = "127\.0\.0\.1:0"$/m, 'listen = ""'),
  );
  const r = await d.app.reload();
  expect(r.needsRestart).toEqual(["agents.listen"]);
});

/** A Claude Code PostToolUse of Bash `command`, posted to the daemon's hook endpoint on its socket. */
let calls = 0;
async function postBash(d: AgentsDaemon, sessionId: string, command: string): Promise<void> {
  const [observer, ledger] = (["observer", "ledger"] as const).map((s) =>
    fs.readFileSync(d.fleet.tokens.get(s) as string, "utf8").trim(),
  );
  const body = JSON.stringify({
    ...claudeCode(d.fleet.root, sessionId).PostToolUse,
    tool_name: "Bash",
    tool_input: { command },
    tool_response: { stdout: "", stderr: "", interrupted: false },
    // Each call its own id: one id twice would be one call, admitted once.
    tool_use_id: `toolu_${calls++}`,
  });
  const status = await new Promise<number>((resolve, reject) => {
    const req = http.request(
      {
        socketPath: d.fleet.socketPath,
        path: "/hooks/claude-code?harness=impl",
        method: "POST",
        headers: { authorization: `Bearer ${observer}`, "x-harness-ledger-token": ledger },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
  expect(status).toBe(200);
}

it("an [agents] verify_patterns changed by a reload classifies the next hook call's command", async () => {
  const d = await AgentsDaemon.start({ config: '[agents]\nlisten = ""\nverify_patterns = []' });
  daemons.push(d);
  await postBash(d, "s1", "just check --all");
  fs.writeFileSync(
    configFile(d),
    fs
      .readFileSync(configFile(d), "utf8")
      .replace(/^verify_patterns = \[\]$/m, 'verify_patterns = ["just check"]'),
  );
  expect((await d.app.reload()).needsRestart).toEqual([]);
  await postBash(d, "s1", "just check --all");
  await d.settled();
  expect(d.rows("tool").map((r) => r.action)).toEqual(["exec", "verify"]);
});

it("an [agents] stale_after shortened by a reload closes a quiet run on the next tick", async () => {
  let offset = 0;
  const d = await AgentsDaemon.start({
    clock: () => Date.now() + offset,
    tickMs: 100,
    config: '[agents]\nlisten = ""\nstale_after = "12h"',
  });
  daemons.push(d);
  const quiet = session("impl", "quiet");
  await d.hookRows("ledger", [quiet.opened()]);
  offset += 3 * 3_600_000;
  await new Promise((r) => setTimeout(r, 300));
  expect(d.rows("closed")).toEqual([]);

  fs.writeFileSync(
    configFile(d),
    fs.readFileSync(configFile(d), "utf8").replace(/^stale_after = "12h"$/m, 'stale_after = "2h"'),
  );
  expect((await d.app.reload()).needsRestart).toEqual([]);
  await d.until(() => d.rows("closed").length > 0, "the quiet run closed as stale");
  expect(d.rows("closed")).toMatchObject([{ run: quiet.run, outcome: "interrupted", reason: "stale" }]);
});

it("an [agents] tell changed by a reload applies to the next hook answer", async () => {
  const d = await AgentsDaemon.start({ config: '[agents]\nlisten = ""\ntell = []' });
  daemons.push(d);
  const [first, second] = [session("impl", "s1"), session("impl", "s2")];
  await d.hookRows("ledger", [first.opened(), second.opened()]);
  await d.hookRows("observer", [first.edit("a.go"), second.edit("a.go")]);
  await d.settled();
  const token = (s: "observer" | "ledger") => fs.readFileSync(d.fleet.tokens.get(s) as string, "utf8").trim();
  const tokens = { observer: token("observer"), ledger: token("ledger") };
  const preToolUse = () =>
    fetchOnSocket(d, tokens, JSON.stringify(claudeCode(d.fleet.root, "s2").PreToolUse));
  expect(await preToolUse()).toBe("");

  fs.writeFileSync(
    configFile(d),
    fs.readFileSync(configFile(d), "utf8").replace(/^tell = \[\]$/m, 'tell = ["annotate"]'),
  );
  expect((await d.app.reload()).needsRestart).toEqual([]);
  const told = JSON.parse(await preToolUse()).hookSpecificOutput;
  expect(told.hookEventName).toBe("PreToolUse");
  expect(told.additionalContext).toContain("same-file-collision");
});

/** The answer's body to a Claude Code hook call posted on the daemon's socket. */
function fetchOnSocket(d: AgentsDaemon, tokens: { observer: string; ledger: string }, body: string) {
  return new Promise<string>((resolve, reject) => {
    const req = http.request(
      {
        socketPath: d.fleet.socketPath,
        path: "/hooks/claude-code?harness=impl",
        method: "POST",
        headers: { authorization: `Bearer ${tokens.observer}`, "x-harness-ledger-token": tokens.ledger },
      },
      (res) => {
        let text = "";
        res.on("data", (c: Buffer) => {
          text += c.toString();
        });
        res.on("end", () => resolve(text));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
