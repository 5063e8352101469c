/**
 * An online, consistent copy of the store (`harness store backup PATH`), taken while the daemon runs.
 * SQLite's backup API copies the pages of one read transaction: the daemon's writer goes on (WAL lets a
 * reader and a writer share the file), and the copy is the store as of one commit. The copy is made
 * under a temporary name beside PATH, checked (integrity, schema version, the journal's last row), synced,
 * and only then renamed into place, so PATH is either absent or a whole, checked store: never half of one.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import Database from "better-sqlite3";
import { openStoreReadOnly, StoreOpenError } from "./open-store.js";
import { SCHEMA_VERSION } from "./schema.js";

export interface BackupResult {
  readonly source: string;
  readonly path: string;
  readonly bytes: number;
  readonly schemaVersion: number;
  /** The journal's rows in the copy and its last seq (0 when empty). */
  readonly journalRows: number;
  readonly lastSeq: number;
}

export class StoreBackupError extends Error {
  constructor(
    readonly target: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`backup ${target}: ${message}`, options);
    this.name = "StoreBackupError";
  }
}

/**
 * Pages copied per step after the first. One step is one read transaction; a writer that commits between
 * two steps makes SQLite start the copy again, so under a busy daemon small steps might never finish.
 */
const ALL_PAGES = 2 ** 31 - 1;

/** Copies the store at `source` to `target`, which must not exist. */
export async function backupStore(source: string, target: string): Promise<BackupResult> {
  const dest = path.resolve(target);
  if (fs.existsSync(dest))
    throw new StoreBackupError(dest, "exists already; a backup never overwrites a file");
  const dir = path.dirname(dest);
  if (!fs.existsSync(dir)) throw new StoreBackupError(dest, `no such directory ${dir}`);
  const from = openStoreReadOnly(source);
  const tmp = path.join(dir, `.${path.basename(dest)}.${process.pid}.partial`);
  try {
    // Created 0600 before SQLite opens it: the store holds token hashes and proposal text.
    fs.closeSync(fs.openSync(tmp, "wx", 0o600));
    await from.db.backup(tmp, { progress: () => ALL_PAGES });
    const checked = check(tmp, dest);
    const fd = fs.openSync(tmp, "r");
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.linkSync(tmp, dest);
    fs.unlinkSync(tmp);
    syncDir(dir);
    return { source: from.path, path: dest, bytes: fs.statSync(dest).size, ...checked };
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    if (e instanceof StoreBackupError || e instanceof StoreOpenError) throw e;
    throw new StoreBackupError(dest, (e as Error).message, { cause: e });
  } finally {
    from.close();
  }
}

function check(file: string, dest: string): Omit<BackupResult, "source" | "path" | "bytes"> {
  // Read-write, though it only reads: the copy is a WAL database (the header is the store's), and only
  // a connection that may write removes its -wal and -shm files when it closes.
  const db = new Database(file, { fileMustExist: true });
  try {
    const integrity = db.pragma("integrity_check", { simple: true }) as string;
    if (integrity !== "ok") throw new StoreBackupError(dest, `the copy fails integrity_check: ${integrity}`);
    const schemaVersion = db.pragma("user_version", { simple: true }) as number;
    if (schemaVersion !== SCHEMA_VERSION)
      throw new StoreBackupError(dest, `the copy has schema version ${schemaVersion}, not ${SCHEMA_VERSION}`);
    const j = db.prepare("SELECT count(*) AS n, coalesce(max(seq), 0) AS last FROM rule_journal").get() as {
      n: number;
      last: number;
    };
    return { schemaVersion, journalRows: j.n, lastSeq: j.last };
  } finally {
    db.close();
  }
}

/** The rename is durable only once the directory's entry is. */
function syncDir(dir: string): void {
  const fd = fs.openSync(dir, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
