/**
 * Opening the one SQLite store (ADR-0037 as SPEC-0029 uses it): a 0600 file in a 0700 directory, WAL,
 * `synchronous=FULL` on the connection that commits decisions (better-sqlite3 leaves WAL databases at
 * NORMAL, which can roll back a committed decision on power loss and so repeat an action; the commits
 * nobody waits on relax it, `wal-sync.ts`),
 * `foreign_keys=ON`, incremental auto-vacuum for retention, pragmas read back and checked. A corrupt
 * file or one of a newer schema is refused with a clear error, never recreated.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import Database from "better-sqlite3";
import { MIGRATIONS, SCHEMA_VERSION } from "./schema.js";
import { acquireStoreLock, type StoreLock } from "./store-lock.js";

export type Db = Database.Database;

export class StoreOpenError extends Error {
  constructor(
    readonly store: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`store ${store}: ${message}`, options);
    this.name = "StoreOpenError";
  }
}

export interface OpenedStore {
  readonly db: Db;
  readonly path: string;
  close(): void;
}

const BUSY_TIMEOUT_MS = 5000;

function expectPragma(db: Db, store: string, pragma: string, want: string | number): void {
  const got = db.pragma(pragma, { simple: true }) as unknown;
  if (String(got).toLowerCase() !== String(want))
    throw new StoreOpenError(store, `PRAGMA ${pragma} is ${String(got)}, expected ${String(want)}`);
}

function migrate(db: Db, store: string): void {
  const version = db.pragma("user_version", { simple: true }) as number;
  if (version > SCHEMA_VERSION)
    throw new StoreOpenError(
      store,
      `schema version ${version} is newer than this harness knows (${SCHEMA_VERSION}); upgrade harness, the store is left as it is`,
    );
  for (let v = version; v < SCHEMA_VERSION; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v] as string);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
}

/**
 * Opens the store for writing, taking its lock: `owner` names the holder in a second writer's error.
 * Creates it (and its directory) when absent.
 */
export function openStore(file: string, owner: string): OpenedStore {
  const store = path.resolve(file);
  fs.mkdirSync(path.dirname(store), { recursive: true, mode: 0o700 });
  const lock: StoreLock = acquireStoreLock(store, owner);
  let db: Db | undefined;
  try {
    const existed = fs.existsSync(store);
    if (!existed) fs.closeSync(fs.openSync(store, "wx", 0o600));
    db = new Database(store, { fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
    // Reading the schema is what detects a file that is not a database.
    try {
      db.pragma("schema_version", { simple: true });
    } catch (e) {
      throw new StoreOpenError(store, `not a readable SQLite database (${(e as Error).message})`, {
        cause: e,
      });
    }
    const tables = db.prepare("SELECT count(*) AS n FROM sqlite_master").get() as { n: number };
    // auto_vacuum can only be chosen before the first table exists.
    if (tables.n === 0) db.pragma("auto_vacuum = INCREMENTAL");
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    db.pragma("foreign_keys = ON");
    expectPragma(db, store, "journal_mode", "wal");
    expectPragma(db, store, "synchronous", 2);
    expectPragma(db, store, "foreign_keys", 1);
    migrate(db, store);
    fs.chmodSync(store, 0o600);
    const opened = db;
    return {
      db: opened,
      path: store,
      close() {
        if (opened.open) opened.close();
        lock.release();
      },
    };
  } catch (e) {
    db?.close();
    lock.release();
    if (e instanceof StoreOpenError) throw e;
    throw new StoreOpenError(store, (e as Error).message, { cause: e });
  }
}

/** A read-only connection for offline commands (backtest with no daemon, explain): no lock, no writes. */
export function openStoreReadOnly(file: string): OpenedStore {
  const store = path.resolve(file);
  if (!fs.existsSync(store)) throw new StoreOpenError(store, "no such store");
  let db: Db;
  try {
    db = new Database(store, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
    const version = db.pragma("user_version", { simple: true }) as number;
    if (version !== SCHEMA_VERSION) {
      db.close();
      throw new StoreOpenError(store, `schema version ${version}, this harness reads ${SCHEMA_VERSION}`);
    }
  } catch (e) {
    if (e instanceof StoreOpenError) throw e;
    throw new StoreOpenError(store, `not a readable SQLite database (${(e as Error).message})`, { cause: e });
  }
  return {
    db,
    path: store,
    close() {
      if (db.open) db.close();
    },
  };
}
