/**
 * A PostgreSQL store read as a SQLite one, for tests: every table copied, in one read snapshot, into a
 * fresh SQLite file (`pg-mirror.mjs`, in a child process, so the copy is synchronous for the caller),
 * which `store-reads.ts` then reads as it reads any store. A test of the daemon on PostgreSQL asserts
 * through the same reads as one on SQLite.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { PgDatabase } from "./pg-cluster.js";

const SCRIPT = fileURLToPath(new URL("./pg-mirror.mjs", import.meta.url));

/** Copies `db`'s tables into the SQLite store `file` (replaced); returns `file`. */
export function mirrorPg(db: PgDatabase, file: string): string {
  execFileSync(process.execPath, [SCRIPT, db.host, db.user, db.database, file], {
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 30_000,
  });
  return file;
}
