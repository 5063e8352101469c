/**
 * Where `harness agents install` keeps its own state, under `$XDG_STATE_HOME/harness/agents/` (the
 * spool beside it is the forwarder's): per harness the two producer token files, the record of installs
 * `harness doctor` and uninstall read, and the backups of the settings files it changed. Where each
 * agent reads its hooks is its record's (`../adapters/`).
 */
import { join } from "node:path";
import { stateHome } from "../../config/paths.js";

type Env = NodeJS.ProcessEnv;

export type ProducerRole = "observer" | "ledger";
export const PRODUCER_ROLES: readonly ProducerRole[] = ["observer", "ledger"];

export const agentsStateDir = (env: Env): string => join(stateHome(env), "harness", "agents");

/** Names in the agents state directory that are not a harness's: a harness cannot be called these. */
export const RESERVED_NAMES: ReadonlySet<string> = new Set(["spool", "backups", "installs.json"]);

export const harnessTokenDir = (env: Env, harness: string): string => join(agentsStateDir(env), harness);

export const tokenFilePath = (env: Env, harness: string, role: ProducerRole): string =>
  join(harnessTokenDir(env, harness), `${role}.token`);

export const installRecordPath = (env: Env): string => join(agentsStateDir(env), "installs.json");

export const backupsDir = (env: Env): string => join(agentsStateDir(env), "backups");
