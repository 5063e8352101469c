/**
 * The rules' read model on PostgreSQL (`../rule-reads.ts`): the same reads, bounds, limits and cursors.
 * SQLite breaks ties in a fire's or an annotation's order by rowid, its insertion order; PostgreSQL has
 * no rowid, and fires are inserted in the order of their ids (`f-<seq>-<n>`, `../../../core/fire-id.ts`:
 * the evaluator commits rows in seq order and a row's fires in their place), so the tie breaks on the
 * id's numbers: by seq, then by place, compared as digits of equal length. `firesAfter`'s rowid is the
 * fire's place in that order, counted from 1, which is SQLite's rowid of a fire log nothing deletes
 * from. `journal` is the two journal reads RuleService makes through SQLite's whole JournalTable.
 */
import type pg from "pg";
import type { AsyncPort } from "../async-port.js";
import type { JournalTable } from "../journal-table.js";
import type {
  ActionRow,
  AnnotatedNodeRow,
  AnnotationRow,
  FireCountRow,
  FireRow,
  HoldRow,
  RuleReads,
  RunRow,
} from "../rule-reads.js";
import { PgJournal } from "./pg-journal.js";

const HOUR_MS = 3_600_000;

const HOLD_COLUMNS =
  "harness, rule, hash, fire_id, since, cooldown, false_since, released_at, release_cause, released_by";

const FIRE_COLUMNS =
  "fire_id, seq, at, rule, hash, kind, type, target_kind, target_key, harness, run, declared_level, effective_level, mode, action, message, primitives";

// A fire id's numbers as digits have no leading zero, so a shorter one is smaller, and one of a length
// sorts as its text (COLLATE "C").
const idNumber = (part: number): string =>
  `length(split_part(fire_id, '-', ${part})) DIR, split_part(fire_id, '-', ${part}) DIR`;
/** SQLite's `rowid` order of fires of one seq: their place. */
const FIRE_PLACE = (dir: "ASC" | "DESC"): string => idNumber(3).replaceAll("DIR", dir);
/** SQLite's `rowid` order of annotations (no seq column): their fire's seq, then place. */
const ANNOTATION_ORDER = `${idNumber(2)}, ${idNumber(3)}`.replaceAll("DIR", "DESC");

export class PgRuleReads implements AsyncPort<Omit<RuleReads, "journal">> {
  /** The journal's last row, and the first row admitted after a time. */
  readonly journal: AsyncPort<Pick<JournalTable, "firstAdmittedAfter" | "last">>;

  constructor(private readonly pool: pg.Pool) {
    this.journal = new PgJournal(pool);
  }

  private async rows<R extends pg.QueryResultRow>(text: string, values: readonly unknown[]): Promise<R[]> {
    return (await this.pool.query<R>(text, values as unknown[])).rows;
  }

  private async count(text: string, values: readonly unknown[]): Promise<number> {
    return ((await this.rows<{ n: number }>(text, values))[0] as { n: number }).n;
  }

  firesOf(hash: string, fromSeq: number): Promise<number> {
    return this.count("SELECT COUNT(*) AS n FROM rule_fires WHERE hash = $1 AND seq >= $2", [hash, fromSeq]);
  }

  async lastFire(hash: string): Promise<{ fire_id: string; at: number } | undefined> {
    return (
      await this.rows<{ fire_id: string; at: number }>(
        `SELECT fire_id, at FROM rule_fires WHERE hash = $1 ORDER BY seq DESC, ${FIRE_PLACE("DESC")} LIMIT 1`,
        [hash],
      )
    )[0];
  }

  suppressed(hash: string): Promise<number> {
    // SUM of BIGINT is NUMERIC; back to BIGINT so it reads as a number, as SQLite's does.
    return this.count("SELECT COALESCE(SUM(count), 0)::bigint AS n FROM rule_suppressed WHERE hash = $1", [
      hash,
    ]);
  }

  async fire(fireId: string): Promise<FireRow | undefined> {
    return (
      await this.rows<FireRow>(`SELECT ${FIRE_COLUMNS} FROM rule_fires WHERE fire_id = $1`, [fireId])
    )[0];
  }

  actions(fireId: string): Promise<ActionRow[]> {
    return this.rows<ActionRow>(
      "SELECT action, state, detail, updated_at FROM rule_actions WHERE fire_id = $1 ORDER BY action",
      [fireId],
    );
  }

  fires(
    filter: {
      readonly rule?: string;
      readonly harness?: string;
      readonly sinceMs: number;
      readonly beforeSeq?: number;
    },
    limit: number,
  ): Promise<FireRow[]> {
    const where: string[] = [];
    const params: (string | number)[] = [];
    const param = (clause: string, value: string | number): void => {
      params.push(value);
      where.push(`${clause} $${params.length}`);
    };
    if (filter.beforeSeq !== undefined) param("seq <", filter.beforeSeq);
    if (filter.rule !== undefined) param("rule =", filter.rule);
    if (filter.harness !== undefined) param("harness =", filter.harness);
    if (filter.sinceMs > 0) param("at >=", filter.sinceMs);
    params.push(limit);
    return this.rows<FireRow>(
      `SELECT ${FIRE_COLUMNS} FROM rule_fires ${where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`} ORDER BY seq DESC, ${FIRE_PLACE("DESC")} LIMIT $${params.length}`,
      params,
    );
  }

  async journalRow(
    seq: number,
  ): Promise<
    { seq: number; kind: string; type: string; at: number; source: string; event: string } | undefined
  > {
    return (
      await this.rows<{ seq: number; kind: string; type: string; at: number; source: string; event: string }>(
        "SELECT seq, kind, type, at, source, event FROM rule_journal WHERE seq = $1",
        [seq],
      )
    )[0];
  }

  runRowsBefore(run: string, seq: number, max: number): Promise<RunRow[]> {
    return this.rows<RunRow>(
      "SELECT seq, at, type, tool, digest FROM rule_journal WHERE run = $1 AND kind = 'run_event' AND seq < $2 ORDER BY seq DESC LIMIT $3",
      [run, seq, max],
    );
  }

  async loopStop(
    run: string,
  ): Promise<{ fire_id: string; delivered_at: number | null; released_at: number | null } | undefined> {
    return (
      await this.rows<{ fire_id: string; delivered_at: number | null; released_at: number | null }>(
        "SELECT fire_id, delivered_at, released_at FROM agent_run_stops WHERE run = $1 AND by = 'loop_guard'",
        [run],
      )
    )[0];
  }

  journalRows(): Promise<number> {
    return this.count("SELECT COUNT(*) AS n FROM rule_journal", []);
  }

  releasedHolds(harness: string | undefined, limit: number): Promise<HoldRow[]> {
    return harness === undefined
      ? this.rows<HoldRow>(
          `SELECT ${HOLD_COLUMNS} FROM rule_holds WHERE released_at IS NOT NULL ORDER BY released_at DESC, id DESC LIMIT $1`,
          [limit],
        )
      : this.rows<HoldRow>(
          `SELECT ${HOLD_COLUMNS} FROM rule_holds WHERE released_at IS NOT NULL AND harness = $1 ORDER BY released_at DESC, id DESC LIMIT $2`,
          [harness, limit],
        );
  }

  async holdOf(fireId: string): Promise<HoldRow | undefined> {
    return (
      await this.rows<HoldRow>(
        `SELECT ${HOLD_COLUMNS} FROM rule_holds WHERE fire_id = $1 ORDER BY id DESC LIMIT 1`,
        [fireId],
      )
    )[0];
  }

  annotations(node: string | undefined, limit: number): Promise<AnnotationRow[]> {
    const cols = "fire_id, node, rule, message, at";
    return node === undefined
      ? this.rows<AnnotationRow>(
          `SELECT ${cols} FROM rule_annotations ORDER BY at DESC, ${ANNOTATION_ORDER} LIMIT $1`,
          [limit],
        )
      : this.rows<AnnotationRow>(
          `SELECT ${cols} FROM rule_annotations WHERE node = $1 ORDER BY at DESC, ${ANNOTATION_ORDER} LIMIT $2`,
          [node, limit],
        );
  }

  /** Fires after the `rowid`th in commit order, each with its place: an offset over the seq index. */
  async firesAfter(rowid: number): Promise<(FireRow & { readonly rowid: number })[]> {
    const rows = await this.rows<FireRow>(
      `SELECT ${FIRE_COLUMNS} FROM rule_fires ORDER BY seq, ${FIRE_PLACE("ASC")} OFFSET $1`,
      [rowid],
    );
    return rows.map((r, i) => ({ rowid: rowid + i + 1, ...r }));
  }

  firesAfterSeq(seq: number, limit: number): Promise<FireRow[]> {
    return this.rows<FireRow>(
      `SELECT ${FIRE_COLUMNS} FROM rule_fires WHERE seq > $1 ORDER BY seq, ${FIRE_PLACE("ASC")} LIMIT $2`,
      [seq, limit],
    );
  }

  firesAtSeq(seq: number): Promise<FireRow[]> {
    return this.rows<FireRow>(
      `SELECT ${FIRE_COLUMNS} FROM rule_fires WHERE seq = $1 ORDER BY ${FIRE_PLACE("ASC")}`,
      [seq],
    );
  }

  /**
   * One statement, so the first row admitted at or after `fromMs` and the fires it bounds are read in
   * one snapshot; no such row, no counts.
   */
  fireCounts(fromMs: number): Promise<FireCountRow[]> {
    return this.rows<FireCountRow>(
      `SELECT rule, mode, (at / ${HOUR_MS}) * ${HOUR_MS} AS hour, COUNT(*) AS fires FROM rule_fires
       WHERE seq >= (SELECT min(seq) FROM rule_journal WHERE at > $1) AND at >= $2
       GROUP BY rule, hour, mode ORDER BY rule, hour, mode`,
      [fromMs - 1, fromMs],
    );
  }

  annotatedNodes(after: string, limit: number): Promise<AnnotatedNodeRow[]> {
    return this.rows<AnnotatedNodeRow>(
      `SELECT node, COUNT(*) AS annotations, MAX(at) AS last_at FROM rule_annotations
       WHERE node > $1 GROUP BY node ORDER BY node LIMIT $2`,
      [after, limit],
    );
  }

  actionsInFlight(): Promise<number> {
    return this.count("SELECT count(*) AS n FROM rule_actions WHERE state IN ('pending', 'started')", []);
  }

  stopsSince(state: "undelivered" | "unknown", at: number): Promise<number> {
    return this.count(
      "SELECT COUNT(*) AS n FROM rule_actions WHERE state = $1 AND action = 'stop' AND updated_at > $2",
      [state, at],
    );
  }
}
