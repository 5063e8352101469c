/**
 * Where the store is, as what runs beside the daemon in other processes needs it (backtests, journal
 * queries): the SQLite file, or `[store]` for PostgreSQL, whose files (password, TLS) each process reads
 * itself, so no secret crosses a process boundary.
 */
import type { StoreConfig } from "./global-config.js";

export type StoreLocation =
  | { readonly backend: "sqlite"; readonly path: string }
  | { readonly backend: "postgres"; readonly config: StoreConfig };
