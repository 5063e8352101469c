// A copy of a PostgreSQL store's every table into a fresh SQLite store (test/support/pg-mirror.ts runs
// this in a child process, so a test reads it synchronously through test/support/store-reads.ts as it
// reads a SQLite store). Arguments: host (the socket's directory), user, database, the SQLite file.
// Plain JavaScript over the built store (`dist/`), which `npm test` builds first.
import * as fs from "node:fs";
import pg from "pg";
import { openStore } from "../../dist/shell/store/open-store.js";
import { STORE_TABLES, tableShape } from "../../dist/shell/store/store-tables.js";

const [host, user, database, file] = process.argv.slice(2);
const INT8 = 20;
// BIGINT as BigInt: no seq, time or id is rounded on its way through.
const types = {
  getTypeParser: (oid, format) => (oid === INT8 ? (v) => BigInt(v) : pg.types.getTypeParser(oid, format)),
};
const client = new pg.Client({ host, user, database, port: 5432, types });
await client.connect();
for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
const store = openStore(file, "pg mirror (test)");
try {
  await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  const tables = [];
  for (const table of STORE_TABLES) {
    const shape = tableShape(store.db, table);
    const cols = shape.columns.join(", ");
    const rows = (
      await client.query({
        text: `SELECT ${cols} FROM ${table} ORDER BY ${shape.key.join(", ")}`,
        rowMode: "array",
      })
    ).rows;
    tables.push({ shape, rows });
  }
  await client.query("COMMIT");
  store.db.transaction(() => {
    for (const { shape, rows } of tables) {
      const insert = store.db.prepare(
        `INSERT OR REPLACE INTO ${shape.table} (${shape.columns.join(", ")}) VALUES (${shape.columns.map(() => "?").join(", ")})`,
      );
      for (const row of rows) insert.run(...row.map((c) => (typeof c === "boolean" ? (c ? 1 : 0) : c)));
    }
  })();
} finally {
  store.close();
  await client.end();
}
