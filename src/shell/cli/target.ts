/**
 * Where the CLI finds the daemon and its credentials: `--target https://host:port` (a remote daemon over
 * TLS, with `--ca-file` and, under mutual TLS, `--client-cert`/`--client-key`), else `--socket`, else the
 * global config's `[server] socket`, else the default; the control token from `[server] control_token_file`. A global
 * config that does not load still leaves the defaults usable, so `harness rules admission` keeps
 * answering while an operator fixes a typo.
 */
import { type GlobalConfig, readGlobalConfig } from "../config/global-config.js";
import { controlTokenPath, globalConfigPath, socketPath } from "../config/paths.js";
import type { RpcTarget } from "../rpc/client.js";
import { readTokenFile } from "../rpc/credentials.js";

/** `--target` and its TLS files: a daemon on another machine. */
export interface RemoteOptions {
  readonly target?: string | undefined;
  readonly caFile?: string | undefined;
  readonly clientCert?: string | undefined;
  readonly clientKey?: string | undefined;
}

export interface ClientTarget {
  readonly socketPath: string;
  /** How the rpc clients reach the daemon: its socket, or `--target`'s URL over TLS. */
  readonly rpc: RpcTarget;
  /** The socket path or the URL, for the messages that say where no daemon answered. */
  readonly where: string;
  /** Set for `--target`: a TCP caller has no socket's trust, so reads present the control token too. */
  readonly remote: boolean;
  readonly controlTokenFile: string;
  readonly config: GlobalConfig | undefined;
}

export class TargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TargetError";
  }
}

/** The longest `--target` URL. */
const MAX_TARGET = 2048;

export async function clientTarget(
  options: {
    readonly socket?: string | undefined;
    readonly config?: string | undefined;
    readonly env: NodeJS.ProcessEnv;
  } & RemoteOptions,
): Promise<ClientTarget> {
  const file = options.config ?? globalConfigPath(options.env);
  const r = await readGlobalConfig(file, options.env, { required: options.config !== undefined });
  const config = r.ok ? r.config : undefined;
  const socket = options.socket ?? config?.server.socket ?? socketPath(options.env);
  const base = {
    socketPath: socket,
    controlTokenFile: config?.server.controlTokenFile ?? controlTokenPath(options.env),
    config,
  };
  if (options.target === undefined)
    return { ...base, rpc: { socketPath: socket }, where: socket, remote: false };
  const url = remoteUrl(options.target);
  const tls = { caFile: options.caFile, certFile: options.clientCert, keyFile: options.clientKey };
  return { ...base, rpc: { baseUrl: url, tls }, where: url, remote: true };
}

/** `--target`: an https origin only, so a token never leaves for another machine in the clear. */
function remoteUrl(text: string): string {
  if (text.length > MAX_TARGET) throw new TargetError(`--target is longer than ${MAX_TARGET} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new TargetError(`--target ${JSON.stringify(text)} is not a URL (https://host:port)`);
  }
  if (url.protocol !== "https:")
    throw new TargetError(
      `--target ${JSON.stringify(text)}: a remote daemon is reached over https only (tokens must not cross the network in plaintext)`,
    );
  return url.origin;
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
