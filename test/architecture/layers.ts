/**
 * The architecture as data, read by `test/architecture.test.ts`: the layers of `src/`, the folders of
 * `src/shell` with the folders each may import, and the folders that alone may hold SQL text, a `Db`
 * handle or an agent adapter's name. ARCHITECTURE.md states the same: its layers line and each folder's
 * "Imports:" sentence must read as this table renders them (`doc-imports.ts`), so a change starts here.
 */

/** The layers, each a folder of `src/` importing only the ones before it. */
export const LAYERS = ["cel", "core", "shell"] as const;
export type Layer = (typeof LAYERS)[number];

/** Outside `src/cel`, CEL is imported through its one entry. */
export const CEL_ENTRY = "src/cel/index.ts";

/** A file of `src/core` that imports nothing: the loop guard counts calls and is not a rule (REQ-12). */
export const IMPORTS_NOTHING = ["src/core/loop-guard.ts"] as const;

/** An arrow from one folder of `src/shell` to another, with why when it is not plain. */
export interface Arrow {
  readonly to: string;
  /** Only `import type`: the folder knows the other's shapes and never calls it. */
  readonly typeOnly?: true;
  readonly why?: string;
}

/**
 * Each folder of `src/shell` (a plain file of it, like `errors.ts`, by its name without `.ts`; a folder
 * inside a listed one, like `agents/install`, when listed itself) and the folders it may import besides
 * `src/core` and `src/cel`, in ARCHITECTURE.md's order.
 */
export const SHELL_FOLDERS: Readonly<Record<string, readonly (string | Arrow)[]>> = {
  errors: [],
  support: [],
  config: [],
  store: [],
  "store/pg": [
    { to: "store", why: "the journal's columns and row type, the SQLite tables a copy reads" },
    { to: "config", why: "[store]'s settings" },
    { to: "support", why: "bounded and secret file reads" },
  ],
  journal: ["store", "support"],
  notify: [],
  policy: ["config", "store"],
  backtest: [
    "policy",
    "store",
    { to: "store/pg", why: "the journal streamed on PostgreSQL" },
    "config",
    "errors",
    "support",
  ],
  daemon: [
    "config",
    { to: "derive", why: "it runs the derivers over committed rows" },
    { to: "errors", why: "a follower refuses a clear: not_leader" },
    "journal",
    "notify",
    "policy",
    "store",
    "support",
  ],
  telemetry: ["config", { to: "daemon", typeOnly: true, why: "its decisions" }, "support"],
  proposals: ["backtest", { to: "daemon", typeOnly: true, why: "its view" }, "store", "support", "errors"],
  rpc: [
    { to: "daemon", typeOnly: true },
    "backtest",
    "proposals",
    { to: "journal", typeOnly: true, why: "Append's results" },
    { to: "journal-query", typeOnly: true, why: "what JournalQueryService serves" },
    "config",
    "store",
    "support",
    "errors",
  ],
  app: [
    "agents/adapters",
    "agents/enforcement",
    "agents/ingest",
    "backtest",
    "config",
    "daemon",
    "derive",
    "errors",
    "gateway",
    "graph",
    "journal",
    "journal-query",
    "policy",
    "proposals",
    "rpc",
    "store",
    { to: "store/pg", why: "the store on PostgreSQL, when [store] names it" },
    "support",
    "telemetry",
  ],
  lint: [{ to: "config", why: "TOML reading" }, "support"],
  forge: ["config", "lint", { to: "policy", why: "git" }, { to: "rpc", why: "client, wire types" }],
  "journal-query": [
    "store",
    { to: "store/pg", why: "the same reads on PostgreSQL" },
    { to: "config", why: "where the store is, for its workers" },
    "errors",
    "support",
  ],
  gateway: ["rpc", "proposals", "journal-query", "support", "errors"],
  miner: [{ to: "rpc", why: "clients" }, { to: "gateway", why: "its protocol" }, "config"],
  derive: ["store"],
  "agents/adapters": [{ to: "agents/ingest", why: "the vocabulary and the mapping's parts" }],
  "agents/ingest": [
    { to: "agents/enforcement", why: "the verdict's and the telling's interfaces" },
    { to: "journal", typeOnly: true, why: "admission's" },
    { to: "policy", why: "its git wrapper, for git facts" },
    { to: "support", why: "versions that meet" },
  ],
  "agents/forwarder": [
    { to: "agents/adapters", why: "the registry" },
    { to: "agents/ingest", why: "the wire" },
    { to: "config", why: "paths" },
    "support",
  ],
  "agents/enforcement": [
    "derive",
    { to: "proposals", why: "the untrusted-data wrapper, for what a run is told" },
    "store",
    { to: "support", why: "failpoints, turns" },
  ],
  graph: ["derive"],
  supervisor: [{ to: "rpc", why: "clients" }],
  demo: [
    { to: "app", why: "the demo's daemon" },
    "supervisor",
    "rpc",
    "store",
    "support",
    { to: "gateway", why: "its protocol, for the scripted miner" },
  ],
  tui: [{ to: "rpc", why: "clients and messages" }],
  "agents/install": [
    "agents/adapters",
    { to: "agents/ingest", why: "the wire's path and the harness name" },
    "config",
    { to: "policy", why: "its git wrapper" },
    { to: "rpc", why: "token files" },
    "support",
  ],
  cli: [
    { to: "agents/adapters", why: "the registry" },
    { to: "agents/forwarder", why: "the command hook and its spool" },
    { to: "agents/ingest", why: "the hook challenge, the harness name" },
    "agents/install",
    { to: "app", why: "`harness daemon`" },
    "backtest",
    "config",
    "demo",
    "errors",
    "forge",
    { to: "gateway", why: "its protocol" },
    { to: "journal", why: "the events' wire format" },
    "lint",
    "miner",
    "policy",
    "rpc",
    "store",
    { to: "store/pg", why: "doctor's store row, `harness store copy`" },
    { to: "supervisor", why: "`harness demo`" },
    "support",
    "tui",
  ],
};

/** The CLI's commands, one module each: none imports another; what two share is a helper of `cli/`. */
export const COMMANDS_HOME = "src/shell/cli/commands/";

/** Where SQL text may be written: the store owns every statement. */
export const SQL_HOME = "src/shell/store/";

/** Where a `Db` handle may be named: the store, and the composition root that opens it. */
export const DB_HOMES = ["src/shell/store/", "src/shell/app/"] as const;

/** Where an agent adapter's name may be written: its own module; everything else asks the registry. */
export const ADAPTERS_HOME = "src/shell/agents/adapters/";
export const ADAPTER_NAMES = ["claude-code", "codex"] as const;

export const arrowOf = (a: string | Arrow): Arrow => (typeof a === "string" ? { to: a } : a);
