/**
 * `harness policy sync`'s work on one repo (SPEC-0029 REQ-1): the only code that talks to a policy
 * repo's remote. An absent clone is cloned (recording the remote's default branch in the clone's git
 * config, `harness.defaultBranch`, for a repo with no `branch`); a present one is fetched and its branch
 * fast-forwarded. Whatever refuses (a diverged branch, uncommitted edits, a remote that names a program)
 * leaves the clone exactly as it was: the fetch lands in FETCH_HEAD only, and refs, HEAD and working
 * tree change only once the fast-forward is known to be one.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { branchProblem } from "../config/git-refs.js";
import type { PolicyRepoConfig } from "../config/global-config.js";
import { policyClonePath, policyRoot } from "../config/paths.js";
import { acquireStoreLock, type StoreLock, StoreLockedError } from "../store/store-lock.js";
import { DEFAULT_BRANCH_KEY, revParse, servedBranch, short, uncommittedChanges } from "./clone.js";
import {
  checkRemote,
  type GitCredential,
  type GitOptions,
  git,
  gitTest,
  gitWithCredential,
  notFound,
} from "./git.js";

export type SyncAction = "cloned" | "fast_forwarded" | "up_to_date";

export interface SyncResult {
  readonly repo: string;
  readonly dir: string;
  readonly branch: string;
  readonly action: SyncAction;
  /** The branch's commit before a fast-forward. */
  readonly from: string | undefined;
  /** The commit the branch, and HEAD, now point at. */
  readonly commit: string;
  /** The branch HEAD was on (or "detached") when sync moved it back to the served branch. */
  readonly switchedFrom: string | undefined;
}

/** A sync that did not happen; the clone is as it was. */
export class PolicySyncError extends Error {
  constructor(
    readonly repo: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`policy repo ${repo}: ${message}`, options);
    this.name = new.target.name;
  }
}

/** The spec's "diverged policy clone": the clone's branch is not an ancestor of the remote's. */
export class DivergedCloneError extends PolicySyncError {
  constructor(
    repo: string,
    readonly branch: string,
    readonly local: string,
    readonly remote: string,
  ) {
    super(
      repo,
      `diverged policy clone: ${branch} is at ${short(local)} in the clone and ${short(remote)} on the remote, which is not a fast-forward; the clone is left as it is`,
    );
  }
}

/** Uncommitted edits in the clone: sync would not carry them along or throw them away. */
export class DirtyCloneError extends PolicySyncError {
  constructor(
    repo: string,
    readonly dir: string,
    detail: string,
  ) {
    super(
      repo,
      `the clone has ${detail}; commit, stash or discard them (git -C ${dir} status), then sync again`,
    );
  }
}

const remote = (env: NodeJS.ProcessEnv, repo?: string): GitOptions => ({
  mode: "remote",
  env,
  ...(repo === undefined ? {} : { repo }),
});

function checkBranch(repo: string, branch: string): void {
  const problem = branchProblem(branch);
  if (problem !== undefined) throw new PolicySyncError(repo, `branch ${JSON.stringify(branch)} ${problem}`);
}

/**
 * Whether git would send a credential to `remote`: only an https (or loopback http) remote asks through
 * the credential helper; ssh, git:// and local remotes authenticate otherwise or not at all.
 */
export const remoteTakesToken = (remote: string): boolean => /^https?:\/\//i.test(remote);

/**
 * The basic-auth pair git sends for a forge token: the remote URL's own user if it names one, else
 * `x-access-token`, which GitHub documents for installation tokens and which GitHub, Gitea and Forgejo
 * accept for any token, since they check the password alone.
 */
export function tokenCredential(remote: string, token: string): GitCredential {
  let username = "";
  try {
    username = decodeURIComponent(new URL(remote).username);
  } catch {
    // Not a URL: the default user below.
  }
  return { username: username || "x-access-token", password: token };
}

/**
 * Clones or fast-forwards one repo. `token`, the repo's `credential_file` as the caller read it, is given
 * to the clone and the fetch (nothing else here reaches the remote) through the pipe-fed helper of
 * `gitWithCredential`, never through argv, the environment or the clone's config.
 */
export async function syncPolicyRepo(
  repo: PolicyRepoConfig,
  env: NodeJS.ProcessEnv,
  token?: string,
): Promise<SyncResult> {
  try {
    checkRemote(repo.remote);
  } catch (e) {
    throw new PolicySyncError(repo.name, (e as Error).message, { cause: e });
  }
  if (repo.branch !== undefined) checkBranch(repo.name, repo.branch);
  const dir = policyClonePath(env, repo.name);
  fs.mkdirSync(policyRoot(env), { recursive: true, mode: 0o700 });
  // Two syncs of one repo at once would race on FETCH_HEAD and the branch: the second one refuses.
  let lock: StoreLock;
  try {
    lock = acquireStoreLock(dir, `harness policy sync (pid ${process.pid})`);
  } catch (e) {
    if (!(e instanceof StoreLockedError)) throw e;
    throw new PolicySyncError(
      repo.name,
      `another sync holds it (process ${e.pid}, ${dir}.lock); try again when it ends`,
    );
  }
  try {
    const credential =
      token !== undefined && remoteTakesToken(repo.remote) ? tokenCredential(repo.remote, token) : undefined;
    if (!fs.existsSync(dir)) return await clone(repo, dir, env, credential);
    if (!fs.existsSync(path.join(dir, ".git")))
      throw new PolicySyncError(
        repo.name,
        `${dir} exists and is not a git clone; move it away and sync again`,
      );
    return await fastForward(repo, dir, env, credential);
  } catch (e) {
    if (e instanceof PolicySyncError) throw e;
    throw new PolicySyncError(repo.name, (e as Error).message, { cause: e });
  } finally {
    lock.release();
  }
}

/** A fresh clone, made beside its place and renamed into it, so a failed clone leaves nothing behind. */
/** A git command that reaches the remote: with the repo's credential when it has one. */
const reach = (
  args: readonly string[],
  o: GitOptions,
  credential: GitCredential | undefined,
): Promise<string> => (credential === undefined ? git(args, o) : gitWithCredential(args, o, credential));

async function clone(
  repo: PolicyRepoConfig,
  dir: string,
  env: NodeJS.ProcessEnv,
  credential: GitCredential | undefined,
): Promise<SyncResult> {
  const tmp = fs.mkdtempSync(path.join(policyRoot(env), `.${repo.name}.sync-`));
  try {
    await reach(["clone", "--quiet", "--origin", "origin", "--", repo.remote, tmp], remote(env), credential);
    const o = remote(env, tmp);
    const defaultBranch = (await git(["symbolic-ref", "--short", "-q", "HEAD"], o)).trim();
    await git(["config", DEFAULT_BRANCH_KEY, defaultBranch], o);
    const branch = repo.branch ?? defaultBranch;
    if (branch !== defaultBranch) {
      const start = await revParse(tmp, `refs/remotes/origin/${branch}`, env);
      if (start === undefined) throw new PolicySyncError(repo.name, `the remote has no branch ${branch}`);
      await git(["switch", "--quiet", "--create", branch, start], o);
    }
    const commit = await revParse(tmp, "HEAD", env);
    if (commit === undefined) throw new PolicySyncError(repo.name, `the remote's ${branch} has no commits`);
    fs.renameSync(tmp, dir);
    return {
      repo: repo.name,
      dir,
      branch,
      action: "cloned",
      from: undefined,
      commit,
      switchedFrom: undefined,
    };
  } catch (e) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (e instanceof PolicySyncError) throw e;
    throw new PolicySyncError(repo.name, (e as Error).message, { cause: e });
  }
}

async function fastForward(
  repo: PolicyRepoConfig,
  dir: string,
  env: NodeJS.ProcessEnv,
  credential: GitCredential | undefined,
): Promise<SyncResult> {
  const o = remote(env, dir);
  const branch = await servedBranch(dir, repo.branch, env);
  if (branch === undefined)
    throw new PolicySyncError(
      repo.name,
      `no branch is configured and the clone records no default branch (${DEFAULT_BRANCH_KEY}); set branch in [policy_repo.${repo.name}]`,
    );
  checkBranch(repo.name, branch);
  // Dirty on the branch or off it: sync neither carries edits along nor throws them away.
  const changes = await uncommittedChanges(dir, env);
  if (changes !== undefined) throw new DirtyCloneError(repo.name, dir, changes);
  // Only whether HEAD is on the branch matters here: the tree was just checked clean.
  const head = (await git(["symbolic-ref", "-q", "HEAD"], o).catch((e: unknown) => notFound(e) ?? "")).trim();
  await reach(
    ["fetch", "--quiet", "--no-tags", "--no-recurse-submodules", "--", repo.remote, `refs/heads/${branch}`],
    o,
    credential,
  );
  const fetched = await revParse(dir, "FETCH_HEAD", env);
  if (fetched === undefined) throw new PolicySyncError(repo.name, `the remote's ${branch} names no commit`);
  const local = await revParse(dir, `refs/heads/${branch}`, env);
  if (
    local !== undefined &&
    local !== fetched &&
    !(await gitTest(["merge-base", "--is-ancestor", local, fetched], o))
  )
    throw new DivergedCloneError(repo.name, branch, local, fetched);
  let switchedFrom: string | undefined;
  if (head !== `refs/heads/${branch}`) {
    // A clean clone moved off its branch by hand goes back to it: nothing in the working tree is lost.
    switchedFrom = head.replace(/^refs\/heads\//, "") || "detached";
    if (local === undefined) await git(["switch", "--quiet", "--create", branch, fetched], o);
    else {
      await git(["update-ref", `refs/heads/${branch}`, fetched, local], o);
      await git(["switch", "--quiet", branch], o);
    }
  } else if (local !== fetched) await git(["merge", "--quiet", "--ff-only", fetched], o);
  await git(["update-ref", `refs/remotes/origin/${branch}`, fetched], o);
  return {
    repo: repo.name,
    dir,
    branch,
    action: local === fetched ? "up_to_date" : "fast_forwarded",
    from: local === fetched ? undefined : local,
    commit: fetched,
    switchedFrom,
  };
}
