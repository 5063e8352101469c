/**
 * Claude Code's hook payloads as journal rows (issue 17, section 1; its hooks reference gives the
 * shapes): SessionStart opens the run, SessionEnd closes it, PostToolUse and PostToolUseFailure are tool
 * calls, UserPromptSubmit, PreCompact, SubagentStart and Stop are marks, PreToolUse records nothing and
 * only asks the verdict. Only identifiers, flags, the input's digest and its paths are read: never the
 * prompt, the tool's output or a message. `docs/agents-mapping.md` is the table in prose.
 */

import { toolAction, toolPaths } from "../ingest/classify.js";
import { inputDigest } from "../ingest/go-json-digest.js";
import {
  cwdOf,
  type Gate,
  type Mapped,
  type Payload,
  type RowPlan,
  responseFailed,
  sessionOf,
  str,
} from "../ingest/hook-event.js";

/** SessionEnd's `reason` → the closed row's outcome and reason; anything else is `OTHER_END`. */
export const SESSION_END: Readonly<Record<string, { readonly outcome: string; readonly reason: string }>> = {
  // The user left at the prompt: the session's normal end.
  prompt_input_exit: { outcome: "success", reason: "" },
  // `/clear` and `/resume` end this session for another that takes its place.
  clear: { outcome: "replaced", reason: "" },
  resume: { outcome: "replaced", reason: "" },
  // Ended by the user's account or permission settings rather than by the work.
  logout: { outcome: "cancelled", reason: "operator" },
  bypass_permissions_disabled: { outcome: "cancelled", reason: "operator" },
};
/** `other`, a reason this table does not know, or none: the session ended without saying why. */
export const OTHER_END = { outcome: "interrupted", reason: "" } as const;

const MARKS: Readonly<Record<string, "user-message" | "compaction" | "subagent" | "turn-end">> = {
  UserPromptSubmit: "user-message",
  PreCompact: "compaction",
  SubagentStart: "subagent",
  Stop: "turn-end",
};

/** Events Claude Code sends that record nothing (PreToolUse only asks the verdict). */
const QUIET_EVENTS = new Set([
  "PreToolUse",
  "PermissionRequest",
  "PermissionDenied",
  "PostToolBatch",
  "Notification",
  "SubagentStop",
  "StopFailure",
  "PostCompact",
  "CwdChanged",
  "FileChanged",
  "WorktreeCreate",
  "WorktreeRemove",
  "InstructionsLoaded",
  "UserPromptExpansion",
  "Elicitation",
  "ElicitationResult",
  "ConfigChange",
  "TeammateIdle",
  "TaskCompleted",
  "TaskCreated",
  "Setup",
]);

const gateOf = (event: string): Gate =>
  event === "PreToolUse" ? "tool" : event === "UserPromptSubmit" ? "prompt" : "turn";

/** A tool event's row: action, error, digest and paths from `tool_name` and `tool_input`. */
export function toolRow(p: Payload, isError: boolean, verifyPatterns: readonly string[]): RowPlan | string {
  const tool = str(p, "tool_name");
  if (tool === undefined || tool === "") return "the payload has no string tool_name";
  const input = p.tool_input;
  const digest = inputDigest(input);
  return {
    source: "observer",
    type: "tool",
    tool,
    action: toolAction(tool, input, verifyPatterns),
    isError,
    ...(digest === undefined ? {} : { digest }),
    paths: toolPaths(tool, input),
  };
}

export function mapClaudeCode(p: Payload, verifyPatterns: readonly string[]): Mapped {
  const id = sessionOf(p, "session_id", "hook_event_name");
  if ("problem" in id) return { ok: false, problem: id.problem };
  const { session, event } = id;
  const cwd = cwdOf(p);
  const base = { event, session, ...(cwd === undefined ? {} : { cwd }), gate: gateOf(event) };
  let row: RowPlan | string | undefined;
  switch (event) {
    case "SessionStart": {
      const trigger = str(p, "source");
      row = { source: "ledger", type: "opened", ...(trigger === undefined ? {} : { trigger }) };
      break;
    }
    case "SessionEnd": {
      const reason = str(p, "reason");
      row = {
        source: "ledger",
        type: "closed",
        ...((reason !== undefined && Object.hasOwn(SESSION_END, reason) && SESSION_END[reason]) || OTHER_END),
      };
      break;
    }
    case "PostToolUse":
      row = toolRow(p, responseFailed(p.tool_response), verifyPatterns);
      break;
    case "PostToolUseFailure":
      row = toolRow(p, true, verifyPatterns);
      break;
    default: {
      const mark = Object.hasOwn(MARKS, event) ? MARKS[event] : undefined;
      if (mark !== undefined) row = { source: "observer", type: "mark", mark };
      else if (!QUIET_EVENTS.has(event)) return { ok: true, hook: { ...base, unknown: true } };
    }
  }
  if (typeof row === "string") return { ok: false, problem: row };
  return { ok: true, hook: { ...base, ...(row === undefined ? {} : { row }) } };
}
