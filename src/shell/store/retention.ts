/**
 * Journal retention (ADR-0037 as SPEC-0029 REQ-7 uses it): `[memory.rules] journal_retention` bounds
 * rule_journal. Rows older than `now - retention` are deleted oldest first in batches of 1,000, each
 * batch its own short `BEGIN IMMEDIATE` transaction so the evaluator's commits wait at most one batch;
 * their paths go with them (rule_journal_paths is `ON DELETE CASCADE`, and the store runs with
 * `foreign_keys=ON`). The freed pages are then returned to the file system a step at a time with
 * `PRAGMA incremental_vacuum(N)` (the store is created with `auto_vacuum=INCREMENTAL`).
 *
 * The daemon drives `pruneBatch` and `vacuumStep` one call per event-loop turn, at start and hourly;
 * offline commands and tests call `pruneAll`.
 *
 * Only the journal is pruned. Fires, holds, annotations and actions are not: they are keyed by fire id
 * and carry what they need themselves (a fire's `seq` is a plain column, not a foreign key), so they
 * outlive the rows that produced them.
 */
import { MAX_WINDOW_MS, MIN_JOURNAL_RETENTION } from "../../core/window.js";
import type { Db } from "./open-store.js";

/** Rows deleted per transaction: short enough that an evaluator commit never waits long behind one. */
export const PRUNE_BATCH_ROWS = 1_000;
/**
 * Pages one `vacuumStep` frees by default: 2 MiB at SQLite's default 4 KiB page, which takes about as
 * long as one batch of deletes (some 20 ms here), so neither holds the write lock longer than the other.
 */
export const VACUUM_STEP_PAGES = 512;

export class RetentionError extends Error {
  constructor(
    readonly store: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`store ${store}: journal retention: ${message}`, options);
    this.name = "RetentionError";
  }
}

export interface PruneBatch {
  /** Journal rows this batch deleted (their paths went with them). */
  readonly deleted: number;
  /** True when nothing prunable is left for this `now`: the caller moves on to `vacuumStep`. */
  readonly done: boolean;
}

export interface PruneSummary {
  readonly deleted: number;
  /** Transactions run, the last one being the one that found less than a full batch. */
  readonly batches: number;
  readonly pagesFreed: number;
}

export class JournalPruner {
  private readonly store: string;
  private readonly cursorStmt;
  private readonly atOfStmt;
  private readonly deleteStmt;
  private readonly oldestStmt;

  constructor(
    private readonly db: Db,
    readonly retentionMs: number,
  ) {
    this.store = db.name;
    // The config loader refuses less than 37d; checked again here because this is what deletes history:
    // REQ-8 allows `--since` up to the retention minus 7d, so less would refuse backtest's default 30d.
    if (!Number.isFinite(retentionMs) || retentionMs < MIN_JOURNAL_RETENTION)
      throw new RetentionError(
        this.store,
        `retention of ${retentionMs} ms is below the minimum of ${MIN_JOURNAL_RETENTION} ms (37d)`,
      );
    this.cursorStmt = db.prepare("SELECT cursor FROM evaluator WHERE id = 1");
    this.atOfStmt = db.prepare("SELECT at FROM rule_journal WHERE seq = ?");
    // Served by the rule_journal_at index (a covering scan of `at < ?` in (at, seq) order), so a batch
    // reads only the rows it deletes, not the retained journal behind them.
    this.deleteStmt = db.prepare(
      "DELETE FROM rule_journal WHERE seq IN (SELECT seq FROM rule_journal WHERE at < ? AND seq < ? ORDER BY at, seq LIMIT ?)",
    );
    this.oldestStmt = db.prepare("SELECT min(at) AS at FROM rule_journal");
  }

  /**
   * Deletes up to 1,000 of the oldest prunable rows in one `BEGIN IMMEDIATE` transaction.
   *
   * A row is prunable when its `at` is before `now - retention` and the evaluator no longer needs it:
   * - its seq is below the evaluator cursor. A row after the cursor has not been evaluated yet, and
   *   REQ-7 evaluates every committed row, in seq order, after a restart too: a daemon that was down
   *   longer than the retention must still evaluate what was admitted before it stopped. The cursor row
   *   itself is kept as well: the evaluator reads its `at` back at start, the writer keeps `at`
   *   non-decreasing from the last row, and SQLite gives a new INTEGER PRIMARY KEY the largest seq plus
   *   one, so an emptied table would hand out seqs below the cursor that would never be evaluated. This
   *   bound is on seq alone, so it holds whatever the rows' `at`.
   * - its `at` is more than the 7-day window lookback before the cursor row's: after a restart the
   *   evaluator rebuilds its windows from those rows. This only matters for an evaluator lagging by more
   *   than the retention minus 7d; otherwise `now - retention` is the earlier bound.
   */
  pruneBatch(now: number): PruneBatch {
    if (!Number.isFinite(now)) throw new RetentionError(this.store, `now is not a time: ${now}`);
    let cursor: number | undefined;
    try {
      return this.db
        .transaction((): PruneBatch => {
          const row = this.cursorStmt.get() as { cursor: number } | undefined;
          if (row === undefined) throw new RetentionError(this.store, "the evaluator row is missing");
          cursor = row.cursor;
          if (cursor === 0) return { deleted: 0, done: true };
          const cursorAt = this.atOfStmt.get(cursor) as { at: number } | undefined;
          if (cursorAt === undefined)
            throw new RetentionError(
              this.store,
              `the evaluator cursor is at seq ${cursor}, which is not in the journal; nothing pruned`,
            );
          const before = Math.min(now - this.retentionMs, cursorAt.at - MAX_WINDOW_MS);
          const { changes } = this.deleteStmt.run(before, cursor, PRUNE_BATCH_ROWS);
          return { deleted: changes, done: changes < PRUNE_BATCH_ROWS };
        })
        .immediate();
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
   * Returns up to `pages` free pages to the file system (`PRAGMA incremental_vacuum(N)`), in one
   * `BEGIN IMMEDIATE` transaction; the count freed, 0 once the freelist is empty. The file itself
   * shrinks when the WAL is next checkpointed.
   */
  vacuumStep(pages: number = VACUUM_STEP_PAGES): number {
    // Interpolated into the pragma, and incremental_vacuum(0) or a negative N would free the whole
    // freelist in one go: only a positive integer is accepted.
    if (!Number.isSafeInteger(pages) || pages <= 0)
      throw new RetentionError(this.store, `vacuum step of ${pages} pages: expected a positive integer`);
    try {
      return this.db
        .transaction((): number => {
          const free = this.freelistCount();
          if (free === 0) return 0;
          this.db.pragma(`incremental_vacuum(${pages})`);
          return free - this.freelistCount();
        })
        .immediate();
    } catch (e) {
      const message = `incremental vacuum of ${pages} pages failed: ${(e as Error).message}`;
      throw new RetentionError(this.store, message, { cause: e });
    }
  }

  /** Every batch, then every vacuum step, back to back: for offline commands, which block nobody. */
  pruneAll(now: number): PruneSummary {
    let deleted = 0;
    let batches = 0;
    for (;;) {
      const batch = this.pruneBatch(now);
      deleted += batch.deleted;
      batches++;
      if (batch.done) break;
    }
    let pagesFreed = 0;
    for (let freed = this.vacuumStep(); freed > 0; freed = this.vacuumStep()) pagesFreed += freed;
    return { deleted, batches, pagesFreed };
  }

  /**
   * The admission time of the oldest row still in the journal, undefined when it is empty: for doctor,
   * and for backtest to say how far back the journal actually reaches.
   */
  oldestRetainedAt(): number | undefined {
    const row = this.oldestStmt.get() as { at: number | null };
    return row.at ?? undefined;
  }

  private freelistCount(): number {
    return this.db.pragma("freelist_count", { simple: true }) as number;
  }
}
