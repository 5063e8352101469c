/**
 * Issue 26's findings 1, 3 and 6 against a real daemon (`harness daemon`, reached through real
 * `harness hook` processes and its http listener): hostile input is answered and recorded at the bounds
 * `payload-bounds.ts` documents, another client's GetStatus is answered meanwhile, and git runs in a
 * bounded pool. The assertions are on structure, never on time: on e4eabc5 these calls outlive the
 * hook's 5 s timeout (spooled, a line on stderr, no row) and git runs once per `cwd`, unbounded.
 */
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GIT_POOL } from "../../../src/shell/agents/ingest/git-facts.js";
import { ruleClient } from "../../../src/shell/rpc/client.js";
import { readTokenFile } from "../../../src/shell/rpc/credentials.js";
import { TestFleet } from "../daemon-harness.js";
import { makeRepo, rowsOf, runHook } from "./hook-harness.js";
import { claudeCode } from "./payloads.js";

let fleet: TestFleet;
let repo: string;
let hooksUrl: string;
let metricsUrl: string;
const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "harness-hook-bounds-")));

beforeAll(async () => {
  repo = makeRepo();
  fleet = new TestFleet({ config: '[agents]\nlisten = "127.0.0.1:0"' });
  const started = await fleet.start();
  hooksUrl = /hooks (http:\S+)/.exec(started)?.[1] as string;
  metricsUrl = /metrics (http:[^\s,]+)/.exec(started)?.[1] as string;
}, 30_000);

afterAll(async () => {
  await fleet.dispose();
  fs.rmSync(repo, { recursive: true, force: true });
  fs.rmSync(scratch, { recursive: true, force: true });
});

const bash = (session: string, command: string, cwd = repo) => ({
  ...claudeCode(cwd, session).PostToolUse,
  tool_name: "Bash",
  tool_input: { command },
});

/** The one row a session's call left, once it is there. */
async function onlyRow(session: string): Promise<Record<string, unknown>> {
  await fleet.until(() => rowsOf(fleet, session).length === 1, `the row of ${session}`);
  return rowsOf(fleet, session)[0]?.event as Record<string, unknown>;
}

const getStatus = () => ruleClient({ socketPath: fleet.socketPath }).getStatus({});

/**
 * The most git processes seen at once whose argv names `dir` (`git -C <dir> …`), read from /proc by a
 * process of its own (this one's event loop is busy with the calls) until `stop`.
 */
/**
 * Counts the git processes working under `dir`, scanning /proc every millisecond; `peak` is the most
 * seen at once so far. Under load the daemon's git may start after every call was answered (each is
 * answered without waiting for it), so a test waits for the peak it expects before stopping the watch.
 */
async function gitPeakWatcher(
  dir: string,
): Promise<{ readonly peak: () => number; stop: () => Promise<number> }> {
  const script = `
    const fs = require("node:fs");
    let peak = 0;
    const scan = () => {
      let n = 0;
      for (const pid of fs.readdirSync("/proc")) {
        if (pid < "0" || pid > "9") continue;
        try {
          if (fs.readFileSync("/proc/" + pid + "/comm", "utf8") !== "git\\n") continue;
          if (fs.readFileSync("/proc/" + pid + "/cmdline", "utf8").includes(process.argv[1])) n++;
        } catch {}
      }
      if (n > peak) process.stdout.write(n + "\\n");
      peak = Math.max(peak, n);
    };
    const timer = setInterval(scan, 1);
    process.stdin.on("data", () => {});
    process.stdin.on("end", () => { clearInterval(timer); scan(); process.exit(0); });
    process.stdout.write("0\\n");
  `;
  const child = spawn(process.execPath, ["-e", script, dir], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const peak = () =>
    Math.max(
      0,
      ...out
        .split("\n")
        .filter((l) => l !== "")
        .map(Number),
    );
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
  return {
    peak,
    stop: async () => {
      child.stdin.end();
      await exited;
      return peak();
    },
  };
}

async function factsCounted(): Promise<Record<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^harness_agent_git_facts_total\{result="(\w+)"\} (\d+)$/gm))
    out[m[1] as string] = Number(m[2]);
  return out;
}

describe("issue 26: bounded work for every hook input", () => {
  it("finding 1: a Bash command `cat a` + 80,000 commas + `a` and one of 60,000 (parsed: its one path, past 4096 characters, dropped) are answered and recorded as exec with no paths, an apply_patch header of 100,000 spaces as an edit with none; another client's GetStatus is answered meanwhile", async () => {
    const patch = {
      ...claudeCode(repo, "f1-patch").PostToolUse,
      tool_name: "apply_patch",
      tool_input: { patch: `*** Begin Patch\n*** Update File: ${" ".repeat(100_000)}a\n*** End Patch\n` },
    };
    const [long, under, patched, status] = await Promise.all([
      runHook(fleet, "claude-code", JSON.stringify(bash("f1-commas-80k", `cat a${",".repeat(80_000)}a`))),
      runHook(fleet, "claude-code", JSON.stringify(bash("f1-commas-60k", `cat a${",".repeat(60_000)}a`))),
      runHook(fleet, "claude-code", JSON.stringify(patch)),
      getStatus(),
    ]);
    for (const r of [long, under, patched]) expect(r).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(status.version).not.toBe("");
    expect(await onlyRow("f1-commas-80k")).toMatchObject({
      tool: "Bash",
      action: "exec",
      repo: expect.any(String),
    });
    expect(await onlyRow("f1-commas-60k")).toMatchObject({ tool: "Bash", action: "exec" });
    expect(await onlyRow("f1-patch")).toMatchObject({ tool: "apply_patch", action: "edit" });
    for (const s of ["f1-commas-80k", "f1-commas-60k", "f1-patch"]) {
      const row = await onlyRow(s);
      expect(row.paths).toBeUndefined();
      expect(row.digest).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it("bounds: a hook_event_name of 100,000 characters is refused with one short line, never echoed; the tool runs", async () => {
    const p = { ...claudeCode(repo, "b-event").Stop, hook_event_name: "E".repeat(100_000) };
    const r = await runHook(fleet, "claude-code", JSON.stringify(p));
    expect(r).toMatchObject({
      code: 1,
      stdout: "",
      stderr: "harness hook: hook_event_name is longer than 256 characters; not recorded\n",
    });
    expect(rowsOf(fleet, "b-event")).toEqual([]);
  });

  it("finding 3: a 10 KB and a 40 KB cwd, and one 200 components deep, are ignored at their bounds: answered, the row kept without repo facts; a file_path of 40 KB is dropped", async () => {
    const calls: [string, string][] = [
      ["f3-cwd-10k", "/a".repeat(5000)],
      ["f3-cwd-40k", "/a".repeat(20_000)],
      ["f3-cwd-deep", `${repo}${"/d".repeat(200)}`],
    ];
    const results = await Promise.all([
      ...calls.map(([session, cwd]) =>
        runHook(fleet, "claude-code", JSON.stringify(bash(session, "ls", cwd))),
      ),
      runHook(
        fleet,
        "claude-code",
        JSON.stringify({
          ...claudeCode(repo, "f3-path-40k").PostToolUse,
          tool_name: "Read",
          tool_input: { file_path: `${repo}/${"p/".repeat(20_000)}x` },
        }),
      ),
      getStatus(),
    ]);
    for (const r of results.slice(0, 4)) expect(r).toMatchObject({ code: 0, stderr: "" });
    for (const [session] of calls) {
      const row = await onlyRow(session);
      expect(row).toMatchObject({ tool: "Bash", action: "search" });
      expect(row.repo).toBeUndefined();
      expect(row.branch).toBeUndefined();
    }
    const read = await onlyRow("f3-path-40k");
    expect(read).toMatchObject({ action: "read", repo: "forge.example/org/reduit", branch: "feature" });
    expect(read.paths).toBeUndefined();
  });

  it(`finding 6: 100 concurrent hook calls from 100 repositories whose git hangs run exactly ${GIT_POOL.children} git processes at once; each call is answered and recorded without repo facts, counted late or saturated; GetStatus is answered meanwhile`, async () => {
    // A repository whose config is a FIFO: git blocks opening it, until the daemon kills it (5 s).
    const fifos = Array.from({ length: 100 }, (_, i) => {
      const git = path.join(scratch, `r${i}`, ".git");
      for (const sub of ["objects", "refs"]) fs.mkdirSync(path.join(git, sub), { recursive: true });
      fs.writeFileSync(path.join(git, "HEAD"), "ref: refs/heads/main\n");
      execFileSync("mkfifo", [path.join(git, "config")]);
      return path.join(git, "config");
    });
    const before = await factsCounted();
    const token = await readTokenFile(fleet.tokens.get("observer") as string);
    const watcher = await gitPeakWatcher(scratch);
    let answers: Response[];
    let peak: number;
    try {
      [answers] = await Promise.all([
        Promise.all(
          fifos.map((fifo, i) =>
            fetch(`${hooksUrl}claude-code?harness=impl`, {
              method: "POST",
              headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
              body: JSON.stringify(bash(`f6-${i}`, "ls", path.dirname(path.dirname(fifo)))),
            }),
          ),
        ),
        getStatus(),
      ]);
    } finally {
      // The gits block on their FIFOs until killed (5 s): started late, they are still seen.
      const deadline = Date.now() + 4_000;
      while (watcher.peak() < GIT_POOL.children && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      peak = await watcher.stop();
      // Every git blocked on a FIFO, or about to open one, reads an empty config and goes on.
      for (const fifo of fifos) {
        const fd = fs.openSync(fifo, "r+");
        fs.writeFileSync(`${fifo}.plain`, "");
        fs.renameSync(`${fifo}.plain`, fifo);
        fs.closeSync(fd);
      }
    }
    expect(answers.map((a) => [a.status, a.headers.get("x-harness-row")])).toEqual(
      fifos.map(() => [200, "admitted"]),
    );
    expect(peak).toBe(GIT_POOL.children);
    await fleet.until(() => fifos.every((_, i) => rowsOf(fleet, `f6-${i}`).length === 1), "100 rows");
    for (let i = 0; i < 100; i++) expect(rowsOf(fleet, `f6-${i}`)[0]?.event.repo).toBeUndefined();
    const after = await factsCounted();
    const counted = (r: string) => (after[r] ?? 0) - (before[r] ?? 0);
    expect(counted("late") + counted("saturated")).toBe(100);
    expect(counted("late")).toBeLessThanOrEqual(GIT_POOL.children + GIT_POOL.queued);
  });
});
