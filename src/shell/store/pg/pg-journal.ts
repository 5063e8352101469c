/**
 * The journal on PostgreSQL (issue 34, decision 0019): the operations of SQLite's `JournalCommits`,
 * `JournalTable` and `JournalAppends`, asynchronous. One order, from the database: each append
 * transaction first locks the head row (`journal_head`), takes its seqs as the next ones after the head's
 * and its `at` as the later of the head's and the database's clock, and holds the lock until it has
 * committed; so transactions commit in seq order, seqs have no gaps, and `at` never goes back whatever the
 * clocks of the hosts that write. A reader in seq order can never pass a row that commits later.
 *
 * The mapping: `commit(groups)` is the journal writer's `JournalCommits.commit` around
 * `JournalAppends.answer`, `JournalTable.append` and `JournalAppends.record` (a transaction as data,
 * since its statements are round trips); `answer` and the reads keep SQLite's names and meaning, their
 * generators asynchronous (test/shell/store/pg/journal-contract.test.ts holds them to SQLite's).
 */
import type pg from "pg";
import type { EventFields, JournalRow } from "../../../core/journal.js";
import { indexRow } from "../../../core/journal.js";
import type { EventKind } from "../../../core/kinds.js";
import { type Decodable, type IndexedColumn, knownFields } from "../journal-table.js";
import { INDEXED_COLUMNS } from "../schema.js";
import type { GroupKey, GroupResult, PendingGroup, PendingRow } from "../write-ports.js";
import { inTransaction } from "./pg-client.js";

/** The write path's shapes (`../write-ports.ts`), under the names this module's callers use. */
export type PgNewRow = PendingRow;
export type PgGroupKey = GroupKey;
export type PgGroup = PendingGroup;
export type PgGroupResult = GroupResult;

/** A committed batch: each group's result, and the `at` its rows got (0 when none was appended). */
export interface PgCommitted {
  readonly at: number;
  readonly results: readonly PgGroupResult[];
}

export interface PgJournalOptions {
  /**
   * Awaited inside each append transaction, after its rows and before its commit, holding the head's
   * lock (what the `admit.beforeCommit` failpoint is to SQLite's writer): the order tests pause or fail
   * transactions there. A throw rolls the batch back.
   */
  readonly beforeCommit?: () => Promise<void>;
}

/** What else one append transaction does. */
export interface PgCommitOptions {
  /** The commit need not wait for the disk: `synchronous_commit` is off for this transaction alone. */
  readonly unsynced?: boolean;
  /** Run after the rows and before `beforeCommit`, holding the head's lock (derived rows' writes). */
  readonly extra?: (client: pg.PoolClient, seqs: readonly number[]) => Promise<void>;
  /** As `PgJournalOptions.beforeCommit`, for this transaction alone (a failpoint). */
  readonly beforeCommit?: () => void;
}

/** How long a key is kept: SQLite's `APPEND_KEY_TTL_MS`, the same hour. */
const APPEND_KEY_TTL_MS = 60 * 60 * 1000;

const ROW_COLUMNS = [
  "seq",
  "kind",
  "type",
  "source",
  ...INDEXED_COLUMNS,
  "event",
  "peer_name",
  "peer_fingerprint",
] as const;
const ROW_TYPES: Readonly<Record<string, string>> = { seq: "bigint", is_error: "boolean" };
const arrayType = (c: string) => `${ROW_TYPES[c] ?? "text"}[]`;

/**
 * The statement that advances the head and appends a batch, one round trip: its rows from column arrays
 * (`$1`.. in ROW_COLUMNS order), their paths, the keys and the pruning of keys past their hour, all with
 * the head's new `at`. The head was locked by the transaction's first statement.
 */
const APPEND = (() => {
  const n = ROW_COLUMNS.length;
  const p = (i: number) => `$${i}`;
  const rowArrays = ROW_COLUMNS.map((c, i) => `${p(i + 1)}::${arrayType(c)}`).join(", ");
  const names = ROW_COLUMNS.join(", ");
  const last = n + 1; // the last seq
  const paths = [n + 2, n + 3, n + 4];
  const keys = [n + 5, n + 6, n + 7];
  const ttl = n + 8;
  return `
WITH head AS (
  UPDATE journal_head
  SET seq = ${p(last)}, at = greatest(at, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)
  WHERE id = 1
  RETURNING at
), journal AS (
  INSERT INTO rule_journal (${names}, at)
  SELECT r.*, head.at FROM head, unnest(${rowArrays}) AS r(${names})
), paths AS (
  INSERT INTO rule_journal_paths (seq, ord, path)
  SELECT * FROM unnest(${p(paths[0] as number)}::bigint[], ${p(paths[1] as number)}::integer[], ${p(paths[2] as number)}::text[])
), keys AS (
  INSERT INTO journal_appends (source, key, answer, created_at)
  SELECT k.source, k.key, k.answer, head.at
  FROM head, unnest(${p(keys[0] as number)}::text[], ${p(keys[1] as number)}::text[], ${p(keys[2] as number)}::text[]) AS k(source, key, answer)
), pruned AS (
  DELETE FROM journal_appends WHERE created_at < (SELECT at FROM head) - ${p(ttl)}
)
SELECT at FROM head`;
})();

type Cell = string | number | boolean | null;

interface StoredRow {
  seq: number;
  kind: EventKind;
  at: number;
  event: string;
}

const toRow = (r: StoredRow): JournalRow => ({
  seq: r.seq,
  at: r.at,
  kind: r.kind,
  event: JSON.parse(r.event) as EventFields,
});

export class PgJournal {
  constructor(
    private readonly pool: pg.Pool,
    private readonly options: PgJournalOptions = {},
  ) {}

  /**
   * Commits `groups` in one transaction, in order: a group whose key is already stored appends nothing
   * and gets the stored answer. Resolves once committed; rejects, with nothing committed, otherwise.
   */
  commit(groups: readonly PgGroup[], options: PgCommitOptions = {}): Promise<PgCommitted> {
    // Read committed whatever the server's default: after waiting for the head, the lock's statement
    // reads the head as the transaction before left it, and each later statement sees that one's rows.
    return inTransaction(this.pool, "BEGIN ISOLATION LEVEL READ COMMITTED", async (client) => {
      if (options.unsynced === true) await client.query("SET LOCAL synchronous_commit = off");
      // The head's lock, held to the commit: every append transaction waits here for the one before it.
      const head = await client.query<{ seq: number; at: number }>({
        name: "journal-head",
        text: "SELECT seq, at FROM journal_head WHERE id = 1 FOR UPDATE",
      });
      const start = head.rows[0];
      if (start === undefined) throw new Error("journal_head has no row");
      // Read after the lock, so every key committed before is seen: keys are written under it alone.
      const stored = await this.storedAnswers(client, groups);
      const results: PgGroupResult[] = [];
      const cells: Cell[][] = ROW_COLUMNS.map(() => []);
      const paths: [number[], number[], string[]] = [[], [], []];
      const keys: [string[], string[], string[]] = [[], [], []];
      let seq = start.seq;
      for (const g of groups) {
        const answer = g.key === undefined ? undefined : stored.get(keyOf(g.key.source, g.key.key));
        if (answer !== undefined) {
          results.push({ kind: "repeated", answer });
          continue;
        }
        const seqs: number[] = [];
        for (const row of g.rows) {
          seq++;
          seqs.push(seq);
          addRow(cells, paths, seq, row);
        }
        if (g.key !== undefined) {
          keys[0].push(g.key.source);
          keys[1].push(g.key.key);
          keys[2].push(g.key.answer(seqs));
          // A key given twice in one batch: the later group repeats the earlier.
          stored.set(keyOf(g.key.source, g.key.key), keys[2].at(-1) as string);
        }
        results.push({ kind: "committed", seqs });
      }
      let at = 0;
      if (seq > start.seq) {
        // Named, so each connection parses and plans it once: it runs while the head is held.
        const r = await client.query<{ at: number }>({
          name: "journal-append",
          text: APPEND,
          values: [...cells, seq, ...paths, ...keys, APPEND_KEY_TTL_MS],
        });
        at = (r.rows[0] as { at: number }).at;
      }
      if (options.extra !== undefined)
        await options.extra(
          client,
          results.flatMap((r) => (r.kind === "committed" ? r.seqs : [])),
        );
      options.beforeCommit?.();
      await this.options.beforeCommit?.();
      return { at, results };
    });
  }

  private async storedAnswers(
    client: pg.PoolClient,
    groups: readonly PgGroup[],
  ): Promise<Map<string, string>> {
    const sources: string[] = [];
    const keys: string[] = [];
    for (const g of groups)
      if (g.key !== undefined) {
        sources.push(g.key.source);
        keys.push(g.key.key);
      }
    const found = new Map<string, string>();
    if (keys.length === 0) return found;
    const r = await client.query<{ source: string; key: string; answer: string }>(
      `SELECT a.source, a.key, a.answer FROM journal_appends a
       JOIN unnest($1::text[], $2::text[]) AS k(source, key) ON a.source = k.source AND a.key = k.key`,
      [sources, keys],
    );
    for (const row of r.rows) found.set(keyOf(row.source, row.key), row.answer);
    return found;
  }

  /** The answer stored for the key, or undefined. */
  async answer(source: string, key: string): Promise<string | undefined> {
    const r = await this.pool.query<{ answer: string }>(
      "SELECT answer FROM journal_appends WHERE source = $1 AND key = $2",
      [source, key],
    );
    return r.rows[0]?.answer;
  }

  /** Up to `limit` rows after `seq`, in seq order. */
  async rowsAfter(seq: number, limit: number): Promise<JournalRow[]> {
    const r = await this.pool.query<StoredRow>(
      "SELECT seq, kind, at, event FROM rule_journal WHERE seq > $1 ORDER BY seq LIMIT $2",
      [seq, limit],
    );
    return r.rows.map(toRow);
  }

  /**
   * Rows with seq in `(fromSeq, toSeq]` admitted after `afterAt`, in seq order, a page at a time
   * (SQLite's `rowsBetween`).
   */
  async *rowsBetween(
    afterAt: number,
    fromSeq: number,
    toSeq: number,
    page = 5_000,
  ): AsyncGenerator<JournalRow> {
    let from = fromSeq;
    for (;;) {
      const r = await this.pool.query<StoredRow>(
        "SELECT seq, kind, at, event FROM rule_journal WHERE at > $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4",
        [afterAt, from, toSeq, page],
      );
      for (const row of r.rows) yield toRow(row);
      if (r.rows.length < page) return;
      from = (r.rows[r.rows.length - 1] as StoredRow).seq;
    }
  }

  /**
   * SQLite's `rowsInRangeTyped`: rows `fromSeq`..`toSeq`, the event decoded only where `readsEvent`
   * says the reader needs more than its type and the indexed `columns`, and its text not even read
   * for a row `decodable` rules out.
   */
  async *rowsInRangeTyped(
    fromSeq: number,
    toSeq: number,
    readsEvent: (kind: EventKind, type: string, values: readonly (string | boolean | undefined)[]) => boolean,
    columns: readonly IndexedColumn[] = [],
    decodable?: Decodable,
    page = 5_000,
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
    const after = params.length + 1;
    const sql = `SELECT seq, kind, type, at${extra}, ${event} AS event FROM rule_journal WHERE seq > $${after} AND seq <= $${after + 1} ORDER BY seq LIMIT $${after + 2}`;
    const values: (string | boolean | undefined)[] = columns.map(() => undefined);
    let from = fromSeq - 1;
    for (;;) {
      const r = await this.pool.query<unknown[]>({
        text: sql,
        values: [...params, from, toSeq, page],
        rowMode: "array",
      });
      for (const row of r.rows) {
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
      if (r.rows.length < page) return;
      from = (r.rows[r.rows.length - 1] as [number, ...unknown[]])[0];
    }
  }

  /** Rows `fromSeq`..`toSeq` in seq order, read a page at a time on the primary key. */
  async *rowsInRange(fromSeq: number, toSeq: number, page = 5_000): AsyncGenerator<JournalRow> {
    let after = fromSeq - 1;
    for (;;) {
      const r = await this.pool.query<StoredRow>(
        "SELECT seq, kind, at, event FROM rule_journal WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3",
        [after, toSeq, page],
      );
      for (const row of r.rows) yield toRow(row);
      if (r.rows.length < page) return;
      after = (r.rows[r.rows.length - 1] as StoredRow).seq;
    }
  }

  /** The seq of the first row admitted after `at` (index-served), if any. */
  async firstAdmittedAfter(at: number): Promise<number | undefined> {
    const r = await this.pool.query<{ seq: number | null }>(
      "SELECT min(seq) AS seq FROM rule_journal WHERE at > $1",
      [at],
    );
    return r.rows[0]?.seq ?? undefined;
  }

  /** The last committed row's seq and admission time (0 and 0 for an empty journal). */
  async last(): Promise<{ seq: number; at: number }> {
    const r = await this.pool.query<{ seq: number; at: number }>(
      "SELECT seq, at FROM rule_journal ORDER BY seq DESC LIMIT 1",
    );
    return r.rows[0] ?? { seq: 0, at: 0 };
  }

  /** The admission time of the row `seq`, if it is still in the journal. */
  async atOf(seq: number): Promise<number | undefined> {
    const r = await this.pool.query<{ at: number }>("SELECT at FROM rule_journal WHERE seq = $1", [seq]);
    return r.rows[0]?.at;
  }
}

const keyOf = (source: string, key: string) => `${source}\u0000${key}`;

/** Adds a row's cells (ROW_COLUMNS order) and its paths to the batch's column arrays. */
function addRow(cells: Cell[][], paths: [number[], number[], string[]], seq: number, row: PgNewRow): void {
  const indexed = indexRow({ seq, at: 0, kind: row.kind, event: row.event });
  const values: Record<string, Cell> = {
    seq,
    kind: row.kind,
    type: row.event.type,
    source: row.source,
    event: JSON.stringify(row.event),
    peer_name: row.peer?.name ?? null,
    peer_fingerprint: row.peer?.fingerprint ?? null,
  };
  for (const c of INDEXED_COLUMNS) values[c] = indexed.fields[c] ?? null;
  ROW_COLUMNS.forEach((c, i) => {
    (cells[i] as Cell[]).push(values[c] ?? null);
  });
  indexed.paths.forEach((p, ord) => {
    paths[0].push(seq);
    paths[1].push(ord);
    paths[2].push(p);
  });
}
