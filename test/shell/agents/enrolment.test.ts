/**
 * Enrolment without the control token (issue 32, docs/fleet.md): the operator makes a one-time code
 * for a harness (`harness token create --enrol`), and a machine that holds no control token spends it
 * with `harness agents install … --enrol-file FILE` for that harness's two producer tokens. The machine
 * here is an environment of its own (its own config and state homes) reaching the real daemon's socket.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tokenClient } from "../../../src/shell/rpc/client.js";
import { CLI, type CliResult, runProcess, TestFleet } from "../daemon-harness.js";
import { makeRepo, rowsOf } from "./hook-harness.js";
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

/** A machine without the operator's control token: its own homes, the daemon's socket. */
function machine(name: string) {
  const root = path.join(fleet.root, name);
  const dir = (d: string) => {
    const p = path.join(root, d);
    fs.mkdirSync(p, { recursive: true, mode: 0o700 });
    return p;
  };
  const env = {
    PATH: process.env.PATH,
    HOME: root,
    XDG_CONFIG_HOME: dir("config"),
    XDG_STATE_HOME: dir("state"),
    XDG_RUNTIME_DIR: dir("run"),
  };
  const project = dir("project");
  return {
    env,
    project,
    cli: (args: readonly string[]): Promise<CliResult> =>
      runProcess(process.execPath, [CLI, ...args, "--socket", fleet.socketPath], { env }),
    install: (harness: string, codeFile: string) =>
      runProcess(
        process.execPath,
        [
          CLI,
          "agents",
          "install",
          "claude-code",
          "--harness",
          harness,
          "--project",
          project,
          "--enrol-file",
          codeFile,
          "--socket",
          fleet.socketPath,
          "--json",
        ],
        { env },
      ),
  };
}

/** An enrolment code made by the operator, in a 0600 file. */
async function enrolmentCode(harness: string, ttl = "1h"): Promise<{ id: string; file: string }> {
  const r = await fleet.cli(["token", "create", "--enrol", "--harness", harness, "--ttl", ttl, "--json"]);
  expect(r.code, r.stderr).toBe(0);
  const { id, token } = JSON.parse(r.stdout) as { id: string; token: string };
  const file = path.join(fleet.root, `${id}.code`);
  fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return { id, file };
}

interface TokenJson {
  id: string;
  kind: string;
  harness: string | null;
  source: string | null;
  label: string | null;
  revoked: string | null;
}

const tokens = async (): Promise<TokenJson[]> =>
  (JSON.parse((await fleet.cli(["token", "list", "--all", "--json"])).stdout) as { tokens: TokenJson[] })
    .tokens;

describe("Enrolment without the control token", () => {
  it("An enrolment code works once and expires", async () => {
    const code = await enrolmentCode("laptop");
    const first = machine("laptop-1");
    expect(fs.existsSync(path.join(first.env.XDG_CONFIG_HOME, "harness", "control.token"))).toBe(false);
    const r = await first.install("laptop", code.file);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as {
      tokens: Record<"observer" | "ledger", { file: string; id: string; minted: boolean }>;
    };
    expect(report.tokens.observer.minted && report.tokens.ledger.minted).toBe(true);
    // The code is spent; the two tokens are producers bound to its harness, their label naming it.
    const listed = await tokens();
    expect(listed.find((t) => t.id === code.id)).toMatchObject({ kind: "enrolment", harness: "laptop" });
    expect(listed.find((t) => t.id === code.id)?.revoked).not.toBeNull();
    for (const [role, t] of Object.entries(report.tokens))
      expect(listed.find((l) => l.id === t.id)).toMatchObject({
        kind: "producer",
        source: role,
        harness: "laptop",
        revoked: null,
        label: `agents laptop (enrolled with ${code.id})`,
      });
    // The hooks it installed append the harness's rows.
    const settings = JSON.parse(
      fs.readFileSync(path.join(first.project, ".claude", "settings.local.json"), "utf8"),
    ) as { hooks: Record<string, { hooks: { command: string }[] }[]> };
    const command = settings.hooks.SessionStart?.[0]?.hooks[0]?.command as string;
    const ran = await runProcess("/bin/sh", ["-c", command], {
      env: first.env,
      stdin: JSON.stringify(claudeCode(repo, "enrolled-1").SessionStart),
    });
    expect(ran).toMatchObject({ code: 0, stderr: "" });
    await fleet.until(() => rowsOf(fleet, "enrolled-1").length === 1, "the enrolled machine's row");
    expect(rowsOf(fleet, "enrolled-1")[0]?.event.harness).toBe("laptop");

    // Once: a second machine with the same code is refused, and nothing is written there.
    const second = machine("laptop-2");
    const again = await second.install("laptop", code.file);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/unknown bearer token/);
    expect(fs.existsSync(path.join(second.project, ".claude"))).toBe(false);
    expect(fs.existsSync(path.join(second.env.XDG_STATE_HOME, "harness", "agents", "laptop"))).toBe(false);

    // Expires: a code a second long, a second and a half later, is refused the same way.
    const short = await enrolmentCode("laptop", "1s");
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const late = await machine("laptop-3").install("laptop", short.file);
    expect(late.code).not.toBe(0);
    expect(late.stderr).toMatch(/unknown bearer token/);
  });

  it("a code for another harness is refused and left unspent; it opens no other door", async () => {
    const code = await enrolmentCode("ci-runner");
    const m = machine("runner");
    const wrong = await m.install("laptop", code.file);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(
      /the enrolment code is for harness ci-runner, not laptop; it is left unspent/,
    );
    expect((await tokens()).find((t) => t.id === code.id)?.revoked).toBeNull();
    // Its holder may call Enrol and nothing else: not the operator's calls, not an append.
    const text = fs.readFileSync(code.file, "utf8").trim();
    const client = tokenClient({ socketPath: fleet.socketPath }, text);
    await expect(client.listTokens({})).rejects.toThrow(
      /needs the control tier, which a one-time enrolment code/,
    );
    const append = await runProcess(
      process.execPath,
      [CLI, "journal", "append", "--token-file", code.file, "--socket", fleet.socketPath],
      {
        env: m.env,
        stdin: `${JSON.stringify({ kind: "run_event", type: "tool", harness: "ci-runner", run: "ci-runner#1", action: "read" })}\n`,
      },
    );
    expect(append.code).not.toBe(0);
    // Spent by its own harness, after all that.
    expect((await m.install("ci-runner", code.file)).code).toBe(0);
  });

  it("a code needs its harness, lives at most 7 days, and is not for a run", async () => {
    const usage = async (args: string[], message: RegExp) => {
      const r = await fleet.cli(["token", "create", "--enrol", ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
    };
    await usage([], /--enrol needs --harness NAME: a code enrols one harness/);
    await usage(["--harness", "x", "--run", "x#1"], /--run is for --gateway tokens/);
    const long = await fleet.cli(["token", "create", "--enrol", "--harness", "x", "--ttl", "8d"]);
    expect(long.code).not.toBe(0);
    expect(long.stderr).toMatch(/an enrolment code lives at most 7 days/);
  });

  it("two machines racing with one code: one is enrolled, the other refused", async () => {
    const code = await enrolmentCode("racer");
    const text = fs.readFileSync(code.file, "utf8").trim();
    const calls = Array.from({ length: 4 }, () =>
      tokenClient({ socketPath: fleet.socketPath }, text).enrol({ harness: "racer" }),
    );
    const settled = await Promise.allSettled(calls);
    expect(settled.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const minted = (await tokens()).filter((t) => t.harness === "racer" && t.kind === "producer");
    expect(minted.map((t) => t.source).sort()).toEqual(["ledger", "observer"]);
  });

  it("a machine that already holds the harness's tokens is told to install without a code", async () => {
    const code = await enrolmentCode("laptop");
    const m = machine("laptop-1");
    const r = await m.install("laptop", code.file);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /this machine already holds harness laptop's tokens .*: an enrolment code is for a machine without them/,
    );
    expect((await tokens()).find((t) => t.id === code.id)?.revoked).toBeNull();
  });
});
