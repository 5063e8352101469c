/**
 * SQLite's `AgentTold` on PostgreSQL (issue 34): the fires still to tell a hook-fed run and each one
 * told, in one transaction with the read that chose it (`../agent-told.ts` says which fires, and why the
 * read is two range seeks on `rule_fires_target` past the last fire told).
 * test/shell/store/pg/agent-told-contract.test.ts holds the answers and rows to SQLite's.
 *
 * SQLite's one writer keeps two tellings of a run apart; here the transaction first takes an advisory
 * lock on the run, so a second telling of it reads what the first recorded, and a fire still reaches a
 * run at most once when two hook calls of it come at once.
 */
import type pg from "pg";
import {
  type AgentTold,
  type FireToTell,
  type PendingFireRow,
  type TellQuery,
  toFireToTell,
} from "../agent-told.js";
import type { AsyncPort } from "../async-port.js";
import { inTransaction } from "./pg-client.js";

const FIRE = "f.fire_id, f.seq, f.rule, f.effective_level, f.message";
// $1 run, $2 harness, $3 afterSeq, $4 afterId, $5 harnessFrom, $6 levels, $7 limit.
const UNTOLD = "NOT EXISTS (SELECT 1 FROM agent_told t WHERE t.run = $1 AND t.fire_id = f.fire_id)";
const LEVEL = "f.effective_level = ANY($6::text[])";
const AFTER = "(f.seq > $3 OR f.fire_id > $4)";

// Each arm ordered and limited on its own, so each reads at most `limit` index entries past the last
// fire told. `fire_id` is COLLATE "C", so the order is SQLite's, by bytes.
const PENDING = `SELECT * FROM (
  (SELECT ${FIRE} FROM rule_fires f
   WHERE f.mode = 'active' AND f.target_kind = 'run' AND f.target_key = $1 AND f.seq >= $3
     AND ${AFTER} AND ${LEVEL} AND ${UNTOLD}
   ORDER BY f.seq, f.fire_id LIMIT $7)
  UNION ALL
  (SELECT ${FIRE} FROM rule_fires f
   WHERE f.mode = 'active' AND f.target_kind = 'harness' AND f.target_key = $2
     AND f.seq >= $5 AND ${AFTER} AND ${LEVEL} AND ${UNTOLD}
   ORDER BY f.seq, f.fire_id LIMIT $7)
) pending ORDER BY seq, fire_id LIMIT $7`;

export class PgAgentTold implements AsyncPort<AgentTold> {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * In one transaction: the fires still to tell the run (oldest first, at most `q.limit`), handed to
   * `choose`, and those it returns recorded told at `at`. What `choose` returns is the transaction's;
   * a throw from it rolls back, recording nothing.
   */
  tell<T>(
    q: TellQuery,
    at: number,
    choose: (fires: readonly FireToTell[]) => { readonly told: readonly string[]; readonly result: T },
  ): Promise<T> {
    return inTransaction(this.pool, "BEGIN", async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtext('agent_told'), hashtext($1))", [q.run]);
      const last = (
        await client.query<{ seq: number; fire_id: string }>(
          "SELECT seq, fire_id FROM agent_told WHERE run = $1 ORDER BY seq DESC, fire_id DESC LIMIT 1",
          [q.run],
        )
      ).rows[0];
      const afterSeq = last?.seq ?? 0;
      const rows = (
        await client.query<PendingFireRow>(PENDING, [
          q.run,
          q.harness,
          afterSeq,
          last?.fire_id ?? "",
          // No row yet: no harness fire can be after the run's first row.
          Math.max(q.firstSeq ?? Number.MAX_SAFE_INTEGER, afterSeq),
          q.levels,
          // SQLite reads a negative limit as none; PostgreSQL refuses one, and reads NULL as none.
          q.limit < 0 ? null : q.limit,
        ])
      ).rows;
      const journal = new Map(
        (
          await client.query<{ seq: number; kind: string; type: string; event: string }>(
            "SELECT seq, kind, type, event FROM rule_journal WHERE seq = ANY($1::bigint[])",
            [rows.map((r) => r.seq)],
          )
        ).rows.map(({ seq, ...row }) => [seq, row]),
      );
      const fires = rows.map((r) => toFireToTell(r, journal.get(r.seq)));
      const { told, result } = choose(fires);
      const seqOf = new Map(fires.map((f) => [f.fireId, f.seq]));
      // A fire not among those read has no seq: SQLite's INSERT OR IGNORE skips it (NOT NULL), so here too.
      if (told.length > 0)
        await client.query(
          `INSERT INTO agent_told (run, fire_id, seq, told_at)
           SELECT $1, t.fire_id, t.seq, $4 FROM unnest($2::text[], $3::bigint[]) AS t(fire_id, seq)
           WHERE t.seq IS NOT NULL ON CONFLICT (run, fire_id) DO NOTHING`,
          [q.run, told, told.map((id) => seqOf.get(id) ?? null), at],
        );
      return result;
    });
  }
}
