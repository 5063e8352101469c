/**
 * Every table of the SQLite store read whole, for `harness store copy` (`pg/pg-copy.ts`): the tables in
 * an order that puts each before those whose foreign keys point at it, each table's columns and primary
 * key as the schema declares them, and its rows in primary-key order, a bounded page at a time (keyset
 * paging, never the whole journal in memory), integers as bigints so none is rounded. A read snapshot
 * holds one read transaction over every page, so a daemon committing meanwhile changes none of them.
 */
import type { Db } from "./open-store.js";

/**
 * The store's tables, parents first (rule_journal before its paths, rule_fires before its actions and
 * annotations). test/shell/store/store-tables.test.ts holds it to the schema's tables.
 */
export const STORE_TABLES = [
  "rule_journal",
  "rule_journal_paths",
  "journal_appends",
  "evaluator",
  "rule_fires",
  "rule_actions",
  "rule_annotations",
  "rule_holds",
  "rule_cooldowns",
  "rule_shadows",
  "rule_suppressed",
  "runs_in_flight",
  "rule_cost_exceeded",
  "policy_last_good",
  "rule_proposals",
  "rule_proposal_pulls",
  "rule_proposal_rejections",
  "notify_cooldowns",
  "issued_tokens",
  "sessions_in_flight",
  "agent_run_stops",
  "derived_cursors",
  "agent_told",
  "agent_session_runs",
] as const;

export type StoreTable = (typeof STORE_TABLES)[number];

/** A cell as SQLite stores it: integers as bigints, blobs as buffers. */
export type SqliteCell = bigint | number | string | Buffer | null;

export interface TableShape {
  readonly table: StoreTable;
  /** In the table's order. */
  readonly columns: readonly string[];
  /** The primary key's columns, in the key's order. */
  readonly key: readonly string[];
}

/** The table's columns and primary key, from the schema itself. */
export function tableShape(db: Db, table: StoreTable): TableShape {
  const info = db.pragma(`table_info(${table})`) as { name: string; pk: number }[];
  if (info.length === 0) throw new Error(`store has no table ${table}`);
  const key = info
    .filter((c) => c.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((c) => c.name);
  return { table, columns: info.map((c) => c.name), key };
}

/**
 * The table's rows in primary-key order (SQLite's BINARY order for text), each as its cells in column
 * order, read `page` rows a statement, each page after the last one's key.
 */
export function* tableRows(db: Db, shape: TableShape, page: number): Generator<SqliteCell[]> {
  // Table and column names come from the schema (STORE_TABLES, table_info), never from input.
  const cols = shape.columns.join(", ");
  const order = shape.key.join(", ");
  const first = db.prepare(`SELECT ${cols} FROM ${shape.table} ORDER BY ${order} LIMIT ?`);
  const next = db.prepare(
    `SELECT ${cols} FROM ${shape.table} WHERE (${order}) > (${shape.key.map(() => "?").join(", ")}) ORDER BY ${order} LIMIT ?`,
  );
  first.raw(true).safeIntegers(true);
  next.raw(true).safeIntegers(true);
  const keyAt = shape.key.map((k) => shape.columns.indexOf(k));
  let after: SqliteCell[] | undefined;
  for (;;) {
    const rows = (after === undefined ? first.all(page) : next.all(...after, page)) as SqliteCell[][];
    yield* rows;
    const last = rows.at(-1);
    if (last === undefined || rows.length < page) return;
    after = keyAt.map((i) => last[i] as SqliteCell);
  }
}

/** A read transaction held open over several reads: every read inside sees one commit's store. */
export interface ReadSnapshot {
  end(): void;
}

/** Begins a read transaction and takes its snapshot now (SQLite takes it at the first read). */
export function readSnapshot(db: Db): ReadSnapshot {
  db.exec("BEGIN");
  db.prepare("SELECT count(*) FROM sqlite_master").get();
  return {
    end() {
      if (db.inTransaction) db.exec("COMMIT");
    },
  };
}
