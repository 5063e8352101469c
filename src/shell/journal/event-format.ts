/**
 * The wire form of a journal event, as producers send it (`harness journal append`, one JSON object a
 * line, and `JournalService.Append`): `{"kind": "run_event", "type": "tool", "at": "<RFC 3339>", …}`.
 * The source's own time `at` is RFC 3339 on the wire and ms in the row. A fact's own `kind` field is
 * written `fact_kind`, because `kind` names the row's kind. `docs/events.md` documents the format.
 */
import { type AdmissionProblem, admissionProblems } from "../../core/admission.js";
import { HOOK_FED_FIELD, hookFedKind } from "../../core/hook-runs.js";
import type { EventFields } from "../../core/journal.js";
import { EVENT_KINDS, type EventKind, isEventKind } from "../../core/kinds.js";

/** A problem with a wire event: the core's, or the wire format's own (`kind`, `at`). */
export type WireProblem = AdmissionProblem;

export type ParsedEvent =
  | { readonly ok: true; readonly kind: EventKind; readonly event: EventFields }
  | { readonly ok: false; readonly problems: readonly WireProblem[] };

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** ms since the epoch of an RFC 3339 time, or undefined when it is not one. */
export function parseRfc3339(s: string): number | undefined {
  if (!RFC3339.test(s)) return undefined;
  const ms = Date.parse(s.replace(" ", "T"));
  return Number.isFinite(ms) ? ms : undefined;
}

/** Fields an import line carries beside the event's own: where the row goes, not what it says. */
const IMPORT_ENVELOPE = new Set(["admitted_at", "source"]);

/**
 * The event a wire object describes, checked by the core's admission rules (only its kind's REQ-4
 * fields, each of its type and within bounds). `admitted_at` and `source` are the import's business and are ignored here.
 */
export function parseWireEvent(wire: unknown, options: { readonly importLine?: boolean } = {}): ParsedEvent {
  if (typeof wire !== "object" || wire === null || Array.isArray(wire))
    return {
      ok: false,
      problems: [{ field: "", reason: "bad_type", message: "an event must be a JSON object" }],
    };
  const obj = wire as Record<string, unknown>;
  const kind = obj.kind;
  if (typeof kind !== "string" || !isEventKind(kind))
    return {
      ok: false,
      problems: [
        {
          field: "kind",
          reason: "unknown_kind",
          message: `kind must be one of ${EVENT_KINDS.join(", ")} (got ${JSON.stringify(kind)})`,
        },
      ],
    };
  // No prototype, so a `__proto__` field is a field admission refuses rather than a prototype dropped.
  const event: Record<string, unknown> = Object.create(null);
  const problems: WireProblem[] = [];
  let hookFed = false;
  for (const [key, value] of Object.entries(obj)) {
    // A producer's line may not set its own source or admission time; the server stamps both.
    if (key === "kind" || (options.importLine === true && IMPORT_ENVELOPE.has(key))) continue;
    if (key === HOOK_FED_FIELD && hookFedKind(kind)) {
      // Only the daemon's hook ingest marks a row hook-fed (`core/hook-runs.ts`); an import line, written
      // into a store no daemon holds by its operator, carries the mark of the journal it came from.
      if (options.importLine !== true)
        problems.push({
          field: key,
          reason: "unknown_field",
          message: `${key} is set by the daemon's hook ingest, never by a producer`,
        });
      else if (value !== true && value !== false && value !== undefined && value !== null)
        problems.push({ field: key, reason: "bad_type", message: `${key} must be a bool` });
      else hookFed = value === true;
      continue;
    }
    if (key === "at") {
      if (value === undefined || value === null) continue;
      const ms = typeof value === "string" ? parseRfc3339(value) : undefined;
      if (ms === undefined)
        problems.push({ field: "at", reason: "bad_type", message: "at must be an RFC 3339 time" });
      else event.at = ms;
      continue;
    }
    if (kind === "fact_event" && key === "fact_kind") event.kind = value;
    else if (kind === "fact_event" && key === "kind") continue;
    else event[key] = value;
  }
  problems.push(
    ...admissionProblems(kind, event).map((p) =>
      p.field === "kind" && kind === "fact_event"
        ? { ...p, field: "fact_kind", message: p.message.replace(/^kind/, "fact_kind") }
        : p,
    ),
  );
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, kind, event: hookFedEvent({ ...event } as unknown as EventFields, hookFed) };
}

/** The event marked hook-fed when `hookFed` (`core/hook-runs.ts`), the mark last; else as it is. */
export const hookFedEvent = (event: EventFields, hookFed: boolean): EventFields =>
  hookFed ? { ...event, [HOOK_FED_FIELD]: true } : event;

/** The wire object of a row's event: the inverse of `parseWireEvent`, for export and tests. */
export function toWireEvent(kind: EventKind, event: EventFields): Record<string, unknown> {
  const out: Record<string, unknown> = { kind };
  for (const [key, value] of Object.entries(event)) {
    if (key === "at") {
      if (typeof value === "number") out.at = new Date(value).toISOString();
    } else if (kind === "fact_event" && key === "kind") out.fact_kind = value;
    else out[key] = value;
  }
  return out;
}
