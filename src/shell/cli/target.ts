/**
 * Where the CLI finds the daemon and its credentials (decisions 0014, 0018): `--daemon https://host:port`
 * (a remote daemon over TLS, with `--ca-file` and, under mutual TLS, `--client-cert`/`--client-key`), else
 * `--socket`, else the global config's `[client] daemon` (with its files), else `[server] socket`, else
 * the default. A remote control call presents `[client] control_token_file` (this operator's own), else
 * `[server] control_token_file`; a remote read presents `[client] read_token_file` when set, else the
 * control token. A global config that does not load still leaves the defaults usable, so
 * `harness rules admission` keeps answering while an operator fixes a typo.
 */
import { daemonOrigin, type GlobalConfig, readGlobalConfig } from "../config/global-config.js";
import { controlTokenPath, globalConfigPath, socketPath } from "../config/paths.js";
import type { RpcTarget } from "../rpc/client.js";
import { readTokenFile } from "../rpc/credentials.js";

/** `--daemon` and its TLS files: a daemon on another machine. */
export interface RemoteOptions {
  readonly daemon?: string | undefined;
  readonly caFile?: string | undefined;
  readonly clientCert?: string | undefined;
  readonly clientKey?: string | undefined;
}

export interface ClientTarget {
  readonly socketPath: string;
  /** How the rpc clients reach the daemon: its socket, or `--daemon`'s URL over TLS. */
  readonly rpc: RpcTarget;
  /** The socket path or the URL, for the messages that say where no daemon answered. */
  readonly where: string;
  /** Set for a remote daemon: a TCP caller has no socket's trust, so reads present a token too. */
  readonly remote: boolean;
  readonly controlTokenFile: string;
  /** The read token a remote read presents (`[client] read_token_file`); unset: the control token. */
  readonly readTokenFile: string | undefined;
  readonly config: GlobalConfig | undefined;
}

export class TargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TargetError";
  }
}

export async function clientTarget(
  options: {
    readonly socket?: string | undefined;
    readonly config?: string | undefined;
    readonly env: NodeJS.ProcessEnv;
    /**
     * `false` for a command that acts on this machine's own daemon unless told otherwise (a local
     * agents install, uninstall, a miner's run): `[client] daemon` is then no default.
     */
    readonly clientDefault?: boolean;
  } & RemoteOptions,
): Promise<ClientTarget> {
  const file = options.config ?? globalConfigPath(options.env);
  const r = await readGlobalConfig(file, options.env, { required: options.config !== undefined });
  const config = r.ok ? r.config : undefined;
  const socket = options.socket ?? config?.server.socket ?? socketPath(options.env);
  const serverControl = config?.server.controlTokenFile ?? controlTokenPath(options.env);
  const local = {
    socketPath: socket,
    controlTokenFile: serverControl,
    readTokenFile: undefined,
    config,
  };
  // `--socket` names the local daemon outright; `[client] daemon` is only the default.
  const fromConfig =
    options.socket === undefined && options.clientDefault !== false ? config?.client : undefined;
  const daemon = options.daemon ?? fromConfig?.daemon;
  if (daemon === undefined) return { ...local, rpc: { socketPath: socket }, where: socket, remote: false };
  const checked = daemonOrigin(daemon);
  if ("problem" in checked) throw new TargetError(`--daemon ${checked.problem}`);
  const files = options.daemon === undefined ? fromConfig : config?.client;
  const tls = {
    caFile: options.caFile ?? files?.caFile,
    certFile: options.clientCert ?? files?.clientCertFile,
    keyFile: options.clientKey ?? files?.clientKeyFile,
  };
  return {
    ...local,
    controlTokenFile: config?.client.controlTokenFile ?? serverControl,
    readTokenFile: config?.client.readTokenFile,
    rpc: { baseUrl: checked.origin, tls },
    where: checked.origin,
    remote: true,
  };
}

/**
 * The token a remote read presents (the read token, else the control token); none on the socket, whose
 * reads need none.
 */
export async function readToken(
  target: ClientTarget,
  command: string,
): Promise<{ readonly token: string | undefined } | { readonly error: string }> {
  if (!target.remote) return { token: undefined };
  if (target.readTokenFile === undefined) return controlToken(target, command);
  try {
    return { token: await readTokenFile(target.readTokenFile) };
  } catch (e) {
    return {
      error: `harness ${command}: the read token ([client] read_token_file) is needed: ${(e as Error).message}`,
    };
  }
}

/** The operator's control token for a control-tier command, or the line saying why there is none. */
export async function controlToken(
  target: ClientTarget,
  command: string,
): Promise<{ readonly token: string } | { readonly error: string }> {
  try {
    return { token: await readTokenFile(target.controlTokenFile) };
  } catch (e) {
    return { error: `harness ${command}: the operator's control token is needed: ${(e as Error).message}` };
  }
}

/**
 * What to say when a call to `where` got no answer. Under TLS 1.3 a daemon that refuses the client's
 * certificate in the handshake can look to the client like a dropped connection, so a URL's line says so.
 */
export const noAnswer = (where: string): string =>
  where.startsWith("https://")
    ? `no answer from ${where}: the connection or its TLS handshake failed (under mutual TLS a client certificate from another CA, or none, is refused)`
    : `no daemon answers on ${where}`;
