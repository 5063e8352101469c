/**
 * SQLite's `AgentSessionRuns` on PostgreSQL (issue 34): which run an agent session is now, and the
 * reads that decide whether a row still belongs to its run, each one index seek.
 * test/shell/store/pg/agent-session-runs-contract.test.ts holds the answers and rows to SQLite's.
 */
import type pg from "pg";
import type { AgentSessionRuns, SessionRun } from "../agent-session-runs.js";
import type { AsyncPort } from "../async-port.js";

export class PgAgentSessionRuns implements AsyncPort<AgentSessionRuns> {
  constructor(private readonly pool: pg.Pool) {}

  /** The session's latest run after its first, if it has had one. */
  async latestOf(harness: string, session: string): Promise<SessionRun | undefined> {
    const r = await this.pool.query<SessionRun>(
      "SELECT run, generation FROM agent_session_runs WHERE harness = $1 AND session = $2 ORDER BY generation DESC LIMIT 1",
      [harness, session],
    );
    return r.rows[0];
  }

  /** The session's next run. */
  async add(harness: string, session: string, next: SessionRun, at: number): Promise<void> {
    await this.pool.query(
      "INSERT INTO agent_session_runs (run, harness, session, generation, created_at) VALUES ($1, $2, $3, $4, $5)",
      [next.run, harness, session, next.generation, at],
    );
  }

  /** The session of a run after its first, as recorded when it opened. */
  async sessionOf(run: string): Promise<string | undefined> {
    const r = await this.pool.query<{ session: string }>(
      "SELECT session FROM agent_session_runs WHERE run = $1",
      [run],
    );
    return r.rows[0]?.session;
  }

  /** The run's `closed` row's reason (`""` when it has none), or undefined while the run is not closed. */
  async closedReason(run: string): Promise<string | undefined> {
    // SQLite's json_extract gives a string as itself, an object or array as its JSON text, and anything
    // else as a non-string, read as no reason: `->>` gives text for each, so the others are cut here.
    const r = await this.pool.query<{ reason: string | null }>(
      `SELECT CASE WHEN json_typeof((event::json) -> 'reason') IN ('string', 'object', 'array')
                THEN (event::json) ->> 'reason' END AS reason
       FROM rule_journal WHERE run = $1 AND kind = 'run_event' AND type = 'closed' ORDER BY seq LIMIT 1`,
      [run],
    );
    const row = r.rows[0];
    if (row === undefined) return undefined;
    return row.reason ?? "";
  }

  /** Whether any journal row carries this run id, or a run after a session's first was given it. */
  async taken(run: string): Promise<boolean> {
    const r = await this.pool.query<{ taken: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM rule_journal WHERE run = $1 AND run IS NOT NULL)
           OR EXISTS (SELECT 1 FROM agent_session_runs WHERE run = $1) AS taken`,
      [run],
    );
    return (r.rows[0] as { taken: boolean }).taken;
  }
}
