/**
 * What a hook row says about where the agent works: the git top level of its `cwd` (paths are made
 * relative to it, and its real path), `repo` (the origin remote as `host/owner/name`, never its userinfo)
 * and `branch`. Git runs through the project's wrapper in local mode (no user config, every transport
 * refused), and only when the answer may have changed: every tool call of a session asks the same
 * question, and a git process per call would cost each call several milliseconds of the daemon's event
 * loop (a spawn) and three processes' CPU. What the answer is read from is checked by `stat` on every
 * call instead (`Witness`), a few microseconds.
 *
 * Bounded whatever the callers send: the answer is cached per repository, keyed by the
 * nearest directory above the `cwd` that holds a `.git` (found by `stat`, so a `cwd` in no repository
 * runs no git at all), at most `cached` of them; git runs in a pool of at most `children` processes with
 * at most `queued` reads waiting, a read past that gets no facts; and a call waits at most `waitMs` for
 * git, then goes on without facts while the read fills the cache for the next call. A git that could
 * not run or timed out leaves nothing cached.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { git, notFound } from "../../policy/git.js";
import { MAX_CWD, MAX_CWD_DEPTH, MAX_REMOTE_URL, ROW_IDENT, withinDepth } from "./payload-bounds.js";

export interface GitFacts {
  /** The work tree's top level, as git prints it; undefined outside a repository. */
  readonly top?: string;
  readonly repo?: string;
  readonly branch?: string;
  /** `top` with its symlinks resolved, to judge the tool's paths against. */
  readonly realTop?: string;
}

const GIT_TIMEOUT_MS = 5000;

export interface GitPoolLimits {
  /** Git processes running at once. */
  readonly children: number;
  /** Reads waiting for a process; past it a call gets no facts at once. */
  readonly queued: number;
  /** How long a call waits for git before it goes on without facts. */
  readonly waitMs: number;
  /** Repositories whose facts are kept. */
  readonly cached: number;
}

export const GIT_POOL: GitPoolLimits = { children: 4, queued: 32, waitMs: 1000, cached: 256 };

/**
 * How a call's facts were found: `cached` (checked by `stat`), `read` (git answered within the wait),
 * `late` (the wait ran out: no facts), `saturated` (the pool's queue was full: no facts), `none` (no
 * repository above the `cwd`, or a `cwd` past its bounds: no git needed).
 */
export type FactsResult = "cached" | "read" | "late" | "saturated" | "none";

/** What the reader reports, shaped as `DaemonMetrics`' counters and gauges. */
export interface GitFactsMetrics {
  readonly gitFacts: { inc(labels: { result: FactsResult }): void };
  readonly gitChildren: { set(n: number): void };
  readonly gitQueued: { set(n: number): void };
  readonly gitCached: { set(n: number): void };
}

const CONTROL = /\p{Cc}/u;

/**
 * A remote URL as `host/owner/name`: scheme, userinfo (a password included), port and a trailing `.git`
 * dropped, the host lower-cased. Undefined for a remote with no host (a local path, `file://`) or one
 * that holds a control character.
 */
export function normalizeRemote(url: string): string | undefined {
  const u = url.trim();
  if (u === "" || CONTROL.test(u)) return undefined;
  let host: string;
  let path: string;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\/([^/]*)(\/.*)?$/i.exec(u);
  if (scheme !== null) {
    if ((scheme[1] as string).toLowerCase() === "file") return undefined;
    const authority = (scheme[2] as string).replace(/^.*@/, "");
    const bracketed = /^\[([^\]]*)\]/.exec(authority);
    host = bracketed !== null ? (bracketed[1] as string) : authority.replace(/:\d*$/, "");
    path = scheme[3] ?? "";
  } else {
    // scp-like `[user@]host:path`; a path with a slash before any colon is a local path.
    const scp = /^(?:[^@/]*@)?([^:/]+):(.*)$/.exec(u);
    if (scp === null) return undefined;
    host = scp[1] as string;
    path = scp[2] as string;
  }
  const parts = path
    .replace(/\.git\/?$/, "")
    .split("/")
    .filter((p) => p !== "" && p !== "." && p !== "..");
  if (host === "" || parts.length === 0) return undefined;
  return [host.toLowerCase(), ...parts].join("/");
}

/**
 * What git's answer for a repository is read from, as `stat` sees it: its `.git` entry (a removed or
 * replaced repository changes the answer), `HEAD` (the branch; git rewrites it through a rename, so a
 * switch changes its inode), and the config files `remote.origin.url` is read from. A directory is
 * known by its inode alone, since its mtime moves whenever git writes inside it. A `.git` made between
 * the `cwd` and the cached repository needs no witness: the walk up finds it first.
 */
type Witness = ReadonlyMap<string, string>;

function fingerprint(file: string): string {
  try {
    const st = fs.statSync(file, { bigint: true });
    return st.isDirectory() ? `d:${st.dev}:${st.ino}` : `f:${st.dev}:${st.ino}:${st.mtimeNs}:${st.size}`;
  } catch (e) {
    return `!${(e as NodeJS.ErrnoException).code ?? "error"}`;
  }
}

/**
 * The nearest directory from `cwd` up to `/` holding a `.git` entry, with that entry's fingerprint;
 * undefined when `cwd` is no directory or no such directory exists. Walked up from `cwd`'s real path,
 * as git walks up from its physical working directory (a symlink into a repository's subdirectory is in
 * that repository). One pass over the path: each parent is a prefix of it, found by the previous `/`.
 */
function nearestRepo(given: string): { dir: string; print: string } | undefined {
  let cwd: string;
  try {
    cwd = fs.realpathSync.native(given);
  } catch {
    return undefined;
  }
  if (!withinDepth(cwd, MAX_CWD_DEPTH) || !fingerprint(cwd).startsWith("d:")) return undefined;
  let end = cwd.length;
  while (end > 1 && cwd.endsWith("/", end)) end--;
  for (;;) {
    const dir = end <= 1 ? "/" : cwd.slice(0, end);
    const print = fingerprint(dir === "/" ? "/.git" : `${dir}/.git`);
    if (!print.startsWith("!")) return { dir, print };
    if (dir === "/") return undefined;
    end = cwd.lastIndexOf("/", end - 1);
    while (end > 1 && cwd.endsWith("/", end)) end--;
  }
}

const witness = (files: readonly string[]): Witness => new Map(files.map((f) => [f, fingerprint(f)]));

const unchanged = (w: Witness): boolean => {
  for (const [file, print] of w) if (fingerprint(file) !== print) return false;
  return true;
};

/** At most `children` tasks at once, at most `queued` waiting; `run` says no past that. */
class Pool {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly limits: GitPoolLimits,
    private readonly report: (running: number, queued: number) => void,
  ) {}

  /** The task's result, or undefined when the queue is full (the task is not run). */
  run<T>(task: () => Promise<T>): Promise<T> | undefined {
    if (this.running >= this.limits.children && this.waiting.length >= this.limits.queued) return undefined;
    let slot: Promise<void>;
    if (this.running < this.limits.children) {
      this.running++;
      slot = Promise.resolve();
    } else slot = new Promise<void>((resolve) => this.waiting.push(resolve));
    this.report(this.running, this.waiting.length);
    return slot.then(task).finally(() => {
      const next = this.waiting.shift();
      if (next !== undefined) next();
      else this.running--;
      this.report(this.running, this.waiting.length);
    });
  }
}

interface Cached {
  readonly facts: Promise<GitFacts>;
  /** Undefined while git is being read. */
  witness?: Witness;
}

export interface GitFactsOptions {
  readonly limits?: Partial<GitPoolLimits>;
  readonly metrics?: GitFactsMetrics;
}

export class GitFactsReader {
  /** Keyed by the repository's directory (the nearest holding `.git`), oldest first. */
  private readonly cache = new Map<string, Cached>();
  private readonly limits: GitPoolLimits;
  private readonly pool: Pool;

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly options: GitFactsOptions = {},
  ) {
    this.limits = { ...GIT_POOL, ...options.limits };
    this.pool = new Pool(this.limits, (running, queued) => {
      options.metrics?.gitChildren.set(running);
      options.metrics?.gitQueued.set(queued);
    });
  }

  /**
   * The facts of `cwd` (an absolute directory); a failing, busy or slow git means no facts, never an
   * error. Git runs the first time a repository is seen and after what its answer was read from changed
   * (a branch switch, a new origin, a repository made or removed); otherwise the answer is the cached
   * one, checked by `stat`.
   */
  facts(cwd: string): Promise<GitFacts> {
    const repo =
      cwd.length <= MAX_CWD && path.isAbsolute(cwd) && withinDepth(cwd, MAX_CWD_DEPTH)
        ? nearestRepo(cwd)
        : undefined;
    if (repo === undefined) return this.answer("none", {});
    const cached = this.cache.get(repo.dir);
    if (cached !== undefined && (cached.witness === undefined || unchanged(cached.witness)))
      return cached.witness === undefined ? this.waitFor(cached.facts) : this.answer("cached", cached.facts);
    this.cache.delete(repo.dir);
    const read = this.pool.run(() => this.read(repo.dir, repo.print));
    if (read === undefined) return this.answer("saturated", {});
    const entry: Cached = {
      facts: read.then(({ facts, witness }) => {
        // A git that could not run or timed out is asked again at the next call.
        if (witness !== undefined) entry.witness = witness;
        else if (this.cache.get(repo.dir) === entry) {
          this.cache.delete(repo.dir);
          this.options.metrics?.gitCached.set(this.cache.size);
        }
        return facts;
      }),
    };
    if (this.cache.size >= this.limits.cached) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(repo.dir, entry);
    this.options.metrics?.gitCached.set(this.cache.size);
    return this.waitFor(entry.facts);
  }

  private answer(result: FactsResult, facts: GitFacts | Promise<GitFacts>): Promise<GitFacts> {
    this.options.metrics?.gitFacts.inc({ result });
    return Promise.resolve(facts);
  }

  /** `facts`, or no facts once `waitMs` has passed; the read goes on and fills the cache. */
  private waitFor(facts: Promise<GitFacts>): Promise<GitFacts> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), this.limits.waitMs);
    });
    return Promise.race([facts, late]).then((r) => {
      clearTimeout(timer);
      this.options.metrics?.gitFacts.inc({ result: r === "late" ? "late" : "read" });
      return r === "late" ? {} : r;
    });
  }

  /**
   * Git's answer for the repository at `dir` and its witness, its commands one after another (one
   * process per pool slot). Each file is looked at before git reads it, so a change made while git
   * runs shows at the next call rather than being hidden behind the new fingerprint.
   */
  private async read(dir: string, dotGit: string): Promise<{ facts: GitFacts; witness?: Witness }> {
    const options = { mode: "local" as const, env: this.env, timeoutMs: GIT_TIMEOUT_MS };
    const run = (args: string[]) => git(["-C", dir, ...args], options).catch(notFound);
    const entry: Witness = new Map([[dir === "/" ? "/.git" : `${dir}/.git`, dotGit]]);
    try {
      const dirs = (await run(["rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir"]))
        ?.split("\n")
        .map((l) => l.trim());
      const [topLevel, gitDir, common] = dirs ?? [];
      if (topLevel === undefined || topLevel === "" || gitDir === undefined || common === undefined)
        return { facts: {}, witness: entry };
      const commonDir = path.resolve(dir, common);
      const files = witness([
        path.join(gitDir, "HEAD"),
        path.join(commonDir, "config"),
        path.join(gitDir, "config.worktree"),
      ]);
      const branch = (await run(["symbolic-ref", "-q", "--short", "HEAD"]))?.trim();
      const origin = await run(["config", "--get", "remote.origin.url"]);
      const realTop = await fs.promises.realpath(topLevel).catch(() => undefined);
      const repo =
        origin === undefined || origin.length > MAX_REMOTE_URL ? undefined : normalizeRemote(origin);
      return {
        facts: {
          top: topLevel,
          // A row refuses a repo or branch past the journal's bound: better the row without it.
          ...(repo === undefined || repo.length > ROW_IDENT ? {} : { repo }),
          ...(branch === undefined || branch === "" || branch.length > ROW_IDENT || CONTROL.test(branch)
            ? {}
            : { branch }),
          ...(realTop === undefined ? {} : { realTop }),
        },
        witness: new Map([...entry, ...files]),
      };
    } catch {
      return { facts: {} };
    }
  }
}
