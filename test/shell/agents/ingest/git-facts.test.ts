/**
 * `repo` and `branch` through the git wrapper, read once per `cwd` and read again only when what git
 * read them from changed (checked by `stat` on every call).
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  type FactsResult,
  type GitFactsMetrics,
  GitFactsReader,
  type GitPoolLimits,
} from "../../../../src/shell/agents/ingest/git-facts.js";
import { makeRepo } from "../hook-harness.js";

const repo = makeRepo();
afterAll(() => fs.rmSync(repo, { recursive: true, force: true }));
const env = { PATH: process.env.PATH };
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    env: { ...env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
  });

/**
 * A reader that waits for git as long as a test may: only the test of the wait itself depends on how long
 * git takes, so the others hold on a loaded machine, where one git read can take longer than `waitMs`.
 */
const PATIENT = { limits: { waitMs: 60_000 } };

/** A reader whose git can be taken away: with no PATH, a git run gives no facts at all. */
function readerWithSwitchableGit() {
  const readerEnv: NodeJS.ProcessEnv = { ...env };
  return {
    reader: new GitFactsReader(readerEnv, PATIENT),
    gitGone: () => {
      readerEnv.PATH = "";
    },
    gitBack: () => {
      readerEnv.PATH = env.PATH;
    },
  };
}

describe("git facts", () => {
  it("the top level, the origin as host/owner/name without its password, and the branch", async () => {
    const facts = await new GitFactsReader(env, PATIENT).facts(`${repo}/src`);
    expect(facts).toEqual({ top: repo, realTop: repo, repo: "forge.example/org/reduit", branch: "feature" });
  });

  it("outside a repository: no facts, no error", async () => {
    expect(await new GitFactsReader(env, PATIENT).facts("/")).toEqual({});
    expect(await new GitFactsReader(env, PATIENT).facts("/no/such/dir")).toEqual({});
  });

  it("while nothing changed, no git runs: the answer is the cached one", async () => {
    const { reader, gitGone } = readerWithSwitchableGit();
    const first = await reader.facts(repo);
    expect(first.branch).toBe("feature");
    gitGone();
    // A commit writes inside .git without changing HEAD's branch: still no git needed.
    fs.writeFileSync(path.join(repo, "src", "b.ts"), "b\n");
    git(repo, "add", ".");
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "b");
    for (let i = 0; i < 3; i++) expect(await reader.facts(repo)).toEqual(first);
  });

  it("a branch switch shows at the next call", async () => {
    const { reader } = readerWithSwitchableGit();
    expect((await reader.facts(repo)).branch).toBe("feature");
    git(repo, "checkout", "-q", "-b", "other");
    try {
      expect((await reader.facts(repo)).branch).toBe("other");
    } finally {
      git(repo, "checkout", "-q", "feature");
    }
    expect((await reader.facts(repo)).branch).toBe("feature");
  });

  it("a new origin shows at the next call", async () => {
    const { reader } = readerWithSwitchableGit();
    expect((await reader.facts(repo)).repo).toBe("forge.example/org/reduit");
    git(repo, "remote", "set-url", "origin", "git@forge.example:org/renamed.git");
    try {
      expect((await reader.facts(repo)).repo).toBe("forge.example/org/renamed");
    } finally {
      git(repo, "remote", "set-url", "origin", "https://forge.example/org/reduit.git");
    }
  });

  it("a repository made inside the cwd's repository, or made where there was none, shows at the next call", async () => {
    const { reader } = readerWithSwitchableGit();
    const nested = path.join(repo, "vendor", "lib");
    fs.mkdirSync(nested, { recursive: true });
    try {
      expect((await reader.facts(nested)).top).toBe(repo);
      git(path.join(repo, "vendor"), "init", "-q", "-b", "vend");
      expect(await reader.facts(nested)).toMatchObject({ top: path.join(repo, "vendor"), branch: "vend" });
      fs.rmSync(path.join(repo, "vendor", ".git"), { recursive: true });
      expect((await reader.facts(nested)).top).toBe(repo);
    } finally {
      fs.rmSync(path.join(repo, "vendor"), { recursive: true, force: true });
    }
  });
});

/** A reader whose reports are counted: how each call's facts were found, and the most children at once. */
function countingReader(limits: Partial<GitPoolLimits>) {
  const results: FactsResult[] = [];
  let peakChildren = 0;
  const metrics: GitFactsMetrics = {
    gitFacts: { inc: ({ result }) => results.push(result) },
    gitChildren: { set: (n) => (peakChildren = Math.max(peakChildren, n)) },
    gitQueued: { set: () => undefined },
    gitCached: { set: () => undefined },
  };
  return {
    reader: new GitFactsReader(env, { limits: { ...PATIENT.limits, ...limits }, metrics }),
    results,
    peak: () => peakChildren,
  };
}

describe("git facts: bounded (issue 26, findings 3 and 6)", () => {
  it("finding 6: past the pool's children and queue a call gets no facts at once, git not run for it", async () => {
    const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "harness-git-pool-")));
    try {
      const repos = ["a", "b", "c"].map((n) => {
        fs.mkdirSync(path.join(scratch, n));
        git(path.join(scratch, n), "init", "-q", "-b", n);
        return path.join(scratch, n);
      });
      const { reader, results, peak } = countingReader({ children: 1, queued: 1 });
      const facts = await Promise.all(repos.map((r) => reader.facts(r)));
      expect(facts.map((f) => f.branch)).toEqual(["a", "b", undefined]);
      expect(results.sort()).toEqual(["read", "read", "saturated"]);
      expect(peak()).toBe(1);
      // Not cached as empty: asked again, the third is read.
      expect((await reader.facts(repos[2] as string)).branch).toBe("c");
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });

  it("finding 6: a call waits at most waitMs, then goes on without facts; the read fills the cache for the next call", async () => {
    const { reader, results } = countingReader({ waitMs: 0 });
    expect(await reader.facts(repo)).toEqual({});
    // Calls while the one read runs go on without facts too; once it is done, they are the cached ones.
    let facts = await reader.facts(`${repo}/src`);
    // Until a call finds the cache filled: one made just as the read ends waits for it and counts `read`.
    for (let i = 0; i < 500 && (facts.branch === undefined || results.at(-1) !== "cached"); i++) {
      await new Promise((r) => setTimeout(r, 10));
      facts = await reader.facts(`${repo}/src`);
    }
    expect(facts.branch).toBe("feature");
    expect(results[0]).toBe("late");
    expect(results.at(-1)).toBe("cached");
    // A call made just as the read ends may still see it in flight, wait for it and count `read`.
    expect(results.every((r) => r === "late" || r === "read" || r === "cached")).toBe(true);
  });

  it("finding 6: the cache is keyed by the repository, not the cwd: its subdirectories run no git of their own", async () => {
    const { reader, results } = countingReader({});
    await reader.facts(repo);
    for (const sub of ["src", "src/", "src/../src"])
      expect((await reader.facts(`${repo}/${sub}`)).top).toBe(repo);
    expect(results).toEqual(["read", "cached", "cached", "cached"]);
  });

  it("finding 3: a cwd past 4096 characters or 128 components, or in no repository, runs no git and has no facts", async () => {
    const { reader, results, peak } = countingReader({});
    expect(await reader.facts("/a".repeat(20_000))).toEqual({});
    expect(await reader.facts(`${repo}${"/d".repeat(200)}`)).toEqual({});
    expect(await reader.facts(os.tmpdir())).toEqual({});
    expect(results).toEqual(["none", "none", "none"]);
    expect(peak()).toBe(0);
  });
});

describe("git facts: where the repository is", () => {
  it("a cwd reached through a symlink from outside any repository is in the repository it leads into, as git finds it", async () => {
    const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "harness-git-link-")));
    try {
      fs.symlinkSync(path.join(repo, "src"), path.join(outside, "link"));
      const facts = await new GitFactsReader(env, PATIENT).facts(path.join(outside, "link"));
      expect(facts).toMatchObject({ top: repo, branch: "feature" });
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });
});
