/**
 * `repo` and `branch` through the git wrapper, read once per `cwd` and read again only when what git
 * read them from changed (checked by `stat` on every call).
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GitFactsReader } from "../../../src/shell/agents/git-facts.js";
import { makeRepo } from "./hook-harness.js";

const repo = makeRepo();
afterAll(() => fs.rmSync(repo, { recursive: true, force: true }));
const env = { PATH: process.env.PATH };
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    env: { ...env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
  });

/** A reader whose git can be taken away: with no PATH, a git run gives no facts at all. */
function readerWithSwitchableGit() {
  const readerEnv: NodeJS.ProcessEnv = { ...env };
  return {
    reader: new GitFactsReader(readerEnv),
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
    const facts = await new GitFactsReader(env).facts(`${repo}/src`);
    expect(facts).toEqual({ top: repo, realTop: repo, repo: "forge.example/org/reduit", branch: "feature" });
  });

  it("outside a repository: no facts, no error", async () => {
    expect(await new GitFactsReader(env).facts("/")).toEqual({});
    expect(await new GitFactsReader(env).facts("/no/such/dir")).toEqual({});
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
