/**
 * `harness agents install|uninstall AGENT --harness NAME [--project DIR | --user]
 * [--mode http|command] [--daemon https://HOST:PORT [--ca-file F] [--client-cert F --client-key F]]
 * [--dry-run] [--json]` (docs/agents.md; `--daemon`, a remote daemon, decision 0017): writes or removes the agent's hook
 * entries and the harness's producer tokens (`agents/install/install.ts` does the work), AGENT one of
 * the adapter registry's (`agents/adapters/registry.ts`). Exit 0 done
 * (also when nothing needed changing), 1 a settings file or the record of installs that cannot be used,
 * or, in http mode, another process answering on `[agents] listen` (nothing written), 2 usage or an
 * unreadable control token, 3 no daemon answers (or, in http mode, nothing listens on `[agents]
 * listen`), 4 the daemon refused.
 */

import { X509Certificate } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { HOOK_MODES, type HookMode } from "../../agents/adapters/adapter.js";
import { type AdapterRegistry, AGENTS } from "../../agents/adapters/registry.js";
import { tlsOptions } from "../../agents/forwarder/https-post.js";
import { HOOK_FAIL_MODES, isHookFailMode } from "../../agents/ingest/fail-mode.js";
import { HARNESS_NAME_RULE, isHarnessName } from "../../agents/ingest/harness-name.js";
import { probeRemote, proveHookEndpoint } from "../../agents/ingest/hook-challenge.js";
import type { RemoteDaemon } from "../../agents/ingest/hook-limits.js";
import { installRecordPath, RESERVED_NAMES } from "../../agents/install/agent-paths.js";
import {
  type HookFiles,
  type HookLauncher,
  hookLauncher,
  remoteLauncher,
} from "../../agents/install/hook-client.js";
import {
  AgentsUsageError,
  type InstallReport,
  install,
  type UninstallReport,
  uninstall,
} from "../../agents/install/install.js";
import { InstallRecordError, readInstallRecord } from "../../agents/install/install-record.js";
import type { TokenIssuer } from "../../agents/install/producer-tokens.js";
import { SettingsFileError } from "../../agents/install/settings-file.js";
import { DEFAULT_AGENTS_LISTEN, type GlobalConfig } from "../../config/global-config.js";
import { tokenClient } from "../../rpc/client.js";
import { TokenKind } from "../../rpc/gen/harness/v1/tokens_pb.js";
import { readTokenFileSync } from "../../support/token-file.js";
import { failed } from "../client.js";
import { type Common, EXIT, type Io } from "../io.js";
import { printed } from "../render/printable.js";
import { type ClientTarget, clientTarget, controlToken } from "../target.js";

export interface AgentsOptions extends Common {
  readonly harness?: string | undefined;
  readonly project?: string | undefined;
  readonly user?: boolean | undefined;
  readonly mode?: string | undefined;
  readonly fail?: string | undefined;
  readonly dryRun?: boolean | undefined;
  /** A one-time enrolment code's file: the harness's tokens come from spending it. */
  readonly enrolFile?: string | undefined;
  /** A remote daemon's hook endpoint, `https://host:port`, and the TLS files to reach it. */
  readonly daemon?: string | undefined;
  readonly caFile?: string | undefined;
  readonly clientCert?: string | undefined;
  readonly clientKey?: string | undefined;
  /** `--rpc`, with the same files: the daemon's RPC listener, where tokens are minted or an enrolment spent. */
  readonly rpc?: string | undefined;
}

/** The token service as the operator's control token reaches it, or the line saying why it cannot. */
export type IssuerFor = (
  target: ClientTarget,
  command: string,
) => Promise<{ readonly issuer: TokenIssuer } | { readonly error: string }>;

/** TokenService over the daemon's socket, with the operator's control token. */
export const daemonIssuer: IssuerFor = async (target, command) => {
  const control = await controlToken(target, command);
  if ("error" in control) return control;
  const client = tokenClient(target.rpc, control.token);
  return {
    issuer: {
      mint: async (source, harness, label) => {
        const res = await client.createToken({ kind: TokenKind.PRODUCER, source, harness, label });
        return { id: res.id, token: res.token };
      },
      revoke: async (ids) => (await client.revokeToken({ ids: [...ids] })).revoked.length,
      inForce: async (ids) => {
        const { tokens } = await client.listTokens({ includeRevoked: false });
        return new Set(tokens.map((t) => t.id).filter((id) => ids.includes(id)));
      },
    },
  };
};

/**
 * TokenService with a one-time enrolment code (`harness token create --enrol`): a machine's owner gets
 * the harness's two producer tokens without the operator's control token. The code is spent at the first
 * mint, for both; a machine enrolling holds no earlier tokens of the harness (`runAgents` checks), so
 * there is nothing to revoke or check.
 */
export const enrolmentIssuer =
  (codeFile: string): IssuerFor =>
  async (target) => {
    const read = readTokenFileSync(path.resolve(codeFile));
    if (!("token" in read)) return { error: `harness agents install: the enrolment code: ${read.problem}` };
    const client = tokenClient(target.rpc, read.token);
    let spent: ReturnType<typeof client.enrol> | undefined;
    return {
      issuer: {
        mint: async (source, harness) => {
          spent ??= client.enrol({ harness });
          const r = await spent;
          return source === "observer"
            ? { id: r.observerId, token: r.observerToken }
            : { id: r.ledgerId, token: r.ledgerToken };
        },
        revoke: async () => 0,
        inForce: async () => new Set<string>(),
      },
    };
  };

/**
 * `[agents] listen` as `host:port`, "" when the config turns it off; with no config readable, the
 * default the daemon uses.
 */
function agentsListen(config: GlobalConfig | undefined): string {
  const listen = config === undefined ? DEFAULT_AGENTS_LISTEN : config.agents.listen;
  if (listen === undefined) return "";
  return listen.host.includes(":") ? `[${listen.host}]:${listen.port}` : `${listen.host}:${listen.port}`;
}

/**
 * The files the command hook runs, absolute, so it runs from whatever directory the agent is in: the
 * fast paths (`hook-client.c` compiled at install, else `harness-hook.sh`: no Node start), and the
 * program and script they hand a call to when they cannot take it, the bundled `bin.cjs`, which runs
 * `harness hook` without loading the rest of the CLI (docs/decisions/0013-command-hook-fast-path.md).
 */
const hookFiles = (): HookFiles => ({
  node: process.execPath,
  bin: fileURLToPath(new URL("../bin.cjs", import.meta.url)),
  script: fileURLToPath(new URL("../../agents/forwarder/harness-hook.sh", import.meta.url)),
  clientSource: fileURLToPath(new URL("../../agents/forwarder/hook-client.c", import.meta.url)),
});

type Verb = "install" | "uninstall";

/**
 * Why http hooks must not be pointed at `listen`, or undefined when the endpoint there proves to be the
 * daemon on `socketPath` (`agents/ingest/hook-challenge.ts`): Claude Code would post the harness's tokens to
 * whatever answers.
 */
async function squatRefusal(
  listen: string,
  socketPath: string,
): Promise<{ readonly code: number; readonly message: string } | undefined> {
  // Off: install itself says http mode needs the endpoint.
  if (listen === "") return undefined;
  const proof = await proveHookEndpoint(listen, socketPath);
  switch (proof.kind) {
    case "this_daemon":
      return undefined;
    case "other":
      return {
        code: EXIT.failed,
        message: `the hook endpoint is not this daemon: ${proof.detail}; http hooks would hand it their tokens (use --mode command, or free the port and restart the daemon)`,
      };
    case "none":
      return {
        code: EXIT.unreachable,
        message: `${proof.detail}: start the daemon with [agents] listen = "${listen}" first, so install can check the endpoint is the daemon`,
      };
    case "no_daemon":
      return {
        code: EXIT.unreachable,
        message: `${proof.detail}: http mode needs the running daemon, to check the endpoint is the daemon`,
      };
  }
}

/** The longest `--daemon` URL. */
const MAX_DAEMON_URL = 2048;

/**
 * `--daemon` and its TLS files, checked before anything is written: an https origin (a token never
 * crosses the network in plaintext), a CA file that parses, a client key private to its owner. The
 * files are referenced by absolute path, not copied: a rotated certificate needs no new install.
 */
function remoteDaemon(options: AgentsOptions): RemoteDaemon | string | undefined {
  if (options.daemon === undefined) {
    if (options.rpc === undefined && (options.clientCert ?? options.clientKey) !== undefined)
      return "--client-cert and --client-key are for --daemon or --rpc";
    return undefined;
  }
  if (options.daemon.length > MAX_DAEMON_URL) return `--daemon is longer than ${MAX_DAEMON_URL} characters`;
  let url: URL;
  try {
    url = new URL(options.daemon);
  } catch {
    return `--daemon ${JSON.stringify(options.daemon)} is not a URL (https://host:port)`;
  }
  if (url.protocol !== "https:")
    return `--daemon ${JSON.stringify(options.daemon)}: a remote daemon is reached over https only (a token must never cross the network in plaintext)`;
  if (url.pathname !== "/" || url.search !== "" || url.username !== "" || url.password !== "")
    return `--daemon is the daemon's origin alone, https://host:port (its [agents] listen)`;
  if ((options.clientCert === undefined) !== (options.clientKey === undefined))
    return "--client-cert and --client-key go together";
  const abs = (f: string | undefined) => (f === undefined ? undefined : path.resolve(f));
  const daemon: RemoteDaemon = {
    url: url.origin,
    ...(options.caFile === undefined ? {} : { caFile: abs(options.caFile) as string }),
    ...(options.clientCert === undefined
      ? {}
      : { clientCert: abs(options.clientCert) as string, clientKey: abs(options.clientKey) as string }),
  };
  try {
    const tls = tlsOptions(daemon);
    if (tls.ca !== undefined) new X509Certificate(tls.ca as Buffer);
    if (tls.cert !== undefined) new X509Certificate(tls.cert as Buffer);
  } catch (e) {
    return `${(e as Error).message.replace(/^error:[^:]*:/, "")} (a PEM certificate is needed)`;
  }
  if (daemon.clientKey !== undefined && (fs.statSync(daemon.clientKey).mode & 0o077) !== 0)
    return `--client-key ${daemon.clientKey} is readable by others than its owner: chmod 600 it first`;
  return daemon;
}

const isDirectory = (dir: string): boolean => {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
};

export async function runAgents(
  verb: Verb,
  agentName: string | undefined,
  options: AgentsOptions,
  io: Io,
  issuerFor: IssuerFor = daemonIssuer,
  agents: AdapterRegistry = AGENTS,
): Promise<number> {
  const command = `agents ${verb}`;
  const usage = (message: string): number => {
    io.err(`harness ${command}: ${message}`);
    return EXIT.usage;
  };
  const agent = agentName === undefined ? undefined : agents.agent(agentName);
  if (agent === undefined) return usage(`the agent must be ${agents.agentNames.join(" or ")}`);
  const harness = options.harness;
  if (harness === undefined || harness === "") return usage("--harness NAME is required");
  if (!isHarnessName(harness)) return usage(`--harness must be ${HARNESS_NAME_RULE} (it names a directory)`);
  if (RESERVED_NAMES.has(harness))
    return usage(`--harness ${harness} is a name the agents state directory uses itself; choose another`);
  if (options.user === true && options.project !== undefined)
    return usage("give --project DIR or --user, not both");
  if (options.project === "") return usage("--project needs a directory");
  if (options.project !== undefined && !isDirectory(options.project))
    return usage(`--project ${options.project} is not a directory`);
  const mode = options.mode ?? "command";
  if (verb === "uninstall" && options.mode !== undefined)
    return usage("--mode is for install: uninstall removes our entries of either mode");
  if (!(HOOK_MODES as readonly string[]).includes(mode)) return usage("--mode must be command or http");
  if (verb === "uninstall" && options.fail !== undefined)
    return usage("--fail is for install: uninstall removes our entries of either fail mode");
  if (options.fail !== undefined && !isHookFailMode(options.fail))
    return usage(`--fail must be ${HOOK_FAIL_MODES.join(" or ")}`);
  const fail = isHookFailMode(options.fail) ? options.fail : undefined;
  if (options.enrolFile !== undefined) {
    if (verb !== "install") return usage("--enrol-file is for install");
    if (options.dryRun === true) return usage("--enrol-file spends its code: it cannot be a dry run");
    let held: ReturnType<typeof readInstallRecord>["tokens"][string] | undefined;
    try {
      held = readInstallRecord(installRecordPath(io.env)).tokens[harness];
    } catch {
      // An unreadable record: install itself refuses it, with its file and reason.
    }
    if (held !== undefined)
      return usage(
        `this machine already holds harness ${harness}'s tokens (${held.observer.id}, ${held.ledger.id}): an enrolment code is for a machine without them; install without --enrol-file`,
      );
  }
  const daemon = remoteDaemon(options);
  if (typeof daemon === "string") return usage(daemon);
  if (daemon !== undefined && verb === "uninstall")
    return usage("--daemon is for install: uninstall removes our entries whichever daemon they post to");
  const target = await clientTarget({
    socket: options.socket,
    config: options.config,
    env: io.env,
    daemon: options.rpc,
    // A local install mints on this machine's daemon: `[client] daemon` is a default only for hooks
    // that post to a remote one.
    clientDefault: daemon !== undefined,
    caFile: options.caFile,
    clientCert: options.clientCert,
    clientKey: options.clientKey,
  });
  const request = {
    agent,
    harness,
    scope:
      options.user === true
        ? ({ kind: "user" } as const)
        : ({ kind: "project", dir: options.project ?? "." } as const),
    dryRun: options.dryRun === true,
    env: io.env,
    cwd: process.cwd(),
    now: Date.now,
  };
  let issuer: TokenIssuer | undefined;
  const lazyIssuer: TokenIssuer = {
    // Only a change that mints or revokes needs the daemon and the control token.
    mint: async (...args) => (await needIssuer()).mint(...args),
    revoke: async (...args) => (await needIssuer()).revoke(...args),
    inForce: async (...args) => {
      try {
        return await (await needIssuer()).inForce(...args);
      } catch (e) {
        // A remote install's machine holds no control token to ask with (it enrolled): the token files
        // it holds are used as they are, and a revoked one shows as refused calls and in doctor.
        if (e instanceof AgentsUsageError && daemon !== undefined) return new Set(args[0]);
        throw e;
      }
    },
  };
  const needIssuer = async (): Promise<TokenIssuer> => {
    if (issuer !== undefined) return issuer;
    const got = await issuerFor(target, command);
    if ("error" in got) throw new AgentsUsageError(got.error);
    issuer = got.issuer;
    return issuer;
  };
  // A remote install's endpoint must answer through the TLS files given, before anything is written.
  if (verb === "install" && daemon !== undefined) {
    const probe = await probeRemote(daemon, tlsOptions(daemon));
    if (probe.kind !== "answers") {
      io.err(`harness ${command}: ${probe.detail}; nothing was written`);
      return probe.kind === "unreachable" ? EXIT.unreachable : EXIT.failed;
    }
  }
  // Under [server] TLS, install refuses http mode itself, before any probe of the endpoint.
  if (
    verb === "install" &&
    mode === "http" &&
    daemon === undefined &&
    (agent.install.modes as readonly string[]).includes(mode) &&
    target.config?.server.tls === undefined
  ) {
    const refused = await squatRefusal(agentsListen(target.config), target.socketPath);
    if (refused !== undefined) {
      io.err(`harness ${command}: ${refused.message}; nothing was written`);
      return refused.code;
    }
  }
  try {
    if (verb === "install") {
      // A remote call needs the Node forwarder: it computes the git facts (decision 0017).
      const hook =
        mode !== "command"
          ? undefined
          : daemon !== undefined
            ? remoteLauncher(hookFiles())
            : hookLauncher(io.env, hookFiles(), request.dryRun);
      const report = await install(
        {
          ...request,
          mode: mode as HookMode,
          launcher: hook?.launcher ?? [],
          socket: target.socketPath,
          listen: agentsListen(target.config),
          ...(target.config?.server.tls === undefined
            ? {}
            : { listenTls: { mutual: target.config.server.tls.clientCaFile !== undefined } }),
          ...(fail === undefined ? {} : { fail }),
          ...(daemon === undefined ? {} : { daemon }),
        },
        lazyIssuer,
      );
      printInstall(report, hook, options.json === true, io);
    } else printUninstall(await uninstall(request, lazyIssuer), options.json === true, io);
    return EXIT.ok;
  } catch (e) {
    if (e instanceof AgentsUsageError) {
      io.err(e.message.startsWith("harness ") ? e.message : `harness ${command}: ${e.message}`);
      return EXIT.usage;
    }
    if (e instanceof SettingsFileError || e instanceof InstallRecordError) {
      io.err(`harness ${command}: ${e.message}; nothing was written`);
      return EXIT.failed;
    }
    return failed(command, target.where, e, io);
  }
}

/** The fields install's and uninstall's JSON share. */
const reportJson = (r: InstallReport | UninstallReport) => ({
  agent: r.agent,
  harness: r.harness,
  scope: r.scope,
  file: r.file,
  dry_run: r.dryRun,
  changed: r.changed,
});

function printInstall(r: InstallReport, hook: HookLauncher | undefined, json: boolean, io: Io): void {
  if (json) {
    io.out(
      JSON.stringify({
        ...reportJson(r),
        mode: r.mode,
        daemon: r.daemon ?? null,
        client: hook?.kind ?? null,
        fail: r.fail ?? null,
        events: r.events,
        backup: r.backup ?? null,
        tokens: Object.fromEntries(
          Object.entries(r.tokens).map(([role, t]) => [
            role,
            { file: t.file, id: t.id ?? null, minted: t.minted },
          ]),
        ),
        notes: r.notes,
      }),
    );
    return;
  }
  const out = printed(io.out);
  const would = r.dryRun ? "would be " : "";
  out(
    r.changed
      ? `${r.agent} hooks for harness ${r.harness} ${would}written to ${r.file} (${r.mode} mode${failWords(r)}): ${r.events.join(", ")}`
      : `${r.agent} hooks for harness ${r.harness} already in ${r.file} (${r.mode} mode${failWords(r)}): nothing to change`,
  );
  if (r.backup !== undefined) out(`  backup of the old file: ${r.backup}`);
  if (r.daemon !== undefined) out(`  daemon: ${r.daemon} (https)`);
  if (hook !== undefined)
    out(
      hook.kind === "native"
        ? `  hook client: native, ${hook.launcher[0]} (hands the Node forwarder what it cannot take)`
        : hook.kind === "node"
          ? `  hook client: the Node forwarder (${hook.why})`
          : `  hook client: sh and curl (${hook.why}; a C compiler makes the faster native one)`,
    );
  for (const [role, t] of Object.entries(r.tokens))
    out(
      `  ${role} token: ${t.file} (${t.minted ? `${would}minted` : "kept"}${t.id === undefined ? "" : `, id ${t.id}`})`,
    );
  for (const n of r.notes) out(`  note: ${n}`);
}

const failWords = (r: InstallReport): string => (r.fail === undefined ? "" : `, failing ${r.fail}`);

function printUninstall(r: UninstallReport, json: boolean, io: Io): void {
  if (json) {
    io.out(
      JSON.stringify({
        ...reportJson(r),
        removed: r.removed,
        file_removed: r.fileRemoved,
        backup: r.backup ?? null,
        tokens: r.tokens,
      }),
    );
    return;
  }
  const out = printed(io.out);
  const would = r.dryRun ? "would be " : "";
  out(
    r.removed === 0
      ? `no ${r.agent} hooks of harness ${r.harness} in ${r.file}`
      : `${r.removed} ${r.agent} hook entr${r.removed === 1 ? "y" : "ies"} of harness ${r.harness} ${would}removed from ${r.file}${
          r.fileRemoved ? ` (the file install created ${would}removed)` : ""
        }`,
  );
  if (r.backup !== undefined) out(`  backup of the old file: ${r.backup}`);
  const t = r.tokens;
  if (t.state === "revoked")
    out(
      `  tokens ${would}revoked${t.ids.length === 0 ? " (none recorded)" : ` (${t.ids.join(", ")})`}${
        t.files.length === 0 ? "" : `, files ${would}removed: ${t.files.join(", ")}`
      }`,
    );
  else if (t.state === "kept")
    out(
      `  tokens kept: ${t.installs} other install${t.installs === 1 ? "" : "s"} of harness ${r.harness} use${t.installs === 1 ? "s" : ""} them`,
    );
}
