/**
 * `harness demo` itself, against a real in-process daemon on a temporary store and socket. The daemon
 * runs the reference supervisor's stop command as the built program (`dist/`, which `npm test` builds
 * before the tests run). The proposal loop backtests in a worker, which cannot load the `.ts` sources
 * vitest serves, so its tests run the built CLI, and the in-process runs leave it out.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runDemo } from "../../../src/shell/cli/commands/demo.js";
import { stopEntryPath } from "../../../src/shell/supervisor/stop-command.js";
import { proposals } from "../../support/store-reads.js";
import { CLI } from "../daemon-harness.js";
import { OtlpReceiver } from "../telemetry/otlp-receiver.js";

beforeAll(() => {
  const file = stopEntryPath();
  expect(existsSync(file), `${file}: npm test builds dist/ before the tests run`).toBe(true);
});

describe("harness demo", () => {
  it("runs to exit 0, showing the rules fire, the hook's delivery and a hold refusing a firing", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runDemo(
      // The scripted miner needs the built CLI: test/shell/demo/demo-miner.test.ts runs it.
      { seconds: 3, miner: false, proposalLoop: false },
      { env: process.env, out: (l) => out.push(l), err: (l) => err.push(l) },
    );
    expect({ code, err }).toEqual({ code: 0, err: [] });
    const text = out.join("\n");
    expect(text).toMatch(/rule_fired delivered: \S+ for \S+/);
    expect(text).toContain("nightly's scheduled firing skipped (nightly#3 closed skipped, reason rule_hold)");
    expect(text).toContain(
      "harness start nightly refused: nightly is held by rule budget-exhaustion-recurring",
    );
    expect(text).toMatch(/6 starter rules fired/);
    const dir = /directory {2}(\S+)/.exec(text)?.[1];
    expect(dir !== undefined && existsSync(dir)).toBe(false);
  });

  it("with --json prints its events as JSON lines: the start, each event, and the verdict", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runDemo(
      { seconds: 3, json: true, miner: false, proposalLoop: false },
      { env: process.env, out: (l) => out.push(l), err: (l) => err.push(l) },
    );
    expect({ code, err }).toEqual({ code: 0, err: [] });
    const events = out.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events[0]).toMatchObject({ kind: "start", enforce: ["budget-exhaustion-recurring"] });
    const fired = events.find((e) => e.kind === "hook" && e.payload !== undefined);
    expect(fired?.payload).toMatchObject({ event: "rule_fired" });
    expect(events).toContainEqual(
      expect.objectContaining({ kind: "hold", message: expect.stringContaining("reason rule_hold") }),
    );
    for (const e of events.slice(1, -1)) expect(typeof e.t).toBe("number");
    expect(events.at(-1)).toMatchObject({ kind: "done", rules_fired: expect.any(Array) });
  });

  it.each(["http/json", "http/protobuf"])(
    "with --otel-endpoint (%s) every fire of the demo and its hold reach the collector, with the documented attributes",
    async (protocol) => {
      const receiver = new OtlpReceiver();
      const endpoint = await receiver.start();
      try {
        const out: string[] = [];
        const err: string[] = [];
        const code = await runDemo(
          { seconds: 3, json: true, miner: false, proposalLoop: false, otel: { endpoint, protocol } },
          { env: process.env, out: (l) => out.push(l), err: (l) => err.push(l) },
        );
        expect({ code, err }).toEqual({ code: 0, err: [] });
        expect(receiver.contentTypes).toEqual(
          new Set([protocol === "http/json" ? "application/json" : "application/x-protobuf"]),
        );
        const done = JSON.parse(out.at(-1) ?? "{}") as { rules_fired: unknown[] };
        const fireRecords = receiver.records.filter((r) => r.attributes["harness.decision"] === "fire");
        const names = done.rules_fired.map((r) => (typeof r === "string" ? r : (r as { rule: string }).rule));
        expect(names.length).toBeGreaterThan(0);
        expect(new Set(fireRecords.map((r) => r.attributes["harness.rule.name"]))).toEqual(new Set(names));
        // Each fire once: the fire id is the record's identity.
        const ids = fireRecords.map((r) => r.attributes["harness.fire.id"]);
        expect(new Set(ids).size).toBe(ids.length);
        // Every fire the notify hook was told of is among the records.
        const notified = out
          .map((l) => JSON.parse(l) as { kind?: string; payload?: { event?: string; fire_id?: string } })
          .filter((e) => e.kind === "hook" && e.payload?.event === "rule_fired")
          .map((e) => e.payload?.fire_id);
        expect(notified.length).toBeGreaterThan(0);
        for (const id of notified) expect(ids).toContain(id);
        for (const r of fireRecords) {
          expect(r.eventName).toBe("harness.rule.decision");
          expect(r.resource).toMatchObject({ "service.name": "harness-rules" });
          expect(r.attributes).toMatchObject({
            "harness.rule.content_hash": expect.stringMatching(/^[0-9a-f]{8,}/),
            "harness.rule.level": expect.stringMatching(/^(annotate|notify|hold|stop)$/),
            "harness.rule.declared_level": expect.stringMatching(/^(annotate|notify|hold|stop)$/),
            "harness.rule.mode": expect.stringMatching(/^(shadow|active)$/),
            "harness.fire.id": expect.any(String),
            "harness.fire.action": expect.any(String),
            "harness.journal.seq": expect.any(Number),
            "harness.event.kind": expect.any(String),
            "harness.event.type": expect.any(String),
            "gen_ai.guardrail.component.name": "harness-rules",
            "gen_ai.guardrail.security.policy.id": r.attributes["harness.rule.name"],
            "gen_ai.guardrail.verdict.type": expect.stringMatching(/^(audit|warn|escalate|deny)$/),
            "gen_ai.guardrail.action.type": expect.stringMatching(/^(allow|escalate|block)$/),
          });
        }
        expect(receiver.records).toContainEqual(
          expect.objectContaining({
            attributes: expect.objectContaining({
              "harness.decision": "hold",
              "harness.rule.name": "budget-exhaustion-recurring",
              "harness.target.harness": "nightly",
            }),
          }),
        );
      } finally {
        await receiver.stop();
      }
    },
  );

  it("with --keep-running the fleet tells its story again to new harnesses until Ctrl-C, then ends with exit 0", async () => {
    const out: string[] = [];
    const err: string[] = [];
    let interrupted = false;
    const code = await runDemo(
      { seconds: 3, miner: false, proposalLoop: false, keepRunning: true },
      {
        env: process.env,
        out: (l) => {
          out.push(l);
          // Ctrl-C once the next round's hold has refused a start: the story told again, holds and all.
          if (!interrupted && l.includes("harness start nightly-r1 refused")) {
            interrupted = true;
            process.emit("SIGINT");
          }
        },
        err: (l) => err.push(l),
      },
    );
    expect({ code, err }).toEqual({ code: 0, err: [] });
    const text = out.join("\n");
    expect(text).toMatch(
      /the fleet keeps running until Ctrl-C; watch it: harness tui --config \S+harness\.toml/,
    );
    for (const round of ["", "-r1"])
      expect(text).toContain(`budget-exhaustion-recurring fired on nightly${round} (hold, enforced)`);
    expect(text).not.toMatch(/warn/);
    expect(text).toMatch(/6 starter rules fired/);
  }, 60_000);
});

/** The built `harness demo`, run as a user runs it, with no network or TLS tooling needed. */
function demo(args: readonly string[]) {
  const r = spawnSync(process.execPath, [CLI, "demo", "--seconds", "3", ...args], {
    encoding: "utf8",
    timeout: 120_000,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR ?? "/tmp" },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The marker a pull request body starts with (src/shell/forge/pull-body.ts). */
const MARKER = /^<!-- harness-rules name=([a-z][a-z0-9-]*) hash=([0-9a-f]{64}) -->$/;

// Whichever miner stored the proposal (the in-process one, or the MCP miner's when it ran first), the
// checks below follow the proposal the pass opened.
describe("harness demo's proposal loop", () => {
  it("a miner's stored proposal becomes exactly one pull request on the local forge, with the marker, its URL and body summary printed", () => {
    const r = demo(["--json", "--keep"]);
    const events = r.stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const dir = events[0]?.directory as string | undefined;
    try {
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
      const opened = events.filter((e) => e.kind === "propose" && e.action === "opened");
      expect(opened).toEqual([expect.objectContaining({ proposal: "p-1", pr_number: 1 })]);
      const url = opened[0]?.pr_url as string;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/fleet\/policy\/pulls\/1$/);
      const shown = events.find((e) => e.kind === "forge" && e.pr_url !== undefined);
      expect(shown).toMatchObject({ pr_number: 1, pr_url: url });
      const summary = shown?.body_summary as string[];
      const name = MARKER.exec(summary[0] ?? "")?.[1];
      expect(name, summary[0]).toBeDefined();
      expect(summary).toContain("Backtest over the last 30d");
      expect(summary).toContainEqual(expect.stringMatching(/cannot hold or stop a harness unless/));
      expect(summary).toContainEqual(expect.stringMatching(/^Would have fired \(\d+ of [1-9]\d*\)$/));
      expect(events.at(-1)).toMatchObject({ kind: "done", pull_request: url });

      // What the forge received, as it keeps it: exactly one pull request, its body carrying one marker
      // with the stored proposal's name and expression hash, on a branch that adds only the rule's file.
      const pulls = JSON.parse(readFileSync(path.join(dir as string, "forge", "pulls.json"), "utf8")) as {
        body: string;
        head: string;
        reviewers: string[];
        labels: string[];
      }[];
      expect(pulls).toHaveLength(1);
      const body = pulls[0]?.body ?? "";
      expect(body.match(/<!-- harness-rules /g)).toHaveLength(1);
      const [stored] = proposals({ storePath: path.join(dir as string, "state", "harness", "harness.db") });
      if (stored === undefined) throw new Error("the demo stored no proposal");
      expect(stored).toMatchObject({ id: "p-1", name, state: "opened" });
      expect(body.split("\n")[0]).toBe(
        `<!-- harness-rules name=${stored.name} hash=${stored.expressionHash} -->`,
      );
      expect(pulls[0]).toMatchObject({
        head: `harness-rules/${stored.name}`,
        reviewers: ["alice"],
        labels: ["harness-rules"],
      });
      const bare = path.join(dir as string, "forge", "repos", "fleet", "policy.git");
      const changed = spawnSync(
        "git",
        ["--git-dir", bare, "diff", "--name-only", `main...harness-rules/${stored.name}`],
        { encoding: "utf8" },
      );
      expect(changed.stdout.trim()).toBe(`rules/${stored.name}.toml`);
    } finally {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it("prints the pull request's URL and its body's summary", () => {
    const r = demo([]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const url = /pull request #1 opened: (http:\/\/127\.0\.0\.1:\d+\/fleet\/policy\/pulls\/1)$/m.exec(
      r.stdout,
    )?.[1];
    expect(url, r.stdout).toBeDefined();
    const lines = r.stdout.split("\n").map((l) => l.trim());
    expect(lines).toContainEqual(expect.stringMatching(MARKER));
    expect(lines).toContainEqual(
      expect.stringMatching(/^\d+ fires? over \d+ rows; 0 eval errors, 0 store errors\.$/),
    );
    expect(lines).toContainEqual(expect.stringMatching(/^Would have fired \(\d+ of [1-9]\d*\)$/));
    expect(r.stdout).toMatch(
      /A rule miner's proposal p-1 became pull request #1 on the local forge: (\S+)$/m,
    );
    expect(r.stdout).toContain(`pull request #1 on the local forge: ${url}`);
  }, 120_000);
});
