/**
 * The two backends' schemas in step (src/shell/store/pg/pg-schema.ts): every table PostgreSQL holds has
 * SQLite's columns, with the same names, nullability and kind of type, and SQLite's indexes, but for
 * those listed here with why; the tables PostgreSQL alone has are listed too. A SQLite migration that
 * changes a table PostgreSQL holds fails here until PostgreSQL's migration follows.
 */
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { MIGRATIONS } from "../../../../src/shell/store/schema.js";
import { openFreshPgStore } from "./pg-store.js";

/** PostgreSQL's own tables: the schema's version row and the journal's head (decision 0019). */
const POSTGRES_ONLY = ["harness_schema", "journal_head"];

/** SQLite's indexes on shared tables that PostgreSQL does not have yet, each with why. */
const INDEXES_NOT_YET: Readonly<Record<string, string>> = {
  rule_journal_graph_from: "propose_rule's evidence ids (json_extract): with the proposals' store",
  rule_journal_graph_to: "propose_rule's evidence ids (json_extract): with the proposals' store",
  rule_journal_fact_subject: "propose_rule's evidence ids (json_extract): with the proposals' store",
};

/** SQLite's declared type → PostgreSQL's, by kind: integers are BIGINT or INTEGER, booleans are BOOLEAN. */
const SAME_KIND: Readonly<Record<string, readonly string[]>> = {
  INTEGER: ["bigint", "integer", "boolean"],
  TEXT: ["text"],
  BLOB: ["bytea"],
};

interface Column {
  readonly name: string;
  readonly type: string;
  readonly notNull: boolean;
}

describe("the PostgreSQL schema beside SQLite's", () => {
  let store: OpenedPgStore;
  const sqlite = new Database(":memory:");

  beforeAll(async () => {
    store = await openFreshPgStore("schema_parity");
    for (const m of MIGRATIONS) sqlite.exec(m);
  });
  afterAll(async () => {
    sqlite.close();
    await store?.close();
  });

  async function postgresColumns(): Promise<Map<string, Column[]>> {
    const r = await store.pool.query<{
      table_name: string;
      column_name: string;
      data_type: string;
      is_nullable: string;
    }>(
      `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
       WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`,
    );
    const tables = new Map<string, Column[]>();
    for (const c of r.rows)
      tables.set(c.table_name, [
        ...(tables.get(c.table_name) ?? []),
        { name: c.column_name, type: c.data_type, notNull: c.is_nullable === "NO" },
      ]);
    return tables;
  }

  const sqliteColumns = (table: string): Column[] =>
    (
      sqlite.pragma(`table_info(${table})`) as { name: string; type: string; notnull: number; pk: number }[]
    ).map((c) => ({ name: c.name, type: c.type, notNull: c.notnull === 1 || c.pk > 0 }));

  it("gives each table PostgreSQL holds SQLite's columns, or is one of PostgreSQL's own", async () => {
    const tables = await postgresColumns();
    expect([...tables.keys()].filter((t) => sqliteColumns(t).length === 0).sort()).toEqual(POSTGRES_ONLY);
    for (const [table, columns] of tables) {
      const want = sqliteColumns(table);
      if (want.length === 0) continue;
      expect(
        columns.map((c) => c.name),
        table,
      ).toEqual(want.map((c) => c.name));
      columns.forEach((c, i) => {
        const w = want[i] as Column;
        expect(SAME_KIND[w.type], `${table}.${c.name}: SQLite ${w.type}, PostgreSQL ${c.type}`).toContain(
          c.type,
        );
        expect(c.notNull, `${table}.${c.name} NOT NULL`).toBe(w.notNull);
      });
    }
  });

  it("gives the tables PostgreSQL holds SQLite's indexes, but for those listed with why", async () => {
    const tables = [...(await postgresColumns()).keys()];
    const r = await store.pool.query<{ indexname: string }>(
      "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND tablename = ANY($1)",
      [tables],
    );
    const postgres = new Set(r.rows.map((i) => i.indexname));
    const sqliteIndexes = sqlite
      .prepare(
        `SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL
         AND tbl_name IN (${tables.map(() => "?").join(", ")})`,
      )
      .all(...tables) as { name: string }[];
    const missing = sqliteIndexes.map((i) => i.name).filter((n) => !postgres.has(n));
    expect(missing.sort()).toEqual(Object.keys(INDEXES_NOT_YET).sort());
  });
});
