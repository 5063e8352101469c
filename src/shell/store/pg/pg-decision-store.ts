/**
 * DecisionStore's methods outside the evaluator's commit path on PostgreSQL (`../decision-store.ts`):
 * the holds in force, an action's progress, and settling at start the actions a previous daemon left
 * unfinished. The cursor, the state load and the decisions' commit are `PgEvaluatorLog`'s
 * (`pg-write-ports.ts`), so this class is the rest of DecisionStore, not all of it.
 */
import type pg from "pg";
import type { CoreState, Hold } from "../../../core/state.js";
import type { AsyncPort } from "../async-port.js";
import {
  type ActionState,
  type DecisionStore,
  type HoldRow,
  type PlannedAction,
  toHold,
} from "../decision-store.js";
import { inTransaction, type PgQueryable } from "./pg-client.js";

/** Every hash's shadow record as committed (`readShadows`), through a pool or one client's transaction. */
export async function pgReadShadows(db: pg.Pool | pg.PoolClient): Promise<CoreState["shadows"]> {
  const shadows: Record<string, CoreState["shadows"][string]> = {};
  for (const r of (
    await db.query<{ hash: string; since: number; completed: boolean }>(
      "SELECT hash, since, completed FROM rule_shadows",
    )
  ).rows)
    shadows[r.hash] = { since: r.since, completed: r.completed };
  return shadows;
}

/** Inside a transaction, before its writes: refuses it unless this daemon leads (`pg-lease.ts`). */
export type PgFence = (client: PgQueryable) => Promise<void>;

export class PgDecisionStore
  implements
    AsyncPort<Pick<DecisionStore, "activeHolds" | "setActionState" | "startAction" | "settleInterrupted">>
{
  constructor(
    private readonly pool: pg.Pool,
    /** The leader's fence: an action starts, and a start settles, only under the lease. */
    private readonly fence: PgFence = async () => {},
  ) {}

  async activeHolds(): Promise<Hold[]> {
    const r = await this.pool.query<HoldRow>(
      "SELECT harness, rule, hash, fire_id, since, cooldown, event, false_since FROM rule_holds WHERE released_at IS NULL ORDER BY id",
    );
    return r.rows.map(toHold);
  }

  async setActionState(
    fireId: string,
    action: PlannedAction,
    state: ActionState,
    detail: string | undefined,
    at: number,
  ): Promise<void> {
    await this.pool.query(
      "UPDATE rule_actions SET state = $1, detail = $2, updated_at = $3 WHERE fire_id = $4 AND action = $5",
      [state, detail ?? null, at, fireId, action],
    );
  }

  /** Recorded started if still pending, under the lease: false when not, and the action must not start. */
  startAction(fireId: string, action: PlannedAction, at: number): Promise<boolean> {
    return inTransaction(this.pool, "BEGIN", async (client) => {
      await this.fence(client);
      const r = await client.query({
        name: "action-start",
        text: "UPDATE rule_actions SET state = 'started', detail = NULL, updated_at = $1 WHERE fire_id = $2 AND action = $3 AND state = 'pending'",
        values: [at, fireId, action],
      });
      return r.rowCount === 1;
    });
  }

  /** Both settlements in one transaction, as SQLite's, under the lease. */
  settleInterrupted(at: number): Promise<{ readonly undelivered: number; readonly unknown: number }> {
    return inTransaction(this.pool, "BEGIN", async (client) => {
      await this.fence(client);
      const undelivered = await client.query(
        "UPDATE rule_actions SET state = 'undelivered', detail = 'the daemon stopped before the action started', updated_at = $1 WHERE state = 'pending'",
        [at],
      );
      const unknown = await client.query(
        // A stop waiting for a hook-fed run's next hook call is still on its way: it survives the restart.
        "UPDATE rule_actions SET state = 'unknown', detail = 'the daemon stopped after the action started: it may have run', updated_at = $1 WHERE state = 'started' AND NOT EXISTS (SELECT 1 FROM agent_run_stops s WHERE s.fire_id = rule_actions.fire_id AND s.delivered_at IS NULL)",
        [at],
      );
      return { undelivered: undelivered.rowCount ?? 0, unknown: unknown.rowCount ?? 0 };
    });
  }
}
