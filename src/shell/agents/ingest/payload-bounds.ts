/**
 * How much of a hook payload's fields the mapping reads: each bound is checked before any
 * other work on its field, so the work one call costs is bounded by these numbers, not by what a
 * producer sends. docs/security.md ("Bounds on what producers send") is this table in prose. Lengths
 * are UTF-16 code units (`string.length`), checked before anything scans the string; the journal's own
 * bounds (`core/kinds.ts`, in code points) then apply to what reaches a row.
 */

/** `hook_event_name` (Codex notify's `type`): past it the call is refused; no event is named so long. */
export const MAX_EVENT_NAME = 256;
/**
 * A subagent's `agent_id` or `agent_type`, in code points: the journal's identifier bound (`core/kinds.ts`
 * MAX_IDENT, not imported: the hook's bundle stays without the rule engine). Past it the value is left out.
 */
export const MAX_SUBAGENT_FIELD = 256;

/**
 * `cwd`: Linux's PATH_MAX, and its depth in components (each costs a `stat` per call, looking for the
 * repository's `.git`). Past either the `cwd` is ignored: the row is kept without repo, branch or paths.
 */
export const MAX_CWD = 4096;
export const MAX_CWD_DEPTH = 128;

/**
 * A shell command's text: past it the command is not parsed, its call is `exec` with no paths (an
 * `apply_patch` here-document is still read for its headers, line by line).
 */
export const MAX_COMMAND = 64 * 1024;

/** A path as the call wrote it (a `file_path`, a command's argument, a patch header): past it, dropped. */
export const MAX_RAW_PATH = 4096;

/** Paths a call's input may name that are looked at; the rest are not read. The row keeps at most 64. */
export const MAX_RAW_PATHS = 128;

/**
 * Components of a path not yet on disk (a Write's new directories) walked up before the path is
 * dropped: each is a `realpath` call.
 */
export const MAX_MISSING_COMPONENTS = 16;

/** Of a text `tool_response`, only its opening is read (`Exit code: N`). */
export const MAX_RESPONSE_PREFIX = 32;

/** A remote URL git prints for `remote.origin.url`: past it, the row has no `repo`. */
export const MAX_REMOTE_URL = 2048;

/**
 * The nesting of `tool_input` its digest is computed to; deeper, the row has no digest. Go's decoder
 * goes to 10,000, past what a recursive encoder's stack holds; no agent's tool input nests near 1,000.
 */
export const MAX_INPUT_DEPTH = 1000;

/**
 * The journal's bounds on a row's identifiers (`repo`, `branch`), on one path and on a row's paths
 * (`core/kinds.ts` MAX_IDENT, MAX_PATH, MAX_PATHS, in code points; not imported, as above: the
 * forwarder computes git facts for a remote daemon with `git-facts.ts` and `repo-paths.ts`).
 */
export const ROW_IDENT = 256;
export const ROW_PATH = 1024;
export const ROW_PATHS = 64;

/** Whether `s` holds at most `maxComponents` slashes: a scan that stops at the bound. */
export function withinDepth(s: string, maxComponents: number): boolean {
  let slashes = 0;
  for (let i = s.indexOf("/"); i >= 0; i = s.indexOf("/", i + 1)) if (++slashes > maxComponents) return false;
  return true;
}
