/**
 * Admission of producers' events (SPEC-0029 REQ-7): each wire event checked on its own, then offered to
 * the bounded queue, which drops rather than blocks. The answer holds one result per event, in order.
 */
import type { RefusalReason } from "../../core/admission.js";
import type { ProducerSource } from "../../core/sources.js";
import { parseWireEvent, type WireProblem } from "./event-format.js";
import type { JournalWriter } from "./journal-writer.js";

/** What became of one event: a journal row, a refusal naming the field, or a drop (the queue was full). */
export type AdmitResult =
  | { readonly kind: "admitted"; readonly seq: number }
  | { readonly kind: "rejected"; readonly code: RefusalReason; readonly reason: string }
  | { readonly kind: "dropped" };

export function admitEvents(
  writer: JournalWriter,
  source: ProducerSource,
  events: readonly unknown[],
): Promise<readonly AdmitResult[]> {
  const results: (AdmitResult | Promise<AdmitResult>)[] = events.map((wire) => {
    const parsed = parseWireEvent(wire);
    if (!parsed.ok)
      return {
        kind: "rejected",
        // The first problem's reason stands for the event: one count per refused event.
        code: (parsed.problems[0] as WireProblem).reason,
        reason: parsed.problems.map((p) => p.message).join("; "),
      };
    const offered = writer.offer({ source, kind: parsed.kind, event: parsed.event });
    if (offered.kind === "dropped") return { kind: "dropped" };
    return offered.seq.then(
      (seq): AdmitResult => ({ kind: "admitted", seq }),
      (e: Error): AdmitResult => ({
        kind: "rejected",
        code: "store_error",
        reason: `not admitted: ${e.message}`,
      }),
    );
  });
  return Promise.all(results);
}
