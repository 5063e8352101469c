/**
 * Who may write which journal rows (SPEC-0029 REQ-7): each producer is one source, and each source
 * produces only its own kinds and types. A `graph` producer cannot write a `closed` row, and `tick`
 * rows come only from the daemon's own clock.
 */
import type { EventKind } from "./kinds.js";

export const PRODUCER_SOURCES = ["observer", "ledger", "loopguard", "graph", "facts"] as const;
export type ProducerSource = (typeof PRODUCER_SOURCES)[number];
/** Every source a journal row may carry: the producers and the daemon's own tick. */
export type Source = ProducerSource | "tick";

export const isProducerSource = (s: string): s is ProducerSource =>
  (PRODUCER_SOURCES as readonly string[]).includes(s);

interface Produced {
  readonly kind: EventKind;
  /** The types it writes of the kind; any when absent. */
  readonly types?: readonly string[];
}

/**
 * For each source, the kinds it writes and, within a kind, the types. The observer sees a tool call
 * both before it runs (its attempt) and after (its tool row).
 */
const PRODUCES: Readonly<Record<Source, readonly Produced[]>> = {
  observer: [
    { kind: "run_event", types: ["tool", "mark"] },
    { kind: "attempt_event", types: ["tool"] },
  ],
  ledger: [{ kind: "run_event", types: ["opened", "closed"] }],
  loopguard: [{ kind: "run_event", types: ["loop_stopped"] }],
  graph: [{ kind: "graph_event" }],
  facts: [{ kind: "fact_event" }],
  tick: [{ kind: "tick", types: ["tick"] }],
};

/** Why `source` may not write a row of this kind and type, or undefined when it may. */
export function sourceRefusal(source: Source, kind: EventKind, type: string): string | undefined {
  const produced = PRODUCES[source];
  const p = produced.find((q) => q.kind === kind);
  if (p === undefined)
    return `source ${source} may not write ${kind} rows (it writes ${produced.map((q) => q.kind).join(", ")})`;
  if (p.types !== undefined && !p.types.includes(type))
    return `source ${source} may not write ${kind} rows of type ${JSON.stringify(type)} (it writes ${p.types.join(", ")})`;
  return undefined;
}

/** The source that writes rows of this kind and type: what `journal import` stamps when a line names none. */
export function defaultSource(kind: EventKind, type: string): Source {
  for (const [source, produced] of Object.entries(PRODUCES) as [Source, readonly Produced[]][])
    for (const p of produced)
      if (p.kind === kind && (p.types === undefined || p.types.includes(type))) return source;
  return kind === "run_event" || kind === "attempt_event" ? "observer" : "tick";
}
