/**
 * What tests read from (and, to set up a state, write to) the store, named for what they want. Where a
 * store object of `src/shell/store/` already offers the read, this goes through it; the rest is the one
 * place in `test/` outside the store's own tests that knows table and column names, so a schema change
 * is made here once (test/store-door-in-tests.test.ts keeps it so).
 */
import type { JournalRow } from "../../src/core/journal.js";
import { DecisionStore } from "../../src/shell/store/decision-store.js";
import { JournalTable } from "../../src/shell/store/journal-table.js";
import { type Db, openStoreReadOnly } from "../../src/shell/store/open-store.js";
import { type Proposal, ProposalStore } from "../../src/shell/store/proposal-store.js";
import {
  type AnnotationRow,
  type FireRow,
  type HoldRow,
  RuleReads,
} from "../../src/shell/store/rule-reads.js";
import { TokenStore } from "../../src/shell/store/token-store.js";

/**
 * The store a test reads: an open connection, something holding one (an `OpenedStore`, an in-process
 * daemon), or the file of a store another process owns, read on a read-only connection of its own.
 */
export type StoreAt = Db | { readonly db: Db } | { readonly storePath: string };

/** A store a test writes to: an open connection of its own, or something holding one. */
export type WritableStore = Db | { readonly db: Db };

function read<T>(at: StoreAt, use: (db: Db) => T): T {
  if ("prepare" in at) return use(at);
  if ("db" in at) return use(at.db);
  const store = openStoreReadOnly(at.storePath);
  try {
    return use(store.db);
  } finally {
    store.close();
  }
}

/** `column = ?` terms for the filter's set fields, the column named by `columns`, and `extra` terms. */
function where(
  filter: Readonly<Record<string, string | number | undefined>>,
  columns: Readonly<Record<string, string>>,
  extra: readonly string[] = [],
): { sql: string; params: (string | number)[] } {
  const terms: string[] = [...extra];
  const params: (string | number)[] = [];
  for (const [key, column] of Object.entries(columns)) {
    const value = filter[key];
    if (value === undefined) continue;
    terms.push(`${column} = ?`);
    params.push(value);
  }
  return { sql: terms.length === 0 ? "" : `WHERE ${terms.join(" AND ")}`, params };
}

/** A journal row with its indexed columns and its event parsed. */
export interface StoredRow {
  readonly seq: number;
  readonly at: number;
  readonly kind: string;
  readonly type: string;
  readonly source: string;
  readonly harness: string | null;
  readonly run: string | null;
  readonly outcome: string | null;
  readonly event: Record<string, unknown>;
}

export interface RowFilter {
  readonly kind?: string;
  readonly type?: string;
  readonly harness?: string;
  readonly run?: string;
}

const ROW_COLUMNS = { kind: "kind", type: "type", harness: "harness", run: "run" };

/** The journal's rows matching `filter`, in seq order. */
export function journalRows(at: StoreAt, filter: RowFilter = {}): StoredRow[] {
  const w = where({ ...filter }, ROW_COLUMNS);
  return read(at, (db) =>
    (
      db
        .prepare(
          `SELECT seq, at, kind, type, source, harness, run, outcome, event FROM rule_journal ${w.sql} ORDER BY seq`,
        )
        .all(...w.params) as (Omit<StoredRow, "event"> & { event: string })[]
    ).map((r) => ({ ...r, event: JSON.parse(r.event) as Record<string, unknown> })),
  );
}

/** Each matching row's client certificate identity (mutual TLS, V13), beside the row, in seq order. */
export function journalPeers(
  at: StoreAt,
  filter: RowFilter = {},
): { seq: number; source: string; peerName: string | null; peerFingerprint: string | null }[] {
  const w = where({ ...filter }, ROW_COLUMNS);
  return read(
    at,
    (db) =>
      db
        .prepare(
          `SELECT seq, source, peer_name AS peerName, peer_fingerprint AS peerFingerprint FROM rule_journal ${w.sql} ORDER BY seq`,
        )
        .all(...w.params) as {
        seq: number;
        source: string;
        peerName: string | null;
        peerFingerprint: string | null;
      }[],
  );
}

/** The whole journal as the core reads it, in seq order. */
export const coreRows = (at: StoreAt): JournalRow[] =>
  read(at, (db) => new JournalTable(db).rowsAfter(0, Number.MAX_SAFE_INTEGER));

/** How many journal rows match `filter`. */
export function journalCount(at: StoreAt, filter: RowFilter = {}): number {
  const w = where({ ...filter }, ROW_COLUMNS);
  return read(
    at,
    (db) =>
      (db.prepare(`SELECT COUNT(*) AS n FROM rule_journal ${w.sql}`).get(...w.params) as { n: number }).n,
  );
}

/** The last journal row's seq and admission time (0 and 0 for an empty journal). */
export const lastRow = (at: StoreAt): { seq: number; at: number } =>
  read(at, (db) => new JournalTable(db).last());

/** Every path the journal's rows name, in no particular order. */
export const journalPaths = (at: StoreAt): string[] =>
  read(at, (db) =>
    (db.prepare("SELECT path FROM rule_journal_paths").all() as { path: string }[]).map((r) => r.path),
  );

/** The seq of the last row the evaluator has committed decisions for. */
export const evaluatorCursor = (at: StoreAt): number => read(at, (db) => new DecisionStore(db).cursor());

/** Each derived-row producer's cursor, for those that have committed once. */
export const derivedCursors = (at: StoreAt): number[] =>
  read(at, (db) =>
    (db.prepare("SELECT cursor FROM derived_cursors").all() as { cursor: number }[]).map((r) => r.cursor),
  );

/** The evaluator has decided every row the journal holds. */
export const evaluatorCaughtUp = (at: StoreAt): boolean =>
  read(at, (db) => new DecisionStore(db).cursor() === new JournalTable(db).last().seq);

/**
 * Moves the evaluator's cursor to the journal's last row without deciding the rows between, as a store
 * whose rows were all decided long ago would be.
 */
export const skipEvaluatorToEnd = (at: WritableStore): void =>
  read(at, (db) =>
    new DecisionStore(db).commit({
      cursor: new JournalTable(db).last().seq,
      ops: [],
      fires: [],
      suppressed: new Map(),
    }),
  );

export interface FireFilter {
  readonly rule?: string;
  readonly mode?: string;
  readonly run?: string;
}

/** The fire log's fires matching `filter`, in seq then fire id order. */
export function fires(at: StoreAt, filter: FireFilter = {}): FireRow[] {
  const w = where({ ...filter }, { rule: "rule", mode: "mode", run: "run" });
  return read(
    at,
    (db) =>
      db.prepare(`SELECT * FROM rule_fires ${w.sql} ORDER BY seq, fire_id`).all(...w.params) as FireRow[],
  );
}

/** A fire's planned action (notify or stop) as recorded, with what its fire was about. */
export interface ActionRecord {
  readonly fire_id: string;
  readonly action: string;
  readonly state: string;
  readonly detail: string | null;
  readonly updated_at: number;
  readonly rule: string;
  readonly harness: string | null;
  readonly run: string | null;
}

export interface ActionFilter {
  readonly fireId?: string;
  readonly action?: string;
  readonly state?: string;
  readonly rule?: string;
  readonly run?: string;
}

/** The recorded actions matching `filter`, by fire id and action. */
export function actions(at: StoreAt, filter: ActionFilter = {}): ActionRecord[] {
  const w = where(
    { ...filter },
    { fireId: "a.fire_id", action: "a.action", state: "a.state", rule: "f.rule", run: "f.run" },
  );
  return read(
    at,
    (db) =>
      db
        .prepare(
          `SELECT a.fire_id, a.action, a.state, a.detail, a.updated_at, f.rule, f.harness, f.run
           FROM rule_actions a JOIN rule_fires f USING (fire_id) ${w.sql} ORDER BY a.fire_id, a.action`,
        )
        .all(...w.params) as ActionRecord[],
  );
}

/** Actions a hook or stop command has not finished: pending or started. */
export const actionsInFlight = (at: StoreAt): number => read(at, (db) => new RuleReads(db).actionsInFlight());

export interface HoldFilter {
  readonly harness?: string;
  /** Only the holds in force (true) or only the released ones (false). */
  readonly inForce?: boolean;
}

/** The holds matching `filter`, in the order they were placed. */
export function holds(at: StoreAt, filter: HoldFilter = {}): HoldRow[] {
  const inForce = filter.inForce === undefined ? [] : [`released_at IS ${filter.inForce ? "" : "NOT "}NULL`];
  const w = where({ harness: filter.harness }, { harness: "harness" }, inForce);
  return read(
    at,
    (db) =>
      db
        .prepare(
          `SELECT harness, rule, hash, fire_id, since, cooldown, false_since, released_at, release_cause, released_by FROM rule_holds ${w.sql} ORDER BY id`,
        )
        .all(...w.params) as HoldRow[],
  );
}

/** Every annotation a fire wrote, newest first. */
export const annotations = (at: StoreAt): AnnotationRow[] =>
  read(at, (db) => new RuleReads(db).annotations(undefined, Number.MAX_SAFE_INTEGER));

/** Every stored proposal, oldest first. */
export const proposals = (at: StoreAt): Proposal[] =>
  read(at, (db) => new ProposalStore(db).list({ after: 0 }, Number.MAX_SAFE_INTEGER));

/** Forgets every proposal whose name starts with `prefix` (all of them by default), with what it opened. */
export const forgetProposals = (at: WritableStore, prefix = ""): void =>
  read(at, (db) => {
    if (prefix === "")
      db.exec(
        "DELETE FROM rule_proposals; DELETE FROM rule_proposal_pulls; DELETE FROM rule_proposal_rejections;",
      );
    else db.prepare("DELETE FROM rule_proposals WHERE name LIKE ? || '%'").run(prefix);
  });

/** Rewrites a stored proposal's rule file text, replacing `from` with `to` (a proposal gone stale). */
export const rewriteProposalText = (at: WritableStore, id: number, from: string, to: string): void =>
  read(at, (db) => {
    db.prepare("UPDATE rule_proposals SET file_text = replace(file_text, ?, ?) WHERE id = ?").run(
      from,
      to,
      id,
    );
  });

/** Removes the journal row `seq`, as retention would. */
export const dropJournalRow = (at: WritableStore, seq: number): void =>
  read(at, (db) => {
    db.prepare("DELETE FROM rule_journal WHERE seq = ?").run(seq);
  });

/** The run of each revoked issued token (undefined for a token of no run), in run order. */
export const revokedTokenRuns = (at: StoreAt): (string | undefined)[] =>
  read(at, (db) =>
    new TokenStore(db)
      .all()
      .filter((t) => t.revokedMs !== undefined)
      .map((t) => t.run)
      .sort(),
  );

/** Each hook-fed run's stop: its run, its outcome and whether it is settled, in run order. */
export const agentRunStops = (at: StoreAt): { run: string; outcome: string | null; settled: boolean }[] =>
  read(at, (db) =>
    (
      db.prepare("SELECT run, outcome, delivered_at FROM agent_run_stops ORDER BY run").all() as {
        run: string;
        outcome: string | null;
        delivered_at: number | null;
      }[]
    ).map((r) => ({ run: r.run, outcome: r.outcome, settled: r.delivered_at !== null })),
  );

/** Who released a run's stop (`agent_run_stops.released_by`, decision 0018); null when none did. */
export const runStopReleasedBy = (at: StoreAt, run: string): string | null | undefined =>
  read(
    at,
    (db) =>
      (
        db.prepare("SELECT released_by FROM agent_run_stops WHERE run = ?").get(run) as
          | { released_by: string | null }
          | undefined
      )?.released_by,
  );

/** The notify cooldowns kept, as `<rule>@<sent at>`, in rule order. */
export const notifyCooldowns = (at: StoreAt): string[] =>
  read(at, (db) =>
    (
      db.prepare("SELECT rule, sent_at FROM notify_cooldowns ORDER BY rule").all() as {
        rule: string;
        sent_at: number;
      }[]
    ).map((r) => `${r.rule}@${r.sent_at}`),
  );

/** The fires told to `run` in its hook answers (`agent_told`), in the order they were told. */
export const toldFires = (at: StoreAt, run: string): { fire_id: string; told_at: number }[] =>
  read(
    at,
    (db) =>
      db
        .prepare("SELECT fire_id, told_at FROM agent_told WHERE run = ? ORDER BY told_at, fire_id")
        .all(run) as { fire_id: string; told_at: number }[],
  );
