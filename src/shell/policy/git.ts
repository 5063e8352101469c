/**
 * The system `git`, run as argv (never through a shell) with an environment we choose (SPEC-0029 REQ-1).
 * Two modes: `local` for the daemon's reads of a clone, which runs with no user or system config and
 * every transport refused, so even git's own lazy fetches cannot reach a network; and `remote` for
 * `harness policy sync`, the only code that talks to a policy repo's remote, which keeps the operator's
 * global config (credential helpers, ssh settings) but allows only the transports a remote may name.
 */
import { execFile, spawn } from "node:child_process";
import { remoteProblem } from "../config/git-refs.js";

export type GitMode = "local" | "remote";

export interface GitOptions {
  /** The repository's work tree; `--git-dir` and `--work-tree` are given, so git never walks up. */
  readonly repo?: string;
  readonly mode: GitMode;
  /** The environment git inherits from (its `PATH` finds `git`); every `GIT_*` variable is dropped. */
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutMs?: number;
}

export const LOCAL_TIMEOUT_MS = 30_000;
export const REMOTE_TIMEOUT_MS = 5 * 60_000;
/** Enough for any listing the daemon asks for; a rule file's blob is read by `catFileBatch`, not here. */
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/** A git command that failed: its argv (without the fixed `-c` prefix), exit code and stderr. */
export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
    detail: string,
  ) {
    super(redactUserinfo(`git ${args.join(" ")}: ${detail}`));
    this.name = "GitError";
  }
}

// A remote URL's `user:password@` must not reach a terminal or a log through an error message.
const redactUserinfo = (text: string): string => text.replace(/:\/\/[^/@\s]+@/g, "://***@");

/** A remote URL git would treat as a command or an option rather than as an address. */
export class RefusedRemoteError extends Error {
  constructor(
    readonly remote: string,
    reason: string,
  ) {
    super(`refused remote ${JSON.stringify(remote)}: ${reason}`);
    this.name = "RefusedRemoteError";
  }
}

export function checkRemote(remote: string): void {
  const problem = remoteProblem(remote);
  if (problem !== undefined) throw new RefusedRemoteError(remote, problem);
}

/**
 * `-c` settings that override every config file. The transport allowlist is the second wall behind
 * `checkRemote` (a `url.*.insteadOf` in the operator's config could otherwise rewrite a URL into
 * `ext::`); `core.fsmonitor` and `core.hooksPath` keep a clone's own config from running programs.
 */
const REMOTE_PROTOCOLS = ["https", "ssh", "git", "file"] as const;
function fixedConfig(mode: GitMode): string[] {
  const protocols =
    mode === "remote" ? REMOTE_PROTOCOLS.flatMap((p) => ["-c", `protocol.${p}.allow=always`]) : [];
  return [
    "-c",
    "protocol.allow=never",
    "-c",
    "protocol.ext.allow=never",
    ...protocols,
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
  ];
}

/** How the operator reaches a remote: kept for sync, which may need their ssh key or askpass. */
const REMOTE_ACCESS_VARS = new Set(["GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_ASKPASS"]);

function gitEnv(options: GitOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // GIT_DIR, GIT_WORK_TREE, GIT_CONFIG_* from a calling hook would point git at another repository.
  for (const [k, v] of Object.entries(options.env))
    if (!k.startsWith("GIT_") || (options.mode === "remote" && REMOTE_ACCESS_VARS.has(k))) env[k] = v;
  env.GIT_TERMINAL_PROMPT = "0";
  env.GIT_CONFIG_NOSYSTEM = "1";
  env.LC_ALL = "C";
  if (options.mode === "local") env.GIT_CONFIG_GLOBAL = "/dev/null";
  return env;
}

function argv(args: readonly string[], options: GitOptions): string[] {
  const repo =
    options.repo === undefined ? [] : [`--git-dir=${options.repo}/.git`, `--work-tree=${options.repo}`];
  return [...fixedConfig(options.mode), ...repo, ...args];
}

/** A username and password (a forge token) for one git command's HTTPS requests. */
export interface GitCredential {
  readonly username: string;
  readonly password: string;
}

/**
 * The helper git asks for a credential: it prints what the pipe on descriptor 3 carries, so the secret
 * reaches git-remote-https through a pipe, never through an argv, the environment, a URL or a file. The
 * empty `credential.helper` first clears the operator's own helpers, so none of them stores the token.
 */
const PIPE_HELPER = [
  "-c",
  "credential.helper=",
  "-c",
  'credential.helper=!f() { test "$1" = get && cat <&3; }; f',
];

/**
 * Runs a remote git command with `credential` fed to it through a pipe (`PIPE_HELPER`), returning its
 * stdout; failures as `git` reports them.
 */
export function gitWithCredential(
  args: readonly string[],
  options: GitOptions,
  credential: GitCredential,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const fullArgs = [...PIPE_HELPER, ...args];
    const child = spawn("git", argv(fullArgs, options), {
      env: gitEnv(options),
      stdio: ["ignore", "pipe", "pipe", "pipe"],
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? REMOTE_TIMEOUT_MS);
    let stdout = "";
    let stderr = "";
    child.stdout?.setEncoding("utf8").on("data", (d: string) => {
      if (stdout.length < MAX_OUTPUT_BYTES) stdout += d;
    });
    child.stderr?.setEncoding("utf8").on("data", (d: string) => {
      if (stderr.length < 64 * 1024) stderr += d;
    });
    const pipe = child.stdio[3] as NodeJS.WritableStream;
    pipe.on("error", () => {
      // git exiting without asking closes the pipe; its exit code says why.
    });
    pipe.end(`username=${credential.username}\npassword=${credential.password}\n`);
    let spawnError: Error | undefined;
    child.on("error", (e) => {
      spawnError = e;
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else
        reject(
          new GitError(
            args,
            code,
            stderr,
            spawnError !== undefined
              ? `cannot run git: ${spawnError.message}`
              : signal === "SIGKILL"
                ? "timed out"
                : stderr.trim().split("\n").pop() || `exit ${String(code)}`,
          ),
        );
    });
  });
}

/** Runs git and returns its stdout; a non-zero exit, a timeout or a spawn failure is a `GitError`. */
export function git(args: readonly string[], options: GitOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      "git",
      argv(args, options),
      {
        env: gitEnv(options),
        timeout: options.timeoutMs ?? (options.mode === "local" ? LOCAL_TIMEOUT_MS : REMOTE_TIMEOUT_MS),
        maxBuffer: MAX_OUTPUT_BYTES,
        killSignal: "SIGKILL",
        encoding: "utf8",
      },
      (error, stdout, stderr) => {
        if (error === null) {
          resolve(stdout);
          return;
        }
        const e = error as NodeJS.ErrnoException & { code?: number | string; killed?: boolean };
        const detail =
          e.killed === true
            ? "timed out"
            : typeof e.code === "string"
              ? `cannot run git: ${e.message}`
              : stderr.trim().split("\n").pop() || `exit ${String(e.code)}`;
        reject(new GitError(args, typeof e.code === "number" ? e.code : null, stderr, detail));
      },
    );
  });
}

/**
 * For a query git answers with a non-zero exit when there is nothing (`rev-parse --verify -q`,
 * `config --get`, `symbolic-ref -q`): undefined then; a git that cannot run or timed out rethrows.
 */
export function notFound(e: unknown): undefined {
  if (e instanceof GitError && e.exitCode !== null) return undefined;
  throw e;
}

/** Runs git for its exit status alone: true on 0, false on 1, a `GitError` otherwise. */
export async function gitTest(args: readonly string[], options: GitOptions): Promise<boolean> {
  try {
    await git(args, options);
    return true;
  } catch (e) {
    if (e instanceof GitError && e.exitCode === 1) return false;
    throw e;
  }
}

export interface Blob {
  readonly oid: string;
  readonly bytes: Buffer;
}

/**
 * Reads blobs through one `git cat-file --batch`, handing each to `each` as it arrives, so a tree of
 * many files costs one process and holds one blob in memory at a time.
 */
export function catFileBatch(
  oids: readonly string[],
  options: GitOptions,
  each: (blob: Blob) => void,
): Promise<void> {
  const args = ["cat-file", "--batch"];
  return new Promise((resolve, reject) => {
    const child = spawn("git", argv(args, options), {
      env: gitEnv(options),
      stdio: ["pipe", "pipe", "pipe"],
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? LOCAL_TIMEOUT_MS);
    let stderr = "";
    let pending: Buffer = Buffer.alloc(0);
    let failure: Error | undefined;
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (d: string) => {
      if (stderr.length < 64 * 1024) stderr += d;
    });
    child.stdout.on("data", (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (;;) {
        const eol = pending.indexOf(0x0a);
        if (eol < 0) return;
        const header = pending.subarray(0, eol).toString("utf8");
        const [oid, type, size] = header.split(" ");
        if (type === "missing" || type === undefined || size === undefined) {
          failure ??= new GitError(args, null, stderr, `object ${oid ?? header} is missing`);
          pending = pending.subarray(eol + 1);
          continue;
        }
        const n = Number(size);
        if (pending.length < eol + 1 + n + 1) return;
        const bytes = Buffer.from(pending.subarray(eol + 1, eol + 1 + n));
        pending = pending.subarray(eol + 1 + n + 1);
        try {
          each({ oid: oid as string, bytes });
        } catch (e) {
          failure ??= e as Error;
        }
      }
    });
    child.on("error", (e) => {
      failure ??= new GitError(args, null, stderr, `cannot run git: ${e.message}`);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (failure !== undefined) reject(failure);
      else if (code !== 0)
        reject(new GitError(args, code, stderr, signal === "SIGKILL" ? "timed out" : `exit ${String(code)}`));
      else resolve();
    });
    child.stdin.on("error", () => {
      // git exiting early closes its stdin; the exit code says why.
    });
    child.stdin.end(oids.map((o) => `${o}\n`).join(""));
  });
}
