/**
 * What `harness demo` runs (`../cli/commands/demo.ts` tells the story): the daemon on a temporary
 * store, a simulated fleet driven through the ingestion API
 * by the reference supervisor, and, as they happen, the starter rules firing, the sample notify hook
 * receiving `rule_fired`, and a hold refusing a firing. Everything lives in one temporary directory
 * with its own XDG directories, config, credentials and hook; the operator's own config, store and
 * socket are never read or touched. The directory is removed at the end unless `keep`.
 *
 * The daemon runs in this process (`DaemonApp.start`), with its log in the directory (`daemon.log`), so
 * the terminal shows the story rather than the log lines.
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pino } from "pino";
import { isLevel } from "../../core/rule-file.js";
import { needsEnforce } from "../../core/rule-set.js";
import { PRODUCER_SOURCES, type ProducerSource } from "../../core/sources.js";
import { DaemonApp, type DaemonOptions } from "../app/daemon-app.js";
import { ruleClient } from "../rpc/client.js";
import type { FireRow } from "../store/rule-reads.js";
import type { RuleReadsPort } from "../store/store-door.js";
import type { SupervisorEvent } from "../supervisor/events.js";
import { FleetJournal } from "../supervisor/fleet-journal.js";
import { ReferenceSupervisor } from "../supervisor/reference-supervisor.js";
import { supervisorStopArgv } from "../supervisor/stop-command.js";
import { createLog } from "../support/log.js";
import { Turns } from "../support/turns.js";

/** The demo's one enforced rule: the hold the new user watches refuse a firing. */
export const DEMO_ENFORCE = ["budget-exhaustion-recurring"] as const;

/** The demo directory's layout, config and credentials. */
export interface SandboxOptions {
  readonly enforce: readonly string[];
  /** `[memory.rules] shadow_period`; the default (7d) unless given. */
  readonly shadowPeriod?: string;
  /** `[notify] cooldown`; the default (15m) unless given. */
  readonly notifyCooldown?: string;
  /** Where the directory is made; the system's temporary directory by default. */
  readonly parent?: string;
  /** `[otel]`: the demo's decisions exported to the reader's collector. */
  readonly otel?: { readonly endpoint: string; readonly protocol: string };
}

const toml = (s: string): string => JSON.stringify(s);

/**
 * The sample notify hook: appends the JSON it receives on stdin to the file named by its argument, one
 * line per delivery. One `printf` per delivery is one write, so deliveries from concurrent hook runs
 * never interleave within a line.
 */
const HOOK_SCRIPT = `#!/bin/sh
# harness demo's sample notify hook. The daemon runs it without a shell from its absolute path, with
# the event as JSON on stdin and in HARNESS_NOTIFY_EVENT, _HARNESS, _HOST, _STATE and _MESSAGE.
payload=$(cat)
printf '%s\\n' "$payload" >> "$1"
`;

/** A temporary home for one daemon, its fleet and its hook, removed with `remove`. */
export class Sandbox {
  readonly env: NodeJS.ProcessEnv;
  readonly configPath: string;
  readonly storePath: string;
  readonly socketPath: string;
  /** The reference supervisor's socket, which `[supervisor] stop` reaches. */
  readonly supervisorSocket: string;
  readonly hookScript: string;
  /** The hook's output: one JSON payload a line. */
  readonly deliveries: string;
  readonly logPath: string;
  readonly tokens: Readonly<Partial<Record<ProducerSource, string>>>;

  private constructor(
    readonly root: string,
    options: SandboxOptions,
    searchPath: string | undefined,
  ) {
    const dir = (...parts: string[]) => {
      const d = path.join(root, ...parts);
      fs.mkdirSync(d, { recursive: true, mode: 0o700 });
      return d;
    };
    this.env = {
      ...(searchPath === undefined ? {} : { PATH: searchPath }),
      HOME: root,
      XDG_CONFIG_HOME: dir("config"),
      XDG_STATE_HOME: dir("state"),
      XDG_RUNTIME_DIR: dir("run"),
    };
    this.configPath = path.join(dir("config", "harness"), "harness.toml");
    this.storePath = path.join(root, "state", "harness", "harness.db");
    this.socketPath = path.join(root, "run", "harness.sock");
    this.supervisorSocket = path.join(dir("run", "supervisor"), "stop.sock");
    this.hookScript = path.join(root, "notify-hook");
    this.deliveries = path.join(root, "hook-deliveries.jsonl");
    this.logPath = path.join(root, "daemon.log");
    const credentials = dir("credentials");
    const tokens: Partial<Record<ProducerSource, string>> = {};
    const files: string[] = [];
    for (const source of PRODUCER_SOURCES) {
      const token = randomBytes(32).toString("base64url");
      const file = path.join(credentials, `${source}.token`);
      fs.writeFileSync(file, `${token}\n`, { mode: 0o600, flag: "wx" });
      tokens[source] = token;
      files.push(`${source} = ${toml(file)}`);
    }
    this.tokens = tokens;
    fs.writeFileSync(this.hookScript, HOOK_SCRIPT, { mode: 0o700, flag: "wx" });
    fs.writeFileSync(this.deliveries, "", { mode: 0o600, flag: "wx" });
    const config = [
      "# Written by `harness demo` in its temporary directory; the operator's own config is never read.",
      "[memory]",
      'rule_miners = ["miner"]',
      "",
      "[memory.rules]",
      `enforce = ${JSON.stringify(options.enforce)}`,
      ...(options.shadowPeriod === undefined ? [] : [`shadow_period = ${toml(options.shadowPeriod)}`]),
      "",
      "[notify]",
      `command = [${toml(this.hookScript)}, ${toml(this.deliveries)}]`,
      'timeout = "5s"',
      ...(options.notifyCooldown === undefined ? [] : [`cooldown = ${toml(options.notifyCooldown)}`]),
      "",
      "[supervisor]",
      `stop = [${supervisorStopArgv(this.supervisorSocket).map(toml).join(", ")}]`,
      "",
      "[server]",
      `socket = ${toml(this.socketPath)}`,
      'metrics_listen = "127.0.0.1:0"',
      "",
      "[server.producers]",
      ...files,
      "",
      // The demo feeds no agent hooks, and a daemon that cannot bind a listener exits: the operator's
      // own daemon may hold the default port.
      "[agents]",
      'listen = ""',
      "",
      ...(options.otel === undefined
        ? []
        : [
            "[otel]",
            `endpoint = ${toml(options.otel.endpoint)}`,
            `protocol = ${toml(options.otel.protocol)}`,
            "",
          ]),
    ];
    fs.writeFileSync(this.configPath, config.join("\n"), { mode: 0o600 });
  }

  /** Makes the directory and everything in it; nothing is left behind when this throws. */
  static create(options: SandboxOptions, env: NodeJS.ProcessEnv = {}): Sandbox {
    const root = fs.mkdtempSync(path.join(options.parent ?? os.tmpdir(), "harness-demo-"));
    try {
      return new Sandbox(root, options, env.PATH);
    } catch (e) {
      fs.rmSync(root, { recursive: true, force: true });
      throw e;
    }
  }

  /** The daemon on this directory's store, socket and config, logging to `daemon.log`. */
  async startDaemon(options: Pick<DaemonOptions, "tickMs" | "loadRules"> = {}): Promise<RunningDaemon> {
    const destination = pino.destination({ dest: this.logPath, sync: true, mode: 0o600 });
    try {
      const daemon = await DaemonApp.start({
        env: this.env,
        configPath: this.configPath,
        storePath: this.storePath,
        socketPath: this.socketPath,
        log: createLog({ destination }),
        ...(options.tickMs === undefined ? {} : { tickMs: options.tickMs }),
        ...(options.loadRules === undefined ? {} : { loadRules: options.loadRules }),
      });
      return new RunningDaemon(daemon, () => destination.end());
    } catch (e) {
      destination.end();
      throw e;
    }
  }

  journal(): FleetJournal {
    return new FleetJournal(this.socketPath, this.tokens);
  }

  async startSupervisor(journal: FleetJournal, onEvent?: (e: SupervisorEvent) => void) {
    return ReferenceSupervisor.start({
      journal,
      rules: ruleClient({ socketPath: this.socketPath }),
      socketPath: this.supervisorSocket,
      ...(onEvent === undefined ? {} : { onEvent }),
    });
  }

  remove(): void {
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The in-process daemon, with the waits the demo and the tests need. */
export class RunningDaemon {
  private closed = false;
  /** The store's reads, through the daemon's store door. */
  readonly reads: RuleReadsPort;

  constructor(
    readonly daemon: DaemonApp,
    private readonly onClosed: () => void,
  ) {
    this.reads = daemon.door.ruleReads;
  }

  private cursor(): number {
    return this.daemon.daemon.view.cursor;
  }

  /** Resolves once the evaluator has evaluated (and committed) every row up to `seq`. */
  async evaluated(seq: number, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.cursor() < seq) {
      if (Date.now() > deadline)
        throw new Error(
          `the rules engine has evaluated up to seq ${this.cursor()}, not ${seq}, after ${timeoutMs} ms`,
        );
      await sleep(10);
    }
  }

  /** Resolves once no fire's notify or stop is pending or running (a hook or stop command still out). */
  async actionsDone(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((await this.reads.actionsInFlight()) > 0) {
      if (Date.now() > deadline) throw new Error(`actions still running after ${timeoutMs} ms`);
      await sleep(20);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.daemon.close();
    } finally {
      this.onClosed();
    }
  }
}

/** The demo's narration: one line per thing that happened, stamped with the seconds since the start. */
export class Narrator {
  private readonly t0 = Date.now();
  private shownPayload = false;
  readonly rulesFired = new Set<string>();
  ruleFiredDelivered = 0;

  /** With `json`, each event is one JSON object (`t`, `kind`, `message`, and what `data` adds) per line. */
  constructor(
    private readonly out: (line: string) => void,
    private readonly json = false,
  ) {}

  /**
   * One event: a line, and `more` lines under its text; as JSON, `more` is its `detail` and `data` its
   * further fields.
   */
  line(label: string, text: string, more: readonly string[] = [], data: Record<string, unknown> = {}): void {
    const seconds = (Date.now() - this.t0) / 1000;
    if (this.json) {
      const detail = more.length === 0 ? {} : { detail: more.join("\n") };
      this.out(
        JSON.stringify({ t: Number(seconds.toFixed(1)), kind: label, message: text, ...detail, ...data }),
      );
      return;
    }
    this.out(`${seconds.toFixed(1).padStart(5)}s  ${label.padEnd(8)}  ${text}`);
    for (const m of more) this.out(`${" ".repeat(18)}${m}`);
  }

  supervisor = (e: SupervisorEvent): void => {
    switch (e.kind) {
      case "spawned":
        this.line("fleet", `${e.run} spawned (${e.trigger})`);
        return;
      case "closed": {
        const why = e.reason === "" ? "" : `, reason ${e.reason}`;
        const code = e.exitCode === undefined ? "" : ` (exit ${e.exitCode})`;
        this.line("fleet", `${e.run} closed ${e.outcome}${why}${code}`);
        return;
      }
      case "skipped":
        if (e.reason === "rule_hold") {
          this.line(
            "hold",
            `${e.harness}'s scheduled firing skipped (${e.run} closed skipped, reason rule_hold)`,
            [`CheckAdmission: ${e.message}`],
          );
        } else this.line("fleet", `${e.harness}'s scheduled firing skipped (${e.reason}: ${e.message})`);
        return;
      case "refused":
        this.line("hold", `harness ${e.command} ${e.harness} refused: ${e.message}`);
        return;
      case "not_restarted":
        this.line("hold", `${e.harness} not restarted: ${e.message}`);
        return;
      case "loop_stopped":
        this.line(
          "guard",
          `loop guard: ${e.run} made the same ${e.tool} call ${e.count} times in a row; loop_stopped sent, ${e.harness} stopped`,
        );
        return;
      case "rule_stop":
        this.line(
          "stop",
          e.result === "stopped"
            ? `rule ${e.rule} (fire ${e.fireId}, seq ${e.seq}) stopped ${e.run}`
            : `rule ${e.rule} (fire ${e.fireId}) asked to stop ${e.run}, no longer in flight: nothing stopped`,
        );
        return;
      case "admission_unavailable":
        this.line("warn", `CheckAdmission for ${e.harness} failed (${e.error}); admitted without it`);
        return;
    }
  };

  fire(f: FireRow): void {
    this.rulesFired.add(f.rule);
    const target = f.target_kind === "harness" ? (f.target_key ?? "") : `${f.target_kind} ${f.target_key}`;
    const level =
      f.declared_level !== f.effective_level
        ? `declared ${f.declared_level}, acts at ${f.effective_level}: not in enforce`
        : isLevel(f.effective_level) && needsEnforce(f.effective_level)
          ? `${f.effective_level}, enforced`
          : f.effective_level;
    const held = f.action === "hold" || f.action === "stop" ? `; ${f.harness} is now held` : "";
    this.line("rule", `${f.rule} fired on ${target} (${level}): ${f.message}${held}`);
  }

  delivery(payload: Record<string, unknown>): void {
    const s = (k: string) => String(payload[k] ?? "");
    if (payload.event === "rule_fired") {
      this.ruleFiredDelivered++;
      // The first payload is shown whole: what a hook reads on its stdin.
      const first = !this.shownPayload;
      this.shownPayload = true;
      this.line(
        "hook",
        `rule_fired delivered: ${s("rule")} for ${s("harness")} (fire ${s("fire_id")}, level ${s("level")}, action ${s("action")})`,
        first && !this.json
          ? [
              "what the hook read on its stdin (every rule_fired carries these fields):",
              ...JSON.stringify(payload, null, 2)
                .split("\n")
                .map((l) => `  ${l}`),
            ]
          : [],
        first ? { payload } : {},
      );
    } else this.line("hook", `${s("event")} delivered: ${s("message")}`);
  }
}

/** Prints new fires from the store and new deliveries from the hook's file as they appear. */
export class Watcher {
  private lastFire = 0;
  private offset = 0;
  private partial = "";
  /** One read of new fires at a time: two reads after the same fire would both show what came after it. */
  private readonly reads = new Turns();

  constructor(
    private readonly narrator: Narrator,
    private readonly deliveries: string,
  ) {}

  fires(reads: RuleReadsPort): Promise<void> {
    return this.reads.run(async () => {
      for (const r of await reads.firesAfter(this.lastFire)) {
        this.lastFire = r.rowid;
        this.narrator.fire(r);
      }
    });
  }

  hook(): void {
    const size = fs.statSync(this.deliveries).size;
    if (size <= this.offset) return;
    const fd = fs.openSync(this.deliveries, "r");
    try {
      const buf = Buffer.alloc(size - this.offset);
      fs.readSync(fd, buf, 0, buf.length, this.offset);
      this.offset = size;
      const lines = (this.partial + buf.toString("utf8")).split("\n");
      this.partial = lines.pop() ?? "";
      for (const line of lines) {
        if (line.trim() === "") continue;
        let payload: unknown;
        try {
          payload = JSON.parse(line);
        } catch {
          this.narrator.line("hook", `the hook wrote a line that is not JSON: ${line.slice(0, 200)}`);
          continue;
        }
        if (typeof payload === "object" && payload !== null)
          this.narrator.delivery(payload as Record<string, unknown>);
      }
    } finally {
      fs.closeSync(fd);
    }
  }
}
