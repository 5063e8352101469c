/**
 * The reference supervisor: a small simulated supervisor that keeps the daemon's contract with the
 * supervisor it serves (SPEC-0029 REQ-11, REQ-12). `harness demo` drives it, the
 * tests run it against a real daemon, and it is the worked example behind `docs/supervisor.md`. Its
 * harnesses are simulated (nothing is spawned), but everything it tells the daemon goes through the
 * daemon's public API, exactly as a real supervisor's would.
 *
 * The contract, as this supervisor keeps it:
 *
 * 1. Admission (REQ-11). Before every spawn, restart, trigger and scheduled firing, ask
 *    `RuleService.CheckAdmission(harness)` (read tier, no token needed on the Unix socket; on the
 *    command line `harness rules admission <harness>`). While any hold is on the harness the answer is
 *    `admitted: false` with a message naming the rule and `harness rules clear <harness>`. Then:
 *    - a scheduled firing is skipped: the ledger appends one `closed` row for the firing's run, outcome
 *      `skipped`, reason `rule_hold`, and no `opened` row, since nothing was spawned;
 *    - `start`, `restart` and `trigger` fail with that message (`HoldRefusal`);
 *    - a resident harness whose process exits is not respawned by its restart policy;
 *    - a process already running is never stopped by a hold (a refused `restart` leaves it running).
 *    If no daemon answers, admission is granted and said so (`admission_unavailable`): the rules
 *    engine must not halt the fleet by being down, and its holds persist in its store, honoured again
 *    as soon as it answers. A daemon that answers with an error is a fault, reported, not admitted.
 *
 * 2. Stop (REQ-12). The daemon runs `[supervisor] stop = [argv…]` without a shell, argv[0] absolute,
 *    with five arguments appended: harness, run, rule, fire id, journal seq (for a harness target the
 *    run is the one the daemon knew in flight when the rule fired). The supervisor stops that run only
 *    if it is still the harness's run in flight: it ends the process, clears the harness's enabled
 *    intent (the same Stop the loop guard makes, so a resident harness is not respawned), closes the
 *    run `cancelled` with reason `rule_stop` in the ledger, and writes a lifecycle line in the
 *    harness's log (here: a `rule_stop` event) naming the rule, the fire id and the seq. If that run
 *    has already ended or been replaced, it does nothing: the daemon records `target_gone` itself when
 *    it knew at evaluation time, and a stop that raced the run's end must never hit the next run. A rule
 *    stop sends no `loop_stopped` and no `recovered`. The command exits 0 once the supervisor has
 *    handled the request (stopped, or nothing to stop), 1 when the supervisor refused it, 2 on a usage
 *    error and 3 when no supervisor answers; the daemon records that as the stop action's outcome.
 *
 * 3. Journal. The ledger's `opened` and `closed` rows go through `JournalService.Append` with the
 *    `ledger` producer credential, the loop guard's `loop_stopped` rows with the `loopguard` one; the
 *    daemon stamps the source from the credential and refuses a type that source may not write. A row
 *    the daemon drops (its queue was full) is counted and not retried: a supervisor never blocks on it.
 *
 * 4. The loop guard is unchanged and consults no rule: on the 8th identical tool call (same tool, same
 *    input digest) in an unbroken streak it sends `loop_stopped` and stops the harness through the same
 *    Stop as `harness stop` (the run closes `cancelled`, reason `operator`). The streak resets on any
 *    other call, a call without a digest, a user message and a new session. Rules see its trips only as
 *    `loop_stopped` rows.
 *
 * This module holds the harnesses, their runs in flight and the supervisor's commands. Beside it, one
 * module for each part of the contract: `admission.ts` (1); `stop-socket.ts`, `stop-command.ts` and the
 * stop command `supervisor-main.ts` (2); `fleet-journal.ts` and `run-ledger.ts` (3); the core's
 * `loop-guard.ts` (4). `runs.ts`, `events.ts` and `errors.ts` are what they share.
 */
import { LoopGuard } from "../../core/loop-guard.js";
import type { RuleClient } from "../rpc/client.js";
import { type Admission, checkAdmission } from "./admission.js";
import { HoldRefusal, SupervisorError } from "./errors.js";
import type { SupervisorEvent } from "./events.js";
import type { FleetJournal, JournalProducer } from "./fleet-journal.js";
import { type ProcessEnd, RunLedger } from "./run-ledger.js";
import {
  causeDigest,
  type Exit,
  type HarnessKind,
  type HarnessSpec,
  Run,
  runFields,
  sessionId,
  type Trigger,
} from "./runs.js";
import { StopListener, type StopReply, type StopRequest } from "./stop-socket.js";

interface HarnessEntry {
  readonly spec: HarnessSpec;
  nextRun: number;
  inFlight: Run | undefined;
  /** The operator's intent that a resident harness runs; a stop (operator, loop guard, rule) clears it. */
  enabled: boolean;
}

/** What became of one scheduled firing. */
export type Firing =
  | { readonly kind: "spawned"; readonly run: Run }
  | {
      readonly kind: "skipped";
      /** The firing's run id, recorded closed `skipped` in the ledger. */
      readonly run: string;
      readonly reason: "rule_hold" | "overlap";
      readonly message: string;
    };

/** The run in flight, read afresh after an await (where a stop or spawn may have changed it). */
const running = (h: HarnessEntry): Run | undefined => h.inFlight;

export interface ReferenceSupervisorOptions {
  readonly journal: FleetJournal;
  /** `RuleService` on the daemon's socket; CheckAdmission needs no token there. */
  readonly rules: RuleClient;
  /** Where the stop command finds this supervisor (`supervisorStopArgv`). */
  readonly socketPath: string;
  readonly onEvent?: (event: SupervisorEvent) => void;
}

export class ReferenceSupervisor {
  private readonly harnesses = new Map<string, HarnessEntry>();
  private readonly guard = new LoopGuard();
  private readonly ledger: RunLedger;
  private readonly loopguard: JournalProducer;
  private listener: StopListener | undefined;
  private shutDown = false;

  private constructor(private readonly options: ReferenceSupervisorOptions) {
    this.ledger = new RunLedger(options.journal.producer("ledger"));
    this.loopguard = options.journal.producer("loopguard");
  }

  /** Starts listening for the stop command on `options.socketPath`. */
  static async start(options: ReferenceSupervisorOptions): Promise<ReferenceSupervisor> {
    const supervisor = new ReferenceSupervisor(options);
    supervisor.listener = await StopListener.listen(options.socketPath, (req) => supervisor.ruleStop(req));
    return supervisor;
  }

  define(spec: HarnessSpec): void {
    if (this.harnesses.has(spec.name)) throw new SupervisorError(spec.name, "is already defined");
    this.harnesses.set(spec.name, { spec, nextRun: spec.nextRun ?? 1, inFlight: undefined, enabled: false });
  }

  /** The harness's run in flight, if any. */
  inFlight(harness: string): Run | undefined {
    return this.entry(harness).inFlight;
  }

  private entry(harness: string, kind?: HarnessKind): HarnessEntry {
    const h = this.harnesses.get(harness);
    if (h === undefined) throw new SupervisorError(harness, "no such harness");
    if (kind !== undefined && h.spec.kind !== kind)
      throw new SupervisorError(harness, `is a ${h.spec.kind} harness, not a ${kind} one`);
    return h;
  }

  private emit(event: SupervisorEvent): void {
    this.options.onEvent?.(event);
  }

  private admission(harness: string): Promise<Admission> {
    return checkAdmission(this.options.rules, harness, (error) =>
      this.emit({ kind: "admission_unavailable", harness, error }),
    );
  }

  private nextRunId(h: HarnessEntry): string {
    const id = `${h.spec.name}#${h.nextRun}`;
    h.nextRun++;
    return id;
  }

  private async spawn(h: HarnessEntry, trigger: Trigger): Promise<Run> {
    const id = this.nextRunId(h);
    const run = new Run(id, h.spec, sessionId(id), trigger);
    h.inFlight = run;
    await this.ledger.opened(run);
    this.emit({ kind: "spawned", harness: h.spec.name, run: id, trigger });
    return run;
  }

  /** Ends `run` and writes its `closed` row; false when it had already ended (nothing is written twice). */
  private async closeRun(
    run: Run,
    outcome: string,
    reason: string,
    extra: ProcessEnd = {},
  ): Promise<boolean> {
    if (!run.end()) return false;
    const h = this.entry(run.harness.name);
    if (h.inFlight === run) h.inFlight = undefined;
    await this.ledger.closed(run, outcome, reason, extra);
    this.emit({
      kind: "closed",
      harness: run.harness.name,
      run: run.id,
      outcome,
      reason,
      ...(extra.exitCode === undefined ? {} : { exitCode: extra.exitCode }),
    });
    return true;
  }

  /**
   * One firing of a scheduled harness's schedule: skipped (`overlap` while a run is in flight,
   * `rule_hold` while held, each a `closed` row and no `opened`), or a new run.
   */
  async fire(harness: string): Promise<Firing> {
    const h = this.entry(harness, "scheduled");
    if (h.inFlight !== undefined) return this.skip(h, "overlap", `${h.inFlight.id} is still running`);
    const verdict = await this.admission(harness);
    if (!verdict.admitted) return this.skip(h, "rule_hold", verdict.message);
    // Admission is asynchronous: a firing or start that raced this one may have spawned meanwhile.
    const raced = running(h);
    if (raced !== undefined) return this.skip(h, "overlap", `${raced.id} is still running`);
    return { kind: "spawned", run: await this.spawn(h, "schedule") };
  }

  private async skip(h: HarnessEntry, reason: "rule_hold" | "overlap", message: string): Promise<Firing> {
    const run = this.nextRunId(h);
    await this.ledger.skipped(h.spec, run, reason);
    this.emit({ kind: "skipped", harness: h.spec.name, run, reason, message });
    return { kind: "skipped", run, reason, message };
  }

  private async admit(h: HarnessEntry, command: "start" | "restart" | "trigger"): Promise<void> {
    const verdict = await this.admission(h.spec.name);
    if (verdict.admitted) return;
    this.emit({ kind: "refused", harness: h.spec.name, command, message: verdict.message });
    throw new HoldRefusal(h.spec.name, command, verdict.rules, verdict.message);
  }

  /** `harness trigger <harness>`: one run of a scheduled harness now, outside its schedule. */
  async trigger(harness: string): Promise<Run> {
    const h = this.entry(harness, "scheduled");
    if (h.inFlight !== undefined) throw new SupervisorError(harness, `${h.inFlight.id} is still running`);
    await this.admit(h, "trigger");
    const raced = running(h);
    if (raced !== undefined) throw new SupervisorError(harness, `${raced.id} is still running`);
    return this.spawn(h, "trigger");
  }

  /** `harness start <harness>`: a run now; a resident harness is also enabled, so its restart policy applies. */
  async start(harness: string): Promise<Run> {
    const h = this.entry(harness);
    if (h.inFlight !== undefined) throw new SupervisorError(harness, `${h.inFlight.id} is already running`);
    await this.admit(h, "start");
    const raced = running(h);
    if (raced !== undefined) throw new SupervisorError(harness, `${raced.id} is already running`);
    h.enabled = h.spec.kind === "resident";
    return this.spawn(h, "start");
  }

  /** `harness restart <harness>`: admitted first, so a refusal leaves the running process alone. */
  async restart(harness: string): Promise<Run> {
    const h = this.entry(harness);
    await this.admit(h, "restart");
    const current = h.inFlight;
    if (current !== undefined) await this.closeRun(current, "cancelled", "operator");
    h.enabled = h.spec.kind === "resident";
    return this.spawn(h, "restart");
  }

  /** `harness stop <harness>`: the run in flight closes `cancelled` (reason `operator`); a resident harness is disabled. */
  async stop(harness: string): Promise<Run | undefined> {
    const h = this.entry(harness);
    h.enabled = false;
    const run = h.inFlight;
    if (run === undefined) return undefined;
    await this.closeRun(run, "cancelled", "operator");
    return run;
  }

  /**
   * The run's process ended on its own. A resident harness still enabled is respawned by its restart
   * policy, after admission: a held harness stays down. Resolves to the new run, if one was spawned.
   */
  async exit(run: Run, exit: Exit): Promise<Run | undefined> {
    const closed = await this.closeRun(run, exit.outcome, "", {
      ...(exit.exitCode === undefined ? {} : { exitCode: exit.exitCode }),
      causeDigest: causeDigest(exit.lastLine),
    });
    if (!closed) return undefined;
    const h = this.entry(run.harness.name);
    if (h.spec.kind !== "resident" || !h.enabled || h.inFlight !== undefined) return undefined;
    const verdict = await this.admission(h.spec.name);
    if (!verdict.admitted) {
      this.emit({ kind: "not_restarted", harness: h.spec.name, message: verdict.message });
      return undefined;
    }
    if (running(h) !== undefined || !h.enabled) return undefined;
    return this.spawn(h, "restart");
  }

  /**
   * The observer saw `run` call `tool` with input `digest` (after journaling it): the loop guard's turn.
   * On a trip the guard sends `loop_stopped` and stops the harness; resolves to whether it tripped.
   */
  async observeTool(run: Run, tool: string, digest: string): Promise<boolean> {
    if (!run.running) return false;
    const count = this.guard.tool(run.harness.name, run.session, tool, digest);
    if (count === undefined) return false;
    await this.loopguard.append([
      {
        kind: "run_event",
        type: "loop_stopped",
        ...runFields(run.harness, run.id, run.session),
        tool,
        digest,
      },
    ]);
    this.emit({ kind: "loop_stopped", harness: run.harness.name, run: run.id, tool, count });
    // A stop, not a restart: a restarted agent resumes the looping session.
    await this.stop(run.harness.name);
    return true;
  }

  /** The observer saw a mark (`user-message`, `turn-end`…) in `run`'s session. */
  observeMark(run: Run, mark: string): void {
    this.guard.mark(run.harness.name, run.session, mark);
  }

  /** The stop command's request (contract item 2). */
  private async ruleStop(req: StopRequest): Promise<StopReply> {
    const h = this.harnesses.get(req.harness);
    if (h === undefined) return { result: "error", detail: `no harness ${req.harness} in this supervisor` };
    const run = h.inFlight;
    const inFlight = run?.id ?? "";
    const event = {
      kind: "rule_stop",
      harness: req.harness,
      rule: req.rule,
      fireId: req.fire_id,
      seq: req.seq,
      inFlight,
    } as const;
    if (run === undefined || run.id !== req.run) {
      this.emit({ ...event, run: req.run, result: "not_in_flight" });
      return { result: "not_in_flight", run: req.run, in_flight: inFlight };
    }
    h.enabled = false;
    await this.closeRun(run, "cancelled", "rule_stop");
    this.emit({ ...event, run: run.id, result: "stopped" });
    return { result: "stopped", run: run.id, in_flight: inFlight };
  }

  /** Shutdown: the stop socket closes, and runs in flight close `interrupted` (reason `shutdown`). */
  async shutdown(): Promise<void> {
    if (this.shutDown) return;
    this.shutDown = true;
    await this.listener?.close();
    for (const h of this.harnesses.values()) {
      h.enabled = false;
      if (h.inFlight !== undefined) await this.closeRun(h.inFlight, "interrupted", "shutdown");
    }
  }
}
