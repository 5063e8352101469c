/**
 * The MCP gateway (SPEC-0029 REQ-15) through the real `harness mcp` process and the MCP SDK's client,
 * against a real daemon, with gateway tokens minted by `harness token create --gateway`: who sees
 * propose_rule, what it refuses and stores, who is refused at initialisation, and what a caller may
 * read of other harnesses.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProposalStore } from "../../../src/shell/store/proposal-store.js";
import { forgetProposals, journalCount, proposals as storedProposals } from "../../support/store-reads.js";
import { jsonl, TestFleet } from "../daemon-harness.js";
import { gatewayToken, type McpSession, mcpSession, textOf } from "./mcp-session.js";

let fleet: TestFleet;
const sessions: McpSession[] = [];

const closed = (harness: string, run: string, outcome: string) => ({
  kind: "run_event",
  type: "closed",
  harness,
  run,
  outcome,
});

beforeAll(async () => {
  fleet = new TestFleet({ config: '[memory]\nrule_miners = ["miner"]' });
  await fleet.start();
  const r = await fleet.cli(
    ["journal", "append", "--token-file", fleet.tokens.get("ledger") as string],
    jsonl([
      closed("nightly", "nightly#1", "failed"),
      closed("nightly", "nightly#2", "failed"),
      closed("triage", "triage#1", "failed"),
      closed("triage", "triage#2", "success"),
    ]),
  );
  expect(r.code, r.stderr).toBe(0);
  await fleet.until(() => journalCount(fleet) >= 4, "the rows");
}, 60_000);

afterAll(async () => {
  for (const s of sessions.splice(0)) await s.close().catch(() => undefined);
  await fleet.dispose();
});

async function session(harness: string, run?: string): Promise<McpSession> {
  const s = await mcpSession(fleet, await gatewayToken(fleet, harness, run));
  sessions.push(s);
  return s;
}

const proposals = () => storedProposals(fleet).map((p) => ({ run: p.run, name: p.name }));

const candidate = {
  name: "nightly-fails",
  description: "A run closed failed.",
  on: "run_event",
  when: 'event.type == "closed" && event.outcome == "failed"',
  level: "notify",
  target: "run",
  message: "{{run}} failed",
  rationale: "Failed runs recur on nightly; the operator wants to hear of each.",
  evidence: ["nightly#1", "seq:1"],
};

const toolNames = async (s: McpSession) => (await s.client.listTools()).tools.map((t) => t.name).sort();

describe("the MCP gateway", () => {
  it("Only miners see the tool", async () => {
    const miner = await session("miner", "miner#1");
    expect(await toolNames(miner)).toContain("propose_rule");
    const nightly = await session("nightly", "nightly#3");
    const names = await toolNames(nightly);
    expect(names).not.toContain("propose_rule");
    expect(names).toEqual(
      [
        "count_journal",
        "explain_fire",
        "get_rule",
        "list_fires",
        "list_holds",
        "list_rules",
        "query_journal",
      ].sort(),
    );
    // A harness-wide token of a miner is not a run: it proposes nothing either.
    expect(await toolNames(await session("miner"))).not.toContain("propose_rule");
    // The tool is absent, so a call of it is refused as an unknown tool, and nothing is stored.
    const r = await nightly.call("propose_rule", candidate);
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/propose_rule not found/);
    expect(proposals()).toEqual([]);
  });

  it("a reload that changes rule_miners applies to new sessions", async () => {
    const file = path.join(fleet.root, "config", "harness", "harness.toml");
    const before = fs.readFileSync(file, "utf8");
    const open = await session("nightly", "nightly#5");
    try {
      fs.writeFileSync(file, before.replace('rule_miners = ["miner"]', 'rule_miners = ["miner", "nightly"]'));
      const r = await fleet.cli(["reload"]);
      expect(r.code, r.stderr).toBe(0);
      expect(await toolNames(await session("nightly", "nightly#6"))).toContain("propose_rule");
      // The session opened before the reload keeps the tools it began with.
      expect(await toolNames(open)).not.toContain("propose_rule");
    } finally {
      fs.writeFileSync(file, before);
      expect((await fleet.cli(["reload"])).code).toBe(0);
    }
    expect(await toolNames(await session("nightly", "nightly#6"))).not.toContain("propose_rule");
  });

  it("finding 8: every tool carries annotations; only propose_rule writes, none reaches outside the store", async () => {
    const miner = await session("miner", "miner#1");
    const tools = (await miner.client.listTools()).tools;
    expect(tools.length).toBeGreaterThan(0);
    for (const t of tools) {
      expect(t.annotations?.openWorldHint, t.name).toBe(false);
      expect(t.annotations?.readOnlyHint, t.name).toBe(t.name !== "propose_rule");
      if (t.name === "propose_rule") expect(t.annotations?.destructiveHint).toBe(false);
    }
  });

  it("describes propose_rule's fields with a JSON Schema a model can fill", async () => {
    const miner = await session("miner", "miner#1");
    const tool = (await miner.client.listTools()).tools.find((t) => t.name === "propose_rule");
    const props = tool?.inputSchema.properties as Record<string, { description?: string }>;
    for (const key of [
      "name",
      "description",
      "on",
      "when",
      "level",
      "target",
      "message",
      "rationale",
      "evidence",
      "dry_run",
    ])
      expect(props[key]?.description, key).toMatch(/\w{3,}/);
    expect(tool?.inputSchema.required).toEqual(
      expect.arrayContaining(["name", "on", "when", "level", "rationale", "evidence"]),
    );
  });

  it("A miner cannot propose a stop: invalid_level, and nothing is stored", async () => {
    const miner = await session("miner", "miner#1");
    const r = await miner.call("propose_rule", { ...candidate, level: "stop" });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/invalid_level/);
    expect(textOf(r)).toMatch(/Set level to "annotate" or "notify"/);
    expect(proposals()).toEqual([]);
  });

  it("a dry run answers the backtest and stores nothing; a real call stores it with the caller's run", async () => {
    const miner = await session("miner", "miner#1");
    const dry = await miner.data("propose_rule", { ...candidate, dry_run: true });
    expect(dry.dry_run).toBe(true);
    expect(dry.id).toBeUndefined();
    expect((dry.backtest as { fires: number }).fires).toBe(3);
    expect(proposals()).toEqual([]);
    // A run the caller names is no field of the tool: the token's run is the one stored.
    const stored = await miner.data("propose_rule", { ...candidate, run: "miner#9", callerRun: "miner#9" });
    expect(stored.id).toMatch(/^p-\d+$/);
    expect(proposals()).toEqual([{ run: "miner#1", name: "nightly-fails" }]);
  });

  it("says each named refusal as a tool error saying what to change", async () => {
    const miner = await session("miner", "miner#1");
    const unknown = await miner.call("propose_rule", { ...candidate, evidence: ["seq:999999"] });
    expect(textOf(unknown)).toMatch(/unknown_evidence: .*Give only ids the store holds/s);
    const compile = await miner.call("propose_rule", { ...candidate, when: "event.type ==" });
    expect(compile.isError).toBe(true);
    expect(textOf(compile)).toMatch(/rules\/nightly-fails\.toml:\d+:\d+: compile: /);
  });

  it("refuses a run's 11th proposal and a 51st unproposed one (run limit, backlog)", async () => {
    const db = new Database(fleet.storePath);
    const store = new ProposalStore(db);
    const seed = (run: string, n: number) => {
      for (let i = 0; i < n; i++)
        store.insert({
          name: `seeded-${run.replace("#", "-")}-${i}`,
          fileText: "",
          on: "run_event",
          level: "notify",
          contentHash: `c${run}${i}`,
          expressionHash: `e${run}${i}`,
          rationale: "seeded",
          evidence: ["seq:1"],
          run,
          backtest: { sinceMs: 0, atMs: 0, rows: 0, fires: 0, evalErrors: 0, storeErrors: 0, firstFires: [] },
          at: Date.now(),
        });
    };
    try {
      seed("miner#2", 10);
      const full = await session("miner", "miner#2");
      const limit = await full.call("propose_rule", { ...candidate, name: "another" });
      expect(textOf(limit)).toMatch(/proposal_run_limit: run miner#2 has stored 10 proposals/);
      seed("miner#3", 39);
      const backlog = await (await session("miner", "miner#4")).call("propose_rule", {
        ...candidate,
        name: "more",
      });
      expect(textOf(backlog)).toMatch(/proposal_backlog_full: .*stop proposing/s);
    } finally {
      forgetProposals(db, "seeded-");
      db.close();
    }
  });

  it("refuses an unknown or revoked token at initialisation, and ends a session whose token is revoked", async () => {
    await expect(mcpSession(fleet, "x".repeat(43))).rejects.toThrow(/unknown, revoked or expired/);
    await expect(mcpSession(fleet, undefined)).rejects.toThrow();
    const token = await gatewayToken(fleet, "nightly", "nightly#7");
    const live = await mcpSession(fleet, token);
    sessions.push(live);
    const listed = await fleet.cli(["token", "list", "--json"]);
    const { tokens } = JSON.parse(listed.stdout) as { tokens: { id: string; run: string | null }[] };
    const id = tokens.find((t) => t.run === "nightly#7")?.id;
    expect((await fleet.cli(["token", "revoke", id as string])).code).toBe(0);
    await expect(mcpSession(fleet, token)).rejects.toThrow(/unknown, revoked or expired/);
    const after = await live.call("list_rules");
    expect(after.isError).toBe(true);
    expect(textOf(after)).toMatch(/revoked or has expired/);
  });

  it("a token of one harness sees only its harness's rows and fires; a miner sees them all", async () => {
    const nightly = await session("nightly", "nightly#3");
    const own = await nightly.data("query_journal", { kind: "run_event" });
    expect((own.rows as { harness: string }[]).map((r) => r.harness)).toEqual(["nightly", "nightly"]);
    const other = await nightly.call("query_journal", { fields: { harness: "triage" } });
    expect(other.isError).toBe(true);
    expect(textOf(other)).toMatch(/only your own harness's rows \(nightly\)/);
    expect(textOf(await nightly.call("list_fires", { harness: "triage" }))).toMatch(/only your own harness/);
    const counted = await nightly.data("count_journal", { selector: { type: "closed" }, within: "1h" });
    expect(counted.number).toBe(2);
    const miner = await session("miner", "miner#1");
    // Every harness's rows (tick rows, the daemon's own, aside).
    expect(((await miner.data("query_journal", { kind: "run_event" })).rows as unknown[]).length).toBe(4);
    expect((await miner.data("count_journal", { selector: { type: "closed" }, within: "1h" })).number).toBe(
      4,
    );
    const failed = await miner.data("count_journal", {
      fn: "distinct",
      field: "harness",
      selector: { type: "closed", outcome: "failed" },
      within: "1h",
    });
    expect(failed.number).toBe(2);
  });
});
