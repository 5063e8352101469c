/**
 * Golden files for the human output of `harness rules list`, `show`, `explain` and `backtest` (issue
 * "RuleService…": "so their layout is deliberate"). A real daemon, a fixed story (nightly exceeds its
 * budget twice and is held), and the output compared with `test/shell/cli/golden/*.txt` after the parts that
 * differ between runs (times, hashes, durations since) are replaced by placeholders. A layout change
 * shows up as a diff of the golden file, reviewed with the change (`vitest -u` rewrites them).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STARTER_FILES } from "../../../src/core/starter-pack.generated.js";
import { actionsInFlight, fires } from "../../support/store-reads.js";
import { jsonl, TestFleet } from "../daemon-harness.js";

/** Times, hashes and the store's path vary from run to run; the layout around them must not. */
const stable = (text: string, root: string): string =>
  text
    .replaceAll(root, "<root>")
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, "<time>")
    .replace(/\b[0-9a-f]{64}\b/g, "<sha256>")
    .replace(/\b[0-9a-f]{12}\b/g, "<hash>");

const golden = (name: string) => path.join(import.meta.dirname, "golden", `${name}.txt`);

describe("the human output of harness rules", () => {
  // No tick during the test, so the journal's seqs are the story's own.
  const f = new TestFleet({ enforce: ["budget-exhaustion-recurring"] });
  let fireId = "";

  beforeAll(async () => {
    await f.start({ HARNESS_TICK_MS: "2000000000" });
    const rows = [1, 2].map((n) => ({
      kind: "run_event",
      type: "closed",
      harness: "nightly",
      run: `nightly#${n}`,
      outcome: "budget_exceeded",
    }));
    const r = await f.cli(
      ["journal", "append", "--token-file", f.tokens.get("ledger") as string],
      jsonl(rows),
    );
    expect(r.code, r.stderr).toBe(0);
    await f.until(() => fires(f).length === 1, "the budget fire");
    fireId = fires(f)[0]?.fire_id ?? "";
    // explain shows the action's outcome: wait for the hook to have run, so the golden file has one.
    await f.until(() => actionsInFlight(f) === 0, "the notify action's outcome");
  });
  afterAll(() => f.dispose());

  const check = async (name: string, args: readonly string[]) => {
    const r = await f.cli(args);
    expect(r.code, r.stderr).toBe(0);
    await expect(stable(r.stdout, f.root)).toMatchFileSnapshot(golden(name));
  };

  it("rules list", () => check("rules-list", ["rules", "list"]));
  it("rules show", () => check("rules-show", ["rules", "show", "budget-exhaustion-recurring"]));
  it("rules explain", () => check("rules-explain", ["rules", "explain", fireId]));
  it("rules backtest", async () => {
    const dir = path.join(f.root, "rules");
    fs.mkdirSync(dir, { recursive: true });
    const [, text] = STARTER_FILES.find(([file]) => file.endsWith("/budget-exhaustion-recurring.toml")) ?? [];
    fs.writeFileSync(path.join(dir, "budget-exhaustion-recurring.toml"), text ?? "");
    await check("rules-backtest", ["rules", "backtest", path.join(dir, "budget-exhaustion-recurring.toml")]);
  });
});
