/**
 * Stops of hook-fed runs: no supervisor can stop an agent whose only link to the daemon is
 * its hooks, so a stop waits here until the run's next hook call answers it (`agents/enforcement/run-verdict.ts`).
 * A rule's stop is recorded when its fire's actions start (`daemon/actions.ts`); the loop guard's with
 * its `loop_stopped` row. A run once stopped stays stopped: every later call of it is answered stopped.
 * The operator may release the stop (`released`): the run stays stopped, and its agent's next
 * SessionStart opens a new run of the same session (`agents/enforcement/run-life.ts`).
 *
 * Each run's stop settles on its own: told at its next hook call (`delivered`), or closed before one came
 * (`closed_first`). A rule's stop of several runs (a harness target, two sessions in flight) has one
 * `rule_actions` stop row, which sums its runs up: `started` while any waits, then `ok` when at least one
 * run was told and `undelivered` when every one closed first; its detail names each run's outcome.
 */
import type { Db } from "./open-store.js";

export interface AgentRunStop {
  readonly run: string;
  readonly harness: string;
  /** The rule that stopped it, or `loop-guard`. */
  readonly rule: string;
  /** The fire's id; for the loop guard, `journal:<seq>` of its `loop_stopped` row. */
  readonly fireId: string;
  readonly by: "rule" | "loop_guard";
  readonly deliveredAt: number | undefined;
  /** When the operator released it (`harness rules resume`): the session may start again as a new run. */
  readonly releasedAt: number | undefined;
}

/** A row of `agent_run_stops` as `get` reads it. */
export interface StopRow {
  run: string;
  harness: string;
  rule: string;
  fire_id: string;
  by: "rule" | "loop_guard";
  delivered_at: number | null;
  released_at: number | null;
}

export const LOOP_GUARD_RULE = "loop-guard";

/** One run of a rule's stop, as its fire's `rule_actions` row sums it up. */
export interface RunOutcomeRow {
  run: string;
  delivered_at: number | null;
  outcome: "delivered" | "closed_first" | null;
}

export class AgentRunStops {
  private readonly insert;
  private readonly select;
  private readonly settle;
  private readonly ofFire;
  private readonly actionState;
  private readonly closedRow;
  private readonly release;
  private readonly releaseOfRule;

  constructor(private readonly db: Db) {
    this.insert = db.prepare(
      "INSERT INTO agent_run_stops (run, harness, rule, fire_id, by, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run) DO NOTHING",
    );
    this.select = db.prepare(
      "SELECT run, harness, rule, fire_id, by, delivered_at, released_at FROM agent_run_stops WHERE run = ?",
    );
    this.release = db.prepare(
      "UPDATE agent_run_stops SET released_at = ?, released_by = ? WHERE run = ? AND released_at IS NULL",
    );
    this.releaseOfRule = db.prepare(
      "UPDATE agent_run_stops SET released_at = ?, released_by = ? WHERE harness = ? AND rule = ? AND by = 'rule' AND released_at IS NULL",
    );
    this.settle = db.prepare(
      "UPDATE agent_run_stops SET delivered_at = ?, outcome = ? WHERE run = ? AND delivered_at IS NULL",
    );
    this.ofFire = db.prepare(
      "SELECT run, delivered_at, outcome FROM agent_run_stops WHERE fire_id = ? AND by = 'rule' ORDER BY run",
    );
    this.closedRow = db.prepare(
      "SELECT 1 FROM rule_journal WHERE run = ? AND kind = 'run_event' AND type = 'closed' LIMIT 1",
    );
    this.actionState = db.prepare(
      "UPDATE rule_actions SET state = ?, detail = ?, updated_at = ? WHERE fire_id = ? AND action = 'stop'",
    );
  }

  /**
   * A rule's stop of hook-fed runs, once its fire is committed: each run stopped (a run already stopped
   * keeps its first stop), and the fire's stop action `started`, waiting for the runs' next hook calls.
   */
  ruleStop(
    fire: { readonly id: string; readonly rule: string },
    harness: string,
    runs: readonly string[],
    at: number,
  ): void {
    this.db
      .transaction(() => {
        for (const run of runs) this.insert.run(run, harness, fire.rule, fire.id, "rule", at);
        // A run whose closed row was admitted after the fire's row, before this stop was recorded: no
        // call will come, and the stop settler has passed that row already.
        for (const run of runs) if (this.closedRow.get(run) !== undefined) this.closedFirst(run, at);
        this.sumUp(fire.id, at);
      })
      .immediate();
  }

  /** The loop guard's stop, inside the transaction that commits its `loop_stopped` row (`loopSeq`). */
  loopGuardStop(s: {
    readonly run: string;
    readonly harness: string;
    readonly loopSeq: number;
    readonly at: number;
  }): void {
    this.insert.run(s.run, s.harness, LOOP_GUARD_RULE, `journal:${s.loopSeq}`, "loop_guard", s.at);
  }

  get(run: string): AgentRunStop | undefined {
    const r = this.select.get(run) as StopRow | undefined;
    return r === undefined ? undefined : toAgentRunStop(r);
  }

  /**
   * The operator's release of the run's stop: the run stays stopped and closed, and its session's next
   * SessionStart opens a new run. False when the run has no stop, or its stop was released already.
   */
  released(run: string, at: number, by?: string): boolean {
    return this.release.run(at, by ?? null, run).changes > 0;
  }

  /**
   * The release of every run of `harness` that `rule` stopped: `harness rules clear` releasing the rule's
   * hold on the harness (a stop's level holds the harness too) releases the rule's stops there with it,
   * whichever of its fires placed the hold. The number released.
   */
  releasedWithHold(harness: string, rule: string, at: number, by?: string): number {
    return this.releaseOfRule.run(at, by ?? null, harness, rule).changes;
  }

  /**
   * Inside the caller's transaction: the run closed on its own (its agent ended the session, or it went
   * stale) before a hook call took its stop, so nothing waits for it any more. The run stays stopped,
   * should a late call of it come.
   */
  closedFirst(run: string, at: number): void {
    const stop = this.get(run);
    if (stop === undefined || stop.deliveredAt !== undefined) return;
    this.settle.run(at, "closed_first", run);
    if (stop.by === "rule") this.sumUp(stop.fireId, at);
  }

  /**
   * Inside the caller's transaction (with the run's `closed` row): the stop delivered, and a rule's stop
   * action summed up again. False when it was delivered already.
   */
  delivered(stop: AgentRunStop, at: number): boolean {
    if (this.settle.run(at, "delivered", stop.run).changes === 0) return false;
    if (stop.by === "rule") this.sumUp(stop.fireId, at);
    return true;
  }

  /** The fire's `rule_actions` stop row, from its runs' outcomes (see the module's comment). */
  private sumUp(fireId: string, at: number): void {
    const { state, detail } = stopActionSummary(this.ofFire.all(fireId) as RunOutcomeRow[]);
    this.actionState.run(state, detail, at, fireId);
  }
}

export const toAgentRunStop = (r: StopRow): AgentRunStop => ({
  run: r.run,
  harness: r.harness,
  rule: r.rule,
  fireId: r.fire_id,
  by: r.by,
  deliveredAt: r.delivered_at ?? undefined,
  releasedAt: r.released_at ?? undefined,
});

/**
 * A rule's stop action as its runs' outcomes sum it up (see the module's comment), whichever store
 * holds them.
 */
export function stopActionSummary(runs: readonly RunOutcomeRow[]): {
  readonly state: "started" | "ok" | "undelivered";
  readonly detail: string;
} {
  // Every run was stopped by an earlier stop already: that one is delivering it.
  if (runs.length === 0) return { state: "ok", detail: "every run was already stopped by an earlier stop" };
  const waiting = runs.some((r) => r.delivered_at === null);
  const told = runs.some((r) => r.delivered_at !== null && r.outcome !== "closed_first");
  return {
    state: waiting ? "started" : told ? "ok" : "undelivered",
    detail: runs.map(runOutcome).join("; "),
  };
}

const runOutcome = (r: RunOutcomeRow): string =>
  r.delivered_at === null
    ? `waiting for the next hook call of ${r.run}`
    : r.outcome === "closed_first"
      ? `${r.run} closed before its next hook call`
      : `delivered to ${r.run} at its next hook call`;
