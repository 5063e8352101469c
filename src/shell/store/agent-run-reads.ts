/**
 * What a hook-fed run's verdict reads (`agents/run-verdict.ts`), on every hook call, each by index: the
 * seq of the run's `opened` row, and the seq of the row whose fire placed a hold.
 */
import type { Db } from "./open-store.js";

export class AgentRunReads {
  private readonly opened;
  private readonly fire;

  constructor(db: Db) {
    this.opened = db.prepare(
      "SELECT min(seq) AS seq FROM rule_journal WHERE run = ? AND kind = 'run_event' AND type = 'opened'",
    );
    this.fire = db.prepare("SELECT seq FROM rule_fires WHERE fire_id = ?");
  }

  /** The seq of the run's first `opened` row, if the journal holds one. */
  openedSeq(run: string): number | undefined {
    return (this.opened.get(run) as { seq: number | null }).seq ?? undefined;
  }

  /** The seq of the row a fire was made on, if it is in the fire log. */
  fireSeq(fireId: string): number | undefined {
    return (this.fire.get(fireId) as { seq: number } | undefined)?.seq;
  }
}
