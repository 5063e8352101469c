/**
 * Issue 17's ingest, end to end: fixture payloads in the agents' documented shapes replayed through real
 * `harness hook` processes (the built `bin.cjs`) against a real daemon, in a temporary git repository
 * with a branch and an origin remote that carries a password.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inputDigest } from "../../../src/shell/agents/ingest/go-json-digest.js";
import { TestFleet } from "../daemon-harness.js";
import { makeRepo, PASSWORD, rowsOf, runHook } from "./hook-harness.js";
import { claudeCode, codex, codexNotify, SECRET_TEXT } from "./payloads.js";

const AGENTS_CONFIG = '[agents]\nlisten = "127.0.0.1:0"\nverify_patterns = ["just check"]';

let fleet: TestFleet;
let repo: string;
let hooksUrl: string;

beforeAll(async () => {
  repo = makeRepo();
  fleet = new TestFleet({ config: AGENTS_CONFIG });
  const started = await fleet.start();
  hooksUrl = /hooks (http:\S+)/.exec(started)?.[1] as string;
  expect(hooksUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks\/$/);
}, 30_000);

afterAll(async () => {
  await fleet.dispose();
  fs.rmSync(repo, { recursive: true, force: true });
});

const where = { repo: "forge.example/org/reduit", branch: "feature" };

describe("Fixture payloads replayed through real harness hook processes", () => {
  it("Claude Code: one row per recorded event, with kind, type, action, digest, paths, repo, branch", async () => {
    const payloads = claudeCode(repo);
    for (const p of Object.values(payloads)) {
      const r = await runHook(fleet, "claude-code", JSON.stringify(p));
      expect(r, r.stderr).toMatchObject({ code: 0, stdout: "", stderr: "" });
    }
    await fleet.until(() => rowsOf(fleet, "sess-cc-1").length === 8, "the Claude Code rows");
    const base = {
      harness: "impl",
      run: "impl#sess-cc-1",
      adapter: "claude-code",
      ...where,
      session: "sess-cc-1",
      hook_fed: true,
    };
    expect(rowsOf(fleet, "sess-cc-1").map((r) => [r.source, r.event])).toEqual([
      ["ledger", { type: "opened", ...base, trigger: "startup" }],
      ["observer", { type: "mark", ...base, mark: "user-message" }],
      [
        "observer",
        {
          type: "tool",
          ...base,
          tool: "Edit",
          action: "edit",
          is_error: false,
          digest: inputDigest(payloads.PostToolUse.tool_input),
          paths: ["src/a.ts"],
        },
      ],
      [
        "observer",
        {
          type: "tool",
          ...base,
          tool: "Bash",
          action: "verify",
          is_error: true,
          digest: inputDigest(payloads.PostToolUseFailure.tool_input),
        },
      ],
      ["observer", { type: "mark", ...base, mark: "compaction" }],
      [
        "observer",
        { type: "mark", ...base, mark: "subagent", subagent_id: "agent-7", subagent_type: "Explore" },
      ],
      ["observer", { type: "mark", ...base, mark: "turn-end" }],
      ["ledger", { type: "closed", ...base, outcome: "success", reason: "" }],
    ]);
  });

  it("Codex: hooks and the legacy notify, apply_patch paths from the patch headers", async () => {
    const payloads = codex(repo);
    for (const p of Object.values(payloads)) {
      const r = await runHook(fleet, "codex", JSON.stringify(p));
      expect(r, r.stderr).toMatchObject({ code: 0, stdout: "", stderr: "" });
    }
    const notify = await runHook(fleet, "codex-notify", "", [JSON.stringify(codexNotify(repo))]);
    expect(notify, notify.stderr).toMatchObject({ code: 0, stdout: "", stderr: "" });
    await fleet.until(() => rowsOf(fleet, "sess-cx-1").length === 5, "the Codex rows");
    const base = {
      harness: "impl",
      run: "impl#sess-cx-1",
      adapter: "codex",
      ...where,
      session: "sess-cx-1",
      hook_fed: true,
    };
    expect(rowsOf(fleet, "sess-cx-1").map((r) => [r.source, r.event])).toEqual([
      ["ledger", { type: "opened", ...base, trigger: "startup" }],
      ["observer", { type: "mark", ...base, mark: "user-message" }],
      [
        "observer",
        {
          type: "tool",
          ...base,
          tool: "apply_patch",
          action: "edit",
          is_error: false,
          digest: inputDigest(payloads.PostToolUse.tool_input),
          paths: ["src/a.ts", "src/new.ts"],
        },
      ],
      ["observer", { type: "mark", ...base, mark: "turn-end" }],
      ["observer", { type: "mark", ...base, mark: "turn-end" }],
    ]);
  });

  it("no row holds prompt, output or message text, nor the remote's password", () => {
    for (const r of rowsOf(fleet)) {
      expect(r.raw).not.toContain(SECRET_TEXT);
      expect(r.raw).not.toContain(PASSWORD);
      expect(r.raw).not.toContain("bot@");
    }
  });

  it("the same payload through the http path and the command path gives byte-identical rows", async () => {
    const [observer, ledger] = ["observer", "ledger"].map((s) =>
      fs.readFileSync(fleet.tokens.get(s as "observer") as string, "utf8").trim(),
    );
    const payload = {
      ...claudeCode(repo, "sess-same").PostToolUse,
      tool_name: "Bash",
      tool_input: { command: "cat src/a.ts | head -3", description: "peek" },
    };
    const http = await fetch(`${hooksUrl}claude-code?harness=impl`, {
      method: "POST",
      headers: { authorization: `Bearer ${observer}`, "x-harness-ledger-token": ledger as string },
      body: JSON.stringify(payload),
    });
    expect(http.status).toBe(200);
    expect(await http.text()).toBe("");
    // Another call (the same payload twice would be one call, admitted once: hook-spool.test.ts).
    const command = await runHook(
      fleet,
      "claude-code",
      JSON.stringify({ ...payload, tool_use_id: "toolu_2" }),
    );
    expect(command).toMatchObject({ code: 0, stdout: "", stderr: "" });
    await fleet.until(() => rowsOf(fleet, "sess-same").length === 2, "both rows");
    const [a, b] = rowsOf(fleet, "sess-same");
    expect(a?.raw).toBe(b?.raw);
    expect(a?.event).toMatchObject({ action: "read", paths: ["src/a.ts"] });
  });

  it("the http path refuses a wrong token, and a call without one", async () => {
    const body = JSON.stringify(claudeCode(repo, "sess-denied").Stop);
    const wrong = await fetch(`${hooksUrl}claude-code?harness=impl`, {
      method: "POST",
      headers: { authorization: `Bearer ${"w".repeat(40)}` },
      body,
    });
    expect(wrong.status).toBe(401);
    const none = await fetch(`${hooksUrl}claude-code?harness=impl`, { method: "POST", body });
    expect(none.status).toBe(401);
    expect(rowsOf(fleet, "sess-denied")).toEqual([]);
  });

  it("issued producer tokens (harness token) bound to the harness are accepted, to another refused", async () => {
    const made = async (source: string, harness: string) => {
      const file = path.join(fleet.root, `${source}-${harness}.token`);
      const r = await fleet.cli([
        "token",
        "create",
        "--producer",
        source,
        "--harness",
        harness,
        "--out",
        file,
      ]);
      expect(r.code, r.stderr).toBe(0);
      return file;
    };
    const observer = await made("observer", "impl");
    const ledger = await made("ledger", "impl");
    const payload = JSON.stringify(claudeCode(repo, "sess-issued").SessionStart);
    const ok = await runHook(fleet, "claude-code", payload, [
      "--observer-token",
      observer,
      "--ledger-token",
      ledger,
    ]);
    expect(ok).toMatchObject({ code: 0, stdout: "", stderr: "" });
    const other = await made("ledger", "other");
    const refused = await runHook(
      fleet,
      "claude-code",
      JSON.stringify(claudeCode(repo, "sess-issued-2").SessionStart),
      ["--observer-token", observer, "--ledger-token", other],
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe("harness hook: the ledger token is bound to another harness than impl\n");
    await fleet.until(() => rowsOf(fleet, "sess-issued").length === 1, "the opened row");
    expect(rowsOf(fleet, "sess-issued-2")).toEqual([]);
  });
});
