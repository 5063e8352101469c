/**
 * A rule miner with no model (SPEC-0029 REQ-15): a fixed sequence of MCP calls through the SDK's own
 * client over stdio, against `harness mcp` launched as an agent's MCP config would launch it. It reads
 * the journal for failed runs, counts them as a rule would, backtests a candidate rule and proposes it.
 * `harness demo` runs it so a new user sees the gateway work, and `harness miner run`'s test runs it as
 * its one-shot. What it prints is what each call answered, one line a step.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** How to launch the gateway: one entry of an MCP config's `mcpServers`. */
export interface McpServerLaunch {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

export interface ScriptedMinerResult {
  /** The proposal's id, when one was stored. */
  readonly proposal?: string;
  readonly steps: readonly string[];
}

/** The server named `harness` in an MCP config file (`{"mcpServers": {"harness": {...}}}`). */
export function launchFromConfig(text: string, env: NodeJS.ProcessEnv): McpServerLaunch {
  const server = (JSON.parse(text) as { mcpServers?: Record<string, Partial<McpServerLaunch>> }).mcpServers
    ?.harness;
  if (server?.command === undefined) throw new Error("the MCP config has no harness server");
  const inherited = Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => typeof e[1] === "string"),
  );
  return { command: server.command, args: server.args ?? [], env: { ...inherited, ...(server.env ?? {}) } };
}

const dataOf = (r: CallToolResult): Record<string, unknown> => {
  const text = r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
  if (r.isError === true) throw new Error(text);
  return (JSON.parse(text) as { harness_memory_data: { data: Record<string, unknown> } }).harness_memory_data
    .data;
};

export async function runScriptedMiner(launch: McpServerLaunch): Promise<ScriptedMinerResult> {
  const steps: string[] = [];
  const client = new Client({ name: "harness-scripted-miner", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: launch.command,
      args: [...launch.args],
      env: { ...launch.env },
      stderr: "pipe",
    }),
  );
  try {
    const call = async (name: string, args: Record<string, unknown>) =>
      dataOf((await client.callTool({ name, arguments: args })) as CallToolResult);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    steps.push(`tools: ${tools.join(", ")}`);
    if (!tools.includes("propose_rule"))
      return { steps: [...steps, "not a rule miner's run: nothing to propose"] };

    const failures = (await call("query_journal", {
      kind: "run_event",
      type: "closed",
      fields: { outcome: "failed" },
      limit: 1000,
    })) as { rows: { seq: number; harness?: string }[] };
    const byHarness = new Map<string, number[]>();
    for (const r of failures.rows)
      if (r.harness !== undefined) byHarness.set(r.harness, [...(byHarness.get(r.harness) ?? []), r.seq]);
    const [harness, seqs] = [...byHarness].sort((a, b) => b[1].length - a[1].length)[0] ?? [];
    steps.push(`query_journal: ${failures.rows.length} failed runs`);
    if (harness === undefined || seqs === undefined)
      return { steps: [...steps, "no failed runs: nothing to propose"] };

    const counted = await call("count_journal", {
      selector: { kind: "run_event", type: "closed", harness, outcome: "failed" },
      within: "24h",
    });
    steps.push(`count_journal: ${String(counted.number)} failed runs of ${harness} in the last 24h`);

    const threshold = Math.max(2, Math.min(3, Number(counted.number)));
    const rule = {
      name: "repeated-run-failures",
      description: "A harness failed several runs within a day.",
      on: "run_event",
      when: `event.type == "closed" && event.outcome == "failed" && count({"type": "closed", "harness": event.harness, "outcome": "failed"}, duration("24h")) >= ${threshold}`,
      level: "notify",
      cooldown: "6h",
      target: "harness",
      message: "{{harness}} failed several runs within a day",
    };
    const backtest = (await call("backtest_rule", rule)) as { summary: { rows: number; fires: number } };
    steps.push(
      `backtest_rule: ${backtest.summary.fires} fires over ${backtest.summary.rows} rows in 30 days`,
    );
    if (backtest.summary.fires === 0) return { steps: [...steps, "the candidate never fired: not proposed"] };

    const proposed = await call("propose_rule", {
      ...rule,
      rationale: `${harness} failed ${seqs.length} runs; a notify once ${threshold} failures fall within a day lets the operator step in early.`,
      evidence: seqs.slice(0, 10).map((s) => `seq:${s}`),
    });
    steps.push(`propose_rule: stored ${String(proposed.id)} (${String(proposed.name)})`);
    return { proposal: String(proposed.id), steps };
  } finally {
    await client.close();
  }
}
