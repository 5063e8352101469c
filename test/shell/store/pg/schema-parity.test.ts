/**
 * The two backends' schemas in step (src/shell/store/pg/pg-schema.ts): both hold the same tables, but
 * PostgreSQL's own listed here; each with the same columns (names, order, nullability and kind of type),
 * primary key, unique keys, foreign keys (with their ON DELETE) and indexes, and text compared by its
 * bytes as SQLite compares it (but in V1's journal tables). A SQLite migration that
 * changes a table fails here until PostgreSQL's migration follows.
 */
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { MIGRATIONS } from "../../../../src/shell/store/schema.js";
import { openFreshPgStore } from "./pg-store.js";

/**
 * PostgreSQL's own tables: the schema's version row, the journal's head (decision 0019) and the leader's
 * lease (decision 0022).
 */
const POSTGRES_ONLY = ["harness_lease", "harness_schema", "journal_head"];

/** SQLite's declared type → PostgreSQL's, by kind: integers are BIGINT or INTEGER, flags BOOLEAN. */
const SAME_KIND: Readonly<Record<string, readonly string[]>> = {
  INTEGER: ["bigint", "integer", "boolean"],
  TEXT: ["text"],
  BLOB: ["bytea"],
};

/** SQLite's ON DELETE as pragma foreign_key_list says it, from PostgreSQL's pg_constraint.confdeltype. */
const ON_DELETE: Readonly<Record<string, string>> = {
  a: "NO ACTION",
  r: "RESTRICT",
  c: "CASCADE",
  n: "SET NULL",
  d: "SET DEFAULT",
};

interface Column {
  readonly name: string;
  readonly type: string;
  readonly notNull: boolean;
}

/** What a table's keys are, each as text for one comparison: `cols`, `cols where` for a partial one. */
interface Keys {
  readonly primary: string;
  readonly unique: readonly string[];
  readonly foreign: readonly string[];
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

  const sqliteTables = (): string[] =>
    (
      sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
        name: string;
      }[]
    ).map((t) => t.name);

  const sqliteColumns = (table: string): Column[] =>
    (
      sqlite.pragma(`table_info(${table})`) as { name: string; type: string; notnull: number; pk: number }[]
    ).map((c) => ({ name: c.name, type: c.type, notNull: c.notnull === 1 || c.pk > 0 }));

  function sqliteKeys(table: string): Keys {
    const info = sqlite.pragma(`table_info(${table})`) as { name: string; pk: number }[];
    const primary = info
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name)
      .join(", ");
    const unique = (
      sqlite.pragma(`index_list(${table})`) as {
        name: string;
        unique: number;
        origin: string;
        partial: number;
      }[]
    )
      .filter((i) => i.unique === 1 && i.origin !== "pk")
      .map((i) => {
        const cols = (sqlite.pragma(`index_info(${i.name})`) as { name: string }[]).map((c) => c.name);
        return `${cols.join(", ")}${i.partial === 1 ? " partial" : ""}`;
      })
      .sort();
    const foreign = (
      sqlite.pragma(`foreign_key_list(${table})`) as {
        table: string;
        from: string;
        to: string;
        on_delete: string;
      }[]
    )
      .map((f) => `${f.from} → ${f.table} (${f.to}) ON DELETE ${f.on_delete}`)
      .sort();
    return { primary, unique, foreign };
  }

  async function postgresKeys(table: string): Promise<Keys> {
    const cols = (attnums: string) =>
      `(SELECT string_agg(a.attname, ', ' ORDER BY k.ord) FROM unnest(${attnums}) WITH ORDINALITY AS k(num, ord)
        JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.num)`;
    const indexes = await store.pool.query<{ cols: string; primary: boolean; partial: boolean }>(
      `SELECT ${cols("i.indkey::int2[]")} AS cols, i.indisprimary AS primary, i.indpred IS NOT NULL AS partial
       FROM pg_index i WHERE i.indrelid = $1::regclass AND i.indisunique`,
      [table],
    );
    const foreign = await store.pool.query<{ fk: string }>(
      `SELECT (SELECT string_agg(a.attname, ', ') FROM unnest(c.conkey) k JOIN pg_attribute a
                ON a.attrelid = c.conrelid AND a.attnum = k)
              || ' → ' || c.confrelid::regclass::text || ' ('
              || (SELECT string_agg(a.attname, ', ') FROM unnest(c.confkey) k JOIN pg_attribute a
                ON a.attrelid = c.confrelid AND a.attnum = k)
              || ') ON DELETE ' || c.confdeltype::text AS fk
       FROM pg_constraint c WHERE c.conrelid = $1::regclass AND c.contype = 'f'`,
      [table],
    );
    return {
      primary: indexes.rows.find((i) => i.primary)?.cols ?? "",
      unique: indexes.rows
        .filter((i) => !i.primary)
        .map((i) => `${i.cols}${i.partial ? " partial" : ""}`)
        .sort(),
      foreign: foreign.rows
        .map((f) => f.fk.replace(/ON DELETE (\w)$/, (_, t: string) => `ON DELETE ${ON_DELETE[t] ?? t}`))
        .sort(),
    };
  }

  it("holds the same tables on both backends, but PostgreSQL's own", async () => {
    const postgres = [...(await postgresColumns()).keys()].sort();
    expect(postgres.filter((t) => !POSTGRES_ONLY.includes(t))).toEqual(sqliteTables());
    expect(postgres.filter((t) => sqliteColumns(t).length === 0)).toEqual(POSTGRES_ONLY);
  });

  it("gives each table SQLite's columns, in SQLite's order, of the same kind and nullability", async () => {
    const tables = await postgresColumns();
    for (const table of sqliteTables()) {
      const want = sqliteColumns(table);
      const columns = tables.get(table) ?? [];
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

  it("gives each table SQLite's primary key, unique keys and foreign keys with their ON DELETE", async () => {
    for (const table of sqliteTables()) expect(await postgresKeys(table), table).toEqual(sqliteKeys(table));
  });

  it("compares text by its bytes, as SQLite does, but in the journal's tables of PostgreSQL's V1", async () => {
    // V1's text columns take the database's collation (a database made with LC_ALL=C, as the tests'
    // cluster is, compares by bytes); every later table sorts and ranges over text as SQLite does.
    const r = await store.pool.query<{ t: string }>(
      `SELECT table_name || '.' || column_name AS t FROM information_schema.columns
       WHERE table_schema = 'public' AND data_type = 'text' AND collation_name IS DISTINCT FROM 'C'
       AND table_name NOT IN ('rule_journal', 'rule_journal_paths', 'journal_appends')`,
    );
    expect(r.rows.map((c) => c.t)).toEqual([]);
  });

  it("gives the tables SQLite's indexes, by name", async () => {
    const r = await store.pool.query<{ indexname: string }>(
      "SELECT indexname FROM pg_indexes WHERE schemaname = 'public'",
    );
    const postgres = new Set(r.rows.map((i) => i.indexname));
    const sqliteIndexes = sqlite
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
      .all() as { name: string }[];
    expect(sqliteIndexes.map((i) => i.name).filter((n) => !postgres.has(n))).toEqual([]);
  });
});
