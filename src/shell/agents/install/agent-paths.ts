/**
 * Where `harness agents install` keeps its own state, under `$XDG_STATE_HOME/harness/agents/` (the
 * spool beside it is agents-ingest's): per harness the two producer token files, the record of installs
 * `harness doctor` and uninstall read, and the backups of the settings files it changed. And where each
 * agent reads its hooks: Claude Code from `.claude/settings.local.json` in a project (never the
 * committed `settings.json`) or `~/.claude/settings.json`; Codex from `.codex/hooks.json` in a project
 * or `$CODEX_HOME/hooks.json` (default `~/.codex`).
 */
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { stateHome } from "../../config/paths.js";
import type { AgentKind } from "./hook-entries.js";

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

/** Where install writes: a project directory, or the operator's own (user) settings. */
export type Scope = { readonly kind: "project"; readonly dir: string } | { readonly kind: "user" };

const home = (env: Env): string => (env.HOME !== undefined && isAbsolute(env.HOME) ? env.HOME : homedir());

/** The settings file an agent reads its hooks from, for a scope (a project dir is made absolute). */
export function settingsFilePath(agent: AgentKind, scope: Scope, env: Env, cwd: string): string {
  if (agent === "claude-code")
    return scope.kind === "user"
      ? join(home(env), ".claude", "settings.json")
      : join(resolve(cwd, scope.dir), ".claude", "settings.local.json");
  if (scope.kind === "project") return join(resolve(cwd, scope.dir), ".codex", "hooks.json");
  const codexHome = env.CODEX_HOME !== undefined && isAbsolute(env.CODEX_HOME) ? env.CODEX_HOME : undefined;
  return join(codexHome ?? join(home(env), ".codex"), "hooks.json");
}
