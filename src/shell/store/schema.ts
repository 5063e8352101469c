/**
 * The store's schema as numbered migrations (SQLite `user_version`). A migration runs once, in its own
 * `BEGIN IMMEDIATE` transaction; a store whose version is newer than the last one here was written by a
 * newer harness and is refused, never downgraded or recreated.
 */

/**
 * The REQ-5 indexed fields stored as columns of rule_journal (`kind` and `type` are columns anyway, paths
 * a child table). Written out rather than derived from the core's INDEXED_FIELDS: a released migration's
 * text must never change, so a new indexed field comes with a migration of its own.
 */
export const INDEXED_COLUMNS = [
  "harness",
  "run",
  "repo",
  "branch",
  "tool",
  "action",
  "is_error",
  "digest",
  "outcome",
  "cause_digest",
  "edge",
  "predicate",
  "status",
  "scope",
] as const;

const V1 = `
CREATE TABLE rule_journal (
  seq INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  type TEXT NOT NULL,
  at INTEGER NOT NULL,
  source TEXT NOT NULL,
  ${INDEXED_COLUMNS.map((c) => `${c} ${c === "is_error" ? "INTEGER" : "TEXT"}`).join(",\n  ")},
  event TEXT NOT NULL
);
CREATE INDEX rule_journal_at ON rule_journal (at);
CREATE INDEX rule_journal_kind_harness ON rule_journal (kind, harness, at);
CREATE TABLE rule_journal_paths (
  seq INTEGER NOT NULL REFERENCES rule_journal (seq) ON DELETE CASCADE,
  ord INTEGER NOT NULL,
  path TEXT NOT NULL,
  PRIMARY KEY (seq, ord)
) WITHOUT ROWID;
CREATE INDEX rule_journal_paths_path ON rule_journal_paths (path, seq);

CREATE TABLE evaluator (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  cursor INTEGER NOT NULL
);
INSERT INTO evaluator (id, cursor) VALUES (1, 0);

CREATE TABLE rule_fires (
  fire_id TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  at INTEGER NOT NULL,
  rule TEXT NOT NULL,
  hash TEXT NOT NULL,
  kind TEXT NOT NULL,
  type TEXT NOT NULL,
  target_kind TEXT,
  target_key TEXT,
  harness TEXT,
  run TEXT,
  declared_level TEXT NOT NULL,
  effective_level TEXT NOT NULL,
  mode TEXT NOT NULL,
  action TEXT NOT NULL,
  message TEXT NOT NULL,
  primitives TEXT NOT NULL
);
CREATE INDEX rule_fires_hash ON rule_fires (hash, seq);
CREATE INDEX rule_fires_harness ON rule_fires (harness, seq);

-- One row per action a fire asks for, committed with the fire as 'pending'; the daemon marks it
-- 'started' just before acting and records the result after. A restart turns what was left pending or
-- started into 'undelivered': an action is lost at most once, never repeated.
CREATE TABLE rule_actions (
  fire_id TEXT NOT NULL REFERENCES rule_fires (fire_id),
  action TEXT NOT NULL,
  state TEXT NOT NULL,
  detail TEXT,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (fire_id, action)
) WITHOUT ROWID;
CREATE INDEX rule_actions_state ON rule_actions (state);

CREATE TABLE rule_annotations (
  fire_id TEXT PRIMARY KEY REFERENCES rule_fires (fire_id),
  node TEXT NOT NULL,
  rule TEXT NOT NULL,
  message TEXT NOT NULL,
  at INTEGER NOT NULL
);
CREATE INDEX rule_annotations_node ON rule_annotations (node, at);

CREATE TABLE rule_holds (
  id INTEGER PRIMARY KEY,
  harness TEXT NOT NULL,
  rule TEXT NOT NULL,
  hash TEXT NOT NULL,
  fire_id TEXT NOT NULL,
  since INTEGER NOT NULL,
  cooldown INTEGER NOT NULL,
  event TEXT NOT NULL,
  false_since INTEGER,
  released_at INTEGER,
  release_cause TEXT
);
CREATE UNIQUE INDEX rule_holds_active ON rule_holds (harness, rule) WHERE released_at IS NULL;

CREATE TABLE rule_cooldowns (
  hash TEXT NOT NULL,
  target TEXT NOT NULL,
  until INTEGER NOT NULL,
  fire_id TEXT NOT NULL,
  PRIMARY KEY (hash, target)
) WITHOUT ROWID;

CREATE TABLE rule_shadows (
  hash TEXT PRIMARY KEY,
  since INTEGER NOT NULL,
  completed INTEGER NOT NULL
);

CREATE TABLE rule_suppressed (
  hash TEXT NOT NULL,
  rule TEXT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (hash, rule)
) WITHOUT ROWID;

CREATE TABLE runs_in_flight (
  harness TEXT PRIMARY KEY,
  run TEXT NOT NULL
);

CREATE TABLE rule_cost_exceeded (
  hash TEXT PRIMARY KEY
);
`;

// SPEC-0029 REQ-2: the commit each policy repo's rules were last loaded from while its clone was clean,
// so a daemon restarted beside a dirty or off-branch clone serves that commit, read from git's objects.
const V2 = `
CREATE TABLE policy_last_good (
  repo TEXT PRIMARY KEY,
  branch TEXT NOT NULL,
  commit_oid TEXT NOT NULL,
  loaded_at INTEGER NOT NULL
);
`;

// SPEC-0029 REQ-15, REQ-16: rule proposals. propose_rule stores a proposal (untrusted, with the caller's
// run); `harness rules propose` records what became of it through RuleService.RecordProposal. The states
// are the closed set of src/shell/proposals/proposal-store.ts. A pull request is kept per policy repo, so
// the weekly cap counts pull requests opened, not proposals pushed to one; a pull request closed unmerged
// leaves its expression hash in rule_proposal_rejections, with the last review comment as the reason.
//
// The expression indexes let propose_rule resolve a graph-node evidence id (an edge's from or to, a
// fact's subject) by index: without them each unresolved id cost a scan of every graph and fact row
// on the daemon's event loop (0.8 s over 1.5 million rows).
const V3 = `
CREATE INDEX rule_journal_graph_from ON rule_journal (json_extract(event, '$.from')) WHERE kind = 'graph_event';
CREATE INDEX rule_journal_graph_to ON rule_journal (json_extract(event, '$.to')) WHERE kind = 'graph_event';
CREATE INDEX rule_journal_fact_subject ON rule_journal (json_extract(event, '$.subject')) WHERE kind = 'fact_event';

CREATE TABLE rule_proposals (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  file_text TEXT NOT NULL,
  on_kind TEXT NOT NULL,
  level TEXT NOT NULL CHECK (level IN ('annotate', 'notify')),
  content_hash TEXT NOT NULL,
  expression_hash TEXT NOT NULL,
  rationale TEXT NOT NULL,
  evidence TEXT NOT NULL,
  run TEXT NOT NULL,
  untrusted INTEGER NOT NULL CHECK (untrusted IN (0, 1)),
  state TEXT NOT NULL CHECK (state IN ('stored', 'waiting', 'opened', 'suppressed', 'duplicate', 'invalid', 'merged', 'closed')),
  state_detail TEXT NOT NULL,
  policy_repo TEXT,
  pr_number INTEGER,
  backtest TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX rule_proposals_run ON rule_proposals (run);
CREATE INDEX rule_proposals_state ON rule_proposals (state, id);

CREATE TABLE rule_proposal_pulls (
  repo TEXT NOT NULL,
  number INTEGER NOT NULL,
  url TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('open', 'merged', 'closed')),
  opened_at INTEGER NOT NULL,
  PRIMARY KEY (repo, number)
) WITHOUT ROWID;
CREATE INDEX rule_proposal_pulls_opened ON rule_proposal_pulls (repo, opened_at);

CREATE TABLE rule_proposal_rejections (
  repo TEXT NOT NULL,
  expression_hash TEXT NOT NULL,
  reason TEXT NOT NULL,
  pr_number INTEGER NOT NULL,
  pr_url TEXT NOT NULL,
  rejected_at INTEGER NOT NULL,
  PRIMARY KEY (repo, expression_hash)
) WITHOUT ROWID;
`;

// The notify hook's cooldowns: when each (harness, event, rule) last went to the hook, so a daemon
// restarted inside a cooldown does not notify again. The notifier deletes the rows whose cooldown is
// over (by sent_at), which keeps the table to the keys notified within one cooldown.
const V4 = `
CREATE TABLE notify_cooldowns (
  harness TEXT NOT NULL,
  event TEXT NOT NULL,
  rule TEXT NOT NULL,
  sent_at INTEGER NOT NULL,
  PRIMARY KEY (harness, event, rule)
) WITHOUT ROWID;
CREATE INDEX notify_cooldowns_sent_at ON notify_cooldowns (sent_at);
`;

// JournalService.Append's idempotency keys: each key a producer sent with a batch, per source, with the
// answer its events got, written in the transaction that commits the batch's rows. A retry of the key
// (its answer was lost) gets that answer and admits nothing again. Keys older than an hour are deleted.
const V5 = `
CREATE TABLE journal_appends (
  source TEXT NOT NULL,
  key TEXT NOT NULL,
  answer TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (source, key)
) WITHOUT ROWID;
CREATE INDEX journal_appends_created_at ON journal_appends (created_at);
`;

// Tokens the daemon issued (`harness token`): only each token's SHA-256 digest, never its text. A row is
// never deleted, so the operator's list shows what was revoked and when.
const V6 = `
CREATE TABLE issued_tokens (
  id TEXT PRIMARY KEY,
  digest BLOB NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  source TEXT,
  harness TEXT,
  run TEXT,
  label TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  revoked_at INTEGER
);
CREATE INDEX issued_tokens_run ON issued_tokens (run) WHERE run IS NOT NULL;
`;

// V7: rule_fires by seq: ListFires paged forward by after_seq and CountFires' last day or week (the
// TUI), each read from the index rather than a scan of the whole fire log.
const V7 = `
CREATE INDEX rule_fires_seq ON rule_fires (seq);
`;

// V8: agent runs. Hook-fed runs in flight, several per harness (the core's
// `sessions`); the opened row of each run, found by index on every hook call, and its closed row; the stops waiting for a
// hook-fed run's next hook call, and when each was delivered; and each daemon-derived row producer's
// cursor (loop guard, stale run closer, file-edge projector), which commits with the rows it derived.
const V8 = `
CREATE TABLE sessions_in_flight (
  run TEXT PRIMARY KEY,
  harness TEXT NOT NULL
);

CREATE TABLE agent_run_stops (
  run TEXT PRIMARY KEY,
  harness TEXT NOT NULL,
  rule TEXT NOT NULL,
  fire_id TEXT NOT NULL,
  by TEXT NOT NULL CHECK (by IN ('rule', 'loop_guard')),
  created_at INTEGER NOT NULL,
  delivered_at INTEGER
);
CREATE INDEX agent_run_stops_fire ON agent_run_stops (fire_id);

CREATE INDEX rule_journal_opened_run ON rule_journal (run, seq) WHERE kind = 'run_event' AND type = 'opened';
CREATE INDEX rule_journal_closed_run ON rule_journal (run, seq) WHERE kind = 'run_event' AND type = 'closed';

CREATE TABLE derived_cursors (
  name TEXT PRIMARY KEY,
  cursor INTEGER NOT NULL
);
`;

// V9: agent run stops, each run's own outcome (hook-runs): a stop of several hook-fed runs records for
// each whether its next hook call was told or it closed first, and the fire's one `rule_actions` stop row
// sums them up. NULL: not yet settled (or settled before V9: delivered).
const V9 = `
ALTER TABLE agent_run_stops ADD COLUMN outcome TEXT CHECK (outcome IN ('delivered', 'closed_first'));
`;

// V10: each run's first row of any type, found by index on every hook call while a hold is on:
// a session first seen after the hold began is held whether or not its `opened` row ever arrived.
const V10 = `
CREATE INDEX rule_journal_run ON rule_journal (run, seq) WHERE run IS NOT NULL;
`;

// V11: what each hook-fed run was told (agents/enforcement/tell.ts): a fire told to a run once, recorded in
// the transaction that builds the hook answer carrying it, so a restart never tells it again, with its
// seq, since a run is told its fires in (seq, fire_id) order and reads on from the last one told; and the
// fire log by target, so the fires still to tell a run are found by index seeks on every hook call.
const V11 = `
CREATE TABLE agent_told (
  run TEXT NOT NULL,
  fire_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  told_at INTEGER NOT NULL,
  PRIMARY KEY (run, fire_id)
) WITHOUT ROWID;
CREATE INDEX agent_told_last ON agent_told (run, seq, fire_id);

CREATE INDEX rule_fires_target ON rule_fires (target_kind, target_key, seq, fire_id) WHERE mode = 'active';
`;

// V12: a hook-fed run's life, once. An agent session is a run until the run closes; a session whose
// stop the operator released (`harness rules resume`) is another run at its next SessionStart. Each
// session's runs, by generation (the first is `<harness>#<session>` and has no row here), so the session's
// current run survives a restart; and when a stop was released (by `harness rules resume`, or with its
// rule's hold by `harness rules clear`).
const V12 = `
CREATE TABLE agent_session_runs (
  run TEXT PRIMARY KEY,
  harness TEXT NOT NULL,
  session TEXT NOT NULL,
  generation INTEGER NOT NULL CHECK (generation >= 2),
  created_at INTEGER NOT NULL,
  UNIQUE (harness, session, generation)
);
ALTER TABLE agent_run_stops ADD COLUMN released_at INTEGER;
CREATE INDEX agent_run_stops_unreleased ON agent_run_stops (harness, rule) WHERE released_at IS NULL;
`;

// V13: who appended a row over mutual TLS (decision 0014): the client certificate's subject CN and SHA-256
// fingerprint, beside the row like its source and never an event field (REQ-4); NULL for every other row.
const V13 = `
ALTER TABLE rule_journal ADD COLUMN peer_name TEXT;
ALTER TABLE rule_journal ADD COLUMN peer_fingerprint TEXT;
`;

// V14: who released a hold or a stopped run (decision 0018): an operator's control token's label, or
// "operator" for the first control token; null for a release no operator made.
const V14 = `
ALTER TABLE rule_holds ADD COLUMN released_by TEXT;
ALTER TABLE agent_run_stops ADD COLUMN released_by TEXT;
`;

export const MIGRATIONS: readonly string[] = [V1, V2, V3, V4, V5, V6, V7, V8, V9, V10, V11, V12, V13, V14];
export const SCHEMA_VERSION = MIGRATIONS.length;
