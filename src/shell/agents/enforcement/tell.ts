/**
 * The agent hears the rules: a fire about a hook-fed run (its target the run, or the run's harness while
 * the run was there) is told once to that run, in the next answer to one of its hook calls that can carry
 * text for the model (which events can, per agent, is its adapter's record). Only active fires at the
 * levels `[agents] tell` names (default annotate and notify) are told: a shadow fire never acts (REQ-9).
 *
 * The fires are chosen, rendered and recorded told in one transaction (`store/agent-told.ts`), the one
 * that produces the text of the answer, so a fire is told at most once: a restart, a retry or a second
 * call never repeats it. An answer that then never reaches the agent (a hook that gave up waiting) has
 * lost it; telling twice would be worse, since the agent would act on it twice.
 */
import type { StoreDoor } from "../../store/store-door.js";
import { failpoint } from "../../support/failpoints.js";
import { toldFire, toldText } from "./told-text.js";

/** The most fires one answer tells; the rest wait, oldest first, for the next. */
export const MAX_TOLD_PER_ANSWER = 8;

export interface RunTelling {
  /**
   * The text telling the run of the fires about it not yet told, at most `maxChars` long, recorded told
   * as it is returned; undefined when there is nothing to tell.
   */
  tell(harness: string, run: string, maxChars: number): Promise<string | undefined>;
}

export interface RunTellingDeps {
  readonly told: StoreDoor["agentTold"];
  readonly reads: StoreDoor["agentRuns"];
  /** `[agents] tell`, read on every call so a reload applies. */
  readonly levels: () => readonly string[];
  readonly clock: () => number;
  /** Changes whenever fires are committed: while it has not, a run found with nothing to tell still has none. */
  readonly firesCommitted: () => number;
}

/** Runs remembered with nothing to tell; the oldest is forgotten past this (and then asked again). */
const MAX_QUIET_RUNS = 10_000;

export class StoreRunTelling implements RunTelling {
  /** Per run, the fire generation and levels at which the store had nothing to tell it. */
  private readonly quiet = new Map<string, string>();

  constructor(private readonly deps: RunTellingDeps) {}

  async tell(harness: string, run: string, maxChars: number): Promise<string | undefined> {
    const levels = this.deps.levels();
    if (levels.length === 0) return undefined;
    // Every call of every run asks: skipping the store's transaction while no fire was committed since
    // it last had nothing keeps it off the hook's critical path.
    const mark = `${this.deps.firesCommitted()}\u0000${levels.join(",")}`;
    const key = `${harness}\u0000${run}`;
    if (this.quiet.get(key) === mark) return undefined;
    const query = {
      run,
      harness,
      firstSeq: await this.deps.reads.firstSeq(run),
      levels,
      limit: MAX_TOLD_PER_ANSWER,
    };
    // The mark was taken before the reads: a fire committed while they wait moves the generation past
    // it, so a run remembered quiet at the mark is asked again.
    // `AsyncPort` keeps no method's type parameter: the result is what `choose` returns, text or none.
    const text = (await this.deps.told.tell(query, this.deps.clock(), (fires) => {
      const chosen = toldText(
        run,
        fires.map((f) => toldFire(run, f)),
        maxChars,
      );
      if (fires.length === 0) this.remember(key, mark);
      if (chosen === undefined) return { told: [], result: undefined };
      // Inside the transaction: a crash here tells nothing and records nothing.
      failpoint("tell.beforeCommit");
      return { told: fires.slice(0, chosen.count).map((f) => f.fireId), result: chosen.text };
    })) as string | undefined;
    // Recorded told, the answer not yet sent: a crash here has lost it, never repeats it.
    if (text !== undefined) failpoint("tell.afterCommit");
    return text;
  }

  private remember(key: string, mark: string): void {
    this.quiet.delete(key);
    this.quiet.set(key, mark);
    if (this.quiet.size > MAX_QUIET_RUNS) this.quiet.delete(this.quiet.keys().next().value as string);
  }
}
