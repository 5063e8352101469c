/**
 * Issue 26's spool findings, against a real daemon through real `harness hook` processes: a call the
 * daemon cannot take is set aside after `MAX_TRIES` failed deliveries and never costs a held session its
 * verdict (finding 2); a session's calls are admitted in the order they were made, a live call never
 * overtaking its own spooled ones (finding 9), also across a kill -9 of the draining call; a call
 * delivered twice (live, too late, then from the spool) is admitted once (finding 10).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { rawPost } from "../../../src/shell/agents/forwarder/raw-http.js";
import { MAX_TRIES, Spool } from "../../../src/shell/agents/forwarder/spool.js";
import { inputDigest } from "../../../src/shell/agents/ingest/go-json-digest.js";
import { HOOK_PATH_PREFIX, LEDGER_TOKEN_HEADER } from "../../../src/shell/agents/ingest/hook-limits.js";
import { HookIngest, type IngestRequest } from "../../../src/shell/agents/ingest/ingest.js";
import { agentsCheck } from "../../../src/shell/cli/doctor/agents-check.js";
import { holds } from "../../support/store-reads.js";
import { jsonl, TestFleet } from "../daemon-harness.js";
import { AgentsDaemon } from "./agents-daemon.js";
import { makeRepo, rowsOf, runHook, startHook } from "./hook-harness.js";
import { claudeCode } from "./payloads.js";

let repo: string;
/** The fleet the tests without a hold share: its sessions are each test's own. */
let shared: TestFleet;
const fleets: TestFleet[] = [];
const fleetWith = (options: ConstructorParameters<typeof TestFleet>[0]) => {
  const f = new TestFleet(options);
  fleets.push(f);
  return f;
};
const spoolOf = (f: TestFleet) => new Spool(path.join(f.root, "state", "harness", "agents", "spool"));

beforeAll(async () => {
  repo = makeRepo();
  shared = new TestFleet({ config: '[agents]\nlisten = ""' });
  await shared.start();
}, 30_000);
afterEach(async () => {
  vi.restoreAllMocks();
  for (const f of fleets.splice(0)) await f.dispose();
});
afterAll(async () => {
  await shared.dispose();
  fs.rmSync(repo, { recursive: true, force: true });
});

/** Hook calls until the spool is empty: each call delivers what its share of the timeout allows. */
async function drainAll(fleet: TestFleet): Promise<void> {
  for (let i = 0; spoolOf(fleet).entries().length > 0; i++) {
    if (i === 30) throw new Error("the spool did not drain in 30 hook calls");
    await runHook(fleet, "claude-code", JSON.stringify(claudeCode(repo, `sess-drain-${i}`).Stop));
  }
}

/** A Bash PostToolUse whose row is known by its digest: call `n` of `session`. */
const bash = (session: string, n: number) => ({
  session_id: session,
  transcript_path: `/tmp/${session}.jsonl`,
  cwd: repo,
  hook_event_name: "PostToolUse",
  tool_name: "Bash",
  tool_input: { command: `echo ${session}-${n}` },
  tool_response: { stdout: "", stderr: "", interrupted: false },
  tool_use_id: `toolu_${session}_${n}`,
});
const digestOf = (session: string, n: number) => inputDigest({ command: `echo ${session}-${n}` });

/** Which of `session`'s calls its tool rows are, in seq order. */
const callsStored = (fleet: TestFleet, session: string, upTo: number): number[] => {
  const byDigest = new Map(Array.from({ length: upTo }, (_, n) => [digestOf(session, n), n]));
  return rowsOf(fleet, session)
    .filter((r) => r.type === "tool")
    .map((r) => byDigest.get(r.event.digest as string) ?? -1);
};

/** Spool entries written as a forwarder that could not reach the daemon writes them, oldest first. */
function spoolEntries(fleet: TestFleet, payloads: readonly Record<string, unknown>[], from = 1): void {
  const spool = spoolOf(fleet);
  fs.mkdirSync(spool.dir, { recursive: true, mode: 0o700 });
  payloads.forEach((payload, i) => {
    const at = from + i;
    const entry = {
      v: 1,
      adapter: "claude-code",
      harness: "impl",
      observer_token_file: fleet.tokens.get("observer"),
      ledger_token_file: fleet.tokens.get("ledger"),
      at,
      payload,
    };
    fs.writeFileSync(
      path.join(spool.dir, `${String(at).padStart(15, "0")}-1-${i}.json`),
      JSON.stringify(entry),
      {
        mode: 0o600,
      },
    );
  });
}

const budgetExceeded = (n: number) => ({
  kind: "run_event",
  type: "closed",
  harness: "impl",
  run: `impl#old-${n}`,
  outcome: "budget_exceeded",
});

const decision = (stdout: string): string | undefined =>
  stdout === ""
    ? undefined
    : (JSON.parse(stdout) as { hookSpecificOutput?: { permissionDecision?: string } }).hookSpecificOutput
        ?.permissionDecision;

describe("finding 2: a poison call in the spool fails no one open", () => {
  it("a call the daemon never answers is set aside after 3 tries, and a held session's PreToolUse is answered held meanwhile", async () => {
    const d = await AgentsDaemon.start({
      enforce: ["budget-exhaustion-recurring"],
      config: '[agents]\nlisten = ""',
    });
    fleets.push(d.fleet);
    // The daemon stalls on this one payload, as it did on 70,000 commas (or on a hung git): the call
    // times out, and every later delivery of it would too.
    let release = () => {};
    const stalled = new Promise<void>((resolve) => {
      release = resolve;
    });
    const handle = HookIngest.prototype.handle;
    vi.spyOn(HookIngest.prototype, "handle").mockImplementation(async function (
      this: HookIngest,
      req: IngestRequest,
    ) {
      if (Buffer.from(req.body).includes("sess-poison")) {
        await stalled;
        throw new Error("poisoned");
      }
      return handle.call(this, req);
    });
    try {
      const fleet = d.fleet;
      const spool = spoolOf(fleet);
      const poison = await runHook(fleet, "claude-code", JSON.stringify(bash("sess-poison", 0)), [
        "--timeout",
        "1000",
      ]);
      expect(poison.stderr).toMatch(/the call waits in .*spool/);
      expect(spool.entries()).toHaveLength(1);

      await d.append("ledger", [budgetExceeded(1), budgetExceeded(2)]);
      await d.until(() => holds(d, { harness: "impl", inForce: true }).length === 1, "the hold on impl");
      // 6 s: the poison's drain takes at most half, and the call's own half holds on a loaded machine.
      const alpha = claudeCode(repo, "sess-alpha");
      const opened = await runHook(fleet, "claude-code", JSON.stringify(alpha.SessionStart), [
        "--timeout",
        "6000",
      ]);
      expect(opened.code).toBe(0);
      expect(opened.stderr).not.toMatch(/waits in/);
      for (let i = 0; i < MAX_TRIES - 1; i++) {
        const pre = await runHook(fleet, "claude-code", JSON.stringify(alpha.PreToolUse), [
          "--timeout",
          "6000",
        ]);
        expect(pre.code).toBe(0);
        expect(decision(pre.stdout)).toBe("deny");
        expect(pre.stdout).toContain("budget-exhaustion-recurring");
      }
      // Three failed deliveries: set aside, kept, counted; no longer in anyone's way.
      expect(spool.entries()).toEqual([]);
      const [aside] = spool.entries("set-aside");
      expect(aside).toBeDefined();
      expect(spool.read(aside as string, "set-aside")).toMatchObject({ tries: MAX_TRIES });
      const pre = await runHook(fleet, "claude-code", JSON.stringify(alpha.PreToolUse));
      expect(decision(pre.stdout)).toBe("deny");
      expect(pre.stderr).toBe("");
      expect(spool.read(aside as string, "set-aside")).toMatchObject({ tries: MAX_TRIES });

      // doctor says so, and not that the calls wait for a daemon that is up.
      const check = await agentsCheck(fleet.env, async () => []);
      const messages = check.findings.map((f) => f.message).join("\n");
      expect(messages).toMatch(/1 spooled hook call set aside in .*set-aside: delivering it failed 3 times/);
      expect(messages).not.toMatch(/waiting for the daemon/);

      // The operator lists it, puts it back in line, and drops it.
      const list = await fleet.cli(["agents", "spool", "list"]);
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout).toMatch(
        new RegExp(`${aside}\\s+set-aside\\s+3\\s+impl\\s+claude-code\\s+PostToolUse\\s+sess-poison`),
      );
      const retry = await fleet.cli(["agents", "spool", "retry", "--all"]);
      expect(retry).toMatchObject({ code: 0 });
      expect(spool.entries()).toEqual([aside]);
      expect(spool.read(aside as string)?.tries).toBeUndefined();
      const drop = await fleet.cli(["agents", "spool", "drop", "--entry", aside as string]);
      expect(drop).toMatchObject({ code: 0, stdout: `1 call dropped from ${spool.dir}\n` });
      expect(spool.entries()).toEqual([]);
      expect((await fleet.cli(["agents", "spool", "drop", "--entry", aside as string])).code).toBe(1);
    } finally {
      release();
      await d.app.close();
    }
  }, 60_000);

  it("doctor says calls waiting while the daemon answers are not waiting for it", async () => {
    const fleet = fleetWith({ config: '[agents]\nlisten = ""' });
    spoolEntries(fleet, [bash("sess-w", 0)]);
    const up = (await agentsCheck(fleet.env, async () => [])).findings.map((f) => f.message).join("\n");
    expect(up).toMatch(/1 hook call spooled in .* though the daemon answers/);
    const down = (await agentsCheck(fleet.env, undefined)).findings.map((f) => f.message).join("\n");
    expect(down).toMatch(/1 hook call spooled in .*, waiting for the daemon/);
  });
});

describe("finding 9: a session's rows are admitted in the order they were made", () => {
  it("a held harness's new session whose SessionStart is spooled behind 150 calls: its first PreToolUse, racing a drain, is denied, and its opened row comes first", async () => {
    const fleet = fleetWith({ enforce: ["budget-exhaustion-recurring"], config: '[agents]\nlisten = ""' });
    await fleet.start();
    const appended = await fleet.cli(
      ["journal", "append", "--token-file", fleet.tokens.get("ledger") as string],
      jsonl([budgetExceeded(1), budgetExceeded(2)]),
    );
    expect(appended.code, appended.stderr).toBe(0);
    await fleet.until(
      () => holds(fleet, { harness: "impl", inForce: true }).length === 1,
      "the hold on impl",
    );
    await fleet.stop();
    const others = Array.from({ length: 150 }, (_, i) => claudeCode(repo, `sess-o${i}`).Stop);
    spoolEntries(fleet, others);
    const alpha = claudeCode(repo, "sess-alpha");
    expect((await runHook(fleet, "claude-code", JSON.stringify(alpha.SessionStart))).stderr).toMatch(
      /waits in/,
    );
    await fleet.start();

    const spool = spoolOf(fleet);
    const racer = startHook(fleet, "claude-code", JSON.stringify(claudeCode(repo, "sess-racer").Stop));
    await fleet.until(
      () => fs.existsSync(path.join(spool.dir, ".drain.lock")),
      "a drain in progress",
      10_000,
    );
    const pre = await runHook(fleet, "claude-code", JSON.stringify(alpha.PreToolUse), ["--timeout", "30000"]);
    const post = await runHook(fleet, "claude-code", JSON.stringify(alpha.PostToolUse), [
      "--timeout",
      "30000",
    ]);
    expect((await racer.result).code).toBe(0);
    expect(pre.code).toBe(0);
    expect(decision(pre.stdout)).toBe("deny");
    expect(post.code).toBe(0);
    await drainAll(fleet);
    const rows = rowsOf(fleet, "sess-alpha");
    expect(rows.map((r) => r.type)).toEqual(["opened", "tool"]);
    expect(rowsOf(fleet).filter((r) => String(r.event.session).startsWith("sess-o"))).toHaveLength(150);
  }, 90_000);

  it("kill -9 of the forwarder during a drain: 0 lost, 0 duplicated, each session's order kept", async () => {
    const fleet = shared;
    const sessions = ["sess-k0", "sess-k1", "sess-k2"];
    const perSession = 30;
    const payloads = Array.from({ length: perSession * 3 }, (_, i) =>
      bash(sessions[i % 3] as string, Math.floor(i / 3)),
    );
    spoolEntries(fleet, payloads);
    const spool = spoolOf(fleet);
    const [first] = spool.entries();
    const firstText = fs.readFileSync(path.join(spool.dir, first as string));

    const drainer = startHook(fleet, "claude-code", JSON.stringify(claudeCode(repo, "sess-d1").Stop));
    await fleet.until(() => spool.entries().length < payloads.length - 10, "part of the drain", 20_000);
    drainer.child.kill("SIGKILL");
    await drainer.result;
    expect(spool.entries().length).toBeGreaterThan(0);
    // As a kill between a delivery and its removal leaves it: delivered, and still in the spool.
    fs.writeFileSync(path.join(spool.dir, first as string), firstText, { mode: 0o600 });

    // The dead drainer's lock is taken over; a live call of sess-k0 races the drain that finishes it.
    const finisher = startHook(fleet, "claude-code", JSON.stringify(claudeCode(repo, "sess-d2").Stop));
    const lock = path.join(spool.dir, ".drain.lock");
    const holds = () => {
      try {
        return fs.readFileSync(lock, "utf8") === String(finisher.child.pid);
      } catch {
        return false;
      }
    };
    await fleet.until(() => holds() || spool.entries().length === 0, "the lock taken over", 20_000);
    expect(spool.entries().length).toBeGreaterThan(0);
    const live = await runHook(fleet, "claude-code", JSON.stringify(bash("sess-k0", perSession)));
    expect(live.code).toBe(0);
    expect((await finisher.result).code).toBe(0);
    await drainAll(fleet);
    await fleet.until(
      () => callsStored(fleet, "sess-k0", perSession + 1).length >= perSession + 1,
      "sess-k0's rows",
    );
    const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);
    expect(callsStored(fleet, "sess-k0", perSession + 1)).toEqual(upTo(perSession + 1));
    expect(callsStored(fleet, "sess-k1", perSession)).toEqual(upTo(perSession));
    expect(callsStored(fleet, "sess-k2", perSession)).toEqual(upTo(perSession));
  }, 90_000);

  it("any interleaving of calls made while the daemon is away and live calls admits each once, in order per session", async () => {
    const fleet = shared;
    const away = ["--socket", path.join(fleet.root, "nowhere.sock")];
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }), { minLength: 2, maxLength: 3 }),
        async (plans) => {
          const tag = run++;
          const sessions = plans.map((_, s) => `sess-p${tag}-${s}`);
          // Each session makes its calls one after another, as an agent does; sessions run side by side.
          await Promise.all(
            plans.map(async (reachable, s) => {
              for (const [n, up] of reachable.entries())
                expect(
                  (
                    await runHook(
                      fleet,
                      "claude-code",
                      JSON.stringify(bash(sessions[s] as string, n)),
                      up ? [] : away,
                    )
                  ).code,
                ).toBe(0);
            }),
          );
          await drainAll(fleet);
          for (const [s, reachable] of plans.entries()) {
            const session = sessions[s] as string;
            await fleet.until(
              () => callsStored(fleet, session, reachable.length).length >= reachable.length,
              `${session}'s rows`,
            );
            expect(callsStored(fleet, session, reachable.length)).toEqual(reachable.map((_, n) => n));
          }
        },
      ),
      { numRuns: 3 },
    );
  }, 180_000);
});

describe("finding 10: a call delivered twice is admitted once", () => {
  it("SIGSTOP the daemon, one call times out and is spooled, SIGCONT, one more call: the stalled row is stored once", async () => {
    const fleet = shared;
    fleet.signal("SIGSTOP");
    let stalled: Awaited<ReturnType<typeof runHook>>;
    try {
      stalled = await runHook(fleet, "claude-code", JSON.stringify(bash("sess-stall", 0)), [
        "--timeout",
        "1000",
      ]);
    } finally {
      fleet.signal("SIGCONT");
    }
    expect(stalled.stderr).toMatch(/the call waits in .*spool/);
    const next = await runHook(fleet, "claude-code", JSON.stringify(bash("sess-stall", 1)));
    expect(next).toMatchObject({ code: 0, stderr: "" });
    await fleet.until(() => callsStored(fleet, "sess-stall", 2).includes(1), "the second row");
    expect(spoolOf(fleet).entries()).toEqual([]);
    expect(callsStored(fleet, "sess-stall", 2)).toEqual([0, 1]);
  }, 30_000);

  it("the http path, which sends no key, is keyed by the payload's ids: the same tool call posted twice is one row", async () => {
    const fleet = shared;
    const [observer, ledger] = ["observer", "ledger"].map((s) =>
      fs.readFileSync(fleet.tokens.get(s as "observer") as string, "utf8").trim(),
    );
    const post = (payload: unknown) =>
      rawPost(
        fleet.socketPath,
        `${HOOK_PATH_PREFIX}claude-code?harness=impl`,
        { Authorization: `Bearer ${observer}`, [LEDGER_TOKEN_HEADER]: ledger as string },
        Buffer.from(JSON.stringify(payload)),
        10_000,
      );
    for (const payload of [bash("sess-http", 0), bash("sess-http", 0), bash("sess-http", 1)])
      expect((await post(payload)).headers.get("x-harness-row")).toBe("admitted");
    await fleet.until(() => callsStored(fleet, "sess-http", 2).includes(1), "the second call's row");
    expect(callsStored(fleet, "sess-http", 2)).toEqual([0, 1]);
  });
});
