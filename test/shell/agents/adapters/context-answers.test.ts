/**
 * Answers that carry context for the model, in each agent's documented shape: text at the events its
 * adapter record lists, as `hookSpecificOutput.additionalContext` with the call's `hookEventName`, alone
 * or beside a deny; none with a stop (the turn ends), and none where the agent rejects it (Codex's
 * PreToolUse). Telling is asked only where the answer can carry it, so nothing is recorded told in vain.
 */
import { describe, expect, it } from "vitest";
import type { RunVerdict } from "../../../../src/core/run-verdict.js";
import { AGENTS } from "../../../../src/shell/agents/adapters/registry.js";
import type { RunTelling } from "../../../../src/shell/agents/enforcement/tell.js";
import { answerTelling } from "../../../../src/shell/agents/ingest/hook-context.js";
import type { HookFormat } from "../../../../src/shell/agents/ingest/hook-format.js";

const format = (name: string) => AGENTS.hook(name) as HookFormat;
const TEXT = 'told "text"';
const ALLOW: RunVerdict = { kind: "allow" };
const HELD: RunVerdict = { kind: "held", rule: "r", fireId: "f1", clearCommand: "harness rules clear impl" };
const STOPPED: RunVerdict = {
  kind: "stopped",
  rule: "r",
  fireId: "f2",
  by: "rule",
  run: "impl#s1",
  resumeCommand: "harness rules resume impl#s1",
  released: false,
};

/** A telling that records what it was asked. */
function recorder(text: string | null = TEXT): RunTelling & { asked: number[] } {
  const asked: number[] = [];
  return {
    asked,
    tell: async (_h, _r, maxChars) => {
      asked.push(maxChars);
      return text ?? undefined;
    },
  };
}

const answer = async (name: string, event: string, verdict: RunVerdict, tell: RunTelling) => {
  const out = await answerTelling(
    { format: format(name), harness: "impl", run: "impl#s1", event, verdict },
    tell,
  );
  return out === "" ? undefined : JSON.parse(out);
};

describe("context in hook answers", () => {
  it("the adapter records list where each agent takes additionalContext, within its cap", () => {
    expect(format("claude-code").context?.events).toEqual([
      "SessionStart",
      "UserPromptSubmit",
      "PreToolUse",
      "PostToolUse",
      "PostToolUseFailure",
    ]);
    expect(format("codex").context?.events).toEqual(["SessionStart", "UserPromptSubmit", "PostToolUse"]);
    expect(format("codex-notify").context).toBeUndefined();
    for (const name of ["claude-code", "codex"])
      expect(format(name).context?.maxChars).toBeLessThanOrEqual(10_000);
  });

  it("context alone, and beside a held run's deny, in Claude Code's shape", async () => {
    for (const event of [
      "SessionStart",
      "UserPromptSubmit",
      "PostToolUse",
      "PostToolUseFailure",
      "PreToolUse",
    ])
      expect(await answer("claude-code", event, ALLOW, recorder())).toEqual({
        hookSpecificOutput: { hookEventName: event, additionalContext: TEXT },
      });
    expect(await answer("claude-code", "PreToolUse", HELD, recorder())).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: expect.stringContaining("harness rules clear impl"),
        additionalContext: TEXT,
      },
    });
  });

  it("Codex: context at its events; its PreToolUse, even denied, is never asked to tell", async () => {
    expect(await answer("codex", "UserPromptSubmit", HELD, recorder())).toEqual({
      hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: TEXT },
    });
    const tell = recorder();
    expect(await answer("codex", "PreToolUse", ALLOW, tell)).toBeUndefined();
    expect((await answer("codex", "PreToolUse", HELD, tell))?.hookSpecificOutput).not.toHaveProperty(
      "additionalContext",
    );
    expect(await answer("codex", "Stop", ALLOW, tell)).toBeUndefined();
    expect(tell.asked).toEqual([]);
  });

  it("a stopped run is told nothing, so its fires are not spent on an answer that ends the turn", async () => {
    for (const [name, event] of [
      ["claude-code", "PreToolUse"],
      ["claude-code", "UserPromptSubmit"],
      ["codex", "UserPromptSubmit"],
    ] as const) {
      const tell = recorder();
      const out = await answer(name, event, STOPPED, tell);
      expect(out.continue === false || out.hookSpecificOutput?.permissionDecision === "deny").toBe(true);
      expect(JSON.stringify(out)).not.toContain("additionalContext");
      expect(tell.asked).toEqual([]);
    }
    // Codex rejects continue:false on PreToolUse: the stop is a deny alone.
    expect(await answer("codex", "PreToolUse", STOPPED, recorder())).not.toHaveProperty("continue");
  });

  it("nothing to tell, or a telling that fails, leaves the verdict's answer as it was", async () => {
    expect(await answer("claude-code", "PostToolUse", ALLOW, recorder(null))).toBeUndefined();
    const failing: RunTelling = {
      tell: async () => {
        throw new Error("disk I/O error");
      },
    };
    expect((await answer("claude-code", "PreToolUse", HELD, failing))?.hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
    });
  });
});
