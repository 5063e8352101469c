/**
 * `harness demo`: the daemon on a temporary store, a simulated fleet driven through the ingestion API
 * by the reference supervisor, and, as they happen, the starter rules firing, the sample notify hook
 * receiving `rule_fired`, and a hold refusing a firing (`../../demo/` sets it up). The operator's own
 * config, store and socket are never read or touched; the hold is cleared with `harness rules clear`,
 * as an operator would.
 */
import * as path from "node:path";
import { DEMO_ENFORCE, Narrator, type RunningDaemon, Sandbox, Watcher } from "../../demo/demo.js";
import { showScriptedMiner } from "../../demo/demo-miner.js";
import { FLEET, type FleetOptions, type FleetReport, simulateFleet } from "../../demo/fleet-sim.js";
import {
  DEMO_POLICY_REPO,
  PROPOSAL_LOOP_MS,
  type ProposalActReport,
  showProposalLoop,
} from "../../demo/proposal-act.js";
import type { FleetJournal } from "../../supervisor/fleet-journal.js";
import type { ReferenceSupervisor } from "../../supervisor/reference-supervisor.js";
import { shellWord } from "../../support/shell-word.js";
import { clearHold } from "../clear-hold.js";
import type { Io } from "../io.js";
import { proposeOnForge } from "../propose-on-forge.js";
import { printed } from "../render/printable.js";

export interface DemoOptions {
  /** About how long the demo runs (the fleet, then the proposal loop); 20 s by default. */
  readonly seconds?: number;
  /** Keep the temporary directory (store, config, logs, hook deliveries) and print where it is. */
  readonly keep?: boolean;
  /** Each event as a JSON line: the start, what happened, and the verdict. */
  readonly json?: boolean;
  /** Another seed, another (equally complete) fleet. */
  readonly seed?: number;
  /**
   * Whether the scripted rule miner runs after the fleet (default true). It launches the built
   * `harness mcp` and backtests in a worker, so an in-process run from the sources leaves it out.
   */
  readonly miner?: boolean;
  /**
   * Whether the proposal loop runs after the fleet (default true): a proposal becomes a pull request on
   * a local forge. Its backtests run in a worker, so an in-process run from the sources leaves it out.
   */
  readonly proposalLoop?: boolean;
  /**
   * After the demo, the fleet keeps working until Ctrl-C: its script again every `seconds`, each round
   * with the next seed, so `harness tui` has a live fleet to watch for as long as one likes.
   */
  readonly keepRunning?: boolean;
  /** `--otel-endpoint`, `--otel-protocol`: the demo daemon's `[otel]`, to watch its decisions. */
  readonly otel?: { readonly endpoint: string; readonly protocol: string };
}

export const DEFAULT_DEMO_SECONDS = 20;
const DEFAULT_SEED = 29;
/** What the demo must see to call itself a success. */
const NEED_RULES = 4;

/** Runs the demo; 0 when it saw what it promises, 1 (naming what was missing) otherwise, 130 on Ctrl-C. */
export async function runDemo(options: DemoOptions, io: Io): Promise<number> {
  const seconds = options.seconds ?? DEFAULT_DEMO_SECONDS;
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 600) {
    io.err(`harness demo: --seconds must be more than 0 and at most 600 (got ${seconds})`);
    return 2;
  }
  const sandbox = prepareSandbox(io, options);
  if (sandbox === undefined) return 1;
  const json = options.json === true;
  // Text from the fleet, a miner or a forge is data: shown escaped, never as terminal controls.
  const narrator = new Narrator(json ? io.out : printed(io.out), json);
  const watcher = new Watcher(narrator, sandbox.deliveries);
  const abort = new AbortController();
  const onInterrupt = () => abort.abort();
  process.once("SIGINT", onInterrupt);
  let daemon: RunningDaemon | undefined;
  let fleet: Fleet | undefined;
  let poller: NodeJS.Timeout | undefined;
  let report: FleetReport | undefined;
  let pullRequest: ProposalActReport | undefined;
  let failure: string | undefined;
  let interrupted = false;
  try {
    daemon = await sandbox.startDaemon();
    announce(io, sandbox, daemon, options);
    fleet = new Fleet(sandbox, daemon, narrator, watcher, abort.signal);
    const first = await fleet.start(0);
    poller = pollWhatHappened(daemon, narrator, watcher);
    report = await fleetAct(fleet, daemon, first, options, seconds);
    if (options.miner !== false)
      await showScriptedMiner(daemon.daemon, sandbox, narrator).catch((e: Error) =>
        narrator.line("warn", `the scripted rule miner failed: ${e.message}`),
      );
    if (fleet.dropped > 0) narrator.line("warn", `${fleet.dropped} rows were dropped by the daemon's queue`);
    if (options.proposalLoop !== false) pullRequest = await proposalAct(daemon, sandbox, narrator);
    if (options.keepRunning === true) await fleet.keepRunning(options.seed ?? DEFAULT_SEED, seconds * 1000);
  } catch (e) {
    failure = abort.signal.aborted ? "interrupted" : (e as Error).message;
    interrupted = abort.signal.aborted;
  } finally {
    process.off("SIGINT", onInterrupt);
    if (poller !== undefined) clearInterval(poller);
    if (daemon !== undefined) {
      const stopping = await shutDown(daemon, fleet, watcher);
      failure ??= stopping;
    }
    if (options.keep !== true) sandbox.remove();
  }
  const loop = options.proposalLoop === false ? undefined : { pullRequest };
  const code = failure === undefined ? verdict(io, narrator, report, json, loop) : interrupted ? 130 : 1;
  if (failure !== undefined) io.err(`harness demo: ${failure}`);
  if (options.keep === true && !json)
    io.out(`harness demo: kept ${sandbox.root}: daemon.log, the store, the config and the hook's deliveries`);
  return code;
}

/** The temporary directory the demo runs in, or undefined (said on stderr) when it cannot be made. */
function prepareSandbox(io: Io, options: DemoOptions): Sandbox | undefined {
  try {
    return Sandbox.create(
      {
        enforce: DEMO_ENFORCE,
        ...(io.env.TMPDIR === undefined ? {} : { parent: io.env.TMPDIR }),
        ...(options.otel === undefined ? {} : { otel: options.otel }),
      },
      io.env,
    );
  } catch (e) {
    io.err(`harness demo: cannot prepare its temporary directory: ${(e as Error).message}`);
    return undefined;
  }
}

/** Where everything is, and what to watch for: a JSON `start` event, or a few lines of text. */
function announce(io: Io, sandbox: Sandbox, running: RunningDaemon, options: DemoOptions): void {
  if (options.json === true) {
    io.out(
      JSON.stringify({
        kind: "start",
        directory: sandbox.root,
        kept: options.keep === true,
        store: sandbox.storePath,
        socket: sandbox.socketPath,
        metrics: running.daemon.metricsUrl ?? null,
        hook: sandbox.hookScript,
        enforce: DEMO_ENFORCE,
      }),
    );
    return;
  }
  io.out("harness demo: the rules daemon on a temporary store, a simulated fleet, the six starter rules");
  io.out(`  directory  ${sandbox.root}${options.keep === true ? " (kept)" : " (removed at the end)"}`);
  io.out(`  store      ${sandbox.storePath}`);
  io.out(`  socket     ${sandbox.socketPath}`);
  io.out(`  metrics    ${running.daemon.metricsUrl ?? "off"}`);
  io.out(`  hook       ${sandbox.hookScript} (appends each payload to ${path.basename(sandbox.deliveries)})`);
  io.out(`  enforce    ${DEMO_ENFORCE.join(", ")} (the one rule here allowed to hold a harness)`);
  io.out("");
  io.out(
    "Watch for: rules firing (rule), the hook receiving rule_fired (hook), a hold refusing nightly (hold).",
  );
  if (options.proposalLoop !== false)
    io.out(
      "Then: a rule miner's proposal (miner) becomes a pull request on a local forge (operator, propose, forge).",
    );
  io.out("");
}

/** Shows the rules' fires and the hook's deliveries as they happen; the caller clears the interval. */
function pollWhatHappened(running: RunningDaemon, narrator: Narrator, watcher: Watcher): NodeJS.Timeout {
  return setInterval(() => {
    // The hook's deliveries after the fires read before them, as they happened.
    watcher
      .fires(running.reads)
      .then(() => watcher.hook())
      .catch((e: unknown) => narrator.line("warn", `cannot read what happened: ${(e as Error).message}`));
  }, 100);
}

/**
 * The simulated fleet, a round at a time: each round a supervisor of its own, whose harnesses, after the
 * first round, carry the round in their names, so every round's are new.
 */
class Fleet {
  /** The current round's supervisor, shut down at the end of its round and again when the demo ends. */
  supervisor: ReferenceSupervisor | undefined;
  private readonly journal: FleetJournal;

  constructor(
    private readonly sandbox: Sandbox,
    private readonly running: RunningDaemon,
    private readonly narrator: Narrator,
    private readonly watcher: Watcher,
    private readonly signal: AbortSignal,
  ) {
    this.journal = sandbox.journal();
  }

  /** Rows the daemon's queue dropped. */
  get dropped(): number {
    return this.journal.dropped;
  }

  /** The round's supervisor, started with the fleet's harnesses defined on it. */
  async start(round: number): Promise<ReferenceSupervisor> {
    const s = await this.sandbox.startSupervisor(this.journal, this.narrator.supervisor);
    for (const spec of FLEET) s.define({ ...spec, name: spec.name + suffix(round) });
    this.supervisor = s;
    return s;
  }

  /**
   * Waits until the rules engine has evaluated every row written so far, and shows what fired. An arrow,
   * since the fleet's script is handed it.
   */
  readonly settle = async (): Promise<void> => {
    await this.running.evaluated(this.journal.lastSeq);
    await this.watcher.fires(this.running.reads);
  };

  /** The round's script, on the supervisor `start` gave it. */
  run(
    round: number,
    supervisor: ReferenceSupervisor,
    seed: number,
    durationMs: number,
  ): Promise<FleetReport> {
    return simulateFleet(this.options(round, supervisor, seed, durationMs));
  }

  /** After the demo, the script again every `durationMs`, each round with the next seed, until Ctrl-C. */
  async keepRunning(seed: number, durationMs: number): Promise<void> {
    this.narrator.line(
      "operator",
      `the fleet keeps running until Ctrl-C; watch it: harness tui --config ${shellWord(this.sandbox.configPath)}`,
    );
    for (let round = 1; !this.signal.aborted; round++) {
      const supervisor = await this.start(round);
      try {
        await this.run(round, supervisor, seed + round, durationMs);
      } catch (e) {
        if (!this.signal.aborted)
          this.narrator.line("warn", `the fleet's round ${round}: ${(e as Error).message}`);
      }
      await this.settle();
      await supervisor.shutdown();
    }
  }

  private options(
    round: number,
    supervisor: ReferenceSupervisor,
    seed: number,
    durationMs: number,
  ): FleetOptions {
    const { sandbox, narrator } = this;
    return {
      harnessSuffix: suffix(round),
      supervisor,
      observer: this.journal.producer("observer"),
      graph: this.journal.producer("graph"),
      seed,
      durationMs,
      settle: this.settle,
      clearHold: async (harness) => {
        const code = await clearHold(
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
      signal: this.signal,
    };
  }
}

const suffix = (round: number) => (round === 0 ? "" : `-r${round}`);

/** The fleet's first round, on its supervisor, until its fires and their actions are done. */
async function fleetAct(
  fleet: Fleet,
  running: RunningDaemon,
  supervisor: ReferenceSupervisor,
  options: DemoOptions,
  seconds: number,
): Promise<FleetReport> {
  const report = await fleet.run(
    0,
    supervisor,
    options.seed ?? DEFAULT_SEED,
    // The proposal loop's time comes out of the fleet's, so `--seconds` stays about the whole demo.
    seconds * 1000 - (options.proposalLoop === false ? 0 : Math.min(PROPOSAL_LOOP_MS, seconds * 500)),
  );
  await fleet.settle();
  await running.actionsDone();
  await supervisor.shutdown();
  await fleet.settle();
  return report;
}

/** A proposal becomes a pull request on the local forge; undefined (and a warning) when it does not. */
function proposalAct(
  running: RunningDaemon,
  sandbox: Sandbox,
  narrator: Narrator,
): Promise<ProposalActReport | undefined> {
  return showProposalLoop({
    daemon: running.daemon,
    sandbox,
    narrator,
    propose: (out, err) =>
      proposeOnForge(
        {
          policyRepo: DEMO_POLICY_REPO,
          json: true,
          config: sandbox.configPath,
          socket: sandbox.socketPath,
        },
        { env: sandbox.env, out, err },
      ),
  }).catch((e: Error) => {
    narrator.line("warn", `the proposal loop failed: ${e.message}`);
    return undefined;
  });
}

/**
 * Shows the last fires while the supervisor and the daemon stop, then the hook's last deliveries; what
 * went wrong in stopping them, if anything.
 */
async function shutDown(
  daemon: RunningDaemon,
  fleet: Fleet | undefined,
  watcher: Watcher,
): Promise<string | undefined> {
  try {
    await watcher.fires(daemon.reads);
    await fleet?.supervisor?.shutdown();
    await daemon.close();
    watcher.hook();
    return undefined;
  } catch (e) {
    return `shutting the daemon down: ${(e as Error).message}`;
  }
}

function verdict(
  io: Io,
  n: Narrator,
  report: FleetReport | undefined,
  json: boolean,
  loop?: { readonly pullRequest: ProposalActReport | undefined },
): number {
  const rules = [...n.rulesFired].sort();
  const skipped = report?.firingsSkipped ?? 0;
  const refused = report?.commandsRefused ?? 0;
  const missing: string[] = [];
  if (rules.length < NEED_RULES)
    missing.push(`${rules.length} starter rules fired (${rules.join(", ") || "none"}), not ${NEED_RULES}`);
  if (n.ruleFiredDelivered === 0) missing.push("no rule_fired reached the notify hook");
  if (skipped === 0) missing.push("no firing was refused by a hold");
  if (loop !== undefined && loop.pullRequest === undefined)
    missing.push("no proposal became a pull request on the local forge");
  if (!json) io.out("");
  if (missing.length > 0) {
    io.err(`harness demo: incomplete: ${missing.join("; ")}`);
    return 1;
  }
  if (json) {
    io.out(
      JSON.stringify({
        kind: "done",
        rules_fired: rules,
        rule_fired_delivered: n.ruleFiredDelivered,
        firings_skipped: skipped,
        commands_refused: refused,
        ...(loop?.pullRequest === undefined ? {} : { pull_request: loop.pullRequest.url }),
      }),
    );
    return 0;
  }
  io.out(
    `harness demo: ${rules.length} starter rules fired (${rules.join(", ")}); ${n.ruleFiredDelivered} rule_fired delivered to the hook; ${skipped} firings skipped under a hold${refused > 0 ? `, ${refused} start refused` : ""}.`,
  );
  if (loop?.pullRequest !== undefined)
    io.out(
      `  A rule miner's proposal ${loop.pullRequest.proposal} became pull request #${loop.pullRequest.number} on the local forge: ${loop.pullRequest.url}`,
    );
  io.out(
    "  Your own fleet: `harness daemon` runs this daemon on your store; supervisors ask `harness rules admission <harness>` before each spawn, and `harness rules clear <harness>` releases a hold.",
  );
  return 0;
}
