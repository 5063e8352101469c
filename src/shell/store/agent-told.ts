/**
 * What hook-fed runs are told of the rules (`agents/enforcement/tell.ts`): the fires still to tell a run,
 * read from the fire log, and each fire told, recorded in `agent_told` in one transaction with the read
 * that chose it, so a fire reaches a run at most once, across restarts too.
 *
 * A fire is to be told to a run from its commit on when it is active (a shadow fire never acts, REQ-9),
 * at one of the levels asked for, and targets the run itself, or the run's harness while the run was
 * already seen (its first row at or before the fire's row: a session started later was not there when
 * it happened). A run is told its fires oldest first, in (seq, fire_id) order, and fires commit in seq
 * order, so what it was told is a prefix: the read starts after the last fire told (`agent_told_last`)
 * and is two range seeks on `rule_fires_target` over the fires since, whatever the run was told before.
 * A level a reload adds is told for fires after the last one told. The journal row a fire was about is
 * read by its seq for the fires chosen only.
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

/** A fire still to tell, as the pending read gives it. */
export interface PendingFireRow {
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

export const toFireToTell = (r: PendingFireRow, row: FireToTell["row"]): FireToTell => ({
  fireId: r.fire_id,
  seq: r.seq,
  rule: r.rule,
  level: r.effective_level,
  message: r.message,
  row,
});

const FIRE = `f.fire_id, f.seq, f.rule, f.effective_level, f.message`;
const UNTOLD = "NOT EXISTS (SELECT 1 FROM agent_told t WHERE t.run = @run AND t.fire_id = f.fire_id)";
const LEVEL = "f.effective_level IN (SELECT value FROM json_each(@levels))";
const AFTER = "(f.seq > @afterSeq OR f.fire_id > @afterId)";

export class AgentTold {
  private readonly last;
  private readonly pending;
  private readonly row;
  private readonly told;

  constructor(private readonly db: Db) {
    this.last = db.prepare(
      "SELECT seq, fire_id FROM agent_told WHERE run = ? ORDER BY seq DESC, fire_id DESC LIMIT 1",
    );
    // Each arm ordered and limited on its own, so each reads at most `limit` index entries past the
    // last fire told.
    this.pending = db.prepare(
      `SELECT * FROM (
         SELECT * FROM (
           SELECT ${FIRE} FROM rule_fires f
           WHERE f.mode = 'active' AND f.target_kind = 'run' AND f.target_key = @run AND f.seq >= @afterSeq
             AND ${AFTER} AND ${LEVEL} AND ${UNTOLD}
           ORDER BY f.seq, f.fire_id LIMIT @limit)
         UNION ALL
         SELECT * FROM (
           SELECT ${FIRE} FROM rule_fires f
           WHERE f.mode = 'active' AND f.target_kind = 'harness' AND f.target_key = @harness
             AND f.seq >= @harnessFrom AND ${AFTER} AND ${LEVEL} AND ${UNTOLD}
           ORDER BY f.seq, f.fire_id LIMIT @limit)
       ) ORDER BY seq, fire_id LIMIT @limit`,
    );
    this.row = db.prepare("SELECT kind, type, event FROM rule_journal WHERE seq = ?");
    this.told = db.prepare(
      "INSERT OR IGNORE INTO agent_told (run, fire_id, seq, told_at) VALUES (?, ?, ?, ?)",
    );
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
      const last = this.last.get(q.run) as { seq: number; fire_id: string } | undefined;
      const afterSeq = last?.seq ?? 0;
      const rows = this.pending.all({
        run: q.run,
        harness: q.harness,
        afterSeq,
        afterId: last?.fire_id ?? "",
        // No row yet: no harness fire can be after the run's first row.
        harnessFrom: Math.max(q.firstSeq ?? Number.MAX_SAFE_INTEGER, afterSeq),
        levels: JSON.stringify(q.levels),
        limit: q.limit,
      }) as PendingFireRow[];
      const fires = rows.map((r) => toFireToTell(r, this.row.get(r.seq) as FireToTell["row"]));
      const { told, result } = choose(fires);
      const seqOf = new Map(fires.map((f) => [f.fireId, f.seq]));
      for (const id of told) this.told.run(q.run, id, seqOf.get(id), at);
      return result;
    })();
  }
}
