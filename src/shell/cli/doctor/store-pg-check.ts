/**
 * `harness doctor`'s store row under `[store] url` (issue 34 item 4): the database is reached with the
 * config's own files and TLS, within a few seconds, and its schema version read without migrating it. It
 * fails naming the database (host and database, never the user or password) and the cause when the
 * files do not load, the server cannot be reached or refuses the login, its durability settings are off,
 * or its schema is newer than this harness knows; it warns while the schema is older (the daemon migrates
 * it at its start).
 */
import type { StoreConfig } from "../../config/global-config.js";
import { PgConfigError, pgPoolConfigOf, pgStoreName } from "../../store/pg/pg-config.js";
import { PROBE_TIMEOUT_MS, probePgStore } from "../../store/pg/pg-probe.js";
import { PG_SCHEMA_VERSION } from "../../store/pg/pg-schema.js";
import { printable } from "../render/printable.js";

export interface StorePgCheck {
  readonly name: "store";
  readonly status: "pass" | "warn" | "fail";
  readonly detail: string;
  readonly findings: readonly never[];
}

const check = (status: StorePgCheck["status"], detail: string): StorePgCheck => ({
  name: "store",
  status,
  detail: printable(detail),
  findings: [],
});

export async function storePgCheck(store: StoreConfig, timeoutMs = PROBE_TIMEOUT_MS): Promise<StorePgCheck> {
  const name = pgStoreName(store);
  let config: ReturnType<typeof pgPoolConfigOf>;
  try {
    config = pgPoolConfigOf(store);
  } catch (e) {
    if (e instanceof PgConfigError) return check("fail", `${name}: ${e.message}`);
    throw e;
  }
  const probe = await probePgStore(config, name, timeoutMs);
  if (!probe.ok) return check("fail", `${name}: cannot use the database: ${probe.cause}`);
  const on = `${name} (PostgreSQL ${probe.server}, ssl_mode ${store.sslMode})`;
  if (probe.version > PG_SCHEMA_VERSION)
    return check(
      "fail",
      `${on}: schema version ${probe.version} is newer than this harness knows (${PG_SCHEMA_VERSION}); upgrade harness`,
    );
  if (probe.version < PG_SCHEMA_VERSION)
    return check(
      "warn",
      `${on}: schema version ${probe.version === 0 ? "none yet" : probe.version}; the daemon migrates it to ${PG_SCHEMA_VERSION} at its start`,
    );
  return check("pass", `${on}: schema version ${probe.version}`);
}
