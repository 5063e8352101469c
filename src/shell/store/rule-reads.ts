/**
 * The rules' read model: RuleService's reads of the fire log, actions, holds, annotations, suppressed
 * counts and journal, each bounded and index-served where the schema has an index. They run on the
 * daemon's connection and event loop, so a read sees exactly what has been committed.
 */
import { JournalTable } from "./journal-table.js";
import type { Db } from "./open-store.js";

export interface FireRow {
  fire_id: string;
  seq: number;
  at: number;
  rule: string;
  hash: string;
  kind: string;
  type: string;
  target_kind: string | null;
  target_key: string | null;
  harness: string | null;
  run: string | null;
  declared_level: string;
  effective_level: string;
  mode: string;
  action: string;
  message: string;
  primitives: string;
}

export interface ActionRow {
  action: string;
  state: string;
  detail: string | null;
  updated_at: number;
}

export interface HoldRow {
  harness: string;
  rule: string;
  hash: string;
  fire_id: string;
  since: number;
  cooldown: number;
  false_since: number | null;
  /** Null while the hold is in force. */
  released_at: number | null;
  release_cause: string | null;
  released_by: string | null;
}

export interface AnnotationRow {
  fire_id: string;
  node: string;
  rule: string;
  message: string;
  at: number;
}

/** Fires of one rule in one mode in one hour of admission time. */
export interface FireCountRow {
  rule: string;
  mode: string;
  hour: number;
  fires: number;
}

/** A graph node that carries annotations. */
export interface AnnotatedNodeRow {
  node: string;
  annotations: number;
  last_at: number;
}

const HOUR_MS = 3_600_000;

const HOLD_COLUMNS =
  "harness, rule, hash, fire_id, since, cooldown, false_since, released_at, release_cause, released_by";

const FIRE_COLUMNS =
  "fire_id, seq, at, rule, hash, kind, type, target_kind, target_key, harness, run, declared_level, effective_level, mode, action, message, primitives";

/**
 * Each read is bounded and index-served where the schema has an index: fires
 * by hash or harness and seq, actions by fire, annotations by node, the journal by seq and at. Fires by
 * rule name and released holds scan their (small) tables.
 */
/** A run's row as the loop-stop explanation reads it. */
export interface RunRow {
  readonly seq: number;
  readonly at: number;
  readonly type: string;
  readonly tool: string | null;
  readonly digest: string | null;
}

export class RuleReads {
  private readonly stmts;
  /** The journal's own reads: its last row, and the first row after a time (which bounds every fire
   * after that time by seq, the admission clock never going back, for the (hash, seq) index). */
  readonly journal: JournalTable;

  constructor(private readonly db: Db) {
    this.journal = new JournalTable(db);
    this.stmts = {
      firesOf: db.prepare("SELECT COUNT(*) AS n FROM rule_fires WHERE hash = ? AND seq >= ?"),
      lastFire: db.prepare(
        "SELECT fire_id, at FROM rule_fires WHERE hash = ? ORDER BY seq DESC, rowid DESC LIMIT 1",
      ),
      suppressed: db.prepare("SELECT COALESCE(SUM(count), 0) AS n FROM rule_suppressed WHERE hash = ?"),
      fire: db.prepare(`SELECT ${FIRE_COLUMNS} FROM rule_fires WHERE fire_id = ?`),
      holdOf: db.prepare(`SELECT ${HOLD_COLUMNS} FROM rule_holds WHERE fire_id = ? ORDER BY id DESC LIMIT 1`),
      actions: db.prepare(
        "SELECT action, state, detail, updated_at FROM rule_actions WHERE fire_id = ? ORDER BY action",
      ),
      journalRow: db.prepare("SELECT seq, kind, type, at, source, event FROM rule_journal WHERE seq = ?"),
      journalRows: db.prepare("SELECT COUNT(*) AS n FROM rule_journal"),
      // On (run, seq): a seek, then the run's rows backwards from the guard's decision.
      runRowsBefore: db.prepare(
        "SELECT seq, at, type, tool, digest FROM rule_journal WHERE run = ? AND kind = 'run_event' AND seq < ? ORDER BY seq DESC LIMIT ?",
      ),
      runStop: db.prepare(
        "SELECT fire_id, delivered_at, released_at FROM agent_run_stops WHERE run = ? AND by = 'loop_guard'",
      ),
      firesAfter: db.prepare(`SELECT rowid, ${FIRE_COLUMNS} FROM rule_fires WHERE rowid > ? ORDER BY rowid`),
      firesAfterSeq: db.prepare(
        `SELECT ${FIRE_COLUMNS} FROM rule_fires WHERE seq > ? ORDER BY seq, rowid LIMIT ?`,
      ),
      firesAtSeq: db.prepare(`SELECT ${FIRE_COLUMNS} FROM rule_fires WHERE seq = ? ORDER BY rowid`),
      // A fire's seq is at least its row's, so `seq >= ?` (the first row admitted after the bound) keeps
      // the scan on the seq index; `at >= ?` then drops the fires of rows admitted before it.
      fireCounts: db.prepare(
        `SELECT rule, mode, (at / ${HOUR_MS}) * ${HOUR_MS} AS hour, COUNT(*) AS fires FROM rule_fires
         WHERE seq >= ? AND at >= ? GROUP BY rule, hour, mode ORDER BY rule, hour, mode`,
      ),
      annotatedNodes: db.prepare(
        `SELECT node, COUNT(*) AS annotations, MAX(at) AS last_at FROM rule_annotations
         WHERE node > ? GROUP BY node ORDER BY node LIMIT ?`,
      ),
      actionsInFlight: db.prepare(
        "SELECT count(*) AS n FROM rule_actions WHERE state IN ('pending', 'started')",
      ),
      stopsInState: db.prepare(
        "SELECT COUNT(*) AS n FROM rule_actions WHERE state = ? AND action = 'stop' AND updated_at > ?",
      ),
    };
  }

  firesOf(hash: string, fromSeq: number): number {
    return (this.stmts.firesOf.get(hash, fromSeq) as { n: number }).n;
  }

  lastFire(hash: string): { fire_id: string; at: number } | undefined {
    return this.stmts.lastFire.get(hash) as { fire_id: string; at: number } | undefined;
  }

  suppressed(hash: string): number {
    return (this.stmts.suppressed.get(hash) as { n: number }).n;
  }

  fire(fireId: string): FireRow | undefined {
    return this.stmts.fire.get(fireId) as FireRow | undefined;
  }

  actions(fireId: string): ActionRow[] {
    return this.stmts.actions.all(fireId) as ActionRow[];
  }

  fires(
    filter: {
      readonly rule?: string;
      readonly harness?: string;
      readonly sinceMs: number;
      /** Only fires of rows before this seq. */
      readonly beforeSeq?: number;
    },
    limit: number,
  ): FireRow[] {
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (filter.beforeSeq !== undefined) {
      where.push("seq < ?");
      params.push(filter.beforeSeq);
    }
    if (filter.rule !== undefined) {
      where.push("rule = ?");
      params.push(filter.rule);
    }
    if (filter.harness !== undefined) {
      where.push("harness = ?");
      params.push(filter.harness);
    }
    if (filter.sinceMs > 0) {
      where.push("at >= ?");
      params.push(filter.sinceMs);
    }
    const sql = `SELECT ${FIRE_COLUMNS} FROM rule_fires ${where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`} ORDER BY seq DESC, rowid DESC LIMIT ?`;
    return this.db.prepare(sql).all(...params, limit) as FireRow[];
  }

  journalRow(
    seq: number,
  ): { seq: number; kind: string; type: string; at: number; source: string; event: string } | undefined {
    return this.stmts.journalRow.get(seq) as ReturnType<RuleReads["journalRow"]>;
  }

  /** Up to `max` of the run's run_event rows before `seq`, newest first: the streak a loop stop ended. */
  runRowsBefore(run: string, seq: number, max: number): RunRow[] {
    return this.stmts.runRowsBefore.all(run, seq, max) as RunRow[];
  }

  /** The loop guard's stop of `run`, as `agent-run-stops.ts` keeps it. */
  loopStop(
    run: string,
  ): { fire_id: string; delivered_at: number | null; released_at: number | null } | undefined {
    return this.stmts.runStop.get(run) as ReturnType<RuleReads["loopStop"]>;
  }

  journalRows(): number {
    return (this.stmts.journalRows.get() as { n: number }).n;
  }

  releasedHolds(harness: string | undefined, limit: number): HoldRow[] {
    const cols = HOLD_COLUMNS;
    return (
      harness === undefined
        ? this.db
            .prepare(
              `SELECT ${cols} FROM rule_holds WHERE released_at IS NOT NULL ORDER BY released_at DESC, id DESC LIMIT ?`,
            )
            .all(limit)
        : this.db
            .prepare(
              `SELECT ${cols} FROM rule_holds WHERE released_at IS NOT NULL AND harness = ? ORDER BY released_at DESC, id DESC LIMIT ?`,
            )
            .all(harness, limit)
    ) as HoldRow[];
  }

  /** The hold a fire placed; a scan, as holds are few (only enforced hold and stop rules place them). */
  holdOf(fireId: string): HoldRow | undefined {
    return this.stmts.holdOf.get(fireId) as HoldRow | undefined;
  }

  annotations(node: string | undefined, limit: number): AnnotationRow[] {
    const cols = "fire_id, node, rule, message, at";
    return (
      node === undefined
        ? this.db
            .prepare(`SELECT ${cols} FROM rule_annotations ORDER BY at DESC, rowid DESC LIMIT ?`)
            .all(limit)
        : this.db
            .prepare(
              `SELECT ${cols} FROM rule_annotations WHERE node = ? ORDER BY at DESC, rowid DESC LIMIT ?`,
            )
            .all(node, limit)
    ) as AnnotationRow[];
  }

  /** Fires committed after `rowid`, in commit order, each with its rowid: a reader that follows the log. */
  firesAfter(rowid: number): (FireRow & { readonly rowid: number })[] {
    return this.stmts.firesAfter.all(rowid) as (FireRow & { rowid: number })[];
  }

  /** Fires of rows after `seq`, oldest first (seq, then the row's own order), at most `limit`. */
  firesAfterSeq(seq: number, limit: number): FireRow[] {
    return this.stmts.firesAfterSeq.all(seq, limit) as FireRow[];
  }

  /** Every fire of the row at `seq`, in the row's own order. */
  firesAtSeq(seq: number): FireRow[] {
    return this.stmts.firesAtSeq.all(seq) as FireRow[];
  }

  /** Fires per rule, hour of admission time and mode, of rows admitted at or after `fromMs`. */
  fireCounts(fromMs: number): FireCountRow[] {
    const fromSeq = this.journal.firstAdmittedAfter(fromMs - 1);
    if (fromSeq === undefined) return [];
    return this.stmts.fireCounts.all(fromSeq, fromMs) as FireCountRow[];
  }

  /** Annotated nodes after `after` in node order, each with its count and newest time, at most `limit`. */
  annotatedNodes(after: string, limit: number): AnnotatedNodeRow[] {
    return this.stmts.annotatedNodes.all(after, limit) as AnnotatedNodeRow[];
  }

  /** Actions a hook or stop command has not finished: pending or started. */
  actionsInFlight(): number {
    return (this.stmts.actionsInFlight.get() as { n: number }).n;
  }

  /** Stop actions recorded in `state` after `at`. */
  stopsSince(state: "undelivered" | "unknown", at: number): number {
    return (this.stmts.stopsInState.get(state, at) as { n: number }).n;
  }
}
