/**
 * Codex's hook payloads as journal rows (issue 17, section 2): its command hooks (`hooks.json`) send
 * SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop (and PreCompact, SubagentStart) with
 * `session_id`, `turn_id`, `cwd`; shell and `apply_patch` calls arrive as `{command}`, a patch's
 * headers giving its paths. Its legacy `notify` program receives `agent-turn-complete` JSON: a turn-end
 * mark. Codex has no SessionEnd: its runs are closed by the daemon when they go quiet.
 */

import { toolRow } from "./claude-code.js";
import { cwdOf, type Mapped, type Payload, responseFailed, sessionOf, str } from "../ingest/hook-event.js";

const MARKS: Readonly<Record<string, "user-message" | "compaction" | "subagent" | "turn-end">> = {
  UserPromptSubmit: "user-message",
  PreCompact: "compaction",
  SubagentStart: "subagent",
  Stop: "turn-end",
};

const QUIET_EVENTS = new Set([
  "PreToolUse",
  "PermissionRequest",
  "PostCompact",
  "SubagentStop",
  "StopFailure",
]);

export function mapCodex(p: Payload, verifyPatterns: readonly string[]): Mapped {
  const id = sessionOf(p, "session_id", "hook_event_name");
  if ("problem" in id) return { ok: false, problem: id.problem };
  const { session, event } = id;
  const cwd = cwdOf(p);
  const gate = event === "PreToolUse" ? "tool" : event === "UserPromptSubmit" ? "prompt" : "turn";
  const base = { event, session, ...(cwd === undefined ? {} : { cwd }), gate } as const;
  if (event === "SessionStart") {
    const trigger = str(p, "source");
    return {
      ok: true,
      hook: {
        ...base,
        row: { source: "ledger", type: "opened", ...(trigger === undefined ? {} : { trigger }) },
      },
    };
  }
  if (event === "PostToolUse") {
    const row = toolRow(p, responseFailed(p.tool_response), verifyPatterns);
    return typeof row === "string" ? { ok: false, problem: row } : { ok: true, hook: { ...base, row } };
  }
  const mark = Object.hasOwn(MARKS, event) ? MARKS[event] : undefined;
  if (mark !== undefined)
    return { ok: true, hook: { ...base, row: { source: "observer", type: "mark", mark } } };
  return { ok: true, hook: QUIET_EVENTS.has(event) ? base : { ...base, unknown: true } };
}

/** Codex's legacy notify payload (`{"type": "agent-turn-complete", "thread-id": …}`): a turn-end mark. */
export function mapCodexNotify(p: Payload): Mapped {
  const id = sessionOf(p, "thread-id", "type");
  if ("problem" in id) return { ok: false, problem: id.problem };
  const { session, event } = id;
  const cwd = cwdOf(p);
  const base = { event, session, ...(cwd === undefined ? {} : { cwd }), gate: "turn" } as const;
  if (event !== "agent-turn-complete") return { ok: true, hook: { ...base, unknown: true } };
  return { ok: true, hook: { ...base, row: { source: "observer", type: "mark", mark: "turn-end" } } };
}
