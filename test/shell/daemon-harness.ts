/**
 * A real daemon process for tests: a temporary XDG tree with its own config, producer credentials,
 * a recording notify hook, and the built CLI (`dist/shell/cli/main.js`, which `npm test` builds first).
 */
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import type { ProducerSource } from "../../src/core/sources.js";
import type { PgDatabase } from "../support/pg-cluster.js";
import { mirrorPg } from "../support/pg-mirror.js";
import type { CliResult } from "../support/run-process.js";

export { type CliResult, runProcess } from "../support/run-process.js";

export const CLI = fileURLToPath(new URL("../../dist/shell/cli/main.js", import.meta.url));
const WITH_RULES = fileURLToPath(new URL("../fixtures/daemon/daemon-with-rules.ts", import.meta.url));
const WITH_GATEWAY = fileURLToPath(new URL("../fixtures/daemon/daemon-with-gateway.ts", import.meta.url));
export const HOOKS = fileURLToPath(new URL("../fixtures/hooks/", import.meta.url));

export interface FleetOptions {
  readonly enforce?: readonly string[];
  /**
   * Extra lines for the global config. An `[agents]` table in them must set `listen` (`""` or a port
   * 0 address); without one the fleet adds `[agents] listen = ""`.
   */
  readonly config?: string;
  /**
   * No settings: the daemon runs on defaults, but for the two listeners with fixed default ports, which
   * a test daemon never binds (another test's daemon, or the host's, may hold them, and a daemon that
   * cannot bind a listener exits): the config file says only `metrics_listen` on port 0 and
   * `[agents] listen = ""`.
   */
  readonly noConfig?: boolean;
  /** Policy rules beside the starter pack (`test/fixtures/daemon/daemon-with-rules.ts` runs the daemon). */
  readonly rules?: readonly { readonly name: string; readonly text: string }[];
  /** The notify hook, a script of `test/fixtures/hooks/` given `deliveries` (default `record`). */
  readonly notifyHook?: string;
  /** Configures `[supervisor] stop` to record each invocation's arguments in `stops`. */
  readonly recordStops?: boolean;
  /**
   * Runs the daemon with a stand-in gateway calling propose_rule in its process
   * (`test/fixtures/daemon/daemon-with-gateway.ts`), listening on `gatewaySocket`.
   */
  readonly gateway?: boolean;
  /** `[memory.rules] shadow_period` for the test rules (default "0s": they act at once). */
  readonly shadowPeriod?: string;
  /** Runs the daemon inside this network namespace (`ip netns exec`, root; test/support/netns.ts). */
  readonly netns?: string;
  /** Lines of the config's `[server]` table after `metrics_listen` (`listen`, TLS files…). */
  readonly server?: readonly string[];
  /**
   * The store on PostgreSQL (`[store] url`, over the test cluster's socket) rather than the SQLite file;
   * `storePath` is then a SQLite mirror of it, copied at each read (test/support/pg-mirror.ts).
   */
  readonly pg?: PgDatabase;
  /** Lines of the config's `[store]` table after `url`, with `pg`. */
  readonly store?: readonly string[];
}

/** A loopback port free at the time of asking (for a config that must name a port, not 0). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A test daemon's `[agents]` table: the default port 7434 is never bound by tests. */
const NO_HOOK_LISTENER = '[agents]\nlisten = ""';

/** The `[agents]` table to add after `extra`: none when `extra` has one, which must then set `listen`. */
function agentsTable(extra: string | undefined): string {
  if (extra === undefined || !/^\[agents\]$/m.test(extra)) return NO_HOOK_LISTENER;
  if (!/^listen = /m.test(extra))
    throw new Error("a test fleet's [agents] table must set listen (\"\" or port 0): 7434 is the host's");
  return "";
}

export class TestFleet {
  readonly root = fs.mkdtempSync(path.join(os.tmpdir(), "harness-daemon-"));
  readonly env: NodeJS.ProcessEnv;
  readonly deliveries = path.join(this.root, "deliveries");
  readonly stops = path.join(this.root, "stops");
  private readonly rulesDir: string | undefined;
  private readonly gateway: boolean;
  private readonly netns: string | undefined;
  /** The stand-in gateway's socket, with `gateway: true`. */
  readonly gatewaySocket: string;
  readonly tokens = new Map<ProducerSource, string>();
  private readonly sqlitePath: string;
  /** The store on PostgreSQL, when the fleet runs there. */
  readonly pg: PgDatabase | undefined;
  readonly socketPath: string;
  private daemon: ChildProcess | undefined;
  private daemonExit: Promise<number | null> | undefined;
  daemonStderr = "";
  daemonStdout = "";

  constructor(options: FleetOptions = {}) {
    const xdg = (name: string) => {
      const d = path.join(this.root, name);
      fs.mkdirSync(d, { recursive: true, mode: 0o700 });
      return d;
    };
    this.env = {
      PATH: process.env.PATH,
      HOME: this.root,
      XDG_CONFIG_HOME: xdg("config"),
      XDG_STATE_HOME: xdg("state"),
      XDG_RUNTIME_DIR: xdg("run"),
    };
    this.sqlitePath = path.join(this.root, "state", "harness", "harness.db");
    this.pg = options.pg;
    this.socketPath = path.join(this.root, "run", "harness.sock");
    this.gatewaySocket = path.join(this.root, "run", "gateway.sock");
    this.gateway = options.gateway === true;
    this.netns = options.netns;
    fs.mkdirSync(this.deliveries);
    fs.mkdirSync(this.stops);
    if (options.rules !== undefined) {
      this.rulesDir = path.join(this.root, "rules");
      fs.mkdirSync(this.rulesDir);
      for (const r of options.rules) fs.writeFileSync(path.join(this.rulesDir, `${r.name}.toml`), r.text);
    }
    if (options.noConfig === true) {
      fs.mkdirSync(path.join(this.root, "config", "harness"), { recursive: true });
      fs.writeFileSync(
        path.join(this.root, "config", "harness", "harness.toml"),
        `[server]\nmetrics_listen = "127.0.0.1:0"\n${NO_HOOK_LISTENER}\n`,
      );
      return;
    }
    for (const source of ["observer", "ledger", "loopguard", "graph", "facts"] as const) {
      const file = path.join(this.root, `${source}.token`);
      fs.writeFileSync(file, `${source}-${"x".repeat(40)}-${path.basename(this.root)}\n`, { mode: 0o600 });
      this.tokens.set(source, file);
    }
    fs.mkdirSync(path.join(this.root, "config", "harness"), { recursive: true });
    fs.writeFileSync(
      path.join(this.root, "config", "harness", "harness.toml"),
      [
        "[memory.rules]",
        `enforce = ${JSON.stringify(options.enforce ?? [])}`,
        // Test rules act at once: their shadow week is REQ-9's business, tested in the core.
        ...(options.rules === undefined
          ? []
          : [`shadow_period = ${JSON.stringify(options.shadowPeriod ?? "0s")}`]),
        "[notify]",
        `command = ${JSON.stringify([path.join(HOOKS, options.notifyHook ?? "record"), this.deliveries])}`,
        'timeout = "5s"',
        'cooldown = "0s"',
        ...(options.recordStops === true
          ? ["[supervisor]", `stop = ${JSON.stringify([path.join(HOOKS, "record-args"), this.stops])}`]
          : []),
        ...(options.pg === undefined
          ? []
          : [
              "[store]",
              `url = "postgresql://${options.pg.user}@/${options.pg.database}?host=${options.pg.host}"`,
              ...(options.store ?? []),
            ]),
        "[server]",
        'metrics_listen = "127.0.0.1:0"',
        ...(options.server ?? []),
        "[server.producers]",
        ...[...this.tokens].map(([s, f]) => `${s} = ${JSON.stringify(f)}`),
        options.config ?? "",
        agentsTable(options.config),
        // Ends with a newline: a test may append a table of its own.
        "",
      ].join("\n"),
    );
  }

  /**
   * The store's SQLite file: the daemon's own, or, on PostgreSQL, a mirror copied now (a read of a
   * store another process owns; `store-reads.ts` reads either).
   */
  get storePath(): string {
    return this.pg === undefined
      ? this.sqlitePath
      : mirrorPg(this.pg, path.join(this.root, "pg-mirror", "harness.db"));
  }

  /** Starts `harness daemon` and resolves once it says where it listens (a large store takes longer). */
  async start(extraEnv: NodeJS.ProcessEnv = {}, timeoutMs = 15_000): Promise<string> {
    this.daemonStderr = "";
    this.daemonStdout = "";
    const argv =
      this.rulesDir !== undefined
        ? ["--import", "tsx", WITH_RULES]
        : this.gateway
          ? ["--import", "tsx", WITH_GATEWAY]
          : [CLI, "daemon"];
    // `ip netns exec` execs node in the namespace: the child's pid is the daemon's, signals reach it.
    const [command, args] =
      this.netns === undefined
        ? [process.execPath, argv]
        : ["ip", ["netns", "exec", this.netns, process.execPath, ...argv]];
    const child = spawn(command, args, {
      env: {
        ...this.env,
        ...extraEnv,
        ...(this.rulesDir === undefined ? {} : { TEST_RULES_DIR: this.rulesDir }),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.daemon = child;
    this.daemonExit = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
    child.stdout?.on("data", (d: Buffer) => {
      this.daemonStdout += d.toString();
    });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`daemon did not start: ${this.daemonStderr}`)),
        timeoutMs,
      );
      child.stderr?.on("data", (d: Buffer) => {
        this.daemonStderr += d.toString();
        if (/harness daemon: store /.test(this.daemonStderr)) {
          clearTimeout(timer);
          resolve(this.daemonStderr);
        }
      });
      child.on("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`daemon exited ${code}: ${this.daemonStderr}`));
      });
    });
  }

  /** Waits for the daemon to exit (after a failpoint's SIGKILL, or a stop). */
  async exited(timeoutMs = 15_000): Promise<number | null> {
    const exit = this.daemonExit ?? Promise.resolve(null);
    return Promise.race([
      exit,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error("daemon did not exit")), timeoutMs),
      ),
    ]);
  }

  async stop(): Promise<void> {
    if (this.daemon === undefined || this.daemon.exitCode !== null || this.daemon.signalCode !== null) return;
    this.daemon.kill("SIGTERM");
    await this.exited();
  }

  /** Kills the daemon with SIGKILL, as a power cut would, and waits for it to exit. */
  async kill(): Promise<void> {
    if (this.daemon === undefined || !this.running) return;
    this.daemon.kill("SIGKILL");
    await this.exited();
  }

  /** Sends the daemon `signal`: SIGSTOP and SIGCONT make a stall. */
  signal(signal: NodeJS.Signals): void {
    this.daemon?.kill(signal);
  }

  /** The daemon's process id, while it runs. */
  get pid(): number | undefined {
    return this.running ? this.daemon?.pid : undefined;
  }

  get running(): boolean {
    return this.daemon !== undefined && this.daemon.exitCode === null && this.daemon.signalCode === null;
  }

  /** Runs the real CLI with this fleet's environment. */
  cli(args: readonly string[], stdin: string | Uint8Array = ""): Promise<CliResult> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        env: this.env,
        stdio: ["pipe", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => {
        stdout += d.toString();
      });
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      child.on("exit", (code) => resolve({ code, stdout, stderr }));
      // A CLI that exits before reading all its input makes this write fail (EPIPE): that is the CLI's
      // outcome for the test to judge, not an unhandled error in the test worker.
      child.stdin.on("error", (e: NodeJS.ErrnoException) => {
        stderr += `[test harness: writing the CLI's stdin failed: ${e.code ?? e.message}]\n`;
      });
      child.stdin.end(stdin);
    });
  }

  /** Polls until `done` holds (the daemon works asynchronously). */
  async until(done: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    const start = Date.now();
    while (!done()) {
      if (Date.now() - start > timeoutMs)
        throw new Error(`timed out waiting for ${what}\n${this.daemonStderr}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** The argument lists the stop command was run with. */
  stopped(): string[][] {
    return fs
      .readdirSync(this.stops)
      .filter((f) => f.endsWith(".args"))
      .map((f) => fs.readFileSync(path.join(this.stops, f), "utf8").trimEnd().split("\n"));
  }

  /** The payloads the notify hook received. */
  delivered(): Record<string, unknown>[] {
    return fs
      .readdirSync(this.deliveries)
      .filter((f) => f.endsWith(".json"))
      .map(
        (f) => JSON.parse(fs.readFileSync(path.join(this.deliveries, f), "utf8")) as Record<string, unknown>,
      );
  }

  async dispose(): Promise<void> {
    if (this.daemon !== undefined && this.running) {
      this.daemon.kill("SIGKILL");
      await this.exited().catch(() => undefined);
    }
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

export const jsonl = (events: readonly Record<string, unknown>[]): string =>
  events.map((e) => JSON.stringify(e)).join("\n");

/** Stops a run after two failing tool calls within 10 minutes: a stop rule, which the starter pack lacks. */
export const ERROR_STREAK_STOPS = `name = "error-streak-stops"
description = "A run made two failing tool calls within 10m; stop it."
on = "run_event"
when = '''
event.type == "tool" && event.is_error
  && count({"type": "tool", "run": event.run, "is_error": true}, duration("10m")) >= 2
'''
level = "stop"
cooldown = "1m"
target = "run"
message = "{{run}} made two failing tool calls in 10m"
`;
