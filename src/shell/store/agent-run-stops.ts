/**
 * Stops of hook-fed runs (issue 17): no supervisor can stop an agent whose only link to the daemon is
 * its hooks, so a stop waits here until the run's next hook call answers it (`agents/run-verdict.ts`).
 * A rule's stop is recorded when its fire's actions start (`daemon/actions.ts`), and its `rule_actions`
 * row stays `started` until delivery makes it `ok`; the loop guard's with its `loop_stopped` row. A run
 * once stopped stays stopped: every later call of it is answered stopped.
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
}

interface StopRow {
  run: string;
  harness: string;
  rule: string;
  fire_id: string;
  by: "rule" | "loop_guard";
  delivered_at: number | null;
}

export const LOOP_GUARD_RULE = "loop-guard";

export class AgentRunStops {
  private readonly insert;
  private readonly select;
  private readonly deliver;
  private readonly actionState;
  private readonly closedRow;

  constructor(private readonly db: Db) {
    this.insert = db.prepare(
      "INSERT INTO agent_run_stops (run, harness, rule, fire_id, by, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run) DO NOTHING",
    );
    this.select = db.prepare(
      "SELECT run, harness, rule, fire_id, by, delivered_at FROM agent_run_stops WHERE run = ?",
    );
    this.deliver = db.prepare(
      "UPDATE agent_run_stops SET delivered_at = ? WHERE run = ? AND delivered_at IS NULL",
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
        this.actionState.run("started", `waiting for the next hook call of ${runs.join(", ")}`, at, fire.id);
        // A run whose closed row was admitted after the fire's row, before this stop was recorded: no
        // call will come, and the stop settler has passed that row already.
        for (const run of runs) if (this.closedRow.get(run) !== undefined) this.closedFirst(run, at);
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
    if (r === undefined) return undefined;
    return {
      run: r.run,
      harness: r.harness,
      rule: r.rule,
      fireId: r.fire_id,
      by: r.by,
      deliveredAt: r.delivered_at ?? undefined,
    };
  }

  /**
   * Inside the caller's transaction: the run closed on its own (its agent ended the session, or it went
   * stale) before a hook call took its stop, so nothing waits any more. A rule's stop action is
   * `undelivered`: the run ended without being told. The run stays stopped, should a late call of it come.
   */
  closedFirst(run: string, at: number): void {
    const stop = this.get(run);
    if (stop === undefined || stop.deliveredAt !== undefined) return;
    this.deliver.run(at, run);
    if (stop.by === "rule")
      this.actionState.run("undelivered", `${run} closed before its next hook call`, at, stop.fireId);
  }

  /**
   * Inside the caller's transaction (with the run's `closed` row): the stop delivered, and a rule's stop
   * action `ok`. False when it was delivered already.
   */
  delivered(stop: AgentRunStop, at: number): boolean {
    if (this.deliver.run(at, stop.run).changes === 0) return false;
    if (stop.by === "rule")
      this.actionState.run("ok", `delivered to ${stop.run} at its next hook call`, at, stop.fireId);
    return true;
  }
}
