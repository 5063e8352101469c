/**
 * Hook-fed runs: runs whose rows come from an agent's own hooks (Claude Code, Codex) through the
 * daemon's hook ingest, rather than from a supervisor that owns the process. No supervisor can stop
 * them, so a stop waits for the run's next hook call, and one harness may have several such runs in
 * flight at once (one per session).
 *
 * The `adapter` cannot tell them apart: a supervisor's observer writes the same `claude-code` and
 * `codex`. The daemon marks the rows its hook ingest admits with `hook_fed: true`, and admission refuses
 * the field from any producer, so the mark is one only the daemon can set. It is in the row itself, so
 * a backtest replaying the journal sees what the live evaluator saw. It is not a REQ-4 field: rules
 * cannot read it.
 */
import type { EventFields } from "./journal.js";
import { type EventKind, MAX_IDENT } from "./kinds.js";

/** The event field that marks a `run_event` or `attempt_event` row admitted through the daemon's hook ingest. */
export const HOOK_FED_FIELD = "hook_fed";

/** The kinds a hook writes, and so the kinds whose rows may carry the mark. */
export const hookFedKind = (kind: EventKind): boolean => kind === "run_event" || kind === "attempt_event";

/** Whether a row came from an agent's hooks, by the daemon's own mark. */
export const isHookFed = (event: EventFields): boolean => event[HOOK_FED_FIELD] === true;

/** How a later run of a session is marked: `~` and its generation. */
export const GENERATION_MARK = "~";

/**
 * The id of a session's `generation`th run (`agents/enforcement/run-life.ts`). The first is
 * `<harness>#<session>`, as it always was. A later one, after the operator released a stopped run or the
 * session came back to a closed one, is `<harness>#<session>~<generation>`, the session cut to its first
 * code points when the whole would pass `MAX_IDENT`, so it stays an identifier a row may carry (a first
 * run longer than that is refused at admission, as any overlong field). Whoever picks the id checks it
 * is not taken: a session id can contain `~`, or share its cut prefix with another's.
 */
export function sessionRunId(harness: string, session: string, generation: number): string {
  const first = `${harness}#${session}`;
  if (generation <= 1) return first;
  const suffix = `${GENERATION_MARK}${generation}`;
  const room = MAX_IDENT - [...`${harness}#`].length - suffix.length;
  const points = [...session];
  const kept = points.length <= room || room <= 0 ? session : points.slice(0, room).join("");
  return `${harness}#${kept}${suffix}`;
}
