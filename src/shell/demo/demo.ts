/**
 * `harness demo`: the daemon on a temporary store, a simulated fleet driven through the ingestion API
 * by the reference supervisor, and, as they happen, the starter rules firing, the sample notify hook
 * receiving `rule_fired`, and a hold refusing a firing. Everything lives in one temporary directory
 * with its own XDG directories, config, credentials and hook; the operator's own config, store and
 * socket are never read or touched. The directory is removed at the end unless `keep`.
 *
 * The daemon runs in this process (`Daemon.start`), with its log in the directory (`daemon.log`), so
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
import { Daemon, type DaemonOptions } from "../daemon/daemon.js";
import { createLog } from "../log.js";
import { ruleClient } from "../rpc/client.js";
import { runClear } from "../rules-command.js";
import type { Db } from "../store/open-store.js";
import { FLEET, type FleetReport, simulateFleet } from "./fleet-sim.js";
import {
  FleetJournal,
  ReferenceSupervisor,
  type SupervisorEvent,
  supervisorStopArgv,
} from "./reference-supervisor.js";

export interface DemoIo {
  readonly env: NodeJS.ProcessEnv;
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

export interface DemoOptions {
  /** About how long the fleet runs; 20 s by default. */
  readonly seconds?: number;
  /** Keep the temporary directory (store, config, logs, hook deliveries) and print where it is. */
  readonly keep?: boolean;
  /** Another seed, another (equally complete) fleet. */
  readonly seed?: number;
}

/** The demo's one enforced rule: the hold the new user watches refuse a firing. */
export const DEMO_ENFORCE = ["budget-exhaustion-recurring"] as const;
export const DEFAULT_DEMO_SECONDS = 20;
const DEFAULT_SEED = 29;
/** What the demo must see to call itself a success. */
const NEED_RULES = 4;

/** The demo directory's layout, config and credentials. */
export interface SandboxOptions {
  readonly enforce: readonly string[];
  /** `[memory.rules] shadow_period`; the default (7d) unless given. */
  readonly shadowPeriod?: string;
  /** `[notify] cooldown`; the default (15m) unless given. */
  readonly notifyCooldown?: string;
  /** Where the directory is made; the system's temporary directory by default. */
  readonly parent?: string;
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
      const daemon = await Daemon.start({
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

  constructor(
    readonly daemon: Daemon,
    private readonly onClosed: () => void,
  ) {}

  get db(): Db {
    return this.daemon.store.db;
  }

  private cursor(): number {
    return (this.db.prepare("SELECT cursor FROM evaluator WHERE id = 1").get() as { cursor: number }).cursor;
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
    const busy = this.db.prepare(
      "SELECT count(*) AS n FROM rule_actions WHERE state IN ('pending', 'started')",
    );
    const deadline = Date.now() + timeoutMs;
    while ((busy.get() as { n: number }).n > 0) {
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

interface FireRow {
  readonly rowid: number;
  readonly fire_id: string;
  readonly rule: string;
  readonly harness: string | null;
  readonly target_kind: string | null;
  readonly target_key: string | null;
  readonly declared_level: string;
  readonly effective_level: string;
  readonly mode: string;
  readonly action: string;
  readonly message: string;
}

/** The demo's narration: one line per thing that happened, stamped with the seconds since the start. */
class Narrator {
  private readonly t0 = Date.now();
  private shownPayload = false;
  readonly rulesFired = new Set<string>();
  ruleFiredDelivered = 0;

  constructor(private readonly out: (line: string) => void) {}

  line(label: string, text: string): void {
    const t = ((Date.now() - this.t0) / 1000).toFixed(1).padStart(5);
    this.out(`${t}s  ${label.padEnd(8)}  ${text}`);
  }

  /** More of the line before, under its text. */
  more(text: string): void {
    this.out(`${" ".repeat(18)}${text}`);
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
          );
          this.more(`CheckAdmission: ${e.message}`);
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
      this.line(
        "hook",
        `rule_fired delivered: ${s("rule")} for ${s("harness")} (fire ${s("fire_id")}, level ${s("level")}, action ${s("action")})`,
      );
      if (!this.shownPayload) {
        this.shownPayload = true;
        this.more("what the hook read on its stdin (every rule_fired carries these fields):");
        for (const l of JSON.stringify(payload, null, 2).split("\n")) this.more(`  ${l}`);
      }
    } else this.line("hook", `${s("event")} delivered: ${s("message")}`);
  }
}

/** Prints new fires from the store and new deliveries from the hook's file as they appear. */
class Watcher {
  private lastFire = 0;
  private offset = 0;
  private partial = "";

  constructor(
    private readonly narrator: Narrator,
    private readonly deliveries: string,
  ) {}

  fires(db: Db): void {
    const rows = db
      .prepare(
        `SELECT rowid, fire_id, rule, harness, target_kind, target_key, declared_level, effective_level, mode,
           action, message FROM rule_fires WHERE rowid > ? ORDER BY rowid`,
      )
      .all(this.lastFire) as FireRow[];
    for (const r of rows) {
      this.lastFire = r.rowid;
      this.narrator.fire(r);
    }
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

/** Runs the demo; 0 when it saw what it promises, 1 (naming what was missing) otherwise, 130 on Ctrl-C. */
export async function runDemo(io: DemoIo, options: DemoOptions = {}): Promise<number> {
  const seconds = options.seconds ?? DEFAULT_DEMO_SECONDS;
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 600) {
    io.err(`harness demo: --seconds must be more than 0 and at most 600 (got ${seconds})`);
    return 2;
  }
  let sandbox: Sandbox;
  try {
    sandbox = Sandbox.create(
      { enforce: DEMO_ENFORCE, ...(io.env.TMPDIR === undefined ? {} : { parent: io.env.TMPDIR }) },
      io.env,
    );
  } catch (e) {
    io.err(`harness demo: cannot prepare its temporary directory: ${(e as Error).message}`);
    return 1;
  }
  const narrator = new Narrator(io.out);
  const watcher = new Watcher(narrator, sandbox.deliveries);
  const abort = new AbortController();
  const onInterrupt = () => abort.abort();
  process.once("SIGINT", onInterrupt);
  let daemon: RunningDaemon | undefined;
  let supervisor: ReferenceSupervisor | undefined;
  let poller: NodeJS.Timeout | undefined;
  let report: FleetReport | undefined;
  let failure: string | undefined;
  let interrupted = false;
  try {
    daemon = await sandbox.startDaemon();
    const running = daemon;
    io.out("harness demo: the rules daemon on a temporary store, a simulated fleet, the six starter rules");
    io.out(`  directory  ${sandbox.root}${options.keep === true ? " (kept)" : " (removed at the end)"}`);
    io.out(`  store      ${sandbox.storePath}`);
    io.out(`  socket     ${sandbox.socketPath}`);
    io.out(`  metrics    ${running.daemon.metricsUrl ?? "off"}`);
    io.out(
      `  hook       ${sandbox.hookScript} (appends each payload to ${path.basename(sandbox.deliveries)})`,
    );
    io.out(`  enforce    ${DEMO_ENFORCE.join(", ")} (the one rule here allowed to hold a harness)`);
    io.out("");
    io.out(
      "Watch for: rules firing (rule), the hook receiving rule_fired (hook), a hold refusing nightly (hold).",
    );
    io.out("");
    const journal = sandbox.journal();
    supervisor = await sandbox.startSupervisor(journal, narrator.supervisor);
    for (const spec of FLEET) supervisor.define(spec);
    poller = setInterval(() => {
      try {
        watcher.fires(running.db);
        watcher.hook();
      } catch (e) {
        narrator.line("warn", `cannot read what happened: ${(e as Error).message}`);
      }
    }, 100);
    const settle = async () => {
      await running.evaluated(journal.lastSeq);
      watcher.fires(running.db);
    };
    report = await simulateFleet({
      supervisor,
      observer: journal.producer("observer"),
      graph: journal.producer("graph"),
      seed: options.seed ?? DEFAULT_SEED,
      durationMs: seconds * 1000,
      settle,
      clearHold: async (harness) => {
        const code = await runClear(
          harness,
          { socket: sandbox.socketPath, config: sandbox.configPath },
          {
            env: sandbox.env,
            out: (line) => narrator.line("operator", line),
            err: (line) => narrator.line("operator", line),
          },
        );
        if (code !== 0) throw new Error(`harness rules clear ${harness} exited ${code}`);
      },
      onOperator: (command) => narrator.line("operator", command),
      signal: abort.signal,
    });
    await settle();
    await running.actionsDone();
    await supervisor.shutdown();
    await settle();
    if (journal.dropped > 0)
      narrator.line("warn", `${journal.dropped} rows were dropped by the daemon's queue`);
  } catch (e) {
    failure = abort.signal.aborted ? "interrupted" : (e as Error).message;
    interrupted = abort.signal.aborted;
  } finally {
    process.off("SIGINT", onInterrupt);
    if (poller !== undefined) clearInterval(poller);
    if (daemon !== undefined) {
      try {
        watcher.fires(daemon.db);
        await supervisor?.shutdown();
        await daemon.close();
        watcher.hook();
      } catch (e) {
        failure ??= `shutting the daemon down: ${(e as Error).message}`;
      }
    }
    if (options.keep !== true) sandbox.remove();
  }
  const code = failure === undefined ? verdict(io, narrator, report) : interrupted ? 130 : 1;
  if (failure !== undefined) io.err(`harness demo: ${failure}`);
  if (options.keep === true)
    io.out(`harness demo: kept ${sandbox.root}: daemon.log, the store, the config and the hook's deliveries`);
  return code;
}

function verdict(io: DemoIo, n: Narrator, report: FleetReport | undefined): number {
  const rules = [...n.rulesFired].sort();
  const skipped = report?.firingsSkipped ?? 0;
  const refused = report?.commandsRefused ?? 0;
  const missing: string[] = [];
  if (rules.length < NEED_RULES)
    missing.push(`${rules.length} starter rules fired (${rules.join(", ") || "none"}), not ${NEED_RULES}`);
  if (n.ruleFiredDelivered === 0) missing.push("no rule_fired reached the notify hook");
  if (skipped === 0) missing.push("no firing was refused by a hold");
  io.out("");
  if (missing.length > 0) {
    io.err(`harness demo: incomplete: ${missing.join("; ")}`);
    return 1;
  }
  io.out(
    `harness demo: ${rules.length} starter rules fired (${rules.join(", ")}); ${n.ruleFiredDelivered} rule_fired delivered to the hook; ${skipped} firings skipped under a hold${refused > 0 ? `, ${refused} start refused` : ""}.`,
  );
  io.out(
    "  Your own fleet: `harness daemon` runs this daemon on your store; supervisors ask `harness rules admission <harness>` before each spawn, and `harness rules clear <harness>` releases a hold.",
  );
  return 0;
}
