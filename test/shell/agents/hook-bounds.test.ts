/**
 * Issue 26's findings 1, 3 and 6 against a real daemon (`harness daemon`, reached through real
 * `harness hook` processes and its http listener): hostile input is answered and recorded at the bounds
 * `payload-bounds.ts` documents, another client's GetStatus is answered meanwhile, and git runs in a
 * bounded pool. The assertions are on structure, never on time: on e4eabc5 these calls outlive the
 * hook's 5 s timeout (spooled, a line on stderr, no row) and git runs once per `cwd`, unbounded.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GIT_POOL } from "../../../src/shell/agents/git-facts.js";
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

/** Git processes running now whose argv names `dir` (`git -C <dir> …`), read from /proc. */
function gitProcessesUnder(dir: string): number {
  let n = 0;
  for (const pid of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (fs.readFileSync(`/proc/${pid}/comm`, "utf8") !== "git\n") continue;
      if (fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(dir)) n++;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return n;
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

  it(`finding 6: 100 concurrent hook calls from 100 repositories run at most ${GIT_POOL.children} git processes at once; each is answered and recorded, each call's facts counted; GetStatus is answered meanwhile`, async () => {
    const dirs = Array.from({ length: 100 }, (_, i) => {
      const d = path.join(scratch, `r${i}`);
      // A `.git` git does not accept: git runs for it all the same, and says "not a repository".
      fs.mkdirSync(path.join(d, ".git"), { recursive: true });
      return d;
    });
    const before = await factsCounted();
    const token = await readTokenFile(fleet.tokens.get("observer") as string);
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, gitProcessesUnder(scratch));
    }, 2);
    let answers: Response[];
    try {
      [answers] = await Promise.all([
        Promise.all(
          dirs.map((d, i) =>
            fetch(`${hooksUrl}claude-code?harness=impl`, {
              method: "POST",
              headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
              body: JSON.stringify(bash(`f6-${i}`, "ls", d)),
            }),
          ),
        ),
        getStatus(),
      ]);
    } finally {
      clearInterval(sampler);
    }
    expect(answers.map((a) => [a.status, a.headers.get("x-harness-row")])).toEqual(
      dirs.map(() => [200, "admitted"]),
    );
    expect(peak).toBeLessThanOrEqual(GIT_POOL.children);
    await fleet.until(() => dirs.every((_, i) => rowsOf(fleet, `f6-${i}`).length === 1), "100 rows");
    const after = await factsCounted();
    const counted = (["cached", "read", "late", "saturated", "none"] as const).reduce(
      (n, r) => n + (after[r] ?? 0) - (before[r] ?? 0),
      0,
    );
    expect(counted).toBe(100);
    expect(after.none ?? 0).toBe(before.none ?? 0);
  });
});
