import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { RuleLoad } from "../../../src/core/compile-rule.js";
import {
  MAX_RULE_FILE_BYTES,
  MAX_RULE_FILES_PER_REPO,
  ruleFilePastLimit,
  ruleFileTooLarge,
} from "../../../src/core/rule-file-bytes.js";
import { type GlobalConfig, loadGlobalConfig } from "../../../src/shell/config/global-config.js";
import { policyClonePath } from "../../../src/shell/config/paths.js";
import { PolicyRuleSource } from "../../../src/shell/policy/clone-rules.js";
import { loadRuleSet } from "../../../src/shell/policy/rule-source.js";
import { syncPolicyRepo } from "../../../src/shell/policy/sync.js";
import { promised } from "../../../src/shell/store/async-port.js";
import { LastGoodCommits } from "../../../src/shell/store/last-good-commits.js";
import { openStore } from "../../../src/shell/store/open-store.js";
import { gitIn, PolicyRemote, ruleText, tempRoot } from "./git-fixtures.js";

const names = (loads: readonly RuleLoad[]) =>
  loads.map((l) => (l.ok ? l.rule.spec.name : `!${l.problem.file}:${l.problem.reason}`));

function globalConfig(env: NodeJS.ProcessEnv): GlobalConfig {
  const r = loadGlobalConfig("", "harness.toml", env);
  if (!r.ok) throw new Error("the empty config loads");
  return r.config;
}

/** A policy source over a fresh store; `restart` opens a new one over the same store, as a new daemon would. */
function source(root: string, env: NodeJS.ProcessEnv) {
  const file = path.join(root, "state", "harness", "harness.db");
  let store = openStore(file, "test");
  const make = () => new PolicyRuleSource(promised(new LastGoodCommits(store.db)), env, () => 1_000);
  return {
    src: make(),
    restart() {
      store.close();
      store = openStore(file, "test");
      return make();
    },
    close: () => store.close(),
  };
}

describe("REQ-2: the policy rule source and the default-branch gate", () => {
  it("reads rules/<name>.toml at the top level only, from the clone's branch tip", async () => {
    const { root, env } = tempRoot();
    const remote = new PolicyRemote(root, "ops");
    const commit = remote.commit({
      "rules/churn.toml": ruleText("churn"),
      "rules/b.toml": ruleText("b"),
      "rules/nested/deep.toml": ruleText("deep"),
      "rules/README.md": "not a rule",
      "tests/churn.toml": "not = 'a rule'",
      "weights/models.toml": "schema = 1",
      "top.toml": ruleText("top"),
    });
    await syncPolicyRepo(remote.config(), env);
    const s = source(root, env);
    try {
      const r = await s.src.load([remote.config()]);
      expect(r.clones).toEqual([
        { name: "ops", state: "clean", detail: `main at ${commit.slice(0, 12)}`, served: commit },
      ]);
      expect(r.policy.map((p) => [p.repo, names(p.loads)])).toEqual([["ops", ["b", "churn"]]]);
    } finally {
      s.close();
    }
  });

  it("reads the first 1,000 rule files by name and disables the rest unread, as lint does", async () => {
    const { root, env } = tempRoot();
    const remote = new PolicyRemote(root, "ops");
    const files: Record<string, string> = {};
    for (let i = 0; i < MAX_RULE_FILES_PER_REPO + 5; i++) {
      const name = `r${String(i).padStart(4, "0")}`;
      files[`rules/${name}.toml`] = ruleText(name);
    }
    remote.commit(files);
    await syncPolicyRepo(remote.config(), env);
    const s = source(root, env);
    try {
      const [ops] = (await s.src.load([remote.config()])).policy;
      const loads = ops?.loads ?? [];
      expect(loads.filter((l) => l.ok)).toHaveLength(MAX_RULE_FILES_PER_REPO);
      const refused = loads.flatMap((l) => (l.ok ? [] : [l.problem]));
      expect(refused.map((p) => p.file)).toEqual(
        [1000, 1001, 1002, 1003, 1004].map((i) => `rules/r${i}.toml`),
      );
      expect(refused.every((p) => p.message === ruleFilePastLimit(p.file).message)).toBe(true);
    } finally {
      s.close();
    }
  }, 120_000);

  it("A clean clone whose rule file is broken disables only that rule (a compile error, bad UTF-8, an oversized file)", async () => {
    const { root, env } = tempRoot();
    const remote = new PolicyRemote(root, "ops");
    remote.commit({
      "rules/churn.toml": ruleText("churn", 'event.outcom == "failed"'),
      "rules/fine.toml": ruleText("fine"),
    });
    fs.writeFileSync(path.join(remote.work, "rules", "binary.toml"), Buffer.from([0x6e, 0x3d, 0xff, 0xfe]));
    fs.writeFileSync(path.join(remote.work, "rules", "huge.toml"), `# ${"x".repeat(MAX_RULE_FILE_BYTES)}\n`);
    remote.commit({});
    await syncPolicyRepo(remote.config(), env);
    const s = source(root, env);
    try {
      const r = await s.src.load([remote.config()]);
      expect(r.clones[0]?.state).toBe("clean");
      const set = loadRuleSet(globalConfig(env), r.policy);
      expect(set.rules.filter((x) => x.source.kind === "policy").map((x) => x.rule.spec.name)).toEqual([
        "fine",
      ]);
      expect(set.disabled.map((d) => [d.name, d.source, d.reason, d.message])).toEqual([
        ["binary", { kind: "policy", repo: "ops" }, "schema", "the file is not valid UTF-8"],
        ["churn", { kind: "policy", repo: "ops" }, "compile", expect.stringMatching(/outcom/)],
        [
          "huge",
          { kind: "policy", repo: "ops" },
          "schema",
          // The same reason lint and backtest give a file over the core's limit.
          ruleFileTooLarge("rules/huge.toml").message,
        ],
      ]);
    } finally {
      s.close();
    }
  });

  it("A dirty clone keeps the last good rules, from git's objects, also after a restart", async () => {
    const { root, env } = tempRoot();
    const remote = new PolicyRemote(root, "ops");
    const good = remote.commit({ "rules/churn.toml": ruleText("churn"), "rules/b.toml": ruleText("b") });
    const { dir } = await syncPolicyRepo(remote.config(), env);
    const s = source(root, env);
    try {
      const before = await s.src.load([remote.config()]);
      // By hand, without committing: a broken churn and a new rule in the working tree.
      fs.writeFileSync(path.join(dir, "rules", "churn.toml"), "broken = [");
      fs.writeFileSync(path.join(dir, "rules", "new.toml"), ruleText("new"));
      const dirty = await s.src.load([remote.config()]);
      expect(dirty.clones[0]).toMatchObject({ state: "dirty", served: good });
      expect(dirty.clones[0]?.detail).toMatch(
        /^2 uncommitted changes \(rules\/churn\.toml, rules\/new\.toml\); serving last good commit/,
      );
      expect(dirty.policy).toEqual(before.policy);
      const restarted = s.restart();
      const after = await restarted.load([remote.config()]);
      expect(after.clones[0]).toMatchObject({ state: "dirty", served: good });
      expect(after.policy.map((p) => names(p.loads))).toEqual([["b", "churn"]]);
      const churn = after.policy[0]?.loads.find((l) => l.ok && l.rule.spec.name === "churn");
      expect(churn?.ok && churn.rule.spec.when).toBe('event.type == "edge_added" && event.edge == "edited"');
    } finally {
      s.close();
    }
  });

  it("An off-branch HEAD keeps the last good rules", async () => {
    const { root, env } = tempRoot();
    const remote = new PolicyRemote(root, "ops");
    const good = remote.commit({ "rules/churn.toml": ruleText("churn") });
    const { dir } = await syncPolicyRepo(remote.config(), env);
    const s = source(root, env);
    try {
      await s.src.load([remote.config()]);
      gitIn(dir, "switch", "--quiet", "--create", "experiment");
      fs.writeFileSync(path.join(dir, "rules", "other.toml"), ruleText("other"));
      gitIn(dir, "add", ".");
      gitIn(dir, "commit", "--quiet", "-m", "experiment");
      const r = await s.src.load([remote.config()]);
      expect(r.clones[0]).toMatchObject({ state: "off_branch", served: good });
      expect(r.clones[0]?.detail).toMatch(/^HEAD is on experiment, not main; serving last good commit/);
      expect(r.policy.map((p) => names(p.loads))).toEqual([["churn"]]);
      gitIn(dir, "switch", "--quiet", "--detach", "HEAD");
      expect((await s.src.load([remote.config()])).clones[0]?.detail).toMatch(
        /^HEAD is detached at [0-9a-f]{12}, not main/,
      );
    } finally {
      s.close();
    }
  });

  it("serves nothing from a dirty clone it never loaded clean, and nothing from a missing one", async () => {
    const { root, env } = tempRoot();
    const remote = new PolicyRemote(root, "ops");
    remote.commit({ "rules/churn.toml": ruleText("churn") });
    const never = new PolicyRemote(root, "never");
    const { dir } = await syncPolicyRepo(remote.config(), env);
    fs.appendFileSync(path.join(dir, "rules", "churn.toml"), "# edit\n");
    const s = source(root, env);
    try {
      const r = await s.src.load([never.config(), remote.config()]);
      expect(r.policy).toEqual([]);
      expect(r.clones).toEqual([
        {
          name: "never",
          state: "missing",
          detail: `no clone at ${policyClonePath(env, "never")}; run harness policy sync never`,
          served: undefined,
        },
        {
          name: "ops",
          state: "dirty",
          detail: "1 uncommitted change (rules/churn.toml); no rules served (no clean commit loaded yet)",
          served: undefined,
        },
      ]);
    } finally {
      s.close();
    }
  });

  it("reports a clone git cannot read, rather than taking it for one without a branch", async () => {
    const { root, env } = tempRoot();
    const remote = new PolicyRemote(root, "ops");
    remote.commit({ "rules/churn.toml": ruleText("churn") });
    await syncPolicyRepo(remote.config(), env);
    const s = source(root, { ...env, PATH: path.join(root, "no-git-here") });
    try {
      const r = await s.src.load([remote.config()]);
      expect(r.policy).toEqual([]);
      expect(r.clones[0]).toMatchObject({ name: "ops", state: "missing", served: undefined });
      expect(r.clones[0]?.detail).toMatch(/^cannot read the clone at .*: git .*: cannot run git: .*ENOENT/);
    } finally {
      s.close();
    }
  });

  it("One name in two policy repos disables both with duplicate_name", async () => {
    const { root, env } = tempRoot();
    const ops = new PolicyRemote(root, "ops");
    const sec = new PolicyRemote(root, "sec");
    ops.commit({ "rules/churn.toml": ruleText("churn"), "rules/a.toml": ruleText("a") });
    sec.commit({ "rules/churn.toml": ruleText("churn", 'event.type == "edge_ended"') });
    await syncPolicyRepo(ops.config(), env);
    await syncPolicyRepo(sec.config(), env);
    const s = source(root, env);
    try {
      const r = await s.src.load([ops.config(), sec.config()]);
      const set = loadRuleSet(globalConfig(env), r.policy);
      expect(set.rules.map((x) => x.rule.spec.name)).toContain("a");
      expect(set.rules.map((x) => x.rule.spec.name)).not.toContain("churn");
      expect(set.disabled).toMatchObject([{ name: "churn", reason: "duplicate_name" }]);
    } finally {
      s.close();
    }
  });
});
