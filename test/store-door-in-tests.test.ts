/**
 * test/ knows the store's schema in one place: test/support/store-reads.ts, beside the store's own tests
 * in test/shell/store/, which test its SQL. Any other test file holding a SQL statement or a table name
 * fails here, so a schema change is made in those places only.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { MIGRATIONS } from "../src/shell/store/schema.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const FIXTURE = fileURLToPath(new URL("fixtures/store-door/", import.meta.url));

/** The files and folders (ending in `/`) of test/ that may know the schema. */
const DOORS = [
  "test/support/store-reads.ts",
  "test/support/store/",
  "test/shell/store/",
  // This check, which names what it looks for, and its fixture, which holds what it must flag.
  "test/store-door-in-tests.test.ts",
  "test/fixtures/store-door/",
  // The architecture check, which looks for SQL text in src/, and its fixtures.
  "test/architecture.test.ts",
  "test/architecture/source-scan.ts",
  "test/fixtures/architecture/",
];

const STATEMENT = /\b(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE TABLE|ALTER TABLE|DROP TABLE)\b/;

/**
 * The schema's tables whose names are no English word (`evaluator` is one, and a test may say it), as
 * the migrations create them.
 */
const TABLES = [...MIGRATIONS.join("\n").matchAll(/CREATE TABLE (\w+)/g)]
  .map((m) => m[1] as string)
  .filter((name) => name.includes("_"));

interface SchemaSite {
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

/** Each line of a `.ts` file under `root`/test, outside the doors, with a statement or a table name. */
function schemaSites(root: string): SchemaSite[] {
  const table = new RegExp(`\\b(${TABLES.join("|")})\\b`);
  const sites: SchemaSite[] = [];
  const files = fs.readdirSync(path.join(root, "test"), { recursive: true, encoding: "utf8" });
  for (const name of files.sort()) {
    const file = `test/${name.split(path.sep).join("/")}`;
    if (!file.endsWith(".ts") || DOORS.some((d) => file === d || (d.endsWith("/") && file.startsWith(d))))
      continue;
    fs.readFileSync(path.join(root, file), "utf8")
      .split("\n")
      .forEach((text, i) => {
        if (STATEMENT.test(text) || table.test(text)) sites.push({ file, line: i + 1, text: text.trim() });
      });
  }
  return sites;
}

describe("the store's door in tests", () => {
  it("no test file outside test/support/store-reads.ts and the store's own tests holds SQL or a table name", () => {
    const sites = schemaSites(REPO).map((s) => `${s.file}:${s.line}: ${s.text}`);
    expect(sites, "read and write through the store's objects or test/support/store-reads.ts").toEqual([]);
  });

  it("flags a statement and a table name past the door, and passes the door, the store's tests and a read through the door", () => {
    expect(TABLES).toContain("rule_holds");
    expect(schemaSites(FIXTURE)).toEqual([
      {
        file: "test/shell/daemon/raw-cursor.ts",
        line: 2,
        text: 'export const cursor = (query: (sql: string) => unknown[]) => query("SELECT cursor FROM evaluator");',
      },
      {
        file: "test/shell/rpc/table-name.ts",
        line: 2,
        text: 'export const where = { table: "rule_holds", released: null };',
      },
    ]);
  });
});
