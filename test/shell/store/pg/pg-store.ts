/**
 * A test file's PostgreSQL store: a database of its own in the run's cluster (test/support/pg-cluster.ts),
 * opened and migrated.
 */
import { inject } from "vitest";
import { type OpenedPgStore, openPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PG_DIR_KEY, type PgDatabase, pgDatabase, pgOptions } from "../../../support/pg-cluster.js";

export async function freshPgDatabase(label: string): Promise<PgDatabase> {
  return pgDatabase(inject(PG_DIR_KEY), label);
}

export async function openFreshPgStore(label: string, max = 10): Promise<OpenedPgStore> {
  return openPgStore({ ...pgOptions(await freshPgDatabase(label)), max });
}
