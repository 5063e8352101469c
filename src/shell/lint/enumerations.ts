/**
 * The closed sets of values some event fields carry (SPEC-0029 REQ-4 and the supervisor's own specs,
 * as `/docs/policy-repo.md` lists them), for lint's advice only: the loader accepts any string, so a
 * comparison with a value outside the set loads, and can never be true. A field whose set is open
 * (an edge kind, a close `reason`) is absent, and every field may read as `""`, its zero value.
 */
import type { EventKind } from "../../core/kinds.js";

const RUN_OUTCOMES = [
  "success",
  "failed",
  "timed_out",
  "skipped",
  "replaced",
  "missed",
  "cancelled",
  "interrupted",
  "budget_exceeded",
  "quota_parked",
  "model_mismatch",
  "model_unattested",
  "running",
];
const FACT_STATUSES = ["live", "suspect", "pending_promotion", "ended", "retracted"];

const ENUMERATIONS: Readonly<Record<EventKind, Readonly<Record<string, readonly string[]>>>> = {
  run_event: {
    type: ["tool", "mark", "opened", "closed", "loop_stopped"],
    action: ["search", "read", "edit", "exec", "verify", "other"],
    mark: ["user-message", "compaction", "subagent", "error", "turn-end"],
    outcome: RUN_OUTCOMES,
  },
  attempt_event: {
    type: ["tool"],
    action: ["search", "read", "edit", "exec", "verify", "other"],
  },
  graph_event: {
    type: ["edge_added", "edge_ended", "collision_started", "collision_ended"],
    scope: ["file", "branch"],
  },
  fact_event: {
    type: ["recorded", "status_changed", "voted"],
    kind: ["observed", "synced", "asserted", "operator"],
    status: FACT_STATUSES,
    previous_status: FACT_STATUSES,
    stance: ["support", "contradict"],
  },
  tick: { type: ["tick"] },
};

/** Why `value` is never what `field` of a `kind` event holds, or undefined when it may be. */
export function outsideEnumeration(kind: EventKind, field: string, value: string): string | undefined {
  const values = Object.hasOwn(ENUMERATIONS[kind], field) ? ENUMERATIONS[kind][field] : undefined;
  if (values === undefined || value === "" || values.includes(value)) return undefined;
  return `a ${kind} never has ${field} ${JSON.stringify(value)} (it is one of ${values.join(", ")}, or "")`;
}
