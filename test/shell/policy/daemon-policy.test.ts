/**
 * Policy repos in a real daemon process, through the built CLI: `harness policy sync` with and without a
 * daemon, `PolicySynced`, the override of a starter rule, and the default-branch gate as `rules list`
 * and `doctor` show it, across a restart.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { STARTER_FILES } from "../../../src/core/starter-pack.generated.js";
import { fires } from "../../support/store-reads.js";
import { jsonl, TestFleet } from "../daemon-harness.js";
import { PolicyRemote, ruleText, tempRoot } from "./git-fixtures.js";

const fleets: TestFleet[] = [];
afterEach(async () => {
  for (const f of fleets.splice(0)) await f.dispose();
});

const starterText = (name: string) => STARTER_FILES.find(([f]) => f.endsWith(`/${name}.toml`))?.[1] as string;

/** A fleet whose global config declares `ops`, served from a bare remote inside the fleet's directory. */
function fleetWithOps(): { f: TestFleet; ops: PolicyRemote } {
  const ops = new PolicyRemote(tempRoot().root, "ops");
  const f = new TestFleet({ config: `[policy_repo.ops]\nremote = ${JSON.stringify(ops.bare)}\n` });
  fleets.push(f);
  return { f, ops };
}

interface ListedRule {
  name: string;
  source: string;
  state: string;
  file: string;
  hash?: string;
  disabled_reason?: string;
}

/** `rules list --json`, each rule by what says which copy it is (not its fire counts). */
async function listed(f: TestFleet): Promise<ListedRule[]> {
  const r = await f.cli(["rules", "list", "--json"]);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { rules: ListedRule[] }).rules.map((x) => ({
    name: x.name,
    source: x.source,
    state: x.state,
    file: x.file,
    ...(x.hash === undefined ? {} : { hash: x.hash }),
    ...(x.disabled_reason === undefined ? {} : { disabled_reason: x.disabled_reason }),
  }));
}

const collision = {
  kind: "graph_event",
  type: "collision_started",
  scope: "file",
  repo: "forge.example/org/store",
  path: "internal/store/store.go",
  harness: "review",
  run: "review#7",
  harnesses: ["impl", "review"],
  runs: ["impl#3", "review#7"],
};

describe("REQ-1, REQ-2 in a real daemon", () => {
  it("A policy rule overrides a starter rule", async () => {
    const { f, ops } = fleetWithOps();
    // The message is not hashed; the cooldown is. A copy with the starter's hash would be active as soon
    // as any row (a minute tick, say) completed the starter's shadow before the sync.
    const text = starterText("same-file-collision")
      .replace(/^message = .*$/m, 'message = "ops policy: {{run}} collided on {{path}}"')
      .replace(/^cooldown = .*$/m, 'cooldown = "45m"');
    ops.commit({ "rules/same-file-collision.toml": text });
    await f.start();
    // Declared but never synced: nothing served from it, and doctor says so.
    const before = await f.cli(["doctor"]);
    expect(before.code).toBe(0);
    expect(before.stdout).toMatch(/^WARN {2}rules .*policy clones: ops missing$/m);
    expect(before.stdout).toMatch(
      /warn: policy clone ops is missing: no clone at .*; run harness policy sync ops/,
    );
    const sync = await f.cli(["policy", "sync", "ops"]);
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stdout).toMatch(/^ops: cloned main at [0-9a-f]{12} into .*\/state\/harness\/policy\/ops$/m);
    expect(sync.stdout).toMatch(/^daemon: reloaded: 6 rules loaded, 0 disabled/m);
    const copies = (await listed(f)).filter((r) => r.name === "same-file-collision");
    // A new rule shadows first (REQ-9); the override is what matters here.
    expect(copies).toMatchObject([{ name: "same-file-collision", source: "policy:ops", state: "shadow" }]);
    const graph = f.tokens.get("graph") as string;
    await f.cli(["journal", "append", "--token-file", graph], jsonl([collision]));
    await f.until(() => fires(f).length === 1, "the fire");
    // Only the policy copy is evaluated: one fire, with its message and hash.
    expect(fires(f)).toMatchObject([
      {
        rule: "same-file-collision",
        hash: copies[0]?.hash,
        message: "ops policy: review#7 collided on internal/store/store.go",
      },
    ]);
  });

  it("A dirty clone keeps the last good rules", async () => {
    const { f, ops } = fleetWithOps();
    ops.commit({ "rules/churn.toml": ruleText("churn"), "rules/other.toml": ruleText("other") });
    expect((await f.cli(["policy", "sync"])).code).toBe(0);
    await f.start();
    const good = (await listed(f)).filter((r) => r.source === "policy:ops");
    expect(good.map((r) => [r.name, r.state])).toEqual([
      ["churn", "shadow"],
      ["other", "shadow"],
    ]);
    const clone = path.join(f.root, "state", "harness", "policy", "ops");
    // The operator edits churn by hand, without committing.
    fs.writeFileSync(
      path.join(clone, "rules", "churn.toml"),
      ruleText("churn", 'event.type == "edge_ended"').replace("Test rule", "Edited"),
    );
    expect((await f.cli(["reload"])).code).toBe(0);
    expect((await listed(f)).filter((r) => r.source === "policy:ops")).toEqual(good);
    const doctor = await f.cli(["doctor"]);
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toMatch(/^WARN {2}rules .*policy clones: ops dirty$/m);
    expect(doctor.stdout).toMatch(
      /warn: policy clone ops is dirty: 1 uncommitted change \(rules\/churn\.toml\); serving last good commit [0-9a-f]{12}/,
    );
    // The rules loaded before keep evaluating: the committed churn fires on an edit, not on an end.
    const graph = f.tokens.get("graph") as string;
    const edge = (type: string, run: string) => ({
      kind: "graph_event",
      type,
      edge: "edited",
      repo: "forge.example/org/app",
      path: "main.go",
      harness: "impl",
      run,
    });
    await f.cli(
      ["journal", "append", "--token-file", graph],
      jsonl([edge("edge_ended", "impl#1"), edge("edge_added", "impl#2")]),
    );
    await f.until(() => fires(f, { rule: "churn" }).length === 1, "churn's fire");
    expect(fires(f, { rule: "churn" })).toMatchObject([{ run: "impl#2", hash: good[0]?.hash }]);
    // After a restart beside the dirty clone, the last good commit is served, read from git.
    await f.stop();
    await f.start();
    expect((await listed(f)).filter((r) => r.source === "policy:ops")).toEqual(good);
    expect((await f.cli(["doctor"])).stdout).toMatch(/warn: policy clone ops is dirty/);
    // Sync refuses to carry the edit along; the daemon keeps serving what it served.
    const sync = await f.cli(["policy", "sync", "--json"]);
    expect(sync.code).toBe(1);
    expect(JSON.parse(sync.stdout)).toMatchObject({
      repos: [{ name: "ops", error: expect.stringMatching(/uncommitted change/) }],
      daemon: { state: "none_synced" },
    });
  });

  it("A symlinked rule file is listed disabled with its reason, and doctor warns of it", async () => {
    const { f, ops } = fleetWithOps();
    fs.mkdirSync(path.join(ops.work, "rules"), { recursive: true });
    fs.symlinkSync("churn.toml", path.join(ops.work, "rules", "alias.toml"));
    ops.commit({ "rules/churn.toml": ruleText("churn") });
    expect((await f.cli(["policy", "sync"])).code).toBe(0);
    await f.start();
    const message = "is a symlink: the daemon does not follow it; commit the rule as a regular file";
    expect((await listed(f)).find((x) => x.file === "rules/alias.toml")).toMatchObject({
      source: "policy:ops",
      state: "disabled",
      disabled_reason: "schema",
    });
    const doctor = await f.cli(["doctor"]);
    expect(doctor.stdout).toContain(message);
  });

  it("syncs with no daemon running, and the daemon loads the clone at its next start", async () => {
    const { f, ops } = fleetWithOps();
    ops.commit({ "rules/churn.toml": ruleText("churn") });
    const r = await f.cli(["policy", "sync", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      repos: [{ name: "ops", branch: "main", action: "cloned" }],
      daemon: { state: "not_running" },
    });
    const text = await f.cli(["policy", "sync"]);
    expect(text.stdout).toMatch(/^ops: main up to date at [0-9a-f]{12}$/m);
    expect(text.stdout).toMatch(/^daemon: none answers on .*; it loads the synced clones when it starts$/m);
    await f.start();
    expect((await listed(f)).find((x) => x.name === "churn")).toMatchObject({ source: "policy:ops" });
    const next = ops.commit({ "rules/churn.toml": null, "rules/later.toml": ruleText("later") });
    const ff = await f.cli(["policy", "sync"]);
    expect(ff.code, ff.stderr).toBe(0);
    expect(ff.stdout).toMatch(
      new RegExp(`^ops: fast-forwarded main [0-9a-f]{12}\\.\\.${next.slice(0, 12)}$`, "m"),
    );
    const names = (await listed(f)).filter((x) => x.source === "policy:ops").map((x) => x.name);
    expect(names).toEqual(["later"]);
  });

  it("syncs a repo the running daemon's config does not declare, and says the daemon refused it (exit 4)", async () => {
    const { f } = fleetWithOps();
    const sec = new PolicyRemote(f.root, "sec");
    sec.commit({ "rules/a.toml": ruleText("a") });
    const other = path.join(f.root, "other.toml");
    fs.writeFileSync(other, `[policy_repo.sec]\nremote = ${JSON.stringify(sec.bare)}\n`);
    await f.start();
    const r = await f.cli(["policy", "sync", "--config", other]);
    expect(r.code).toBe(4);
    expect(r.stdout).toMatch(/^sec: cloned main at /m);
    expect(r.stderr).toBe(
      "harness policy sync: the clones are synced, but the daemon did not reload after sec: unknown policy repo: the global config declares no [policy_repo.sec]\n",
    );
    expect((await listed(f)).some((x) => x.source === "policy:sec")).toBe(false);
  });

  it("refuses an unknown policy repo name with the unknown-policy-repo sentinel, exit 1", async () => {
    const { f } = fleetWithOps();
    const r = await f.cli(["policy", "sync", "nope"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "harness policy sync: unknown policy repo: the global config declares no [policy_repo.nope]\n",
    );
  });

  it("A backtest with no daemon running loads the policy rules the daemon serves", async () => {
    // ops overrides a starter rule, synced before the daemon first starts: the starter copy never
    // evaluates a row, so its hash never completes a shadow. Backtesting the starter file then finds
    // no loaded rule with its hash, and shadows like any file a policy repo could bring, through the
    // daemon or not. A replay that loaded the starter pack alone would take it for the starter rule,
    // which skips shadow, and report its fires active.
    const { f, ops } = fleetWithOps();
    ops.commit({
      "rules/same-file-collision.toml": starterText("same-file-collision").replace(
        /^message = .*$/m,
        'message = "ops policy: {{run}} collided on {{path}}"',
      ),
    });
    expect((await f.cli(["policy", "sync", "ops"])).code).toBe(0);
    await f.start();
    const graph = f.tokens.get("graph") as string;
    await f.cli(["journal", "append", "--token-file", graph], jsonl([collision]));
    await f.until(() => fires(f).length === 1, "the fire");
    const file = path.join(f.root, "same-file-collision.toml");
    fs.writeFileSync(file, starterText("same-file-collision"));
    const modes = async () => {
      const r = await f.cli(["rules", "backtest", file, "--json"]);
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout) as { ran_on: string; fires: { seq: number; mode: string }[] };
      return { ranOn: report.ran_on, fires: report.fires.map((x) => [x.seq, x.mode]) };
    };
    const viaDaemon = await modes();
    expect(viaDaemon.ranOn).toBe("daemon");
    expect(viaDaemon.fires).toEqual([[expect.any(Number), "shadow"]]);
    await f.stop();
    expect(await modes()).toEqual({ ...viaDaemon, ranOn: "store" });
  });
});
