/**
 * The journal's rows by kind, type, indexed columns and admission time (the MCP gateway's
 * query_journal, JournalQueryService), and the rows a windowed count reads. Column names come only
 * from INDEXED_COLUMNS, never from a caller; values are bound parameters.
 */
import type { EventFields, JournalRow } from "../../core/journal.js";
import type { EventKind } from "../../core/kinds.js";
import type { Db } from "./open-store.js";
import { INDEXED_COLUMNS } from "./schema.js";

export type IndexedColumn = (typeof INDEXED_COLUMNS)[number];

export interface JournalFilter {
  readonly kind?: string;
  readonly type?: string;
  /** Equality on indexed columns; `is_error` as a bool. */
  readonly columns?: Readonly<Partial<Record<IndexedColumn, string | boolean>>>;
  /** A row matches when any of its paths is equal. */
  readonly path?: string;
  /** `at >= sinceMs`, when above 0. */
  readonly sinceMs?: number;
  /** `at <= untilMs`, when above 0. */
  readonly untilMs?: number;
  readonly afterSeq?: number;
}

export interface JournalIdsRow {
  readonly seq: number;
  readonly at: number;
  readonly kind: string;
  readonly type: string;
  readonly source: string;
  /** The indexed columns that are set. */
  readonly columns: Partial<Record<IndexedColumn, string | boolean>>;
  readonly paths: readonly string[];
}

type Raw = Record<string, unknown> & { seq: number; at: number; kind: string; type: string; source: string };

export class JournalQueryReads {
  private readonly pathsOf;

  constructor(private readonly db: Db) {
    this.pathsOf = db.prepare("SELECT path FROM rule_journal_paths WHERE seq = ? ORDER BY ord").pluck();
  }

  /** The first `limit` runs with a `closed` row of `outcome`, in the order of the first such row. */
  runsClosedWith(outcome: string, limit: number): string[] {
    return this.db
      .prepare(
        "SELECT run FROM rule_journal WHERE kind = 'run_event' AND type = 'closed' AND outcome = ? GROUP BY run ORDER BY min(seq) LIMIT ?",
      )
      .pluck()
      .all(outcome, limit) as string[];
  }

  /**
   * Up to `limit` rows after `afterSeq` matching `filter`, in seq order: identifiers only. With `newest`,
   * the last `limit` of them rather than the first (still in seq order).
   */
  rows(filter: JournalFilter, limit: number, newest = false): JournalIdsRow[] {
    const { where, params } = whereOf(filter);
    const cols = ["seq", "at", "kind", "type", "source", ...INDEXED_COLUMNS].join(", ");
    const raws = this.db
      .prepare(`SELECT ${cols} FROM rule_journal WHERE ${where} ORDER BY seq ${newest ? "DESC" : ""} LIMIT ?`)
      .all(...params, limit) as Raw[];
    if (newest) raws.reverse();
    return raws.map((r) => {
      const columns: Partial<Record<IndexedColumn, string | boolean>> = {};
      for (const c of INDEXED_COLUMNS) {
        const v = r[c];
        if (v === null || v === undefined) continue;
        columns[c] = c === "is_error" ? v === 1 : String(v);
      }
      return {
        seq: r.seq,
        at: r.at,
        kind: r.kind,
        type: r.type,
        source: r.source,
        columns,
        paths: this.pathsOf.all(r.seq) as string[],
      };
    });
  }

  /**
   * Rows of `kind` with seq at most `toSeq` admitted after `afterAt`, narrowed by the non-empty string
   * columns given (an exact test: such a column holds exactly the event's string), as the core's
   * `JournalRow`, at most `max` of them (one more tells the caller there were more). The window code
   * makes the real match; this only spares it rows that cannot match.
   */
  windowRows(
    kind: EventKind,
    columns: Readonly<Partial<Record<IndexedColumn | "type", string>>>,
    afterAt: number,
    toSeq: number,
    max: number,
  ): JournalRow[] {
    const { where, params } = windowWhere(kind, columns, afterAt, toSeq);
    const rows = this.db
      .prepare(`SELECT seq, kind, at, event FROM rule_journal WHERE ${where} ORDER BY seq LIMIT ?`)
      .raw(true)
      .all(...params, max + 1) as [number, EventKind, number, string][];
    return rows.map(([seq, k, at, event]) => ({ seq, kind: k, at, event: JSON.parse(event) as EventFields }));
  }

  /**
   * How many rows `windowRows` would read, counting no further than `max + 1`: it reads no event text,
   * so a window too large to count is refused before any row of it is decoded.
   */
  windowCount(
    kind: EventKind,
    columns: Readonly<Partial<Record<IndexedColumn | "type", string>>>,
    afterAt: number,
    toSeq: number,
    max: number,
  ): number {
    const { where, params } = windowWhere(kind, columns, afterAt, toSeq);
    return this.db
      .prepare(`SELECT COUNT(*) FROM (SELECT 1 FROM rule_journal WHERE ${where} LIMIT ?)`)
      .pluck()
      .get(...params, max + 1) as number;
  }
}

function windowWhere(
  kind: EventKind,
  columns: Readonly<Partial<Record<IndexedColumn | "type", string>>>,
  afterAt: number,
  toSeq: number,
): { where: string; params: (string | number)[] } {
  const where = ["kind = ?", "at > ?", "seq <= ?"];
  const params: (string | number)[] = [kind, afterAt, toSeq];
  for (const c of ["type", ...INDEXED_COLUMNS] as const) {
    const v = columns[c];
    if (typeof v === "string" && v !== "") {
      where.push(`${c} = ?`);
      params.push(v);
    }
  }
  return { where: where.join(" AND "), params };
}

function whereOf(filter: JournalFilter): { where: string; params: (string | number)[] } {
  const where: string[] = ["seq > ?"];
  const params: (string | number)[] = [filter.afterSeq ?? 0];
  if (filter.kind !== undefined && filter.kind !== "") {
    where.push("kind = ?");
    params.push(filter.kind);
  }
  if (filter.type !== undefined && filter.type !== "") {
    where.push("type = ?");
    params.push(filter.type);
  }
  for (const c of INDEXED_COLUMNS) {
    const v = filter.columns?.[c];
    if (v === undefined) continue;
    if (c === "is_error") {
      // An unset is_error reads as false, as the window's zero value does.
      where.push(v === true ? "is_error = 1" : "(is_error IS NULL OR is_error = 0)");
    } else if (v === "") where.push(`(${c} IS NULL OR ${c} = '')`);
    else {
      where.push(`${c} = ?`);
      params.push(String(v));
    }
  }
  if (filter.path !== undefined) {
    where.push("seq IN (SELECT seq FROM rule_journal_paths WHERE path = ?)");
    params.push(filter.path);
  }
  if ((filter.sinceMs ?? 0) > 0) {
    where.push("at >= ?");
    params.push(filter.sinceMs as number);
  }
  if ((filter.untilMs ?? 0) > 0) {
    where.push("at <= ?");
    params.push(filter.untilMs as number);
  }
  return { where: where.join(" AND "), params };
}
