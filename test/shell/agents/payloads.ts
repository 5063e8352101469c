/**
 * Hook payloads in the exact documented shapes, one per event type, field for field: Claude Code's hooks
 * reference (every event: `session_id`, `transcript_path`, `cwd`, `permission_mode`, `hook_event_name`;
 * tool events `tool_name`, `tool_input` with absolute file paths, `tool_use_id`; PostToolUse
 * `tool_response`, `duration_ms`; PostToolUseFailure `error`, `is_interrupt`, `duration_ms`) and Codex's
 * hooks schema (`session_id`, `turn_id`, `transcript_path`, `cwd`, `hook_event_name`, `model`,
 * `permission_mode`; shell and `apply_patch` calls as `{command}`). Prompts, outputs and messages carry
 * a marker the tests look for in every row, to show none is kept.
 */
export const SECRET_TEXT = "SECRET-PROMPT-OUTPUT-TEXT";

export function claudeCode(cwd: string, session = "sess-cc-1") {
  const common = {
    session_id: session,
    transcript_path: `/home/u/.claude/projects/p/${session}.jsonl`,
    cwd,
    permission_mode: "default",
  };
  return {
    SessionStart: {
      ...common,
      hook_event_name: "SessionStart",
      source: "startup",
      model: "claude-sonnet-4-5-20250929",
    },
    UserPromptSubmit: {
      ...common,
      hook_event_name: "UserPromptSubmit",
      prompt: `${SECRET_TEXT} fix the test`,
    },
    PreToolUse: {
      ...common,
      hook_event_name: "PreToolUse",
      tool_name: "Edit",
      tool_input: {
        file_path: `${cwd}/src/a.ts`,
        old_string: "a",
        new_string: `b ${SECRET_TEXT}`,
        replace_all: false,
      },
      tool_use_id: "toolu_01",
    },
    PostToolUse: {
      ...common,
      hook_event_name: "PostToolUse",
      tool_name: "Edit",
      tool_input: { file_path: `${cwd}/src/a.ts`, old_string: "a", new_string: "b", replace_all: false },
      tool_response: { filePath: `${cwd}/src/a.ts`, success: true, output: SECRET_TEXT },
      tool_use_id: "toolu_01",
      duration_ms: 12,
    },
    PostToolUseFailure: {
      ...common,
      hook_event_name: "PostToolUseFailure",
      tool_name: "Bash",
      tool_input: { command: "npm test", description: "Run the tests", timeout: 120000 },
      tool_use_id: "toolu_02",
      error: `Exit code 1\n${SECRET_TEXT}`,
      is_interrupt: false,
      duration_ms: 3400,
    },
    PreCompact: {
      ...common,
      hook_event_name: "PreCompact",
      trigger: "auto",
      custom_instructions: SECRET_TEXT,
    },
    SubagentStart: {
      ...common,
      hook_event_name: "SubagentStart",
      agent_id: "agent-7",
      agent_type: "Explore",
    },
    Stop: {
      ...common,
      hook_event_name: "Stop",
      stop_hook_active: false,
      last_assistant_message: SECRET_TEXT,
    },
    SessionEnd: { ...common, hook_event_name: "SessionEnd", reason: "prompt_input_exit" },
  };
}

export function codex(cwd: string, session = "sess-cx-1") {
  const common = {
    session_id: session,
    transcript_path: null,
    cwd,
    model: "gpt-5-codex",
    permission_mode: "default",
  };
  const patch = [
    "*** Begin Patch",
    "*** Update File: src/a.ts",
    "@@",
    "-a",
    "+b",
    "*** Add File: src/new.ts",
    "+export {};",
    "*** End Patch",
  ].join("\n");
  return {
    SessionStart: { ...common, hook_event_name: "SessionStart", source: "startup" },
    UserPromptSubmit: {
      ...common,
      turn_id: "turn-1",
      hook_event_name: "UserPromptSubmit",
      prompt: SECRET_TEXT,
    },
    PreToolUse: {
      ...common,
      turn_id: "turn-1",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "rg -n TODO src" },
      tool_use_id: "call_1",
    },
    PostToolUse: {
      ...common,
      turn_id: "turn-1",
      hook_event_name: "PostToolUse",
      tool_name: "apply_patch",
      tool_input: { command: patch },
      tool_response: `Success. Updated the following files:\n${SECRET_TEXT}`,
      tool_use_id: "call_2",
    },
    Stop: {
      ...common,
      turn_id: "turn-1",
      hook_event_name: "Stop",
      stop_hook_active: false,
      last_assistant_message: SECRET_TEXT,
    },
  };
}

/** Codex's legacy notify JSON (`agent-turn-complete`), given as the notify program's last argument. */
export const codexNotify = (cwd: string, thread = "sess-cx-1") => ({
  type: "agent-turn-complete",
  "thread-id": thread,
  "turn-id": "turn-1",
  cwd,
  "input-messages": [SECRET_TEXT],
  "last-assistant-message": SECRET_TEXT,
});
