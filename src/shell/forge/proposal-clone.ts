/**
 * The proposal clone (SPEC-0029 REQ-16): `$XDG_STATE_HOME/harness/proposals/<repo>/`, never the
 * policy clone under `policy/` (which only `harness policy sync` touches). Each pass fetches the default
 * branch afresh; a proposal's commit is cut from it (or from the proposal branch as last pushed) and
 * changes only `rules/<name>.toml`; the push is never forced. A remote proposal branch holding commits
 * this clone did not push is the spec's `branch diverged`: the proposal waits, nothing is overwritten.
 * Every network command gets the token through `gitWithCredential`'s pipe.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { stateHome } from "../config/paths.js";
import { type GitCredential, type GitOptions, git, gitTest, gitWithCredential } from "../policy/git.js";

export const proposalClonePath = (env: NodeJS.ProcessEnv, repo: string): string =>
  path.join(stateHome(env), "harness", "proposals", repo);

/** The spec's sentinel: the remote's proposal branch has commits that are not ours. */
export class BranchDivergedError extends Error {
  constructor(
    readonly branch: string,
    detail: string,
  ) {
    super(`branch diverged: ${branch} ${detail}; it is left as it is, and the proposal waits`);
    this.name = "BranchDivergedError";
  }
}

/** The forge refused the push (a pre-receive hook, a protected branch): its own words, as it gave them. */
export class PushRejectedError extends Error {
  constructor(
    readonly branch: string,
    readonly reason: string,
  ) {
    super(`the forge rejected the push to ${branch}:\n${reason}`);
    this.name = "PushRejectedError";
  }
}

const MAX_REASON_LINES = 20;
const MAX_REASON_LINE = 200;
// Controls (ANSI colours a hook may print among them) but tab; bidi and zero-width characters.
const UNPRINTABLE = /\p{Cc}\[[0-9;]*[A-Za-z]|[\p{Cc}\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/gu;

/**
 * The `remote:` lines and the `[remote rejected] … (reason)` lines of a refused push, without
 * controls, at most 20 lines of 200 characters: the forge's (or its hook's) text is untrusted.
 */
export function pushRefusal(stderr: string): string | undefined {
  const lines = stderr
    .split(/\r?\n|\r/)
    .map((l) => l.replace(UNPRINTABLE, "").trimEnd())
    .filter((l) => /^remote:\s*\S/.test(l) || /^\s*!\s*\[remote rejected\]/.test(l));
  if (lines.length === 0) return undefined;
  const kept = lines.slice(0, MAX_REASON_LINES).map((l) => [...l.trim()].slice(0, MAX_REASON_LINE).join(""));
  if (lines.length > kept.length) kept.push(`(${lines.length - kept.length} more lines)`);
  return kept.join("\n");
}

/** Who propose's commits are by when `commit_author` is unset. */
export const DEFAULT_COMMIT_AUTHOR = { name: "harness-rules", email: "harness-rules@localhost" } as const;

export interface CommitAuthor {
  readonly name: string;
  readonly email: string;
}

export class ProposalClone {
  private heads = new Map<string, string>();

  private constructor(
    readonly dir: string,
    private readonly url: string,
    private readonly credential: GitCredential,
    private readonly env: NodeJS.ProcessEnv,
    private readonly author: CommitAuthor,
  ) {}

  /** Opens the clone, making an empty repository the first time. */
  static async open(
    dir: string,
    url: string,
    credential: GitCredential,
    env: NodeJS.ProcessEnv,
    author: CommitAuthor = DEFAULT_COMMIT_AUTHOR,
  ): Promise<ProposalClone> {
    if (!fs.existsSync(path.join(dir, ".git"))) {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      await git(["init", "--quiet", "--", dir], { mode: "local", env });
    }
    return new ProposalClone(dir, url, credential, env, author);
  }

  private local(): GitOptions {
    return { mode: "local", env: this.env, repo: this.dir };
  }

  private remote(args: readonly string[]): Promise<string> {
    return gitWithCredential(args, { mode: "remote", env: this.env, repo: this.dir }, this.credential);
  }

  /**
   * Reads the remote's branches and fetches `base` and the proposal branches that exist; returns the
   * default branch (`base`, or the remote's HEAD when none is configured) and its fetched tip.
   */
  async fetch(base: string | undefined, prefix: string): Promise<{ branch: string; tip: string }> {
    const listing = await this.remote(["ls-remote", "--symref", "--", this.url, "HEAD", "refs/heads/*"]);
    this.heads = new Map();
    let remoteHead: string | undefined;
    for (const line of listing.split("\n")) {
      const sym = /^ref: refs\/heads\/(\S+)\tHEAD$/.exec(line);
      if (sym !== null) remoteHead = sym[1];
      const m = /^([0-9a-f]{40,64})\trefs\/heads\/(.+)$/.exec(line);
      if (m !== null) this.heads.set(m[2] as string, m[1] as string);
    }
    const branch = base ?? remoteHead;
    if (branch === undefined) throw new Error("the remote names no default branch (HEAD)");
    const tip = this.heads.get(branch);
    if (tip === undefined) throw new Error(`the remote has no branch ${branch}`);
    const wanted = [branch, ...[...this.heads.keys()].filter((h) => h.startsWith(prefix) && h !== branch)];
    await this.remote([
      "fetch",
      "--quiet",
      "--no-tags",
      "--no-recurse-submodules",
      "--",
      this.url,
      ...wanted.map((b) => `+refs/heads/${b}:refs/remotes/origin/${b}`),
    ]);
    return { branch, tip };
  }

  /**
   * Where a proposal branch's next commit starts: the branch as this clone last pushed it, or the
   * default branch's tip when the remote has no such branch. `BranchDivergedError` when the remote's
   * branch has commits the clone did not push.
   */
  async startOf(branch: string, defaultTip: string): Promise<{ start: string; exists: boolean }> {
    const remoteTip = this.heads.get(branch);
    if (remoteTip === undefined) return { start: defaultTip, exists: false };
    const ours = await this.rev(`refs/heads/${branch}`);
    if (ours === undefined)
      throw new BranchDivergedError(
        branch,
        `exists on the remote at ${remoteTip.slice(0, 12)}, and this clone never pushed it`,
      );
    if (
      ours !== remoteTip &&
      !(await gitTest(["merge-base", "--is-ancestor", remoteTip, ours], this.local()))
    )
      throw new BranchDivergedError(
        branch,
        `is at ${remoteTip.slice(0, 12)} on the remote, which is not the ${ours.slice(0, 12)} this clone pushed`,
      );
    return { start: ours, exists: true };
  }

  /** A commit on `start` with `rules/<name>.toml` set to `text`; undefined when the file already is. */
  async commit(start: string, name: string, text: string, message: string): Promise<string | undefined> {
    const o = this.local();
    await git(["checkout", "--quiet", "--force", "--detach", start], o);
    const file = `rules/${name}.toml`;
    fs.mkdirSync(path.join(this.dir, "rules"), { recursive: true });
    fs.writeFileSync(path.join(this.dir, file), text);
    await git(["add", "--", file], o);
    if (await gitTest(["diff", "--cached", "--quiet"], o)) return undefined;
    const who = ["-c", `user.name=${this.author.name}`, "-c", `user.email=${this.author.email}`];
    await git([...who, "commit", "--quiet", "--no-verify", "-m", message], o);
    return (await git(["rev-parse", "HEAD"], o)).trim();
  }

  /** Pushes `commit` to `branch`, never forced; a refusal because the branch moved is `branch diverged`. */
  async push(commit: string, branch: string): Promise<void> {
    try {
      await this.remote(["push", "--quiet", "--no-verify", "--", this.url, `${commit}:refs/heads/${branch}`]);
    } catch (e) {
      const stderr = (e as { stderr?: string }).stderr ?? "";
      if (/\[rejected\]|non-fast-forward|fetch first|\(stale info\)/.test(stderr))
        throw new BranchDivergedError(branch, "moved on the remote while this pass pushed to it");
      const reason = pushRefusal(stderr);
      if (reason !== undefined) throw new PushRejectedError(branch, reason);
      throw e;
    }
    await git(["update-ref", `refs/heads/${branch}`, commit], this.local());
    this.heads.set(branch, commit);
  }

  private async rev(ref: string): Promise<string | undefined> {
    try {
      return (
        (await git(["rev-parse", "--verify", "-q", `${ref}^{commit}`], this.local())).trim() || undefined
      );
    } catch {
      return undefined;
    }
  }
}
