/**
 * A test file's PostgreSQL store: a database of its own in the run's cluster (test/support/pg-cluster.ts),
 * opened and migrated.
 */
import pg from "pg";
import { inject } from "vitest";
import { formatConfigError } from "../../../../src/shell/config/config-error.js";
import { loadGlobalConfig, type StoreConfig } from "../../../../src/shell/config/global-config.js";
import { type OpenedPgStore, openPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PG_DIR_KEY, type PgDatabase, pgDatabase, pgOptions } from "../../../support/pg-cluster.js";

export async function freshPgDatabase(label: string): Promise<PgDatabase> {
  return pgDatabase(inject(PG_DIR_KEY), label);
}

export async function openFreshPgStore(label: string, max = 10): Promise<OpenedPgStore> {
  return openPgStore({ ...pgOptions(await freshPgDatabase(label)), max });
}

/** Sets the database's schema version, as a newer (or older) harness's migrations would leave it. */
export async function setSchemaVersion(db: PgDatabase, version: number): Promise<void> {
  const admin = new pg.Client(pgOptions(db));
  await admin.connect();
  try {
    await admin.query("UPDATE harness_schema SET version = $1", [version]);
  } finally {
    await admin.end();
  }
}

/** `[store]` as the operator writes it, `url` and then `lines`, loaded through the global config. */
export function storeOf(url: string, ...lines: string[]): StoreConfig {
  const text = ["[store]", `url = ${JSON.stringify(url)}`, ...lines].join("\n");
  const r = loadGlobalConfig(text, "/etc/harness/harness.toml", {});
  if (!r.ok) throw new Error(r.errors.map(formatConfigError).join("\n"));
  if (r.config.store === undefined) throw new Error("no [store]");
  return r.config.store;
}
