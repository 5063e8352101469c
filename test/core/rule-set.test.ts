import { describe, expect, it } from "vitest";
import { fold } from "../../src/core/backtest.js";
import { clearHolds, releaseOnReload } from "../../src/core/holds.js";
import { indexRow, type JournalRow } from "../../src/core/journal.js";
import { loadRuleFile } from "../../src/core/load-rule.js";
import { REDACTED, redact } from "../../src/core/redact.js";
import { assembleRuleSet } from "../../src/core/rule-set.js";
import { STARTER_FILES } from "../../src/core/starter-pack.generated.js";
import { loadStarterPack } from "../../src/core/starter-pack.js";
import { applyDelta, emptyState } from "../../src/core/state.js";
import { encodeComponent, fileNode, resolveTarget, runNode } from "../../src/core/targets.js";
import { scanReader } from "../../src/core/window.js";

const starterText = (name: string) => STARTER_FILES.find(([f]) => f.endsWith(`/${name}.toml`))?.[1] as string;

describe("REQ-2 rule sources and override", () => {
  it("A policy rule overrides a starter rule", () => {
    const override = loadRuleFile(
      "rules/same-file-collision.toml",
      starterText("same-file-collision").replace('"30m"', '"45m"'),
    );
    const set = assembleRuleSet({
      starter: loadStarterPack(),
      policy: [{ repo: "ops", loads: [override] }],
      shadowPeriod: 0,
    });
    const copies = set.rules.filter((r) => r.rule.spec.name === "same-file-collision");
    expect(copies).toHaveLength(1);
    expect(copies[0]?.source).toEqual({ kind: "policy", repo: "ops" });
    expect(copies[0]?.rule.spec.cooldown).toBe(45 * 60_000);
  });

  it("An operator silences a starter rule without a policy repo", () => {
    const set = assembleRuleSet({
      starter: loadStarterPack(),
      policy: [],
      disable: ["cross-run-churn"],
      shadowPeriod: 0,
    });
    expect(set.disabled).toMatchObject([{ name: "cross-run-churn", reason: "operator" }]);
    expect(set.rules.map((r) => r.rule.spec.name)).not.toContain("cross-run-churn");
  });

  it("disables both copies of a name two policy repos define", () => {
    const text = (repo: string) =>
      starterText("loop-stop-recurs").replace("twice within 24h", `twice (${repo})`);
    const set = assembleRuleSet({
      starter: [],
      policy: [
        { repo: "ops", loads: [loadRuleFile("rules/loop-stop-recurs.toml", text("ops"))] },
        { repo: "sec", loads: [loadRuleFile("rules/loop-stop-recurs.toml", text("sec"))] },
      ],
      shadowPeriod: 0,
    });
    expect(set.rules).toEqual([]);
    expect(set.disabled).toMatchObject([{ name: "loop-stop-recurs", reason: "duplicate_name" }]);
  });

  it("orders rules by name and reports enforce names that match no rule", () => {
    const set = assembleRuleSet({
      starter: loadStarterPack(),
      policy: [],
      enforce: ["no-such-rule"],
      shadowPeriod: 0,
    });
    const names = set.rules.map((r) => r.rule.spec.name);
    expect(names).toEqual([...names].sort());
    expect(set.unknownEnforced).toEqual(["no-such-rule"]);
  });
});

describe("REQ-11 releases by the operator and by reload", () => {
  const rows: JournalRow[] = [
    {
      seq: 1,
      at: 0,
      kind: "run_event",
      event: { type: "closed", harness: "nightly", run: "nightly#1", outcome: "budget_exceeded" },
    },
    {
      seq: 2,
      at: 60_000,
      kind: "run_event",
      event: { type: "closed", harness: "nightly", run: "nightly#2", outcome: "budget_exceeded" },
    },
  ];
  const enforced = assembleRuleSet({
    starter: loadStarterPack(),
    policy: [],
    enforce: ["budget-exhaustion-recurring"],
    shadowPeriod: 0,
  });
  const indexed = rows.map(indexRow);
  const held = fold(enforced, rows, emptyState, (row) => scanReader(indexed, row.seq, row.at)).state;

  it("Start does not bypass a hold: clear releases it", () => {
    expect(Object.values(held.holds)).toMatchObject([
      { harness: "nightly", rule: "budget-exhaustion-recurring" },
    ]);
    const cleared = clearHolds(held, "nightly");
    expect(cleared.releases).toEqual([
      { harness: "nightly", rule: "budget-exhaustion-recurring", fireId: "f-2-0", cause: "operator" },
    ]);
    expect(applyDelta(held, cleared.delta).holds).toEqual({});
    expect(clearHolds(held, "nightly", "other-rule").releases).toEqual([]);
  });

  it("a reload that takes the rule out of enforce releases its hold", () => {
    const unenforced = assembleRuleSet({ starter: loadStarterPack(), policy: [], shadowPeriod: 0 });
    expect(releaseOnReload(held, unenforced).releases).toEqual([
      { harness: "nightly", rule: "budget-exhaustion-recurring", fireId: "f-2-0", cause: "reload" },
    ]);
    expect(releaseOnReload(held, enforced).releases).toEqual([]);
  });
});

describe("node ids and targets", () => {
  it("writes node ids as the fleet graph does", () => {
    expect(runNode("reduit/agent#42")).toBe("run:reduit/agent#42");
    expect(fileNode("forge.example/org/reduit", "internal/ledger/writer.go")).toBe(
      "file:forge.example/org/reduit:internal/ledger/writer.go",
    );
    expect(encodeComponent("a b:c#d@e%f\u0001")).toBe("a%20b%3Ac%23d%40e%25f%01");
    expect(fileNode("r", "dir with space/a:b.go")).toBe("file:r:dir%20with%20space/a%3Ab.go");
  });

  it("derives each target from the event, or none when the field is missing", () => {
    const graph = { type: "edge_added", repo: "r", path: "a.go", run: "h#1", harness: "h" };
    expect(resolveTarget("node", "graph_event", graph)?.key).toBe("file:r:a.go");
    expect(resolveTarget("node", "fact_event", { type: "recorded", subject: "file:r:a.go" })?.key).toBe(
      "file:r:a.go",
    );
    expect(resolveTarget("node", "run_event", { type: "tool", run: "h#1" })?.key).toBe("run:h#1");
    expect(resolveTarget("harness", "run_event", { type: "tool" })).toBeUndefined();
    expect(resolveTarget("fleet", "tick", { type: "tick" })?.key).toBe("fleet");
  });
});

describe("the redactor", () => {
  it("masks secret-shaped substrings", () => {
    expect(redact("https://bob:hunter2@forge.example/x.git")).toBe(`https://${REDACTED}@forge.example/x.git`);
    expect(redact("Authorization: Bearer abcdefgh12345678")).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(redact("token ghp_abcdefghijklmnopqrstuvwxyz0123")).toBe(`token ${REDACTED}`);
    expect(redact("key AKIAABCDEFGHIJKLMNOP")).toBe(`key ${REDACTED}`);
    expect(redact("deploy?api_key=s3cr3t&x=1")).toBe(`deploy?api_key=${REDACTED}&x=1`);
  });

  it("leaves ordinary identifiers alone", () => {
    for (const s of [
      "feature/token-refresh",
      "internal/auth/bearer.go",
      "https://forge.example/org/repo",
      "nightly#41",
    ]) {
      expect(redact(s)).toBe(s);
    }
  });
});
