/**
 * Bench rows into a PostgreSQL journal with raw batched inserts (building is not what the benches
 * measure): the journal's columns from unnested arrays, the rows' paths beside them.
 */
import { indexRow } from "../src/core/journal.js";
import type { OpenedPgStore } from "../src/shell/store/pg/open-pg-store.js";
import { INDEXED_COLUMNS } from "../src/shell/store/schema.js";
import type { BenchRow } from "./journal-rows.js";

const PG_COLUMNS = ["seq", "kind", "type", "at", "source", ...INDEXED_COLUMNS, "event"] as const;
const PG_TYPES: Readonly<Record<string, string>> = { seq: "bigint", at: "bigint", is_error: "boolean" };
const PG_INSERT = `INSERT INTO rule_journal (${PG_COLUMNS.join(", ")})
SELECT * FROM unnest(${PG_COLUMNS.map((c, i) => `$${i + 1}::${PG_TYPES[c] ?? "text"}[]`).join(", ")})`;
const PG_PATHS = `INSERT INTO rule_journal_paths (seq, ord, path)
SELECT * FROM unnest($1::bigint[], $2::integer[], $3::text[])`;

type Cell = string | number | boolean | null;

/** `rows` with seqs from `firstSeq`, in two statements. */
export async function pgInsert(
  store: OpenedPgStore,
  rows: readonly BenchRow[],
  firstSeq: number,
): Promise<void> {
  const cells: Cell[][] = PG_COLUMNS.map(() => []);
  const paths: [number[], number[], string[]] = [[], [], []];
  rows.forEach((row, i) => {
    const seq = firstSeq + i;
    const indexed = indexRow({ seq, at: row.at, kind: row.kind, event: row.event });
    const values: Record<string, Cell> = {
      seq,
      kind: row.kind,
      type: row.event.type,
      at: row.at,
      source: row.source,
      event: JSON.stringify(row.event),
    };
    for (const c of INDEXED_COLUMNS) values[c] = indexed.fields[c] ?? null;
    PG_COLUMNS.forEach((c, k) => {
      (cells[k] as Cell[]).push(values[c] ?? null);
    });
    indexed.paths.forEach((p, ord) => {
      paths[0].push(seq);
      paths[1].push(ord);
      paths[2].push(p);
    });
  });
  await store.pool.query(PG_INSERT, cells);
  await store.pool.query(PG_PATHS, paths);
}
