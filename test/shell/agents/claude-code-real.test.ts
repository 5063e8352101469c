/**
 * The real Claude Code (the registry's `@anthropic-ai/claude-code`, its native binary; `.ci/claude-code.sh`
 * installs it and CI names it in HARNESS_TEST_CLAUDE_BIN) run headless (`claude -p`) against a scripted
 * model (`scripted-model.ts`) with the hooks `harness agents install` writes, against a real daemon: the
 * hooks reach the journal, and a harness installed `--fail closed` keeps its tools from running while the
 * daemon is down: through our command hook's answer, and through Claude Code's own `onFailure: "block"`
 * when its http hook finds nothing to post to or the command hook cannot even start. Skipped without the
 * binary, except under CI, where it must run.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, freePort, runProcess, TestFleet } from "../daemon-harness.js";
import { rowsOf } from "./hook-harness.js";
import { type ScriptedModel, scriptedModel } from "./scripted-model.js";

const CLAUDE = process.env.HARNESS_TEST_CLAUDE_BIN;
if (CLAUDE === undefined && process.env.CI === "true")
  throw new Error("HARNESS_TEST_CLAUDE_BIN is not set: .ci/run installs Claude Code for this test");

const MARK = "made-by-tool.txt";

let fleet: TestFleet;
let model: ScriptedModel;

beforeAll(async () => {
  if (CLAUDE === undefined) return;
  fleet = new TestFleet({ config: `[agents]\nlisten = "127.0.0.1:${await freePort()}"` });
  model = await scriptedModel(`echo hi > ${MARK}`);
  await fleet.start();
  for (const [name, mode, fail] of [
    ["closed", "command", "closed"],
    ["open", "command", "open"],
    ["http-closed", "http", "closed"],
    ["http-open", "http", "open"],
  ])
    expect(
      (
        await fleet.cli([
          "agents",
          "install",
          "claude-code",
          "--harness",
          `cc-${name}`,
          "--project",
          project(name as string),
          "--mode",
          mode as string,
          "--fail",
          fail as string,
        ])
      ).code,
    ).toBe(0);
}, 60_000);

afterAll(async () => {
  if (CLAUDE === undefined) return;
  await model.close();
  await fleet.dispose();
});

function project(fail: string): string {
  const dir = path.join(fleet.root, `project-${fail}`);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** One headless Claude Code turn in the harness's project; whether its Bash call ran. */
async function turn(fail: string): Promise<{ readonly ran: boolean; readonly result: CliResult }> {
  const dir = project(fail);
  fs.rmSync(path.join(dir, MARK), { force: true });
  const home = path.join(fleet.root, `home-${fail}`);
  fs.mkdirSync(home, { recursive: true });
  const result = await runProcess(CLAUDE as string, ["-p", "make the file", "--allowedTools", "Bash"], {
    cwd: dir,
    env: {
      ...fleet.env,
      HOME: home,
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: "sk-scripted-model",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_TELEMETRY: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    },
  });
  return { ran: fs.existsSync(path.join(dir, MARK)), result };
}

describe.skipIf(CLAUDE === undefined)("The real Claude Code with our hooks", () => {
  it("its hooks reach the journal: a session opened, its Bash call attempted and recorded", async () => {
    const { ran, result } = await turn("closed");
    expect(result.code, result.stderr).toBe(0);
    expect(ran).toBe(true);
    await fleet.until(
      () => rowsOf(fleet).some((r) => r.event.harness === "cc-closed" && r.event.type === "tool"),
      "cc-closed's tool row",
    );
    const types = rowsOf(fleet)
      .filter((r) => r.event.harness === "cc-closed")
      .map((r) => r.event.type);
    expect(types).toContain("opened");
    expect(types).toContain("tool");
  });

  // Four headless runs, one after another: a minute on a loaded machine.
  it("Fail closed denies while the daemon is down, fail open allows", { timeout: 240_000 }, async () => {
    await fleet.stop();
    try {
      const results = model.toolResults.length;
      const closed = await turn("closed");
      expect(closed.result.code, closed.result.stderr).toBe(0);
      expect(closed.ran).toBe(false);
      const refused = model.toolResults.slice(results).at(-1);
      expect(JSON.stringify(refused)).toMatch(/fail mode \(--fail closed\) refuses tools until it can/);
      const open = await turn("open");
      expect(open.result.code, open.result.stderr).toBe(0);
      expect(open.ran).toBe(true);
      // The http hook: nothing answers its post, and onFailure block is what refuses the call.
      const httpClosed = await turn("http-closed");
      expect(httpClosed.result.code, httpClosed.result.stderr).toBe(0);
      expect(httpClosed.ran).toBe(false);
      const httpOpen = await turn("http-open");
      expect(httpOpen.result.code, httpOpen.result.stderr).toBe(0);
      expect(httpOpen.ran).toBe(true);
    } finally {
      await fleet.start();
    }
  });

  it("a command hook that cannot start blocks the tool only where onFailure is block", async () => {
    // The hooks' first word, the compiled client, gone: neither harness's hook can start.
    const settings = JSON.parse(
      fs.readFileSync(path.join(project("closed"), ".claude", "settings.local.json"), "utf8"),
    ) as { hooks: Record<string, { hooks: { command: string }[] }[]> };
    const client = String(settings.hooks.PreToolUse?.[0]?.hooks[0]?.command).split(" ")[0] as string;
    fs.renameSync(client, `${client}.away`);
    try {
      const closed = await turn("closed");
      expect(closed.result.code, closed.result.stderr).toBe(0);
      expect(closed.ran).toBe(false);
      const open = await turn("open");
      expect(open.result.code, open.result.stderr).toBe(0);
      expect(open.ran).toBe(true);
    } finally {
      fs.renameSync(`${client}.away`, client);
    }
  });
});
