/**
 * What a follower knows of the evaluation (issue 35, decision 0022): the leader evaluates; a follower
 * reads the state as the leader committed it and how far it has evaluated, from the leader's progress
 * (`../store/leadership.ts`), so its reads, a hook's verdict among them, answer as the leader's would.
 * It also keeps the windows' index warm, tailing the rows up to the leader's stored cursor, so that
 * taking over does not rebuild a week of rows: the evaluator that takes over adds only the rows after.
 */
import type { RuleSet } from "../../core/rule-set.js";
import type { CoreState } from "../../core/state.js";
import { MAX_WINDOW_MS } from "../../core/window.js";
import { type SelectorShape, sameShapes, selectorShapes, WindowFeed } from "../../core/window-index.js";
import type { Progress } from "../store/leadership.js";
import type { EvaluatorLog } from "../store/write-ports.js";
import type { EvaluatorView } from "./evaluator-view.js";

/**
 * Adds to `feed` the journal's rows after its last, up to `toSeq`, admitted after `afterAt` (a window
 * looks back at most 7 days), a page at a time: the evaluator's rebuild and a follower's tailing alike.
 */
export async function fillFeed(
  feed: WindowFeed,
  log: Pick<EvaluatorLog, "pagesBetween">,
  afterAt: number,
  toSeq: number,
): Promise<WindowFeed> {
  for await (const page of log.pagesBetween(afterAt, feed.seq, toSeq)) for (const row of page) feed.add(row);
  return feed;
}

/** A window feed and the selector shapes it indexes, handed to the evaluator that takes over. */
export interface WarmFeed {
  readonly feed: WindowFeed;
  readonly shapes: readonly SelectorShape[];
}

export class FollowerView implements EvaluatorView {
  private ruleSet: RuleSet;
  private shapes: readonly SelectorShape[];
  private feed: WindowFeed;
  private committed: CoreState;
  private settled: number;
  private settledAt: number;
  private leaderFireCommits = 0;
  /** The refreshes, one at a time; a progress heard meanwhile waits for the one under way. */
  private turns: Promise<unknown> = Promise.resolve();
  /** The newest progress heard, not yet applied. */
  private wanted: Progress | undefined;

  private constructor(ruleSet: RuleSet, state: CoreState, cursor: number, at: number, feed: WindowFeed) {
    this.ruleSet = ruleSet;
    this.shapes = selectorShapes(ruleSet.rules.map((r) => r.rule));
    this.committed = state;
    this.settled = cursor;
    this.settledAt = at;
    this.feed = feed;
  }

  /** The state and stored cursor as committed, the windows' index built up to that cursor. */
  static async open(ruleSet: RuleSet, log: EvaluatorLog): Promise<FollowerView> {
    const state = await log.loadState({ clearCostExceeded: false });
    const cursor = await log.cursor();
    const at = (await log.atOf(cursor)) ?? 0;
    const feed = new WindowFeed(selectorShapes(ruleSet.rules.map((r) => r.rule)));
    return new FollowerView(
      ruleSet,
      state,
      cursor,
      at,
      await fillFeed(feed, log, at - MAX_WINDOW_MS, cursor),
    );
  }

  get rules(): RuleSet {
    return this.ruleSet;
  }
  get state(): CoreState {
    return this.committed;
  }
  get cursor(): number {
    return this.settled;
  }
  get lastEvaluatedAt(): number {
    return this.settledAt;
  }
  /** The leader's commits that stored fires, as its last progress said. */
  get fireCommits(): number {
    return this.leaderFireCommits;
  }

  lagSeconds(now: number): number {
    return this.settledAt === 0 ? 0 : Math.max(0, (now - this.settledAt) / 1000);
  }

  /**
   * Applies the leader's progress: the rows up to its stored cursor into the windows' index, the state
   * reread if it committed decisions since; resolves once this view answers as of `progress.cursor`.
   * Rejects when the store does not answer (the next progress tries again).
   */
  heard(progress: Progress, log: EvaluatorLog): Promise<void> {
    if (this.wanted === undefined || progress.cursor >= this.wanted.cursor)
      this.wanted = { ...progress, changed: progress.changed || this.wanted?.changed === true };
    const next = this.turns.then(async () => {
      const p = this.wanted;
      if (p === undefined) return;
      this.wanted = undefined;
      try {
        await fillFeed(this.feed, log, 0, p.stored);
        if (p.changed) this.committed = await log.loadState({ clearCostExceeded: false });
      } catch (e) {
        // Not applied: the state may be stale, so the next progress rereads it.
        const newer = this.wanted as Progress | undefined;
        this.wanted = { ...(newer ?? p), changed: true };
        throw e;
      }
      if (p.cursor > this.settled) {
        this.settled = p.cursor;
        this.settledAt = p.at;
      }
      this.leaderFireCommits = Math.max(this.leaderFireCommits, p.fireCommits);
    });
    this.turns = next.catch(() => undefined);
    return next;
  }

  /** A reload's rule set; the windows' index is rebuilt when the selectors changed. */
  async swapRuleSet(ruleSet: RuleSet, log: EvaluatorLog): Promise<void> {
    this.ruleSet = ruleSet;
    const shapes = selectorShapes(ruleSet.rules.map((r) => r.rule));
    if (sameShapes(shapes, this.shapes)) return;
    const next = this.turns.then(async () => {
      this.feed = await fillFeed(new WindowFeed(shapes), log, this.settledAt - MAX_WINDOW_MS, this.feed.seq);
      this.shapes = shapes;
    });
    this.turns = next.catch(() => undefined);
    await next;
  }

  /** The warm index, for the evaluator taking over (this view is not used after). */
  async handOver(): Promise<WarmFeed> {
    await this.turns;
    return { feed: this.feed, shapes: this.shapes };
  }
}
