/**
 * `harness store copy --from PATH --to URL [--password-file F]`: a SQLite store moved into an empty
 * PostgreSQL database and verified row for row (`../../store/pg/pg-copy.ts`). The store may be a running
 * daemon's: the copy is one commit's store. Prints each table's rows on both sides and the verification;
 * exits 1 on any difference, naming the table and the first key that differs. The URL's password, if it
 * has one, is never printed: the database is named by host and database only.
 */
import { performance } from "node:perf_hooks";
import type pg from "pg";
import {
  DEFAULT_LEASE,
  DEFAULT_POOL_MAX,
  DEFAULT_QUERY_TIMEOUT,
  type StoreConfig,
} from "../../config/global-config.js";
import { storePath as defaultStorePath } from "../../config/paths.js";
import { isLoopbackStore, parseStoreUrl } from "../../config/store-url.js";
import { PgConfigError, pgPoolConfigOf } from "../../store/pg/pg-config.js";
import { copyStore, type StoreCopyReport } from "../../store/pg/pg-copy.js";
import { EXIT, type Io, table } from "../io.js";
import { printable } from "../render/printable.js";

export interface StoreCopyCliOptions {
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  readonly passwordFile?: string | undefined;
  readonly json?: boolean;
}

/**
 * The pool's options from `--to` and `--password-file`, read as `[store]` reads its url and files
 * (`../../config/store-url.ts`, `../../store/pg/pg-config.ts`): TLS off on a socket or loopback and
 * verify-full elsewhere, against Node's CAs; or a problem to print.
 */
function poolConfigOf(url: string, passwordFile: string | undefined): pg.PoolConfig | string {
  const address = parseStoreUrl(url);
  if ("problem" in address) return `--to ${address.problem}`;
  const store: StoreConfig = {
    ...address,
    passwordFile,
    sslMode: isLoopbackStore(address) ? "disable" : "verify-full",
    caFile: undefined,
    certFile: undefined,
    keyFile: undefined,
    poolMax: DEFAULT_POOL_MAX,
    // Unused by a copy: its pool is its own, without the daemon's statement bound.
    queryTimeout: DEFAULT_QUERY_TIMEOUT,
    lease: DEFAULT_LEASE,
  };
  try {
    return pgPoolConfigOf(store);
  } catch (e) {
    if (e instanceof PgConfigError) return `--password-file: ${e.problem}`;
    throw e;
  }
}

function render(report: StoreCopyReport, seconds: number, io: Io): void {
  io.out(`copied ${printable(report.source)} to ${printable(report.target)} in ${seconds.toFixed(1)} s`);
  for (const line of table(
    ["TABLE", "SQLITE", "POSTGRESQL"],
    report.tables.map((t) => [t.table, String(t.sqlite), String(t.postgres)]),
  ))
    io.out(line);
  io.out(`journal head: seq ${report.head.seq}, at ${report.head.at}`);
  const m = report.mismatch;
  if (m === undefined) io.out("verified: every row of every table is equal on both sides");
  else
    io.out(
      `verification FAILED: ${m.table}, first difference at ${printable(m.key)} (SQLite ${printable(m.sqlite ?? "no row")}, PostgreSQL ${printable(m.postgres ?? "no row")})`,
    );
}

export async function runStoreCopy(options: StoreCopyCliOptions, io: Io): Promise<number> {
  if (options.to === undefined || options.to === "") {
    io.err("harness store copy: --to URL is required (postgresql://…)");
    return EXIT.usage;
  }
  const config = poolConfigOf(options.to, options.passwordFile);
  if (typeof config === "string") {
    io.err(`harness store copy: ${config}`);
    return EXIT.usage;
  }
  const started = performance.now();
  try {
    const report = await copyStore(options.from ?? defaultStorePath(io.env), config);
    const seconds = (performance.now() - started) / 1000;
    if (options.json === true)
      io.out(
        JSON.stringify({
          source: report.source,
          target: report.target,
          seconds,
          tables: report.tables,
          head: report.head,
          verified: report.mismatch === undefined,
          ...(report.mismatch === undefined ? {} : { mismatch: report.mismatch }),
        }),
      );
    else render(report, seconds, io);
    return report.mismatch === undefined ? EXIT.ok : EXIT.failed;
  } catch (e) {
    io.err(`harness store copy: ${printable((e as Error).message)}`);
    return EXIT.failed;
  }
}
