/**
 * A PostgreSQL cluster a test may take away (issue 34 item 4): on a unix socket in a directory of its
 * own, like the run's shared cluster (`pg-cluster.ts`), but started and stopped by the one test file that
 * uses it, which crashes it (`pg_ctl stop -m immediate`, as a server whose host loses power stops: no
 * checkpoint, recovery at the next start) and starts it again on the same data.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type pg from "pg";
import { makeClusterDir, runAsServer } from "./pg-cluster.js";

export interface OwnCluster {
  /** node-postgres' options for its `postgres` database. */
  readonly options: pg.PoolConfig;
  /** Stops the server at once, as a crash does. */
  crash(): void;
  /** Starts it again on the same data; the server recovers what was committed. */
  start(): void;
  /**
   * Freezes the server and every backend (SIGSTOP): connections stay open and a new one is taken into
   * the socket's queue, but nothing answers, as a wedged host does. `thaw` lets them go on.
   */
  freeze(): void;
  thaw(): void;
  /** Stops it and removes its data. */
  remove(): void;
}

const PORT = 5432;

export function ownCluster(): OwnCluster {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "harness-pg-own-"));
  makeClusterDir(dir);
  const data = path.join(dir, "data");
  runAsServer(dir, "initdb", ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"]);
  let running = false;
  const start = () => {
    runAsServer(dir, "pg_ctl", [
      "-D",
      data,
      "-l",
      path.join(dir, "server.log"),
      "-w",
      "-t",
      "60",
      "-o",
      `-c listen_addresses='' -c unix_socket_directories='${dir}' -c port=${PORT}`,
      "start",
    ]);
    running = true;
  };
  const crash = () => {
    runAsServer(dir, "pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
    running = false;
  };
  /** The postmaster and its children: the backends, the WAL writer, the checkpointer… */
  const serverPids = (): number[] => {
    const postmaster = Number(fs.readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]);
    const children = spawnSync("pgrep", ["-P", String(postmaster)], { encoding: "utf8" }).stdout;
    return [
      postmaster,
      ...children
        .split("\n")
        .filter((l) => l !== "")
        .map(Number),
    ];
  };
  const signalAll = (signal: NodeJS.Signals) => {
    for (const pid of serverPids()) process.kill(pid, signal);
  };
  start();
  return {
    options: { host: dir, port: PORT, user: "postgres", database: "postgres" },
    crash,
    start,
    freeze: () => signalAll("SIGSTOP"),
    thaw: () => signalAll("SIGCONT"),
    remove: () => {
      if (running) crash();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
