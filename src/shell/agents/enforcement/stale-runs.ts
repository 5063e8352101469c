/**
 * The stale run closer: a hook-fed run has no supervisor to close it when its agent dies
 * without a SessionEnd (killed, the machine slept, the hook timed out). A run that sends nothing for
 * `[agents] stale_after` (default 12h) is closed `interrupted`, reason `stale`, by the daemon on the
 * first minute tick after, as a `closed` row of source `ledger`. Idle time is measured in journal time
 * (each row's admission `at`), so a replay of the journal rebuilds the same state.
 */

import type { Millis } from "../../../core/durations.js";
import { HOOK_FED_FIELD, isHookFed } from "../../../core/hook-runs.js";
import type { JournalRow } from "../../../core/journal.js";
import type { Derived, Deriver } from "../../derive/deriver.js";
import { EndedRuns } from "../../derive/ended-runs.js";

/** The reason of the `closed` rows this closer writes (a session heard again goes on: `run-life.ts`). */
export const STALE_REASON = "stale";

interface OpenRun {
  readonly harness: string;
  readonly adapter: string;
  readonly session: string | undefined;
  lastAt: number;
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

export class StaleRunCloser implements Deriver {
  readonly name = "stale-runs";
  readonly kinds = ["run_event", "attempt_event", "tick"] as const;
  readonly enabled = () => true;
  private open = new Map<string, OpenRun>();
  /** Runs closed: a late row of one does not open it again, to be closed stale a second time. */
  private readonly ended = new EndedRuns();

  /** `staleAfter` read at each tick, so a reload applies. */
  constructor(private readonly staleAfter: () => Millis) {}

  reset(): void {
    this.open = new Map();
    this.ended.clear();
  }

  derive(row: JournalRow, replay: boolean): Derived | undefined {
    // A replay does not sweep: a run closed stale then has its `closed` row in the journal, and one that
    // was not (stale_after since changed) is closed by the next live tick.
    if (row.kind === "tick") return replay ? undefined : this.sweep(row.at);
    const e = row.event;
    const run = str(e.run);
    if (run === "") return undefined;
    if (e.type === "closed") {
      this.open.delete(run);
      this.ended.add(run);
      return undefined;
    }
    const known = this.open.get(run);
    if (known !== undefined) {
      known.lastAt = row.at;
      return undefined;
    }
    if (!isHookFed(e) || str(e.harness) === "" || this.ended.has(run)) return undefined;
    this.open.set(run, {
      harness: str(e.harness),
      adapter: str(e.adapter),
      session: typeof e.session === "string" ? e.session : undefined,
      lastAt: row.at,
    });
    return undefined;
  }

  private sweep(now: number): Derived | undefined {
    const limit = this.staleAfter();
    const rows: Derived["rows"][number][] = [];
    for (const [run, r] of [...this.open].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (now - r.lastAt < limit) continue;
      // Gone from the state now: its `closed` row, read back later, finds nothing left to close.
      this.open.delete(run);
      this.ended.add(run);
      rows.push({
        source: "ledger",
        kind: "run_event",
        event: {
          type: "closed",
          harness: r.harness,
          run,
          adapter: r.adapter,
          ...(r.session === undefined ? {} : { session: r.session }),
          outcome: "interrupted",
          reason: STALE_REASON,
          [HOOK_FED_FIELD]: true,
        },
      });
    }
    return rows.length === 0 ? undefined : { rows };
  }
}
