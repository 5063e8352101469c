/**
 * Which run an agent session is now (`agents/enforcement/run-life.ts`): its first run has no row here
 * (`<harness>#<session>`); each later one, opened when the session starts again after its run closed,
 * has a row with its generation, so the mapping survives a restart and the command and http paths read
 * the same one. Also the reads that decide whether a row still belongs to its run: the run's `closed`
 * row and whether the journal has seen a run id at all, each one index seek.
 */
import type { Db } from "./open-store.js";

export interface SessionRun {
  readonly run: string;
  readonly generation: number;
}

export class AgentSessionRuns {
  private readonly latest;
  private readonly insert;
  private readonly ofRun;
  private readonly closedRow;
  private readonly anyRow;

  constructor(db: Db) {
    this.latest = db.prepare(
      "SELECT run, generation FROM agent_session_runs WHERE harness = ? AND session = ? ORDER BY generation DESC LIMIT 1",
    );
    this.insert = db.prepare(
      "INSERT INTO agent_session_runs (run, harness, session, generation, created_at) VALUES (?, ?, ?, ?, ?)",
    );
    this.ofRun = db.prepare("SELECT session FROM agent_session_runs WHERE run = ?");
    // The partial index of closed rows, named: the planner would otherwise take (run, seq) and read
    // every row of the run.
    this.closedRow = db.prepare(
      "SELECT json_extract(event, '$.reason') AS reason FROM rule_journal INDEXED BY rule_journal_closed_run WHERE run = ? AND kind = 'run_event' AND type = 'closed' ORDER BY seq LIMIT 1",
    );
    this.anyRow = db.prepare("SELECT 1 FROM rule_journal WHERE run = ? AND run IS NOT NULL LIMIT 1");
  }

  /** The session's latest run after its first, if it has had one. */
  latestOf(harness: string, session: string): SessionRun | undefined {
    return this.latest.get(harness, session) as SessionRun | undefined;
  }

  /** The session's next run. */
  add(harness: string, session: string, next: SessionRun, at: number): void {
    this.insert.run(next.run, harness, session, next.generation, at);
  }

  /** The session of a run after its first, as recorded when it opened. */
  sessionOf(run: string): string | undefined {
    return (this.ofRun.get(run) as { session: string } | undefined)?.session;
  }

  /** The run's `closed` row's reason (`""` when it has none), or undefined while the run is not closed. */
  closedReason(run: string): string | undefined {
    const r = this.closedRow.get(run) as { reason: unknown } | undefined;
    if (r === undefined) return undefined;
    return typeof r.reason === "string" ? r.reason : "";
  }

  /** Whether any journal row carries this run id, or a run after a session's first was given it. */
  taken(run: string): boolean {
    return this.anyRow.get(run) !== undefined || this.ofRun.get(run) !== undefined;
  }
}
