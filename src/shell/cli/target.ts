/**
 * Where the CLI finds the daemon and its credentials: `--socket`, else the global config's
 * `[server] socket`, else the default; the control token from `[server] control_token_file`. A global
 * config that does not load still leaves the defaults usable, so `harness rules admission` keeps
 * answering while an operator fixes a typo.
 */
import { type GlobalConfig, readGlobalConfig } from "../config/global-config.js";
import { controlTokenPath, globalConfigPath, socketPath } from "../config/paths.js";
import { readTokenFile } from "../rpc/credentials.js";

export interface ClientTarget {
  readonly socketPath: string;
  readonly controlTokenFile: string;
  readonly config: GlobalConfig | undefined;
}

export async function clientTarget(options: {
  readonly socket?: string | undefined;
  readonly config?: string | undefined;
  readonly env: NodeJS.ProcessEnv;
}): Promise<ClientTarget> {
  const file = options.config ?? globalConfigPath(options.env);
  const r = await readGlobalConfig(file, options.env, { required: options.config !== undefined });
  const config = r.ok ? r.config : undefined;
  return {
    socketPath: options.socket ?? config?.server.socket ?? socketPath(options.env),
    controlTokenFile: config?.server.controlTokenFile ?? controlTokenPath(options.env),
    config,
  };
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
