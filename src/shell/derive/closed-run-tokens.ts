/**
 * A gateway token bound to a run is worth nothing once the run closes: its tokens are revoked when the
 * run's `closed` row commits, whoever wrote it (a producer's Append, the hook ingest, or the daemon
 * itself: a delivered stop, the stale run closer). A deriver, so the revocation commits with its cursor:
 * a crash neither skips one nor, on a replay, repeats it. It derives no row.
 */
import type { JournalRow } from "../../core/journal.js";
import type { Derived, Deriver } from "./deriver.js";

export class ClosedRunTokens implements Deriver {
  readonly name = "closed-run-tokens";
  readonly kinds = ["run_event"] as const;
  readonly enabled = () => true;

  /** `revoked`: told after a commit revoked tokens, so the tokens in force are read again. */
  constructor(
    private readonly clock: () => number,
    private readonly revoked: () => void,
  ) {}

  reset(): void {}

  derive(row: JournalRow, replay: boolean): Derived | undefined {
    const { type, run } = row.event;
    if (replay || type !== "closed" || typeof run !== "string" || run === "") return undefined;
    return {
      rows: [],
      writes: [{ kind: "run_tokens_revoked", run, at: this.clock() }],
      committed: () => this.revoked(),
    };
  }
}
