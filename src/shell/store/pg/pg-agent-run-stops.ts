/**
 * SQLite's `AgentRunStops` on PostgreSQL (issue 34): stops of hook-fed runs, each settled on its own,
 * and a rule's stop action summed up from its runs (`../agent-run-stops.ts` says how). `loopGuardStop`,
 * `delivered` and `closedFirst` run inside the caller's transaction when it passes its client, in one
 * of their own otherwise. test/shell/store/pg/agent-run-stops-contract.test.ts holds the answers and
 * the rows to SQLite's.
 *
 * Locks, where SQLite has one writer: rule stops take one advisory lock between them (SQLite's
 * `BEGIN IMMEDIATE`), and every statement that settles stops does so before it sums any action up, each
 * sum locking its action row before it reads the runs. So two transactions settling runs of one fire
 * sum up one after the other, the later reading the earlier's outcome, and no two wait on each other.
 */
import type pg from "pg";
import {
  type AgentRunStop,
  type AgentRunStops,
  LOOP_GUARD_RULE,
  type RunOutcomeRow,
  type StopRow,
  stopActionSummary,
  toAgentRunStop,
} from "../agent-run-stops.js";
import type { AsyncPort } from "../async-port.js";
import { inTransaction, onClient, type PgQueryable } from "./pg-client.js";

const INSERT =
  "INSERT INTO agent_run_stops (run, harness, rule, fire_id, by, created_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (run) DO NOTHING";

export class PgAgentRunStops implements AsyncPort<AgentRunStops> {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * A rule's stop of hook-fed runs, once its fire is committed: each run stopped (a run already stopped
   * keeps its first stop), a run already closed settled `closed_first`, and the fire's stop action summed.
   */
  ruleStop(
    fire: { readonly id: string; readonly rule: string },
    harness: string,
    runs: readonly string[],
    at: number,
  ): Promise<void> {
    return inTransaction(this.pool, "BEGIN", async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtext('agent_run_stops'))");
      // Sorted, so two inserts of the same runs wait on them in one order.
      await client.query(
        `INSERT INTO agent_run_stops (run, harness, rule, fire_id, by, created_at)
         SELECT r, $2, $3, $4, 'rule', $5 FROM unnest($1::text[]) AS r ORDER BY r
         ON CONFLICT (run) DO NOTHING`,
        [runs, harness, fire.rule, fire.id, at],
      );
      // A run whose closed row was admitted after the fire's row, before this stop was recorded: no
      // call will come, and the stop settler has passed that row already. Its stop may be an earlier
      // fire's.
      const closed = await client.query<{ fire_id: string; by: string }>(
        `UPDATE agent_run_stops s SET delivered_at = $2, outcome = 'closed_first'
         WHERE s.run = ANY($1::text[]) AND s.delivered_at IS NULL
           AND EXISTS (SELECT 1 FROM rule_journal j WHERE j.run = s.run AND j.kind = 'run_event' AND j.type = 'closed')
         RETURNING s.fire_id, s.by`,
        [runs, at],
      );
      const fires = new Set([fire.id]);
      for (const r of closed.rows) if (r.by === "rule") fires.add(r.fire_id);
      for (const id of [...fires].sort()) await sumUpStopAction(client, id, at);
    });
  }

  /** The loop guard's stop, inside the transaction that commits its `loop_stopped` row (`loopSeq`). */
  async loopGuardStop(
    s: { readonly run: string; readonly harness: string; readonly loopSeq: number; readonly at: number },
    client?: pg.PoolClient,
  ): Promise<void> {
    await (client ?? this.pool).query(INSERT, [
      s.run,
      s.harness,
      LOOP_GUARD_RULE,
      `journal:${s.loopSeq}`,
      "loop_guard",
      s.at,
    ]);
  }

  async get(run: string): Promise<AgentRunStop | undefined> {
    const r = await this.pool.query<StopRow>(
      "SELECT run, harness, rule, fire_id, by, delivered_at, released_at FROM agent_run_stops WHERE run = $1",
      [run],
    );
    const row = r.rows[0];
    return row === undefined ? undefined : toAgentRunStop(row);
  }

  /** The operator's release of the run's stop; false when it has none, or it was released already. */
  async released(run: string, at: number, by?: string): Promise<boolean> {
    const r = await this.pool.query(
      "UPDATE agent_run_stops SET released_at = $1, released_by = $2 WHERE run = $3 AND released_at IS NULL",
      [at, by ?? null, run],
    );
    return (r.rowCount ?? 0) > 0;
  }

  /** The release of every run of `harness` that `rule` stopped, with the rule's hold. The number released. */
  async releasedWithHold(harness: string, rule: string, at: number, by?: string): Promise<number> {
    const r = await this.pool.query(
      "UPDATE agent_run_stops SET released_at = $1, released_by = $2 WHERE harness = $3 AND rule = $4 AND by = 'rule' AND released_at IS NULL",
      [at, by ?? null, harness, rule],
    );
    return r.rowCount ?? 0;
  }

  /** The run closed before a hook call took its stop; inside the caller's transaction when given. */
  closedFirst(run: string, at: number, client?: pg.PoolClient): Promise<void> {
    return onClient(this.pool, client, async (c) => {
      const settled = await settle(c, run, "closed_first", at);
      if (settled?.by === "rule") await sumUpStopAction(c, settled.fire_id, at);
    });
  }

  /**
   * The stop delivered, and a rule's stop action summed up again, inside the caller's transaction when
   * given. False when it was delivered already.
   */
  delivered(stop: AgentRunStop, at: number, client?: pg.PoolClient): Promise<boolean> {
    return onClient(this.pool, client, async (c) => {
      if ((await settle(c, stop.run, "delivered", at)) === undefined) return false;
      if (stop.by === "rule") await sumUpStopAction(c, stop.fireId, at);
      return true;
    });
  }
}

/** A run's stop settled, once: the settled stop's fire and kind, or undefined when none was waiting. */
async function settle(
  client: PgQueryable,
  run: string,
  outcome: "delivered" | "closed_first",
  at: number,
): Promise<{ fire_id: string; by: string } | undefined> {
  const r = await client.query<{ fire_id: string; by: string }>(
    "UPDATE agent_run_stops SET delivered_at = $1, outcome = $2 WHERE run = $3 AND delivered_at IS NULL RETURNING fire_id, by",
    [at, outcome, run],
  );
  return r.rows[0];
}

/**
 * The fire's `rule_actions` stop row, from its runs' outcomes (`stopActionSummary`), inside the caller's
 * transaction. The action row is locked before the runs are read, so a concurrent sum of the same
 * fire reads them after this one commits.
 */
export async function sumUpStopAction(client: PgQueryable, fireId: string, at: number): Promise<void> {
  await client.query("SELECT 1 FROM rule_actions WHERE fire_id = $1 AND action = 'stop' FOR UPDATE", [
    fireId,
  ]);
  const runs = await client.query<RunOutcomeRow>(
    "SELECT run, delivered_at, outcome FROM agent_run_stops WHERE fire_id = $1 AND by = 'rule' ORDER BY run",
    [fireId],
  );
  const { state, detail } = stopActionSummary(runs.rows);
  await client.query(
    "UPDATE rule_actions SET state = $1, detail = $2, updated_at = $3 WHERE fire_id = $4 AND action = 'stop'",
    [state, detail, at, fireId],
  );
}
