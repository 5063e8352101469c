/**
 * The PostgreSQL store's schema as numbered migrations, kept beside SQLite's (`../schema.ts`): the same
 * tables and columns wherever both backends hold a table (test/shell/store/pg/schema-parity.test.ts
 * compares them), each backend numbering its own migrations, since a released migration's text never
 * changes and the two dialects differ. So far PostgreSQL holds the journal and Append's keys (issue 34);
 * the other tables come with their store objects, each a migration here. The version is a row of
 * `harness_schema`; a database whose version is newer than the last one here is refused.
 */
import { INDEXED_COLUMNS } from "../schema.js";

// The journal (SQLite's V1, V5, V8, V10, V13 for these tables), with `is_error` a boolean, and the head
// row every append transaction locks and advances first (decision 0019): it holds the last seq given and
// the last `at`, so seqs are given in commit order, with no gap, and `at` never goes back.
const V1 = `
CREATE TABLE rule_journal (
  seq BIGINT PRIMARY KEY,
  kind TEXT NOT NULL,
  type TEXT NOT NULL,
  at BIGINT NOT NULL,
  source TEXT NOT NULL,
  ${INDEXED_COLUMNS.map((c) => `${c} ${c === "is_error" ? "BOOLEAN" : "TEXT"}`).join(",\n  ")},
  event TEXT NOT NULL,
  peer_name TEXT,
  peer_fingerprint TEXT
);
CREATE INDEX rule_journal_at ON rule_journal (at);
CREATE INDEX rule_journal_kind_harness ON rule_journal (kind, harness, at);
CREATE INDEX rule_journal_opened_run ON rule_journal (run, seq) WHERE kind = 'run_event' AND type = 'opened';
CREATE INDEX rule_journal_closed_run ON rule_journal (run, seq) WHERE kind = 'run_event' AND type = 'closed';
CREATE INDEX rule_journal_run ON rule_journal (run, seq) WHERE run IS NOT NULL;
CREATE TABLE rule_journal_paths (
  seq BIGINT NOT NULL REFERENCES rule_journal (seq) ON DELETE CASCADE,
  ord INTEGER NOT NULL,
  path TEXT NOT NULL,
  PRIMARY KEY (seq, ord)
);
CREATE INDEX rule_journal_paths_path ON rule_journal_paths (path, seq);

CREATE TABLE journal_head (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  seq BIGINT NOT NULL,
  at BIGINT NOT NULL
);
INSERT INTO journal_head (id, seq, at) VALUES (1, 0, 0);

CREATE TABLE journal_appends (
  source TEXT NOT NULL,
  key TEXT NOT NULL,
  answer TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (source, key)
);
CREATE INDEX journal_appends_created_at ON journal_appends (created_at);
`;

export const PG_MIGRATIONS: readonly string[] = [V1];
export const PG_SCHEMA_VERSION = PG_MIGRATIONS.length;

/** The version row's table: created before the first migration, outside the numbered ones. */
export const PG_VERSION_TABLE = `
CREATE TABLE IF NOT EXISTS harness_schema (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  version INTEGER NOT NULL
)`;
