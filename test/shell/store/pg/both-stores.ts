/**
 * A SQLite store and a PostgreSQL database side by side, for the contract tests of the agent runs'
 * store objects: the same journal, fires and state written to both, and a table read back from both in
 * one order. A property's case starts from empty ones (`reset`): a fresh SQLite file, and the PostgreSQL
 * tables emptied with the journal's head back at 0, so both give the same seqs again.
 */
import type { Fire } from "../../../../src/core/outcome.js";
import type { StateOp } from "../../../../src/core/state.js";
import { DecisionStore } from "../../../../src/shell/store/decision-store.js";
import { JournalCommits } from "../../../../src/shell/store/journal-commits.js";
import type { OpenedStore } from "../../../../src/shell/store/open-store.js";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgJournal, type PgNewRow } from "../../../../src/shell/store/pg/pg-journal.js";
import { PgEvaluatorLog } from "../../../../src/shell/store/pg/pg-write-ports.js";
import { tempStores } from "../temp-stores.js";
import { sameJournal } from "./same-journal.js";

/** The tables these tests write, children before parents; emptied between cases. */
const TABLES = [
  "rule_journal_paths",
  "rule_journal",
  "journal_appends",
  "rule_actions",
  "rule_annotations",
  "rule_fires",
  "agent_run_stops",
  "agent_told",
  "agent_session_runs",
  "derived_cursors",
  "sessions_in_flight",
  "runs_in_flight",
];

export interface BothStores {
  readonly sqlite: OpenedStore;
  readonly pg: OpenedPgStore;
}

/** Opens SQLite stores in temporary directories, removed after each test (`tempStores`). */
export function bothStores(prefix: string): {
  /** Empty stores: a new SQLite file and the PostgreSQL database emptied. */
  readonly reset: (pg: OpenedPgStore) => Promise<BothStores>;
} {
  const stores = tempStores(prefix);
  return {
    reset: async (pg) => {
      // DELETE rather than TRUNCATE: the tables are small, and TRUNCATE makes each a new file.
      await pg.pool.query(
        [...TABLES.map((t) => `DELETE FROM ${t}`), "UPDATE journal_head SET seq = 0, at = 0"].join(";\n"),
      );
      return { sqlite: stores.open(stores.storeFile()), pg };
    },
  };
}

/** Rows appended to both journals in one batch, with PostgreSQL's `at`; their seqs. */
export async function appendBoth(b: BothStores, rows: readonly PgNewRow[]): Promise<number[]> {
  const before = (await new PgJournal(b.pg.pool).last()).seq;
  await sameJournal(new PgJournal(b.pg.pool), new JournalCommits(b.sqlite.db), [rows]);
  return rows.map((_, i) => before + i + 1);
}

/** Fires and state ops committed to both as the evaluator commits a stretch of decisions. */
export async function decideBoth(
  b: BothStores,
  fires: readonly Fire[],
  ops: readonly { readonly at: number; readonly op: StateOp }[] = [],
): Promise<void> {
  const d = { cursor: 0, ops, fires, suppressed: new Map() };
  new DecisionStore(b.sqlite.db).commit(d);
  await new PgEvaluatorLog(b.pg.pool, new PgJournal(b.pg.pool)).commit(d);
}

/** A table's rows on each backend, every column, in `orderBy`'s order. */
export async function tableOnBoth(
  b: BothStores,
  table: string,
  orderBy: string,
): Promise<{ readonly sqlite: unknown[]; readonly pg: unknown[] }> {
  const sql = `SELECT * FROM ${table} ORDER BY ${orderBy}`;
  return { sqlite: b.sqlite.db.prepare(sql).all(), pg: (await b.pg.pool.query(sql)).rows };
}

/** A fire of `rule` on the row `seq`, active at `level`, with the stop action when it stops. */
export function fireOf(f: {
  readonly id: string;
  readonly rule: string;
  readonly seq: number;
  readonly target: { readonly kind: "run" | "harness"; readonly key: string; readonly harness: string };
  readonly level?: Fire["effectiveLevel"];
  readonly mode?: Fire["mode"];
}): Fire {
  const level = f.level ?? "stop";
  const mode = f.mode ?? "active";
  return {
    id: f.id,
    rule: f.rule,
    hash: `hash-${f.rule}`,
    seq: f.seq,
    at: f.seq,
    kind: "run_event",
    type: "tool",
    target: { kind: f.target.kind, key: f.target.key, harness: f.target.harness, run: undefined },
    declaredLevel: level,
    effectiveLevel: level,
    mode,
    action: mode === "shadow" ? "none" : level,
    actions:
      mode === "active" && level === "stop"
        ? [{ kind: "stop", harness: f.target.harness, run: f.target.key }]
        : [],
    message: `${f.rule} fired on ${f.seq}`,
    primitives: [],
  };
}
