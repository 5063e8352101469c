/**
 * SQLite's `JournalQueryReads` on PostgreSQL (issue 34 item 3): the rows the gateway's query_journal
 * and count_journal read, by kind, type, indexed columns, path and admission time, bounded the same way
 * (a row cap in every statement; a window counted, reading no event, before its rows are read).
 * Column names come only from INDEXED_COLUMNS, never from a caller; values are bound parameters.
 * test/shell/journal-query/pg-journal-queries.test.ts holds the answers to SQLite's.
 */
import type pg from "pg";
import type { EventFields, JournalRow } from "../../../core/journal.js";
import type { EventKind } from "../../../core/kinds.js";
import type { IndexedColumn, JournalFilter, JournalIdsRow } from "../journal-query-reads.js";
import { INDEXED_COLUMNS } from "../schema.js";

type Raw = Record<string, unknown> & {
  seq: number;
  at: number;
  kind: string;
  type: string;
  source: string;
  paths: string[];
};

type Columns = Readonly<Partial<Record<IndexedColumn | "type", string>>>;

/** Numbered parameters: each value bound gives its `$n`. */
class Params {
  readonly values: (string | number)[] = [];
  bind(v: string | number): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

export class PgJournalQueryReads {
  constructor(private readonly pool: pg.Pool) {}

  /** The first `limit` runs with a `closed` row of `outcome`, in the order of the first such row. */
  async runsClosedWith(outcome: string, limit: number): Promise<string[]> {
    const r = await this.pool.query<{ run: string }>(
      "SELECT run FROM rule_journal WHERE kind = 'run_event' AND type = 'closed' AND outcome = $1 GROUP BY run ORDER BY min(seq) LIMIT $2",
      [outcome, limit],
    );
    return r.rows.map((row) => row.run);
  }

  /**
   * Up to `limit` rows after `afterSeq` matching `filter`, in seq order: identifiers only, each row's
   * paths read in the same statement. With `newest`, the last `limit` of them (still in seq order).
   */
  async rows(filter: JournalFilter, limit: number, newest = false): Promise<JournalIdsRow[]> {
    const params = new Params();
    const where = whereOf(filter, params);
    const cols = ["seq", "at", "kind", "type", "source", ...INDEXED_COLUMNS].map((c) => `j.${c}`).join(", ");
    const r = await this.pool.query<Raw>(
      `SELECT ${cols}, ARRAY(SELECT p.path FROM rule_journal_paths p WHERE p.seq = j.seq ORDER BY p.ord) AS paths
       FROM rule_journal j WHERE ${where} ORDER BY j.seq ${newest ? "DESC" : ""} LIMIT ${params.bind(limit)}`,
      params.values,
    );
    const raws = r.rows;
    if (newest) raws.reverse();
    return raws.map((raw) => {
      const columns: Partial<Record<IndexedColumn, string | boolean>> = {};
      for (const c of INDEXED_COLUMNS) {
        const v = raw[c];
        if (v === null || v === undefined) continue;
        columns[c] = c === "is_error" ? v === true : String(v);
      }
      return {
        seq: raw.seq,
        at: raw.at,
        kind: raw.kind,
        type: raw.type,
        source: raw.source,
        columns,
        paths: raw.paths,
      };
    });
  }

  /**
   * Rows of `kind` with seq at most `toSeq` admitted after `afterAt`, narrowed by the non-empty string
   * columns given, as the core's `JournalRow`, at most `max + 1` of them (SQLite's `windowRows`).
   */
  async windowRows(
    kind: EventKind,
    columns: Columns,
    afterAt: number,
    toSeq: number,
    max: number,
  ): Promise<JournalRow[]> {
    const params = new Params();
    const where = windowWhere(kind, columns, afterAt, toSeq, params);
    const r = await this.pool.query<[number, EventKind, number, string]>({
      text: `SELECT seq, kind, at, event FROM rule_journal WHERE ${where} ORDER BY seq LIMIT ${params.bind(max + 1)}`,
      values: params.values,
      rowMode: "array",
    });
    return r.rows.map(([seq, k, at, event]) => ({
      seq,
      kind: k,
      at,
      event: JSON.parse(event) as EventFields,
    }));
  }

  /** How many rows `windowRows` would read, counting no further than `max + 1`, reading no event text. */
  async windowCount(
    kind: EventKind,
    columns: Columns,
    afterAt: number,
    toSeq: number,
    max: number,
  ): Promise<number> {
    const params = new Params();
    const where = windowWhere(kind, columns, afterAt, toSeq, params);
    const r = await this.pool.query<{ n: number }>(
      `SELECT count(*) AS n FROM (SELECT 1 FROM rule_journal WHERE ${where} LIMIT ${params.bind(max + 1)}) w`,
      params.values,
    );
    return r.rows[0]?.n ?? 0;
  }
}

function windowWhere(
  kind: EventKind,
  columns: Columns,
  afterAt: number,
  toSeq: number,
  params: Params,
): string {
  const where = [
    `kind = ${params.bind(kind)}`,
    `at > ${params.bind(afterAt)}`,
    `seq <= ${params.bind(toSeq)}`,
  ];
  for (const c of ["type", ...INDEXED_COLUMNS] as const) {
    const v = columns[c];
    if (typeof v === "string" && v !== "") where.push(`${c} = ${params.bind(v)}`);
  }
  return where.join(" AND ");
}

function whereOf(filter: JournalFilter, params: Params): string {
  const where: string[] = [`j.seq > ${params.bind(filter.afterSeq ?? 0)}`];
  if (filter.kind !== undefined && filter.kind !== "") where.push(`j.kind = ${params.bind(filter.kind)}`);
  if (filter.type !== undefined && filter.type !== "") where.push(`j.type = ${params.bind(filter.type)}`);
  for (const c of INDEXED_COLUMNS) {
    const v = filter.columns?.[c];
    if (v === undefined) continue;
    if (c === "is_error") {
      // An unset is_error reads as false, as the window's zero value does.
      where.push(v === true ? "j.is_error" : "(j.is_error IS NULL OR NOT j.is_error)");
    } else if (v === "") where.push(`(j.${c} IS NULL OR j.${c} = '')`);
    else where.push(`j.${c} = ${params.bind(String(v))}`);
  }
  if (filter.path !== undefined)
    where.push(
      `j.seq IN (SELECT p.seq FROM rule_journal_paths p WHERE p.path = ${params.bind(filter.path)})`,
    );
  if ((filter.sinceMs ?? 0) > 0) where.push(`j.at >= ${params.bind(filter.sinceMs as number)}`);
  if ((filter.untilMs ?? 0) > 0) where.push(`j.at <= ${params.bind(filter.untilMs as number)}`);
  return where.join(" AND ");
}
