/**
 * A stop of a hook-fed run waits for the run's next hook call (`run-verdict.ts`). When the run's `closed`
 * row comes first (the agent ended its session, or the stale closer closed it), no call will come: the
 * stop is settled then, in the transaction that commits this deriver's cursor past that row, and a
 * rule's stop action is recorded `undelivered`. It derives no row.
 */
import type { JournalRow } from "../../../core/journal.js";
import type { Derived, Deriver } from "../../derive/deriver.js";

export class StopSettler implements Deriver {
  readonly name = "stop-settler";
  readonly kinds = ["run_event"] as const;
  readonly enabled = () => true;

  constructor(private readonly clock: () => number) {}

  reset(): void {}

  derive(row: JournalRow): Derived | undefined {
    const run = row.event.run;
    if (row.event.type !== "closed" || typeof run !== "string") return undefined;
    return { rows: [], writes: [{ kind: "stop_closed_first", run, at: this.clock() }] };
  }
}
