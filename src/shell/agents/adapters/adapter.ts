/**
 * One agent's record: what `harness agents install` writes for it, and the formats its hooks call the
 * daemon in (`../ingest/hook-format.ts`: ids, gate, mapping, answer). Each agent is one module of this
 * folder exporting its record; `registry.ts` lists them, and the ingest, the forwarder, the endpoint,
 * install, doctor and the CLI know an agent only through it.
 */
import { homedir } from "node:os";
import { isAbsolute } from "node:path";
import type { HookFormat } from "../ingest/hook-format.js";

export const HOOK_MODES = ["command", "http"] as const;
/** `command`: a hook process per call (`harness hook`), which spools; `http`: the agent posts itself. */
export type HookMode = (typeof HOOK_MODES)[number];

/** Where install writes: a project directory, or the operator's own (user) settings. */
export type Scope = { readonly kind: "project"; readonly dir: string } | { readonly kind: "user" };

export interface InstallTarget {
  /**
   * The events install hooks, each with the timeout in seconds the agent gives the hook: what the
   * mapping needs. The command hook's forwarder gives up on the daemon well within these.
   */
  readonly events: Readonly<Record<string, number>>;
  /** The hook modes the agent runs. */
  readonly modes: readonly HookMode[];
  /** The settings file the agent reads its hooks from, for a scope (a project dir made absolute). */
  readonly settingsFile: (scope: Scope, env: NodeJS.ProcessEnv, cwd: string) => string;
  /**
   * The settings file's shape: `hooks-by-event` is `{"hooks": {"<Event>": [{"hooks": [handler]}]}}`
   * beside other keys, the one install merges into (`../install/settings-merge.ts`).
   */
  readonly settingsShape: "hooks-by-event";
  /**
   * A program the agent runs with each call's JSON as its last argument (fire-and-forget), set by one
   * top-level key of a TOML file the operator keeps: install prints that line for the operator to add
   * and never edits the file, so nothing of theirs (comments, order, a program of their own) is lost.
   */
  readonly argvProgram?: {
    /** The hook format it calls in (`harness hook <hook>`). */
    readonly hook: string;
    readonly key: string;
    /** The TOML file, beside the settings file install wrote. */
    readonly file: (settingsFile: string) => string;
  };
  /** Why the agent may run none of the hooks, for doctor to say when a harness has sent nothing since install. */
  readonly silentWhy?: string;
  /** What the operator must do after an install before the hooks run. */
  readonly notes: readonly string[];
  /**
   * The agent's own fail-closed switch, where it has one: the field install writes on the gating
   * hooks of a harness installed `--fail closed`, so a hook that cannot start, times out or exits
   * with an unexpected code blocks the call (our forwarder covers only a daemon it cannot reach).
   */
  readonly failClosed?: {
    readonly field: Readonly<Record<string, unknown>>;
    /** The hooks it is written on: the ones whose answer can refuse a tool call. */
    readonly events: readonly string[];
    /** The agent's first version that honours it, and what an older one does with it. */
    readonly since: string;
    readonly before: string;
  };
}

export interface AgentAdapter {
  /** `harness agents install <name>`, and the `adapter` of the agent's rows. */
  readonly name: string;
  /** As the operator knows the agent, for messages. */
  readonly title: string;
  /** The formats its hooks call in; the first is the one install writes. */
  readonly hooks: readonly [HookFormat, ...HookFormat[]];
  readonly install: InstallTarget;
}

/** The operator's home directory: `$HOME` when it is absolute, else the system's. */
export const homeDir = (env: NodeJS.ProcessEnv): string =>
  env.HOME !== undefined && isAbsolute(env.HOME) ? env.HOME : homedir();
