/**
 * SQLite's `AgentReads` on PostgreSQL (issue 34): the last run_event row of a harness, as `harness
 * doctor`'s agents row reads it, served by the `(kind, harness, at)` index.
 * test/shell/store/pg/agent-reads-contract.test.ts holds the answers to SQLite's.
 */
import type pg from "pg";
import type { AgentReads, LastRunEventRow } from "../agent-reads.js";
import type { AsyncPort } from "../async-port.js";

export class PgAgentReads implements AsyncPort<AgentReads> {
  constructor(private readonly pool: pg.Pool) {}

  /** `adapter` as text: admission holds it to a string (`core/kinds.ts`), as SQLite's read gives it. */
  async lastRunEvent(harness: string): Promise<LastRunEventRow | undefined> {
    const r = await this.pool.query<LastRunEventRow>(
      `SELECT seq, type, at, source, run, (event::json) ->> 'adapter' AS adapter
       FROM rule_journal WHERE kind = 'run_event' AND harness = $1 ORDER BY at DESC, seq DESC LIMIT 1`,
      [harness],
    );
    return r.rows[0];
  }
}
