/**
 * Default locations (XDG base directories), as functions of an environment so tests and the demo can
 * point everything at a temporary directory. Only the home directory and uid fallbacks consult the
 * process, and both can be passed in.
 */
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

type Env = NodeJS.ProcessEnv;

export interface System {
  readonly home: string;
  readonly uid: number;
}

const currentSystem = (): System => ({ home: homedir(), uid: process.getuid?.() ?? 0 });

// The XDG spec says a relative or empty value is to be ignored.
const xdg = (value: string | undefined): string | undefined =>
  value !== undefined && isAbsolute(value) ? value : undefined;

const home = (env: Env, system: () => System): string => xdg(env.HOME) ?? system().home;

export const configHome = (env: Env, system = currentSystem): string =>
  xdg(env.XDG_CONFIG_HOME) ?? join(home(env, system), ".config");

export const stateHome = (env: Env, system = currentSystem): string =>
  xdg(env.XDG_STATE_HOME) ?? join(home(env, system), ".local", "state");

export const runtimeDir = (env: Env, system = currentSystem): string =>
  xdg(env.XDG_RUNTIME_DIR) ?? `/tmp/harness-${system().uid}`;

export const globalConfigPath = (env: Env, system = currentSystem): string =>
  join(configHome(env, system), "harness", "harness.toml");

export const storePath = (env: Env, system = currentSystem): string =>
  join(stateHome(env, system), "harness", "harness.db");

/** The directory holding every policy clone. */
export const policyRoot = (env: Env, system = currentSystem): string =>
  join(stateHome(env, system), "harness", "policy");

export const policyClonePath = (env: Env, name: string, system = currentSystem): string =>
  join(policyRoot(env, system), name);

export const socketPath = (env: Env, system = currentSystem): string =>
  join(runtimeDir(env, system), "harness.sock");

export const controlTokenPath = (env: Env, system = currentSystem): string =>
  join(configHome(env, system), "harness", "control.token");
