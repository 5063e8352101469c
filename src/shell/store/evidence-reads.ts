/**
 * The evidence reads (REQ-15): whether the store holds anything a proposal's evidence id names, each
 * one indexed lookup (the journal's graph and fact ids by the partial expression indexes of schema V3).
 */
import type { Db } from "./open-store.js";

export class EvidenceReads {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      fire: db.prepare("SELECT 1 FROM rule_fires WHERE fire_id = ?"),
      row: db.prepare("SELECT 1 FROM rule_journal WHERE seq = ?"),
      runRow: db.prepare(
        "SELECT 1 FROM rule_journal WHERE kind IN ('run_event', 'graph_event', 'fact_event') AND harness = ? AND run = ? LIMIT 1",
      ),
      runFire: db.prepare("SELECT 1 FROM rule_fires WHERE harness = ? AND run = ? LIMIT 1"),
      harnessRow: db.prepare(
        "SELECT 1 FROM rule_journal WHERE kind IN ('run_event', 'graph_event', 'fact_event') AND harness = ? LIMIT 1",
      ),
      harnessFire: db.prepare("SELECT 1 FROM rule_fires WHERE harness = ? LIMIT 1"),
      file: db.prepare(
        "SELECT 1 FROM rule_journal_paths p JOIN rule_journal j ON j.seq = p.seq WHERE p.path = ? AND j.repo = ? LIMIT 1",
      ),
      annotated: db.prepare("SELECT 1 FROM rule_annotations WHERE node = ? LIMIT 1"),
      // Each matches its partial expression index (schema V3), so none scans the journal.
      edgeFrom: db.prepare(
        "SELECT 1 FROM rule_journal WHERE kind = 'graph_event' AND json_extract(event, '$.from') = ? LIMIT 1",
      ),
      edgeTo: db.prepare(
        "SELECT 1 FROM rule_journal WHERE kind = 'graph_event' AND json_extract(event, '$.to') = ? LIMIT 1",
      ),
      factSubject: db.prepare(
        "SELECT 1 FROM rule_journal WHERE kind = 'fact_event' AND json_extract(event, '$.subject') = ? LIMIT 1",
      ),
    };
  }

  fire(fireId: string): boolean {
    return this.stmts.fire.get(fireId) !== undefined;
  }

  journalRow(seq: number): boolean {
    return this.stmts.row.get(seq) !== undefined;
  }

  /** A run a row or a fire names. */
  run(harness: string, run: string): boolean {
    return (this.stmts.runRow.get(harness, run) ?? this.stmts.runFire.get(harness, run)) !== undefined;
  }

  /** A harness a row or a fire names. */
  harness(harness: string): boolean {
    return (this.stmts.harnessRow.get(harness) ?? this.stmts.harnessFire.get(harness)) !== undefined;
  }

  /** A file a row's paths name in that repo. */
  file(repo: string, path: string): boolean {
    return this.stmts.file.get(path, repo) !== undefined;
  }

  annotated(node: string): boolean {
    return this.stmts.annotated.get(node) !== undefined;
  }

  /** A node an edge starts or ends at, or a fact is about. */
  graphNode(node: string): boolean {
    return (
      (this.stmts.edgeFrom.get(node) ?? this.stmts.edgeTo.get(node) ?? this.stmts.factSubject.get(node)) !==
      undefined
    );
  }
}
