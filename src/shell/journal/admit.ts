/**
 * Admission of producers' events (SPEC-0029 REQ-7): each wire event checked on its own, then offered to
 * the bounded queue, which drops rather than blocks. The answer holds one result per event, in order.
 */
import type { RefusalReason } from "../../core/admission.js";
import { hookFedKind } from "../../core/hook-runs.js";
import type { ProducerSource } from "../../core/sources.js";
import { hookFedEvent, parseWireEvent, type WireProblem } from "./event-format.js";
import type { JournalWriter, Offer } from "./journal-writer.js";

/** What became of one event: a journal row, a refusal naming the field, or a drop (the queue was full). */
export type AdmitResult =
  | { readonly kind: "admitted"; readonly seq: number }
  | { readonly kind: "rejected"; readonly code: RefusalReason; readonly reason: string }
  | { readonly kind: "dropped" };

/** How the daemon admits events, beyond what the wire says. */
export interface AdmitOptions {
  /**
   * The events came through the daemon's hook ingest: their `run_event` and `attempt_event` rows are marked hook-fed
   * (`core/hook-runs.ts`). Never set for a producer's Append, whose events may not carry the mark.
   */
  readonly hookFed?: boolean;
  /** The commit need not wait for the disk (a live hook call, answered at its commit, `../store/wal-sync.ts`). */
  readonly unsynced?: boolean;
  /** The client certificate of an Append over mutual TLS (`support/tls-listener.ts`'s `peerIdentity`). */
  readonly peer?: { readonly name: string; readonly fingerprint: string } | undefined;
}

/**
 * Admits one request's events. With `key`, the events that pass are offered as one group whose key
 * commits with their rows, and a key already committed gets its stored answer, admitting nothing again.
 */
export async function admitEvents(
  writer: JournalWriter,
  source: ProducerSource,
  events: readonly unknown[],
  key?: string,
  options: AdmitOptions = {},
): Promise<readonly AdmitResult[]> {
  if (key !== undefined) {
    let stored: string | undefined;
    try {
      stored = await writer.answered(source, key);
    } catch (e) {
      // The store cannot say whether the key was committed: nothing is admitted, as when a commit fails.
      const reason = `not admitted: ${(e as Error).message}`;
      return events.map(() => ({ kind: "rejected", code: "store_error", reason }));
    }
    if (stored !== undefined) return JSON.parse(stored) as AdmitResult[];
  }
  // Each event's refusal, or undefined for one offered to the writer.
  const refusals: (AdmitResult | undefined)[] = [];
  const offers: Offer[] = [];
  for (const wire of events) {
    const parsed = parseWireEvent(wire);
    if (parsed.ok) {
      refusals.push(undefined);
      const hookFed = options.hookFed === true && hookFedKind(parsed.kind);
      offers.push({
        source,
        kind: parsed.kind,
        event: hookFedEvent(parsed.event, hookFed),
        ...(options.peer === undefined ? {} : { peer: options.peer }),
      });
    } else
      refusals.push({
        kind: "rejected",
        // The first problem's reason stands for the event: one count per refused event.
        code: (parsed.problems[0] as WireProblem).reason,
        reason: parsed.problems.map((p) => p.message).join("; "),
      });
  }
  // The offered events in order: the first `queued` get `offered(k)`, the rest were dropped.
  const answer = (queued: number, offered: (k: number) => AdmitResult): AdmitResult[] => {
    let k = 0;
    return refusals.map((r) => {
      if (r !== undefined) return r;
      const i = k++;
      return i < queued ? offered(i) : { kind: "dropped" };
    });
  };
  const admitted = (seqs: readonly number[]) =>
    answer(seqs.length, (i) => ({ kind: "admitted", seq: seqs[i] as number }));
  const { queued, result } = writer.offerGroup(
    offers,
    key === undefined ? undefined : { source, key, answer: (seqs) => JSON.stringify(admitted(seqs)) },
    options.unsynced === true,
  );
  if (result === undefined) return answer(0, () => ({ kind: "dropped" }));
  return result.then(
    (r) => (r.kind === "committed" ? admitted(r.seqs) : (JSON.parse(r.answer) as AdmitResult[])),
    (e: Error) =>
      answer(queued, () => ({ kind: "rejected", code: "store_error", reason: `not admitted: ${e.message}` })),
  );
}
