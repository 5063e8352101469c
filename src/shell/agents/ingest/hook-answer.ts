/**
 * The answer to a hook call, in the agent's own decision format (both agents read it as the command
 * hook's stdout with exit 0, and Claude Code as an http hook's response body). Exit code 2 is never
 * used: a deny is always a decision with its reason, so an exit code alone never blocks by accident.
 *
 * - held (a run first seen after a hold): PreToolUse denied, the reason naming the rule, the fire and the
 *   clear command; other events go on.
 * - stopped: Claude Code's PreToolUse is denied and the turn ended (`continue: false`, `stopReason`);
 *   a prompt is blocked; any other event ends the turn. Codex rejects `continue: false` on PreToolUse,
 *   so there the tool is only denied (every call, until the run ends).
 */
import type { Gate, HookAdapter } from "./hook-event.js";
import type { RunVerdict } from "../enforcement/run-verdict.js";

/** What the hook prints on stdout (empty: no decision, the agent goes on). */
export type HookAnswer = string;

export const ALLOW: HookAnswer = "";

export function heldReason(harness: string, v: Extract<RunVerdict, { kind: "held" }>): string {
  return `harness ${harness} is held by rule ${v.rule} (fire ${v.fireId}); new sessions may not run tools until an operator runs: ${v.clearCommand}`;
}

export function stoppedReason(v: Extract<RunVerdict, { kind: "stopped" }>): string {
  const by = v.by === "loop_guard" ? "the loop guard" : `rule ${v.rule}`;
  return `this run was stopped by ${by} (fire ${v.fireId})`;
}

const deny = (reason: string) => ({
  hookSpecificOutput: {
    hookEventName: "PreToolUse",
    permissionDecision: "deny",
    permissionDecisionReason: reason,
  },
});

/** The answer for a call at `gate` of a run with verdict `v`. */
export function hookAnswer(adapter: HookAdapter, harness: string, gate: Gate, v: RunVerdict): HookAnswer {
  if (adapter === "codex-notify") return ALLOW; // fire-and-forget: nothing reads an answer
  switch (v.kind) {
    case "allow":
      return ALLOW;
    case "held":
      return gate === "tool" ? JSON.stringify(deny(heldReason(harness, v))) : ALLOW;
    case "stopped": {
      const reason = stoppedReason(v);
      if (gate === "tool")
        return JSON.stringify(
          adapter === "codex" ? deny(reason) : { continue: false, stopReason: reason, ...deny(reason) },
        );
      if (gate === "prompt")
        return JSON.stringify({ continue: false, stopReason: reason, decision: "block", reason });
      return JSON.stringify({ continue: false, stopReason: reason });
    }
  }
}

/** The answer when the daemon cannot be reached and `[agents] on_unreachable = "deny"`: tools only. */
export function unreachableAnswer(
  adapter: HookAdapter,
  gate: Gate,
  onUnreachable: "allow" | "deny",
): HookAnswer {
  if (onUnreachable === "allow" || gate !== "tool" || adapter === "codex-notify") return ALLOW;
  return JSON.stringify(
    deny(
      'the harness rules daemon cannot be reached, and [agents] on_unreachable = "deny" refuses tools until it can',
    ),
  );
}
