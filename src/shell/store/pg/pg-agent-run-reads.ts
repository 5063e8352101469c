/**
 * SQLite's `AgentRunReads` on PostgreSQL (issue 34): what a hook-fed run's verdict reads on every hook
 * call while a hold is on, each one index seek, and where a rebuild of the derivers starts.
 * test/shell/store/pg/agent-reads-contract.test.ts holds the answers to SQLite's.
 */
import type pg from "pg";
import type { AgentRunReads } from "../agent-run-reads.js";
import type { AsyncPort } from "../async-port.js";

export class PgAgentRunReads implements AsyncPort<AgentRunReads> {
  constructor(private readonly pool: pg.Pool) {}

  /** The seq of the run's first committed row of any type, if the journal holds one. */
  async firstSeq(run: string): Promise<number | undefined> {
    // ORDER BY … LIMIT 1 on the partial index (run, seq): one seek whatever the run's length.
    const r = await this.pool.query<{ seq: number }>(
      "SELECT seq FROM rule_journal WHERE run = $1 AND run IS NOT NULL ORDER BY seq LIMIT 1",
      [run],
    );
    return r.rows[0]?.seq;
  }

  /**
   * Where a rebuild of the daemon's derivers starts: the first `opened` row of any hook-fed run in
   * flight, the row after the evaluator's cursor, and the rows of the last `recentMs` before the
   * cursor's row, whichever is first. One statement, so its three reads see one snapshot.
   */
  async replayFrom(evaluatorCursor: number, recentMs: number): Promise<number> {
    const r = await this.pool.query<{ opened: number | null; recent: number | null }>(
      // Per session, by the partial index of opened rows (a join would scan every run_event row). No
      // cursor row: `at >= NULL` holds for none, and there are no recent rows, as on SQLite.
      `SELECT
         (SELECT min((SELECT min(j.seq) FROM rule_journal j WHERE j.run = s.run AND j.kind = 'run_event' AND j.type = 'opened'))
            FROM sessions_in_flight s) AS opened,
         (SELECT min(seq) FROM rule_journal WHERE at >= (SELECT at FROM rule_journal WHERE seq = $1) - $2) AS recent`,
      [evaluatorCursor, recentMs],
    );
    const { opened, recent } = r.rows[0] as { opened: number | null; recent: number | null };
    return Math.min(
      opened ?? Number.POSITIVE_INFINITY,
      recent ?? Number.POSITIVE_INFINITY,
      evaluatorCursor + 1,
    );
  }

  /** The seq of the row a fire was made on, if it is in the fire log. */
  async fireSeq(fireId: string): Promise<number | undefined> {
    const r = await this.pool.query<{ seq: number }>("SELECT seq FROM rule_fires WHERE fire_id = $1", [
      fireId,
    ]);
    return r.rows[0]?.seq;
  }
}
