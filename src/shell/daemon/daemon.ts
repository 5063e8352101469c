/**
 * `harness daemon`: owns the store, admits every input as a journal row, runs the core over committed
 * rows in seq order, commits before acting, and acts (SPEC-0029 REQ-7, REQ-10 to REQ-13). Everything runs
 * on one event loop: the journal writer and the evaluator take turns in short slices, so a producer is
 * never kept waiting behind a long evaluation, and neither waits on a hook, a stop or a backtest.
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as http from "node:http";
import * as path from "node:path";
import { HOUR, MINUTE } from "../../core/durations.js";
import type { RuleSet } from "../../core/rule-set.js";
import type { ProducerSource } from "../../core/sources.js";
import { BacktestRunner } from "../backtest/backtest-runner.js";
import { formatConfigError } from "../config/config-error.js";
import { type GlobalConfig, readGlobalConfig } from "../config/global-config.js";
import { storePath as defaultStorePath, globalConfigPath } from "../config/paths.js";
import { parseWireEvent } from "../journal/event-format.js";
import { DEFAULT_BATCH_SIZE, DEFAULT_QUEUE_LIMIT, JournalWriter } from "../journal/journal-writer.js";
import { createLog, type Log, OncePer } from "../log.js";
import { DaemonMetrics } from "../metrics.js";
import { Notifier, notifyConfig } from "../notify/index.js";
import { type PolicyCloneStatus, PolicyRuleSource } from "../policy/clone-rules.js";
import { LastGoodCommits } from "../policy/last-good.js";
import { ProposalDesk } from "../proposals/propose-rule.js";
import { backtestMethod } from "../rpc/backtest-service.js";
import {
  bearerMatches,
  digestToken,
  loadCredentials,
  readTokenFile,
  type TokenDigest,
} from "../rpc/credentials.js";
import { RuleService } from "../rpc/gen/harness/v1/rules_pb.js";
import type { AdmitResult } from "../rpc/journal-service.js";
import { proposalService } from "../rpc/proposal-service.js";
import { UnknownPolicyRepoError } from "../rpc/rule-errors.js";
import {
  type CommittedRecords,
  committedRecords,
  holdsOn,
  type ReloadReport,
  ruleService,
  ruleStateCounts,
} from "../rpc/rule-service.js";
import { type RpcServer, startRpcServer } from "../rpc/server.js";
import { committedEvents, eventCount, type WatchEvent, watchEvents } from "../rpc/watch-events.js";
import { DecisionStore } from "../store/decision-store.js";
import { JournalTable } from "../store/journal-table.js";
import { NotifyCooldowns } from "../store/notify-cooldowns.js";
import { type OpenedStore, openStore } from "../store/open-store.js";
import { JournalPruner } from "../store/retention.js";
import { packageVersion } from "../version.js";
import { ActionRunner } from "./actions.js";
import { type Committed, Evaluator } from "./evaluator.js";
import { EventBus } from "./event-bus.js";
import { loadRuleSet } from "./rule-source.js";

export interface DaemonOptions {
  readonly env: NodeJS.ProcessEnv;
  /** `--config`: a missing file is then an error; by default a missing global config means defaults. */
  readonly configPath?: string;
  /** `--store`. */
  readonly storePath?: string;
  /** Overrides `[server] socket`. */
  readonly socketPath?: string;
  readonly log?: Log;
  /** The wall clock, ms; tests inject one. */
  readonly clock?: () => number;
  /** Tick period; one minute unless a test shortens it. */
  readonly tickMs?: number;
  /**
   * How a config becomes a rule set, at start and on every reload, in place of the starter pack and the
   * policy clones: for tests that need rules without a policy repo.
   */
  readonly loadRules?: (config: GlobalConfig) => RuleSet;
}

/** A loaded rule set, and the state of each policy clone it was read from (GetStatus, doctor). */
interface RuleSetLoad {
  readonly ruleSet: RuleSet;
  readonly clones: readonly PolicyCloneStatus[];
}

export class DaemonStartError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "DaemonStartError";
  }
}

/** Milliseconds the evaluator runs before it yields to producers and RPCs. */
const EVAL_SLICE_MS = 20;
const PRUNE_EVERY_MS = 60 * MINUTE;
const STOP_TIMEOUT_MS = 30_000;

export class Daemon {
  private evalScheduled = false;
  private closed = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private tickTimer: NodeJS.Timeout | undefined;
  private rpc: RpcServer | undefined;
  private metricsServer: http.Server | undefined;
  private metricsAddress: string | undefined;
  private pruning = false;
  /** Backtests run in workers over their own read-only connections to this daemon's store. */
  private readonly backtests: BacktestRunner;
  private reloading: Promise<unknown> = Promise.resolve();
  /** The config as last loaded (at start or by a reload): rule miners and policy repos are read from it. */
  private loadedConfig: GlobalConfig;
  /**
   * propose_rule (REQ-15), for the supervisor's gateway to call in this process: no RPC stores a
   * proposal.
   */
  readonly proposals: ProposalDesk;
  /** WatchEvents' watchers: fed after every commit that made fires, holds or releases durable. */
  private readonly watchers = new EventBus<WatchEvent>();
  private readonly records: CommittedRecords;

  private constructor(
    readonly config: GlobalConfig,
    readonly store: OpenedStore,
    readonly socketPath: string,
    private readonly log: Log,
    private readonly clock: () => number,
    readonly metrics: DaemonMetrics,
    private readonly writer: JournalWriter,
    private readonly evaluator: Evaluator,
    private readonly actions: ActionRunner,
    private readonly notifier: Notifier | undefined,
    private readonly pruner: JournalPruner,
    private readonly configPath: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly tickMs: number,
    private readonly loadRules: (config: GlobalConfig) => Promise<RuleSetLoad>,
    private clones: readonly PolicyCloneStatus[],
  ) {
    this.records = committedRecords(store.db);
    this.loadedConfig = config;
    this.backtests = new BacktestRunner(store.path);
    this.proposals = new ProposalDesk({
      db: store.db,
      evaluator,
      backtests: this.backtests,
      metrics,
      log,
      clock,
      ruleMiners: () => this.loadedConfig.memory.ruleMiners,
      retentionMs: () => this.config.memory.rules.journalRetention,
    });
  }

  static async start(options: DaemonOptions): Promise<Daemon> {
    const env = options.env;
    const clock = options.clock ?? Date.now;
    const log = options.log ?? createLog();
    const configPath = options.configPath ?? globalConfigPath(env);
    const config = await readConfig(configPath, env, options.configPath !== undefined);
    const store = openStore(
      options.storePath ?? defaultStorePath(env),
      `harness daemon (pid ${process.pid})`,
    );
    try {
      const decisions = new DecisionStore(store.db);
      const lost = decisions.markInterruptedUndelivered(clock());
      if (lost > 0)
        log.warn({ actions: lost }, "actions interrupted by the last stop are recorded undelivered");
      const journal = new JournalTable(store.db);
      const metrics = new DaemonMetrics();
      const loadRules = ruleLoader(options, new LastGoodCommits(store.db), env, clock);
      const { ruleSet, clones } = await loadRules(config);
      let actions: ActionRunner | undefined;
      const notify = config.notify;
      const notifier =
        notify.command === undefined
          ? undefined
          : new Notifier(
              notifyConfig({
                command: notify.command,
                timeoutMs: notify.timeout,
                cooldownMs: notify.cooldown,
                events: notify.events,
              }),
              {
                now: clock,
                env,
                cooldowns: new NotifyCooldowns(store.db),
                onCooldownError: (e) => log.error({ err: e.message }, "notify cooldown store failed"),
                onOutcome: (event, result, d) => {
                  metrics.notifyDeliveries.inc({ event, result });
                  if (event === "rule_fired") actions?.notifyOutcome(d.notification.fireId, result, d.reason);
                  if (result !== "ok" && result !== "suppressed")
                    log.warn(
                      {
                        event,
                        rule: d.notification.rule,
                        fire_id: d.notification.fireId,
                        result,
                        reason: d.reason,
                      },
                      "notify not delivered",
                    );
                },
              },
            );
      const wanted = new Set(notify.events);
      actions = new ActionRunner(
        decisions,
        {
          notify: notifier === undefined ? undefined : (e) => notifier.offer(e),
          wantsEvent: (e) => wanted.has(e),
          stopCommand: config.supervisor.stop,
          stopTimeoutMs: STOP_TIMEOUT_MS,
          env,
        },
        log,
        clock,
      );
      const runner = actions;
      let daemon: Daemon | undefined;
      const once = new OncePer(HOUR);
      const evaluator = new Evaluator(ruleSet, {
        journal,
        decisions,
        metrics,
        clock,
        onFailure: (f, seq) => {
          // cost_exceeded disables the hash until the next load, so it is logged each time it happens.
          if (f.result === "cost_exceeded" || once.take(`${f.rule}\u0000${f.result}`, clock()))
            log.error(
              { rule: f.rule, hash: f.hash, seq, result: f.result, detail: f.detail },
              "rule evaluation failed",
            );
        },
        dispatch: (committed) => {
          runner.dispatch(committed);
          metrics.holdsActive.set(Object.keys(daemon?.evaluatorState.holds ?? {}).length);
          daemon?.publish(committed);
        },
      });
      const writer = new JournalWriter(store.db, journal, {
        queueLimit: DEFAULT_QUEUE_LIMIT,
        batchSize: DEFAULT_BATCH_SIZE,
        clock,
        metrics,
        onCommitted: () => daemon?.scheduleEvaluation(),
        onError: (e) => log.error({ err: e.message }, "journal admission failed"),
      });
      const socketPath = options.socketPath ?? config.server.socket;
      daemon = new Daemon(
        config,
        store,
        socketPath,
        log,
        clock,
        metrics,
        writer,
        evaluator,
        actions,
        notifier,
        new JournalPruner(store.db, config.memory.rules.journalRetention),
        configPath,
        env,
        options.tickMs ?? MINUTE,
        loadRules,
        clones,
      );
      daemon.reportRuleSet(ruleSet, clones);
      await daemon.listen();
      daemon.startTimers();
      daemon.scheduleEvaluation();
      return daemon;
    } catch (e) {
      store.close();
      throw e;
    }
  }

  get evaluatorState() {
    return this.evaluator.state;
  }
  get metricsUrl(): string | undefined {
    return this.metricsAddress === undefined ? undefined : `http://${this.metricsAddress}/metrics`;
  }

  private reportRuleSet(ruleSet: RuleSet, clones: readonly PolicyCloneStatus[]): void {
    // The same states ListRules reports (REQ-9's shadow, REQ-6's cost-limit disable), counted.
    const counts = ruleStateCounts(ruleSet, this.evaluator.state);
    this.metrics.rulesLoaded.set({ state: "active" }, counts.active);
    this.metrics.rulesLoaded.set({ state: "shadow" }, counts.shadow);
    this.metrics.rulesLoaded.set({ state: "disabled" }, ruleSet.disabled.length + counts.disabled);
    for (const d of ruleSet.disabled)
      this.log.warn({ rule: d.name, file: d.file, reason: d.reason, detail: d.message }, "rule disabled");
    for (const name of ruleSet.unknownEnforced)
      this.log.warn({ rule: name }, "enforce names a rule that is not loaded");
    for (const c of clones)
      if (c.state !== "clean")
        this.log.warn({ repo: c.name, state: c.state, detail: c.detail }, "policy clone not served as is");
    this.log.info({ loaded: ruleSet.rules.length, disabled: ruleSet.disabled.length }, "rule set loaded");
  }

  /** The RPC server on the socket (and TCP when configured), with the producer credentials. */
  private async listen(): Promise<void> {
    const { server } = this.config;
    ensureControlToken(server.controlTokenFile);
    const producers = new Map<ProducerSource, string>();
    for (const [source, file] of Object.entries(server.producers))
      if (file !== undefined) producers.set(source as ProducerSource, file);
    const credentials = await loadCredentials({
      producers,
      controlTokenFile: server.controlTokenFile,
      ...(server.readTokenFile === undefined ? {} : { readTokenFile: server.readTokenFile }),
    });
    const rules = ruleService({
      evaluator: this.evaluator,
      db: this.store.db,
      metrics: this.metrics,
      clock: this.clock,
      startedAt: this.clock(),
      version: packageVersion(),
      supervisorStopConfigured: this.config.supervisor.stop !== undefined,
      clear: (harness, rule) => this.clear(harness, rule),
      reload: () => this.reload(),
      policySynced: (repo, commit) => this.policySynced(repo, commit),
      policyClones: () => this.clones,
    });
    this.rpc = await startRpcServer({
      socketPath: this.socketPath,
      ...(server.listen === undefined ? {} : { tcpListen: `${server.listen.host}:${server.listen.port}` }),
      credentials,
      admit: (source, events) => this.admit(source, events),
      routes: (router) =>
        router.service(RuleService, {
          ...rules,
          ...proposalService({
            db: this.store.db,
            clock: this.clock,
            policyRepos: () => this.loadedConfig.policyRepos,
            log: this.log,
          }),
          backtest: backtestMethod({
            runner: this.backtests,
            evaluator: this.evaluator,
            clock: this.clock,
            // The pruner keeps the retention the daemon started with; so does the check.
            retentionMs: () => this.config.memory.rules.journalRetention,
          }),
          watchEvents: watchEvents({ bus: this.watchers, log: this.log }),
        }),
    });
    if (server.metricsListen !== undefined)
      await this.serveMetrics(
        server.metricsListen.host,
        server.metricsListen.port,
        server.metricsTokenFile === undefined
          ? undefined
          : digestToken(await readTokenFile(server.metricsTokenFile)),
      );
  }

  /**
   * Hands a commit's events to the watchers. A failure to read them back costs the watchers a gap, not
   * the rules their actions.
   */
  private publish(committed: Committed): void {
    if (this.watchers.watchers === 0) return;
    try {
      this.watchers.publish(committedEvents(committed, this.records));
    } catch (e) {
      this.watchers.miss(eventCount(committed));
      this.log.error({ err: (e as Error).message }, "events not sent to watchers");
    }
  }

  /** `harness rules clear`: between two rows, like every change of state. */
  clear(harness: string, rule: string | undefined) {
    const holds = holdsOn(this.evaluator.state, harness).filter((h) => rule === undefined || h.rule === rule);
    this.evaluator.clear(harness, rule);
    this.metrics.holdsActive.set(Object.keys(this.evaluator.state.holds).length);
    return holds;
  }

  private async serveMetrics(host: string, port: number, token: TokenDigest | undefined): Promise<void> {
    const server = http.createServer((req, res) => {
      if (req.url !== "/metrics") {
        res.writeHead(404).end();
        return;
      }
      if (token !== undefined && !bearerMatches(req.headers.authorization, token)) {
        res.writeHead(401, { "WWW-Authenticate": 'Bearer realm="harness metrics"' }).end();
        return;
      }
      this.metrics.journalLag.set(this.evaluator.lagSeconds(this.clock()));
      this.metrics.registry.metrics().then(
        (text) => res.writeHead(200, { "Content-Type": this.metrics.registry.contentType }).end(text),
        (e: Error) => res.writeHead(500).end(e.message),
      );
    });
    await new Promise<void>((resolve) => {
      server.once("error", (e) => {
        // A busy metrics port must not keep the rules from running: say so and go on without it.
        this.log.warn({ host, port, err: e.message }, "metrics listener not started");
        resolve();
      });
      server.listen(port, host, () => {
        const a = server.address();
        this.metricsAddress = typeof a === "object" && a !== null ? `${host}:${a.port}` : `${host}:${port}`;
        this.metricsServer = server;
        resolve();
      });
    });
  }

  /** `JournalService.Append`: each event checked on its own, admitted through the bounded queue. */
  async admit(source: ProducerSource, events: readonly unknown[]): Promise<readonly AdmitResult[]> {
    const results: (AdmitResult | Promise<AdmitResult>)[] = events.map((wire) => {
      const parsed = parseWireEvent(wire);
      if (!parsed.ok) return { kind: "rejected", reason: parsed.problems.map((p) => p.message).join("; ") };
      const offered = this.writer.offer({ source, kind: parsed.kind, event: parsed.event });
      if (offered.kind === "dropped") return { kind: "dropped" };
      return offered.seq.then(
        (seq): AdmitResult => ({ kind: "admitted", seq }),
        (e: Error): AdmitResult => ({ kind: "rejected", reason: `not admitted: ${e.message}` }),
      );
    });
    return Promise.all(results);
  }

  scheduleEvaluation(): void {
    if (this.evalScheduled || this.closed) return;
    this.evalScheduled = true;
    setImmediate(() => {
      this.evalScheduled = false;
      if (this.closed) return;
      let n = 0;
      try {
        n = this.evaluator.step(EVAL_SLICE_MS);
      } catch (e) {
        this.log.error(
          { err: (e as Error).message, cursor: this.evaluator.cursor },
          "evaluation stalled; retrying",
        );
        this.timers.push(setTimeout(() => this.scheduleEvaluation(), 1_000));
        return;
      }
      this.metrics.journalLag.set(this.evaluator.lagSeconds(this.clock()));
      if (n > 0) this.scheduleEvaluation();
    });
  }

  private startTimers(): void {
    const scheduleTick = () => {
      const now = this.clock();
      // Aligned to the wall-clock minute, so ticks land once per minute whatever the start time.
      const wait = this.tickMs - (now % this.tickMs);
      this.tickTimer = setTimeout(() => {
        this.writer.offer({ source: "tick", kind: "tick", event: { type: "tick" } });
        scheduleTick();
      }, wait);
    };
    scheduleTick();
    this.prune();
    this.timers.push(setInterval(() => this.prune(), PRUNE_EVERY_MS));
    process.on("SIGHUP", this.onHup);
  }

  private readonly onHup = () => {
    this.reload().catch((e: Error) => this.log.error({ err: e.message }, "reload failed"));
  };

  /** Retention, a batch per turn of the event loop, so evaluation never waits long behind it. */
  private prune(): void {
    if (this.pruning) return;
    this.pruning = true;
    let deleted = 0;
    const step = () => {
      if (this.closed) return;
      try {
        const r = this.pruner.pruneBatch(this.clock());
        deleted += r.deleted;
        if (!r.done) {
          setImmediate(step);
          return;
        }
        const vacuum = () => {
          if (this.closed) return;
          if (this.pruner.vacuumStep() > 0) setImmediate(vacuum);
          else this.pruning = false;
        };
        if (deleted > 0) this.log.info({ rows: deleted }, "journal retention pruned rows");
        vacuum();
      } catch (e) {
        this.pruning = false;
        this.log.error({ err: (e as Error).message }, "journal retention failed");
      }
    };
    setImmediate(step);
  }

  /**
   * `harness reload` and SIGHUP: the config and rule set reread, swapped in between two rows. Reloads
   * run one at a time, so two never interleave their reads of the clones.
   */
  reload(): Promise<ReloadReport> {
    return this.queueReload(() => undefined);
  }

  /** A reload after the ones already queued; `admit` may refuse the config it reads, by throwing. */
  private queueReload(admit: (config: GlobalConfig) => void): Promise<ReloadReport> {
    const next = this.reloading.then(() => this.reloadNow(admit));
    this.reloading = next.catch(() => undefined);
    return next;
  }

  private async reloadNow(admit: (config: GlobalConfig) => void): Promise<ReloadReport> {
    const config = await readConfig(this.configPath, this.env, false);
    admit(config);
    const { ruleSet, clones } = await this.loadRules(config);
    // The evaluator runs whole rows between turns of the event loop, so this lands between two rows.
    const released = this.evaluator.swapRuleSet(ruleSet);
    this.clones = clones;
    this.loadedConfig = config;
    this.reportRuleSet(ruleSet, clones);
    return {
      loaded: ruleSet.rules.length,
      disabled: ruleSet.disabled.map((d) => ({ name: d.name, reason: d.reason, message: d.message })),
      unknownEnforced: ruleSet.unknownEnforced,
      released: released.length,
    };
  }

  /**
   * `harness policy sync` fast-forwarded a clone: the same reload, refused unless the config it reads
   * declares the repo (the sync command read the same file, but the daemon may be running an older one).
   * The check and the reload read the config once, so no edit can land between them.
   */
  policySynced(repo: string, commit: string): Promise<ReloadReport> {
    return this.queueReload((config) => {
      if (!config.policyRepos.some((r) => r.name === repo)) throw new UnknownPolicyRepoError(repo);
      this.log.info({ repo, commit }, "policy repo synced; reloading");
    });
  }

  /** Commits what is queued, stops listening, waits for running actions, closes the store. */
  async close(): Promise<void> {
    if (this.closed) return;
    process.off("SIGHUP", this.onHup);
    this.watchers.close();
    await this.rpc?.close();
    await this.backtests.close();
    this.writer.close();
    while (this.evaluator.step(1_000) > 0);
    this.closed = true;
    if (this.tickTimer !== undefined) clearTimeout(this.tickTimer);
    for (const t of this.timers) clearTimeout(t);
    await new Promise<void>((resolve) =>
      this.metricsServer === undefined ? resolve() : this.metricsServer.close(() => resolve()),
    );
    await this.notifier?.drain();
    await this.notifier?.close();
    await this.actions.drain();
    this.store.close();
  }
}

/** The starter pack and the policy clones' rules, unless a test supplies its own rule set. */
function ruleLoader(
  options: DaemonOptions,
  lastGood: LastGoodCommits,
  env: NodeJS.ProcessEnv,
  clock: () => number,
): (config: GlobalConfig) => Promise<RuleSetLoad> {
  const custom = options.loadRules;
  if (custom !== undefined) return async (config) => ({ ruleSet: custom(config), clones: [] });
  const policy = new PolicyRuleSource(lastGood, env, clock);
  return async (config) => {
    const { policy: loads, clones } = await policy.load(config.policyRepos);
    return { ruleSet: loadRuleSet(config, loads), clones };
  };
}

async function readConfig(file: string, env: NodeJS.ProcessEnv, required: boolean): Promise<GlobalConfig> {
  const r = await readGlobalConfig(file, env, { required });
  if (!r.ok) throw new DaemonStartError(`config ${file}:\n${r.errors.map(formatConfigError).join("\n")}`);
  return r.config;
}

/** The operator's control token: created on first start (0600, directory 0700), read by the CLI. */
function ensureControlToken(file: string): void {
  if (fs.existsSync(file)) return;
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600, flag: "wx" });
}
