/**
 * A throwaway PostgreSQL cluster for the tests (issue 34): one per test run, started by the first test
 * file that asks for a database and stopped by vitest's global teardown (`pg-global-setup.ts`), a
 * database of its own for each file. `initdb` and `pg_ctl` come from `/usr/lib/postgresql/<newest>/bin`
 * (not on PATH; `HARNESS_TEST_PG_BIN` overrides), the server listens on no TCP address, only on a unix
 * socket in the run's own temporary directory, so it cannot clash with a cluster the `postgresql` package
 * started, and keeps the server's defaults for durability (fsync on): the order tests commit as a real
 * server does. Run as root (CI), the server runs as `nobody`, since postgres refuses to run as root.
 */
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import pg from "pg";

/** Where vitest's global setup keeps the run's cluster: data, socket, log and the start lock. */
export const PG_DIR_KEY = "harnessPgDir";

/** How a test file reaches its database: node-postgres' connection options. */
export interface PgDatabase {
  readonly host: string;
  readonly user: string;
  readonly database: string;
}

const SUPERUSER = "postgres";
/** The run's cluster needs no fixed port: the socket's name carries it, in a directory of its own. */
const PORT = 5432;
const START_WAIT_MS = 120_000;

/** The PostgreSQL server binaries: the override, or the newest Debian version installed. */
export function pgBinDir(): string {
  const override = process.env.HARNESS_TEST_PG_BIN;
  if (override !== undefined && override !== "") return override;
  const root = "/usr/lib/postgresql";
  const versions = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((v) => /^\d+$/.test(v) && fs.existsSync(path.join(root, v, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0)
    throw new Error(
      `no PostgreSQL server under ${root} (install Debian's postgresql package, or set HARNESS_TEST_PG_BIN)`,
    );
  return path.join(root, versions[0] as string, "bin");
}

/** The user the server runs as: ourselves, or `nobody` when we are root. */
export function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync("id", [flag, "nobody"], { encoding: "utf8" }).trim());
  return { uid: id("-u"), gid: id("-g") };
}

/** Runs a server binary as the server's user; throws with its output when it fails. */
export function runAsServer(dir: string, bin: string, args: readonly string[]): void {
  const user = serverUser();
  const r = spawnSync(path.join(pgBinDir(), bin), args, {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, LC_ALL: "C", TZ: "UTC" },
    ...(user ?? {}),
  });
  if (r.status !== 0)
    throw new Error(`${bin} ${args.join(" ")}: exit ${r.status ?? r.signal}\n${r.stdout}${r.stderr}`);
}

/** Makes the run's directory, owned by the server's user. */
export function makeClusterDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const user = serverUser();
  if (user !== undefined) fs.chownSync(dir, user.uid, user.gid);
}

const dataDir = (dir: string) => path.join(dir, "data");
const readyFile = (dir: string) => path.join(dir, "ready");

/** initdb (once per run) and start; the server keeps its default fsync and synchronous_commit. */
function startCluster(dir: string): void {
  // --no-sync: initdb itself does not wait for the disk; the running server's settings are untouched.
  runAsServer(dir, "initdb", ["-D", dataDir(dir), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8", "--no-sync"]);
  runAsServer(dir, "pg_ctl", [
    "-D",
    dataDir(dir),
    "-l",
    path.join(dir, "server.log"),
    "-w",
    "-t",
    String(START_WAIT_MS / 1000),
    "-o",
    `-c listen_addresses='' -c unix_socket_directories='${dir}' -c port=${PORT} -c max_connections=200`,
    "start",
  ]);
  fs.writeFileSync(readyFile(dir), "");
}

/** Stops the run's cluster if one was started; called by the global teardown. */
export function stopCluster(dir: string): void {
  if (!fs.existsSync(readyFile(dir))) return;
  runAsServer(dir, "pg_ctl", ["-D", dataDir(dir), "-m", "fast", "-w", "stop"]);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The run's cluster, started by whichever file asks first (the others wait on its lock). */
async function ensureCluster(dir: string): Promise<void> {
  const lock = path.join(dir, "start.lock");
  const deadline = Date.now() + START_WAIT_MS;
  for (;;) {
    if (fs.existsSync(readyFile(dir))) return;
    try {
      fs.mkdirSync(lock);
    } catch {
      if (Date.now() > deadline) throw new Error(`PostgreSQL test cluster in ${dir}: not started in time`);
      await sleep(50);
      continue;
    }
    try {
      if (!fs.existsSync(readyFile(dir))) startCluster(dir);
    } finally {
      fs.rmdirSync(lock);
    }
  }
}

let count = 0;

/**
 * A fresh database in the run's cluster, named after `label` (a test file's short name), for one test
 * file; `dir` is what the global setup provides (`inject(PG_DIR_KEY)`).
 */
export async function pgDatabase(dir: string, label: string): Promise<PgDatabase> {
  await ensureCluster(dir);
  count++;
  const database = `${label.replace(/[^a-z0-9]/gi, "_").toLowerCase()}_${process.pid}_${count}`;
  const admin = new pg.Client({ host: dir, port: PORT, user: SUPERUSER, database: "postgres" });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
  } finally {
    await admin.end();
  }
  return { host: dir, user: SUPERUSER, database };
}

/** node-postgres' options for `db`, with the port the run's socket carries. */
export const pgOptions = (db: PgDatabase): pg.PoolConfig => ({ ...db, port: PORT });
