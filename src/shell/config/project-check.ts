/**
 * The global-only check of project files (SPEC-0029 REQ-1, REQ-10): a cloned repository must not choose
 * the rules that watch it, so a project `harness.toml` may not declare `[policy_repo.*]`, `[memory*]`,
 * `[server]`, `[store]` or the other global-only tables, and a `harness_d` drop-in may hold `[harness.*]`
 * tables only. `harness config check` runs it; the daemon reads no project file, so a supervisor that
 * does (`harness up`) must run it too.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { type ConfigError, inFileOrder } from "./config-error.js";
import { globalConfigPath } from "./paths.js";
import { decodeUtf8, isTable, parseTomlDocument, type TomlTable } from "./toml-document.js";
import type { TomlPositions } from "./toml-positions.js";

export interface ProjectCheck {
  /** The project `harness.toml` found walking up from the directory, if any. */
  readonly projectFile: string | undefined;
  /** The drop-ins checked, in name order. */
  readonly dropIns: readonly string[];
  readonly errors: readonly ConfigError[];
}

export interface ProjectCheckOptions {
  /** The global config's `[server] harness_d`; unset: no drop-ins. */
  readonly harnessD?: string | undefined;
  /** The global config in use, which the walk never takes for a project file (default: the XDG path). */
  readonly globalConfig?: string | undefined;
}

const PROJECT_FILE = "harness.toml";

export async function checkProject(
  dir: string,
  env: NodeJS.ProcessEnv,
  options: ProjectCheckOptions = {},
): Promise<ProjectCheck> {
  const start = resolve(dir);
  const errors: ConfigError[] = [];
  try {
    if (!(await stat(start)).isDirectory()) {
      errors.push({ code: "read", file: start, message: "not a directory" });
    }
  } catch (e) {
    errors.push({ code: "read", file: start, message: `cannot read: ${(e as Error).message}` });
  }
  const projectFile =
    errors.length > 0
      ? undefined
      : await findProjectFile(start, resolve(options.globalConfig ?? globalConfigPath(env)));
  if (projectFile !== undefined) errors.push(...(await checkFile(projectFile, "project")));

  const dropIns: string[] = [];
  if (options.harnessD !== undefined) {
    const listed = await listDropIns(options.harnessD);
    if ("error" in listed) errors.push(listed.error);
    else
      for (const file of listed.files) {
        dropIns.push(file);
        errors.push(...(await checkFile(file, "drop-in")));
      }
  }
  return { projectFile, dropIns, errors };
}

/** The nearest `harness.toml` at or above `start`, as git finds `.git`. */
async function findProjectFile(start: string, globalConfig: string): Promise<string | undefined> {
  for (let d = start; ; d = dirname(d)) {
    const candidate = join(d, PROJECT_FILE);
    if (candidate !== globalConfig && (await isFile(candidate))) return candidate;
    if (dirname(d) === d) return undefined;
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

async function listDropIns(dir: string): Promise<{ files: string[] } | { error: ConfigError }> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    const names = entries.filter((e) => e.isFile() && e.name.endsWith(".toml")).map((e) => e.name);
    return { files: names.sort().map((name) => join(dir, name)) };
  } catch (e) {
    // An absent drop-in directory holds no drop-ins, as an absent global config holds defaults.
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { files: [] };
    return {
      error: {
        code: "read",
        file: dir,
        message: `cannot read the harness_d directory: ${(e as Error).message}`,
      },
    };
  }
}

async function checkFile(file: string, role: "project" | "drop-in"): Promise<ConfigError[]> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(file);
  } catch (e) {
    return [{ code: "read", file, message: `cannot read: ${(e as Error).message}` }];
  }
  const decoded = decodeUtf8(bytes, file);
  if ("error" in decoded) return [decoded.error];
  const parsed = parseTomlDocument(decoded.text, file);
  if (!parsed.ok) return [parsed.error];
  return role === "project"
    ? inFileOrder(globalOnlyErrors(file, parsed.doc, parsed.positions))
    : dropInErrors(file, parsed.doc, parsed.positions);
}

/** The top-level keys under which every table is global-only. */
const GLOBAL_ONLY = [
  "policy_repo",
  "memory",
  "server",
  "agents",
  "graph",
  "otel",
  "client",
  "store",
] as const;

/** The global-only tables a document declares, each with the name the error gives it. */
function globalOnly(doc: TomlTable): { path: string[]; name: string }[] {
  const found: { path: string[]; name: string }[] = [];
  const entries = (key: string): [string, unknown][] => {
    const v = doc[key];
    return isTable(v) ? Object.entries(v) : [];
  };
  if (doc.policy_repo !== undefined) {
    const repos = entries("policy_repo");
    if (repos.length === 0) found.push({ path: ["policy_repo"], name: "[policy_repo.*]" });
    for (const [name] of repos) found.push({ path: ["policy_repo", name], name: "[policy_repo.*]" });
  }
  if (doc.memory !== undefined) {
    const memory = entries("memory");
    if (memory.length === 0 || memory.some(([, v]) => !isTable(v)))
      found.push({ path: ["memory"], name: "[memory]" });
    for (const [key, v] of memory) {
      if (isTable(v))
        found.push({ path: ["memory", key], name: key === "rules" ? "[memory.rules]" : "[memory.*]" });
    }
  }
  for (const key of ["server", "agents", "graph", "otel"] as const)
    if (doc[key] !== undefined) found.push({ path: [key], name: `[${key}]` });
  // A cloned repository must not point the operator's CLI, and its tokens, at another daemon.
  if (doc.client !== undefined) found.push({ path: ["client"], name: "[client]" });
  // Nor point the daemon's journal at a database of its choosing.
  if (doc.store !== undefined) found.push({ path: ["store"], name: "[store]" });
  return found;
}

function globalOnlyErrors(file: string, doc: TomlTable, positions: TomlPositions): ConfigError[] {
  return globalOnly(doc).map(({ path, name }) =>
    error("global_only", file, path, positions, `${name} is global-only: declare it in the global config`),
  );
}

function dropInErrors(file: string, doc: TomlTable, positions: TomlPositions): ConfigError[] {
  const errors = globalOnlyErrors(file, doc, positions);
  const onlyHarness = "a harness_d drop-in may hold [harness.*] tables only";
  for (const [key, value] of Object.entries(doc)) {
    if ((GLOBAL_ONLY as readonly string[]).includes(key)) continue;
    if (key !== "harness" || !isTable(value)) {
      errors.push(error("drop_in_table", file, [key], positions, onlyHarness));
      continue;
    }
    for (const [name, harness] of Object.entries(value)) {
      if (!isTable(harness))
        errors.push(error("drop_in_table", file, ["harness", name], positions, onlyHarness));
    }
  }
  return inFileOrder(errors);
}

function error(
  code: ConfigError["code"],
  file: string,
  path: readonly string[],
  positions: TomlPositions,
  message: string,
): ConfigError {
  const at = positions.of(path);
  return {
    code,
    file,
    table: path.join("."),
    ...(at === undefined ? {} : { line: at.line, column: at.column }),
    message,
  };
}
