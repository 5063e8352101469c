/**
 * How the daemon's ConnectRPC services say a failure: each sentinel (`../errors.ts`) has one ConnectRPC
 * code and one `ErrorDetail` reason, in the one table below, so the CLI maps it to one exit code (the
 * table in docs/cli.md). Anything else a handler throws is a fault of the daemon, wrapped with the
 * method and what it was asked about.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { type Sentinel, SentinelError } from "../errors.js";
import { ErrorDetailSchema, ErrorReason } from "./gen/harness/v1/rules_pb.js";

const STATUS: Readonly<Record<Sentinel, { readonly code: Code; readonly reason: ErrorReason }>> = {
  unknown_rule: { code: Code.NotFound, reason: ErrorReason.UNKNOWN_RULE },
  unknown_fire: { code: Code.NotFound, reason: ErrorReason.UNKNOWN_FIRE },
  hold_not_found: { code: Code.NotFound, reason: ErrorReason.HOLD_NOT_FOUND },
  invalid_argument: { code: Code.InvalidArgument, reason: ErrorReason.INVALID_ARGUMENT },
  reload_failed: { code: Code.FailedPrecondition, reason: ErrorReason.RELOAD_FAILED },
  unknown_policy_repo: { code: Code.NotFound, reason: ErrorReason.UNKNOWN_POLICY_REPO },
  backtest_busy: { code: Code.ResourceExhausted, reason: ErrorReason.BACKTEST_BUSY },
  since_too_long: { code: Code.InvalidArgument, reason: ErrorReason.SINCE_TOO_LONG },
  invalid_proposal_level: { code: Code.InvalidArgument, reason: ErrorReason.INVALID_PROPOSAL_LEVEL },
  proposal_backlog_full: { code: Code.ResourceExhausted, reason: ErrorReason.PROPOSAL_BACKLOG_FULL },
  proposal_run_limit: { code: Code.ResourceExhausted, reason: ErrorReason.PROPOSAL_RUN_LIMIT },
  unknown_evidence: { code: Code.InvalidArgument, reason: ErrorReason.UNKNOWN_EVIDENCE },
  not_rule_miner: { code: Code.PermissionDenied, reason: ErrorReason.NOT_RULE_MINER },
  unknown_proposal: { code: Code.NotFound, reason: ErrorReason.UNKNOWN_PROPOSAL },
  suppressed_proposal: { code: Code.FailedPrecondition, reason: ErrorReason.SUPPRESSED_PROPOSAL },
  proposal_cap_reached: { code: Code.ResourceExhausted, reason: ErrorReason.PROPOSAL_CAP_REACHED },
  proposal_state: { code: Code.FailedPrecondition, reason: ErrorReason.PROPOSAL_STATE },
  compile: { code: Code.InvalidArgument, reason: ErrorReason.COMPILE },
  cost_estimate: { code: Code.InvalidArgument, reason: ErrorReason.COST_ESTIMATE },
  rule_schema: { code: Code.InvalidArgument, reason: ErrorReason.RULE_SCHEMA },
  store_unavailable: { code: Code.Unavailable, reason: ErrorReason.STORE_UNAVAILABLE },
  not_leader: { code: Code.FailedPrecondition, reason: ErrorReason.NOT_LEADER },
};

/** A sentinel's ConnectRPC code and `ErrorDetail` reason. */
export const statusOf = (e: SentinelError) => STATUS[e.sentinel];

/** The error a handler throws: a sentinel with its detail, or a daemon fault with the call's context. */
export function toConnectError(e: unknown, context: string): ConnectError {
  if (e instanceof SentinelError) {
    const { code, reason } = statusOf(e);
    return new ConnectError(
      e.message,
      code,
      undefined,
      [{ desc: ErrorDetailSchema, value: { reason, subject: e.subject } }],
      e,
    );
  }
  if (e instanceof ConnectError) return e;
  return new ConnectError(`${context}: ${(e as Error).message}`, Code.Internal, undefined, undefined, e);
}

/** Runs a handler, turning what it throws into the error the caller receives. */
export async function serve<T>(context: string, handler: () => T | Promise<T>): Promise<T> {
  try {
    return await handler();
  } catch (e) {
    throw toConnectError(e, context);
  }
}
