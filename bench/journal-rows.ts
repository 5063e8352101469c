/**
 * Synthetic journal rows for the store benches, with the mix `evaluate.bench.ts` uses: mostly tool rows
 * with two paths, some opened/closed rows, graph events and a tick a minute, from 20 harnesses over 200
 * files of one repo. Seeded, so every run writes the same rows.
 */
import type { EventFields } from "../src/core/journal.js";
import type { EventKind } from "../src/core/kinds.js";
import type { Source } from "../src/core/sources.js";

/** A row as the writer stores it: what `JournalTable.append` takes. */
export interface BenchRow {
  readonly kind: EventKind;
  readonly source: Source;
  readonly at: number;
  readonly event: EventFields;
}

export const REPO = "forge.example/org/reduit";
const HARNESSES = Array.from({ length: 20 }, (_, i) => `h${i}`);
const ACTIONS = ["search", "read", "edit", "exec", "verify", "other"];
const PATHS = Array.from({ length: 200 }, (_, i) => `internal/pkg${i % 20}/file${i}.go`);

export function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const picker =
  (r: () => number) =>
  <T>(xs: readonly T[]): T =>
    xs[Math.floor(r() * xs.length)] as T;

/** The `i`th tool call of a fleet: what an observer appends for most of the journal. */
function toolEvent(r: () => number, i: number): EventFields {
  const pick = picker(r);
  const harness = pick(HARNESSES);
  return {
    type: "tool",
    harness,
    run: `${harness}#${Math.floor(i / 500)}`,
    repo: REPO,
    tool: "Bash",
    action: pick(ACTIONS),
    is_error: r() < 0.1,
    digest: `d${Math.floor(r() * 50)}`,
    paths: [pick(PATHS), pick(PATHS)],
  };
}

/** `n` tool events: the admission benches' rows. */
export function toolEvents(n: number, seed = 1): EventFields[] {
  const r = random(seed);
  return Array.from({ length: n }, (_, i) => toolEvent(r, i));
}

/**
 * `n` rows of a journal admitting `perDay` rows a day from `t0`, produced lazily so a month of them
 * never has to be held at once.
 */
export function* journalRows(n: number, perDay: number, t0: number, seed = 42): Generator<BenchRow> {
  const r = random(seed);
  const pick = picker(r);
  const step = 86_400_000 / perDay;
  let lastTick = t0;
  for (let i = 0; i < n; i++) {
    const at = Math.floor(t0 + i * step);
    if (at - lastTick >= 60_000) {
      yield { kind: "tick", source: "tick", at, event: { type: "tick" } };
      lastTick = at;
      continue;
    }
    const roll = r();
    if (roll < 0.85) {
      yield { kind: "run_event", source: "observer", at, event: toolEvent(r, i) };
      continue;
    }
    const harness = pick(HARNESSES);
    const run = `${harness}#${Math.floor(i / 500)}`;
    if (roll < 0.9)
      yield {
        kind: "run_event",
        source: "ledger",
        at,
        event: {
          type: r() < 0.5 ? "opened" : "closed",
          harness,
          run,
          outcome: pick(["success", "failed", "budget_exceeded"]),
          cause_digest: `c${Math.floor(r() * 5)}`,
        },
      };
    else
      yield {
        kind: "graph_event",
        source: "graph",
        at,
        event: {
          type: pick(["edge_added", "edge_added", "collision_started"]),
          edge: "edited",
          scope: "file",
          repo: REPO,
          path: pick(PATHS),
          harness,
          run,
        },
      };
  }
}
