/**
 * Claude Code: its hook payloads as journal rows (its hooks reference gives the shapes): SessionStart
 * opens the run, SessionEnd closes it, PostToolUse and PostToolUseFailure are tool calls,
 * UserPromptSubmit, PreCompact, SubagentStart and Stop are marks, PreToolUse is an attempt (the tool
 * call about to run, judged by the rules before the answer). Inside a subagent its payloads carry
 * `agent_id` and `agent_type`, which every row of the call carries as `subagent_id` and `subagent_type`. Only identifiers, flags, the input's digest and its paths are read: never the
 * prompt, the tool's output or a message. `docs/agents-mapping.md` is the table in prose. Its hooks run
 * as commands or post over http, from `.claude/settings.local.json` in a project (never the committed
 * `settings.json`) or `~/.claude/settings.json`.
 */
import { join, resolve } from "node:path";
import {
  cwdOf,
  type Mapped,
  type Payload,
  type RowPlan,
  responseFailed,
  sessionOf,
  subagentOf,
} from "../ingest/hook-event.js";
import type { HookFormat } from "../ingest/hook-format.js";
import { type AgentAdapter, homeDir } from "./adapter.js";
import {
  attemptRow,
  closedRow,
  decisionJson,
  EVENT_KEY,
  eventGate,
  markOf,
  openedRow,
  SESSION_KEY,
  toolRow,
} from "./hooks-protocol.js";

/** Events Claude Code sends that record nothing. */
const QUIET_EVENTS = new Set([
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

export function mapClaudeCode(p: Payload, verifyPatterns: readonly string[]): Mapped {
  const id = sessionOf(p, SESSION_KEY, EVENT_KEY);
  if ("problem" in id) return { ok: false, problem: id.problem };
  const { session, event } = id;
  const cwd = cwdOf(p);
  const subagent = subagentOf(p);
  const base = {
    event,
    session,
    ...(cwd === undefined ? {} : { cwd }),
    ...(subagent === undefined ? {} : { subagent }),
  };
  let row: RowPlan | string | undefined;
  switch (event) {
    case "SessionStart":
      row = openedRow(p);
      break;
    case "SessionEnd":
      row = closedRow(p);
      break;
    case "PreToolUse":
      row = attemptRow(p, verifyPatterns);
      break;
    case "PostToolUse":
      row = toolRow(p, responseFailed(p.tool_response), verifyPatterns);
      break;
    case "PostToolUseFailure":
      row = toolRow(p, true, verifyPatterns);
      break;
    default: {
      const mark = markOf(event);
      if (mark !== undefined) row = { source: "observer", type: "mark", mark };
      else if (!QUIET_EVENTS.has(event)) return { ok: true, hook: { ...base, unknown: true } };
    }
  }
  if (typeof row === "string") return { ok: false, problem: row };
  return { ok: true, hook: { ...base, ...(row === undefined ? {} : { row }) } };
}

const NAME = "claude-code";

/**
 * The most characters of context one answer carries. Claude Code caps a hook's output strings at 10,000
 * characters; we stay well within it, so a fire never reaches the model cut.
 */
export const CLAUDE_CODE_CONTEXT_CHARS = 4_000;

const hook: HookFormat = {
  name: NAME,
  agent: NAME,
  ids: {
    session: SESSION_KEY,
    event: EVENT_KEY,
    calls: [
      { key: "tool_use_id", prefix: "tool:" },
      { key: "prompt_id", prefix: "prompt:", events: ["UserPromptSubmit"] },
    ],
  },
  payloadFrom: "stdin",
  gate: eventGate,
  map: mapClaudeCode,
  answer: (gate, refusal, context) => decisionJson(gate, refusal, { endTurnAtTool: true }, context),
  // The events whose `hookSpecificOutput.additionalContext` its hooks reference documents.
  context: {
    events: ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure"],
    maxChars: CLAUDE_CODE_CONTEXT_CHARS,
  },
};

export const claudeCode: AgentAdapter = {
  name: NAME,
  title: "Claude Code",
  hooks: [hook],
  install: {
    // SessionEnd runs while the agent exits, on a short budget of its own.
    events: {
      SessionStart: 10,
      SessionEnd: 5,
      UserPromptSubmit: 10,
      PreToolUse: 10,
      PostToolUse: 10,
      PostToolUseFailure: 10,
      PreCompact: 10,
      SubagentStart: 10,
      Stop: 10,
    },
    modes: ["command", "http"],
    settingsFile: (scope, env, cwd) =>
      scope.kind === "user"
        ? join(homeDir(env), ".claude", "settings.json")
        : join(resolve(cwd, scope.dir), ".claude", "settings.local.json"),
    settingsShape: "hooks-by-event",
    notes: [],
    failClosed: {
      field: { onFailure: "block" },
      events: ["PreToolUse"],
      since: "2.1.295",
      before:
        "an older Claude Code ignores onFailure: a PreToolUse hook that cannot start or times out lets the tool run, while our forwarder still denies it when the daemon cannot be reached",
    },
  },
};
