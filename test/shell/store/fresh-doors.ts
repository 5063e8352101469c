/**
 * A store door of either backend for one test: SQLite's over a fresh file, PostgreSQL's over a fresh
 * database in the run's cluster; each closed after the test. For what runs over the door's ports alike
 * on both, where the awaits between its calls are real round trips on PostgreSQL.
 */
import { afterEach } from "vitest";
import { PgStoreDoor } from "../../../src/shell/store/pg/pg-store-door.js";
import { SqliteStoreDoor } from "../../../src/shell/store/sqlite-store-door.js";
import type { StoreDoor } from "../../../src/shell/store/store-door.js";
import { openFreshPgStore } from "./pg/pg-store.js";
import { tempStores } from "./temp-stores.js";

export type Backend = StoreDoor["backend"];
export const BACKENDS: readonly Backend[] = ["sqlite", "postgres"];

export function freshDoors(label: string): (backend: Backend) => Promise<StoreDoor> {
  const stores = tempStores(`harness-${label}-`);
  const pg: StoreDoor[] = [];
  afterEach(async () => {
    for (const d of pg.splice(0)) await d.close();
  });
  return async (backend) => {
    if (backend === "sqlite") return new SqliteStoreDoor(stores.open(stores.storeFile()));
    const door = new PgStoreDoor(await openFreshPgStore(label, 4));
    pg.push(door);
    return door;
  };
}
