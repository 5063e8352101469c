import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { branchProblem, remoteProblem } from "../../../src/shell/config/git-refs.js";
import { policyClonePath, policyRoot } from "../../../src/shell/config/paths.js";
import { DEFAULT_BRANCH_KEY, inspectClone } from "../../../src/shell/policy/clone.js";
import { GitError, git, RefusedRemoteError } from "../../../src/shell/policy/git.js";
import {
  DirtyCloneError,
  DivergedCloneError,
  PolicySyncError,
  syncPolicyRepo,
} from "../../../src/shell/policy/sync.js";
import { gitIn, PolicyRemote, ruleText, snapshot, tempRoot } from "./git-fixtures.js";

describe("REQ-1: a remote URL is data, not a command", () => {
  it("accepts https, ssh, git, file and absolute local paths", () => {
    for (const remote of [
      "https://forge.example/org/policy.git",
      "ssh://git@forge.example:22/org/policy.git",
      "git@forge.example:org/policy.git",
      "git://forge.example/policy.git",
      "file:///srv/git/policy.git",
      "/srv/git/policy.git",
    ])
      expect(remoteProblem(remote), remote).toBeUndefined();
  });

  it("refuses transport helpers, options, other schemes and relative paths", () => {
    expect(remoteProblem("ext::sh -c touch% /tmp/pwned")).toMatch(/transport helper/);
    expect(remoteProblem("fd::3")).toMatch(/transport helper/);
    expect(remoteProblem("-uhelp")).toMatch(/option/);
    expect(remoteProblem("--upload-pack=touch /tmp/x")).toMatch(/option/);
    expect(remoteProblem("http://forge.example/policy.git")).toMatch(/scheme http/);
    expect(remoteProblem("policy.git")).toMatch(/relative path/);
    expect(remoteProblem("")).toBe("empty");
  });

  it("refuses an ext:: remote before git runs, and clones nothing", async () => {
    const { root, env } = tempRoot();
    const marker = path.join(root, "pwned");
    const remote = new PolicyRemote(root, "evil");
    const e = await syncPolicyRepo(remote.config({ remote: `ext::sh -c touch% ${marker}` }), env).catch(
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(PolicySyncError);
    expect((e as PolicySyncError).cause).toBeInstanceOf(RefusedRemoteError);
    expect((e as Error).message).toMatch(/^policy repo evil: refused remote .*transport helper/);
    expect(fs.existsSync(marker)).toBe(false);
    expect(fs.existsSync(policyRoot(env))).toBe(false);
  });

  it("has git itself refuse ext:: too, should a URL reach it unchecked", async () => {
    const { root, env } = tempRoot();
    const marker = path.join(root, "pwned");
    const e = await git(["ls-remote", "--", `ext::sh -c touch% ${marker}`], { mode: "remote", env }).catch(
      (x: unknown) => x as Error,
    );
    expect((e as Error).message).toMatch(/transport 'ext' not allowed/);
    expect(fs.existsSync(marker)).toBe(false);
  });
});

describe("a branch is a name, not a refspec", () => {
  it("accepts branch names and refuses what would name a second ref or an option", () => {
    for (const ok of ["main", "release/2026", "ops-v1.2"]) expect(branchProblem(ok), ok).toBeUndefined();
    for (const bad of [
      "main:refs/heads/evil",
      "-f",
      "a..b",
      "a b",
      "x.lock",
      "a/",
      "/a",
      ".hidden",
      "a@{1}",
      "",
    ])
      expect(branchProblem(bad), bad).toBeDefined();
  });

  it("refuses a configured branch that is a refspec before git runs", async () => {
    const { root, env } = tempRoot();
    const remote = new PolicyRemote(root, "ops");
    remote.commit({ "rules/a.toml": ruleText("a") });
    await expect(syncPolicyRepo(remote.config({ branch: "main:refs/heads/evil" }), env)).rejects.toThrow(
      /^policy repo ops: branch "main:refs\/heads\/evil" contains a space, a control character or one of/,
    );
    expect(fs.existsSync(policyRoot(env))).toBe(false);
  });

  it("keeps a remote's password out of git's error messages", async () => {
    const { env } = tempRoot();
    const e = (await git(["ls-remote", "--", "https://op:s3cret@127.0.0.1:9/x.git"], {
      mode: "remote",
      env,
      timeoutMs: 10_000,
    }).catch((x: unknown) => x)) as Error;
    expect(e).toBeInstanceOf(GitError);
    expect(e.message).toContain("https://***@127.0.0.1:9/x.git");
    expect(e.message).not.toContain("s3cret");
  });
});

describe("REQ-1: harness policy sync", () => {
  it("clones into $XDG_STATE_HOME/harness/policy/<name>/, recording the remote's default branch", async () => {
    const { root, env } = tempRoot();
    const remote = new PolicyRemote(root, "ops", "trunk");
    const commit = remote.commit({ "rules/churn.toml": ruleText("churn") });
    const r = await syncPolicyRepo(remote.config(), env);
    const dir = policyClonePath(env, "ops");
    expect(dir).toBe(path.join(root, "state", "harness", "policy", "ops"));
    expect(r).toMatchObject({ repo: "ops", dir, branch: "trunk", action: "cloned", commit });
    expect(gitIn(dir, "config", "--get", DEFAULT_BRANCH_KEY)).toBe("trunk");
    expect(fs.readFileSync(path.join(dir, "rules", "churn.toml"), "utf8")).toBe(ruleText("churn"));
    // Nothing of the temporary clone is left beside it.
    expect(fs.readdirSync(policyRoot(env))).toEqual(["ops"]);
  });

  it("clones a configured branch other than the default", async () => {
    const { root, env } = tempRoot();
    const remote = new PolicyRemote(root, "ops");
    remote.commit({ "rules/a.toml": ruleText("a") });
    gitIn(remote.work, "push", "--quiet", "origin", "HEAD:refs/heads/release");
    const r = await syncPolicyRepo(remote.config({ branch: "release" }), env);
    expect(r).toMatchObject({ branch: "release", action: "cloned" });
    expect(gitIn(r.dir, "symbolic-ref", "--short", "HEAD")).toBe("release");
    await expect(
      syncPolicyRepo({ ...remote.config({ branch: "nope" }), name: "other" }, env),
    ).rejects.toThrow(/^policy repo other: the remote has no branch nope$/);
    expect(fs.existsSync(policyClonePath(env, "other"))).toBe(false);
  });

  it("fetches and fast-forwards, and says when the branch is up to date", async () => {
    const { root, env } = tempRoot();
    const remote = new PolicyRemote(root, "ops");
    const first = remote.commit({ "rules/a.toml": ruleText("a") });
    await syncPolicyRepo(remote.config(), env);
    const second = remote.commit({ "rules/b.toml": ruleText("b") });
    const r = await syncPolicyRepo(remote.config(), env);
    expect(r).toMatchObject({ action: "fast_forwarded", from: first, commit: second, branch: "main" });
    expect(gitIn(r.dir, "rev-parse", "HEAD")).toBe(second);
    expect(gitIn(r.dir, "rev-parse", "refs/remotes/origin/main")).toBe(second);
    expect(fs.existsSync(path.join(r.dir, "rules", "b.toml"))).toBe(true);
    expect(await syncPolicyRepo(remote.config(), env)).toMatchObject({
      action: "up_to_date",
      commit: second,
    });
  });

  it("fails on a non-fast-forward and leaves the clone untouched: HEAD, refs and working tree", async () => {
    const { root, env } = tempRoot();
    const remote = new PolicyRemote(root, "ops");
    const local = remote.commit({ "rules/a.toml": ruleText("a") });
    const { dir } = await syncPolicyRepo(remote.config(), env);
    const before = snapshot(dir);
    const rewritten = remote.rewrite({ "rules/z.toml": ruleText("z") });
    const e = await syncPolicyRepo(remote.config(), env).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DivergedCloneError);
    expect(e).toMatchObject({ repo: "ops", branch: "main", local, remote: rewritten });
    expect((e as Error).message).toMatch(
      /diverged policy clone: main is at .* not a fast-forward; the clone is left as it is/,
    );
    expect(snapshot(dir)).toBe(before);
  });

  it("fails on a clone ahead of its remote (a local commit), leaving it as it is", async () => {
    const { root, env } = tempRoot();
    const remote = new PolicyRemote(root, "ops");
    remote.commit({ "rules/a.toml": ruleText("a") });
    const { dir } = await syncPolicyRepo(remote.config(), env);
    fs.writeFileSync(path.join(dir, "rules", "b.toml"), ruleText("b"));
    gitIn(dir, "add", "rules/b.toml");
    gitIn(dir, "commit", "--quiet", "-m", "local");
    const before = snapshot(dir);
    await expect(syncPolicyRepo(remote.config(), env)).rejects.toBeInstanceOf(DivergedCloneError);
    expect(snapshot(dir)).toBe(before);
  });

  it("refuses a clone with uncommitted edits before it fetches, leaving the edits", async () => {
    const { root, env } = tempRoot();
    const remote = new PolicyRemote(root, "ops");
    remote.commit({ "rules/churn.toml": ruleText("churn") });
    const { dir } = await syncPolicyRepo(remote.config(), env);
    remote.commit({ "rules/b.toml": ruleText("b") });
    fs.appendFileSync(path.join(dir, "rules", "churn.toml"), "# edited by hand\n");
    const before = snapshot(dir);
    const e = await syncPolicyRepo(remote.config(), env).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DirtyCloneError);
    expect((e as Error).message).toMatch(
      /the clone has 1 uncommitted change \(rules\/churn\.toml\); commit, stash or discard/,
    );
    expect(snapshot(dir)).toBe(before);
  });

  it("refuses a clone switched off its branch with edits in it, leaving both", async () => {
    const { root, env } = tempRoot();
    const remote = new PolicyRemote(root, "ops");
    remote.commit({ "rules/a.toml": ruleText("a") });
    const { dir } = await syncPolicyRepo(remote.config(), env);
    gitIn(dir, "switch", "--quiet", "--create", "experiment");
    fs.writeFileSync(path.join(dir, "rules", "new.toml"), ruleText("new"));
    remote.commit({ "rules/b.toml": ruleText("b") });
    const before = snapshot(dir);
    await expect(syncPolicyRepo(remote.config(), env)).rejects.toBeInstanceOf(DirtyCloneError);
    expect(snapshot(dir)).toBe(before);
  });

  it("moves a clean clone that was switched off its branch back to it, fast-forwarded", async () => {
    const { root, env } = tempRoot();
    const remote = new PolicyRemote(root, "ops");
    remote.commit({ "rules/a.toml": ruleText("a") });
    const { dir } = await syncPolicyRepo(remote.config(), env);
    gitIn(dir, "switch", "--quiet", "--create", "experiment");
    const next = remote.commit({ "rules/b.toml": ruleText("b") });
    const r = await syncPolicyRepo(remote.config(), env);
    expect(r).toMatchObject({ action: "fast_forwarded", commit: next, switchedFrom: "experiment" });
    expect(gitIn(dir, "symbolic-ref", "--short", "HEAD")).toBe("main");
    expect(gitIn(dir, "rev-parse", "HEAD")).toBe(next);
  });

  it("ignores the GIT_* variables of a calling hook, which would point git at another repository", async () => {
    const { root, env } = tempRoot();
    const remote = new PolicyRemote(root, "ops");
    const commit = remote.commit({ "rules/a.toml": ruleText("a") });
    const other = new PolicyRemote(root, "other");
    const otherHead = other.commit({ "x.txt": "x" });
    const hooked = {
      ...env,
      GIT_DIR: path.join(other.work, ".git"),
      GIT_WORK_TREE: other.work,
      GIT_INDEX_FILE: path.join(root, "no-such-index"),
    };
    const r = await syncPolicyRepo(remote.config(), hooked);
    expect(r).toMatchObject({ action: "cloned", commit });
    expect(await inspectClone(r.dir, undefined, hooked)).toMatchObject({ state: "clean", head: commit });
    expect(await syncPolicyRepo(remote.config(), hooked)).toMatchObject({ action: "up_to_date" });
    expect(gitIn(other.work, "rev-parse", "HEAD")).toBe(otherHead);
    expect(gitIn(other.work, "status", "--porcelain")).toBe("");
  });

  it("lets one sync of a repo run at a time: a second one refuses, and the lock goes with the first", async () => {
    const { root, env } = tempRoot();
    const remote = new PolicyRemote(root, "ops");
    remote.commit({ "rules/a.toml": ruleText("a") });
    const [first, second] = await Promise.allSettled([
      syncPolicyRepo(remote.config(), env),
      syncPolicyRepo(remote.config(), env),
    ]);
    expect(first).toMatchObject({ status: "fulfilled", value: { action: "cloned" } });
    expect(second.status === "rejected" && (second.reason as Error).message).toMatch(
      /^policy repo ops: another sync holds it \(process \d+, .*ops\.lock\); try again when it ends$/,
    );
    expect(fs.readdirSync(policyRoot(env))).toEqual(["ops"]);
    expect(await syncPolicyRepo(remote.config(), env)).toMatchObject({ action: "up_to_date" });
  });

  it("refuses a directory in the clone's place that is not a clone", async () => {
    const { root, env } = tempRoot();
    const remote = new PolicyRemote(root, "ops");
    remote.commit({ "rules/a.toml": ruleText("a") });
    fs.mkdirSync(policyClonePath(env, "ops"), { recursive: true });
    await expect(syncPolicyRepo(remote.config(), env)).rejects.toThrow(/exists and is not a git clone/);
  });
});
