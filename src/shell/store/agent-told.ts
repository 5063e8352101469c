/**
 * What hook-fed runs are told of the rules (`agents/enforcement/tell.ts`): the fires still to tell a run,
 * read from the fire log, and each fire told, recorded in `agent_told` in one transaction with the read
 * that chose it, so a fire reaches a run at most once, across restarts too.
 *
 * A fire is to be told to a run from its commit on when it is active (a shadow fire never acts, REQ-9),
 * at one of the levels asked for, and targets the run itself, or the run's harness while the run was
 * already seen (its first row at or before the fire's row: a session started later was not there when
 * it happened). Both are index seeks on `rule_fires_target`; the journal row a fire was about is read
 * by its seq for the fires chosen only.
 */
import type { Db } from "./open-store.js";

export interface FireToTell {
  readonly fireId: string;
  readonly seq: number;
  readonly rule: string;
  readonly level: string;
  readonly message: string;
  /** The fire's journal row (`kind`, `type` and its event), when retention has not pruned it. */
  readonly row: { readonly kind: string; readonly type: string; readonly event: string } | undefined;
}

interface Row {
  fire_id: string;
  seq: number;
  rule: string;
  effective_level: string;
  message: string;
}

export interface TellQuery {
  readonly run: string;
  readonly harness: string;
  /** The seq of the run's first row; undefined when the journal holds none (harness fires are not told). */
  readonly firstSeq: number | undefined;
  readonly levels: readonly string[];
  /** The most fires read at once. */
  readonly limit: number;
}

const FIRE = `f.fire_id, f.seq, f.rule, f.effective_level, f.message`;
const UNTOLD = "NOT EXISTS (SELECT 1 FROM agent_told t WHERE t.run = @run AND t.fire_id = f.fire_id)";
const LEVEL = "f.effective_level IN (SELECT value FROM json_each(@levels))";

export class AgentTold {
  private readonly pending;
  private readonly row;
  private readonly told;

  constructor(private readonly db: Db) {
    this.pending = db.prepare(
      `SELECT * FROM (
         SELECT ${FIRE} FROM rule_fires f
         WHERE f.mode = 'active' AND f.target_kind = 'run' AND f.target_key = @run AND ${LEVEL} AND ${UNTOLD}
         UNION ALL
         SELECT ${FIRE} FROM rule_fires f
         WHERE f.mode = 'active' AND f.target_kind = 'harness' AND f.target_key = @harness
           AND f.seq >= @firstSeq AND ${LEVEL} AND ${UNTOLD}
       ) ORDER BY seq, fire_id LIMIT @limit`,
    );
    this.row = db.prepare("SELECT kind, type, event FROM rule_journal WHERE seq = ?");
    this.told = db.prepare("INSERT OR IGNORE INTO agent_told (run, fire_id, told_at) VALUES (?, ?, ?)");
  }

  /**
   * In one transaction: the fires still to tell the run (oldest first, at most `q.limit`), handed to
   * `choose`, and those it returns recorded told at `at`. What `choose` returns is the transaction's.
   */
  tell<T>(
    q: TellQuery,
    at: number,
    choose: (fires: readonly FireToTell[]) => { readonly told: readonly string[]; readonly result: T },
  ): T {
    return this.db.transaction(() => {
      const rows = this.pending.all({
        run: q.run,
        harness: q.harness,
        // No row yet: no harness fire can be after the run's first row.
        firstSeq: q.firstSeq ?? Number.MAX_SAFE_INTEGER,
        levels: JSON.stringify(q.levels),
        limit: q.limit,
      }) as Row[];
      const fires = rows.map((r): FireToTell => {
        const row = this.row.get(r.seq) as { kind: string; type: string; event: string } | undefined;
        return {
          fireId: r.fire_id,
          seq: r.seq,
          rule: r.rule,
          level: r.effective_level,
          message: r.message,
          row,
        };
      });
      const { told, result } = choose(fires);
      for (const id of told) this.told.run(q.run, id, at);
      return result;
    })();
  }
}
