/** The Claude Code hook payloads the hook benches send: a quiet tool call's PreToolUse and PostToolUse. */

/**
 * Round `n`'s PreToolUse and PostToolUse payloads, in session `session`. Each session edits its own file:
 * two sessions of one harness editing one file collide, and the collision's fire would be told in the
 * next answer, which then carries context (`tell-e2e.test.ts` covers that; this times the quiet path).
 */
export const payloads = (repo: string, session: string, n: number) => {
  const file = `${repo}/src/${session}.ts`;
  const common = {
    session_id: session,
    transcript_path: "/t.jsonl",
    cwd: repo,
    permission_mode: "default",
  };
  const tool = {
    tool_name: "Edit",
    tool_input: { file_path: file, old_string: `a${n}`, new_string: "b", replace_all: false },
    tool_use_id: `toolu_${n}`,
  };
  return {
    PreToolUse: JSON.stringify({ ...common, hook_event_name: "PreToolUse", ...tool }),
    PostToolUse: JSON.stringify({
      ...common,
      hook_event_name: "PostToolUse",
      ...tool,
      tool_response: { filePath: file, success: true },
      duration_ms: 3,
    }),
  };
};
