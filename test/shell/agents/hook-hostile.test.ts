/**
 * Hostile hook input through real `harness hook` processes and a real daemon: a clear stderr line, an
 * exit code that lets the tool run (0 or 1, never 2, never a deny), nothing admitted beyond the
 * journal's bounds, no credential in any row.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestFleet } from "../daemon-harness.js";
import { makeRepo, PASSWORD, rowsOf, runHook } from "./hook-harness.js";
import { claudeCode } from "./payloads.js";

let fleet: TestFleet;
let repo: string;
let metricsUrl: string;

beforeAll(async () => {
  repo = makeRepo();
  fleet = new TestFleet({ config: '[agents]\nlisten = ""' });
  metricsUrl = /metrics (http:[^\s,]+)/.exec(await fleet.start())?.[1] as string;
}, 30_000);

afterAll(async () => {
  await fleet.dispose();
  fs.rmSync(repo, { recursive: true, force: true });
});

/** The tool runs: exit 0 or 1 (both agents run the tool on any code but 2), and no deny on stdout. */
function letsTheToolRun(r: { code: number | null; stdout: string }): void {
  expect([0, 1]).toContain(r.code);
  expect(r.stdout).not.toContain("deny");
  expect(r.stdout).not.toContain('"continue":false');
}

const read = (session: string, filePath: string, extra: Record<string, unknown> = {}) => ({
  ...claudeCode(repo, session).PostToolUse,
  tool_name: "Read",
  tool_input: { file_path: filePath },
  ...extra,
});

describe("Hostile hook input", () => {
  it("invalid JSON: a clear stderr line, exit 1, nothing recorded", async () => {
    const r = await runHook(fleet, "claude-code", '{"session_id": "x", ');
    letsTheToolRun(r);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("harness hook: the payload is not JSON; not recorded\n");
  });

  it("10 MB of stdin: refused unread past the bound, exit 1, the tool runs", async () => {
    const big = Buffer.alloc(10 * 1024 * 1024, 0x61);
    const r = await runHook(fleet, "claude-code", big);
    letsTheToolRun(r);
    expect(r.stderr).toMatch(
      /^harness hook: the payload is larger than 8388608 bytes; not recorded, the tool runs\n$/,
    );
  });

  it("unknown events: answered, not recorded, named on stderr", async () => {
    const p = { ...claudeCode(repo, "sess-unknown").Stop, hook_event_name: "BrandNewEvent" };
    const r = await runHook(fleet, "claude-code", JSON.stringify(p));
    letsTheToolRun(r);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('harness hook: unknown claude-code event "BrandNewEvent"; not recorded\n');
    expect(rowsOf(fleet, "sess-unknown")).toEqual([]);
  });

  it("`..` paths, symlinks out of the repo and NUL bytes drop the path, never the row", async () => {
    fs.writeFileSync(path.join(path.dirname(repo), "outside.txt"), "x");
    const paths = [
      `${repo}/../outside.txt`,
      "src/../../outside.txt",
      `${repo}/out/passwd`,
      "out/hosts",
      `${repo}/src/a\u0000.ts`,
      "src/\u001b[31mred.ts",
      "/etc/passwd",
      `${repo}/src/a.ts`,
    ];
    for (const [i, p] of paths.entries()) {
      const r = await runHook(fleet, "claude-code", JSON.stringify(read(`sess-paths-${i}`, p)));
      letsTheToolRun(r);
      expect(r).toMatchObject({ code: 0, stderr: "" });
    }
    await fleet.until(
      () => paths.every((_, i) => rowsOf(fleet, `sess-paths-${i}`).length === 1),
      "one row per call",
    );
    const kept = paths.map((_, i) => rowsOf(fleet, `sess-paths-${i}`)[0]?.event.paths);
    expect(kept).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      ["src/a.ts"],
    ]);
  });

  it("more than 64 paths keep the first 64", async () => {
    const p = {
      ...claudeCode(repo, "sess-many").PostToolUse,
      tool_name: "Bash",
      tool_input: {
        command: `cat ${Array.from({ length: 80 }, (_, i) => `f${String(i).padStart(2, "0")}.txt`).join(" ")}`,
      },
    };
    const r = await runHook(fleet, "claude-code", JSON.stringify(p));
    expect(r).toMatchObject({ code: 0, stderr: "" });
    await fleet.until(() => rowsOf(fleet, "sess-many").length === 1, "the row");
    expect(rowsOf(fleet, "sess-many")[0]?.event.paths).toHaveLength(64);
  });

  it("a NUL byte in the session id: refused with a clear line, the tool runs", async () => {
    const r = await runHook(fleet, "claude-code", JSON.stringify(claudeCode(repo, "sess\u0000nul").Stop));
    letsTheToolRun(r);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("harness hook: session_id holds a control character; not recorded\n");
  });

  it("a session id past the journal's bounds is refused by admission, counted as Append's refusals are; the tool runs", async () => {
    const r = await runHook(fleet, "claude-code", JSON.stringify(claudeCode(repo, "s".repeat(300)).Stop));
    letsTheToolRun(r);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^harness hook: the row was refused: .*longer than 256 characters/);
    const metrics = await (await fetch(metricsUrl)).text();
    expect(metrics).toContain('harness_rule_journal_rejected_total{source="observer",reason="too_long"} 1');
  });

  it("a payload that is JSON but no object, and one without a session", async () => {
    for (const body of ["[1,2]", "null", '"x"', '{"hook_event_name":"Stop"}']) {
      const r = await runHook(fleet, "claude-code", body);
      letsTheToolRun(r);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /^harness hook: the payload (is not a JSON object|has no string session_id); not recorded\n$/,
      );
    }
  });

  it("a wrong token: refused with a clear line, the tool runs, the token never printed", async () => {
    const wrong = path.join(fleet.root, "wrong.token");
    fs.writeFileSync(wrong, `${"w".repeat(40)}\n`, { mode: 0o600 });
    const r = await runHook(fleet, "claude-code", JSON.stringify(claudeCode(repo, "sess-wrong").Stop), [
      "--observer-token",
      wrong,
    ]);
    letsTheToolRun(r);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "harness hook: the Authorization bearer token is not one the daemon knows for the observer producer\n",
    );
    expect(r.stderr).not.toContain("wwww");
  });

  it("bad arguments: usage on stderr, exit 1", async () => {
    const r = await runHook(fleet, "claude-code", "{}", ["--bogus", "1"]);
    letsTheToolRun(r);
    expect(r.stderr).toMatch(/^harness hook: unknown option --bogus\nusage: harness hook /);
  });

  it("no row holds the remote's password", () => {
    const rows = rowsOf(fleet);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.raw).not.toContain(PASSWORD);
      expect(row.event.repo).toBe("forge.example/org/reduit");
    }
  });
});
