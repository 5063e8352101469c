/**
 * `harness store copy` (issue 34): a SQLite store moved into an empty PostgreSQL database, verified row
 * for row. The SQLite store is read on a read-only connection in one read transaction (it may be a
 * running daemon's: the copy is one commit's store), every table in primary-key order, a bounded page
 * at a time (`../store-tables.ts`); the pages go into PostgreSQL in one transaction, all or nothing,
 * which holds the journal head's lock (no append can interleave) and first refuses a database that
 * holds anything. Then the head is set to the last row's seq and `at`, so the next append continues the
 * order (decision 0019), and each identity column moves past the copied ids. Last, both sides are read
 * again in the same order, SQLite from the same snapshot, and compared row for row, every column in a
 * canonical form: the first row that differs is reported with its table and key.
 */
import pg from "pg";
import { type OpenedStore, openStoreReadOnly } from "../open-store.js";
import {
  readSnapshot,
  type SqliteCell,
  STORE_TABLES,
  type StoreTable,
  type TableShape,
  tableRows,
  tableShape,
} from "../store-tables.js";
import { type OpenedPgStore, openPgStore } from "./open-pg-store.js";
import { inTransaction } from "./pg-client.js";

export class StoreCopyError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreCopyError";
  }
}

export interface StoreCopyOptions {
  /** Rows per statement, each way (default 1,000): what the copy holds in memory at once. */
  readonly page?: number;
  /**
   * Awaited inside the PostgreSQL transaction after each table's rows, before the next table: the tests
   * fail a copy midway there. A throw rolls every table back.
   */
  readonly afterTable?: (table: StoreTable) => Promise<void>;
}

export interface TableCount {
  readonly table: StoreTable;
  readonly sqlite: number;
  readonly postgres: number;
}

/** The first row that differs between the two stores: its table, its key, and each side's row. */
export interface CopyMismatch {
  readonly table: StoreTable;
  /** `column=value` for each key column, of whichever row comes first in key order. */
  readonly key: string;
  readonly sqlite: string | undefined;
  readonly postgres: string | undefined;
}

export interface StoreCopyReport {
  readonly source: string;
  readonly target: string;
  /** Each table's rows as verified on both sides, in copy order. */
  readonly tables: readonly TableCount[];
  /** The journal head as the copy left it. */
  readonly head: { readonly seq: number; readonly at: number };
  /** Undefined when every row of every table is equal on both sides. */
  readonly mismatch: CopyMismatch | undefined;
}

const DEFAULT_PAGE = 1_000;

/** A PostgreSQL column: its name and its type's name (`int8`, `text`, `bool`, `bytea`, `int4`). */
interface PgColumn {
  readonly name: string;
  readonly udt: string;
  readonly identity: boolean;
}

interface Table {
  readonly shape: TableShape;
  readonly pg: readonly PgColumn[];
}

type PgCell = string | boolean | Buffer | null;

const INT8_OID = 20;
/** BIGINTs read as their text for the verification, so no value past 2^53 is rounded. */
const exactTypes = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID
      ? (v: string) => v
      : pg.types.getTypeParser(oid, format ?? "text")) as typeof pg.types.getTypeParser,
};

/** Copies the SQLite store at `from` into the PostgreSQL database `to`, then verifies it row for row. */
export async function copyStore(
  from: string,
  to: pg.PoolConfig,
  options: StoreCopyOptions = {},
): Promise<StoreCopyReport> {
  const sqlite = openStoreReadOnly(from);
  let target: OpenedPgStore | undefined;
  try {
    target = await openPgStore({ ...to, max: 2 });
    return await copyOpened(sqlite, target, options);
  } finally {
    sqlite.close();
    await target?.close();
  }
}

async function copyOpened(
  sqlite: OpenedStore,
  target: OpenedPgStore,
  options: StoreCopyOptions,
): Promise<StoreCopyReport> {
  const page = options.page ?? DEFAULT_PAGE;
  const snapshot = readSnapshot(sqlite.db);
  try {
    const tables = await shapes(sqlite, target);
    const head = await copyTables(sqlite, target, tables, page, options);
    const { counts, mismatch } = await verify(sqlite, target, tables, page).catch((e: unknown) => {
      throw new StoreCopyError(
        `${target.name}: the copy is committed, but its verification did not finish: ${(e as Error).message}`,
        { cause: e },
      );
    });
    return { source: sqlite.path, target: target.name, tables: counts, head, mismatch };
  } finally {
    snapshot.end();
  }
}

/** Each table's shape on both sides; a table whose columns differ (another schema version) is refused. */
async function shapes(sqlite: OpenedStore, target: OpenedPgStore): Promise<Table[]> {
  const r = await target.pool.query<{
    table_name: string;
    column_name: string;
    udt_name: string;
    is_identity: string;
  }>(
    `SELECT table_name, column_name, udt_name, is_identity FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = ANY($1) ORDER BY table_name, ordinal_position`,
    [[...STORE_TABLES]],
  );
  const columns = new Map<string, PgColumn[]>();
  for (const c of r.rows)
    columns.set(c.table_name, [
      ...(columns.get(c.table_name) ?? []),
      { name: c.column_name, udt: c.udt_name, identity: c.is_identity === "YES" },
    ]);
  return STORE_TABLES.map((table) => {
    const shape = tableShape(sqlite.db, table);
    const pgColumns = columns.get(table) ?? [];
    const names = pgColumns.map((c) => c.name).join(", ");
    if (names !== shape.columns.join(", "))
      throw new StoreCopyError(
        `${target.name}: table ${table} has columns (${names}), the store (${shape.columns.join(", ")})`,
      );
    return { shape, pg: pgColumns };
  });
}

/** The tables that hold anything: every one but the evaluator's row as the schema seeds it. */
function nonEmptyQuery(): string {
  const held = (table: StoreTable) =>
    table === "evaluator"
      ? "SELECT 1 FROM evaluator WHERE NOT (id = 1 AND cursor = 0)"
      : `SELECT 1 FROM ${table}`;
  return [
    "SELECT 'journal_head' AS t WHERE EXISTS (SELECT 1 FROM journal_head WHERE seq <> 0 OR at <> 0)",
    ...STORE_TABLES.map((t) => `SELECT '${t}' WHERE EXISTS (${held(t)})`),
  ].join(" UNION ALL ");
}

async function copyTables(
  sqlite: OpenedStore,
  target: OpenedPgStore,
  tables: readonly Table[],
  page: number,
  options: StoreCopyOptions,
): Promise<{ seq: number; at: number }> {
  return inTransaction(target.pool, "BEGIN", async (client) => {
    // The journal's own lock (decision 0019): an append, or a second copy, waits for this one.
    await client.query("SELECT seq FROM journal_head WHERE id = 1 FOR UPDATE");
    const held = await client.query<{ t: string }>(nonEmptyQuery());
    if (held.rows.length > 0)
      throw new StoreCopyError(
        `${target.name} is not empty (${held.rows.map((r) => r.t).join(", ")}): a copy goes into an empty database only`,
      );
    // The schema's seeded row, replaced by the store's.
    await client.query("DELETE FROM evaluator");
    for (const table of tables) {
      await copyTable(client, sqlite, table, page);
      await options.afterTable?.(table.shape.table);
    }
    // Last before the commit: a sequence's move is not undone by a rollback.
    for (const table of tables)
      for (const c of table.pg)
        if (c.identity)
          await client.query(
            `SELECT setval(pg_get_serial_sequence('${table.shape.table}', '${c.name}'), (SELECT max(${c.name}) FROM ${table.shape.table}))`,
          );
    const head = await client.query<{ seq: number; at: number }>(
      `UPDATE journal_head SET seq = coalesce(m.seq, 0), at = coalesce(m.at, 0)
       FROM (SELECT max(seq) AS seq, max(at) AS at FROM rule_journal) m
       WHERE id = 1 RETURNING journal_head.seq, journal_head.at`,
    );
    return head.rows[0] as { seq: number; at: number };
  });
}

/** One table's rows, a page per statement: each page's columns as arrays, unnested into rows. */
async function copyTable(
  client: pg.PoolClient,
  sqlite: OpenedStore,
  table: Table,
  page: number,
): Promise<void> {
  const { shape } = table;
  const sql = `INSERT INTO ${shape.table} (${shape.columns.join(", ")}) SELECT * FROM unnest(${table.pg
    .map((c, i) => `$${i + 1}::${c.udt}[]`)
    .join(", ")})`;
  let cells: PgCell[][] = table.pg.map(() => []);
  let n = 0;
  const flush = async () => {
    if (n === 0) return;
    try {
      await client.query(sql, cells);
    } catch (e) {
      throw new StoreCopyError(`table ${shape.table}: ${(e as Error).message}`, { cause: e });
    }
    cells = table.pg.map(() => []);
    n = 0;
  };
  for (const row of tableRows(sqlite.db, shape, page)) {
    table.pg.forEach((c, i) => {
      (cells[i] as PgCell[]).push(
        toPg(c, row[i] as SqliteCell, () => `${shape.table} (${keyOf(shape, row)})`),
      );
    });
    n++;
    if (n === page) await flush();
  }
  await flush();
}

/** A SQLite cell as PostgreSQL's column takes it; one it cannot hold is refused with its table and key. */
function toPg(column: PgColumn, cell: SqliteCell, key: () => string): PgCell {
  if (cell === null) return null;
  const refuse = () => new StoreCopyError(`${key()}.${column.name}: ${typeOf(cell)} is not a ${column.udt}`);
  switch (column.udt) {
    case "bool":
      if (cell === 0n || cell === 1n) return cell === 1n;
      throw refuse();
    case "int8":
    case "int4":
      if (typeof cell === "bigint") return cell.toString();
      throw refuse();
    case "text":
      if (typeof cell === "string") return cell;
      throw refuse();
    case "bytea":
      if (Buffer.isBuffer(cell)) return cell;
      throw refuse();
    default:
      throw refuse();
  }
}

const typeOf = (cell: SqliteCell) =>
  Buffer.isBuffer(cell)
    ? "a blob"
    : typeof cell === "bigint"
      ? `the integer ${cell}`
      : `the ${typeof cell} ${JSON.stringify(cell)}`;

/** A cell in one form for both sides: a type letter and the value's text (flags as SQLite's 0 and 1). */
function canonical(cell: unknown): string | null {
  if (cell === null || cell === undefined) return null;
  if (typeof cell === "boolean") return cell ? "i1" : "i0";
  if (typeof cell === "bigint") return `i${cell}`;
  if (typeof cell === "number") return Number.isInteger(cell) ? `i${cell}` : `r${cell}`;
  if (typeof cell === "string") return `t${cell}`;
  if (Buffer.isBuffer(cell)) return `b${cell.toString("hex")}`;
  return `?${String(cell)}`;
}

/**
 * A row's cells in canonical form, as one text; `columns` says which of PostgreSQL's cells are integers
 * read as their text.
 */
const rowText = (row: readonly unknown[], columns?: readonly PgColumn[]) =>
  JSON.stringify(
    row.map((cell, i) => {
      const udt = columns?.[i]?.udt;
      return (udt === "int8" || udt === "int4") && cell !== null ? `i${String(cell)}` : canonical(cell);
    }),
  );

/** `column=value` for each key column of the row. */
function keyOf(shape: TableShape, row: readonly unknown[]): string {
  return shape.key.map((k) => `${k}=${String(row[shape.columns.indexOf(k)])}`).join(", ");
}

/** The table's rows on PostgreSQL in SQLite's key order (text keys in byte order), a page at a time. */
async function* postgresRows(client: pg.PoolClient, table: Table, page: number): AsyncGenerator<unknown[]> {
  const { shape } = table;
  const keyExpr = shape.key.map((k) => {
    const udt = table.pg.find((c) => c.name === k)?.udt;
    return udt === "text" ? `${k} COLLATE "C"` : k;
  });
  const order = keyExpr.join(", ");
  const base = `SELECT ${shape.columns.join(", ")} FROM ${shape.table}`;
  const n = shape.key.length;
  const first = `${base} ORDER BY ${order} LIMIT $1`;
  const next = `${base} WHERE (${order}) > (${shape.key.map((_, i) => `$${i + 1}`).join(", ")}) ORDER BY ${order} LIMIT $${n + 1}`;
  const keyAt = shape.key.map((k) => shape.columns.indexOf(k));
  let after: unknown[] | undefined;
  for (;;) {
    const r = await client.query<unknown[]>({
      text: after === undefined ? first : next,
      values: after === undefined ? [page] : [...after, page],
      rowMode: "array",
      types: exactTypes,
    });
    yield* r.rows;
    const last = r.rows.at(-1);
    if (last === undefined || r.rows.length < page) return;
    after = keyAt.map((i) => last[i]);
  }
}

/** Both sides read again in one order and compared row for row; PostgreSQL's in one snapshot. */
async function verify(
  sqlite: OpenedStore,
  target: OpenedPgStore,
  tables: readonly Table[],
  page: number,
): Promise<{ counts: TableCount[]; mismatch: CopyMismatch | undefined }> {
  const counts: TableCount[] = [];
  let mismatch: CopyMismatch | undefined;
  await inTransaction(target.pool, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", async (client) => {
    for (const table of tables) {
      const left = tableRows(sqlite.db, table.shape, page);
      const right = postgresRows(client, table, page);
      let sqliteCount = 0;
      let postgresCount = 0;
      for (;;) {
        const l = left.next();
        const r = await right.next();
        if (!l.done) sqliteCount++;
        if (!r.done) postgresCount++;
        if (l.done && r.done) break;
        const lText = l.done ? undefined : rowText(l.value);
        const rText = r.done ? undefined : rowText(r.value, table.pg);
        if (mismatch === undefined && lText !== rText)
          mismatch = {
            table: table.shape.table,
            key: keyOf(table.shape, (l.done ? r.value : l.value) as unknown[]),
            sqlite: lText,
            postgres: rText,
          };
      }
      counts.push({ table: table.shape.table, sqlite: sqliteCount, postgres: postgresCount });
    }
  });
  return { counts, mismatch };
}
