/**
 * RuleService's sentinel errors (SPEC-0029 "Error Handling Standards"): every failure a caller can act
 * on is one of these, with one ConnectRPC code and an `ErrorDetail` naming it, so the CLI maps it to one
 * exit code (the table in docs/cli.md). Anything else a handler throws is a fault of the daemon, wrapped
 * with the method and what it was asked about.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { RuleProblem } from "../../core/rule-file.js";
import { ErrorDetailSchema, ErrorReason } from "./gen/harness/v1/rules_pb.js";

/** A failure the caller can act on: one sentinel, one ConnectRPC code. */
export abstract class RuleServiceError extends Error {
  abstract readonly reason: ErrorReason;
  abstract readonly code: Code;
  constructor(
    /** The rule, fire id or harness the call named. */
    readonly subject: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class UnknownRuleError extends RuleServiceError {
  readonly reason = ErrorReason.UNKNOWN_RULE;
  readonly code = Code.NotFound;
  constructor(name: string) {
    super(name, `unknown rule: ${name} is not in the rule set in force (see harness rules list)`);
  }
}

export class UnknownFireError extends RuleServiceError {
  readonly reason = ErrorReason.UNKNOWN_FIRE;
  readonly code = Code.NotFound;
  constructor(fireId: string) {
    super(fireId, `unknown fire: no fire ${fireId} in the fire log`);
  }
}

export class HoldNotFoundError extends RuleServiceError {
  readonly reason = ErrorReason.HOLD_NOT_FOUND;
  readonly code = Code.NotFound;
  constructor(harness: string, rule: string | undefined) {
    super(harness, `hold not found: no hold on ${harness}${rule === undefined ? "" : ` by rule ${rule}`}`);
  }
}

export class InvalidArgumentError extends RuleServiceError {
  readonly reason = ErrorReason.INVALID_ARGUMENT;
  readonly code = Code.InvalidArgument;
}

export class ReloadFailedError extends RuleServiceError {
  readonly reason = ErrorReason.RELOAD_FAILED;
  readonly code = Code.FailedPrecondition;
  constructor(cause: Error) {
    super("", `reload failed; the rule set in force is unchanged: ${cause.message}`, { cause });
  }
}

/** The error a handler throws: a sentinel with its detail, or a daemon fault with the call's context. */
export function toConnectError(e: unknown, context: string): ConnectError {
  if (e instanceof RuleServiceError)
    return new ConnectError(
      e.message,
      e.code,
      undefined,
      [{ desc: ErrorDetailSchema, value: { reason: e.reason, subject: e.subject } }],
      e,
    );
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

export class UnknownPolicyRepoError extends RuleServiceError {
  readonly reason = ErrorReason.UNKNOWN_POLICY_REPO;
  readonly code = Code.NotFound;
  constructor(repo: string) {
    super(repo, `unknown policy repo: the global config declares no [policy_repo.${repo}]`);
  }
}

/** A backtested file fails a load check: the reason it would be disabled with, and where. */
export class RuleRefusedError extends RuleServiceError {
  readonly reason: ErrorReason;
  readonly code = Code.InvalidArgument;
  constructor(readonly problem: RuleProblem) {
    const where = problem.line === undefined ? "" : `:${problem.line}:${problem.column ?? 1}`;
    super(problem.file, `${problem.file}${where}: ${problem.reason}: ${problem.message}`);
    this.reason =
      problem.reason === "compile"
        ? ErrorReason.COMPILE
        : problem.reason === "cost_estimate"
          ? ErrorReason.COST_ESTIMATE
          : ErrorReason.RULE_SCHEMA;
  }
}

export class BacktestBusyError extends RuleServiceError {
  readonly reason = ErrorReason.BACKTEST_BUSY;
  readonly code = Code.ResourceExhausted;
}

export class SinceTooLongError extends RuleServiceError {
  readonly reason = ErrorReason.SINCE_TOO_LONG;
  readonly code = Code.InvalidArgument;
}

/**
 * propose_rule (REQ-15): a proposal may only annotate or notify, so no miner's rule can hold or stop a
 * harness even once the operator has merged it and listed it in enforce.
 */
export class InvalidProposalLevelError extends RuleServiceError {
  readonly reason = ErrorReason.INVALID_PROPOSAL_LEVEL;
  readonly code = Code.InvalidArgument;
  constructor(name: string, level: string) {
    super(
      name,
      `invalid_level: a proposal's level must be annotate or notify, not ${JSON.stringify(level.slice(0, 32))}`,
    );
  }
}

export class ProposalBacklogFullError extends RuleServiceError {
  readonly reason = ErrorReason.PROPOSAL_BACKLOG_FULL;
  readonly code = Code.ResourceExhausted;
  constructor(name: string, backlog: number) {
    super(
      name,
      `proposal_backlog_full: ${backlog} proposals are stored and not yet proposed; harness rules propose must take some first`,
    );
  }
}

export class ProposalRunLimitError extends RuleServiceError {
  readonly reason = ErrorReason.PROPOSAL_RUN_LIMIT;
  readonly code = Code.ResourceExhausted;
  constructor(run: string, limit: number) {
    super(run, `proposal_run_limit: run ${run} has stored ${limit} proposals, the most one run may`);
  }
}

export class UnknownEvidenceError extends RuleServiceError {
  readonly reason = ErrorReason.UNKNOWN_EVIDENCE;
  readonly code = Code.InvalidArgument;
  constructor(id: string) {
    const shown = id.length > 64 ? `${id.slice(0, 64)}…` : id;
    super(
      shown,
      `unknown_evidence: ${JSON.stringify(shown)} names no run, journal row, fire or graph node the store holds`,
    );
  }
}

export class NotRuleMinerError extends RuleServiceError {
  readonly reason = ErrorReason.NOT_RULE_MINER;
  readonly code = Code.PermissionDenied;
  constructor(run: string) {
    super(run, `not_rule_miner: run ${run} is not a run of a harness listed in [memory] rule_miners`);
  }
}

export class UnknownProposalError extends RuleServiceError {
  readonly reason = ErrorReason.UNKNOWN_PROPOSAL;
  readonly code = Code.NotFound;
  constructor(id: string) {
    super(id, `unknown proposal: no proposal ${id} is stored`);
  }
}

/** RecordProposal: `opened` for an expression hash a closed pull request rejected on that repo. */
export class SuppressedProposalError extends RuleServiceError {
  readonly reason = ErrorReason.SUPPRESSED_PROPOSAL;
  readonly code = Code.FailedPrecondition;
  constructor(id: string, repo: string, pull: { readonly number: number; readonly url: string }) {
    super(
      id,
      `suppressed proposal: ${id}'s expression hash was rejected on ${repo} by pull request #${pull.number} (${pull.url}), closed unmerged`,
    );
  }
}

/** RecordProposal: a new pull request beyond the repo's `max_proposals_per_week` in the last 7 days. */
export class ProposalCapReachedError extends RuleServiceError {
  readonly reason = ErrorReason.PROPOSAL_CAP_REACHED;
  readonly code = Code.ResourceExhausted;
  constructor(id: string, repo: string, cap: number) {
    super(
      id,
      `proposal cap reached: ${cap} rule pull requests were opened on ${repo} in the last 7 days (max_proposals_per_week); ${id} waits`,
    );
  }
}

/** RecordProposal: a transition the proposal's state does not allow. */
export class ProposalStateError extends RuleServiceError {
  readonly reason = ErrorReason.PROPOSAL_STATE;
  readonly code = Code.FailedPrecondition;
}
