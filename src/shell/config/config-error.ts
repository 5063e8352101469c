/**
 * A problem in a config file, as plain data so `harness config check --json` can print it as is. Config
 * loading never throws on bad input: it returns these.
 */
export type ConfigErrorCode =
  /** The file or directory could not be read (`harness config check` exits 2). */
  | "read"
  /** Not TOML (or not UTF-8). */
  | "syntax"
  | "unknown_key"
  | "missing_key"
  | "invalid_value"
  /** A project file or drop-in declares a table only the global config may hold. */
  | "global_only"
  /** A drop-in declares something other than `[harness.*]` tables. */
  | "drop_in_table";

export interface ConfigError {
  readonly code: ConfigErrorCode;
  readonly file: string;
  /** The table, dotted (`policy_repo.ops`); absent for a whole-file problem or a top-level key. */
  readonly table?: string;
  readonly key?: string;
  /** 1-based, where known. */
  readonly line?: number;
  readonly column?: number;
  readonly message: string;
}

/** Accepted, but worth saying: the same shape as an error. */
export interface ConfigWarning extends Omit<ConfigError, "code"> {
  /**
   * `public_listen`: reachable from the network; `deprecated`: accepted today, refused in a later release;
   * `plaintext`: a connection that leaves the machine without TLS.
   */
  readonly code: "public_listen" | "deprecated" | "plaintext";
}

/** `file:line:col: [table] key: message`, leaving out the parts that are unknown. */
export function formatConfigError(e: ConfigError | ConfigWarning): string {
  let where = e.file;
  if (e.line !== undefined) where += `:${e.line}${e.column === undefined ? "" : `:${e.column}`}`;
  const subject = [e.table === undefined ? undefined : `[${e.table}]`, e.key].filter((s) => s !== undefined);
  return subject.length === 0 ? `${where}: ${e.message}` : `${where}: ${subject.join(" ")}: ${e.message}`;
}

/** Sorted by position; stable, so problems without one keep the order they were found in, first. */
export const inFileOrder = <T extends ConfigError | ConfigWarning>(issues: readonly T[]): T[] =>
  [...issues].sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
