/**
 * What Claude Code's hooks and Codex's (which follow the same protocol) share: the payload's
 * `session_id` and `hook_event_name`, the events that are marks, the gate each event is, a tool call's
 * row and the decision JSON both read as the hook's answer (their hooks references give the shapes).
 */
import { type ToolClass, toolAction, toolPaths } from "../ingest/classify.js";
import { inputDigest } from "../ingest/go-json-digest.js";
import { ALLOW, type AnswerContext, type HookAnswer, type Refusal } from "../ingest/hook-answer.js";
import { type Gate, type MarkType, type Payload, type RowPlan, str } from "../ingest/hook-event.js";

export const SESSION_KEY = "session_id";
export const EVENT_KEY = "hook_event_name";

/** The events that record a mark row. */
export const MARKS: Readonly<Record<string, MarkType>> = {
  UserPromptSubmit: "user-message",
  PreCompact: "compaction",
  SubagentStart: "subagent",
  Stop: "turn-end",
};

export const markOf = (event: string): MarkType | undefined =>
  Object.hasOwn(MARKS, event) ? MARKS[event] : undefined;

/** PreToolUse asks before a tool runs, UserPromptSubmit before a prompt is read; the rest is the turn. */
export const eventGate = (event: string | undefined): Gate =>
  event === "PreToolUse" ? "tool" : event === "UserPromptSubmit" ? "prompt" : "turn";

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

/** SessionEnd's row: the run closed, its outcome from the payload's `reason`. */
export function closedRow(p: Payload): RowPlan {
  const reason = str(p, "reason");
  return {
    source: "ledger",
    type: "closed",
    ...((reason !== undefined && Object.hasOwn(SESSION_END, reason) && SESSION_END[reason]) || OTHER_END),
  };
}

/** SessionStart's row: the run opened, by its `source` (startup, resume, …). */
export function openedRow(p: Payload): RowPlan {
  const trigger = str(p, "source");
  return { source: "ledger", type: "opened", ...(trigger === undefined ? {} : { trigger }) };
}

/** A tool event's row: its class, error, digest and paths from `tool_name` and `tool_input`. */
export function toolRow(p: Payload, isError: boolean, verifyPatterns: readonly string[]): RowPlan | string {
  const call = toolCall(p, verifyPatterns);
  return typeof call === "string" ? call : { source: "observer", type: "tool", ...call, isError };
}

/** PreToolUse's row: the attempt, with what its tool row will carry that is known before the call. */
export function attemptRow(p: Payload, verifyPatterns: readonly string[]): RowPlan | string {
  const call = toolCall(p, verifyPatterns);
  return typeof call === "string" ? call : { source: "observer", type: "attempt", ...call };
}

/** What a tool call's payload says of it before and after it runs: tool, class, digest and paths. */
function toolCall(
  p: Payload,
  verifyPatterns: readonly string[],
): { tool: string; action: ToolClass; digest?: string; paths: readonly string[] } | string {
  const tool = str(p, "tool_name");
  if (tool === undefined || tool === "") return "the payload has no string tool_name";
  const input = p.tool_input;
  const digest = inputDigest(input);
  return {
    tool,
    action: toolAction(tool, input, verifyPatterns),
    ...(digest === undefined ? {} : { digest }),
    paths: toolPaths(tool, input),
  };
}

const told = (context: AnswerContext | undefined) =>
  context === undefined ? {} : { additionalContext: context.text };

const deny = (reason: string, context?: AnswerContext) => ({
  hookSpecificOutput: {
    hookEventName: "PreToolUse",
    permissionDecision: "deny",
    permissionDecisionReason: reason,
    ...told(context),
  },
});

/**
 * The decision JSON: a denied tool is a PreToolUse `deny` with its reason; a stop is `continue: false`
 * with a `stopReason`, blocking a prompt, and at a tool a `deny` beside it, or (`endTurnAtTool` false,
 * for an agent that rejects `continue: false` on PreToolUse) the `deny` alone. Context for the model is
 * `hookSpecificOutput.additionalContext` with the call's `hookEventName`, beside a deny or alone; a stop
 * ends the turn, so none is given with one (the ingest tells a stopped run nothing).
 */
export function decisionJson(
  gate: Gate,
  refusal: Refusal | undefined,
  options: { readonly endTurnAtTool: boolean },
  context?: AnswerContext,
): HookAnswer {
  const contextOnly = () =>
    context === undefined
      ? ALLOW
      : JSON.stringify({ hookSpecificOutput: { hookEventName: context.event, ...told(context) } });
  if (refusal === undefined) return contextOnly();
  const { reason } = refusal;
  if (refusal.kind === "deny") return gate === "tool" ? JSON.stringify(deny(reason, context)) : contextOnly();
  switch (gate) {
    case "tool":
      return JSON.stringify(
        options.endTurnAtTool ? { continue: false, stopReason: reason, ...deny(reason) } : deny(reason),
      );
    case "prompt":
      return JSON.stringify({ continue: false, stopReason: reason, decision: "block", reason });
    case "turn":
      return JSON.stringify({ continue: false, stopReason: reason });
  }
}
