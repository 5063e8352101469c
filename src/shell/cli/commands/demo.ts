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
  const json = options.json === true;
  // Text from the fleet, a miner or a forge is data: shown escaped, never as terminal controls.
  const narrator = new Narrator(json ? io.out : printed(io.out), json);
  const watcher = new Watcher(narrator, sandbox.deliveries);
  const abort = new AbortController();
  const onInterrupt = () => abort.abort();
  process.once("SIGINT", onInterrupt);
  let daemon: RunningDaemon | undefined;
  let supervisor: ReferenceSupervisor | undefined;
  let poller: NodeJS.Timeout | undefined;
  let report: FleetReport | undefined;
  let pullRequest: ProposalActReport | undefined;
  let failure: string | undefined;
  let interrupted = false;
  try {
    daemon = await sandbox.startDaemon();
    const running = daemon;
    if (json)
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
    else {
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
      if (options.proposalLoop !== false)
        io.out(
          "Then: a rule miner's proposal (miner) becomes a pull request on a local forge (operator, propose, forge).",
        );
      io.out("");
    }
    const journal = sandbox.journal();
    /** A supervisor for one round of the fleet; after the first, each round's harnesses are new. */
    const suffix = (round: number) => (round === 0 ? "" : `-r${round}`);
    const startFleet = async (round: number) => {
      const s = await sandbox.startSupervisor(journal, narrator.supervisor);
      for (const spec of FLEET) s.define({ ...spec, name: spec.name + suffix(round) });
      return s;
    };
    supervisor = await startFleet(0);
    poller = setInterval(() => {
      try {
        watcher.fires(running.reads);
        watcher.hook();
      } catch (e) {
        narrator.line("warn", `cannot read what happened: ${(e as Error).message}`);
      }
    }, 100);
    const settle = async () => {
      await running.evaluated(journal.lastSeq);
      watcher.fires(running.reads);
    };
    const fleetOptions = (
      round: number,
      s: ReferenceSupervisor,
      seed: number,
      durationMs: number,
    ): FleetOptions => ({
      harnessSuffix: suffix(round),
      supervisor: s,
      observer: journal.producer("observer"),
      graph: journal.producer("graph"),
      seed,
      durationMs,
      settle,
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
      signal: abort.signal,
    });
    const seed = options.seed ?? DEFAULT_SEED;
    report = await simulateFleet(
      fleetOptions(
        0,
        supervisor,
        seed,
        // The proposal loop's time comes out of the fleet's, so `--seconds` stays about the whole demo.
        seconds * 1000 - (options.proposalLoop === false ? 0 : Math.min(PROPOSAL_LOOP_MS, seconds * 500)),
      ),
    );
    await settle();
    await running.actionsDone();
    await supervisor.shutdown();
    await settle();
    if (options.miner !== false)
      await showScriptedMiner(running.daemon, sandbox, narrator).catch((e: Error) =>
        narrator.line("warn", `the scripted rule miner failed: ${e.message}`),
      );
    if (journal.dropped > 0)
      narrator.line("warn", `${journal.dropped} rows were dropped by the daemon's queue`);
    if (options.proposalLoop !== false)
      pullRequest = await showProposalLoop({
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
    if (options.keepRunning === true) {
      narrator.line(
        "operator",
        `the fleet keeps running until Ctrl-C; watch it: harness tui --config ${shellWord(sandbox.configPath)}`,
      );
      for (let round = 1; !abort.signal.aborted; round++) {
        supervisor = await startFleet(round);
        try {
          await simulateFleet(fleetOptions(round, supervisor, seed + round, seconds * 1000));
        } catch (e) {
          if (!abort.signal.aborted)
            narrator.line("warn", `the fleet's round ${round}: ${(e as Error).message}`);
        }
        await settle();
        await supervisor.shutdown();
      }
    }
  } catch (e) {
    failure = abort.signal.aborted ? "interrupted" : (e as Error).message;
    interrupted = abort.signal.aborted;
  } finally {
    process.off("SIGINT", onInterrupt);
    if (poller !== undefined) clearInterval(poller);
    if (daemon !== undefined) {
      try {
        watcher.fires(daemon.reads);
        await supervisor?.shutdown();
        await daemon.close();
        watcher.hook();
      } catch (e) {
        failure ??= `shutting the daemon down: ${(e as Error).message}`;
      }
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
