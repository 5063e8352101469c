/**
 * The daemon's store, as `[store]` chooses it: the SQLite file (no config: the embedded default; one
 * daemon per file, which leads), or PostgreSQL (`[store] url`; any number of daemons, one leading under
 * the lease, decision 0022). What the composition root needs of either: the door every part of the
 * daemon reaches the store through, who leads, where the workers beside it find the store, and how to
 * close it.
 */
import type { GlobalConfig } from "../config/global-config.js";
import type { StoreLocation } from "../config/store-location.js";
import { type Leadership, SoleLeadership } from "../store/leadership.js";
import { type OpenedStore, openStore } from "../store/open-store.js";
import { openPgStore, PgStoreOpenError } from "../store/pg/open-pg-store.js";
import { PgConfigError, pgPoolConfigOf, pgStoreName } from "../store/pg/pg-config.js";
import { PgLease } from "../store/pg/pg-lease.js";
import { PG_SCHEMA_VERSION } from "../store/pg/pg-schema.js";
import { PgStoreDoor } from "../store/pg/pg-store-door.js";
import { SqliteStoreDoor } from "../store/sqlite-store-door.js";
import type { StoreDoor } from "../store/store-door.js";

export interface DaemonStore {
  readonly door: StoreDoor;
  /** Who leads among the daemons on the store. */
  readonly leadership: Leadership;
  readonly location: StoreLocation;
  /** The SQLite store, when the daemon runs on it (tests and the demo read it directly). */
  readonly sqlite: OpenedStore | undefined;
  /** Closes the store. */
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
 * Opens the store `config` names, else the SQLite file `file`. `owner` names this daemon to the others
 * on the store (refused the SQLite file; as the leader, on PostgreSQL).
 */
export async function openDaemonStore(
  config: GlobalConfig,
  file: string,
  owner: string,
  clock: () => number,
): Promise<DaemonStore> {
  const store = config.store;
  if (store === undefined) {
    const opened = openStore(file, owner);
    return {
      door: new SqliteStoreDoor(opened),
      leadership: new SoleLeadership(owner, clock),
      location: { backend: "sqlite", path: opened.path },
      sqlite: opened,
      close: async () => opened.close(),
    };
  }
  const name = pgStoreName(store);
  try {
    const poolConfig = pgPoolConfigOf(store);
    const opened = await openPgStore(poolConfig, {
      queryTimeoutMs: store.queryTimeout,
      // A transaction left open by a daemon paused or cut off mid-commit is ended by the server within
      // a lease, so the locks it holds (the journal's head, the lease's share) keep no one waiting longer.
      idleInTransactionMs: store.lease,
    });
    const lease = new PgLease(poolConfig, owner, { ttlMs: store.lease, schemaVersion: PG_SCHEMA_VERSION });
    const door = new PgStoreDoor({ ...opened, name }, lease);
    return {
      door,
      leadership: lease,
      location: { backend: "postgres", config: store },
      sqlite: undefined,
      // The daemon gives the lease up at its close; a start that failed before gives it up here.
      close: async () => {
        await lease.close();
        await door.close();
      },
    };
  } catch (e) {
    if (e instanceof PgConfigError || e instanceof PgStoreOpenError)
      throw new StoreOpeningError(e.message, { cause: e });
    throw new StoreOpeningError(`store ${name}: ${(e as Error).message}`, { cause: e });
  }
}
