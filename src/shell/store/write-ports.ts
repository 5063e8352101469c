/**
 * The store's doors on the daemon's write path, asynchronous (decision 0020): what the journal writer
 * commits through (`JournalLog`) and what the evaluator reads and commits through (`EvaluatorLog`).
 * Each commit is passed as data, what it writes, and answers what it committed, so a backend whose
 * statements are round trips (PostgreSQL) runs a transaction without a closure of the caller's inside
 * it. SQLite's are `sqlite-write-ports.ts`, over the synchronous tables.
 */
import type { JournalRow } from "../../core/journal.js";
import type { Source } from "../../core/sources.js";
import type { CoreState } from "../../core/state.js";
import type { AgentRunStop } from "./agent-run-stops.js";
import type { Decisions } from "./decision-store.js";
import type { NewRow } from "./journal-table.js";

/** A row to append: its `at` is given by the commit. */
export type PendingRow = Omit<NewRow, "at">;

/** A group's idempotency key, and the answer to store with it given the seqs its rows got. */
export interface GroupKey {
  readonly source: Source;
  readonly key: string;
  readonly answer: (seqs: readonly number[]) => string;
}

/** Rows committed together, with the Append key they answer, if any. */
export interface PendingGroup {
  readonly rows: readonly PendingRow[];
  readonly key?: GroupKey | undefined;
}

/** What became of a group: its rows' seqs, or the answer stored for its key by an earlier commit. */
export type GroupResult =
  | { readonly kind: "committed"; readonly seqs: readonly number[] }
  | { readonly kind: "repeated"; readonly answer: string };

/** A commit's options. */
export interface CommitOptions {
  /**
   * The commit need not wait for the disk (`wal-sync.ts`): a live hook row answered at its commit, the
   * cursor of rows that changed nothing.
   */
  readonly unsynced?: boolean;
  /**
   * Run inside the transaction after its writes and before its commit (where the crash tests stop the
   * daemon); a throw rolls the transaction back.
   */
  readonly beforeCommit?: () => void;
  /**
   * Commits only while this daemon leads (a deriver's rows and cursor: decision 0022); refused
   * otherwise, with nothing committed. SQLite's one daemon always leads.
   */
  readonly fenced?: boolean;
}

/**
 * A write that commits with derived rows (`../derive/`), as data: a deriver's cursor, the stops and
 * revocations a row's meaning records. `row`: the index, among the commit's rows, of the row whose seq
 * it records.
 */
export type DerivedWrite =
  | { readonly kind: "cursor"; readonly name: string; readonly seq: number }
  | {
      readonly kind: "loop_guard_stop";
      readonly run: string;
      readonly harness: string;
      readonly at: number;
      readonly row: number;
    }
  /** The run closed before a hook call took its stop (`agent-run-stops.ts`'s `closedFirst`). */
  | { readonly kind: "stop_closed_first"; readonly run: string; readonly at: number }
  /** The stop delivered at the run's hook call, with the run's `closed` row. */
  | { readonly kind: "stop_delivered"; readonly stop: AgentRunStop; readonly at: number }
  /** The run closed: the gateway tokens bound to it are revoked. */
  | { readonly kind: "run_tokens_revoked"; readonly run: string; readonly at: number };

/**
 * A `stop_delivered` write found the run's stop already settled (another hook call of the run, perhaps
 * on another daemon on the store, delivered it first): the commit is refused, so the run gets one
 * `closed` row, not two.
 */
export class StopSettledError extends Error {
  constructor(readonly run: string) {
    super(`the stop of ${run} was settled by another call: its closed row is not written twice`);
    this.name = "StopSettledError";
  }
}

/** The journal as its writer sees it. */
export interface JournalLog {
  /** The last row's seq and admission time (0 and 0 for an empty journal). */
  last(): Promise<{ readonly seq: number; readonly at: number }>;
  /** The answer stored for an Append key by an earlier commit, or undefined. */
  answer(source: Source, key: string): Promise<string | undefined>;
  /**
   * One transaction: each group's rows appended, all at `at`, its key stored with its answer; a group
   * whose key is already stored appends nothing and is answered `repeated`.
   */
  commitGroups(
    groups: readonly PendingGroup[],
    at: number,
    options?: CommitOptions,
  ): Promise<readonly GroupResult[]>;
  /** One transaction: `rows`, each at its own `at`, with `writes`; the rows' seqs. */
  commitRows(
    rows: readonly NewRow[],
    writes?: readonly DerivedWrite[],
    options?: CommitOptions,
  ): Promise<readonly number[]>;
}

/** The journal and the decisions as the evaluator sees them. */
export interface EvaluatorLog {
  /** The evaluator's stored cursor. */
  cursor(): Promise<number>;
  /** The core state as committed; a start clears the cost-limit disables (they last until a load). */
  loadState(options: { readonly clearCostExceeded: boolean }): Promise<CoreState>;
  /** One stretch of decisions and the cursor, in one transaction. */
  commit(decisions: Decisions, options?: CommitOptions): Promise<void>;
  /** Up to `limit` rows after `seq`, in seq order. */
  rowsAfter(seq: number, limit: number): Promise<readonly JournalRow[]>;
  /**
   * Rows with seq in `(fromSeq, toSeq]` admitted after `afterAt`, in seq order, a page at a time (a week
   * of rows rebuilds the windows: an await per page, not per row).
   */
  pagesBetween(afterAt: number, fromSeq: number, toSeq: number): AsyncIterable<readonly JournalRow[]>;
  /** The admission time of the row `seq`, if it is still in the journal. */
  atOf(seq: number): Promise<number | undefined>;
}
