/**
 * The store's tables as `harness store copy` reads them (src/shell/store/store-tables.ts): every table
 * the migrations create, each after the tables its foreign keys point at, and each read whole in key
 * order at any page size.
 */
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { MIGRATIONS } from "../../../src/shell/store/schema.js";
import { STORE_TABLES, tableRows, tableShape } from "../../../src/shell/store/store-tables.js";

describe("the store's tables, for a copy", () => {
  const db = new Database(":memory:");
  for (const m of MIGRATIONS) db.exec(m);

  it("lists every table the migrations create, once", () => {
    const tables = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
        name: string;
      }[]
    ).map((t) => t.name);
    expect([...STORE_TABLES].sort()).toEqual(tables);
  });

  it("lists each table after the tables its foreign keys point at", () => {
    STORE_TABLES.forEach((table, i) => {
      for (const fk of db.pragma(`foreign_key_list(${table})`) as { table: string }[])
        expect(
          STORE_TABLES.indexOf(fk.table as (typeof STORE_TABLES)[number]),
          `${table} → ${fk.table}`,
        ).toBeLessThan(i);
    });
  });

  it("reads a table whole in key order, text by its bytes, at any page size", () => {
    const insert = db.prepare("INSERT INTO rule_suppressed (hash, rule, count) VALUES (?, ?, ?)");
    const keys = [
      ["B", "x"],
      ["a", "y"],
      ["a", "é"],
      ["é", "a"],
      ["a", "Z"],
    ];
    keys.forEach(([hash, rule], i) => {
      insert.run(hash, rule, 2n ** 53n + BigInt(i));
    });
    const shape = tableShape(db, "rule_suppressed");
    expect(shape).toEqual({
      table: "rule_suppressed",
      columns: ["hash", "rule", "count"],
      key: ["hash", "rule"],
    });
    for (const page of [1, 2, 3, 100])
      expect([...tableRows(db, shape, page)], `page ${page}`).toEqual([
        ["B", "x", 2n ** 53n],
        ["a", "Z", 2n ** 53n + 4n],
        ["a", "y", 2n ** 53n + 1n],
        ["a", "é", 2n ** 53n + 2n],
        ["é", "a", 2n ** 53n + 3n],
      ]);
  });
});
