/**
 * The rule_journal table (SPEC-0029 REQ-7): rows appended in seq order with their indexed columns, paths
 * in a child table and the REQ-4 fields as JSON; read back in seq order as the core's `JournalRow`.
 * Appends run inside the caller's transaction, so a batch commits whole or not at all.
 */

import type Database from "better-sqlite3";
import type { EventFields, JournalRow } from "../../core/journal.js";
import { indexRow } from "../../core/journal.js";
import type { EventKind } from "../../core/kinds.js";
import type { Source } from "../../core/sources.js";
import type { Db } from "./open-store.js";
import { INDEXED_COLUMNS } from "./schema.js";

/** A REQ-5 indexed field stored as a column of its own. */
export type IndexedColumn = (typeof INDEXED_COLUMNS)[number];

/**
 * The event types, by kind, whose rows a reader may need decoded (`"any"`: every type of the kind); a
 * kind left out needs none.
 */
export type Decodable = ReadonlyMap<EventKind, ReadonlySet<string> | "any">;

export const isIndexedColumn = (s: string): s is IndexedColumn =>
  (INDEXED_COLUMNS as readonly string[]).includes(s);

export interface NewRow {
  readonly kind: EventKind;
  readonly source: Source;
  /** Admission time, ms; the writer keeps it non-decreasing. */
  readonly at: number;
  readonly event: EventFields;
  /** The client certificate the row was appended under, over mutual TLS (decision 0014). */
  readonly peer?: { readonly name: string; readonly fingerprint: string } | undefined;
}

interface StoredRow {
  seq: number;
  kind: EventKind;
  at: number;
  event: string;
}

/** An indexed column's value as the event holds it: a string, `is_error` as a bool, NULL as unset. */
const columnValue = (v: unknown): string | boolean | undefined =>
  typeof v === "string" ? v : typeof v === "number" ? v !== 0 : undefined;

/** An undecoded row's event: its type and the set `columns` read beside it (`pg/pg-journal.ts` too). */
export function knownFields(
  type: string,
  columns: readonly IndexedColumn[],
  values: readonly (string | boolean | undefined)[],
): EventFields {
  const event: Record<string, unknown> = { type };
  for (let i = 0; i < columns.length; i++)
    if (values[i] !== undefined) event[columns[i] as string] = values[i];
  return event as EventFields;
}

const toRow = (r: StoredRow): JournalRow => ({
  seq: r.seq,
  at: r.at,
  kind: r.kind,
  event: JSON.parse(r.event) as EventFields,
});

/** What a backtest replays (`../backtest/replay.ts`): the journal's bounds and its rows, typed and screened. */
export type ReplaySource = Pick<JournalTable, "firstAdmittedAfter" | "last" | "rowsInRangeTyped">;

export class JournalTable {
  private readonly insertRow;
  private readonly insertPath;
  private readonly after;
  private readonly since;
  private readonly lastStmt;
  private readonly firstAfterStmt;
  private readonly range;
  private readonly typedRanges = new Map<string, Database.Statement<unknown[]>>();

  constructor(private readonly db: Db) {
    const cols = [
      "kind",
      "type",
      "at",
      "source",
      ...INDEXED_COLUMNS,
      "event",
      "peer_name",
      "peer_fingerprint",
    ];
    this.insertRow = db.prepare(
      `INSERT INTO rule_journal (${cols.join(", ")}) VALUES (${cols.map((c) => `@${c}`).join(", ")})`,
    );
    this.insertPath = db.prepare("INSERT INTO rule_journal_paths (seq, ord, path) VALUES (?, ?, ?)");
    this.after = db.prepare(
      "SELECT seq, kind, at, event FROM rule_journal WHERE seq > ? ORDER BY seq LIMIT ?",
    );
    this.since = db.prepare(
      "SELECT seq, kind, at, event FROM rule_journal WHERE at > ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?",
    );
    this.lastStmt = db.prepare("SELECT seq, at FROM rule_journal ORDER BY seq DESC LIMIT 1");
    this.range = db
      .prepare(
        "SELECT seq, kind, at, event FROM rule_journal WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?",
      )
      .raw(true);
    this.firstAfterStmt = db.prepare("SELECT min(seq) AS seq FROM rule_journal WHERE at > ?");
  }

  /** Appends one row inside the caller's transaction; returns its seq. */
  append(row: NewRow): number {
    return this.appendAt(row, row.at);
  }

  /** `append`, at `at`: a batch gives its rows their time without a copy of each. */
  appendAt(row: Omit<NewRow, "at">, at: number): number {
    const indexed = indexRow({ seq: 0, at, kind: row.kind, event: row.event });
    const params: Record<string, unknown> = {
      kind: row.kind,
      type: row.event.type,
      at,
      source: row.source,
      event: JSON.stringify(row.event),
      peer_name: row.peer?.name ?? null,
      peer_fingerprint: row.peer?.fingerprint ?? null,
    };
    for (const c of INDEXED_COLUMNS) {
      const v = indexed.fields[c];
      params[c] = v === undefined ? null : typeof v === "boolean" ? (v ? 1 : 0) : v;
    }
    const seq = Number(this.insertRow.run(params).lastInsertRowid);
    indexed.paths.forEach((p, ord) => {
      this.insertPath.run(seq, ord, p);
    });
    return seq;
  }

  /** Up to `limit` rows after `seq`, in seq order. */
  rowsAfter(seq: number, limit: number): JournalRow[] {
    return (this.after.all(seq, limit) as StoredRow[]).map(toRow);
  }

  /**
   * Rows with seq in `(fromSeq, toSeq]` admitted after `afterAt`, in seq order, a page at a time: what a
   * window feed needs to look back from a cursor.
   */
  *pagesBetween(afterAt: number, fromSeq: number, toSeq: number, page = 5_000): Generator<JournalRow[]> {
    let from = fromSeq;
    for (;;) {
      const rows = this.since.all(afterAt, from, toSeq, page) as StoredRow[];
      if (rows.length > 0) yield rows.map(toRow);
      if (rows.length < page) return;
      from = (rows[rows.length - 1] as StoredRow).seq;
    }
  }

  /** Rows `fromSeq`..`toSeq` in seq order, read page by page on the primary key alone. */
  *rowsInRange(fromSeq: number, toSeq: number, page = 5_000): Generator<JournalRow> {
    let after = fromSeq - 1;
    for (;;) {
      // Raw arrays: the binding builds no object per row, the row is built once here.
      const rows = this.range.all(after, toSeq, page) as [number, EventKind, number, string][];
      for (const [seq, kind, at, event] of rows)
        yield { seq, kind, at, event: JSON.parse(event) as EventFields };
      if (rows.length < page) return;
      after = (rows[rows.length - 1] as [number, ...unknown[]])[0];
    }
  }

  /**
   * Rows `fromSeq`..`toSeq` as `rowsInRange` reads them, but with the event decoded only where
   * `readsEvent(kind, type, values)` says the reader needs more than its type (from the row's `type`
   * column) and the indexed `columns` (`values`, in `columns` order: a string, `is_error` as a bool,
   * `undefined` for NULL; an array refilled for each row); the others carry `{ type }` and those
   * columns' values alone. Where `decodable` is given, a row whose kind and type it rules out is not
   * asked about and its event text is not even read. A backtest reads a month of rows and needs few
   * of the events.
   */
  *rowsInRangeTyped(
    fromSeq: number,
    toSeq: number,
    readsEvent: (kind: EventKind, type: string, values: readonly (string | boolean | undefined)[]) => boolean,
    columns: readonly IndexedColumn[] = [],
    decodable?: Decodable,
    page = 5_000,
  ): Generator<JournalRow> {
    const { statement, params } = this.typedRangeWith(columns, decodable);
    const values: (string | boolean | undefined)[] = columns.map(() => undefined);
    let after = fromSeq - 1;
    for (;;) {
      const rows = statement.all(...params, after, toSeq, page) as unknown[][];
      for (const r of rows) {
        const [seq, kind, type, at] = r as [number, EventKind, string, number];
        for (let i = 0; i < values.length; i++) values[i] = columnValue(r[4 + i]);
        const text = r[r.length - 1];
        // A row stored without its type column is decoded: its type is in the event alone. A row
        // `decodable` rules out came without its event text.
        const decode = text !== null && (typeof type !== "string" || readsEvent(kind, type, values));
        yield {
          seq,
          kind,
          at,
          event: decode
            ? (JSON.parse(r[r.length - 1] as string) as EventFields)
            : knownFields(type, columns, values),
        };
      }
      if (rows.length < page) return;
      after = (rows[rows.length - 1] as [number, ...unknown[]])[0];
    }
  }

  /**
   * The typed range's statement reading `columns` too, and the event text only of the rows
   * `decodable` lets through (with the parameters that say which), prepared once per column list and
   * shape of `decodable`.
   */
  private typedRangeWith(
    columns: readonly IndexedColumn[],
    decodable: Decodable | undefined,
  ): { statement: Database.Statement<unknown[]>; params: unknown[] } {
    // Column names come from INDEXED_COLUMNS only, never from input; kinds and types are parameters.
    const extra = columns.map((c) => `, ${c}`).join("");
    let event = "event";
    const params: unknown[] = [];
    if (decodable !== undefined) {
      const terms = ["type IS NULL"];
      for (const [kind, types] of decodable) {
        if (types === "any") terms.push("kind = ?");
        else if (types.size > 0)
          terms.push(`(kind = ? AND type IN (${[...types].map(() => "?").join(", ")}))`);
        else continue;
        params.push(kind, ...(types === "any" ? [] : types));
      }
      event = `CASE WHEN ${terms.join(" OR ")} THEN event END`;
    }
    const sql = `SELECT seq, kind, type, at${extra}, ${event} FROM rule_journal WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?`;
    let statement = this.typedRanges.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql).raw(true);
      this.typedRanges.set(sql, statement);
    }
    return { statement, params };
  }

  /** The seq of the first row admitted after `at` (index-served), if any. */
  firstAdmittedAfter(at: number): number | undefined {
    const r = this.firstAfterStmt.get(at) as { seq: number | null };
    return r.seq ?? undefined;
  }

  /** The last row's seq and admission time (0 and 0 for an empty journal). */
  last(): { seq: number; at: number } {
    const r = this.lastStmt.get() as { seq: number; at: number } | undefined;
    return r ?? { seq: 0, at: 0 };
  }

  /** The admission time of the row `seq`, if it is still in the journal. */
  atOf(seq: number): number | undefined {
    const r = this.db.prepare("SELECT at FROM rule_journal WHERE seq = ?").get(seq) as
      | { at: number }
      | undefined;
    return r?.at;
  }
}
