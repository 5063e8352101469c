/**
 * What a hook row says about where the agent works: the git top level of its `cwd` (paths are made
 * relative to it), `repo` (the origin remote as `host/owner/name`, never its userinfo) and `branch`. Git
 * runs through the project's wrapper in local mode (no user config, every transport refused), and the
 * answers are kept briefly per `cwd`, since every tool call of a session asks the same question.
 */
import { git, notFound } from "../policy/git.js";

export interface GitFacts {
  /** The work tree's top level, as git prints it; undefined outside a repository. */
  readonly top?: string;
  readonly repo?: string;
  readonly branch?: string;
}

/**
 * How long an answer is reused as is; after that it is still given once while a fresh one is read, so
 * a branch switched meanwhile shows within a call or two. Past the max age, a call waits for git.
 */
export const GIT_FACTS_TTL_MS = 2000;
export const GIT_FACTS_MAX_AGE_MS = 60_000;
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

export class GitFactsReader {
  private readonly cache = new Map<string, { at: number; facts: Promise<GitFacts>; refreshing: boolean }>();

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * The facts of `cwd` (an absolute directory); a failing git means no facts, never an error. An answer
   * older than `GIT_FACTS_TTL_MS` is still given while a fresh one is read beside it, so git runs on a
   * tool call's critical path only the first time a `cwd` is seen (or after `GIT_FACTS_MAX_AGE_MS`).
   */
  facts(cwd: string): Promise<GitFacts> {
    const now = this.clock();
    const cached = this.cache.get(cwd);
    if (cached !== undefined && now - cached.at < GIT_FACTS_TTL_MS) return cached.facts;
    if (cached !== undefined && now - cached.at < GIT_FACTS_MAX_AGE_MS) {
      if (!cached.refreshing) {
        cached.refreshing = true;
        const fresh = this.read(cwd);
        void fresh.then(() => this.cache.set(cwd, { at: this.clock(), facts: fresh, refreshing: false }));
      }
      return cached.facts;
    }
    const facts = this.read(cwd);
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(cwd, { at: now, facts, refreshing: false });
    return facts;
  }

  private async read(cwd: string): Promise<GitFacts> {
    const options = { mode: "local" as const, env: this.env, timeoutMs: GIT_TIMEOUT_MS };
    const run = (args: string[]) => git(["-C", cwd, ...args], options).catch(notFound);
    try {
      const [top, branch, origin] = await Promise.all([
        run(["rev-parse", "--show-toplevel"]),
        run(["symbolic-ref", "-q", "--short", "HEAD"]),
        run(["config", "--get", "remote.origin.url"]),
      ]);
      const topLevel = top?.trim();
      if (topLevel === undefined || topLevel === "") return {};
      const b = branch?.trim();
      const repo = origin === undefined ? undefined : normalizeRemote(origin);
      return {
        top: topLevel,
        ...(repo === undefined ? {} : { repo }),
        ...(b === undefined || b === "" || CONTROL.test(b) ? {} : { branch: b }),
      };
    } catch {
      return {};
    }
  }
}
