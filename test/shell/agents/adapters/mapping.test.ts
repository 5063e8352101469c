/**
 * The mapping's pieces that the end-to-end tests do not each visit: SessionEnd's reasons, a failure a
 * tool's response reports, the remote's normal form, and the answers in each agent's decision format.
 */
import { describe, expect, it } from "vitest";
import type { RunVerdict } from "../../../../src/core/run-verdict.js";
import { mapClaudeCode } from "../../../../src/shell/agents/adapters/claude-code.js";
import { mapCodex } from "../../../../src/shell/agents/adapters/codex.js";
import { OTHER_END, SESSION_END } from "../../../../src/shell/agents/adapters/hooks-protocol.js";
import { AGENTS } from "../../../../src/shell/agents/adapters/registry.js";
import { normalizeRemote } from "../../../../src/shell/agents/ingest/git-facts.js";
import { hookAnswer as answer } from "../../../../src/shell/agents/ingest/hook-answer.js";
import {
  type Gate,
  responseFailed,
  rowPayload,
  subagentOf,
} from "../../../../src/shell/agents/ingest/hook-event.js";
import type { HookFormat } from "../../../../src/shell/agents/ingest/hook-format.js";
import { claudeCode, codex } from "../payloads.js";

describe("SessionEnd's reason → outcome and reason", () => {
  it.each([
    ["prompt_input_exit", "success", ""],
    ["clear", "replaced", ""],
    ["resume", "replaced", ""],
    ["logout", "cancelled", "operator"],
    ["bypass_permissions_disabled", "cancelled", "operator"],
    ["other", "interrupted", ""],
    ["something-new", "interrupted", ""],
    // An Object.prototype key is no reason this table knows (e4eabc5 spread its function: no outcome).
    ["constructor", "interrupted", ""],
    ["__proto__", "interrupted", ""],
  ])("%s → %s %j", (reason, outcome, why) => {
    const m = mapClaudeCode({ ...claudeCode("/r").SessionEnd, reason }, []);
    expect(m).toMatchObject({ ok: true, hook: { row: { type: "closed", outcome, reason: why } } });
  });

  it("the table is what docs/agents-mapping.md lists", () => {
    expect(Object.keys(SESSION_END).sort()).toEqual([
      "bypass_permissions_disabled",
      "clear",
      "logout",
      "prompt_input_exit",
      "resume",
    ]);
    expect(OTHER_END).toEqual({ outcome: "interrupted", reason: "" });
  });
});

describe("Codex's SessionEnd and a subagent's ids", () => {
  it.each([
    ["prompt_input_exit", "success"],
    ["other", "interrupted"],
    [undefined, "interrupted"],
  ])("Codex SessionEnd %s → closed %s, as Claude Code's", (reason, outcome) => {
    const p = { ...codex("/r").SessionStart, hook_event_name: "SessionEnd", reason };
    expect(mapCodex(p, [])).toMatchObject({
      ok: true,
      hook: { row: { source: "ledger", type: "closed", outcome } },
    });
  });

  it.each([
    [
      { agent_id: "a-1", agent_type: "Explore" },
      { id: "a-1", type: "Explore" },
    ],
    [{ agent_id: "a-1" }, { id: "a-1" }],
    [{ agent_id: "", agent_type: 7 }, undefined],
    [{ agent_id: "x".repeat(257), agent_type: "Plan" }, { type: "Plan" }],
    [{ agent_id: "\u{1F600}".repeat(256) }, { id: "\u{1F600}".repeat(256) }],
    [{ agent_id: "a\u0007b", agent_type: "Plan\n" }, undefined],
    [{}, undefined],
  ])("%j → %j", (payload, subagent) => {
    expect(subagentOf(payload)).toEqual(subagent);
  });
});

describe("a failure the response reports", () => {
  it.each([
    [{ exit_code: 1 }, true],
    [{ exitCode: 0 }, false],
    [{ success: false }, true],
    [{ is_error: true }, true],
    [{ stdout: "x", stderr: "", interrupted: false }, false],
    ["Exit code: 2\nWall time: 1s", true],
    ["Exit code: 0\nOutput: ok", false],
    ["all good", false],
    [null, false],
  ])("%j → %s", (response, failed) => {
    expect(responseFailed(response)).toBe(failed);
  });

  it("a spooled payload keeps only the row's keys, and maps to the same row", () => {
    const p = { ...claudeCode("/r").PostToolUse, tool_response: { exit_code: 3, stdout: "secret" } };
    const kept = rowPayload(p, (AGENTS.hook("claude-code") as HookFormat).ids);
    expect(Object.keys(kept).sort()).toEqual([
      "cwd",
      "hook_event_name",
      "session_id",
      "tool_input",
      "tool_name",
      "tool_response",
      "tool_use_id",
    ]);
    expect(JSON.stringify(kept)).not.toContain("secret");
    expect(mapClaudeCode(kept, [])).toEqual(mapClaudeCode(p, []));
  });
});

describe("the origin remote as host/owner/name", () => {
  it.each([
    ["https://bot:hunter2@Forge.Example:8443/org/reduit.git", "forge.example/org/reduit"],
    ["git@github.com:org/repo.git", "github.com/org/repo"],
    ["ssh://git@host.example:2222/group/sub/repo", "host.example/group/sub/repo"],
    ["https://token@host.example/org/repo/", "host.example/org/repo"],
    ["http://[::1]:3000/o/r.git", "::1/o/r"],
  ])("%s → %s", (url, repo) => {
    expect(normalizeRemote(url)).toBe(repo);
  });

  it.each(["/srv/git/repo.git", "file:///srv/git/repo", "./relative", "", "https://host/org/\u0000x"])(
    "%j has no host: no repo",
    (url) => {
      expect(normalizeRemote(url)).toBeUndefined();
    },
  );
});

describe("answers in the agent's own decision format", () => {
  const hookAnswer = (name: string, harness: string, gate: Gate, v: RunVerdict) =>
    answer(AGENTS.hook(name) as HookFormat, harness, gate, v);
  const held = { kind: "held", rule: "r1", fireId: "f-9", clearCommand: "harness rules clear impl" } as const;
  const stopped = {
    kind: "stopped",
    rule: "r2",
    fireId: "f-10",
    by: "rule",
    run: "impl#s1",
    resumeCommand: "harness rules resume impl#s1",
    released: false,
  } as const;
  const json = (s: string) => JSON.parse(s) as Record<string, unknown>;

  it("allow: nothing on stdout, every gate and agent", () => {
    for (const adapter of ["claude-code", "codex", "codex-notify"] as const)
      for (const gate of ["tool", "prompt", "turn"] as const)
        expect(hookAnswer(adapter, "impl", gate, { kind: "allow" })).toBe("");
  });

  it("held: PreToolUse denied naming the rule, the fire and the clear command; prompts go on", () => {
    for (const adapter of ["claude-code", "codex"] as const) {
      const a = json(hookAnswer(adapter, "impl", "tool", held));
      expect(a).toEqual({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: expect.stringMatching(/rule r1 \(fire f-9\).*harness rules clear impl/),
        },
      });
      expect(hookAnswer(adapter, "impl", "prompt", held)).toBe("");
    }
  });

  it("stopped, Claude Code: deny and continue:false with a stopReason; prompts blocked", () => {
    const tool = json(hookAnswer("claude-code", "impl", "tool", stopped));
    expect(tool).toMatchObject({
      continue: false,
      stopReason: expect.stringMatching(/rule r2 \(fire f-10\)/),
      hookSpecificOutput: { permissionDecision: "deny" },
    });
    expect(json(hookAnswer("claude-code", "impl", "prompt", stopped))).toMatchObject({
      continue: false,
      decision: "block",
    });
    expect(json(hookAnswer("claude-code", "impl", "turn", stopped))).toMatchObject({ continue: false });
  });

  it("stopped, Codex: PreToolUse denied with a non-empty reason and never continue:false", () => {
    const tool = json(hookAnswer("codex", "impl", "tool", stopped));
    expect(tool).not.toHaveProperty("continue");
    expect(tool).toMatchObject({
      hookSpecificOutput: {
        permissionDecision: "deny",
        permissionDecisionReason: expect.stringMatching(/.+/),
      },
    });
    expect(hookAnswer("codex-notify", "impl", "turn", stopped)).toBe("");
  });
});
