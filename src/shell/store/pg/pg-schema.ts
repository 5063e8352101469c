/**
 * The PostgreSQL store's schema as numbered migrations, kept beside SQLite's (`../schema.ts`): the same
 * tables and columns wherever both backends hold a table (test/shell/store/pg/schema-parity.test.ts
 * compares them), each backend numbering its own migrations, since a released migration's text never
 * changes and the two dialects differ. V1 holds the journal and Append's keys (issue 34), V2 every other
 * table of SQLite's, V3 the leader's lease (issue 35). The version is a row of
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

// The rest of SQLite's schema (its V1 to V14, as V14 leaves each table): the evaluator's cursor, the
// decisions, proposals, tokens, cooldowns and the agent runs' tables, with SQLite's keys, uniques,
// checks, foreign keys and indexes, and each table's columns in SQLite's order, those its later
// migrations added at the end as there. Integers are BIGINT throughout (seqs, times, counters, ids), but
// the evaluator's one-row id, as the head's. A 0/1 flag is BOOLEAN where the store code reads it as one
// (`rule_shadows.completed`, `rule_proposals.untrusted`: `=== 1` in decision-store.ts and proposal-store.ts),
// as `rule_journal.is_error` is in V1; no other INTEGER column is a flag. Blobs are BYTEA.
//
// Text is COLLATE "C" here, SQLite's BINARY: a key, an index or an ORDER BY over text (a run told its
// fires in (seq, fire_id) order, proposals by repo) sorts by bytes on both backends whatever the
// database's own collation, and a copy's verification reads both in one order. The ids SQLite gives as
// rowids (rule_holds.id, rule_proposals.id) are identities; `harness store copy` moves each past the
// copied rows. The journal's expression indexes serve propose_rule's evidence ids as SQLite's V3 do.
const V2 = `
CREATE INDEX rule_journal_graph_from ON rule_journal (((event::json) ->> 'from')) WHERE kind = 'graph_event';
CREATE INDEX rule_journal_graph_to ON rule_journal (((event::json) ->> 'to')) WHERE kind = 'graph_event';
CREATE INDEX rule_journal_fact_subject ON rule_journal (((event::json) ->> 'subject')) WHERE kind = 'fact_event';

CREATE TABLE evaluator (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  cursor BIGINT NOT NULL
);
INSERT INTO evaluator (id, cursor) VALUES (1, 0);

CREATE TABLE rule_fires (
  fire_id TEXT COLLATE "C" PRIMARY KEY,
  seq BIGINT NOT NULL,
  at BIGINT NOT NULL,
  rule TEXT COLLATE "C" NOT NULL,
  hash TEXT COLLATE "C" NOT NULL,
  kind TEXT COLLATE "C" NOT NULL,
  type TEXT COLLATE "C" NOT NULL,
  target_kind TEXT COLLATE "C",
  target_key TEXT COLLATE "C",
  harness TEXT COLLATE "C",
  run TEXT COLLATE "C",
  declared_level TEXT COLLATE "C" NOT NULL,
  effective_level TEXT COLLATE "C" NOT NULL,
  mode TEXT COLLATE "C" NOT NULL,
  action TEXT COLLATE "C" NOT NULL,
  message TEXT COLLATE "C" NOT NULL,
  primitives TEXT COLLATE "C" NOT NULL
);
CREATE INDEX rule_fires_hash ON rule_fires (hash, seq);
CREATE INDEX rule_fires_harness ON rule_fires (harness, seq);
CREATE INDEX rule_fires_seq ON rule_fires (seq);
CREATE INDEX rule_fires_target ON rule_fires (target_kind, target_key, seq, fire_id) WHERE mode = 'active';

CREATE TABLE rule_actions (
  fire_id TEXT COLLATE "C" NOT NULL REFERENCES rule_fires (fire_id),
  action TEXT COLLATE "C" NOT NULL,
  state TEXT COLLATE "C" NOT NULL,
  detail TEXT COLLATE "C",
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (fire_id, action)
);
CREATE INDEX rule_actions_state ON rule_actions (state);

CREATE TABLE rule_annotations (
  fire_id TEXT COLLATE "C" PRIMARY KEY REFERENCES rule_fires (fire_id),
  node TEXT COLLATE "C" NOT NULL,
  rule TEXT COLLATE "C" NOT NULL,
  message TEXT COLLATE "C" NOT NULL,
  at BIGINT NOT NULL
);
CREATE INDEX rule_annotations_node ON rule_annotations (node, at);

CREATE TABLE rule_holds (
  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  harness TEXT COLLATE "C" NOT NULL,
  rule TEXT COLLATE "C" NOT NULL,
  hash TEXT COLLATE "C" NOT NULL,
  fire_id TEXT COLLATE "C" NOT NULL,
  since BIGINT NOT NULL,
  cooldown BIGINT NOT NULL,
  event TEXT COLLATE "C" NOT NULL,
  false_since BIGINT,
  released_at BIGINT,
  release_cause TEXT COLLATE "C",
  released_by TEXT COLLATE "C"
);
CREATE UNIQUE INDEX rule_holds_active ON rule_holds (harness, rule) WHERE released_at IS NULL;

CREATE TABLE rule_cooldowns (
  hash TEXT COLLATE "C" NOT NULL,
  target TEXT COLLATE "C" NOT NULL,
  until BIGINT NOT NULL,
  fire_id TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (hash, target)
);

CREATE TABLE rule_shadows (
  hash TEXT COLLATE "C" PRIMARY KEY,
  since BIGINT NOT NULL,
  completed BOOLEAN NOT NULL
);

CREATE TABLE rule_suppressed (
  hash TEXT COLLATE "C" NOT NULL,
  rule TEXT COLLATE "C" NOT NULL,
  count BIGINT NOT NULL,
  PRIMARY KEY (hash, rule)
);

CREATE TABLE runs_in_flight (
  harness TEXT COLLATE "C" PRIMARY KEY,
  run TEXT COLLATE "C" NOT NULL
);

CREATE TABLE rule_cost_exceeded (
  hash TEXT COLLATE "C" PRIMARY KEY
);

CREATE TABLE policy_last_good (
  repo TEXT COLLATE "C" PRIMARY KEY,
  branch TEXT COLLATE "C" NOT NULL,
  commit_oid TEXT COLLATE "C" NOT NULL,
  loaded_at BIGINT NOT NULL
);

CREATE TABLE rule_proposals (
  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  name TEXT COLLATE "C" NOT NULL,
  file_text TEXT COLLATE "C" NOT NULL,
  on_kind TEXT COLLATE "C" NOT NULL,
  level TEXT COLLATE "C" NOT NULL CHECK (level IN ('annotate', 'notify')),
  content_hash TEXT COLLATE "C" NOT NULL,
  expression_hash TEXT COLLATE "C" NOT NULL,
  rationale TEXT COLLATE "C" NOT NULL,
  evidence TEXT COLLATE "C" NOT NULL,
  run TEXT COLLATE "C" NOT NULL,
  untrusted BOOLEAN NOT NULL,
  state TEXT COLLATE "C" NOT NULL CHECK (state IN ('stored', 'waiting', 'opened', 'suppressed', 'duplicate', 'invalid', 'merged', 'closed')),
  state_detail TEXT COLLATE "C" NOT NULL,
  policy_repo TEXT COLLATE "C",
  pr_number BIGINT,
  backtest TEXT COLLATE "C" NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX rule_proposals_run ON rule_proposals (run);
CREATE INDEX rule_proposals_state ON rule_proposals (state, id);

CREATE TABLE rule_proposal_pulls (
  repo TEXT COLLATE "C" NOT NULL,
  number BIGINT NOT NULL,
  url TEXT COLLATE "C" NOT NULL,
  state TEXT COLLATE "C" NOT NULL CHECK (state IN ('open', 'merged', 'closed')),
  opened_at BIGINT NOT NULL,
  PRIMARY KEY (repo, number)
);
CREATE INDEX rule_proposal_pulls_opened ON rule_proposal_pulls (repo, opened_at);

CREATE TABLE rule_proposal_rejections (
  repo TEXT COLLATE "C" NOT NULL,
  expression_hash TEXT COLLATE "C" NOT NULL,
  reason TEXT COLLATE "C" NOT NULL,
  pr_number BIGINT NOT NULL,
  pr_url TEXT COLLATE "C" NOT NULL,
  rejected_at BIGINT NOT NULL,
  PRIMARY KEY (repo, expression_hash)
);

CREATE TABLE notify_cooldowns (
  harness TEXT COLLATE "C" NOT NULL,
  event TEXT COLLATE "C" NOT NULL,
  rule TEXT COLLATE "C" NOT NULL,
  sent_at BIGINT NOT NULL,
  PRIMARY KEY (harness, event, rule)
);
CREATE INDEX notify_cooldowns_sent_at ON notify_cooldowns (sent_at);

CREATE TABLE issued_tokens (
  id TEXT COLLATE "C" PRIMARY KEY,
  digest BYTEA NOT NULL UNIQUE,
  kind TEXT COLLATE "C" NOT NULL,
  source TEXT COLLATE "C",
  harness TEXT COLLATE "C",
  run TEXT COLLATE "C",
  label TEXT COLLATE "C",
  created_at BIGINT NOT NULL,
  expires_at BIGINT,
  revoked_at BIGINT
);
CREATE INDEX issued_tokens_run ON issued_tokens (run) WHERE run IS NOT NULL;

CREATE TABLE sessions_in_flight (
  run TEXT COLLATE "C" PRIMARY KEY,
  harness TEXT COLLATE "C" NOT NULL
);

CREATE TABLE agent_run_stops (
  run TEXT COLLATE "C" PRIMARY KEY,
  harness TEXT COLLATE "C" NOT NULL,
  rule TEXT COLLATE "C" NOT NULL,
  fire_id TEXT COLLATE "C" NOT NULL,
  by TEXT COLLATE "C" NOT NULL CHECK (by IN ('rule', 'loop_guard')),
  created_at BIGINT NOT NULL,
  delivered_at BIGINT,
  outcome TEXT COLLATE "C" CHECK (outcome IN ('delivered', 'closed_first')),
  released_at BIGINT,
  released_by TEXT COLLATE "C"
);
CREATE INDEX agent_run_stops_fire ON agent_run_stops (fire_id);
CREATE INDEX agent_run_stops_unreleased ON agent_run_stops (harness, rule) WHERE released_at IS NULL;

CREATE TABLE derived_cursors (
  name TEXT COLLATE "C" PRIMARY KEY,
  cursor BIGINT NOT NULL
);

CREATE TABLE agent_told (
  run TEXT COLLATE "C" NOT NULL,
  fire_id TEXT COLLATE "C" NOT NULL,
  seq BIGINT NOT NULL,
  told_at BIGINT NOT NULL,
  PRIMARY KEY (run, fire_id)
);
CREATE INDEX agent_told_last ON agent_told (run, seq, fire_id);

CREATE TABLE agent_session_runs (
  run TEXT COLLATE "C" PRIMARY KEY,
  harness TEXT COLLATE "C" NOT NULL,
  session TEXT COLLATE "C" NOT NULL,
  generation BIGINT NOT NULL CHECK (generation >= 2),
  created_at BIGINT NOT NULL,
  UNIQUE (harness, session, generation)
);
`;

// The leader's lease (issue 35, decision 0022): one row, whose epoch every evaluator commit and every
// action's start checks under a share lock, so a daemon that lost the lease can commit nothing more.
// Times are the database's clock (ms), so no host's clock decides who leads.
const V3 = `
CREATE TABLE harness_lease (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  epoch BIGINT NOT NULL,
  holder TEXT COLLATE "C" NOT NULL,
  schema_version INTEGER NOT NULL,
  since BIGINT NOT NULL,
  renewed_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
INSERT INTO harness_lease (id, epoch, holder, schema_version, since, renewed_at, expires_at)
VALUES (1, 0, '', 0, 0, 0, 0);
`;

export const PG_MIGRATIONS: readonly string[] = [V1, V2, V3];
export const PG_SCHEMA_VERSION = PG_MIGRATIONS.length;

/** The version row's table: created before the first migration, outside the numbered ones. */
export const PG_VERSION_TABLE = `
CREATE TABLE IF NOT EXISTS harness_schema (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  version INTEGER NOT NULL
)`;
