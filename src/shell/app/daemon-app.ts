/**
 * `harness daemon`, assembled: the composition root, and the only module that imports both `daemon/`
 * and `rpc/`. It reads the config, opens the store, loads the rule set, starts the daemon's loop, and
 * wires around it what reaches it: RuleService and JournalService on the socket (and TCP when
 * configured), WatchEvents fed from each commit, backtests in their workers, propose_rule for the
 * gateway in this process, and `/metrics`.
 */

import type * as http from "node:http";
import type * as net from "node:net";
import { hostname } from "node:os";
import type { ConnectRouter } from "@connectrpc/connect";
import { MINUTE } from "../../core/durations.js";
import type { RuleSet } from "../../core/rule-set.js";
import type { ProducerSource } from "../../core/sources.js";
import { type AdapterRegistry, AGENTS } from "../agents/adapters/registry.js";
import { HookLoopGuard } from "../agents/enforcement/loop-guard.js";
import { RunLife } from "../agents/enforcement/run-life.js";
import { StoreRunVerdicts } from "../agents/enforcement/run-verdict.js";
import { StaleRunCloser } from "../agents/enforcement/stale-runs.js";
import { StopSettler } from "../agents/enforcement/stop-settler.js";
import { type RunTelling, StoreRunTelling } from "../agents/enforcement/tell.js";
import { GitFactsReader } from "../agents/ingest/git-facts.js";
import { HookChallenge, withChallenge } from "../agents/ingest/hook-challenge.js";
import {
  type HookListener,
  hookRequestListener,
  startHookListener,
} from "../agents/ingest/hook-http-server.js";
import { HOOK_PATH_PREFIX } from "../agents/ingest/hook-limits.js";
import { HookIngest } from "../agents/ingest/ingest.js";
import { BacktestRunner } from "../backtest/backtest-runner.js";
import { formatConfigError } from "../config/config-error.js";
import { type GlobalConfig, readGlobalConfig } from "../config/global-config.js";
import { storePath as defaultStorePath, globalConfigPath } from "../config/paths.js";
import type { DecisionObserver } from "../daemon/actions.js";
import { Daemon, type DaemonDeps } from "../daemon/daemon.js";
import { EventBus } from "../daemon/event-bus.js";
import { ClosedRunTokens } from "../derive/closed-run-tokens.js";
import { UnknownPolicyRepoError } from "../errors.js";
import { gatewayCaller } from "../gateway/caller.js";
import { type GatewayServer, startGateway } from "../gateway/gateway-server.js";
import { MCP_UPGRADE, MCP_UPGRADE_PATH, mcpSocketPath } from "../gateway/protocol.js";
import { FileEdgeProjector } from "../graph/file-edges.js";
import type { AdmitOptions, AdmitResult } from "../journal/admit.js";
import { JournalQueryPool } from "../journal-query/journal-query-pool.js";
import { type RuleSetLoad, servedRuleSets } from "../policy/rule-source.js";
import { ProposalIntake } from "../proposals/propose-rule.js";
import { agentService } from "../rpc/agent-service.js";
import { agentStatusService } from "../rpc/agent-status-service.js";
import { backtestMethod } from "../rpc/backtest-service.js";
import {
  type CredentialFiles,
  CredentialHolder,
  digestToken,
  ensureControlToken,
  loadCredentials,
  readTokenFile,
  writeTokenFile,
} from "../rpc/credentials.js";
import { AgentStatusService } from "../rpc/gen/harness/v1/agent_status_pb.js";
import { AgentService } from "../rpc/gen/harness/v1/agents_pb.js";
import { JournalQueryService } from "../rpc/gen/harness/v1/journal_query_pb.js";
import { RuleService } from "../rpc/gen/harness/v1/rules_pb.js";
import { TokenService } from "../rpc/gen/harness/v1/tokens_pb.js";
import { IssuedTokens, mintText } from "../rpc/issued-tokens.js";
import { journalQueryService } from "../rpc/journal-query-service.js";
import { committedRecords } from "../rpc/messages.js";
import { proposalService } from "../rpc/proposal-service.js";
import { ruleService } from "../rpc/rule-service.js";
import { type RpcServer, startRpcServer } from "../rpc/server.js";
import { identifyCaller } from "../rpc/tiers.js";
import { tokenService } from "../rpc/token-service.js";
import { commitPublisher, type WatchEvent, watchEvents } from "../rpc/watch-events.js";
import type { OpenedStore } from "../store/open-store.js";
import type { StoreDoor } from "../store/store-door.js";
import { createLog, type Log } from "../support/log.js";
import { DaemonMetrics } from "../support/metrics.js";
import { portHolder } from "../support/port-holder.js";
import { loadTlsMaterial, type TlsFiles, TlsListeners, type TlsMaterial } from "../support/tls-listener.js";
import { packageVersion } from "../support/version.js";
import { startDecisionExport } from "../telemetry/decision-export.js";
import { DecisionExports } from "../telemetry/decision-exports.js";
import { OtlpHeadersError } from "../telemetry/otlp-headers.js";
import { type MetricsServer, serveMetrics } from "./metrics-server.js";
import { type DaemonStore, openDaemonStore, StoreOpeningError } from "./store-opening.js";

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
  /** The agents whose hooks the endpoint serves: the registry this build knows, unless a test adds one. */
  readonly agents?: AdapterRegistry;
}

export class DaemonStartError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "DaemonStartError";
  }
}

export class DaemonApp {
  private closed = false;

  private constructor(
    readonly daemon: Daemon,
    private readonly opened: DaemonStore,
    readonly socketPath: string,
    /** The global config file the daemon reads (it may not exist: defaults). */
    readonly configPath: string,
    readonly metrics: DaemonMetrics,
    /** propose_rule (REQ-15), for the gateway to call in this process: no RPC stores a proposal. */
    readonly proposals: ProposalIntake,
    /** What a hook-fed run's hook call may do: the ingest endpoint asks it on every call. */
    readonly runVerdicts: StoreRunVerdicts,
    /** The tokens this daemon issued (`harness token`); the gateway asks it who holds one. */
    readonly tokens: IssuedTokens,
    private readonly watchers: EventBus<WatchEvent>,
    private readonly rpc: RpcServer,
    private readonly backtests: BacktestRunner,
    private readonly journalReads: JournalQueryPool,
    private readonly metricsServer: MetricsServer | undefined,
    /** The MCP gateway (REQ-15) on its own socket beside the RPC socket. */
    readonly gateway: GatewayServer,
    /** `[agents] listen`, when it is on and bound. */
    private readonly hookListener: HookListener | undefined,
    /** `[server]` TLS, when configured: every TCP listener's certificate, swapped on reload. */
    private readonly tls: TlsListeners | undefined,
    /** `[otel]`: the decision export in force, replaced by a reload that changes it. */
    private readonly decisionExports: DecisionExports,
  ) {}

  static async start(options: DaemonOptions): Promise<DaemonApp> {
    const env = options.env;
    const clock = options.clock ?? Date.now;
    const log = options.log ?? createLog();
    const configPath = options.configPath ?? globalConfigPath(env);
    const config = await readConfig(configPath, env, options.configPath !== undefined);
    let store: DaemonStore;
    try {
      store = await openDaemonStore(
        config,
        options.storePath ?? defaultStorePath(env),
        `harness daemon (pid ${process.pid} on ${hostname()})`,
        clock,
      );
    } catch (e) {
      if (e instanceof StoreOpeningError) throw new DaemonStartError(e.message, { cause: e });
      throw e;
    }
    const { door } = store;
    /** What is listening so far, closed again if the start fails. */
    const opened: (() => Promise<void>)[] = [];
    try {
      const metrics = new DaemonMetrics();
      const loadRules = ruleLoader(options.loadRules, door, env, clock);
      const watchers = new EventBus<WatchEvent>();
      const publish = commitPublisher(watchers, committedRecords(door.ruleReads), log);
      const { server } = config;
      ensureControlToken(server.controlTokenFile);
      // Several daemons on one database each hold the tokens in force: a change here is told to the others.
      const tokens = await IssuedTokens.open(door.tokens, clock, () => store.leadership.tokensChanged());
      const rereadTokens = () =>
        tokens
          .reread()
          .catch((e: unknown) => log.error({ err: (e as Error).message }, "issued tokens not reread"));
      const credentials = new CredentialHolder(
        await loadCredentials(credentialFiles(config)),
        tokens.credentials,
      );
      tokens.onChange((issued) => credentials.replaceIssued(issued));
      const tls =
        config.server.tls === undefined ? undefined : new TlsListeners(tlsMaterial(config.server.tls));
      const decisionExports = new DecisionExports((otel, headers) =>
        startDecisionExport({
          config: otel,
          headers,
          metrics,
          serviceInstance: `${hostname()}:${process.pid}`,
          serviceVersion: packageVersion(),
        }),
      );
      const startExport = prepareOtel(decisionExports, config);
      const daemon = await Daemon.open({
        stores: door,
        leadership: store.leadership,
        configAtStart: config,
        rulesAtStart: await loadRules(config),
        // A file gone since start is an error unless the operator asked for defaults.
        readConfig: ({ defaults }) => readConfig(configPath, env, !defaults, true),
        loadRules,
        loadServed: async (c) => {
          const next = await loadCredentials(credentialFiles(c));
          const rotate = tlsRotation(tls, c, log);
          const otel = prepareOtel(decisionExports, c);
          return () => {
            credentials.replace(next);
            rotate?.();
            otel();
          };
        },
        log,
        clock,
        metrics,
        env,
        tickMs: options.tickMs ?? MINUTE,
        onCommitted: publish,
        runStops: door.agentRunStops,
        derivers: derivers(() => {
          store.leadership.tokensChanged();
          void rereadTokens();
        }, clock),
        tokensChangedElsewhere: () => void rereadTokens(),
      });
      metrics.watchLeader(() => daemon.leaderNow);
      const runLife = new RunLife({ sessions: door.agentSessionRuns, stops: door.agentRunStops, clock });
      const runVerdicts = new StoreRunVerdicts({
        reads: door.agentRuns,
        stops: door.agentRunStops,
        holds: () => daemon.view.state.holds,
        append: daemon.appendDerived,
        clock,
        life: runLife,
      });
      const runTelling = new StoreRunTelling({
        told: door.agentTold,
        reads: door.agentRuns,
        levels: () => daemon.configInForce.agents.tell,
        clock,
        firesCommitted: () => daemon.firesCommitted,
      });
      // Backtests run in workers over their own read-only connections to this daemon's store.
      const backtests = new BacktestRunner(store.location);
      // The pruner keeps the retention the daemon started with; so do the backtests' checks.
      const retentionMs = () => config.memory.rules.journalRetention;
      const proposals = new ProposalIntake({
        proposals: door.proposals,
        evidence: door.evidence,
        evaluator: daemon.view,
        backtests,
        metrics,
        log,
        clock,
        ruleMiners: () => daemon.configInForce.memory.ruleMiners,
        retentionMs,
      });
      const socketPath = options.socketPath ?? config.server.socket;
      const rules = rulesOf(daemon, door, metrics, clock, log);
      // Gateway and RPC journal scans run in workers over their own read-only connections.
      const queries = new JournalQueryPool(store.location, (reason) =>
        metrics.journalReadsRefused.inc({ reason }),
      );
      const backtest = backtestMethod({ runner: backtests, evaluator: daemon.view, clock, retentionMs });
      // Append's admission, and the hook endpoint's (a run's `closed` row revokes its gateway tokens
      // when it commits: `derive/closed-run-tokens.ts`).
      const admit = (
        source: ProducerSource,
        events: readonly unknown[],
        key?: string,
        options?: AdmitOptions,
      ) => daemon.admit(source, events, key, options);
      const hookRoutes = agentHookRoutes({
        daemon,
        admit,
        credentials,
        runVerdicts,
        runTelling,
        runLife,
        metrics,
        log,
        env,
        clock,
        agents: options.agents ?? AGENTS,
      });
      // Every listener the config names is bound or the daemon does not start: a squatter on a port
      // would be handed what is sent there. Those bound before a failure are closed again.
      const refusedConnection = (listener: string) => metrics.connectionsRefused.inc({ listener });
      // The gateway starts after the RPC server; an upgrade before then finds none and is closed.
      let adoptMcp: ((socket: net.Socket) => void) | undefined;
      const rpc = await startRpc(config, {
        socketPath,
        tls,
        adoptMcp: (socket) => (adoptMcp === undefined ? socket.destroy() : adoptMcp(socket)),
        hookRoutes,
        admit,
        refused: refusedConnection,
        services: {
          daemon,
          door,
          runVerdicts,
          rules,
          backtest,
          watchers,
          tokens,
          credentials,
          queries,
          clock,
          log,
        },
      });
      opened.push(() => rpc.close());
      const gateway = await startGateway(
        mcpSocketPath(socketPath),
        {
          identify: (token) => gatewayCaller(tokens.identify(token)),
          ruleMiners: () => daemon.configInForce.memory.ruleMiners,
          proposals,
          rules: { ...rules, backtest },
          journal: queries,
          clock,
          log,
        },
        {
          refused: (what) =>
            what === "session" ? metrics.gatewaySessionsRefused.inc() : refusedConnection("gateway"),
        },
      );
      opened.push(() => gateway.close());
      adoptMcp = (socket) => gateway.adopt(socket);
      const metricsServer = await startMetricsServer(config, metrics, tls, () =>
        daemon.view.lagSeconds(clock()),
      );
      if (metricsServer !== undefined) opened.push(() => metricsServer.close());
      const hookListener = await startAgentsListener(config, hookRoutes, tls, () =>
        refusedConnection("hooks_http"),
      );
      daemon.observeDecisions(decisionExports.observer);
      startExport();
      opened.push(() => decisionExports.shutdown());
      daemon.start();
      return new DaemonApp(
        daemon,
        store,
        socketPath,
        configPath,
        metrics,
        proposals,
        runVerdicts,
        tokens,
        watchers,
        rpc,
        backtests,
        queries,
        metricsServer,
        gateway,
        hookListener,
        tls,
        decisionExports,
      );
    } catch (e) {
      for (const close of opened.reverse()) await close().catch(() => undefined);
      await store.close();
      throw e;
    }
  }

  get config(): GlobalConfig {
    return this.daemon.configInForce;
  }
  /** The store's objects as the daemon's services reach them, each asynchronous. */
  get door(): StoreDoor {
    return this.opened.door;
  }
  /** The store as messages name it: the SQLite file, or `postgresql host/db`. */
  get storeLabel(): string {
    return this.opened.door.label;
  }
  /** The SQLite store, for tests and the demo that read it directly; none on PostgreSQL. */
  get store(): OpenedStore {
    const sqlite = this.opened.sqlite;
    if (sqlite === undefined) throw new Error(`the daemon's store is ${this.storeLabel}, not a SQLite file`);
    return sqlite;
  }
  get metricsUrl(): string | undefined {
    return this.metricsServer?.url;
  }
  /** Where Claude Code's http hooks post: `http(s)://host:port/hooks/claude-code`, when listening. */
  get hooksUrl(): string | undefined {
    return this.hookListener === undefined
      ? undefined
      : `${this.tls === undefined ? "http" : "https"}://${this.hookListener.address}${HOOK_PATH_PREFIX}`;
  }

  /** The RPC TCP listener's base URL (`https://…` under TLS), when there is one. */
  get rpcUrl(): string | undefined {
    const a = this.rpc.tcpAddress;
    return a === undefined ? undefined : `${this.tls === undefined ? "http" : "https"}://${a}`;
  }

  /** The SHA-256 fingerprint of the certificate the TCP listeners serve now, when TLS is on. */
  get tlsSha256(): string | undefined {
    return this.tls?.material.certSha256;
  }

  /** Every decision after its commit, as the OTLP export sees it (the bench measures with it). */
  observeDecisions(observer: DecisionObserver): void {
    this.daemon.observeDecisions(observer);
  }

  admit(source: ProducerSource, events: readonly unknown[]): Promise<readonly AdmitResult[]> {
    return this.daemon.admit(source, events);
  }

  reload(options: { readonly defaults?: boolean } = {}) {
    return this.daemon.reload(options);
  }

  /** Stops listening, commits what is queued, waits for running actions, closes the store. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.watchers.close();
    await this.gateway.close();
    await this.rpc.close();
    await this.hookListener?.close();
    await this.backtests.close();
    await this.journalReads.close();
    await this.daemon.close();
    // After the daemon's last decisions: what waits is sent, for a bounded time.
    await this.decisionExports.shutdown();
    await this.metricsServer?.close();
    await this.opened.close();
  }
}

/**
 * The rows the daemon derives from committed rows, each deriver with its own cursor. `revoked`: a closed
 * run's gateway tokens were revoked (committed); until the tokens are read again, they are still taken.
 */
function derivers(revoked: () => void, clock: () => number): DaemonDeps["derivers"] {
  return (inForce, decided) => [
    new HookLoopGuard(clock, (stop) => decided({ kind: "loop_stop", ...stop })),
    new StaleRunCloser(() => inForce().agents.staleAfter),
    new FileEdgeProjector(() => inForce().graph.projectFileEdges),
    new StopSettler(clock),
    new ClosedRunTokens(clock, revoked),
  ];
}

/** How a config becomes a rule set: the served rule sets (starter pack, policy clones), or a test's. */
function ruleLoader(
  custom: DaemonOptions["loadRules"],
  door: StoreDoor,
  env: NodeJS.ProcessEnv,
  clock: () => number,
): (config: GlobalConfig) => Promise<RuleSetLoad> {
  return custom === undefined
    ? servedRuleSets(door.lastGoodCommits, env, clock)
    : async (c) => ({ ruleSet: custom(c), clones: [] });
}

interface HookRouteDeps {
  readonly daemon: Daemon;
  /** Append's admission, which the hook endpoint's rows go through too. */
  readonly admit: (
    source: ProducerSource,
    events: readonly unknown[],
    key?: string,
    options?: AdmitOptions,
  ) => Promise<readonly AdmitResult[]>;
  readonly credentials: CredentialHolder;
  readonly runVerdicts: StoreRunVerdicts;
  readonly runTelling: RunTelling;
  readonly runLife: RunLife;
  readonly metrics: DaemonMetrics;
  readonly log: Log;
  readonly env: NodeJS.ProcessEnv;
  readonly clock: () => number;
  /** The agents whose hooks the endpoint serves. */
  readonly agents: AdapterRegistry;
}

/**
 * The agents' hook endpoint, with the nonce challenge beside it: answered on the socket and the TCP
 * listener alike, so a client can tell this daemon from a squatter.
 */
function agentHookRoutes(d: HookRouteDeps): http.RequestListener {
  const { daemon, credentials, metrics, log, clock } = d;
  const gitFacts = new GitFactsReader(d.env, { metrics });
  // Config-file producer credentials and `harness token`'s, bound to a harness or not.
  const identifyProducer = (token: string) => {
    const c = identifyCaller(`Bearer ${token}`, "socket", credentials.current, clock());
    if (!c.ok || c.caller.role !== "producer") return undefined;
    const { source, harness } = c.caller;
    return harness === undefined ? { source } : { source, harness };
  };
  const hooks = hookRequestListener(
    new HookIngest({
      admit: d.admit,
      identify: identifyProducer,
      verdicts: d.runVerdicts,
      tell: d.runTelling,
      runs: d.runLife,
      gitFacts: (cwd) => gitFacts.facts(cwd),
      verifyPatterns: () => daemon.configInForce.agents.verifyPatterns,
      onError: (what, e) => log.error({ err: (e as Error).message }, what),
      rejected: (source, reason) => daemon.rejected(source, reason),
      evaluated: (seq, budgetMs) => daemon.evaluated(seq, budgetMs),
      failMode: () => daemon.configInForce.agents.onUnreachable,
      onFailMode: (answer) => daemon.decided({ kind: "fail_mode", ...answer, at: clock() }),
    }),
    (e) => log.error({ err: (e as Error).message }, "agent hook call failed"),
    {
      isObserver: (token) => identifyProducer(token)?.source === "observer",
      unauthenticated: () => metrics.hookCallsUnauthenticated.inc(),
      version: packageVersion(),
    },
    d.agents,
  );
  return withChallenge(new HookChallenge(), hooks);
}

interface ServiceRouteDeps {
  readonly daemon: Daemon;
  readonly door: StoreDoor;
  readonly runVerdicts: StoreRunVerdicts;
  readonly rules: ReturnType<typeof ruleService>;
  readonly backtest: ReturnType<typeof backtestMethod>;
  readonly watchers: EventBus<WatchEvent>;
  readonly tokens: IssuedTokens;
  readonly credentials: CredentialHolder;
  readonly queries: JournalQueryPool;
  readonly clock: () => number;
  readonly log: Log;
}

/** The services the RPC server routes beside JournalService. */
function serviceRoutes(router: ConnectRouter, d: ServiceRouteDeps): void {
  const { daemon, door, credentials, log } = d;
  router
    .service(
      AgentService,
      agentService({
        peek: (harness, run) => d.runVerdicts.peek(harness, run),
        // The release is one conditional write: of two resumes side by side, one releases the stop.
        resume: async (run, by) => {
          const stop = await door.agentRunStops.get(run);
          if (stop === undefined) return undefined;
          const released = await door.agentRunStops.released(run, d.clock(), by);
          if (released)
            log.warn(
              { run, rule: stop.rule, fire_id: stop.fireId, ...(by === undefined ? {} : { by }) },
              "stopped run released",
            );
          return { harness: stop.harness, rule: stop.rule, fireId: stop.fireId, by: stop.by, released };
        },
      }),
    )
    .service(RuleService, {
      ...d.rules,
      ...proposalService({
        proposals: door.proposals,
        clock: d.clock,
        policyRepos: () => daemon.configInForce.policyRepos,
        log,
      }),
      backtest: d.backtest,
      watchEvents: watchEvents({ bus: d.watchers, log, credentials }),
    })
    .service(
      TokenService,
      tokenService({
        tokens: d.tokens,
        rotateControl: () => {
          const file = daemon.configInForce.server.controlTokenFile;
          const token = mintText();
          writeTokenFile(file, token, true);
          credentials.replaceControl(digestToken(token));
          log.info({ file }, "control token rotated");
          return file;
        },
      }),
    )
    .service(AgentStatusService, agentStatusService(door.agents))
    .service(JournalQueryService, journalQueryService(d.queries));
}

/** RuleService's handlers over this daemon: its view, its store, and the operations only it carries out. */
function rulesOf(
  daemon: Daemon,
  door: StoreDoor,
  metrics: DaemonMetrics,
  clock: () => number,
  log: Log,
): ReturnType<typeof ruleService> {
  return ruleService({
    evaluator: daemon.view,
    reads: door.ruleReads,
    metrics,
    clock,
    startedAt: clock(),
    version: packageVersion(),
    supervisorStopConfigured: () => daemon.configInForce.supervisor.stop !== undefined,
    // A follower refuses at once (thrown here, told to the caller); a clear that fails later is logged.
    clear: (harness, rule, by) =>
      void daemon
        .clear(harness, rule, by)
        .catch((e: Error) => log.error({ harness, rule, err: e.message }, "clearing a hold failed")),
    reload: (defaults, by) => daemon.reload({ defaults, ...(by === undefined ? {} : { by }) }),
    lastReloadFailure: () => daemon.lastReloadFailure,
    // Refused unless the config the reload reads declares the repo (the sync command read the same
    // file, but the daemon may be running an older one).
    policySynced: (repo, commit, by) =>
      daemon.queueReload(
        (c) => {
          if (!c.policyRepos.some((r) => r.name === repo)) throw new UnknownPolicyRepoError(repo);
          log.info({ repo, commit, ...(by === undefined ? {} : { by }) }, "policy repo synced; reloading");
        },
        false,
        by,
      ),
    policyClones: () => daemon.policyClones,
    needsRestart: () => daemon.needsRestart,
    storeWrite: () => ({ path: door.label, failure: daemon.storeWrite.current }),
    leader: () => daemon.leaderStatus(),
  });
}

/**
 * The RPC server on the socket (with the agents' hook routes beside it) and, when configured, on TCP.
 * A TCP listener that cannot be bound fails the start with its key and who holds the address.
 */
async function startRpc(
  config: GlobalConfig,
  d: {
    readonly socketPath: string;
    readonly tls: TlsListeners | undefined;
    readonly hookRoutes: http.RequestListener;
    readonly admit: HookRouteDeps["admit"];
    readonly refused: (listener: string) => void;
    readonly services: ServiceRouteDeps;
    /** A remote `harness mcp`'s connection, upgraded on the TCP listener, for the gateway. */
    readonly adoptMcp: (socket: net.Socket) => void;
  },
): Promise<RpcServer> {
  const { server } = config;
  const { daemon, credentials } = d.services;
  return startRpcServer({
    socketPath: d.socketPath,
    socketRoutes: { prefix: HOOK_PATH_PREFIX, handler: d.hookRoutes },
    ...(server.listen === undefined ? {} : { tcpListen: `${server.listen.host}:${server.listen.port}` }),
    ...(d.tls === undefined ? {} : { tls: d.tls }),
    credentials,
    admit: d.admit,
    refused: d.refused,
    rejected: (source, reason, events) => daemon.rejected(source, reason, events),
    routes: (router) => serviceRoutes(router, d.services),
    upgrade: { protocol: MCP_UPGRADE, path: MCP_UPGRADE_PATH, accept: d.adoptMcp },
  }).catch((e: unknown) => {
    // The socket's own errors say what they are; a TCP listener's gets its key and holder.
    const tcp = server.listen;
    throw tcp !== undefined && (e as Error).message.startsWith("cannot listen on TCP")
      ? listenError("[server] listen", hostPortText(tcp), e)
      : e;
  });
}

/** The agents' hook endpoint over http on `[agents] listen`, when configured. */
async function startAgentsListener(
  config: GlobalConfig,
  hookRoutes: http.RequestListener,
  tls: TlsListeners | undefined,
  refused: () => void,
): Promise<HookListener | undefined> {
  const listen = config.agents.listen;
  if (listen === undefined) return undefined;
  const serve = tls === undefined ? undefined : (l: http.RequestListener) => tls.httpsServer(l);
  return startHookListener(listen.host, listen.port, hookRoutes, refused, serve).catch(
    bindError("[agents] listen", hostPortText(listen)),
  );
}

/** `/metrics` on `[server] metrics_listen`, when configured; the journal's lag is read at each scrape. */
async function startMetricsServer(
  config: GlobalConfig,
  metrics: DaemonMetrics,
  tls: TlsListeners | undefined,
  lagSeconds: () => number,
): Promise<MetricsServer | undefined> {
  const { server } = config;
  if (server.metricsListen === undefined) return undefined;
  return serveMetrics({
    host: server.metricsListen.host,
    port: server.metricsListen.port,
    token:
      server.metricsTokenFile === undefined
        ? undefined
        : digestToken(await readTokenFile(server.metricsTokenFile)),
    metrics,
    ...(tls === undefined ? {} : { tls }),
    beforeScrape: () => metrics.journalLag.set(lagSeconds()),
  }).catch(bindError("[server] metrics_listen", hostPortText(server.metricsListen)));
}

/** The certificate, key and client CA `[server]` names, or the start error saying what is wrong. */
function tlsMaterial(files: TlsFiles): TlsMaterial {
  try {
    return loadTlsMaterial(files);
  } catch (e) {
    throw new DaemonStartError(`TLS: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * A reload's certificate swap, read now so a bad file fails the reload and leaves the one in force.
 * None when TLS was off at start, is off now, or mutual TLS was switched: those take a restart, and the
 * reload says so (`needsRestart`).
 */
function tlsRotation(tls: TlsListeners | undefined, c: GlobalConfig, log: Log): (() => void) | undefined {
  const files = c.server.tls;
  if (tls === undefined || files === undefined || tls.mutual !== (files.clientCaFile !== undefined))
    return undefined;
  const next = tlsMaterial(files);
  return () => {
    tls.rotate(next);
    log.info({ tls_sha256: next.certSha256 }, "TLS certificate reloaded");
  };
}

/** Turns a listener's failure to bind into the daemon's start error. */
const bindError = (key: string, address: string) => (e: unknown) => {
  throw listenError(key, address, e);
};

/** The credential files `[server]` names. */
function credentialFiles(config: GlobalConfig): CredentialFiles {
  const { server } = config;
  const producers = new Map<ProducerSource, string>();
  for (const [source, file] of Object.entries(server.producers))
    if (file !== undefined) producers.set(source as ProducerSource, file);
  return {
    producers,
    controlTokenFile: server.controlTokenFile,
    ...(server.readTokenFile === undefined ? {} : { readTokenFile: server.readTokenFile }),
  };
}

const hostPortText = (a: { host: string; port: number }): string =>
  a.host.includes(":") ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;

/** A listener the config names that could not be bound: the address, and who holds it when in use. */
function listenError(key: string, address: string, e: unknown): DaemonStartError {
  const cause = (e as { cause?: unknown }).cause ?? e;
  const code = (cause as NodeJS.ErrnoException).code;
  const port = Number(address.slice(address.lastIndexOf(":") + 1));
  const why =
    code === "EADDRINUSE"
      ? `the address is in use, held by ${portHolder(port)}; free it, or give ${key} another address`
      : (cause as Error).message;
  return new DaemonStartError(`cannot listen on ${key} ${address}: ${why}`, { cause: e });
}

/** The config, for a start or (`reload`) a reload, where a missing required file says how to go on. */
async function readConfig(
  file: string,
  env: NodeJS.ProcessEnv,
  required: boolean,
  reload = false,
): Promise<GlobalConfig> {
  const r = await readGlobalConfig(file, env, { required });
  if (!r.ok && !r.found && reload)
    throw new DaemonStartError(
      `config ${file} does not exist; the config in force stays (\`harness reload --defaults\` reloads on all defaults)`,
    );
  if (!r.ok) throw new DaemonStartError(`config ${file}:\n${r.errors.map(formatConfigError).join("\n")}`);
  return r.config;
}

/**
 * `[otel]`'s export, prepared for a start or a reload: a headers file that cannot be used fails it, and
 * what is in force stays.
 */
function prepareOtel(exports: DecisionExports, config: GlobalConfig): () => void {
  try {
    return exports.prepare(config.otel);
  } catch (e) {
    if (e instanceof OtlpHeadersError)
      throw new DaemonStartError(`[otel] headers_file ${e.message}`, { cause: e });
    throw e;
  }
}
