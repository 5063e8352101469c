/** `repo` and `branch` through the git wrapper, reused briefly, refreshed beside the calls that use them. */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import {
  GIT_FACTS_MAX_AGE_MS,
  GIT_FACTS_TTL_MS,
  GitFactsReader,
} from "../../../src/shell/agents/git-facts.js";
import { makeRepo } from "./hook-harness.js";

const repo = makeRepo();
afterAll(() => fs.rmSync(repo, { recursive: true, force: true }));
const env = { PATH: process.env.PATH };

describe("git facts", () => {
  it("the top level, the origin as host/owner/name without its password, and the branch", async () => {
    const facts = await new GitFactsReader(env).facts(`${repo}/src`);
    expect(facts).toEqual({ top: repo, repo: "forge.example/org/reduit", branch: "feature" });
  });

  it("outside a repository: no facts, no error", async () => {
    expect(await new GitFactsReader(env).facts("/")).toEqual({});
    expect(await new GitFactsReader(env).facts("/no/such/dir")).toEqual({});
  });

  it("a branch switch shows once the answer is older than the TTL, without a call waiting for git", async () => {
    let now = 0;
    const reader = new GitFactsReader(env, () => now);
    expect((await reader.facts(repo)).branch).toBe("feature");
    execFileSync("git", ["checkout", "-q", "-b", "other"], { cwd: repo });
    now = GIT_FACTS_TTL_MS - 1;
    expect((await reader.facts(repo)).branch).toBe("feature");
    now = GIT_FACTS_TTL_MS;
    // The stale answer is given while the fresh one is read.
    expect((await reader.facts(repo)).branch).toBe("feature");
    await new Promise((r) => setTimeout(r, 500));
    await expect.poll(async () => (await reader.facts(repo)).branch, { timeout: 10_000 }).toBe("other");
    execFileSync("git", ["checkout", "-q", "feature"], { cwd: repo });
    now += GIT_FACTS_MAX_AGE_MS + 1;
    // Too old to give: the call waits for git.
    expect((await reader.facts(repo)).branch).toBe("feature");
  });
});
