/**
 * Opening the PostgreSQL store (issue 34): a node-postgres pool whose BIGINT columns (seq, at) read as
 * numbers, the server's durability settings checked, and the schema brought to this harness's version at start, under a transaction-scoped
 * advisory lock so two harnesses starting together migrate once. A database of a newer schema is
 * refused, never downgraded; the migrations that are missing run in one transaction, all or none.
 */
import pg from "pg";
import { inTransaction, withClient } from "./pg-client.js";
import { PG_MIGRATIONS, PG_SCHEMA_VERSION, PG_VERSION_TABLE } from "./pg-schema.js";

export class PgStoreOpenError extends Error {
  constructor(
    /** The database as an operator names it: host and database, never a password. */
    readonly store: string,
    /** What is wrong, without the store's name. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`store ${store}: ${reason}`, options);
    this.name = "PgStoreOpenError";
  }
}

export interface OpenedPgStore {
  readonly pool: pg.Pool;
  /** Host and database, for messages. */
  readonly name: string;
  close(): Promise<void>;
}

const INT8_OID = 20;
/** seq and at are BIGINT; both stay far below 2^53, so they read as numbers, not strings. */
export const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format ?? "text")) as typeof pg.types.getTypeParser,
};

const nameOf = (config: pg.PoolConfig): string =>
  `postgresql ${config.host ?? "localhost"}/${config.database ?? "(default)"}`;

/**
 * The server's settings a commit's answer relies on, read back as SQLite's pragmas are: with fsync or
 * synchronous_commit off, a commit answered could still be lost in a crash, and an action repeated.
 */
export async function checkDurability(client: pg.ClientBase, name: string): Promise<void> {
  for (const setting of ["fsync", "synchronous_commit"]) {
    const r = await client.query<Record<string, string>>(`SHOW ${setting}`);
    const value = r.rows[0]?.[setting];
    if (value === "off")
      throw new PgStoreOpenError(name, `${setting} is off: a committed row could be lost after its answer`);
  }
}

async function migrate(pool: pg.Pool, name: string): Promise<void> {
  await withClient(pool, (client) => checkDurability(client, name));
  await inTransaction(pool, "BEGIN", async (client) => {
    // The lock's key is derived from a fixed text, so every harness takes the same one.
    await client.query("SELECT pg_advisory_xact_lock(hashtext('harness_schema'))");
    await client.query(PG_VERSION_TABLE);
    const r = await client.query<{ version: number }>("SELECT version FROM harness_schema WHERE id = 1");
    const version = r.rows[0]?.version ?? 0;
    if (version > PG_SCHEMA_VERSION)
      throw new PgStoreOpenError(
        name,
        `schema version ${version} is newer than this harness knows (${PG_SCHEMA_VERSION}); upgrade harness, the database is left as it is`,
      );
    for (let v = version; v < PG_SCHEMA_VERSION; v++) await client.query(PG_MIGRATIONS[v] as string);
    await client.query(
      "INSERT INTO harness_schema (id, version) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET version = $1",
      [PG_SCHEMA_VERSION],
    );
  });
}

/**
 * Opens a pool on the database and migrates it; `max` connections (node-postgres' default 10). With
 * `queryTimeoutMs`, a statement unanswered that long is given up on (rejected, its connection
 * destroyed) once the store is open; the migrations, which may rewrite a large journal, run without it.
 */
export async function openPgStore(
  config: pg.PoolConfig,
  options: { readonly queryTimeoutMs?: number; readonly idleInTransactionMs?: number } = {},
): Promise<OpenedPgStore> {
  const name = nameOf(config);
  const migrating = new pg.Pool({ ...config, types });
  // An idle client's error (the server went away) must not crash the process; the next query fails.
  migrating.on("error", () => {});
  try {
    await migrate(migrating, name);
  } catch (e) {
    await migrating.end();
    if (e instanceof PgStoreOpenError) throw e;
    throw new PgStoreOpenError(name, (e as Error).message, { cause: e });
  }
  if (options.queryTimeoutMs === undefined) return { pool: migrating, name, close: () => migrating.end() };
  await migrating.end();
  const pool = new pg.Pool({
    ...config,
    types,
    query_timeout: options.queryTimeoutMs,
    ...(options.idleInTransactionMs === undefined
      ? {}
      : { idle_in_transaction_session_timeout: options.idleInTransactionMs }),
  });
  pool.on("error", () => {});
  return { pool, name, close: () => pool.end() };
}

/**
 * A pool of read-only connections, for a process that reads beside the daemon (a backtest, a journal
 * query): no migration (the daemon's start did that), every transaction read-only, and a statement
 * running past `statementTimeoutMs` cancelled by the server, so a worker the daemon kills does not leave
 * its scan running there.
 */
export function openPgReadOnly(
  config: pg.PoolConfig,
  options: { readonly max: number; readonly statementTimeoutMs: number },
): OpenedPgStore {
  const name = nameOf(config);
  const pool = new pg.Pool({
    ...config,
    types,
    max: options.max,
    statement_timeout: options.statementTimeoutMs,
    options: "-c default_transaction_read_only=on",
  });
  pool.on("error", () => {});
  return { pool, name, close: () => pool.end() };
}
