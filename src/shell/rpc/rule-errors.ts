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
