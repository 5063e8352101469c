/**
 * The daemon's loop (SPEC-0029 REQ-7, REQ-10 to REQ-13): admits every input as a journal row, runs the
 * core over committed rows in seq order, commits before acting, and acts. Everything runs on one event
 * loop: the journal writer and the evaluator take turns in short slices, so a producer is never kept
 * waiting behind a long evaluation, and neither waits on a hook, a stop or a backtest. The minute tick,
 * retention and reloads run here too. What it serves and how it is reached (RPC, metrics, proposals)
 * the composition root, `../app/`, wires around it.
 *
 * Every daemon admits; one leads (`../store/leadership.ts`, decision 0022): only the leader evaluates,
 * acts, ticks, derives and prunes. A follower reads the leader's decisions from the store
 * (`follower-view.ts`) and takes over, from the stored cursor, when the leadership passes to it.
 */
import { isDeepStrictEqual } from "node:util";
import type { RefusalReason } from "../../core/admission.js";
import { HOUR, MINUTE } from "../../core/durations.js";
import type { RuleSet } from "../../core/rule-set.js";
import { ruleStateCounts } from "../../core/rule-state.js";
import type { ProducerSource } from "../../core/sources.js";
import type { GlobalConfig } from "../config/global-config.js";
import { Derivation } from "../derive/derivation.js";
import type { AppendDerived, Deriver } from "../derive/deriver.js";
import { NotLeaderError } from "../errors.js";
import { type AdmitOptions, type AdmitResult, admitEvents } from "../journal/admit.js";
import { DEFAULT_BATCH_SIZE, DEFAULT_QUEUE_LIMIT, JournalWriter } from "../journal/journal-writer.js";
import { Notifier, notifyConfig } from "../notify/index.js";
import type { PolicyCloneStatus } from "../policy/clone-rules.js";
import type { RuleSetLoad } from "../policy/rule-source.js";
import {
  type LeaderRecord,
  type Leadership,
  LeaseLostError,
  type Progress,
  SoleLeadership,
} from "../store/leadership.js";
import type { StoreDoor, WritePath } from "../store/store-door.js";
import { StoreWriteHealth } from "../store/store-write-health.js";
import { type Log, OncePer } from "../support/log.js";
import type { DaemonMetrics } from "../support/metrics.js";
import { ActionRunner, type ActionSinks, type Decision, type DecisionObserver } from "./actions.js";
import { EvaluationWaits } from "./evaluation-waits.js";
import { type Committed, Evaluator } from "./evaluator.js";
import type { EvaluatorView } from "./evaluator-view.js";
import { FollowerView } from "./follower-view.js";

/** What a reload reports (`harness reload`). */
/** A reload that failed: its error, and when (ms). */
export interface ReloadFailure {
  readonly error: string;
  readonly at: number;
}

export interface ReloadReport {
  readonly loaded: number;
  readonly disabled: readonly { readonly name: string; readonly reason: string; readonly message: string }[];
  readonly unknownEnforced: readonly string[];
  readonly stalePins: RuleSet["stalePins"];
  readonly released: number;
  /** Keys changed since the start that only a restart applies (`RESTART_KEYS`), in name order. */
  readonly needsRestart: readonly string[];
}

/**
 * The config keys a reload cannot apply, each with its value in a config: the listeners are bound and
 * the pruner set up once, at start. Every other key a reload applies.
 */
const RESTART_KEYS: readonly (readonly [string, (c: GlobalConfig) => unknown])[] = [
  ["agents.listen", (c) => c.agents.listen],
  ["memory.rules.journal_retention", (c) => c.memory.rules.journalRetention],
  ["server.listen", (c) => c.server.listen],
  ["server.metrics_listen", (c) => c.server.metricsListen],
  ["server.metrics_token_file", (c) => c.server.metricsTokenFile],
  ["server.socket", (c) => c.server.socket],
  // The store is opened once, at start.
  ["store", (c) => c.store],
  // Certificates rotate on reload; turning TLS or mutual TLS on or off rebinds the listeners.
  ["server.tls_cert_file", (c) => c.server.tls !== undefined],
  ["server.client_ca_file", (c) => c.server.tls?.clientCaFile !== undefined],
];

/** The keys of `RESTART_KEYS` whose values differ between the two configs. */
export const needsRestart = (atStart: GlobalConfig, next: GlobalConfig): string[] =>
  RESTART_KEYS.filter(([, value]) => !isDeepStrictEqual(value(atStart), value(next))).map(([key]) => key);

export interface DaemonDeps {
  /** The store's objects, each an asynchronous port, whichever backend holds them. */
  readonly stores: StoreDoor;
  /** Who leads among the daemons on the store (default: this one, alone, as on SQLite). */
  readonly leadership?: Leadership;
  /** Another daemon on the store changed the issued tokens: they are to be read again. */
  readonly tokensChangedElsewhere?: () => void;
  /** The config the daemon starts with; a reload replaces all of it but what only a restart changes. */
  readonly configAtStart: GlobalConfig;
  /** The rule set and clones loaded from `configAtStart`. */
  readonly rulesAtStart: RuleSetLoad;
  /**
   * Rereads the global config, for a reload; rejects when it does not load, or when the file is gone
   * and `defaults` was not asked for (a mistaken `mv` must not swap in defaults).
   */
  readonly readConfig: (options: { readonly defaults: boolean }) => Promise<GlobalConfig>;
  /** How a config becomes a rule set, at every reload. */
  readonly loadRules: (config: GlobalConfig) => Promise<RuleSetLoad>;
  /**
   * What the app serves from a reloaded config (the RPC credentials), loaded before anything is swapped,
   * so that one failing to load changes nothing; the function it resolves to puts it in force, in the
   * same turn as the rule set.
   */
  readonly loadServed: (config: GlobalConfig) => Promise<() => void>;
  readonly log: Log;
  /** The wall clock, ms. */
  readonly clock: () => number;
  readonly metrics: DaemonMetrics;
  /** The daemon's environment, which hooks and stop commands inherit. */
  readonly env: NodeJS.ProcessEnv;
  /** The tick period: one minute unless a test shortens it. */
  readonly tickMs: number;
  /** Each commit that made fires, holds or releases durable, once its actions have started. */
  readonly onCommitted: (committed: Committed) => void;
  /** Stops of hook-fed runs waiting for their next hook call (a rule's stop action records them). */
  readonly runStops: StoreDoor["agentRunStops"];
  /**
   * The producers of daemon-derived rows (`../derive/`), given the config in force; each commits what
   * it derives with its cursor, outside the producers' queue.
   */
  readonly derivers: (
    config: () => GlobalConfig,
    /** Where a deriver tells a decision it took (the loop guard's stop), once committed. */
    decided: (decision: Decision) => void,
  ) => readonly Deriver[];
}

/** A lease lost while taking the lead is no failure: the daemon follows instead. */
const rethrowUnlessLost = (e: unknown): void => {
  if (!(e instanceof LeaseLostError)) throw e;
};

/** Milliseconds the evaluator runs before it yields to producers and RPCs. */
const EVAL_SLICE_MS = 20;
/**
 * How long the cursors of rows that changed nothing wait before they are stored on their own: a
 * commit per such row would put an fsync on the event loop for every hook call that fires nothing.
 */
const CURSOR_SAVE_MS = 250;
const PRUNE_EVERY_MS = 60 * MINUTE;
const STOP_TIMEOUT_MS = 30_000;
/**
 * How often the leader looks for rows without being told: a follower's notice of its commit may be lost
 * with its connection.
 */
const ROWS_POLL_MS = 1_000;
/**
 * How often a daemon sharing its store reads the issued tokens again without being told: a notice of a
 * revocation on another daemon may be lost with a connection, and a revoked token must not stay good.
 */
const TOKENS_REREAD_MS = 10_000;
/** How long a role change that failed (the store away) waits before it is tried again. */
const ROLE_RETRY_MS = 1_000;

export class Daemon {
  private evalScheduled = false;
  /** A pass was asked for while one ran: it runs again when done. */
  private evalAgain = false;
  /** The passes, cursor saves and the close, one at a time (each awaits the store). */
  private work: Promise<unknown> = Promise.resolve();
  private passRunning = false;
  private closing = false;
  private cursorSave: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private tickTimer: NodeJS.Timeout | undefined;
  /** The retention pass under way: one at a time, and none once the close begins (it waits for it). */
  private pruning: Promise<void> | undefined;
  private reloading: Promise<unknown> = Promise.resolve();
  private inForce: GlobalConfig;
  private clones: readonly PolicyCloneStatus[];
  private restartKeys: readonly string[] = [];
  private reloadFailure: ReloadFailure | undefined;
  private writer!: JournalWriter;
  /** While this daemon leads: the evaluator and the derivers (a new pair each time it takes over). */
  private evaluator: Evaluator | undefined;
  private derivation: Derivation | undefined;
  /** While it follows: the leader's decisions as the store has them. */
  private follower: FollowerView | undefined;
  /** What the view showed last, while a role change is under way. */
  private lastView: EvaluatorView | undefined;
  private readonly leadership: Leadership;
  private rulesInForce: RuleSet;
  /** What the last progress told followers (the leader's), so an unchanged one is not told again. */
  private told = { cursor: -1, stored: -1, commits: 0 };
  private readonly actions: ActionRunner;
  private notifier: Notifier | undefined;
  /** Notifiers a reload replaced, still delivering what they were given. */
  private readonly retiring = new Set<Promise<void>>();
  private readonly pruner: ReturnType<StoreDoor["pruner"]>;
  /** The journal writer's and the evaluator's doors, closed with the daemon. */
  private readonly writePath: WritePath;
  /** What the journal's last batch found of the store's writes (`harness doctor` fails on a failure). */
  readonly storeWrite: StoreWriteHealth;
  private readonly rejectionLogged = new OncePer(HOUR);
  /**
   * Evaluator commits that stored fires, this daemon's as leader and the leader's its progress told it
   * as follower: it moves whenever a fire may have become one to tell.
   */
  private fireCommits = 0;
  private leaderFireCommits: string | undefined;
  /** Who waits for a row's evaluation (`evaluated`), settled after each step of the evaluator. */
  private readonly evaluationWaits = new EvaluationWaits();

  /** A daemon over the store, its evaluator resumed after the stored cursor; `start` sets it going. */
  static async open(deps: DaemonDeps): Promise<Daemon> {
    const daemon = new Daemon(deps);
    await daemon.init();
    return daemon;
  }

  private constructor(private readonly deps: DaemonDeps) {
    const { stores, configAtStart: config, log, clock } = deps;
    this.inForce = config;
    this.clones = deps.rulesAtStart.clones;
    this.notifier = this.newNotifier(config.notify);
    this.actions = new ActionRunner(stores.decisions, this.sinks(config), log, clock, deps.runStops);
    this.storeWrite = new StoreWriteHealth(stores.label, clock);
    this.writePath = stores.writePath((e) =>
      log.error({ err: e.message }, "syncing the store's WAL failed; the next commit syncs it"),
    );
    this.pruner = stores.pruner(config.memory.rules.journalRetention);
    this.leadership = deps.leadership ?? new SoleLeadership("harness daemon", clock);
    this.rulesInForce = deps.rulesAtStart.ruleSet;
  }

  /** The derivers, their state rebuilt from the journal: each term of leadership has its own. */
  private newDerivation(): Derivation {
    const { stores, derivers } = this.deps;
    const evaluatorLog = this.writePath.evaluator;
    return new Derivation({
      journal: stores.journal,
      cursors: stores.cursors,
      // Only the leader derives: a deriver's commit is fenced by its epoch.
      append: (rows, writes, options) =>
        this.writer.appendNow(rows, writes ?? [], { ...options, fenced: true }),
      derivers: derivers(
        () => this.inForce,
        (d) => this.actions.decidedElsewhere(d),
      ),
      // The derivers keep state about runs in flight: a rebuild replays from the oldest one's opening.
      replayFrom: async () => stores.agentRuns.replayFrom(await evaluatorLog.cursor(), HOUR),
    });
  }

  /**
   * Opens the writer, then asks for the lead: leading, it settles what the last leader left unfinished,
   * opens the evaluator and rebuilds the derivers; following, it reads the leader's decisions.
   */
  private async init(): Promise<void> {
    const { stores, log, clock, metrics } = this.deps;
    this.writer = new JournalWriter(this.writePath.journal, {
      queueLimit: DEFAULT_QUEUE_LIMIT,
      batchSize: DEFAULT_BATCH_SIZE,
      clock,
      metrics,
      onCommitted: () => {
        this.storeWrite.succeeded();
        if (this.evaluator !== undefined) this.scheduleEvaluation();
        else this.leadership.rowsCommitted();
      },
      onError: (e) => {
        this.storeWrite.failed(e);
        log.error({ err: e.message, store: stores.label }, "journal admission failed");
      },
    });
    // The first role is taken before the daemon serves, and a failure to take it fails the start; the
    // role changes after it are tried again until they hold.
    let first: number | undefined;
    let started = false;
    await this.leadership.start({
      lead: (epoch) => {
        if (started) void this.inWork(() => this.lead(epoch));
        else first = epoch;
      },
      follow: (reason) => {
        if (started) void this.inWork(() => this.follow(reason));
      },
      progress: (p) => this.heard(p),
      rows: () => this.scheduleEvaluation(),
      tokens: () => this.deps.tokensChangedElsewhere?.(),
    });
    started = true;
    const epoch = first;
    await this.inWork(async () => {
      if (epoch !== undefined) await this.takeLead(epoch).catch(rethrowUnlessLost);
      if (this.evaluator === undefined)
        await this.openFollower(this.leadership.notLeading ?? "another daemon leads");
    });
    this.reportRuleSet(this.rulesInForce, this.clones);
  }

  /** Whether this daemon leads now: it evaluates, acts, ticks, derives and prunes. */
  get leading(): boolean {
    return this.evaluator !== undefined && this.leadership.epoch !== undefined;
  }

  /** Whether this daemon leads, and the leader it last knew, without a store read (metrics). */
  get leaderNow(): { readonly leading: boolean; readonly leader: LeaderRecord | undefined } {
    return { leading: this.leading, leader: this.leadership.lastKnown };
  }

  /** Who leads, read from the store now, and why this daemon does not (status, doctor). */
  async leaderStatus(): Promise<{
    readonly leading: boolean;
    readonly leader: LeaderRecord | undefined;
    readonly notLeading: string | undefined;
  }> {
    const leader = await this.leadership.leader();
    const leading = this.leading;
    return {
      leading,
      leader,
      notLeading: leading ? undefined : (this.leadership.notLeading ?? "this daemon is taking the lead"),
    };
  }

  /** Takes over in `epoch`; a failure (the store away) is tried again while the lease is still its. */
  private async lead(epoch: number): Promise<void> {
    try {
      await this.takeLead(epoch);
    } catch (e) {
      if (e instanceof LeaseLostError) return;
      this.deps.log.error({ err: (e as Error).message, epoch }, "taking the lead failed; retrying");
      this.timers.push(
        setTimeout(() => void this.inWork(() => this.lead(epoch)).catch(() => undefined), ROLE_RETRY_MS),
      );
    }
  }

  /**
   * Takes over in `epoch`: settles the actions the last leader left unfinished (never repeated),
   * opens the evaluator from the stored cursor, with the follower's warm window index, and rebuilds the
   * derivers' state.
   */
  private async takeLead(epoch: number): Promise<void> {
    if (this.closing || this.leadership.epoch !== epoch || this.evaluator !== undefined) return;
    const { stores, log, clock, metrics } = this.deps;
    const interrupted = await stores.decisions.settleInterrupted(clock());
    if (interrupted.undelivered > 0)
      log.warn(
        { actions: interrupted.undelivered },
        "actions the last leader kept from starting are recorded undelivered",
      );
    if (interrupted.unknown > 0)
      log.warn(
        { actions: interrupted.unknown },
        "actions running when the last leader stopped are recorded unknown: they may have run",
      );
    const warm = await this.follower?.handOver();
    const once = new OncePer(HOUR);
    const evaluator: Evaluator = await Evaluator.open(this.rulesInForce, {
      log: this.writePath.evaluator,
      metrics,
      clock,
      warm,
      onFailure: (f, seq) => {
        // cost_exceeded disables the hash until the next load, so it is logged each time it happens.
        if (f.result === "cost_exceeded" || once.take(`${f.rule}\u0000${f.result}`, clock()))
          log.error(
            { rule: f.rule, hash: f.hash, seq, result: f.result, detail: f.detail },
            "rule evaluation failed",
          );
      },
      dispatch: (committed) => {
        if (committed.fires.length > 0) this.fireCommits++;
        this.actions.dispatch(committed);
        metrics.holdsActive.set(Object.keys(evaluator.state.holds).length);
        this.deps.onCommitted(committed);
      },
    });
    const derivation = this.newDerivation();
    await derivation.start();
    if (this.leadership.epoch !== epoch) return;
    this.evaluator = evaluator;
    this.derivation = derivation;
    this.follower = undefined;
    this.lastView = evaluator;
    this.told = { cursor: -1, stored: -1, commits: 0 };
    metrics.holdsActive.set(Object.keys(evaluator.state.holds).length);
    if (this.leadership.shared)
      log.info({ epoch, cursor: evaluator.cursor }, "this daemon leads: it evaluates and acts");
    this.scheduleEvaluation();
  }

  /**
   * Follows: the evaluator and derivers are let go (what they started finishes; what they had not
   * started is refused by the lease) and the leader's decisions are read from the store. Tried again
   * while the store does not answer; meanwhile the view shows what it last showed.
   */
  private async follow(reason: string): Promise<void> {
    try {
      await this.openFollower(reason);
    } catch (e) {
      this.deps.log.error({ err: (e as Error).message }, "reading the leader's decisions failed; retrying");
      this.timers.push(
        setTimeout(() => void this.inWork(() => this.follow(reason)).catch(() => undefined), ROLE_RETRY_MS),
      );
    }
  }

  private async openFollower(reason: string): Promise<void> {
    if (this.closing || this.leadership.epoch !== undefined) return;
    const wasLeading = this.evaluator !== undefined;
    this.evaluator = undefined;
    this.derivation = undefined;
    if (this.follower === undefined) {
      this.follower = await FollowerView.open(this.rulesInForce, this.writePath.evaluator);
      this.lastView = this.follower;
    }
    this.deps.log[wasLeading ? "warn" : "info"](
      { reason },
      wasLeading
        ? "this daemon no longer leads: it admits and serves, the leader evaluates and acts"
        : "this daemon follows: it admits and serves, the leader evaluates and acts",
    );
  }

  /** The leader's progress, heard as a follower: waits on rows it has evaluated are answered. */
  private heard(progress: Progress): void {
    const follower = this.follower;
    if (follower === undefined || this.closing) return;
    const key = `${progress.epoch}:${progress.fireCommits}`;
    follower.heard(progress, this.writePath.evaluator).then(
      () => {
        if (this.follower !== follower) return;
        if (this.leaderFireCommits !== key) {
          this.leaderFireCommits = key;
          this.fireCommits++;
        }
        this.evaluationWaits.reached(follower.cursor);
        this.deps.metrics.journalLag.set(follower.lagSeconds(this.deps.clock()));
      },
      (e: Error) => this.deps.log.error({ err: e.message }, "reading the leader's progress failed"),
    );
  }

  /** Tells followers how far this daemon, leading, has evaluated, when that moved. */
  private announce(evaluator: Evaluator): void {
    const epoch = this.leadership.epoch;
    if (epoch === undefined) return;
    const { cursor, storedCursor: stored, commits } = evaluator;
    const told = this.told;
    if (cursor === told.cursor && stored === told.stored && commits === told.commits) return;
    this.leadership.announce({
      epoch,
      cursor,
      stored,
      at: evaluator.lastEvaluatedAt,
      fireCommits: this.fireCommits,
      changed: commits !== told.commits,
    });
    this.told = { cursor, stored, commits };
  }

  /** The hook `[notify]` configures, or undefined when it names no command. */
  private newNotifier(notify: GlobalConfig["notify"]): Notifier | undefined {
    const { stores, log, clock, metrics, env } = this.deps;
    if (notify.command === undefined) return undefined;
    return new Notifier(
      notifyConfig({
        command: notify.command,
        timeoutMs: notify.timeout,
        cooldownMs: notify.cooldown,
        events: notify.events,
      }),
      {
        now: clock,
        env,
        cooldowns: stores.notifyCooldowns,
        onCooldownError: (e) => log.error({ err: e.message }, "notify cooldown store failed"),
        onStart: (e) => (e.event === "rule_fired" ? this.actions.notifyStarted(e.fireId) : undefined),
        onOutcome: (event, result, d) => {
          metrics.notifyDeliveries.inc({ event, result });
          if (event === "rule_fired") this.actions.notifyOutcome(d.notification.fireId, result, d.reason);
          if (result !== "ok" && result !== "suppressed")
            log.warn(
              { event, rule: d.notification.rule, fire_id: d.notification.fireId, result, reason: d.reason },
              "notify not delivered",
            );
        },
      },
    );
  }

  /** Where `config` sends the actions: the notifier in force and `[supervisor] stop`. */
  private sinks(config: GlobalConfig): ActionSinks {
    const notifier = this.notifier;
    const wanted = new Set(config.notify.events);
    return {
      notify: notifier === undefined ? undefined : (e) => notifier.offer(e),
      wantsEvent: (e) => wanted.has(e),
      stopCommand: config.supervisor.stop,
      stopTimeoutMs: STOP_TIMEOUT_MS,
      env: this.deps.env,
    };
  }

  /**
   * A reload's `[notify]` and `[supervisor] stop`. A changed `[notify]` gets a new notifier; the old one
   * finishes what it was given (its cooldowns are in the store, so the new one keeps them).
   */
  private reconfigureActions(config: GlobalConfig): void {
    if (!isDeepStrictEqual(config.notify, this.inForce.notify)) {
      const old = this.notifier;
      this.notifier = this.newNotifier(config.notify);
      if (old !== undefined) {
        const retired = old
          .drain()
          .then(() => old.close())
          .catch((e: Error) =>
            this.deps.log.error({ err: e.message }, "the replaced notify hook failed to drain"),
          )
          .finally(() => this.retiring.delete(retired));
        this.retiring.add(retired);
      }
    }
    this.actions.configure(this.sinks(config));
  }

  /** The evaluator as others may read it: the set in force and the state as last committed. */
  /**
   * How many evaluator commits have stored fires since the start: it changes whenever a fire may have
   * become one to tell (`../agents/enforcement/tell.ts` skips the store while it has not).
   */
  get firesCommitted(): number {
    return this.fireCommits;
  }

  /** Sees every decision after its commit (telemetry/decision-export.ts); see ActionRunner.observe. */
  observeDecisions(observer: DecisionObserver): void {
    this.actions.observe(observer);
  }

  /** A decision taken outside the evaluator (a fail mode's answer), told to the decisions' observers. */
  decided(decision: Decision): void {
    this.actions.decidedElsewhere(decision);
  }

  /**
   * The evaluation as others may read it, whichever this daemon's role: the evaluator while it leads,
   * the leader's decisions while it follows. One object for the daemon's life, so a reader holding it
   * reads the role in force.
   */
  readonly view: EvaluatorView = (() => {
    const current = (): EvaluatorView => {
      const v = this.evaluator ?? this.follower ?? this.lastView;
      if (v === undefined) throw new Error("the daemon has not taken a role yet");
      return v;
    };
    return {
      get rules() {
        return current().rules;
      },
      get state() {
        return current().state;
      },
      get cursor() {
        return current().cursor;
      },
      get lastEvaluatedAt() {
        return current().lastEvaluatedAt;
      },
      lagSeconds: (now: number) => current().lagSeconds(now),
    };
  })();
  /** The config as the last load read it (at start or by a reload): rule miners and policy repos. */
  get configInForce(): GlobalConfig {
    return this.inForce;
  }
  /** The keys the last reload found changed that only a restart applies. */
  get needsRestart(): readonly string[] {
    return this.restartKeys;
  }
  /** Why the last reload failed, until one succeeds (`harness doctor` fails on it). */
  get lastReloadFailure(): ReloadFailure | undefined {
    return this.reloadFailure;
  }
  /** Each declared policy repo's clone as the last load found it (REQ-2's gate), in name order. */
  get policyClones(): readonly PolicyCloneStatus[] {
    return this.clones;
  }

  /** Starts the tick, retention and SIGHUP, and evaluates what the journal holds past the cursor. */
  start(): void {
    const scheduleTick = () => {
      const now = this.deps.clock();
      // Aligned to the wall-clock minute, so ticks land once per minute whatever the start time.
      const wait = this.deps.tickMs - (now % this.deps.tickMs);
      this.tickTimer = setTimeout(() => {
        // Only the leader ticks: one tick a minute for the store, however many daemons share it.
        if (this.leading) this.writer.offer({ source: "tick", kind: "tick", event: { type: "tick" } });
        scheduleTick();
      }, wait);
    };
    scheduleTick();
    this.prune();
    this.timers.push(setInterval(() => this.prune(), PRUNE_EVERY_MS));
    if (this.leadership.shared) {
      this.timers.push(setInterval(() => this.scheduleEvaluation(), ROWS_POLL_MS));
      this.timers.push(setInterval(() => this.deps.tokensChangedElsewhere?.(), TOKENS_REREAD_MS));
    }
    process.on("SIGHUP", this.onHup);
    this.scheduleEvaluation();
  }

  private reportRuleSet(ruleSet: RuleSet, clones: readonly PolicyCloneStatus[]): void {
    const { metrics, log } = this.deps;
    // The same states ListRules reports (REQ-9's shadow, REQ-6's cost-limit disable), counted.
    const counts = ruleStateCounts(ruleSet, this.view.state);
    metrics.rulesLoaded.set({ state: "active" }, counts.active);
    metrics.rulesLoaded.set({ state: "shadow" }, counts.shadow);
    metrics.rulesLoaded.set({ state: "disabled" }, ruleSet.disabled.length + counts.disabled);
    for (const d of ruleSet.disabled)
      log.warn({ rule: d.name, file: d.file, reason: d.reason, detail: d.message }, "rule disabled");
    for (const name of ruleSet.unknownEnforced)
      log.warn({ rule: name }, "enforce names a rule that is not loaded");
    for (const p of ruleSet.stalePins)
      log.warn(
        { rule: p.name, pinned: p.pinned, loaded: p.loaded },
        "enforce pins a content hash the loaded rule no longer has: not enforced until pinned again",
      );
    for (const c of clones)
      if (c.state !== "clean")
        log.warn({ repo: c.name, state: c.state, detail: c.detail }, "policy clone not served as is");
    log.info({ loaded: ruleSet.rules.length, disabled: ruleSet.disabled.length }, "rule set loaded");
  }

  /**
   * `harness rules clear`: between two rows, like every change of state; the number of holds released.
   * The hook-fed runs of the harness each released hold's rule stopped are released with it
   * (`agent-run-stops.ts`).
   */
  clear(harness: string, rule: string | undefined, by?: string): Promise<number> {
    // Refused at once, before anything is queued, when another daemon leads: the caller is told.
    if (this.evaluator === undefined)
      throw new NotLeaderError(`clear ${harness}`, this.leadership.notLeading ?? "it is taking the lead");
    // Between two passes: a pass records the stops its fires made before it ends, so the release finds
    // every stop fired before the clear, and none fired after it (the next pass's) is released by it.
    return this.inWork(async () => {
      const evaluator = this.evaluator;
      // The lead was lost between the call and its turn.
      if (evaluator === undefined)
        throw new NotLeaderError(`clear ${harness}`, this.leadership.notLeading ?? "it is taking the lead");
      const released = await evaluator.clear(harness, rule, by);
      const at = this.deps.clock();
      for (const r of released) await this.deps.runStops.releasedWithHold(r.harness, r.rule, at, r.by);
      this.deps.metrics.holdsActive.set(Object.keys(evaluator.state.holds).length);
      return released.length;
    });
  }

  /**
   * Commits the daemon's own derived rows now, outside the producers' queue, with `also` in the same
   * transaction (`../derive/deriver.ts`); the evaluator then reads them like any other row.
   */
  readonly appendDerived: AppendDerived = (rows, writes, options) =>
    this.writer.appendNow(rows, writes ?? [], options);

  /**
   * `JournalService.Append`: each event checked on its own, admitted through the bounded queue; with an
   * idempotency key, a request already committed is answered as it was the first time. The hook ingest
   * admits through it too, marking its rows hook-fed.
   */
  admit(
    source: ProducerSource,
    events: readonly unknown[],
    key?: string,
    options?: AdmitOptions,
  ): Promise<readonly AdmitResult[]> {
    return admitEvents(this.writer, source, events, key, options);
  }

  /**
   * An event Append refused: counted every time, logged once an hour per source and reason, and never
   * with its message, which may carry what the producer sent.
   */
  rejected(source: ProducerSource, reason: RefusalReason, events = 1): void {
    this.deps.metrics.journalRejected.inc({ source, reason }, events);
    if (this.rejectionLogged.take(`${source}\u0000${reason}`, this.deps.clock()))
      this.deps.log.warn(
        { source, reason },
        "journal event rejected (logged once an hour per source and reason; harness_rule_journal_rejected_total counts each)",
      );
  }

  /**
   * Resolves true once row `seq` is evaluated and what it decided is committed and dispatched (a stop
   * of a hook-fed run recorded), false after `budgetMs` or at shutdown. A live attempt's answer waits on
   * it (`../agents/ingest/attempt.ts`).
   */
  evaluated(seq: number, budgetMs: number): Promise<boolean> {
    // Following, the leader's progress answers it: its decisions are read from the store first.
    if (this.view.cursor >= seq) return Promise.resolve(true);
    if (this.closed) return Promise.resolve(false);
    return this.evaluationWaits.wait(seq, budgetMs);
  }

  /** Runs `job` after the passes, saves and close asked for before it. */
  private inWork<T>(job: () => Promise<T>): Promise<T> {
    const next = this.work.then(job);
    this.work = next.catch(() => undefined);
    return next;
  }

  private scheduleEvaluation(): void {
    if (this.closing || this.evaluator === undefined) return;
    // A pass under way may have read the journal before this row committed: it runs once more.
    if (this.passRunning) this.evalAgain = true;
    if (this.evalScheduled) return;
    this.evalScheduled = true;
    setImmediate(() => {
      this.evalScheduled = false;
      if (this.closing || this.passRunning) return;
      void this.inWork(() => this.evaluationPass());
    });
  }

  /**
   * Derivation, then a slice of evaluation; schedules the next pass while rows remain, and tells the
   * followers how far it got. A commit the lease refuses ends the pass: the daemon follows from there.
   */
  private async evaluationPass(): Promise<void> {
    const { evaluator, derivation } = this;
    if (this.closing || evaluator === undefined || derivation === undefined) return;
    const { log } = this.deps;
    this.passRunning = true;
    this.evalAgain = false;
    let n = 0;
    let stalled = false;
    try {
      try {
        // Derived rows first, so the evaluator's slice can reach them in the same pass. A failed
        // derivation keeps nothing uncommitted and is retried; it does not hold evaluation up.
        n += await derivation.step();
      } catch (e) {
        if (!this.lostLead(e)) {
          log.error({ err: (e as Error).message }, "deriving rows stalled; retrying");
          this.timers.push(setTimeout(() => this.scheduleEvaluation(), 1_000));
        }
      }
      try {
        n += await evaluator.step(EVAL_SLICE_MS);
      } catch (e) {
        stalled = true;
        if (!this.lostLead(e)) {
          log.error({ err: (e as Error).message, cursor: evaluator.cursor }, "evaluation stalled; retrying");
          this.timers.push(setTimeout(() => this.scheduleEvaluation(), 1_000));
        }
      }
    } finally {
      this.passRunning = false;
    }
    if (stalled) return;
    // What a row decided is dispatched when its commit is made; a stop of a hook-fed run it made is
    // recorded before a live attempt waiting on the row is told it is evaluated.
    await this.actions.stopsRecorded();
    this.evaluationWaits.reached(evaluator.cursor);
    this.announce(evaluator);
    this.deps.metrics.journalLag.set(evaluator.lagSeconds(this.deps.clock()));
    if (n > 0 || this.evalAgain) this.scheduleEvaluation();
    else this.scheduleCursorSave();
  }

  /** Whether `e` is the lease refusing a commit: logged once, as the follow that comes with it says why. */
  private lostLead(e: unknown): boolean {
    const lost = e instanceof LeaseLostError || (e as Error).cause instanceof LeaseLostError;
    if (lost)
      this.deps.log.warn({ err: (e as Error).message }, "a commit was refused: this daemon no longer leads");
    return lost;
  }

  /** Stores, a moment later, the cursors that rows which changed nothing advanced. */
  private scheduleCursorSave(): void {
    const { evaluator, derivation } = this;
    if (this.cursorSave !== undefined || this.closing || evaluator === undefined || derivation === undefined)
      return;
    if (!derivation.cursorsUnsaved && !evaluator.cursorUnsaved) return;
    this.cursorSave = setTimeout(() => {
      this.cursorSave = undefined;
      void this.inWork(async () => {
        if (this.closing || this.evaluator !== evaluator) return;
        try {
          // A cursor lost to a power cut makes rows that changed nothing read again: no need to wait.
          await derivation.saveCursors();
          await evaluator.saveCursor();
          this.announce(evaluator);
        } catch (e) {
          if (this.lostLead(e)) return;
          // Nothing is lost: the rows are read again from the stored cursors. The next pass tries again.
          this.deps.log.error({ err: (e as Error).message }, "storing the cursors failed; retrying");
          this.scheduleEvaluation();
        }
      });
    }, CURSOR_SAVE_MS);
  }

  private readonly onHup = () => {
    this.reload().catch((e: Error) => this.deps.log.error({ err: e.message }, "reload failed"));
  };

  /** Starts a retention pass, unless one is under way or the daemon is closing. */
  private prune(): void {
    // Only the leader prunes: one retention pass for the store, however many daemons share it.
    if (this.pruning !== undefined || this.closing || !this.leading) return;
    this.pruning = this.retention().finally(() => {
      this.pruning = undefined;
    });
  }

  /**
   * Retention, a batch per turn of the event loop, so evaluation never waits long behind it; it stops
   * when the close begins, and the close waits for the batch under way.
   */
  private async retention(): Promise<void> {
    const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
    try {
      let deleted = 0;
      for (let done = false; !done; ) {
        await turn();
        if (this.closing) return;
        const r = await this.pruner.pruneBatch(this.deps.clock());
        deleted += r.deleted;
        done = r.done;
      }
      if (deleted > 0) this.deps.log.info({ rows: deleted }, "journal retention pruned rows");
      for (let freed = 1; freed > 0; ) {
        await turn();
        if (this.closing) return;
        freed = await this.pruner.vacuumStep();
      }
    } catch (e) {
      this.deps.log.error({ err: (e as Error).message }, "journal retention failed");
    }
  }

  /**
   * `harness reload` and SIGHUP: the config and rule set reread, swapped in between two rows. Reloads
   * run one at a time, so two never interleave their reads of the clones.
   */
  reload(options: { readonly defaults?: boolean; readonly by?: string } = {}): Promise<ReloadReport> {
    return this.queueReload(() => undefined, options.defaults === true, options.by);
  }

  /**
   * A reload after the ones already queued; `admit` may refuse the config it reads, by throwing. The
   * check and the reload read the config once, so no edit can land between them (`harness policy sync`
   * asks for a reload only if the config the daemon reads declares the synced repo). `by`: the operator
   * who asked (decision 0018), recorded with the holds it releases and in its log line.
   */
  queueReload(admit: (config: GlobalConfig) => void, defaults = false, by?: string): Promise<ReloadReport> {
    const next = this.reloading.then(() => this.reloadNow(admit, defaults, by));
    this.reloading = next.catch(() => undefined);
    return next;
  }

  private async reloadNow(
    admit: (config: GlobalConfig) => void,
    defaults: boolean,
    by: string | undefined,
  ): Promise<ReloadReport> {
    // A failure to read or load is remembered until a reload succeeds; `admit`'s refusal is an answer
    // to its caller about the request, not a fault of the config.
    const failed = (e: unknown): never => {
      this.reloadFailure = { error: (e as Error).message, at: this.deps.clock() };
      throw e;
    };
    const config = await this.deps.readConfig({ defaults }).catch(failed);
    admit(config);
    const { ruleSet, clones } = await this.deps.loadRules(config).catch(failed);
    const serve = await this.deps.loadServed(config).catch(failed);
    // Nothing has changed until here. The swap, which commits the holds it releases, goes first: if it
    // throws, the credentials and actions in force stay as they were too.
    // The evaluator takes a reload between two of its slices, so this lands between two rows; a
    // follower's view swaps its rule set (the leader releases what its own reload no longer backs).
    const released = await this.inWork(async () => {
      this.rulesInForce = ruleSet;
      if (this.evaluator !== undefined) return this.evaluator.swapRuleSet(ruleSet, by);
      await this.follower?.swapRuleSet(ruleSet, this.writePath.evaluator);
      return [];
    });
    serve();
    this.clones = clones;
    this.reconfigureActions(config);
    this.inForce = config;
    this.restartKeys = needsRestart(this.deps.configAtStart, config);
    this.reloadFailure = undefined;
    this.reportRuleSet(ruleSet, clones);
    this.deps.log[this.restartKeys.length === 0 ? "info" : "warn"](
      {
        loaded: ruleSet.rules.length,
        released: released.length,
        needs_restart: this.restartKeys,
        ...(by === undefined ? {} : { by }),
      },
      this.restartKeys.length === 0 ? "reloaded" : "reloaded; some changed keys apply only at a restart",
    );
    return {
      needsRestart: this.restartKeys,
      loaded: ruleSet.rules.length,
      disabled: ruleSet.disabled.map((d) => ({ name: d.name, reason: d.reason, message: d.message })),
      unknownEnforced: ruleSet.unknownEnforced,
      stalePins: ruleSet.stalePins,
      released: released.length,
    };
  }

  /** Commits what is queued and evaluated, stops the timers, waits for hooks and stops under way. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    process.off("SIGHUP", this.onHup);
    await this.pruning;
    await this.inWork(async () => {
      await this.writer.close();
      const { evaluator, derivation } = this;
      if (evaluator === undefined || derivation === undefined) return;
      try {
        while ((await derivation.step()) + (await evaluator.step(1_000)) > 0);
        await derivation.saveCursors();
        await evaluator.saveCursor();
        await this.actions.stopsRecorded();
      } catch (e) {
        // A daemon that lost the lead leaves the rest to the leader.
        if (!this.lostLead(e)) throw e;
      }
    });
    this.evaluationWaits.reached(this.view.cursor);
    this.evaluationWaits.close();
    this.closed = true;
    if (this.tickTimer !== undefined) clearTimeout(this.tickTimer);
    if (this.cursorSave !== undefined) clearTimeout(this.cursorSave);
    for (const t of this.timers) clearTimeout(t);
    await this.notifier?.drain();
    await this.notifier?.close();
    await Promise.all(this.retiring);
    await this.actions.drain();
    // Given up only now: what was queued to act started under the lease.
    await this.leadership.close();
    await this.writePath.close();
  }
}
