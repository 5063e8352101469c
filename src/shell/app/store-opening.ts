/**
 * The daemon's store, as `[store]` chooses it: the SQLite file (no config: the embedded default), or
 * PostgreSQL (`[store] url`), one daemon per database. What the composition root needs of either: the
 * door every part of the daemon reaches the store through, where the workers beside it find the store,
 * and how to close it.
 */
import type { GlobalConfig } from "../config/global-config.js";
import type { StoreLocation } from "../config/store-location.js";
import { type OpenedStore, openStore } from "../store/open-store.js";
import { openPgStore, PgStoreOpenError } from "../store/pg/open-pg-store.js";
import { PgConfigError, pgPoolConfigOf, pgStoreName } from "../store/pg/pg-config.js";
import { PgDaemonLock, PgDaemonLockError } from "../store/pg/pg-daemon-lock.js";
import { PgStoreDoor } from "../store/pg/pg-store-door.js";
import { SqliteStoreDoor } from "../store/sqlite-store-door.js";
import type { StoreDoor } from "../store/store-door.js";

export interface DaemonStore {
  readonly door: StoreDoor;
  readonly location: StoreLocation;
  /** The SQLite store, when the daemon runs on it (tests and the demo read it directly). */
  readonly sqlite: OpenedStore | undefined;
  /** Closes the store (and, on PostgreSQL, lets the database's lock go). */
  close(): Promise<void>;
}

/** Why the store did not open: the message names the file or database and the cause. */
export class StoreOpeningError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreOpeningError";
  }
}

/**
 * Opens the store `config` names, else the SQLite file `file`. `owner` names this daemon to another
 * refused the same store; `onLost` hears that another daemon took the PostgreSQL database's lock.
 */
export async function openDaemonStore(
  config: GlobalConfig,
  file: string,
  owner: string,
  onLost: (e: Error) => void,
): Promise<DaemonStore> {
  const store = config.store;
  if (store === undefined) {
    const opened = openStore(file, owner);
    return {
      door: new SqliteStoreDoor(opened),
      location: { backend: "sqlite", path: opened.path },
      sqlite: opened,
      close: async () => opened.close(),
    };
  }
  const name = pgStoreName(store);
  let lock: PgDaemonLock | undefined;
  try {
    const poolConfig = pgPoolConfigOf(store);
    // The lock first: a second daemon is refused before it touches the schema.
    lock = await PgDaemonLock.acquire(poolConfig, name, owner, onLost);
    const opened = await openPgStore(poolConfig, { queryTimeoutMs: store.queryTimeout });
    const held = lock;
    const door = new PgStoreDoor({ ...opened, name });
    return {
      door,
      location: { backend: "postgres", config: store },
      sqlite: undefined,
      close: async () => {
        await door.close();
        await held.release();
      },
    };
  } catch (e) {
    await lock?.release();
    if (e instanceof PgConfigError || e instanceof PgStoreOpenError || e instanceof PgDaemonLockError)
      throw new StoreOpeningError(e.message, { cause: e });
    throw new StoreOpeningError(`store ${name}: ${(e as Error).message}`, { cause: e });
  }
}
