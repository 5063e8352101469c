/**
 * The journal read `harness doctor`'s agents row makes (AgentStatusService.LastRows): the last run_event
 * row of a harness, served by the `(kind, harness, at)` index.
 */
import type { Db } from "./open-store.js";

export interface LastRunEventRow {
  readonly seq: number;
  readonly type: string;
  readonly at: number;
  readonly source: string;
  readonly run: string | null;
  readonly adapter: string | null;
}

export class AgentReads {
  private readonly last;

  constructor(db: Db) {
    this.last = db.prepare<[string], LastRunEventRow>(
      `SELECT seq, type, at, source, run, json_extract(event, '$.adapter') AS adapter
       FROM rule_journal WHERE kind = 'run_event' AND harness = ? ORDER BY at DESC, seq DESC LIMIT 1`,
    );
  }

  lastRunEvent(harness: string): LastRunEventRow | undefined {
    return this.last.get(harness);
  }
}
