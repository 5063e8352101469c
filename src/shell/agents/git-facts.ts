/**
 * What a hook row says about where the agent works: the git top level of its `cwd` (paths are made
 * relative to it, and its real path), `repo` (the origin remote as `host/owner/name`, never its userinfo)
 * and `branch`. Git runs through the project's wrapper in local mode (no user config, every transport
 * refused), and only when the answer may have changed: every tool call of a session asks the same
 * question, and a git process per call would cost each call several milliseconds of the daemon's event
 * loop (a spawn) and three processes' CPU. What the answer is read from is checked by `stat` on every
 * call instead (`Witness`), a few microseconds.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { git, notFound } from "../policy/git.js";

export interface GitFacts {
  /** The work tree's top level, as git prints it; undefined outside a repository. */
  readonly top?: string;
  readonly repo?: string;
  readonly branch?: string;
  /** `top` with its symlinks resolved, to judge the tool's paths against. */
  readonly realTop?: string;
}

const GIT_TIMEOUT_MS = 5000;
const MAX_CACHED = 256;

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
 * What git's answer for a `cwd` is read from, as `stat` sees it: the `.git` entry (or its absence) of
 * `cwd` and every directory above it up to `/` (a `git init` or a removed repository on the way changes
 * the answer; a few microseconds each), `HEAD` (the branch; git rewrites it through a rename,
 * so a switch changes its inode), and the config files `remote.origin.url` is read from. A directory is
 * known by its inode alone, since its mtime moves whenever git writes inside it.
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

/** The `.git` entries from `cwd` up to `/`, nearest first. */
function dotGits(cwd: string): string[] {
  const out: string[] = [];
  for (let dir = cwd; ; dir = path.dirname(dir)) {
    out.push(path.join(dir, ".git"));
    if (path.dirname(dir) === dir) return out;
  }
}

const witness = (files: readonly string[]): Witness => new Map(files.map((f) => [f, fingerprint(f)]));

const unchanged = (w: Witness): boolean => {
  for (const [file, print] of w) if (fingerprint(file) !== print) return false;
  return true;
};

interface Cached {
  readonly facts: Promise<GitFacts>;
  /** Undefined while git is being read. */
  witness?: Witness;
}

export class GitFactsReader {
  private readonly cache = new Map<string, Cached>();

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  /**
   * The facts of `cwd` (an absolute directory); a failing git means no facts, never an error. Git runs
   * the first time a `cwd` is seen and after what its answer was read from changed (a branch switch, a
   * new origin, a repository made or removed), on that call's critical path; otherwise the answer is
   * the cached one, checked by `stat`.
   */
  facts(cwd: string): Promise<GitFacts> {
    const cached = this.cache.get(cwd);
    if (cached !== undefined && (cached.witness === undefined || unchanged(cached.witness)))
      return cached.facts;
    const entry: Cached = {
      facts: this.read(cwd).then(({ facts, witness }) => {
        entry.witness = witness;
        return facts;
      }),
    };
    this.cache.delete(cwd);
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(cwd, entry);
    return entry.facts;
  }

  /**
   * Git's answer and its witness. Each file is looked at before git reads it, so a change made while
   * git runs shows at the next call rather than being hidden behind the new fingerprint.
   */
  private async read(cwd: string): Promise<{ facts: GitFacts; witness: Witness }> {
    const options = { mode: "local" as const, env: this.env, timeoutMs: GIT_TIMEOUT_MS };
    const run = (args: string[]) => git(["-C", cwd, ...args], options).catch(notFound);
    const chain = witness(dotGits(cwd));
    try {
      const dirs = (await run(["rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir"]))
        ?.split("\n")
        .map((l) => l.trim());
      const [topLevel, gitDir, common] = dirs ?? [];
      if (topLevel === undefined || topLevel === "" || gitDir === undefined || common === undefined)
        return { facts: {}, witness: chain };
      const commonDir = path.resolve(cwd, common);
      const files = witness([
        path.join(gitDir, "HEAD"),
        path.join(commonDir, "config"),
        path.join(gitDir, "config.worktree"),
      ]);
      const [branch, origin, realTop] = await Promise.all([
        run(["symbolic-ref", "-q", "--short", "HEAD"]),
        run(["config", "--get", "remote.origin.url"]),
        fs.promises.realpath(topLevel).catch(() => undefined),
      ]);
      const b = branch?.trim();
      const repo = origin === undefined ? undefined : normalizeRemote(origin);
      return {
        facts: {
          top: topLevel,
          ...(repo === undefined ? {} : { repo }),
          ...(b === undefined || b === "" || CONTROL.test(b) ? {} : { branch: b }),
          ...(realTop === undefined ? {} : { realTop }),
        },
        witness: new Map([...chain, ...files]),
      };
    } catch {
      return { facts: {}, witness: chain };
    }
  }
}
