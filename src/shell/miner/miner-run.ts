/**
 * `harness miner run NAME` (SPEC-0029 REQ-15): the runner of a rule miner's scheduled one-shot where no
 * supervisor runs it. It checks NAME is in `[memory] rule_miners` and has a `[memory.miners.NAME]`
 * command, mints a ledger producer token bound to NAME (the runner writes the run's rows like any
 * producer, never the store), writes the run's `opened` row, mints the run's gateway token, runs the
 * one-shot with an MCP config that launches `harness mcp` with that token, waits for it within its
 * timeout (then kills its process group), writes `closed` with the outcome, and revokes both tokens.
 * Everything it asks of the daemon goes through `harness token`'s RPC with the operator's control
 * token, and Append with the minted producer token.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { JsonObject } from "@bufbuild/protobuf";
import type { MinerConfig } from "../config/global-config.js";
import { MCP_TOKEN_ENV } from "../gateway/protocol.js";
import { journalClient, type TokenClient, tokenClient } from "../rpc/client.js";
import { TokenKind } from "../rpc/gen/harness/v1/tokens_pb.js";

/** How long a one-shot has to exit after SIGTERM at its timeout before SIGKILL. */
const KILL_GRACE_MS = 5_000;
/** The tokens live a little past the timeout, so a runner that dies leaves nothing usable for long. */
const TOKEN_SLACK_MS = 10 * 60_000;

export interface MinerRunOptions {
  readonly miner: MinerConfig;
  readonly socketPath: string;
  readonly controlToken: string;
  /** How the one-shot's MCP config launches `harness mcp`: this node and the CLI's main module. */
  readonly harnessCommand: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly log: (line: string) => void;
  /**
   * Where the one-shot's stdout goes: the runner's stdout, or its stderr when the runner's stdout must
   * hold one JSON document (`--json`).
   */
  readonly oneShotStdout?: "stdout" | "stderr";
  readonly clock?: () => number;
}

export type MinerOutcome = "success" | "failed" | "timed_out";

export interface MinerRunResult {
  readonly run: string;
  readonly outcome: MinerOutcome;
  readonly exitCode: number;
  readonly reason: string;
}

export class MinerRunError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "MinerRunError";
  }
}

/** A fresh run id: `<name>#m<time><random>`, unique enough for one harness's runs. */
export function minerRunId(name: string, now: number): string {
  return `${name}#m${now.toString(36)}${randomBytes(3).toString("hex")}`;
}

export async function runMiner(o: MinerRunOptions): Promise<MinerRunResult> {
  const clock = o.clock ?? Date.now;
  const name = o.miner.name;
  const run = minerRunId(name, clock());
  const tokens = tokenClient({ socketPath: o.socketPath }, o.controlToken);
  const ttlMs = BigInt(o.miner.timeout + TOKEN_SLACK_MS);
  const ledger = await tokens.createToken({
    kind: TokenKind.PRODUCER,
    source: "ledger",
    harness: name,
    label: `miner run ${run}`,
    ttlMs,
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "harness-miner-"));
  try {
    const journal = journalClient({ socketPath: o.socketPath }, ledger.token);
    const append = async (event: JsonObject) => {
      const r = await journal.append({ events: [{ kind: "run_event", event }] });
      const result = r.results[0]?.result;
      if (result?.case !== "admitted")
        throw new MinerRunError(
          `the ${String(event.type)} row of ${run} was not admitted: ${
            result?.case === "rejected" ? result.value.reason : "the daemon's queue was full"
          }`,
        );
    };
    const base = { harness: name, run, adapter: "harness-miner", repo: "", branch: "", session: run };
    await append({ type: "opened", at: new Date(clock()).toISOString(), ...base, trigger: "schedule" });
    o.log(`harness miner run: ${run} opened`);
    let result: MinerRunResult;
    try {
      const gateway = await tokens.createToken({
        kind: TokenKind.GATEWAY,
        harness: name,
        run,
        label: `miner run ${run}`,
        ttlMs,
      });
      const mcpConfig = writeMcpConfig(dir, o.harnessCommand, o.socketPath, gateway.token);
      result = await oneShot(o, run, mcpConfig, gateway.token);
    } catch (e) {
      result = { run, outcome: "failed", exitCode: -1, reason: "spawn" };
      o.log(`harness miner run: ${run}: ${(e as Error).message}`);
    }
    await append({
      type: "closed",
      at: new Date(clock()).toISOString(),
      ...base,
      outcome: result.outcome,
      reason: result.reason,
      exit_code: result.exitCode,
      cause_digest: "",
    });
    o.log(`harness miner run: ${run} closed ${result.outcome}`);
    return result;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    await revokeAll(tokens, run, ledger.id);
  }
}

/** The run's gateway tokens (the daemon revokes them when `closed` commits; this makes sure) and the ledger token. */
async function revokeAll(tokens: TokenClient, run: string, ledgerId: string): Promise<void> {
  await tokens.revokeToken({ run });
  await tokens.revokeToken({ ids: [ledgerId] });
}

/**
 * The MCP config the one-shot reads (`claude -p --mcp-config FILE`; the same `mcpServers` shape other
 * agents take): one server, `harness`, launching `harness mcp` on this daemon's socket with the run's
 * gateway token in its environment. Written 0600 in a 0700 directory removed when the run ends.
 */
function writeMcpConfig(
  dir: string,
  harnessCommand: readonly string[],
  socketPath: string,
  token: string,
): string {
  const [command, ...args] = harnessCommand;
  const file = path.join(dir, "mcp.json");
  const config = {
    mcpServers: {
      harness: {
        command,
        args: [...args, "mcp", "--socket", socketPath],
        env: { [MCP_TOKEN_ENV]: token },
      },
    },
  };
  fs.writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600, flag: "wx" });
  return file;
}

/** Runs the one-shot without a shell in its own process group, within its timeout. */
function oneShot(o: MinerRunOptions, run: string, mcpConfig: string, token: string): Promise<MinerRunResult> {
  const argv = o.miner.command.map((a) => a.replaceAll("{mcp_config}", mcpConfig).replaceAll("{run}", run));
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    let prompt: number | undefined;
    try {
      // The prompt file, when configured, is the one-shot's stdin: no shell is needed to feed it.
      prompt = o.miner.promptFile === undefined ? undefined : fs.openSync(o.miner.promptFile, "r");
      child = spawn(argv[0] as string, argv.slice(1), {
        stdio: [prompt ?? "ignore", o.oneShotStdout === "stderr" ? 2 : "inherit", "inherit"],
        detached: true,
        env: {
          ...o.env,
          HARNESS_MCP_CONFIG: mcpConfig,
          HARNESS_MINER_RUN: run,
          [MCP_TOKEN_ENV]: token,
        },
      });
    } catch (e) {
      if (prompt !== undefined) fs.closeSync(prompt);
      reject(e);
      return;
    }
    if (prompt !== undefined) fs.closeSync(prompt);
    let timedOut = false;
    const group = (signal: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      group("SIGTERM");
      setTimeout(() => group("SIGKILL"), KILL_GRACE_MS).unref();
    }, o.miner.timeout);
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(new MinerRunError(`cannot run ${argv[0]}: ${e.message}`, { cause: e }));
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      const exitCode = code ?? -1;
      if (timedOut) resolve({ run, outcome: "timed_out", exitCode, reason: "timeout" });
      else if (code === 0) resolve({ run, outcome: "success", exitCode: 0, reason: "" });
      else resolve({ run, outcome: "failed", exitCode, reason: signal === null ? "" : `signal ${signal}` });
    });
  });
}
