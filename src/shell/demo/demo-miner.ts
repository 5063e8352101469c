/**
 * The demo's rule miner: after the simulated fleet, one run of harness `miner` (listed in the demo's
 * `[memory] rule_miners`) drives the scripted miner (`scripted-miner.ts`) through the real `harness mcp`
 * with a gateway token the daemon minted for that run, so a new user sees the gateway read the journal,
 * backtest a candidate and propose it. The run is opened and closed in the journal like any other, and
 * its token revoked when it closes.
 */
import { fileURLToPath } from "node:url";
import type { DaemonApp } from "../app/daemon-app.js";
import { MCP_TOKEN_ENV } from "../gateway/protocol.js";
import type { Narrator } from "./demo.js";
import { runScriptedMiner } from "./scripted-miner.js";

export const DEMO_MINER = "miner";

/** `harness mcp` as the built CLI runs it: this node and the CLI's main module. */
const CLI_MAIN = fileURLToPath(new URL("../cli/main.js", import.meta.url));

export async function showScriptedMiner(
  daemon: DaemonApp,
  sandbox: { readonly env: NodeJS.ProcessEnv; readonly socketPath: string },
  narrator: Narrator,
): Promise<string | undefined> {
  const run = `${DEMO_MINER}#1`;
  const base = { kind: "run_event", harness: DEMO_MINER, run, adapter: "scripted", repo: "", branch: "" };
  await daemon.admit("ledger", [{ ...base, type: "opened", trigger: "schedule" }]);
  const { token } = await daemon.tokens.create({
    kind: "gateway",
    harness: DEMO_MINER,
    run,
    label: "harness demo",
  });
  narrator.line(
    "miner",
    `${run} opened: a scripted rule miner (no model) calls the MCP gateway through harness mcp`,
  );
  let outcome = "failed";
  try {
    const env = Object.fromEntries(
      Object.entries(sandbox.env).filter((e): e is [string, string] => typeof e[1] === "string"),
    );
    const result = await runScriptedMiner({
      command: process.execPath,
      args: [CLI_MAIN, "mcp", "--socket", sandbox.socketPath],
      env: { ...env, [MCP_TOKEN_ENV]: token },
    });
    for (const step of result.steps) narrator.line("miner", step);
    outcome = "success";
    return result.proposal;
  } finally {
    await daemon.admit("ledger", [
      { ...base, type: "closed", outcome, reason: "", exit_code: 0, cause_digest: "" },
    ]);
    await daemon.tokens.revokeRun(run);
    narrator.line("miner", `${run} closed ${outcome}; its gateway token is revoked`);
  }
}
