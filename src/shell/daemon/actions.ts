/**
 * Carrying out the actions the core planned (SPEC-0029 REQ-10 to REQ-13), only ever after their
 * commit: a fire's `rule_fired` goes to the notify hook, a stop to the supervisor's stop command (or, for
 * hook-fed runs, to their next hook call), each
 * action's progress recorded in the store (pending → started → its result; a notification is started
 * when its hook is, not when it joins the hook's queue). At most once: the next
 * start records an action a crash left pending undelivered, and one it left started unknown (it may
 * have run); nothing is ever retried. Holds placed and released are logged and sent as `rule_hold` and `rule_hold_released`.
 */
import { type Fire, holdPlaced, type Release, type StopAction } from "../../core/outcome.js";
import { runOperatorCommand } from "../notify/hook-process.js";
import type { NotifyEvent } from "../notify/index.js";
import type { ActionState, PlannedAction } from "../store/decision-store.js";
import type { StoreDoor } from "../store/store-door.js";
import { failpoint } from "../support/failpoints.js";
import type { Log } from "../support/log.js";
import { KeyedTurns } from "../support/turns.js";
import type { Committed } from "./evaluator.js";

/**
 * One decision the daemon took, as it takes it: a fire (shadow or active), a hold placed or released, an
 * action's outcome; and two taken without a rule, told by their takers (`decidedElsewhere`): the loop
 * guard's stop of a hook-fed run, and a live tool call answered by its fail mode because the rules could
 * not judge it in time. Observers (telemetry/decision-export.ts) see each after its commit; they must
 * not block or throw into the runner.
 */
export type Decision =
  | { readonly kind: "fire"; readonly fire: Fire }
  | { readonly kind: "hold"; readonly fire: Fire; readonly harness: string }
  | { readonly kind: "release"; readonly release: Release; readonly at: number }
  | {
      readonly kind: "outcome";
      readonly fireId: string;
      readonly action: PlannedAction;
      readonly state: ActionState;
      readonly detail: string | undefined;
      readonly rule: string | undefined;
      readonly seq: number | undefined;
      readonly at: number;
    }
  | {
      readonly kind: "loop_stop";
      readonly harness: string;
      readonly run: string;
      readonly tool: string;
      /** The tool row that tripped the guard. */
      readonly seq: number;
      /** Its `loop_stopped` row: the stop's id is `journal:<loopSeq>`. */
      readonly loopSeq: number;
      readonly at: number;
    }
  | {
      readonly kind: "fail_mode";
      readonly harness: string;
      readonly run: string;
      readonly tool: string;
      /** The attempt's row, when it was admitted. */
      readonly seq: number | undefined;
      readonly result: "allow" | "deny";
      /** `harness`: its hook's `--fail`; `global`: `[agents] on_unreachable`. */
      readonly source: "harness" | "global";
      readonly reason: string;
      readonly at: number;
    };

export type DecisionObserver = (decision: Decision) => void;

export interface ActionSinks {
  /** The notifier's offer, or undefined when no hook is configured or the event is not wanted. */
  readonly notify: ((event: NotifyEvent) => void) | undefined;
  readonly wantsEvent: (event: NotifyEvent["event"]) => boolean;
  /** `[supervisor] stop`: argv, given harness, run, rule, fire id and seq as further arguments. */
  readonly stopCommand: readonly string[] | undefined;
  readonly stopTimeoutMs: number;
  /** The environment the stop command inherits: the daemon's. */
  readonly env: NodeJS.ProcessEnv;
}

export class ActionRunner {
  private running = new Set<Promise<void>>();
  /** Stops of hook-fed runs being recorded (`stopsRecorded`). */
  private readonly stopping = new Set<Promise<void>>();
  /**
   * An action's states are recorded in the order they happened (started, then its result): with each
   * write awaited, a hook that exits at once would otherwise have its result land first and `started`
   * overwrite it. Keyed by fire and action.
   */
  private readonly writes = new KeyedTurns();
  /** The state writes not yet done (`drain`). */
  private readonly writing = new Set<Promise<void>>();
  private observers: DecisionObserver[] = [];

  constructor(
    private readonly decisions: Pick<StoreDoor["decisions"], "setActionState" | "startAction">,
    private sinks: ActionSinks,
    private readonly log: Log,
    private readonly clock: () => number,
    /** Where a stop of hook-fed runs waits for their next hook call. */
    private readonly runStops: Pick<StoreDoor["agentRunStops"], "ruleStop">,
  ) {}

  /** Adds an observer of every decision from now on (the OTLP export). */
  observe(observer: DecisionObserver): void {
    this.observers.push(observer);
  }

  /** A decision taken outside the runner, already committed: its observers see it as they see the rest. */
  decidedElsewhere(decision: Decision): void {
    this.tell(decision);
  }

  /** An observer's failure is logged, never thrown: the decision is already committed and acted on. */
  private tell(decision: Decision): void {
    for (const o of this.observers) {
      try {
        o(decision);
      } catch (e) {
        this.log.error({ kind: decision.kind, err: (e as Error).message }, "a decision observer failed");
      }
    }
  }

  /** A reload's `[notify]` and `[supervisor] stop`, for the actions dispatched from now on. */
  configure(sinks: ActionSinks): void {
    this.sinks = sinks;
  }

  private record(fire: Fire, action: PlannedAction, state: ActionState, detail?: string): Promise<void> {
    return this.setState(fire.id, action, state, detail, { rule: fire.rule, seq: fire.seq });
  }

  /**
   * Tells the observers an action's new state and records it; resolves once it is recorded. A failed
   * write is logged, never thrown: the action itself has already happened.
   */
  private setState(
    fireId: string,
    action: PlannedAction,
    state: ActionState,
    detail: string | undefined,
    /** The fire's rule and seq when known, for the log line (REQ: name rule, fire id and seq). */
    context: { readonly rule?: string; readonly seq?: number } = {},
  ): Promise<void> {
    const at = this.clock();
    this.tell({ kind: "outcome", fireId, action, state, detail, rule: context.rule, seq: context.seq, at });
    const written = this.writes.run(`${fireId}\u0000${action}`, async () => {
      try {
        await this.decisions.setActionState(fireId, action, state, detail, at);
      } catch (e) {
        this.log.error(
          { fire_id: fireId, ...context, action, err: (e as Error).message },
          "recording an action's outcome failed",
        );
      }
    });
    this.writing.add(written);
    void written.finally(() => this.writing.delete(written));
    return written;
  }

  /**
   * Records an action started, if it is still pending and this daemon still leads (decision 0022);
   * true when it may start. Not recorded, it must not start: a daemon that took over settles it, and a
   * store that does not answer leaves it pending, so the next start records it undelivered, which it is.
   */
  private start(
    fireId: string,
    action: PlannedAction,
    context: { readonly rule?: string; readonly seq?: number } = {},
  ): Promise<boolean> {
    const at = this.clock();
    const started = this.writes.run(`${fireId}\u0000${action}`, async () => {
      try {
        return await this.decisions.startAction(fireId, action, at);
      } catch (e) {
        this.log.error(
          { fire_id: fireId, ...context, action, err: (e as Error).message },
          "an action was not started: recording its start failed",
        );
        return false;
      }
    });
    return started.then((yes) => {
      if (yes)
        this.tell({
          kind: "outcome",
          fireId,
          action,
          state: "started",
          detail: undefined,
          rule: context.rule,
          seq: context.seq,
          at,
        });
      else
        this.log.warn(
          { fire_id: fireId, ...context, action },
          "action not started: it is no longer pending here",
        );
      return yes;
    });
  }

  /**
   * The notifier is about to spawn the hook for a fire's `rule_fired`: from here it may have run. It
   * waits for this to be recorded, so a crash after the spawn finds the action started; false: the hook
   * must not be spawned.
   */
  async notifyStarted(fireId: string): Promise<boolean> {
    const started = await this.start(fireId, "notify");
    if (started) failpoint("action.afterStart");
    return started;
  }

  /** The notify outcome of a fire's `rule_fired`, as the notifier reports it. */
  notifyOutcome(fireId: string, result: ActionState, detail: string): void {
    void this.setState(fireId, "notify", result, detail);
  }

  dispatch(committed: Committed): void {
    // Annotations went in with the commit. Each fire's notify and stop start in turn, then the holds
    // placed are announced.
    for (const fire of committed.fires) {
      this.tell({ kind: "fire", fire });
      for (const action of fire.actions) {
        if (action.kind !== "notify" && action.kind !== "stop") continue;
        failpoint("action.beforeStart");
        if (action.kind === "notify") this.notifyFire(fire);
        else this.stop(fire, action);
      }
    }
    for (const fire of committed.fires) {
      const hold = holdPlaced(fire);
      if (hold === undefined) continue;
      this.tell({ kind: "hold", fire, harness: hold.harness });
      this.log.warn(
        { rule: fire.rule, harness: hold.harness, fire_id: fire.id, seq: fire.seq },
        "rule hold placed",
      );
      this.sinks.notify?.({
        event: "rule_hold",
        harness: hold.harness,
        state: "held",
        message: fire.message,
        cause: `rule ${fire.rule} fired (${fire.id})`,
        rule: fire.rule,
        fireId: fire.id,
        at: fire.at,
      });
    }
    for (const r of committed.releases) this.released(r);
  }

  private released(r: Release): void {
    this.tell({ kind: "release", release: r, at: this.clock() });
    this.log.warn({ rule: r.rule, harness: r.harness, cause: r.cause }, "rule hold released");
    this.sinks.notify?.({
      event: "rule_hold_released",
      harness: r.harness,
      state: "released",
      message: `hold by rule ${r.rule} released: ${r.cause}`,
      cause: r.cause,
      rule: r.rule,
      fireId: r.fireId,
      at: this.clock(),
    });
  }

  private notifyFire(fire: Fire): void {
    if (this.sinks.notify === undefined) {
      void this.record(fire, "notify", "undelivered", "no [notify] command is configured");
      return;
    }
    if (!this.sinks.wantsEvent("rule_fired")) {
      void this.record(fire, "notify", "undelivered", "rule_fired is not in [notify] events");
      return;
    }
    // Left pending until the notifier starts the hook (`notifyStarted`).
    this.sinks.notify({
      event: "rule_fired",
      harness: fire.target?.harness ?? "",
      state: fire.action === "stop" ? "stopping" : fire.action === "hold" ? "held" : "running",
      message: fire.message,
      cause: `${fire.kind} ${fire.type} at journal seq ${fire.seq}`,
      rule: fire.rule,
      level: fire.effectiveLevel,
      declaredLevel: fire.declaredLevel,
      fireId: fire.id,
      action: fire.action,
      at: fire.at,
    });
  }

  /** REQ-12: the supervisor stops the target run; it closes it `cancelled` with reason `rule_stop`. */
  private stop(fire: Fire, action: StopAction): void {
    const ctx = {
      rule: fire.rule,
      fire_id: fire.id,
      seq: fire.seq,
      harness: action.harness,
      run: action.run,
    };
    const command = this.sinks.stopCommand;
    // Hook-fed runs (rows the daemon's hook ingest admitted, `core/hook-runs.ts`) have no supervisor: the
    // stop waits for each run's next hook call, which answers it (agents/enforcement/run-verdict.ts), and the action
    // stays started until then. Every other run is the supervisor's, stopped through `[supervisor] stop`.
    if (action.sessions !== undefined && action.sessions.length > 0) {
      this.log.error({ ...ctx, runs: action.sessions }, "rule stop (delivered at the runs' next hook call)");
      const sessions = action.sessions;
      const at = this.clock();
      const recorded = (async () => {
        try {
          await this.runStops.ruleStop(fire, action.harness, sessions, at);
        } catch (e) {
          this.log.error({ ...ctx, err: (e as Error).message }, "rule stop failed: not recorded");
          await this.record(fire, "stop", "error", `the stop was not recorded: ${(e as Error).message}`);
        }
      })();
      this.stopping.add(recorded);
      void recorded.finally(() => this.stopping.delete(recorded));
      return;
    }
    if (command === undefined) {
      this.log.error(ctx, "rule stop not delivered: no [supervisor] stop command is configured");
      void this.record(fire, "stop", "undelivered", "no [supervisor] stop command is configured");
      return;
    }
    this.log.error(ctx, "rule stop");
    const argv = [...command, action.harness, action.run, fire.rule, fire.id, String(fire.seq)];
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.sinks.env)) if (v !== undefined) env[k] = v;
    const timeoutMs = this.sinks.stopTimeoutMs;
    const p = (async () => {
      // Recorded started before the command runs: a crash once it may have run finds it started.
      if (!(await this.start(fire.id, "stop", { rule: fire.rule, seq: fire.seq }))) return;
      failpoint("action.afterStart");
      const outcome = await runOperatorCommand({ argv, input: "", env, timeoutMs });
      failpoint("action.afterRun");
      await this.record(fire, "stop", outcome.result, outcome.reason);
      if (outcome.result !== "ok")
        this.log.error({ ...ctx, result: outcome.result, reason: outcome.reason }, "rule stop failed");
    })();
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
  }

  /**
   * Resolves once the stops of hook-fed runs dispatched so far are recorded (or their failure is): the
   * daemon tells no one a row is evaluated before the stop it made can be found.
   */
  async stopsRecorded(): Promise<void> {
    if (this.stopping.size > 0) await Promise.all([...this.stopping]);
  }

  /** Waits for running stop commands and the actions' state writes (shutdown, tests). */
  async drain(): Promise<void> {
    await Promise.all([...this.running, ...this.stopping]);
    await Promise.all([...this.writing]);
  }
}
