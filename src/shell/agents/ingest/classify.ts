/**
 * A tool call's `action` and the file paths it names, agreeing with the Go supervisor's classifier
 * (agent-trace's `classify/action.go` and `classify/shell.go`) on the same inputs: tool names map to
 * read, edit, search; a shell command is verify when it holds a test or build pattern, search when every
 * segment of it only lists or searches, read when every segment only pages a file, else exec; anything
 * else (WebFetch, Task, MCP tools) is other. Pure: paths come out as the input wrote them, and
 * `repo-paths.ts` makes them repo-relative.
 *
 * Linear in its input by construction: the only patterns are single-character classes, a
 * split on runs of whitespace and an anchored one (`test/architecture/ingest-patterns.test.ts` holds the
 * reviewed list); quotes and patch headers are found by plain scans; a command past `MAX_COMMAND` is
 * not parsed, and at most `MAX_RAW_PATHS` paths of at most `MAX_RAW_PATH` are looked at
 * (`payload-bounds.ts`).
 */
import { MAX_COMMAND, MAX_RAW_PATH, MAX_RAW_PATHS } from "./payload-bounds.js";

/** A tool call's class, the `action` field of its row. */
export type ToolClass = "search" | "read" | "edit" | "exec" | "verify" | "other";

/** The supervisor's built-in test and build patterns, matched as lower-case substrings. */
export const DEFAULT_VERIFY_PATTERNS: readonly string[] = [
  "go test",
  "go vet",
  "npm test",
  "npm run build",
  "pnpm test",
  "pnpm build",
  "pytest",
  "make test",
  "cargo test",
  "swift test",
];

const READ_TOOLS = new Set(["Read", "read", "view"]);
const EDIT_TOOLS = new Set([
  "Write",
  "Edit",
  "MultiEdit",
  "NotebookEdit",
  "apply_patch",
  "write",
  "edit",
  "multiedit",
]);
const SEARCH_TOOLS = new Set(["Grep", "Glob", "LS", "view_image", "grep", "find", "ls", "glob"]);
const SHELL_TOOLS = new Set(["Bash", "bash", "shell", "local_shell", "exec_command"]);

const SEARCH_PROGRAMS = new Set(["grep", "rg", "ag", "find", "fd", "ls", "tree"]);
const READ_ONLY_PROGRAMS = new Set([
  "cd",
  "cat",
  "head",
  "tail",
  "wc",
  "sort",
  "uniq",
  "cut",
  "awk",
  "echo",
  "which",
  "file",
  "stat",
  "du",
  "pwd",
  "dirname",
  "basename",
  "true",
]);
const READ_PROGRAMS = new Set(["cat", "head", "tail", "nl", "sed"]);
const ENV_ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

type Input = Readonly<Record<string, unknown>>;

const asInput = (input: unknown): Input =>
  typeof input === "object" && input !== null && !Array.isArray(input) ? (input as Input) : {};

function firstString(input: Input, ...keys: string[]): string {
  for (const key of keys) {
    const v = input[key];
    if (typeof v === "string") return v;
  }
  return "";
}

/**
 * A shell call's command text. Codex's older `shell` tool passes argv (`["bash", "-lc", "script"]`):
 * the script is the command then.
 */
export function shellCommand(input: unknown): string {
  const i = asInput(input);
  const command = i.command ?? i.cmd;
  if (typeof command === "string") return command;
  if (Array.isArray(command) && command.every((a) => typeof a === "string")) {
    const argv = command as string[];
    const script = argv.findIndex((a) => a === "-c" || a === "-lc");
    return script >= 0 && script + 1 < argv.length ? (argv[script + 1] as string) : argv.join(" ");
  }
  return firstString(i, "code", "chars", "script");
}

const STDERR_REDIRECTS = ["2>&1", "2>/dev/null", ">/dev/null", "> /dev/null"];

/** The command's pipeline and list segments, each as its words after leading `VAR=value`s. */
function segments(command: string, dropRedirects: boolean): { text: string; words: string[] }[] {
  let cleaned = command;
  if (dropRedirects) for (const r of STDERR_REDIRECTS) cleaned = cleaned.split(r).join(" ");
  return cleaned
    .split(/[|;&\n]/)
    .map((text) => {
      const words = text.split(/\s+/).filter((w) => w !== "");
      let first = 0;
      while (first < words.length && ENV_ASSIGNMENT.test(words[first] as string)) first++;
      return { text, words: first === 0 ? words : words.slice(first) };
    })
    .filter((s) => s.words.length > 0 || s.text.includes(">"));
}

const programOf = (word: string): string => (word.split("/").pop() ?? word).toLowerCase();

/** Whether `sed`'s arguments print only (`-n`, never `-i`). */
function sedReadsOnly(args: readonly string[]): boolean {
  if (args.some((a) => a.startsWith("-i"))) return false;
  return args.includes("-n");
}

export function isVerifyCommand(command: string, extraPatterns: readonly string[] = []): boolean {
  const c = command.toLowerCase();
  if (DEFAULT_VERIFY_PATTERNS.some((p) => c.includes(p))) return true;
  // A blank pattern is a substring of every command: skipped, as the supervisor does.
  return extraPatterns.some((p) => {
    const pattern = p.trim().toLowerCase();
    return pattern !== "" && c.includes(pattern);
  });
}

/** Every segment reads only, and at least one lists or searches (`git grep`, `git ls-files` too). */
export function isSearchCommand(command: string): boolean {
  let searched = false;
  for (const { text, words } of segments(command, true)) {
    if (text.includes(">")) return false;
    if (words.length === 0) continue;
    const program = programOf(words[0] as string);
    if (program === "git" && (words[1] === "grep" || words[1] === "ls-files")) {
      searched = true;
      continue;
    }
    if (SEARCH_PROGRAMS.has(program)) {
      if (text.includes("-exec") || text.includes("-delete")) return false;
      searched = true;
      continue;
    }
    if (!READ_ONLY_PROGRAMS.has(program)) return false;
  }
  return searched;
}

/** Every segment reads only, and at least one pages a named file (cat, head, tail, nl, `sed -n`). */
export function isReadCommand(command: string): boolean {
  if (commandReadPaths(command).length === 0) return false;
  for (const { text, words } of segments(command, true)) {
    if (text.includes(">")) return false;
    if (words.length === 0) continue;
    const program = programOf(words[0] as string);
    if (program === "sed" && !sedReadsOnly(words.slice(1))) return false;
    if (!READ_ONLY_PROGRAMS.has(program) && !READ_PROGRAMS.has(program)) return false;
  }
  return true;
}

function flagTakesValue(program: string, flag: string): boolean {
  if (program === "head" || program === "tail") return flag === "-n" || flag === "-c";
  if (program === "sed") return flag === "-e" || flag === "-f";
  return false;
}

/** The files a shell command pages: the file arguments of cat, head, tail, nl and `sed -n '…p' FILE`. */
export function commandReadPaths(command: string): string[] {
  const paths = new Set<string>();
  let looked = 0;
  for (const { text, words } of segments(command, false)) {
    if (text.includes(">") || words.length === 0) continue;
    const program = programOf(words[0] as string);
    if (!READ_PROGRAMS.has(program)) continue;
    const args = words.slice(1);
    let scriptArgs = 0;
    if (program === "sed") {
      if (!sedReadsOnly(args)) continue;
      scriptArgs = 1;
    }
    let expectValue = false;
    for (const arg of args) {
      if (expectValue) {
        expectValue = false;
        continue;
      }
      if (arg.startsWith("-")) {
        expectValue = flagTakesValue(program, arg);
        continue;
      }
      if (scriptArgs > 0) {
        scriptArgs--;
        continue;
      }
      if (++looked > MAX_RAW_PATHS) return [...paths].sort();
      if (/[<>*?$`]/.test(arg)) continue;
      const p = cleanPath(arg);
      if (p !== undefined) paths.add(p);
    }
  }
  return [...paths].sort();
}

/** What a path is stripped of at both ends. */
const STRIPPED = new Set(['"', "'", " ", ",", ";", ":", "(", ")", "[", "]", "{", "}"]);

/**
 * A path as a command or patch header writes it, stripped of quotes and `a/`, `b/`, `./` prefixes;
 * undefined past `MAX_RAW_PATH`. A scan from each end: a pattern anchored at the end would be tried
 * from every position of a long run of these characters, each try running to its end.
 */
function cleanPath(raw: string): string | undefined {
  if (raw.length > MAX_RAW_PATH) return undefined;
  let start = 0;
  let end = raw.length;
  while (start < end && STRIPPED.has(raw[start] as string)) start++;
  while (end > start && STRIPPED.has(raw[end - 1] as string)) end--;
  let p = raw.slice(start, end).trim();
  for (const prefix of ["a/", "b/", "./"]) if (p.startsWith(prefix)) p = p.slice(prefix.length);
  if (p === "" || p.includes("://") || /[\n\r\t]/.test(p) || p.startsWith("--") || p.startsWith("++"))
    return undefined;
  return p;
}

const PATCH_HEADERS = ["*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "];

/** A line terminator as a pattern's `^` and `$` see one (`\n`, `\r`, U+2028, U+2029). */
const isLineEnd = (c: number): boolean => c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029;

/**
 * The files an `apply_patch` patch touches, from its `*** Add/Update/Delete File:` and `*** Move to:`
 * headers: a scan line by line, at most `MAX_RAW_PATHS` headers read.
 */
export function patchPaths(patch: string): string[] {
  const paths = new Set<string>();
  let looked = 0;
  for (let start = 0; start <= patch.length; ) {
    let end = start;
    while (end < patch.length && !isLineEnd(patch.charCodeAt(end))) end++;
    if (patch.startsWith("*** ", start)) {
      const header = PATCH_HEADERS.find((h) => patch.startsWith(h, start));
      if (header !== undefined && end > start + header.length) {
        if (++looked > MAX_RAW_PATHS) break;
        const p = cleanPath(patch.slice(start + header.length, end));
        if (p !== undefined) paths.add(p);
      }
    }
    start = end + 1;
  }
  return [...paths].sort();
}

/** `apply_patch` as a shell command's first word, after any whitespace. */
function runsApplyPatch(command: string): boolean {
  const c = command.trimStart();
  if (!c.startsWith("apply_patch")) return false;
  const next = c.charCodeAt("apply_patch".length);
  const wordChar =
    (next >= 0x30 && next <= 0x39) ||
    (next >= 0x41 && next <= 0x5a) ||
    (next >= 0x61 && next <= 0x7a) ||
    next === 0x5f;
  return !wordChar;
}

/** The patch text of an `apply_patch` call, or of a shell call that runs `apply_patch` on a here-document. */
function patchText(tool: string, input: Input): string | undefined {
  if (tool === "apply_patch") return firstString(input, "patch", "input", "command");
  const command = SHELL_TOOLS.has(tool) ? shellCommand(input) : "";
  return runsApplyPatch(command) && command.includes("*** Begin Patch") ? command : undefined;
}

/** The action of a call of `tool` with `input`; `verifyPatterns` are `[agents] verify_patterns`. */
export function toolAction(tool: string, input: unknown, verifyPatterns: readonly string[] = []): ToolClass {
  if (READ_TOOLS.has(tool)) return "read";
  if (EDIT_TOOLS.has(tool)) return "edit";
  if (SEARCH_TOOLS.has(tool)) return "search";
  if (SHELL_TOOLS.has(tool)) {
    const i = asInput(input);
    if (patchText(tool, i) !== undefined) return "edit";
    const command = shellCommand(i);
    if (command.length > MAX_COMMAND) return "exec";
    if (isVerifyCommand(command, verifyPatterns)) return "verify";
    if (isSearchCommand(command)) return "search";
    if (isReadCommand(command)) return "read";
    return "exec";
  }
  return "other";
}

/**
 * The file paths a call names, as written (absolute, or relative to the session's `cwd`): the keys
 * agent-trace's `TargetsForWith` reads per tool, the files a shell command pages, a patch's headers.
 */
export function toolPaths(tool: string, input: unknown): string[] {
  const i = asInput(input);
  const strings = (...keys: string[]) =>
    keys.flatMap((k) => {
      const v = i[k];
      return typeof v === "string" && v !== "" && v.length <= MAX_RAW_PATH ? [v] : [];
    });
  const patch = patchText(tool, i);
  if (patch !== undefined) return patchPaths(patch);
  if (READ_TOOLS.has(tool)) return strings("file_path", "path");
  if (EDIT_TOOLS.has(tool)) return strings("file_path", "notebook_path", "path");
  if (SEARCH_TOOLS.has(tool)) return strings("path");
  if (SHELL_TOOLS.has(tool)) {
    const command = shellCommand(i);
    return command.length > MAX_COMMAND ? [] : commandReadPaths(command);
  }
  return [];
}
