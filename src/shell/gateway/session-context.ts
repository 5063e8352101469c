/**
 * What every tool of one MCP session shares: who the caller is (from its token, fixed when the session
 * began), whether it is a rule miner, the daemon's pieces the tools call, and the guard each call runs
 * through (the token is checked again, so a run's token stops working the moment the run closes).
 */
import type { ServiceImpl } from "@connectrpc/connect";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { JournalReads } from "../journal-query/journal-query-pool.js";
import type { ProposalIntake } from "../proposals/propose-rule.js";
import type { RuleService } from "../rpc/gen/harness/v1/rules_pb.js";
import type { Log } from "../support/log.js";
import type { GatewayCaller, IdentifyToken } from "./caller.js";

/** The RuleService handlers the read tools call in this process, as the ConnectRPC server does. */
export type RuleReadHandlers = Pick<
  ServiceImpl<typeof RuleService>,
  "listRules" | "getRule" | "listFires" | "explainFire" | "listHolds" | "backtest"
>;

export interface GatewayDeps {
  readonly identify: IdentifyToken;
  /** `[memory] rule_miners` in force: read when a session begins, so a reload applies to new sessions. */
  readonly ruleMiners: () => readonly string[];
  readonly proposals: Pick<ProposalIntake, "propose">;
  readonly rules: RuleReadHandlers;
  readonly journal: JournalReads;
  readonly clock: () => number;
  readonly log: Log;
}

export interface SessionContext {
  readonly caller: GatewayCaller;
  readonly miner: boolean;
  readonly deps: GatewayDeps;
  /** Runs a tool call if the caller's token still holds, turning what it throws into a tool error. */
  readonly guard: (tool: string, call: () => Promise<CallToolResult>) => Promise<CallToolResult>;
}
