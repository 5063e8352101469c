/**
 * What `harness doctor` asks of the PostgreSQL store (issue 34 item 4): one connection, bounded in time,
 * that reads the schema's version and the server's durability settings and changes nothing, so doctor
 * never migrates a database (the daemon does, at its start: `open-pg-store.ts`).
 */
import pg from "pg";
import { checkDurability, PgStoreOpenError } from "./open-pg-store.js";

export type PgProbe =
  /** `version` 0: no harness schema yet. */
  | { readonly ok: true; readonly version: number; readonly server: string }
  | { readonly ok: false; readonly cause: string };

/** How long connecting, and then each statement, may take. */
export const PROBE_TIMEOUT_MS = 3_000;

export async function probePgStore(
  config: pg.ClientConfig,
  name: string,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<PgProbe> {
  const client = new pg.Client({
    ...config,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
    statement_timeout: timeoutMs,
  });
  // A connection lost after connect is also a rejected query below; this keeps it from crashing doctor.
  client.on("error", () => {});
  try {
    await client.connect();
    const server = await client.query<{ server_version: string }>("SHOW server_version");
    await checkDurability(client, name);
    const table = await client.query<{ present: boolean }>(
      "SELECT to_regclass('harness_schema') IS NOT NULL AS present",
    );
    const version =
      table.rows[0]?.present === true
        ? ((await client.query<{ version: number }>("SELECT version FROM harness_schema WHERE id = 1"))
            .rows[0]?.version ?? 0)
        : 0;
    return { ok: true, version, server: server.rows[0]?.server_version ?? "unknown" };
  } catch (e) {
    if (e instanceof PgStoreOpenError) return { ok: false, cause: e.reason };
    return { ok: false, cause: (e as Error).message };
  } finally {
    await client.end().catch(() => {});
  }
}
