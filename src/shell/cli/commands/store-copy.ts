/**
 * `harness store copy --from PATH --to URL [--password-file F]`: a SQLite store moved into an empty
 * PostgreSQL database and verified row for row (`../../store/pg/pg-copy.ts`). The store may be a running
 * daemon's: the copy is one commit's store. Prints each table's rows on both sides and the verification;
 * exits 1 on any difference, naming the table and the first key that differs. The URL's password, if it
 * has one, is never printed: the database is named by host and database only.
 */
import { performance } from "node:perf_hooks";
import type pg from "pg";
import { storePath as defaultStorePath } from "../../config/paths.js";
import { copyStore, type StoreCopyReport } from "../../store/pg/pg-copy.js";
import { readTokenFileSync } from "../../support/token-file.js";
import { EXIT, type Io, table } from "../io.js";
import { printable } from "../render/printable.js";

/** A connection URL longer than this is not one. */
const MAX_URL_LENGTH = 4096;

export interface StoreCopyCliOptions {
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  readonly passwordFile?: string | undefined;
  readonly json?: boolean;
}

/**
 * A postgresql:// URL's parts, for messages: libpq's form, whose host may be empty with the socket's
 * directory in `?host=` (which WHATWG's URL refuses). Disjoint classes, no nesting: linear time.
 */
const PG_URL = /^postgres(?:ql)?:\/\/(?:[^@/?#]*@)?([^/?#]*)(?:\/([^?#]*))?(?:\?([^#]*))?$/;

/**
 * The pool's options from the URL and the password file: node-postgres reads the URL itself, host and
 * database are named beside it for messages. (The `[store]` config's reader takes this place.)
 */
function poolConfigOf(url: string, passwordFile: string | undefined): pg.PoolConfig | string {
  const m = PG_URL.exec(url);
  if (m === null) return "--to is not a postgresql:// URL (postgresql://[user@]host[:port]/database)";
  let host: string | undefined;
  let database: string | undefined;
  try {
    host =
      new URLSearchParams(m[3] ?? "").get("host") ??
      (decodeURIComponent(m[1] ?? "").replace(/:\d*$/, "") || undefined);
    database = decodeURIComponent(m[2] ?? "") || undefined;
  } catch {
    return "--to has a malformed %-escape";
  }
  let password: string | undefined;
  if (passwordFile !== undefined) {
    const read = readTokenFileSync(passwordFile);
    if ("problem" in read) return `--password-file: ${read.problem}`;
    password = read.token;
  }
  return {
    connectionString: url,
    ...(host === undefined ? {} : { host }),
    ...(database === undefined ? {} : { database }),
    ...(password === undefined ? {} : { password }),
  };
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
  if (options.to.length > MAX_URL_LENGTH) {
    io.err(`harness store copy: --to is longer than ${MAX_URL_LENGTH} characters`);
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
