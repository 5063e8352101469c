/**
 * The live evaluator (SPEC-0029 REQ-7): consumes committed journal rows in seq order and folds the
 * core's `evaluate` over them, one row at a time, exactly as backtest does. A row that produced fires,
 * holds or releases is committed with the cursor, in one transaction, before the next row is evaluated
 * and before any of its actions start; rows that produced nothing else advance the cursor together.
 * Only after a commit are the committed rows handed to `dispatch`, which carries out the actions the
 * core planned: the evaluator decides none itself. After a restart it resumes after the stored cursor
 * with state read back from the store and windows rebuilt from the journal.
 *
 * Rows that changed nothing (no fire, release, state op or suppression) do not commit on their own: their
 * cursor waits for the next commit, or for `saveCursor` (the daemon calls it a moment after such rows).
 * A crash before then evaluates them again at the restart, as it does every row committed but not yet
 * evaluated, and they again change nothing. Saving a commit per quiet row keeps an fsync off the event
 * loop for every hook call that fires nothing: an agent waits on its hook's answer.
 */
import { evaluate } from "../../core/evaluate.js";
import { clearHolds, releaseOnReload } from "../../core/holds.js";
import type { JournalRow } from "../../core/journal.js";
import type { Fire, Release, RowOutcome } from "../../core/outcome.js";
import type { RuleSet } from "../../core/rule-set.js";
import { type CoreState, StateAccumulator, type StateOp } from "../../core/state.js";
import { MAX_WINDOW_MS } from "../../core/window.js";
import { type SelectorShape, sameShapes, selectorShapes, WindowFeed } from "../../core/window-index.js";
import type { Decisions } from "../store/decision-store.js";
import type { EvaluatorLog } from "../store/write-ports.js";
import { failpoint } from "../support/failpoints.js";
import type { DaemonMetrics } from "../support/metrics.js";
import { fillFeed, type WarmFeed } from "./follower-view.js";

/** What one commit made durable, for the actions that follow it. */
export interface Committed {
  /** Each with the actions the core planned for it. */
  readonly fires: readonly Fire[];
  readonly releases: readonly Release[];
  readonly evaluations: readonly RowOutcome["evaluations"][number][];
}

export interface EvaluatorOptions {
  /** The journal and the decisions, through the store's asynchronous door (decision 0020). */
  readonly log: EvaluatorLog;
  readonly metrics: DaemonMetrics;
  readonly clock: () => number;
  /** Called after every commit that made fires, holds or releases durable. */
  readonly dispatch: (committed: Committed) => void;
  /** Each eval_error, store_error and cost_exceeded result, with its row's seq, for the log. */
  readonly onFailure?: (failure: RowOutcome["evaluations"][number], seq: number) => void;
  /** Rows evaluated per commit when none of them fires. */
  readonly quietBatch?: number;
  /**
   * A follower's window index, kept warm up to the stored cursor or before it (issue 35): the opening
   * adds the rows after it instead of rebuilding a week of them. Taken only when its shapes are the
   * rule set's.
   */
  readonly warm?: WarmFeed | undefined;
}

/** The outcomes of the rows evaluated since the last commit, gathered for the next one. */
class UncommittedRows {
  readonly ops: { at: number; op: StateOp }[] = [];
  readonly fires: Fire[] = [];
  readonly suppressed = new Map<string, { hash: string; rule: string; n: number }>();
  readonly releases: Release[] = [];
  readonly evaluations: Committed["evaluations"][number][] = [];

  /** Whether nothing waits to commit but the cursor. */
  get empty(): boolean {
    return this.ops.length === 0 && this.fires.length === 0 && this.suppressed.size === 0;
  }

  /** Adds a row's outcome; true when the row fired or released, and so commits before the next row. */
  add(row: JournalRow, outcome: RowOutcome): boolean {
    for (const op of outcome.delta) this.ops.push({ at: row.at, op });
    this.fires.push(...outcome.fires);
    this.releases.push(...outcome.releases);
    for (const e of outcome.evaluations) {
      this.evaluations.push(e);
      if (e.result !== "suppressed") continue;
      const key = `${e.hash}\u0000${e.rule}`;
      const s = this.suppressed.get(key);
      if (s === undefined) this.suppressed.set(key, { hash: e.hash, rule: e.rule, n: 1 });
      else s.n++;
    }
    return outcome.fires.length > 0 || outcome.releases.length > 0;
  }
}

/**
 * The store is asynchronous, so others may read the evaluator while a commit is under way: what they
 * read (`EvaluatorView`) is the state as committed and the last row whose decisions are committed,
 * kept apart from the state the next row is evaluated against. Steps, clears and reloads run one at a
 * time, in the order they were asked for.
 */
export class Evaluator {
  private ruleSet: RuleSet;
  private shapes: readonly SelectorShape[];
  private feed!: WindowFeed;
  /** The state the next row is evaluated against: the committed state and the rows not yet committed. */
  private acc!: StateAccumulator;
  /** The state as committed: what others read. */
  private committedState!: StateAccumulator;
  /** The cursor in the store. */
  private savedSeq = 0;
  /** The last row evaluated: past `savedSeq` by the rows whose decisions or cursor wait (see above). */
  private evaluatedSeq = 0;
  private lastAt = 0;
  /** The last row whose decisions are committed (a row that decided nothing has none to wait for). */
  private settledSeq = 0;
  private settledAt = 0;
  /** Before any row was evaluated: the `at` of the first row read and not yet evaluated. */
  private firstPendingAt: number | undefined;
  private readonly quietBatch: number;
  private turns: Promise<unknown> = Promise.resolve();
  /** Commits that stored decisions since the open (a follower rereads the state when it moved). */
  private decisionCommits = 0;
  /** The warm index, until the first rebuild takes it. */
  private warm: WarmFeed | undefined;
  /**
   * A commit failed and the state could not be read back yet (the store is away): the working state
   * holds decisions never committed, so nothing is evaluated, cleared or reloaded until it is.
   */
  private stale = false;

  private constructor(
    ruleSet: RuleSet,
    private readonly options: EvaluatorOptions,
  ) {
    this.ruleSet = ruleSet;
    this.shapes = selectorShapes(ruleSet.rules.map((r) => r.rule));
    this.quietBatch = options.quietBatch ?? 1_000;
    this.warm = options.warm;
  }

  /** An evaluator resuming after the stored cursor, its state read back and its windows rebuilt. */
  static async open(ruleSet: RuleSet, options: EvaluatorOptions): Promise<Evaluator> {
    const evaluator = new Evaluator(ruleSet, options);
    await evaluator.resync({ clearCostExceeded: true });
    return evaluator;
  }

  /** Runs `turn` after the turns asked for before it, whatever became of them. */
  private inTurn<T>(turn: () => Promise<T>): Promise<T> {
    const next = this.turns.then(turn);
    this.turns = next.catch(() => undefined);
    return next;
  }

  /** Re-reads state and cursor from the store and rebuilds the windows: at start, and after a failed commit. */
  private async resync(options: { readonly clearCostExceeded: boolean }): Promise<void> {
    const { log } = this.options;
    const state = await log.loadState(options);
    this.acc = new StateAccumulator(state);
    this.committedState = new StateAccumulator(state);
    this.savedSeq = await log.cursor();
    this.evaluatedSeq = this.savedSeq;
    this.lastAt = (await log.atOf(this.savedSeq)) ?? 0;
    this.settledSeq = this.evaluatedSeq;
    this.settledAt = this.lastAt;
    if (this.lastAt === 0) this.firstPendingAt = (await log.rowsAfter(this.savedSeq, 1))[0]?.at;
    await this.rebuildFeed();
    this.stale = false;
  }

  /** Reads the state back first if a failed commit left it stale; rejects while the store is away. */
  private async fresh(): Promise<void> {
    if (this.stale) await this.resync({ clearCostExceeded: false });
  }

  /**
   * Windows look back up to 7 days from the cursor; the feed replays those rows from the journal, or
   * only those after a warm index's last.
   */
  private async rebuildFeed(): Promise<void> {
    const warm = this.warm;
    this.warm = undefined;
    const usable =
      warm !== undefined && sameShapes(warm.shapes, this.shapes) && warm.feed.seq <= this.evaluatedSeq;
    this.feed = await fillFeed(
      usable ? warm.feed : new WindowFeed(this.shapes),
      this.options.log,
      this.lastAt - MAX_WINDOW_MS,
      this.evaluatedSeq,
    );
  }

  /** The last row whose decisions are committed (its cursor may not be stored yet). */
  get cursor(): number {
    return this.settledSeq;
  }
  /** The cursor in the store. */
  get storedCursor(): number {
    return this.savedSeq;
  }
  /** Commits that stored decisions (fires, state, suppressions) since the open. */
  get commits(): number {
    return this.decisionCommits;
  }
  /** Whether quiet rows were evaluated whose cursor is not yet stored. */
  get cursorUnsaved(): boolean {
    return this.evaluatedSeq > this.savedSeq;
  }
  /** The state as committed. */
  get state(): CoreState {
    return this.committedState.current;
  }
  get rules(): RuleSet {
    return this.ruleSet;
  }
  /** The at of the last row whose decisions are committed; 0 before any. */
  get lastEvaluatedAt(): number {
    return this.settledAt;
  }

  /**
   * REQ-20's lag, in seconds: `now` minus the at of the last evaluated row. Before any row was ever
   * evaluated it is the wait of the oldest row not yet evaluated (0 with none), so an evaluator that
   * never started shows as behind, not as idle.
   */
  lagSeconds(now: number): number {
    const at = this.settledAt > 0 ? this.settledAt : this.firstPendingAt;
    return at === undefined ? 0 : Math.max(0, (now - at) / 1000);
  }

  /**
   * Swaps in a new rule set between two rows: holds it no longer backs are released (REQ-11 (c)) and
   * committed first; windows are rebuilt when the selectors' key sets changed.
   */
  swapRuleSet(ruleSet: RuleSet, by?: string): Promise<readonly Release[]> {
    return this.inTurn(async () => {
      await this.fresh();
      const { delta, releases } = releaseOnReload(this.acc.current, ruleSet, by);
      await this.commitBetweenRows(delta, releases);
      this.ruleSet = ruleSet;
      const shapes = selectorShapes(ruleSet.rules.map((r) => r.rule));
      if (!sameShapes(shapes, this.shapes)) {
        this.shapes = shapes;
        await this.rebuildFeed();
      }
      return releases;
    });
  }

  /** `harness rules clear` (REQ-11 (b)): the releases, committed; none means "hold not found". */
  clear(harness: string, rule?: string, by?: string): Promise<readonly Release[]> {
    return this.inTurn(async () => {
      await this.fresh();
      const { delta, releases } = clearHolds(this.acc.current, harness, rule, by);
      await this.commitBetweenRows(delta, releases);
      return releases;
    });
  }

  /**
   * Commits a change of state that no row made (a clear, a reload), between two rows, and acts on it.
   * Between two turns nothing waits to commit but quiet rows' cursor.
   */
  private async commitBetweenRows(delta: readonly StateOp[], releases: readonly Release[]): Promise<void> {
    if (delta.length === 0) return;
    const at = Math.max(this.lastAt, this.options.clock());
    const cursor = this.evaluatedSeq;
    // Quiet rows evaluated before it commit their cursor with it: they changed nothing to keep.
    await this.options.log.commit({
      cursor,
      ops: delta.map((op) => ({ at, op })),
      fires: [],
      suppressed: new Map(),
    });
    this.savedSeq = cursor;
    this.decisionCommits++;
    this.acc.apply(delta);
    this.committedState.apply(delta);
    this.options.dispatch({ fires: [], releases, evaluations: [] });
  }

  /**
   * Stores the cursor of the quiet rows evaluated since the last commit, without waiting for the disk;
   * rejects when the commit fails (the rows are then evaluated again at the next start, which changes
   * nothing).
   */
  saveCursor(): Promise<void> {
    return this.inTurn(async () => {
      await this.fresh();
      if (!this.cursorUnsaved) return;
      const cursor = this.evaluatedSeq;
      await this.options.log.commit(
        { cursor, ops: [], fires: [], suppressed: new Map() },
        { unsynced: true },
      );
      this.savedSeq = cursor;
    });
  }

  /**
   * Evaluates committed rows after the cursor for about `budgetMs`, then returns the number evaluated,
   * so the caller can yield to producers between slices. Rejects only when a commit fails, after
   * re-reading the committed state (nothing uncommitted is acted on).
   */
  step(budgetMs: number): Promise<number> {
    return this.inTurn(() => this.evaluateSlice(budgetMs));
  }

  private async evaluateSlice(budgetMs: number): Promise<number> {
    await this.fresh();
    const started = performance.now();
    let evaluated = 0;
    let pending = new UncommittedRows();
    const flush = async () => {
      const committed = pending;
      pending = new UncommittedRows();
      const cursor = this.evaluatedSeq;
      const at = this.lastAt;
      const decisions: Decisions = {
        cursor,
        ops: committed.ops,
        fires: committed.fires,
        suppressed: committed.suppressed,
      };
      failpoint("eval.beforeCommit");
      try {
        await this.options.log.commit(decisions);
      } catch (e) {
        // Read back now if the store answers; if not, the next turn does before anything else.
        this.stale = true;
        await this.resync({ clearCostExceeded: false }).catch(() => {});
        throw new Error(`evaluator: committing rows up to seq ${cursor} failed: ${(e as Error).message}`, {
          cause: e,
        });
      }
      failpoint("eval.afterCommit");
      this.savedSeq = cursor;
      if (!committed.empty) this.decisionCommits++;
      this.committedState.apply(committed.ops.map((o) => o.op));
      this.settle(cursor, at);
      // A hold is placed only by a fire, so a commit with no fire and no release has nothing to act on.
      if (committed.fires.length > 0 || committed.releases.length > 0) this.options.dispatch(committed);
    };
    const { metrics, log } = this.options;
    // Evaluation counts reach their counter at the end of the slice, however the slice ends.
    try {
      outer: while (performance.now() - started < budgetMs) {
        const rows = await log.rowsAfter(this.evaluatedSeq, 256);
        if (rows.length === 0) break;
        if (this.settledAt === 0) this.firstPendingAt ??= (rows[0] as JournalRow).at;
        for (const row of rows) {
          this.feed.add(row);
          const t0 = performance.now();
          const outcome = evaluate(this.ruleSet, row, this.acc.current, this.feed.readerAt(row.at));
          metrics.evalDuration.observe((performance.now() - t0) / 1000);
          const acts = pending.add(row, outcome);
          this.acc.apply(outcome.delta);
          this.evaluatedSeq = row.seq;
          this.lastAt = row.at;
          evaluated++;
          for (const e of outcome.evaluations) metrics.countEvaluation(e.rule, e.result);
          for (const f of outcome.fires)
            metrics.fires.inc({ rule: metrics.rule(f.rule), mode: f.mode, level: f.effectiveLevel });
          // Every row is evaluated in seq order, so the seqs past the stored cursor count the rows.
          if (acts || this.evaluatedSeq - this.savedSeq >= this.quietBatch) await flush();
          else if (pending.empty) this.settle(row.seq, row.at);
          if (performance.now() - started >= budgetMs) break outer;
        }
      }
      // Quiet rows keep nothing but their cursor, which waits (see the module's comment).
      if (!pending.empty) await flush();
      return evaluated;
    } finally {
      metrics.flushEvaluations();
    }
  }

  /** The rows up to `seq` have their decisions committed. */
  private settle(seq: number, at: number): void {
    this.settledSeq = seq;
    this.settledAt = at;
  }
}
