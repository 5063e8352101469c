/**
 * The evidence reads on PostgreSQL (`../evidence-reads.ts`): each one indexed lookup, the journal's graph
 * and fact ids by schema V2's partial expression indexes, whose expressions these repeat exactly. SQLite's
 * `json_extract` gives a number or a boolean as one, never equal to the text looked up, where `->>` gives
 * its text; so only a string matches here too.
 */
import type pg from "pg";
import type { AsyncPort } from "../async-port.js";
import type { EvidenceReads } from "../evidence-reads.js";

export class PgEvidenceReads implements AsyncPort<EvidenceReads> {
  constructor(private readonly pool: pg.Pool) {}

  private async any(text: string, values: readonly unknown[]): Promise<boolean> {
    return ((await this.pool.query(text, values as unknown[])).rowCount ?? 0) > 0;
  }

  fire(fireId: string): Promise<boolean> {
    return this.any("SELECT 1 FROM rule_fires WHERE fire_id = $1", [fireId]);
  }

  journalRow(seq: number): Promise<boolean> {
    return this.any("SELECT 1 FROM rule_journal WHERE seq = $1", [seq]);
  }

  /** A run a row or a fire names. */
  async run(harness: string, run: string): Promise<boolean> {
    return (
      (await this.any(
        "SELECT 1 FROM rule_journal WHERE kind IN ('run_event', 'graph_event', 'fact_event') AND harness = $1 AND run = $2 LIMIT 1",
        [harness, run],
      )) || this.any("SELECT 1 FROM rule_fires WHERE harness = $1 AND run = $2 LIMIT 1", [harness, run])
    );
  }

  /** A harness a row or a fire names. */
  async harness(harness: string): Promise<boolean> {
    return (
      (await this.any(
        "SELECT 1 FROM rule_journal WHERE kind IN ('run_event', 'graph_event', 'fact_event') AND harness = $1 LIMIT 1",
        [harness],
      )) || this.any("SELECT 1 FROM rule_fires WHERE harness = $1 LIMIT 1", [harness])
    );
  }

  /** A file a row's paths name in that repo. */
  file(repo: string, path: string): Promise<boolean> {
    return this.any(
      "SELECT 1 FROM rule_journal_paths p JOIN rule_journal j ON j.seq = p.seq WHERE p.path = $1 AND j.repo = $2 LIMIT 1",
      [path, repo],
    );
  }

  annotated(node: string): Promise<boolean> {
    return this.any("SELECT 1 FROM rule_annotations WHERE node = $1 LIMIT 1", [node]);
  }

  /** A node an edge starts or ends at, or a fact is about. */
  async graphNode(node: string): Promise<boolean> {
    return (
      (await this.any(
        "SELECT 1 FROM rule_journal WHERE kind = 'graph_event' AND ((event::json) ->> 'from') = $1 AND json_typeof((event::json) -> 'from') = 'string' LIMIT 1",
        [node],
      )) ||
      (await this.any(
        "SELECT 1 FROM rule_journal WHERE kind = 'graph_event' AND ((event::json) ->> 'to') = $1 AND json_typeof((event::json) -> 'to') = 'string' LIMIT 1",
        [node],
      )) ||
      this.any(
        "SELECT 1 FROM rule_journal WHERE kind = 'fact_event' AND ((event::json) ->> 'subject') = $1 AND json_typeof((event::json) -> 'subject') = 'string' LIMIT 1",
        [node],
      )
    );
  }
}
