/**
 * `harness demo`'s scripted rule miner, through the built CLI: after the fleet, a run of `miner` reads
 * the journal, counts, backtests a candidate and proposes it through `harness mcp`, and the run closes
 * with its gateway token revoked.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { CLI } from "../daemon-harness.js";

describe("harness demo's scripted miner", () => {
  it("reads the journal, backtests a candidate and proposes it through the gateway", () => {
    const r = spawnSync(process.execPath, [CLI, "demo", "--seconds", "3", "--json"], {
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const miner = r.stdout
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as { kind: string; message: string })
      .filter((e) => e.kind === "miner")
      .map((e) => e.message);
    expect(miner[0]).toMatch(/^miner#1 opened/);
    expect(miner).toContainEqual(expect.stringMatching(/^tools: .*propose_rule/));
    expect(miner).toContainEqual(expect.stringMatching(/^query_journal: \d+ failed runs/));
    expect(miner).toContainEqual(expect.stringMatching(/^backtest_rule: [1-9]\d* fires/));
    expect(miner).toContainEqual(
      expect.stringMatching(/^propose_rule: stored p-1 \(repeated-run-failures\)/),
    );
    expect(miner.at(-1)).toMatch(/^miner#1 closed success; its gateway token is revoked/);
  }, 120_000);
});
