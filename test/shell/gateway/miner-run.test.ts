/**
 * `harness miner run NAME` (SPEC-0029 REQ-15) against a real daemon: it opens the run (an `opened` row
 * from the ledger), runs the configured one-shot (here the scripted miner, which proposes a rule through
 * `harness mcp` with the run's token), closes the run with the outcome, and revokes the tokens it minted.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { journalCount, journalRows, proposals } from "../../support/store-reads.js";
import { jsonl, TestFleet } from "../daemon-harness.js";

const ONE_SHOT = fileURLToPath(new URL("../../fixtures/miner/scripted-one-shot.mjs", import.meta.url));

let fleet: TestFleet;
let out: string;

beforeAll(async () => {
  fleet = new TestFleet({ config: "" });
  out = path.join(fleet.root, "one-shot.json");
  const prompt = path.join(fleet.root, "prompt.md");
  fs.writeFileSync(prompt, "Look for recurring failures.\n");
  fs.appendFileSync(
    path.join(fleet.root, "config", "harness", "harness.toml"),
    [
      "",
      "[memory]",
      'rule_miners = ["miner", "broken", "chatty"]',
      "[memory.miners.miner]",
      `command = ${JSON.stringify([process.execPath, ONE_SHOT, "{mcp_config}", out])}`,
      'timeout = "2m"',
      "[memory.miners.broken]",
      // Exits 3 when the prompt file arrived on its stdin, 5 when it did not.
      `command = ${JSON.stringify([
        process.execPath,
        "-e",
        "process.exit(require('fs').readFileSync(0, 'utf8').startsWith('Look for') ? 3 : 5)",
      ])}`,
      `prompt_file = ${JSON.stringify(prompt)}`,
      "[memory.miners.chatty]",
      // A one-shot that talks on stdout, as a model's CLI does.
      `command = ${JSON.stringify([
        process.execPath,
        "-e",
        'process.stdout.write("chatty one-shot says hello\\n{\\"not\\": \\"the result\\"}\\n")',
      ])}`,
      "",
    ].join("\n"),
  );
  await fleet.start();
  const failed = (n: number) => ({
    kind: "run_event",
    type: "closed",
    harness: "nightly",
    run: `nightly#${n}`,
    outcome: "failed",
  });
  const r = await fleet.cli(
    ["journal", "append", "--token-file", fleet.tokens.get("ledger") as string],
    jsonl([failed(1), failed(2), failed(3)]),
  );
  expect(r.code, r.stderr).toBe(0);
  await fleet.until(() => journalCount(fleet) >= 3, "the rows");
}, 60_000);

afterAll(() => fleet.dispose());

const runRows = (run: string) => journalRows(fleet, { run });

async function tokensOf(run: string) {
  const r = await fleet.cli(["token", "list", "--all", "--json"]);
  const { tokens } = JSON.parse(r.stdout) as {
    tokens: { kind: string; run: string | null; label: string | null; revoked: string | null }[];
  };
  return tokens.filter((t) => t.run === run || t.label === `miner run ${run}`);
}

describe("harness miner run", () => {
  it("opens the run, runs a scripted one-shot that proposes through the gateway, closes and revokes", async () => {
    const r = await fleet.cli(["miner", "run", "miner", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as { run: string; outcome: string };
    expect(result.outcome).toBe("success");
    expect(result.run).toMatch(/^miner#m[0-9a-z]+$/);
    const did = JSON.parse(fs.readFileSync(out, "utf8")) as {
      run: string;
      proposal: string;
      steps: string[];
    };
    expect(did.run).toBe(result.run);
    expect(did.steps.join("\n")).toMatch(/query_journal: 3 failed runs/);
    expect(did.steps.join("\n")).toMatch(/backtest_rule: \d+ fires/);
    expect(did.proposal).toMatch(/^p-\d+$/);
    expect(proposals(fleet).map((p) => ({ run: p.run, name: p.name }))).toEqual([
      { run: result.run, name: "repeated-run-failures" },
    ]);
    const rows = runRows(result.run);
    expect(rows.map((x) => [x.type, x.source, x.outcome])).toEqual([
      ["opened", "ledger", null],
      ["closed", "ledger", "success"],
    ]);
    const tokens = await tokensOf(result.run);
    expect(tokens.map((t) => t.kind).sort()).toEqual(["gateway", "producer"]);
    for (const t of tokens) expect(t.revoked, `${t.kind} token revoked`).not.toBeNull();
  }, 60_000);

  it("feeds the prompt file on stdin and closes a one-shot that fails with its exit code, exit 1", async () => {
    const r = await fleet.cli(["miner", "run", "broken", "--json"]);
    expect(r.code).toBe(1);
    const result = JSON.parse(r.stdout) as { run: string; outcome: string; exit_code: number };
    expect(result).toMatchObject({ outcome: "failed", exit_code: 3 });
    const closed = runRows(result.run).find((x) => x.type === "closed");
    expect(closed?.event).toMatchObject({ outcome: "failed", exit_code: 3 });
    for (const t of await tokensOf(result.run)) expect(t.revoked).not.toBeNull();
  }, 60_000);

  it("finding 9: miner run --json prints one JSON document on stdout, the one-shot's output on stderr", async () => {
    const r = await fleet.cli(["miner", "run", "chatty", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(Object.keys(result).sort()).toEqual(["exit_code", "outcome", "reason", "run"]);
    expect(result).toMatchObject({ outcome: "success", exit_code: 0 });
    expect(r.stderr).toContain('chatty one-shot says hello\n{"not": "the result"}\n');
    // Without --json the one-shot's output is the runner's, as before.
    const plain = await fleet.cli(["miner", "run", "chatty"]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toContain("chatty one-shot says hello");
  }, 60_000);

  it("refuses a harness not in rule_miners, writing nothing", async () => {
    // Nightly's rows only: the daemon's minute tick may land meanwhile.
    const before = journalCount(fleet, { harness: "nightly" });
    const r = await fleet.cli(["miner", "run", "nightly"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/"nightly" is not listed in \[memory\] rule_miners/);
    expect(journalCount(fleet, { harness: "nightly" })).toBe(before);
  });
});
