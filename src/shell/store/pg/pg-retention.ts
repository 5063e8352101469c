/**
 * SQLite's `JournalPruner` (`../retention.ts`) on PostgreSQL: the same rows pruned, by the same bounds,
 * in the same batches of 1,000 oldest first, each batch its own transaction. Their paths go with them
 * (rule_journal_paths is `ON DELETE CASCADE`, schema V1); fires, holds, annotations and actions are kept,
 * as on SQLite.
 *
 * The journal's head (`journal_head`, decision 0019) is never touched: appends take their seqs after the
 * head's and their `at` no earlier than its, so pruning cannot make a seq be given twice or `at` go back,
 * even if it emptied the table. It never does: the row at the evaluator cursor is kept, as on SQLite (the
 * evaluator reads its `at` back at start), and the last row is at or after the cursor.
 */
import type pg from "pg";
import { MAX_WINDOW_MS, MIN_JOURNAL_RETENTION } from "../../../core/window.js";
import type { AsyncPort } from "../async-port.js";
import {
  type JournalPruner,
  PRUNE_BATCH_ROWS,
  type PruneBatch,
  type PruneSummary,
  RetentionError,
  VACUUM_STEP_PAGES,
} from "../retention.js";
import { inTransaction } from "./pg-client.js";

/**
 * The batch's rows found through the rule_journal_at index in `at` order, ties sorted by seq as they
 * come (an incremental sort), so a batch reads only the rows it deletes.
 */
const DELETE_BATCH =
  "DELETE FROM rule_journal WHERE seq IN (SELECT seq FROM rule_journal WHERE at < $1 AND seq < $2 ORDER BY at, seq LIMIT $3)";

export class PgJournalPruner implements AsyncPort<JournalPruner> {
  private readonly pool: pg.Pool;
  private readonly store: string;

  constructor(
    store: { readonly pool: pg.Pool; readonly name: string },
    readonly retentionMs: number,
  ) {
    this.pool = store.pool;
    this.store = store.name;
    // As SQLite's: what deletes history refuses a retention below the config loader's minimum.
    if (!Number.isFinite(retentionMs) || retentionMs < MIN_JOURNAL_RETENTION)
      throw new RetentionError(
        this.store,
        `retention of ${retentionMs} ms is below the minimum of ${MIN_JOURNAL_RETENTION} ms (37d)`,
      );
  }

  /**
   * Deletes up to 1,000 of the oldest prunable rows in one transaction: rows before `now - retention`,
   * below the evaluator cursor, and more than the window lookback before the cursor row's `at` (SQLite's
   * `pruneBatch` says why each bound). The cursor only moves forward, so reading it without a lock
   * gives a bound that is at worst earlier than the one a commit in flight sets: never too late.
   */
  async pruneBatch(now: number): Promise<PruneBatch> {
    if (!Number.isFinite(now)) throw new RetentionError(this.store, `now is not a time: ${now}`);
    let cursor: number | undefined;
    try {
      return await inTransaction(this.pool, "BEGIN", async (client): Promise<PruneBatch> => {
        const row = (await client.query<{ cursor: number }>("SELECT cursor FROM evaluator WHERE id = 1"))
          .rows[0];
        if (row === undefined) throw new RetentionError(this.store, "the evaluator row is missing");
        cursor = row.cursor;
        if (cursor === 0) return { deleted: 0, done: true };
        const cursorAt = (
          await client.query<{ at: number }>("SELECT at FROM rule_journal WHERE seq = $1", [cursor])
        ).rows[0];
        if (cursorAt === undefined)
          throw new RetentionError(
            this.store,
            `the evaluator cursor is at seq ${cursor}, which is not in the journal; nothing pruned`,
          );
        const before = Math.min(now - this.retentionMs, cursorAt.at - MAX_WINDOW_MS);
        // `at` is an integer: `at < before` is `at < ceil(before)`, and a fractional `now` (which SQLite
        // compares as a real) would not be read as a BIGINT parameter.
        const deleted =
          (await client.query(DELETE_BATCH, [Math.ceil(before), cursor, PRUNE_BATCH_ROWS])).rowCount ?? 0;
        return { deleted, done: deleted < PRUNE_BATCH_ROWS };
      });
    } catch (e) {
      if (e instanceof RetentionError) throw e;
      throw new RetentionError(
        this.store,
        `pruning rows admitted before ${new Date(now - this.retentionMs).toISOString()} (cursor ${cursor ?? "unread"}) failed: ${(e as Error).message}`,
        { cause: e },
      );
    }
  }

  /**
   * Frees nothing and answers 0, after checking `pages` as SQLite's does. PostgreSQL has no incremental
   * vacuum: a deleted row's space is reclaimed by VACUUM, which cannot run inside a transaction block
   * and is the server's job (autovacuum, triggered by the deletes themselves), not a client's.
   */
  async vacuumStep(pages: number = VACUUM_STEP_PAGES): Promise<number> {
    if (!Number.isSafeInteger(pages) || pages <= 0)
      throw new RetentionError(this.store, `vacuum step of ${pages} pages: expected a positive integer`);
    return 0;
  }

  /** Every batch, back to back: for offline commands, which block nobody. No pages: see `vacuumStep`. */
  async pruneAll(now: number): Promise<PruneSummary> {
    let deleted = 0;
    let batches = 0;
    for (;;) {
      const batch = await this.pruneBatch(now);
      deleted += batch.deleted;
      batches++;
      if (batch.done) break;
    }
    return { deleted, batches, pagesFreed: 0 };
  }

  /** The admission time of the oldest row still in the journal, undefined when it is empty. */
  async oldestRetainedAt(): Promise<number | undefined> {
    const r = await this.pool.query<{ at: number | null }>("SELECT min(at) AS at FROM rule_journal");
    return r.rows[0]?.at ?? undefined;
  }
}
