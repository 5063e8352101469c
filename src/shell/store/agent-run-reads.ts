/**
 * What a hook-fed run's verdict reads (`agents/enforcement/run-verdict.ts`), on every hook call while a hold is on,
 * each one index seek: the seq of the run's first row of any type (`rule_journal_run`), and the seq of
 * the row whose fire placed the hold.
 */
import type { Db } from "./open-store.js";

export class AgentRunReads {
  private readonly first;
  private readonly fire;

  constructor(private readonly db: Db) {
    // ORDER BY … LIMIT 1 on (run, seq): one seek whatever the run's length.
    this.first = db.prepare(
      "SELECT seq FROM rule_journal WHERE run = ? AND run IS NOT NULL ORDER BY seq LIMIT 1",
    );
    this.fire = db.prepare("SELECT seq FROM rule_fires WHERE fire_id = ?");
  }

  /** The seq of the run's first committed row of any type, if the journal holds one. */
  firstSeq(run: string): number | undefined {
    return (this.first.get(run) as { seq: number } | undefined)?.seq;
  }

  /**
   * Where a rebuild of the daemon's derivers starts (`derive/derivation.ts`): the first `opened` row of
   * any hook-fed run in flight, the row after the evaluator's cursor, and the rows of the last `recentMs`
   * before the cursor's row (closed runs' late rows), whichever is first.
   */
  replayFrom(evaluatorCursor: number, recentMs: number): number {
    const opened = (
      this.db
        .prepare(
          // Per session, by the partial index of opened rows (a join would scan every run_event row).
          "SELECT min((SELECT min(seq) FROM rule_journal j WHERE j.run = s.run AND j.kind = 'run_event' AND j.type = 'opened')) AS seq FROM sessions_in_flight s",
        )
        .get() as { seq: number | null }
    ).seq;
    const at = (
      this.db.prepare("SELECT at FROM rule_journal WHERE seq = ?").get(evaluatorCursor) as
        | { at: number }
        | undefined
    )?.at;
    const recent =
      at === undefined
        ? undefined
        : (
            this.db.prepare("SELECT min(seq) AS seq FROM rule_journal WHERE at >= ?").get(at - recentMs) as {
              seq: number | null;
            }
          ).seq;
    return Math.min(
      opened ?? Number.POSITIVE_INFINITY,
      recent ?? Number.POSITIVE_INFINITY,
      evaluatorCursor + 1,
    );
  }

  /** The seq of the row a fire was made on, if it is in the fire log. */
  fireSeq(fireId: string): number | undefined {
    return (this.fire.get(fireId) as { seq: number } | undefined)?.seq;
  }
}
