/**
 * Seeing the flow, end to end against a real daemon and real `harness hook claude-code` processes:
 * `harness journal tail --follow` prints the rows the hooks bring as they commit, and a loop stop's id,
 * as the agent's deny reason names it, is explained by `harness rules explain`.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { journalRows, runStopReleasedBy } from "../../support/store-reads.js";
import { CLI, TestFleet } from "../daemon-harness.js";
import { gatewayToken, mcpSession, textOf } from "../gateway/mcp-session.js";
import { makeRepo, rowsOf, runHook } from "./hook-harness.js";
import { claudeCode } from "./payloads.js";

let fleet: TestFleet;
let repo: string;

beforeAll(async () => {
  repo = makeRepo();
  fleet = new TestFleet({ config: '[agents]\nlisten = ""' });
  await fleet.start();
}, 30_000);

afterAll(async () => {
  await fleet.dispose();
  fs.rmSync(repo, { recursive: true, force: true });
});

const hook = async (payload: object) => {
  const r = await runHook(fleet, "claude-code", JSON.stringify(payload));
  expect(r.code, r.stderr).toBe(0);
  return r;
};

it("journal tail follows rows as hooks arrive", async () => {
  const payloads = claudeCode(repo, "sess-tail");
  // A row of another harness before the tail starts: --harness leaves it out.
  const other = await fleet.cli(
    ["journal", "append", "--token-file", fleet.tokens.get("ledger") as string],
    JSON.stringify({ kind: "run_event", type: "opened", harness: "other", run: "other#1" }),
  );
  expect(other.code, other.stderr).toBe(0);
  await hook(payloads.SessionStart);
  await fleet.until(() => rowsOf(fleet, "sess-tail").length === 1, "the opened row");

  const child = spawn(process.execPath, [CLI, "journal", "tail", "--follow", "--harness", "impl"], {
    env: fleet.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  const lines = () => stdout.split("\n").filter((l) => l !== "");
  try {
    await fleet.until(() => stderr.includes("following"), "the tail following");
    // The last rows first: the session's opening, not the other harness's.
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatch(
      /^\d+ {2}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ {2}run_event\/opened {2}impl {2}impl#/,
    );

    const seqs = () => lines().map((l) => Number(l.split("  ")[0]));
    const stored = () => journalRows(fleet, { harness: "impl" }).map((r) => r.seq);
    await hook(payloads.PreToolUse);
    await hook(payloads.PostToolUse);
    await fleet.until(
      () => lines().some((l) => l.includes("run_event/tool")),
      "the tool call's row in the tail",
    );
    await hook(payloads.PostToolUseFailure);
    await hook(payloads.SessionEnd);
    await fleet.until(() => lines().some((l) => l.includes("run_event/closed")), "the close in the tail");
    // Every row of the harness, each once and in seq order, as the journal holds them (the attempt row
    // is the PreToolUse's, the graph rows the file-edge projector's).
    await fleet.until(() => seqs().length === stored().length, "every row of impl in the tail");
    expect(seqs()).toEqual(stored());
    const shown = lines();
    expect(shown.map((l) => l.split("  ")[2]).filter((t) => !t?.startsWith("graph_event/"))).toEqual([
      "run_event/opened",
      "attempt_event/tool",
      "run_event/tool",
      "run_event/tool",
      "run_event/closed",
    ]);
    const tools = shown.filter((l) => l.includes("run_event/tool"));
    expect(tools[0]).toContain("tool=Edit action=edit src/a.ts");
    expect(tools[1]).toContain("tool=Bash");
    expect(tools[1]).toContain("is_error");
    expect(shown.find((l) => l.includes("run_event/closed"))).toContain("outcome=");
    expect(stdout).not.toContain("other#1");
    expect(stdout).not.toContain("SECRET");
  } finally {
    child.kill("SIGINT");
  }
  expect(await exited).toBe(0);

  // A reader that goes away (`| head -1`) ends a follower quietly at its next write.
  const gone = spawn(process.execPath, [CLI, "journal", "tail", "--follow", "-n", "1"], {
    env: fleet.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const goneExit = new Promise<number | null>((resolve) => gone.on("close", resolve));
  await new Promise((resolve) => gone.stdout.once("data", resolve));
  gone.stdout.destroy();
  await hook(claudeCode(repo, "sess-after").SessionStart);
  expect(await goneExit).toBe(0);

  // Without --follow: the last N rows, then done; --json one object per row.
  const json = await fleet.cli(["journal", "tail", "--harness", "impl", "-n", "2", "--json"]);
  expect(json.code, json.stderr).toBe(0);
  const objects = json.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  const last2 = journalRows(fleet, { harness: "impl" }).slice(-2);
  expect(objects.map((o) => [o.seq, o.kind, o.type])).toEqual(last2.map((r) => [r.seq, r.kind, r.type]));
  expect(objects[1]).toMatchObject({ fields: { harness: "impl" }, source: last2[1]?.source });
});

it("A loop stop is explained", async () => {
  const payloads = claudeCode(repo, "sess-loop");
  await hook(payloads.SessionStart);
  // Eight identical calls trip the loop guard (it counts their PostToolUse rows); the ninth is refused,
  // naming the stop. Each call its own tool_use_id, as Claude Code gives it: the same id would be the
  // same call sent again.
  for (let i = 0; i < 8; i++) await hook({ ...payloads.PostToolUse, tool_use_id: `toolu_loop_${i}` });
  await fleet.until(
    () => rowsOf(fleet, "sess-loop").some((r) => r.type === "loop_stopped"),
    "the loop guard's stop",
  );
  const denied = await hook({ ...payloads.PreToolUse, tool_use_id: "toolu_loop_8" });
  const reason: string = JSON.parse(denied.stdout).hookSpecificOutput.permissionDecisionReason;
  const id = /fire (journal:\d+)/.exec(reason)?.[1];
  expect(id, reason).toBeDefined();
  const loopRow = rowsOf(fleet, "sess-loop").find((r) => r.type === "loop_stopped");
  expect(id).toBe(`journal:${loopRow?.seq}`);
  const run = loopRow?.event.run as string;

  const explained = await fleet.cli(["rules", "explain", id as string]);
  expect(explained.code, explained.stderr).toBe(0);
  const out = explained.stdout;
  expect(out).toContain(`loop stop of run ${run} (harness impl): the loop guard, not a rule`);
  expect(out).toContain(`row      seq ${loopRow?.seq} run_event loop_stopped`);
  expect(out).toContain(`call     Edit with input digest ${loopRow?.event.digest}`);
  expect(out).toContain("8 identical calls (tool and digest) in an unbroken streak, the guard's threshold 8");
  expect(out).toMatch(/window {3}seq \d+ at \S+ to seq \d+ at \S+ \(/);
  expect(out).toMatch(/told {5}\d{4}-/);
  expect(out).toContain(`released no: harness rules resume ${run}`);
  expect(out).toContain(`ask the operator to run \`harness rules resume ${run}\``);

  const json = await fleet.cli(["rules", "explain", id as string, "--json"]);
  expect(json.code, json.stderr).toBe(0);
  const x = JSON.parse(json.stdout);
  const tools = rowsOf(fleet, "sess-loop").filter((r) => r.type === "tool");
  expect(x).toMatchObject({
    guard: "loop_stopped",
    harness: "impl",
    run,
    tool: "Edit",
    threshold: 8,
    streak: { calls: 8, first_seq: tools[0]?.seq, last_seq: tools[7]?.seq },
    released_at: null,
    resume: `harness rules resume ${run}`,
  });

  // The agent may explain its own harness's stop through the MCP gateway; another harness's agent may not.
  const own = await mcpSession(fleet, await gatewayToken(fleet, "impl"));
  const other = await mcpSession(fleet, await gatewayToken(fleet, "other"));
  try {
    const data = await own.data("explain_fire", { fire_id: id });
    expect(data).toMatchObject({ guard: { kind: "loop_stopped", run, tool: "Edit", threshold: 8 } });
    const refused = await other.call("explain_fire", { fire_id: id });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("unknown fire");
  } finally {
    await own.close();
    await other.close();
  }

  // Resumed: explain says so.
  expect((await fleet.cli(["rules", "resume", run])).code).toBe(0);
  // Released with the first control token: recorded as the operator's (decision 0018).
  expect(runStopReleasedBy(fleet, run)).toBe("operator");
  const after = await fleet.cli(["rules", "explain", id as string]);
  expect(after.stdout).toMatch(/released \d{4}-/);
  // Any other journal row is not a decision to explain.
  const unknown = await fleet.cli(["rules", "explain", `journal:${tools[0]?.seq}`]);
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toContain("unknown fire");
});
