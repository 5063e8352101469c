/**
 * The spec's sentinel errors (SPEC-0029 "Error Handling Standards"): every failure a caller can act on
 * is one of these, named by its sentinel and the rule, fire, harness, repo or proposal it is about.
 * They are transport-neutral: the domain throws them, and each transport says them its own way
 * (`rpc/status.ts` maps each sentinel to one ConnectRPC code and `ErrorDetail`, the CLI to one exit
 * code). Anything else is a fault, wrapped with what was being done.
 */
import type { RuleProblem } from "../core/rule-file.js";

export const SENTINELS = [
  "unknown_rule",
  "unknown_fire",
  "hold_not_found",
  "invalid_argument",
  "reload_failed",
  "unknown_policy_repo",
  "backtest_busy",
  "since_too_long",
  "invalid_proposal_level",
  "proposal_backlog_full",
  "proposal_run_limit",
  "unknown_evidence",
  "not_rule_miner",
  "unknown_proposal",
  "suppressed_proposal",
  "proposal_cap_reached",
  "proposal_state",
  "compile",
  "cost_estimate",
  "rule_schema",
  "store_unavailable",
  "not_leader",
] as const;
export type Sentinel = (typeof SENTINELS)[number];

/** A failure the caller can act on: one sentinel. */
export abstract class SentinelError extends Error {
  abstract readonly sentinel: Sentinel;
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

export class UnknownRuleError extends SentinelError {
  readonly sentinel = "unknown_rule" as const;
  constructor(name: string) {
    super(name, `unknown rule: ${name} is not in the rule set in force (see harness rules list)`);
  }
}

export class UnknownFireError extends SentinelError {
  readonly sentinel = "unknown_fire" as const;
  constructor(fireId: string) {
    super(fireId, `unknown fire: no fire ${fireId} in the fire log`);
  }
}

export class HoldNotFoundError extends SentinelError {
  readonly sentinel = "hold_not_found" as const;
  constructor(harness: string, rule: string | undefined) {
    super(harness, `hold not found: no hold on ${harness}${rule === undefined ? "" : ` by rule ${rule}`}`);
  }
}

export class InvalidArgumentError extends SentinelError {
  readonly sentinel = "invalid_argument" as const;
}

export class ReloadFailedError extends SentinelError {
  readonly sentinel = "reload_failed" as const;
  constructor(cause: Error) {
    super("", `reload failed; the config and rule set in force are unchanged: ${cause.message}`, { cause });
  }
}

export class UnknownPolicyRepoError extends SentinelError {
  readonly sentinel = "unknown_policy_repo" as const;
  constructor(repo: string) {
    super(repo, `unknown policy repo: the global config declares no [policy_repo.${repo}]`);
  }
}

/** A backtested file fails a load check: the reason it would be disabled with, and where. */
export class RuleRefusedError extends SentinelError {
  readonly sentinel: "compile" | "cost_estimate" | "rule_schema";
  constructor(readonly problem: RuleProblem) {
    const where = problem.line === undefined ? "" : `:${problem.line}:${problem.column ?? 1}`;
    super(problem.file, `${problem.file}${where}: ${problem.reason}: ${problem.message}`);
    this.sentinel =
      problem.reason === "compile" || problem.reason === "cost_estimate" ? problem.reason : "rule_schema";
  }
}

/** REQ-17: two backtests run at once at most; a third is refused at once rather than queued. */
export class BacktestBusyError extends SentinelError {
  readonly sentinel = "backtest_busy" as const;
  constructor(file: string, running: number) {
    super(file, `${running} backtests are running already; try again when one has finished`);
  }
}

export class SinceTooLongError extends SentinelError {
  readonly sentinel = "since_too_long" as const;
}

/**
 * propose_rule (REQ-15): a proposal may only annotate or notify, so no miner's rule can hold or stop a
 * harness even once the operator has merged it and listed it in enforce.
 */
export class InvalidProposalLevelError extends SentinelError {
  readonly sentinel = "invalid_proposal_level" as const;
  constructor(name: string, level: string) {
    super(
      name,
      `invalid_level: a proposal's level must be annotate or notify, not ${JSON.stringify(level.slice(0, 32))}`,
    );
  }
}

export class ProposalBacklogFullError extends SentinelError {
  readonly sentinel = "proposal_backlog_full" as const;
  constructor(name: string, backlog: number) {
    super(
      name,
      `proposal_backlog_full: ${backlog} proposals are stored and not yet proposed; harness rules propose must take some first`,
    );
  }
}

export class ProposalRunLimitError extends SentinelError {
  readonly sentinel = "proposal_run_limit" as const;
  constructor(run: string, limit: number) {
    super(run, `proposal_run_limit: run ${run} has stored ${limit} proposals, the most one run may`);
  }
}

export class UnknownEvidenceError extends SentinelError {
  readonly sentinel = "unknown_evidence" as const;
  constructor(id: string) {
    const shown = id.length > 64 ? `${id.slice(0, 64)}…` : id;
    super(
      shown,
      `unknown_evidence: ${JSON.stringify(shown)} names no run, journal row, fire or graph node the store holds`,
    );
  }
}

export class NotRuleMinerError extends SentinelError {
  readonly sentinel = "not_rule_miner" as const;
  constructor(run: string) {
    super(run, `not_rule_miner: run ${run} is not a run of a harness listed in [memory] rule_miners`);
  }
}

export class UnknownProposalError extends SentinelError {
  readonly sentinel = "unknown_proposal" as const;
  constructor(id: string) {
    super(id, `unknown proposal: no proposal ${id} is stored`);
  }
}

/** RecordProposal: `opened` for an expression hash a closed pull request rejected on that repo. */
export class SuppressedProposalError extends SentinelError {
  readonly sentinel = "suppressed_proposal" as const;
  constructor(id: string, repo: string, pull: { readonly number: number; readonly url: string }) {
    super(
      id,
      `suppressed proposal: ${id}'s expression hash was rejected on ${repo} by pull request #${pull.number} (${pull.url}), closed unmerged`,
    );
  }
}

/** RecordProposal: a new pull request beyond the repo's `max_proposals_per_week` in the last 7 days. */
export class ProposalCapReachedError extends SentinelError {
  readonly sentinel = "proposal_cap_reached" as const;
  constructor(id: string, repo: string, cap: number) {
    super(
      id,
      `proposal cap reached: ${cap} rule pull requests were opened on ${repo} in the last 7 days (max_proposals_per_week); ${id} waits`,
    );
  }
}

/** RecordProposal: a transition the proposal's state does not allow. */
export class ProposalStateError extends SentinelError {
  readonly sentinel = "proposal_state" as const;
}

/**
 * The store did not commit or answer (a database gone away, a full disk): nothing the call asked was
 * acknowledged, and the caller may retry (with the same idempotency key, where it has one).
 */
/**
 * The call changes what only the leading daemon changes (a hold's release), and this daemon follows
 * another on the same store (decision 0022): ask the leader, which the message names.
 */
export class NotLeaderError extends SentinelError {
  readonly sentinel = "not_leader" as const;
  constructor(what: string, why: string) {
    super(what, `${what}: this daemon does not lead (${why}); ask the leading daemon`);
  }
}

export class StoreUnavailableError extends SentinelError {
  readonly sentinel = "store_unavailable" as const;
  constructor(store: string, why: string, options?: { cause?: unknown }) {
    super(store, `store unavailable: ${why}; nothing was acknowledged, retry`, options);
  }
}
