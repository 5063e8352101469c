/**
 * The global config, `$XDG_CONFIG_HOME/harness/harness.toml` (SPEC-0029 REQ-1, REQ-2, REQ-10). One file
 * serves the engine and the supervisor: the engine strictly validates only its own tables (an unknown
 * key in them fails, named with file, table, key, line and column) and leaves every other table alone.
 * Bad input never throws: it comes back as errors, all of them, not only the first.
 */

import { readFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { DAY, formatDuration, HOUR, MINUTE, type Millis, parseDuration } from "../../core/durations.js";
import { parseEnforceEntry } from "../../core/enforce-entry.js";
import { LEVELS, type Level } from "../../core/rule-file.js";
import { isProducerSource, PRODUCER_SOURCES, type ProducerSource } from "../../core/sources.js";
import { MIN_JOURNAL_RETENTION } from "../../core/window.js";
import { type ConfigError, type ConfigErrorCode, type ConfigWarning, inFileOrder } from "./config-error.js";
import { branchProblem, forgeHost, remoteProblem } from "./git-refs.js";
import { controlTokenPath, socketPath } from "./paths.js";
import { isLoopbackStore, parseStoreUrl, type StoreAddress } from "./store-url.js";
import { decodeUtf8, isTable, parseTomlDocument, type TomlTable } from "./toml-document.js";
import type { TomlPositions } from "./toml-positions.js";

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/**
 * `[server] tls_cert_file`, `tls_key_file` and `client_ca_file` (decision 0014): TLS on every listener that
 * leaves the machine; with a client CA, mutual TLS.
 */
export interface TlsFilesConfig {
  readonly certFile: string;
  readonly keyFile: string;
  /** Set: clients must present a certificate from this CA (mutual TLS). */
  readonly clientCaFile?: string | undefined;
}

export interface PolicyRepoConfig {
  readonly name: string;
  readonly remote: string;
  /** Unset: the remote's default branch, as recorded when the clone was made. */
  readonly branch: string | undefined;
  readonly credentialFile: string | undefined;
  readonly reviewers: readonly string[];
  readonly labels: readonly string[];
  readonly public: boolean;
  /** `public` was not written: it counts as true (REQ-1), and a pull request body says so. */
  readonly publicUnset?: boolean | undefined;
  readonly branchPrefix: string;
  readonly maxProposalsPerWeek: number;
  /** The login the forge token acts as; when set, propose never asks the forge (`GET /user`). */
  readonly botLogin?: string | undefined;
  /** `Name <email>` of propose's commits; unset, `harness-rules <harness-rules@localhost>`. */
  readonly commitAuthor?: { readonly name: string; readonly email: string } | undefined;
  /** The forge the remote is on, declared; unset, it is found from the host (`forge/detect.ts`). */
  readonly forge?: ForgeKind | undefined;
}

/** The forges `harness rules propose` speaks to; `gitea` covers Forgejo (docs/decisions/0016). */
export const FORGE_KINDS = ["github", "gitea", "gitlab"] as const;
export type ForgeKind = (typeof FORGE_KINDS)[number];

/**
 * `[memory.miners.<name>]`: how `harness miner run <name>` runs a rule miner's scheduled one-shot
 * (docs/rule-miner.md). Global only, like `rule_miners`, which must list the name.
 */
export interface MinerConfig {
  readonly name: string;
  /** The one-shot's argv, run without a shell; `{mcp_config}` and `{run}` are filled in. */
  readonly command: readonly string[];
  /** How long the one-shot may run before it is killed and its run closed `timed_out`. */
  readonly timeout: Millis;
  /** A file the one-shot reads on its stdin (the prompt of `claude -p` or `codex exec -`). */
  readonly promptFile?: string | undefined;
}

export const DEFAULT_MINER_TIMEOUT = 30 * MINUTE;

export const OTEL_PROTOCOLS = ["http/protobuf", "http/json"] as const;
export type OtelProtocol = (typeof OTEL_PROTOCOLS)[number];

export interface OtelConfig {
  /** The OTLP/HTTP logs endpoint, e.g. `http://collector:4318/v1/logs`. */
  readonly endpoint: string;
  readonly protocol: OtelProtocol;
  /** A 0600 file of `Name: value` lines sent as headers; never the config itself (it holds secrets). */
  readonly headersFile: string | undefined;
}

/** An endpoint URL longer than this is not one. */
export const MAX_OTEL_ENDPOINT = 2048;

/** `[store] ssl_mode`, as libpq names them; `prefer` and `allow` (TLS only if it happens to work) are not offered. */
export const SSL_MODES = ["disable", "require", "verify-ca", "verify-full"] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** `[store]`: the store on PostgreSQL instead of the SQLite file (issue 34); global-only. */
export interface StoreConfig extends StoreAddress {
  /** A 0600 file holding the password; never the config itself (it gets shared). Unset: none is sent. */
  readonly passwordFile: string | undefined;
  /** Unset: `disable` on a socket or loopback, `verify-full` elsewhere. */
  readonly sslMode: SslMode;
  /** The CA the server's certificate is checked against; unset: Node's bundled CAs. */
  readonly caFile: string | undefined;
  /** This client's certificate and key, for a server that asks for one. */
  readonly certFile: string | undefined;
  readonly keyFile: string | undefined;
  /** The pool's most connections. */
  readonly poolMax: number;
  /**
   * How long the daemon waits for the database to answer one statement (ms) before it gives up on it:
   * a server that accepts connections but never answers (stopped, wedged) is then an error producers
   * are told to retry, not a wait without end.
   */
  readonly queryTimeout: number;
  /**
   * How long the leader's lease lasts unrenewed (ms; decision 0022): after a leader dies, another daemon
   * on the database takes over within it. Renewed every third of it.
   */
  readonly lease: number;
}

export const DEFAULT_POOL_MAX = 10;
export const DEFAULT_QUERY_TIMEOUT = 30_000;
export const DEFAULT_LEASE = 3_000;
/** A pool this large already asks for most of a default server's 100 connections. */
export const MAX_POOL_MAX = 100;

export interface GlobalConfig {
  readonly memory: {
    readonly ruleMiners: readonly string[];
    /** `[memory.miners.<name>]`, in name order. */
    readonly miners: readonly MinerConfig[];
    readonly rules: {
      readonly enforce: readonly string[];
      readonly disable: readonly string[];
      /** 0 turns shadowing off. */
      readonly shadowPeriod: Millis;
      readonly journalRetention: Millis;
    };
  };
  /** In name order. */
  readonly policyRepos: readonly PolicyRepoConfig[];
  readonly notify: {
    /** Unset: no hook, nothing is delivered. */
    readonly command: readonly string[] | undefined;
    readonly timeout: Millis;
    readonly cooldown: Millis;
    readonly events: readonly string[];
  };
  readonly supervisor: {
    /** Unset: stops are recorded undelivered. */
    readonly stop: readonly string[] | undefined;
  };
  /** `[graph]`: the daemon's own graph projection (`graph/file-edges.ts`); global-only. */
  readonly graph: {
    /** Derive `edited` edges and file collisions from hook-fed runs' rows. */
    readonly projectFileEdges: boolean;
  };
  readonly server: {
    readonly socket: string;
    /** The opt-in TCP listener; unset: none. */
    readonly listen: HostPort | undefined;
    /** Unset when `metrics_listen = ""`. */
    readonly metricsListen: HostPort | undefined;
    readonly readTokenFile: string | undefined;
    /** The bearer token `/metrics` requires when set; required for a non-loopback `metrics_listen`. */
    readonly metricsTokenFile: string | undefined;
    readonly controlTokenFile: string;
    readonly harnessD: string | undefined;
    /** Each producer source's credential file. */
    readonly producers: Readonly<Partial<Record<ProducerSource, string>>>;
    /** Unset: every TCP listener is plaintext, so loopback only. */
    readonly tls: TlsFilesConfig | undefined;
  };
  /** `[otel]`: decisions exported over OTLP/HTTP (telemetry/decision-export.ts); global-only. */
  readonly otel: OtelConfig | undefined;
  /**
   * `[client]`: the daemon the CLI reaches when `--daemon` is not given, and its files (decision 0018);
   * global-only. Every key unset: the local socket, as before.
   */
  readonly client: ClientConfig;
  /** `[store]`: unset, the SQLite file (the default). */
  readonly store: StoreConfig | undefined;
  /** `[agents]`: agent hooks. Global only. */
  readonly agents: {
    /** Claude Code's http hook endpoint, loopback only without `[server]` TLS; unset when `listen = ""`. */
    readonly listen: HostPort | undefined;
    /** What the command hook answers a PreToolUse when the daemon cannot be reached. */
    readonly onUnreachable: "allow" | "deny";
    /** Shell command substrings classified `verify`, beside the built-in test and build patterns. */
    readonly verifyPatterns: readonly string[];
    /** A hook-fed run that sends nothing for this long is closed `interrupted` (reason `stale`). */
    readonly staleAfter: Millis;
    /** The levels of active fires about a hook-fed run that its next hook answer tells it. */
    readonly tell: readonly Level[];
  };
}

export interface ClientConfig {
  /** A remote daemon's https origin; unset: the local socket. */
  readonly daemon: string | undefined;
  readonly caFile: string | undefined;
  readonly clientCertFile: string | undefined;
  readonly clientKeyFile: string | undefined;
  /** The read token a remote read presents; unset: the control token. */
  readonly readTokenFile: string | undefined;
  /** This operator's control token for a remote daemon; unset: `[server] control_token_file`. */
  readonly controlTokenFile: string | undefined;
}

/** The longest daemon URL (`[client] daemon`, `--daemon`). */
export const MAX_DAEMON_URL = 2048;

/**
 * A remote daemon's URL as its origin, or why it is not one: https only, so a token never leaves for
 * another machine in the clear.
 */
export function daemonOrigin(text: string): { readonly origin: string } | { readonly problem: string } {
  if (text.length > MAX_DAEMON_URL) return { problem: `longer than ${MAX_DAEMON_URL} characters` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: `${JSON.stringify(text)} is not a URL (https://host:port)` };
  }
  if (url.protocol !== "https:")
    return {
      problem: `${JSON.stringify(text)}: a remote daemon is reached over https only (tokens must not cross the network in plaintext)`,
    };
  return { origin: url.origin };
}

export type GlobalConfigResult =
  | { readonly ok: true; readonly config: GlobalConfig; readonly warnings: readonly ConfigWarning[] }
  | { readonly ok: false; readonly errors: readonly ConfigError[] };

export const DEFAULT_SHADOW_PERIOD: Millis = 7 * DAY;
export const DEFAULT_JOURNAL_RETENTION: Millis = 45 * DAY;
export const DEFAULT_NOTIFY_TIMEOUT: Millis = 15_000;
export const DEFAULT_NOTIFY_COOLDOWN: Millis = 15 * MINUTE;
export const DEFAULT_NOTIFY_EVENTS = ["rule_fired", "rule_hold", "rule_hold_released"] as const;
export const DEFAULT_METRICS_LISTEN: HostPort = { host: "127.0.0.1", port: 9464 };
export const DEFAULT_STALE_AFTER: Millis = 12 * HOUR;
export const DEFAULT_BRANCH_PREFIX = "harness-rules/";
export const DEFAULT_MAX_PROPOSALS_PER_WEEK = 3;
export const DEFAULT_AGENTS_LISTEN: HostPort = { host: "127.0.0.1", port: 7434 };
export const DEFAULT_AGENTS_TELL: readonly Level[] = ["annotate", "notify"];

const POLICY_REPO_NAME = /^[a-z][a-z0-9-]*$/;
const HOST_PORT = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/;

/**
 * Reads and loads `path`. A missing file is all defaults (`found: false`) unless `required`, as for an
 * explicit `--config`.
 */
export async function readGlobalConfig(
  path: string,
  env: NodeJS.ProcessEnv,
  options: { readonly required?: boolean } = {},
): Promise<GlobalConfigResult & { readonly found: boolean }> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === "ENOENT";
    if (missing && options.required !== true) return { ...loadGlobalConfig("", path, env), found: false };
    const error: ConfigError = { code: "read", file: path, message: `cannot read: ${(e as Error).message}` };
    return { ok: false, errors: [error], found: !missing };
  }
  const decoded = decodeUtf8(bytes, path);
  if ("error" in decoded) return { ok: false, errors: [decoded.error], found: true };
  return { ...loadGlobalConfig(decoded.text, path, env), found: true };
}

/**
 * Loads `text`, the content of `file`. Relative paths in the file resolve against the file's directory,
 * so the daemon's working directory does not change their meaning.
 */
export function loadGlobalConfig(text: string, file: string, env: NodeJS.ProcessEnv): GlobalConfigResult {
  const parsed = parseTomlDocument(text, file);
  if (!parsed.ok) return { ok: false, errors: [parsed.error] };
  const c = new Checker(file, parsed.positions);
  const root = new Table(c, [], parsed.doc);
  const memory = root.table("memory");
  const rules = memory?.table("rules");
  const notify = root.table("notify");
  const supervisor = root.table("supervisor");
  const server = root.table("server");
  const agents = root.table("agents");
  const graph = root.table("graph");
  const otel = root.table("otel");
  const client = root.table("client");
  const store = root.table("store");
  const producers = server?.table("producers");

  const config: GlobalConfig = {
    memory: {
      ruleMiners: memory?.strings("rule_miners") ?? [],
      miners: miners(memory, memory?.strings("rule_miners") ?? []),
      rules: {
        enforce: (rules === undefined ? undefined : enforceList(rules)) ?? [],
        disable: rules?.strings("disable") ?? [],
        shadowPeriod: rules?.duration("shadow_period", 0, Number.POSITIVE_INFINITY) ?? DEFAULT_SHADOW_PERIOD,
        journalRetention:
          rules?.duration("journal_retention", MIN_JOURNAL_RETENTION, Number.POSITIVE_INFINITY) ??
          DEFAULT_JOURNAL_RETENTION,
      },
    },
    policyRepos: policyRepos(root),
    notify: {
      command: notify?.argv("command"),
      timeout: notify?.duration("timeout", 1_000, 5 * MINUTE) ?? DEFAULT_NOTIFY_TIMEOUT,
      cooldown: notify?.duration("cooldown", 0, 24 * HOUR) ?? DEFAULT_NOTIFY_COOLDOWN,
      events: notify?.strings("events") ?? DEFAULT_NOTIFY_EVENTS,
    },
    supervisor: { stop: supervisor?.argv("stop") },
    graph: { projectFileEdges: graph?.bool("project_file_edges") ?? true },
    server: {
      socket: server?.path("socket") ?? socketPath(env),
      listen: server?.hostPort("listen"),
      metricsListen:
        server?.value("metrics_listen") === ""
          ? undefined
          : (server?.hostPort("metrics_listen") ?? DEFAULT_METRICS_LISTEN),
      readTokenFile: server?.path("read_token_file"),
      metricsTokenFile: server?.path("metrics_token_file"),
      controlTokenFile: server?.path("control_token_file") ?? controlTokenPath(env),
      harnessD: server?.path("harness_d"),
      producers: producerFiles(producers),
      tls: server === undefined ? undefined : tlsFiles(server),
    },
    otel: otel === undefined ? undefined : otelConfig(otel),
    client: clientConfig(client),
    store: store === undefined ? undefined : storeConfig(store),
    agents: {
      listen:
        agents?.value("listen") === "" ? undefined : (agents?.hostPort("listen") ?? DEFAULT_AGENTS_LISTEN),
      onUnreachable: agents?.oneOf("on_unreachable", ["allow", "deny"] as const) ?? "allow",
      verifyPatterns: agents?.strings("verify_patterns") ?? [],
      staleAfter: agents?.duration("stale_after", MINUTE, Number.POSITIVE_INFINITY) ?? DEFAULT_STALE_AFTER,
      tell: agents?.subsetOf("tell", LEVELS) ?? DEFAULT_AGENTS_TELL,
    },
  };
  // Other `[memory.*]` tables belong to other specs (SPEC-0028's `[memory.promotion]`), so only
  // `[memory]`'s own keys are held to the engine's list.
  memory?.rejectUnknown(["rule_miners", "rules"], { allowTables: true });
  rules?.rejectUnknown(["enforce", "disable", "shadow_period", "journal_retention"]);
  notify?.rejectUnknown(["command", "timeout", "cooldown", "events"]);
  supervisor?.rejectUnknown(["stop"]);
  graph?.rejectUnknown(["project_file_edges"]);
  otel?.rejectUnknown(["endpoint", "protocol", "headers_file"]);
  client?.rejectUnknown([
    "daemon",
    "ca_file",
    "client_cert_file",
    "client_key_file",
    "read_token_file",
    "control_token_file",
  ]);
  store?.rejectUnknown([
    "url",
    "password_file",
    "ssl_mode",
    "ca_file",
    "cert_file",
    "key_file",
    "pool_max",
    "query_timeout",
    "lease",
  ]);
  server?.rejectUnknown([
    "socket",
    "listen",
    "metrics_listen",
    "read_token_file",
    "metrics_token_file",
    "control_token_file",
    "harness_d",
    "producers",
    "tls_cert_file",
    "tls_key_file",
    "client_ca_file",
  ]);
  agents?.rejectUnknown(["listen", "on_unreachable", "verify_patterns", "stale_after", "tell"]);
  refusePlaintextOffLoopback(config, server, agents);
  return c.errors.length > 0
    ? { ok: false, errors: inFileOrder(c.errors) }
    : { ok: true, config, warnings: inFileOrder(c.warnings) };
}

/** The three TLS keys: a certificate and its key go together; a client CA needs them both. */
function tlsFiles(server: Table): TlsFilesConfig | undefined {
  const certFile = server.path("tls_cert_file");
  const keyFile = server.path("tls_key_file");
  const clientCaFile = server.path("client_ca_file");
  if (certFile !== undefined && keyFile === undefined)
    server.fail(
      "missing_key",
      "tls_key_file",
      "missing: tls_cert_file needs the certificate's key, tls_key_file",
    );
  if (keyFile !== undefined && certFile === undefined)
    server.fail("missing_key", "tls_cert_file", "missing: tls_key_file needs its certificate, tls_cert_file");
  if (clientCaFile !== undefined && (certFile === undefined || keyFile === undefined))
    server.fail(
      "invalid_value",
      "client_ca_file",
      "mutual TLS needs the server's own certificate too: set tls_cert_file and tls_key_file",
    );
  if (certFile === undefined || keyFile === undefined) return undefined;
  return { certFile, keyFile, ...(clientCaFile === undefined ? {} : { clientCaFile }) };
}

/**
 * Tokens and rows must not cross a network in plaintext: a TCP listener off loopback needs `[server]`
 * TLS (decision 0014). `/metrics` behind only its bearer token is still accepted off loopback, with a
 * deprecation warning (docs/fleet.md, "TLS between machines", says how to move to TLS).
 */
function refusePlaintextOffLoopback(
  config: GlobalConfig,
  server: Table | undefined,
  agents: Table | undefined,
): void {
  if (config.server.tls !== undefined) return;
  const plaintext = (host: string): string =>
    `${host} is not a loopback address: a plaintext listener there would carry tokens and rows in the clear; set [server] tls_cert_file and tls_key_file, or listen on loopback`;
  const listen = config.server.listen;
  if (listen !== undefined && !isLoopback(listen.host))
    server?.fail("invalid_value", "listen", plaintext(listen.host));
  const agentsListen = config.agents.listen;
  if (agentsListen !== undefined && !isLoopback(agentsListen.host))
    agents?.fail("invalid_value", "listen", plaintext(agentsListen.host));
  const metricsListen = config.server.metricsListen;
  if (metricsListen === undefined || isLoopback(metricsListen.host)) return;
  if (config.server.metricsTokenFile === undefined)
    server?.fail(
      "invalid_value",
      "metrics_listen",
      `${metricsListen.host} is not a loopback address: a metrics listener reachable from the network needs TLS ([server] tls_cert_file and tls_key_file) or, deprecated, [server] metrics_token_file`,
    );
  else
    server?.warn(
      "metrics_listen",
      `${metricsListen.host} is not a loopback address and /metrics is plaintext behind only its bearer token: deprecated, the token crosses the network in the clear; set [server] tls_cert_file and tls_key_file (docs/fleet.md, "TLS between machines")`,
      "deprecated",
    );
}

function clientConfig(t: Table | undefined): ClientConfig {
  const text = t?.string("daemon");
  const checked = text === undefined ? undefined : daemonOrigin(text);
  if (checked !== undefined && "problem" in checked) t?.fail("invalid_value", "daemon", checked.problem);
  const certFile = t?.path("client_cert_file");
  const keyFile = t?.path("client_key_file");
  if ((certFile === undefined) !== (keyFile === undefined))
    t?.fail(
      "missing_key",
      certFile === undefined ? "client_key_file" : "client_cert_file",
      "client_cert_file and client_key_file go together (the certificate and its key)",
    );
  return {
    daemon: checked !== undefined && "origin" in checked ? checked.origin : undefined,
    caFile: t?.path("ca_file"),
    clientCertFile: certFile,
    clientKeyFile: keyFile,
    readTokenFile: t?.path("read_token_file"),
    controlTokenFile: t?.path("control_token_file"),
  };
}

function storeConfig(t: Table): StoreConfig | undefined {
  const text = t.string("url");
  const address = text === undefined ? undefined : parseStoreUrl(text);
  if (address !== undefined && "problem" in address) t.fail("invalid_value", "url", address.problem);
  const sslMode = t.oneOf("ssl_mode", SSL_MODES);
  const caFile = t.path("ca_file");
  const certFile = t.path("cert_file");
  const keyFile = t.path("key_file");
  const passwordFile = t.path("password_file");
  const poolMax = t.int("pool_max", 1, MAX_POOL_MAX) ?? DEFAULT_POOL_MAX;
  const queryTimeout = t.duration("query_timeout", 1_000, 10 * MINUTE) ?? DEFAULT_QUERY_TIMEOUT;
  const lease = t.duration("lease", 1_000, MINUTE) ?? DEFAULT_LEASE;
  if ((certFile === undefined) !== (keyFile === undefined))
    t.fail(
      "missing_key",
      certFile === undefined ? "cert_file" : "key_file",
      "cert_file and key_file go together (the client certificate and its key)",
    );
  if (text === undefined)
    return t.fail("missing_key", "url", "[store] needs url, postgresql://USER@HOST/DATABASE");
  if (address === undefined || "problem" in address) return undefined;
  const mode = sslMode ?? (isLoopbackStore(address) ? "disable" : "verify-full");
  if (address.socket && mode !== "disable")
    return t.fail(
      "invalid_value",
      "ssl_mode",
      'a unix socket carries no TLS: leave ssl_mode unset or "disable"',
    );
  if (mode === "disable") {
    const tlsKey = [
      ["ca_file", caFile],
      ["cert_file", certFile],
    ].find(([, v]) => v !== undefined)?.[0];
    if (tlsKey !== undefined)
      return t.fail(
        "invalid_value",
        tlsKey,
        `needs TLS: set ssl_mode (it is "disable"${sslMode === undefined ? " by default here" : ""})`,
      );
  }
  // libpq's `require` quietly becomes verify-ca when a CA is at hand; here the mode says what is checked.
  if (mode === "require" && caFile !== undefined)
    return t.fail(
      "invalid_value",
      "ca_file",
      `ssl_mode "require" checks no certificate: use "verify-ca" or "verify-full" with a CA`,
    );
  if (mode === "disable" && !isLoopbackStore(address))
    t.warn(
      "ssl_mode",
      `${address.host} is not loopback: the store's rows cross the network in plaintext`,
      "plaintext",
    );
  return {
    ...address,
    passwordFile,
    sslMode: mode,
    caFile,
    certFile,
    keyFile,
    poolMax,
    queryTimeout,
    lease,
  };
}

function otelConfig(t: Table): OtelConfig | undefined {
  const endpoint = t.string("endpoint");
  const protocol = t.oneOf("protocol", OTEL_PROTOCOLS) ?? "http/protobuf";
  const headersFile = t.path("headers_file");
  if (endpoint === undefined)
    return t.fail("missing_key", "endpoint", "[otel] needs endpoint, an OTLP/HTTP URL");
  if (endpoint.length > MAX_OTEL_ENDPOINT)
    return t.fail("invalid_value", "endpoint", `longer than ${MAX_OTEL_ENDPOINT} characters`);
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return t.fail("invalid_value", "endpoint", "not a URL (want http://host:4318/v1/logs)");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return t.fail("invalid_value", "endpoint", `${url.protocol} is not http: or https: (OTLP/HTTP only)`);
  // Credentials in the URL would sit in the config and the logs: they belong in headers_file.
  if (url.username !== "" || url.password !== "")
    return t.fail("invalid_value", "endpoint", "credentials in the URL: put them in headers_file");
  return { endpoint, protocol, headersFile };
}

function policyRepos(root: Table): PolicyRepoConfig[] {
  const all = root.table("policy_repo");
  if (all === undefined) return [];
  const repos: PolicyRepoConfig[] = [];
  for (const name of all.keys()) {
    if (!POLICY_REPO_NAME.test(name)) {
      all.fail("invalid_value", name, `a policy repo name must match ^[a-z][a-z0-9-]*$`);
      continue;
    }
    const t = all.table(name);
    if (t === undefined) continue;
    if (t.value("remote") === undefined)
      t.fail("missing_key", "remote", "missing: every policy repo needs a remote");
    // The checks `harness policy sync` makes before it runs git, so config check refuses what sync would.
    const remote = t.gitArgument("remote");
    const remoteRefusal = remote === undefined ? undefined : remoteProblem(remote);
    if (remoteRefusal !== undefined)
      t.fail("invalid_value", "remote", `must be a git URL or an absolute path: ${remoteRefusal}`);
    const branch = t.gitArgument("branch");
    const branchRefusal = branch === undefined ? undefined : branchProblem(branch);
    if (branchRefusal !== undefined) t.fail("invalid_value", "branch", `not a branch name: ${branchRefusal}`);
    repos.push({
      name,
      remote: remote ?? "",
      branch,
      credentialFile: t.path("credential_file"),
      reviewers: t.strings("reviewers") ?? [],
      labels: t.strings("labels") ?? [],
      public: t.bool("public") ?? true,
      publicUnset: t.value("public") === undefined,
      branchPrefix: t.gitArgument("branch_prefix") ?? DEFAULT_BRANCH_PREFIX,
      maxProposalsPerWeek: t.int("max_proposals_per_week", 0) ?? DEFAULT_MAX_PROPOSALS_PER_WEEK,
      botLogin: forgeLogin(t, "bot_login"),
      commitAuthor: commitAuthor(t, "commit_author"),
      forge: declaredForge(t, remoteRefusal === undefined ? remote : undefined),
    });
    t.rejectUnknown([
      "remote",
      "branch",
      "credential_file",
      "reviewers",
      "labels",
      "public",
      "branch_prefix",
      "max_proposals_per_week",
      "bot_login",
      "commit_author",
      "forge",
    ]);
  }
  return repos.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The forges whose host says what they are: a declaration may not contradict them. */
const FORGE_HOSTS: Readonly<Record<string, ForgeKind>> = { "github.com": "github", "gitlab.com": "gitlab" };

/** `forge`: one of FORGE_KINDS, for a remote on a forge, agreeing with github.com and gitlab.com. */
function declaredForge(t: Table, remote: string | undefined): ForgeKind | undefined {
  const forge = t.oneOf("forge", FORGE_KINDS);
  if (forge === undefined || remote === undefined) return forge;
  const host = forgeHost(remote);
  if (host === undefined)
    return t.fail("invalid_value", "forge", `the remote is on no forge (https or ssh needed to declare one)`);
  const known = FORGE_HOSTS[host];
  if (known !== undefined && known !== forge)
    return t.fail(
      "invalid_value",
      "forge",
      `${host} is ${known}: declare forge = "${known}" or leave it unset`,
    );
  return forge;
}

/** A forge login: letters, digits, `-`, `_`, `.`, and a GitHub App's `[bot]` suffix. */
function forgeLogin(t: Table, key: string): string | undefined {
  const v = t.string(key);
  if (v === undefined) return undefined;
  if (/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}(\[bot\])?$/.test(v)) return v;
  t.fail(
    "invalid_value",
    key,
    "must be a forge login (letters, digits, '-', '_', '.', optionally ending in [bot])",
  );
  return undefined;
}

/** `Name <email>`, each part free of `<`, `>` and controls, as git takes an author. */
function commitAuthor(t: Table, key: string): { name: string; email: string } | undefined {
  const v = t.string(key);
  if (v === undefined) return undefined;
  const m = /^([^<>\p{Cc}]{1,100}?) <([^<>\s\p{Cc}]{1,200})>$/u.exec(v);
  if (m !== null) return { name: m[1] as string, email: m[2] as string };
  t.fail("invalid_value", key, 'must be "Name <email>"');
  return undefined;
}

function miners(memory: Table | undefined, ruleMiners: readonly string[]): MinerConfig[] {
  const all = memory?.table("miners");
  if (all === undefined) return [];
  const out: MinerConfig[] = [];
  for (const name of all.keys()) {
    const t = all.table(name);
    if (t === undefined) continue;
    if (!ruleMiners.includes(name))
      t.fail("invalid_value", undefined, `${name} is not listed in [memory] rule_miners`);
    const command = t.argv("command");
    if (command === undefined && t.value("command") === undefined)
      t.fail("missing_key", "command", "missing: a miner needs the command of its one-shot");
    t.rejectUnknown(["command", "timeout", "prompt_file"]);
    const promptFile = t.path("prompt_file");
    out.push({
      name,
      command: command ?? [],
      timeout: t.duration("timeout", MINUTE, 24 * HOUR) ?? DEFAULT_MINER_TIMEOUT,
      ...(promptFile === undefined ? {} : { promptFile }),
    });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function producerFiles(t: Table | undefined): Partial<Record<ProducerSource, string>> {
  const out: Partial<Record<ProducerSource, string>> = {};
  if (t === undefined) return out;
  for (const source of t.keys()) {
    if (!isProducerSource(source)) {
      t.fail(
        "unknown_key",
        source,
        `unknown producer source (expected one of: ${PRODUCER_SOURCES.join(", ")})`,
      );
      continue;
    }
    const file = t.path(source);
    if (file !== undefined) out[source] = file;
  }
  return out;
}

/**
 * `[memory.rules] enforce` (REQ-10): names, or `NAME@HASH` pins (`core/enforce-entry.ts`). A malformed
 * pin fails the load, so a typo never leaves a rule enforced by name when a pin was meant.
 */
function enforceList(rules: Table): readonly string[] | undefined {
  const list = rules.strings("enforce");
  const problems = (list ?? []).flatMap((text) => {
    const parsed = parseEnforceEntry(text);
    return parsed.ok ? [] : [parsed.message];
  });
  for (const message of problems) rules.fail("invalid_value", "enforce", message);
  return problems.length === 0 ? list : undefined;
}

/** Collects problems for one file. */
class Checker {
  readonly errors: ConfigError[] = [];
  readonly warnings: ConfigWarning[] = [];

  constructor(
    readonly file: string,
    private readonly positions: TomlPositions,
  ) {}

  issue(path: readonly string[], key: string | undefined) {
    const at = (key === undefined ? undefined : this.positions.of([...path, key])) ?? this.positions.of(path);
    return {
      file: this.file,
      ...(path.length === 0 ? {} : { table: path.join(".") }),
      ...(key === undefined ? {} : { key }),
      ...(at === undefined ? {} : { line: at.line, column: at.column }),
    };
  }
}

/** One table of the document: typed reads of its keys, each failing with the key's position. */
class Table {
  constructor(
    private readonly c: Checker,
    private readonly tablePath: readonly string[],
    private readonly entries: TomlTable,
  ) {}

  keys(): string[] {
    return Object.keys(this.entries);
  }

  value(key: string): unknown {
    return Object.hasOwn(this.entries, key) ? this.entries[key] : undefined;
  }

  fail(code: ConfigErrorCode, key: string | undefined, message: string): undefined {
    this.c.errors.push({ code, ...this.c.issue(this.tablePath, key), message });
    return undefined;
  }

  warn(key: string, message: string, code: ConfigWarning["code"] = "public_listen"): void {
    this.c.warnings.push({ code, ...this.c.issue(this.tablePath, key), message });
  }

  rejectUnknown(known: readonly string[], options: { readonly allowTables?: boolean } = {}): void {
    for (const key of this.keys()) {
      if (known.includes(key) || (options.allowTables === true && isTable(this.entries[key]))) continue;
      this.fail("unknown_key", key, `unknown key (expected one of: ${known.join(", ")})`);
    }
  }

  table(key: string): Table | undefined {
    const v = this.value(key);
    if (v === undefined) return undefined;
    if (!isTable(v)) return this.fail("invalid_value", key, `must be a table`);
    return new Table(this.c, [...this.tablePath, key], v);
  }

  string(key: string): string | undefined {
    const v = this.value(key);
    if (v === undefined) return undefined;
    if (typeof v !== "string" || v === "")
      return this.fail("invalid_value", key, `must be a non-empty string`);
    return v;
  }

  /** A string git receives as an argument: one starting with `-` would be read as an option. */
  gitArgument(key: string): string | undefined {
    const v = this.string(key);
    if (v?.startsWith("-")) return this.fail("invalid_value", key, `must not start with "-"`);
    return v;
  }

  path(key: string): string | undefined {
    const v = this.string(key);
    return v === undefined ? undefined : resolve(dirname(this.c.file), v);
  }

  strings(key: string): readonly string[] | undefined {
    const v = this.value(key);
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || !v.every((s) => typeof s === "string" && s !== "")) {
      return this.fail("invalid_value", key, `must be a list of non-empty strings`);
    }
    return v as string[];
  }

  /** A command run without a shell: argv[0] must be absolute, so PATH cannot choose the program. */
  argv(key: string): readonly string[] | undefined {
    const v = this.value(key);
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.length === 0 || !v.every((s) => typeof s === "string")) {
      return this.fail("invalid_value", key, `must be a non-empty list of strings (argv)`);
    }
    const argv = v as string[];
    if (!isAbsolute(argv[0] as string)) {
      return this.fail(
        "invalid_value",
        key,
        `argv[0] must be an absolute path, got ${JSON.stringify(argv[0])}`,
      );
    }
    return argv;
  }

  /** A list of distinct values from `values` (empty allowed). */
  subsetOf<T extends string>(key: string, values: readonly T[]): readonly T[] | undefined {
    const v = this.value(key);
    if (v === undefined) return undefined;
    const allowed = values as readonly string[];
    if (!Array.isArray(v) || !v.every((x) => typeof x === "string" && allowed.includes(x)))
      return this.fail(
        "invalid_value",
        key,
        `must be a list of ${values.map((x) => JSON.stringify(x)).join(", ")}`,
      );
    if (new Set(v).size !== v.length) return this.fail("invalid_value", key, `must not repeat a value`);
    return v as T[];
  }

  oneOf<T extends string>(key: string, values: readonly T[]): T | undefined {
    const v = this.value(key);
    if (v === undefined) return undefined;
    if (typeof v !== "string" || !(values as readonly string[]).includes(v))
      return this.fail(
        "invalid_value",
        key,
        `must be one of ${values.map((x) => JSON.stringify(x)).join(", ")}`,
      );
    return v as T;
  }

  bool(key: string): boolean | undefined {
    const v = this.value(key);
    if (v === undefined || typeof v === "boolean") return v;
    return this.fail("invalid_value", key, `must be true or false`);
  }

  int(key: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
    const v = this.value(key);
    if (v === undefined) return undefined;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > max) {
      return this.fail(
        "invalid_value",
        key,
        max === Number.MAX_SAFE_INTEGER
          ? `must be an integer of at least ${min}`
          : `must be an integer from ${min} to ${max}`,
      );
    }
    return v;
  }

  duration(key: string, min: Millis, max: Millis): Millis | undefined {
    const v = this.value(key);
    if (v === undefined) return undefined;
    const ms = typeof v === "string" ? parseDuration(v) : undefined;
    if (ms === undefined) {
      return this.fail(
        "invalid_value",
        key,
        `must be a duration string such as "90s", "15m", "1h30m" or "7d", got ${JSON.stringify(v)}`,
      );
    }
    if (ms < min || ms > max) {
      const range =
        max === Number.POSITIVE_INFINITY
          ? `at least ${formatDuration(min)}`
          : min === 0
            ? `at most ${formatDuration(max)}`
            : `from ${formatDuration(min)} to ${formatDuration(max)}`;
      return this.fail("invalid_value", key, `must be ${range}, got ${JSON.stringify(v)}`);
    }
    return ms;
  }

  hostPort(key: string): HostPort | undefined {
    const v = this.string(key);
    if (v === undefined) return undefined;
    const m = HOST_PORT.exec(v);
    const port = Number(m?.[3]);
    if (m === null || port > 65_535) {
      return this.fail(
        "invalid_value",
        key,
        `must be host:port (e.g. 127.0.0.1:9464), got ${JSON.stringify(v)}`,
      );
    }
    const host = (m[1] ?? m[2]) as string;
    if (!isLoopback(host)) this.warn(key, `${v} is not a loopback address: it is reachable from the network`);
    return { host, port };
  }
}

const isLoopback = (host: string): boolean => host === "localhost" || host === "::1" || /^127\./.test(host);
