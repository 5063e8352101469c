/**
 * How a client command calls the daemon: `withClient` finds its socket (`target.ts`), makes the
 * RuleService client, and turns a failure into the line that says why and the exit code of its
 * sentinel (docs/cli.md).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { handshakeFailed, type RuleClient, ruleClient, unreachable } from "../rpc/client.js";
import { ErrorDetailSchema, ErrorReason } from "../rpc/gen/harness/v1/rules_pb.js";
import { type Common, EXIT, type Io } from "./io.js";
import { type ClientTarget, clientTarget, noAnswer, readToken } from "./target.js";

/** The exit code of each RuleService sentinel (docs/cli.md). */
const EXIT_FOR_REASON: Readonly<Record<ErrorReason, number>> = {
  [ErrorReason.UNSPECIFIED]: EXIT.error,
  [ErrorReason.UNKNOWN_RULE]: EXIT.failed,
  [ErrorReason.UNKNOWN_FIRE]: EXIT.failed,
  [ErrorReason.HOLD_NOT_FOUND]: EXIT.failed,
  [ErrorReason.INVALID_ARGUMENT]: EXIT.usage,
  [ErrorReason.RELOAD_FAILED]: EXIT.error,
  [ErrorReason.RULE_SCHEMA]: EXIT.failed,
  [ErrorReason.COMPILE]: EXIT.failed,
  [ErrorReason.COST_ESTIMATE]: EXIT.failed,
  [ErrorReason.BACKTEST_BUSY]: EXIT.error,
  [ErrorReason.SINCE_TOO_LONG]: EXIT.usage,
  [ErrorReason.UNKNOWN_POLICY_REPO]: EXIT.failed,
  [ErrorReason.INVALID_PROPOSAL_LEVEL]: EXIT.failed,
  [ErrorReason.PROPOSAL_BACKLOG_FULL]: EXIT.error,
  [ErrorReason.SUPPRESSED_PROPOSAL]: EXIT.failed,
  [ErrorReason.PROPOSAL_CAP_REACHED]: EXIT.failed,
  [ErrorReason.UNKNOWN_PROPOSAL]: EXIT.failed,
  [ErrorReason.UNKNOWN_EVIDENCE]: EXIT.failed,
  [ErrorReason.PROPOSAL_RUN_LIMIT]: EXIT.error,
  [ErrorReason.NOT_RULE_MINER]: EXIT.error,
  [ErrorReason.PROPOSAL_STATE]: EXIT.failed,
  [ErrorReason.STORE_UNAVAILABLE]: EXIT.error,
  [ErrorReason.NOT_LEADER]: EXIT.error,
};

/** Says why a call failed, and returns its exit code: by the error's sentinel, else by what failed. */
export function failed(command: string, where: string, e: unknown, io: Io): number {
  if (unreachable(e) || (where.startsWith("https://") && handshakeFailed(e))) {
    io.err(`harness ${command}: ${noAnswer(where)}`);
    return EXIT.unreachable;
  }
  if (!(e instanceof ConnectError)) {
    io.err(`harness ${command}: ${(e as Error).message}`);
    return EXIT.error;
  }
  io.err(`harness ${command}: ${e.rawMessage}`);
  const detail = e.findDetails(ErrorDetailSchema)[0];
  if (detail !== undefined) return EXIT_FOR_REASON[detail.reason];
  return e.code === Code.InvalidArgument ? EXIT.usage : EXIT.error;
}

/** Runs one client command against the daemon, mapping its failure to an exit code. */
export async function withClient(
  command: string,
  options: Common,
  io: Io,
  run: (client: RuleClient, socketPath: string) => Promise<number>,
): Promise<number> {
  let target: ClientTarget;
  let token: string | undefined;
  try {
    target = await clientTarget({ ...options, env: io.env });
    // Over TCP no call is trusted for where it came from: a read presents the read token, else the control token.
    const read = await readToken(target, command);
    if ("error" in read) {
      io.err(read.error);
      return EXIT.error;
    }
    token = read.token;
  } catch (e) {
    io.err(`harness ${command}: ${(e as Error).message}`);
    return EXIT.usage;
  }
  try {
    return await run(ruleClient(target.rpc, token), target.where);
  } catch (e) {
    return failed(command, target.where, e, io);
  }
}
