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
import type { EventKind } from "./kinds.js";

/** The event field that marks a `run_event` or `attempt_event` row admitted through the daemon's hook ingest. */
export const HOOK_FED_FIELD = "hook_fed";

/** The kinds a hook writes, and so the kinds whose rows may carry the mark. */
export const hookFedKind = (kind: EventKind): boolean => kind === "run_event" || kind === "attempt_event";

/** Whether a row came from an agent's hooks, by the daemon's own mark. */
export const isHookFed = (event: EventFields): boolean => event[HOOK_FED_FIELD] === true;
