/**
 * Codex: its command hooks (`hooks.json`) send SessionStart, UserPromptSubmit, PreToolUse (an attempt),
 * PostToolUse, Stop (and PreCompact, SubagentStart) with `session_id`, `turn_id`, `cwd`; shell and `apply_patch`
 * calls arrive as `{command}`, a patch's headers giving its paths. Its legacy `notify` program receives
 * `agent-turn-complete` JSON as its last argument (`harness hook codex-notify`): a turn-end mark, its
 * rows Codex's; install prints the `notify = [...]` line for `config.toml`. Recent releases send
 * SessionEnd, mapped as Claude Code's (a closed row); a run whose Codex sends none is closed by the daemon
 * when it goes quiet. Its hooks are read from `.codex/hooks.json` in a project or `$CODEX_HOME/hooks.json`
 * (default `~/.codex`).
 */
import { dirname, isAbsolute, join, resolve } from "node:path";
import { ALLOW } from "../ingest/hook-answer.js";
import { cwdOf, type Mapped, type Payload, responseFailed, sessionOf } from "../ingest/hook-event.js";
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

const NAME = "codex";

/**
 * The most characters of context one answer carries. Codex cuts a hook's `additionalContext` beyond the
 * hook's `additionalContextLimit` (reported to default to 10,000 characters) to its head and tail; we
 * stay well within it, so a fire never reaches the model cut.
 */
export const CODEX_CONTEXT_CHARS = 4_000;

/** Events Codex sends that record nothing. */
const QUIET_EVENTS = new Set(["PermissionRequest", "PostCompact", "SubagentStop", "StopFailure"]);

export function mapCodex(p: Payload, verifyPatterns: readonly string[]): Mapped {
  const id = sessionOf(p, SESSION_KEY, EVENT_KEY);
  if ("problem" in id) return { ok: false, problem: id.problem };
  const { session, event } = id;
  const cwd = cwdOf(p);
  const base = { event, session, ...(cwd === undefined ? {} : { cwd }) };
  if (event === "SessionStart") return { ok: true, hook: { ...base, row: openedRow(p) } };
  if (event === "SessionEnd") return { ok: true, hook: { ...base, row: closedRow(p) } };
  if (event === "PreToolUse" || event === "PostToolUse") {
    const row =
      event === "PreToolUse"
        ? attemptRow(p, verifyPatterns)
        : toolRow(p, responseFailed(p.tool_response), verifyPatterns);
    return typeof row === "string" ? { ok: false, problem: row } : { ok: true, hook: { ...base, row } };
  }
  const mark = markOf(event);
  if (mark !== undefined)
    return { ok: true, hook: { ...base, row: { source: "observer", type: "mark", mark } } };
  return { ok: true, hook: QUIET_EVENTS.has(event) ? base : { ...base, unknown: true } };
}

/** The notify payload names its session `thread-id`, its event `type`, the call by its `turn-id`. */
const NOTIFY_IDS = { session: "thread-id", event: "type", calls: [{ key: "turn-id", prefix: "" }] } as const;

/** Codex's legacy notify payload (`{"type": "agent-turn-complete", "thread-id": …}`): a turn-end mark. */
export function mapCodexNotify(p: Payload): Mapped {
  const id = sessionOf(p, NOTIFY_IDS.session, NOTIFY_IDS.event);
  if ("problem" in id) return { ok: false, problem: id.problem };
  const { session, event } = id;
  const cwd = cwdOf(p);
  const base = { event, session, ...(cwd === undefined ? {} : { cwd }) };
  if (event !== "agent-turn-complete") return { ok: true, hook: { ...base, unknown: true } };
  return { ok: true, hook: { ...base, row: { source: "observer", type: "mark", mark: "turn-end" } } };
}

const hook: HookFormat = {
  name: NAME,
  agent: NAME,
  ids: {
    session: SESSION_KEY,
    event: EVENT_KEY,
    calls: [
      { key: "tool_use_id", prefix: "tool:" },
      { key: "turn_id", prefix: "prompt:", events: ["UserPromptSubmit"] },
    ],
  },
  payloadFrom: "stdin",
  gate: eventGate,
  map: mapCodex,
  // Codex rejects `continue: false` on PreToolUse: a stopped run's tools are only denied.
  answer: (gate, refusal, context) => decisionJson(gate, refusal, { endTurnAtTool: false }, context),
  // Codex takes `additionalContext` at these; on PreToolUse it rejects it as unsupported.
  context: { events: ["SessionStart", "UserPromptSubmit", "PostToolUse"], maxChars: CODEX_CONTEXT_CHARS },
};

/** The notify program: fire-and-forget, so nothing reads its answer and nothing is refused. */
const notify: HookFormat = {
  name: `${NAME}-notify`,
  agent: NAME,
  ids: NOTIFY_IDS,
  payloadFrom: "argument",
  gate: () => "turn",
  map: (p) => mapCodexNotify(p),
  answer: () => ALLOW,
};

export const codex: AgentAdapter = {
  name: NAME,
  title: "Codex",
  hooks: [hook, notify],
  install: {
    // SessionEnd runs while Codex exits, on a short budget; only recent releases send it.
    events: {
      SessionStart: 10,
      SessionEnd: 5,
      UserPromptSubmit: 10,
      PreToolUse: 10,
      PostToolUse: 10,
      Stop: 10,
    },
    modes: ["command"],
    settingsFile: (scope, env, cwd) => {
      if (scope.kind === "project") return join(resolve(cwd, scope.dir), ".codex", "hooks.json");
      const codexHome =
        env.CODEX_HOME !== undefined && isAbsolute(env.CODEX_HOME) ? env.CODEX_HOME : undefined;
      return join(codexHome ?? join(homeDir(env), ".codex"), "hooks.json");
    },
    settingsShape: "hooks-by-event",
    // Codex reads `notify` from config.toml; a project's beside its hooks.json, the user's in $CODEX_HOME.
    argvProgram: {
      hook: notify.name,
      key: "notify",
      file: (settingsFile) => join(dirname(settingsFile), "config.toml"),
    },
    silentWhy:
      "Codex runs project and user hooks only once trusted: open /hooks in Codex and trust them; `codex exec` skips untrusted hooks silently",
    notes: [
      "Codex runs these hooks only once they are trusted: open /hooks in Codex and trust them (any later change to the file makes them untrusted again)",
    ],
  },
};
