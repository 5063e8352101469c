/**
 * The journal read in seq order on PostgreSQL, streamed (issue 34 item 3): a backtest or an export over
 * a month of rows never holds more than one page of them. A `PgJournalSnapshot` is one connection in a
 * `READ ONLY REPEATABLE READ` transaction: its bounds (`last`, `firstAdmittedAfter`) and every stream
 * it opens read the same snapshot, so rows committed meanwhile are neither half-seen nor counted twice.
 * Each stream is a server-side cursor (`DECLARE … NO SCROLL CURSOR`), read with `FETCH FORWARD page`,
 * the next page asked for while the reader works through the last.
 *
 * Plain `DECLARE`/`FETCH` rather than the `pg-cursor` package: the snapshot's transaction is needed
 * anyway for the bounds and the rows to agree, and inside it a cursor is two statements node-postgres
 * already sends; a named cursor also lets several streams share the one transaction. No dependency
 * is added for it.
 */
import type pg from "pg";
import type { EventFields, JournalRow } from "../../../core/journal.js";
import type { EventKind } from "../../../core/kinds.js";
import { type Decodable, type IndexedColumn, knownFields } from "../journal-table.js";
import { checkout, giveBack } from "./pg-client.js";

/** Rows fetched per round trip unless a caller asks for another page; a stream holds two at most. */
export const STREAM_PAGE = 1_000;

/** Which rows a stream reads; every bound optional. Seq order always. */
export interface JournalStretch {
  /** `seq > afterSeq`. */
  readonly afterSeq?: number;
  /** `seq <= toSeq`. */
  readonly toSeq?: number;
  /** `at > afterAt`. */
  readonly afterAt?: number;
  /** `at <= untilAt`. */
  readonly untilAt?: number;
}

/** `rowsInRangeTyped`'s screen: whether a row's event is decoded, given its kind, type and `columns`. */
export type ReadsEvent = (
  kind: EventKind,
  type: string,
  values: readonly (string | boolean | undefined)[],
) => boolean;

export class PgJournalSnapshot {
  private cursors = 0;
  private fetched = 0;
  private yielded = 0;

  private constructor(private readonly client: pg.PoolClient) {}

  /** A connection of the pool in a read-only snapshot, until `close`. */
  static async open(pool: pg.Pool): Promise<PgJournalSnapshot> {
    const client = await checkout(pool);
    try {
      await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    } catch (e) {
      client.release(e as Error);
      throw e;
    }
    return new PgJournalSnapshot(client);
  }

  /** Ends the snapshot and gives the connection back. */
  async close(): Promise<void> {
    try {
      await this.client.query("COMMIT");
      giveBack(this.client);
    } catch (e) {
      // A connection whose transaction could not end is not given back to the pool.
      this.client.release(e as Error);
      throw e;
    }
  }

  /**
   * Rows fetched from the server and not yet handed on: never more than two pages, the one being
   * handed on and the next.
   */
  get held(): number {
    return this.fetched - this.yielded;
  }

  /** The seq of the first row admitted after `at`, if any. */
  async firstAdmittedAfter(at: number): Promise<number | undefined> {
    const r = await this.client.query<{ seq: number | null }>(
      "SELECT min(seq) AS seq FROM rule_journal WHERE at > $1",
      [at],
    );
    return r.rows[0]?.seq ?? undefined;
  }

  /** The last row's seq and admission time in the snapshot (0 and 0 for an empty journal). */
  async last(): Promise<{ seq: number; at: number }> {
    const r = await this.client.query<{ seq: number; at: number }>(
      "SELECT seq, at FROM rule_journal ORDER BY seq DESC LIMIT 1",
    );
    return r.rows[0] ?? { seq: 0, at: 0 };
  }

  /** The rows of `stretch` in seq order, decoded, `page` at a time. */
  async *rows(stretch: JournalStretch, page = STREAM_PAGE): AsyncGenerator<JournalRow> {
    const terms: string[] = [];
    const params: number[] = [];
    const bound = (term: string, v: number | undefined) => {
      if (v === undefined) return;
      params.push(v);
      terms.push(`${term} $${params.length}`);
    };
    bound("seq >", stretch.afterSeq);
    bound("seq <=", stretch.toSeq);
    bound("at >", stretch.afterAt);
    bound("at <=", stretch.untilAt);
    const where = terms.length === 0 ? "" : ` WHERE ${terms.join(" AND ")}`;
    const sql = `SELECT seq, kind, at, event FROM rule_journal${where} ORDER BY seq`;
    for await (const rows of this.pages(sql, params, page))
      for (const r of rows) {
        this.yielded++;
        const [seq, kind, at, event] = r as [number, EventKind, number, string];
        yield { seq, kind, at, event: JSON.parse(event) as EventFields };
      }
  }

  /**
   * SQLite's `JournalTable.rowsInRangeTyped`, streamed: rows `fromSeq`..`toSeq`, the event decoded only
   * where `readsEvent` says the reader needs more than its type and the indexed `columns`, and its text
   * not even sent for a row `decodable` rules out.
   */
  async *rowsInRangeTyped(
    fromSeq: number,
    toSeq: number,
    readsEvent: ReadsEvent,
    columns: readonly IndexedColumn[] = [],
    decodable?: Decodable,
    page = STREAM_PAGE,
  ): AsyncGenerator<JournalRow> {
    // Column names come from INDEXED_COLUMNS only, never from input; kinds and types are parameters.
    const params: unknown[] = [];
    const p = (v: unknown) => {
      params.push(v);
      return `$${params.length}`;
    };
    let event = "event";
    if (decodable !== undefined) {
      const terms: string[] = [];
      for (const [kind, types] of decodable)
        if (types === "any") terms.push(`kind = ${p(kind)}`);
        else if (types.size > 0) terms.push(`(kind = ${p(kind)} AND type = ANY(${p([...types])}::text[]))`);
      event = terms.length === 0 ? "NULL" : `CASE WHEN ${terms.join(" OR ")} THEN event END`;
    }
    const extra = columns.map((c) => `, ${c}`).join("");
    const sql = `SELECT seq, kind, type, at${extra}, ${event} AS event FROM rule_journal WHERE seq >= ${p(fromSeq)} AND seq <= ${p(toSeq)} ORDER BY seq`;
    const values: (string | boolean | undefined)[] = columns.map(() => undefined);
    for await (const rows of this.pages(sql, params, page))
      for (const row of rows) {
        this.yielded++;
        const [seq, kind, type, at] = row as [number, EventKind, string, number];
        for (let i = 0; i < values.length; i++) {
          const v = row[4 + i];
          values[i] = typeof v === "string" || typeof v === "boolean" ? v : undefined;
        }
        const text = row[row.length - 1];
        yield {
          seq,
          kind,
          at,
          event:
            typeof text === "string" && readsEvent(kind, type, values)
              ? (JSON.parse(text) as EventFields)
              : knownFields(type, columns, values),
        };
      }
  }

  /**
   * The rows of `sql` through a cursor of their own, as arrays, a page per round trip; the next page is
   * asked for before this one is handed on, so the server reads it while the reader works (two pages
   * held at most). The cursor is closed when the reader stops, early or at the end.
   */
  private async *pages(sql: string, params: readonly unknown[], page: number): AsyncGenerator<unknown[][]> {
    if (!Number.isSafeInteger(page) || page < 1) throw new RangeError(`page ${page} is not a row count`);
    const name = `journal_rows_${++this.cursors}`;
    await this.client.query(`DECLARE ${name} NO SCROLL CURSOR FOR ${sql}`, [...params]);
    const query = { text: `FETCH FORWARD ${page} FROM ${name}`, rowMode: "array" as const };
    let failed = false;
    const fetch = async (): Promise<unknown[][]> => {
      try {
        const { rows } = await this.client.query<unknown[]>(query);
        this.fetched += rows.length;
        return rows;
      } catch (e) {
        // The transaction is aborted: the cursor goes with it, and CLOSE would only fail too.
        failed = true;
        throw e;
      }
    };
    // A page asked for ahead is awaited only when it is wanted: its failure is handled there, not
    // reported as unhandled while the reader is busy with the page before it.
    const ahead = (): Promise<unknown[][]> => {
      const p = fetch();
      p.catch(() => {});
      return p;
    };
    let next: Promise<unknown[][]> | undefined = ahead();
    try {
      while (next !== undefined) {
        const rows: unknown[][] = await next;
        next = rows.length < page ? undefined : ahead();
        yield rows;
      }
    } finally {
      // A page asked for and not handed on is awaited (its failure ends the snapshot anyway), then dropped.
      await next?.catch(() => {});
      this.yielded = this.fetched;
      if (!failed) await this.client.query(`CLOSE ${name}`);
    }
  }
}
