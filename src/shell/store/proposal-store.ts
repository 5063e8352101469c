/**
 * Rule proposals in the store (SPEC-0029 REQ-15, REQ-16; schema V3): what propose_rule stored, the pull
 * requests `harness rules propose` opened for them per policy repo, and the expression hashes a pull
 * request closed unmerged rejected there. Only the daemon writes these tables, on its one connection:
 * propose_rule in process, and RecordProposal. Nothing here is ever loaded as a rule.
 */
import type { ReplayedFire } from "../../core/backtest.js";
import type { Db } from "./open-store.js";

/**
 * A proposal's state, a closed set (docs/proposals.md):
 * - `stored`: stored by propose_rule, not yet taken by a propose pass;
 * - `waiting`: a pass left it for later, the repo's weekly cap being reached;
 * - `opened`: its pull request is open (a later pass may push to it);
 * - `suppressed`: its expression hash was rejected on the repo, so no pull request is opened for it;
 * - `duplicate`: a rule with its expression hash is already on the repo's default branch;
 * - `invalid`: it no longer passes the load checks (the error is its detail);
 * - `merged`, `closed`: its pull request was merged, or closed unmerged (which rejects the hash there);
 *   a proposal pushed to a pull request that merged another's expression is `closed` as superseded,
 *   its hash not rejected.
 * `stored` and `waiting` are the unproposed ones the backlog counts; the last five are final.
 */
export const PROPOSAL_STATES = [
  "stored",
  "waiting",
  "opened",
  "suppressed",
  "duplicate",
  "invalid",
  "merged",
  "closed",
] as const;
export type ProposalState = (typeof PROPOSAL_STATES)[number];

export const isProposalState = (s: string): s is ProposalState =>
  (PROPOSAL_STATES as readonly string[]).includes(s);

/** The unproposed states: what proposal_backlog_full counts. */
export const UNPROPOSED: readonly ProposalState[] = ["stored", "waiting"];

/** The summary of a proposal's backtest: counts and the first fires, as propose_rule returns it. */
export interface ProposalBacktest {
  /** The stretch replayed, ms, and the daemon's clock when it ended. */
  readonly sinceMs: number;
  readonly atMs: number;
  readonly rows: number;
  readonly fires: number;
  readonly evalErrors: number;
  readonly storeErrors: number;
  /** The first fires in seq order, at most `FIRST_FIRES`. */
  readonly firstFires: readonly ReplayedFire[];
}

/** REQ-15: the backtest summary carries the first 10 fires. */
export const FIRST_FIRES = 10;

export interface PullRequest {
  readonly number: number;
  readonly url: string;
}

export interface NewProposal {
  readonly name: string;
  /** The rule file rendered from the fields propose_rule was given, as rules/<name>.toml would hold it. */
  readonly fileText: string;
  readonly on: string;
  readonly level: "annotate" | "notify";
  readonly contentHash: string;
  readonly expressionHash: string;
  readonly rationale: string;
  readonly evidence: readonly string[];
  /** The caller's run, `<harness>#<run id>`. */
  readonly run: string;
  readonly backtest: ProposalBacktest;
  readonly at: number;
}

export interface Proposal extends NewProposal {
  /** `p-<n>`. */
  readonly id: string;
  /** Always true for what propose_rule stores: a miner's proposal is agent-written text. */
  readonly untrusted: boolean;
  readonly state: ProposalState;
  readonly stateDetail: string;
  readonly policyRepo: string | undefined;
  readonly pull: PullRequest | undefined;
  readonly updatedAt: number;
}

export interface Rejection {
  readonly repo: string;
  readonly expressionHash: string;
  /** The last review comment of the pull request that was closed. */
  readonly reason: string;
  readonly pull: PullRequest;
  readonly at: number;
}

export type PullState = "open" | "merged" | "closed";

/** What RecordProposal writes, once it has checked the transition (`record-proposal.ts`). */
export interface ProposalChange {
  readonly id: string;
  readonly repo: string;
  readonly state: ProposalState;
  readonly detail: string;
  readonly pull: PullRequest | undefined;
  /** The pull request's own state after the change, when there is one. */
  readonly pullState: PullState | undefined;
  readonly backtest: ProposalBacktest | undefined;
  /** Set when a pull request was closed unmerged: the hash it rejects on the repo. */
  readonly rejection: Rejection | undefined;
  readonly at: number;
}

export const proposalId = (n: number): string => `p-${n}`;

/** The number of a `p-<n>` id, or undefined for anything else. */
export function proposalNumber(id: string): number | undefined {
  const m = /^p-([1-9][0-9]{0,15})$/.exec(id);
  if (m === null) return undefined;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A proposal as the store's read (`COLUMNS` from `FROM`) gives it, `untrusted` as SQLite's 0/1. */
export interface ProposalRow {
  id: number;
  name: string;
  file_text: string;
  on_kind: string;
  level: "annotate" | "notify";
  content_hash: string;
  expression_hash: string;
  rationale: string;
  evidence: string;
  run: string;
  untrusted: number;
  state: ProposalState;
  state_detail: string;
  policy_repo: string | null;
  pr_number: number | null;
  pr_url: string | null;
  backtest: string;
  created_at: number;
  updated_at: number;
}

export const COLUMNS = `p.id, p.name, p.file_text, p.on_kind, p.level, p.content_hash, p.expression_hash, p.rationale,
  p.evidence, p.run, p.untrusted, p.state, p.state_detail, p.policy_repo, p.pr_number, r.url AS pr_url,
  p.backtest, p.created_at, p.updated_at`;
export const FROM =
  "rule_proposals p LEFT JOIN rule_proposal_pulls r ON r.repo = p.policy_repo AND r.number = p.pr_number";

function parsedJson<T>(row: ProposalRow, column: "evidence" | "backtest"): T {
  try {
    return JSON.parse(row[column]) as T;
  } catch (e) {
    throw new Error(`proposal ${proposalId(row.id)} (${row.name}): its ${column} column is not JSON`, {
      cause: e,
    });
  }
}

export function proposalOf(row: ProposalRow): Proposal {
  return {
    id: proposalId(row.id),
    name: row.name,
    fileText: row.file_text,
    on: row.on_kind,
    level: row.level,
    contentHash: row.content_hash,
    expressionHash: row.expression_hash,
    rationale: row.rationale,
    evidence: parsedJson<string[]>(row, "evidence"),
    run: row.run,
    untrusted: row.untrusted === 1,
    state: row.state,
    stateDetail: row.state_detail,
    policyRepo: row.policy_repo ?? undefined,
    pull:
      row.pr_number === null || row.pr_url === null ? undefined : { number: row.pr_number, url: row.pr_url },
    backtest: parsedJson<ProposalBacktest>(row, "backtest"),
    at: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A row of `rule_proposal_rejections`. */
export interface RejectionRow {
  repo: string;
  expression_hash: string;
  reason: string;
  pr_number: number;
  pr_url: string;
  rejected_at: number;
}

export const rejectionOf = (r: RejectionRow): Rejection => ({
  repo: r.repo,
  expressionHash: r.expression_hash,
  reason: r.reason,
  pull: { number: r.pr_number, url: r.pr_url },
  at: r.rejected_at,
});

export class ProposalStore {
  private readonly stmts;

  constructor(private readonly db: Db) {
    this.stmts = {
      insert: db.prepare(
        `INSERT INTO rule_proposals (name, file_text, on_kind, level, content_hash, expression_hash, rationale,
           evidence, run, untrusted, state, state_detail, backtest, created_at, updated_at)
         VALUES (@name, @fileText, @on, @level, @contentHash, @expressionHash, @rationale, @evidence, @run, 1,
           'stored', '', @backtest, @at, @at)`,
      ),
      byRun: db.prepare("SELECT COUNT(*) AS n FROM rule_proposals WHERE run = ?"),
      backlog: db.prepare(
        `SELECT COUNT(*) AS n FROM rule_proposals WHERE state IN (${UNPROPOSED.map((s) => `'${s}'`).join(", ")})`,
      ),
      get: db.prepare(`SELECT ${COLUMNS} FROM ${FROM} WHERE p.id = ?`),
      rejection: db.prepare(
        "SELECT repo, expression_hash, reason, pr_number, pr_url, rejected_at FROM rule_proposal_rejections WHERE repo = ? AND expression_hash = ?",
      ),
      pull: db.prepare("SELECT number, url, state FROM rule_proposal_pulls WHERE repo = ? AND number = ?"),
      pullsSince: db.prepare(
        "SELECT COUNT(*) AS n FROM rule_proposal_pulls WHERE repo = ? AND opened_at > ?",
      ),
      upsertPull: db.prepare(
        `INSERT INTO rule_proposal_pulls (repo, number, url, state, opened_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (repo, number) DO UPDATE SET url = excluded.url, state = excluded.state`,
      ),
      update: db.prepare(
        `UPDATE rule_proposals SET state = @state, state_detail = @detail, policy_repo = @repo,
           pr_number = @pr, backtest = COALESCE(@backtest, backtest), updated_at = @at WHERE id = @id`,
      ),
      // A pull request closed unmerged ends every proposal that was pushed to it, not only the one named.
      endPushed: db.prepare(
        `UPDATE rule_proposals SET state = @state, state_detail = @detail, updated_at = @at
         WHERE policy_repo = @repo AND pr_number = @pr AND state = 'opened'`,
      ),
      // A merged one merged the named proposal's expression: the others pushed to it with that hash are
      // merged too; those with another were superseded (closed, their hash not rejected).
      endMerged: db.prepare(
        `UPDATE rule_proposals SET
           state = CASE WHEN expression_hash = h.hash THEN 'merged' ELSE 'closed' END,
           state_detail = CASE WHEN expression_hash = h.hash THEN @detail ELSE @superseded END,
           updated_at = @at
         FROM (SELECT expression_hash AS hash FROM rule_proposals WHERE id = @id) AS h
         WHERE policy_repo = @repo AND pr_number = @pr AND state = 'opened'`,
      ),
      reject: db.prepare(
        `INSERT INTO rule_proposal_rejections (repo, expression_hash, reason, pr_number, pr_url, rejected_at)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (repo, expression_hash) DO UPDATE SET reason = excluded.reason,
           pr_number = excluded.pr_number, pr_url = excluded.pr_url, rejected_at = excluded.rejected_at`,
      ),
    };
  }

  /** Stores a proposal as `stored` and untrusted; returns its id. */
  insert(p: NewProposal): string {
    const r = this.stmts.insert.run({
      name: p.name,
      fileText: p.fileText,
      on: p.on,
      level: p.level,
      contentHash: p.contentHash,
      expressionHash: p.expressionHash,
      rationale: p.rationale,
      evidence: JSON.stringify(p.evidence),
      run: p.run,
      backtest: JSON.stringify(p.backtest),
      at: p.at,
    });
    return proposalId(Number(r.lastInsertRowid));
  }

  /** Proposals a run has stored, whatever became of them. */
  countByRun(run: string): number {
    return (this.stmts.byRun.get(run) as { n: number }).n;
  }

  /** Proposals stored and not yet proposed. */
  backlog(): number {
    return (this.stmts.backlog.get() as { n: number }).n;
  }

  get(id: string): Proposal | undefined {
    const n = proposalNumber(id);
    if (n === undefined) return undefined;
    const row = this.stmts.get.get(n) as ProposalRow | undefined;
    return row === undefined ? undefined : proposalOf(row);
  }

  /** Oldest first, after the given id's number, optionally in one state. */
  list(filter: { readonly state?: ProposalState; readonly after: number }, limit: number): Proposal[] {
    const where = ["p.id > ?"];
    const params: (string | number)[] = [filter.after];
    if (filter.state !== undefined) {
      where.push("p.state = ?");
      params.push(filter.state);
    }
    const sql = `SELECT ${COLUMNS} FROM ${FROM} WHERE ${where.join(" AND ")} ORDER BY p.id LIMIT ?`;
    return (this.db.prepare(sql).all(...params, limit) as ProposalRow[]).map(proposalOf);
  }

  rejection(repo: string, expressionHash: string): Rejection | undefined {
    const r = this.stmts.rejection.get(repo, expressionHash) as RejectionRow | undefined;
    return r === undefined ? undefined : rejectionOf(r);
  }

  pull(repo: string, number: number): (PullRequest & { readonly state: PullState }) | undefined {
    return this.stmts.pull.get(repo, number) as (PullRequest & { state: PullState }) | undefined;
  }

  /** Pull requests recorded opened on a repo after `at`: what max_proposals_per_week counts. */
  pullsOpenedAfter(repo: string, at: number): number {
    return (this.stmts.pullsSince.get(repo, at) as { n: number }).n;
  }

  /** Writes a checked change in one transaction: the proposal, its pull request, and any rejection. */
  record(c: ProposalChange): void {
    this.db.transaction(() => {
      if (c.pull !== undefined && c.pullState !== undefined)
        this.stmts.upsertPull.run(c.repo, c.pull.number, c.pull.url, c.pullState, c.at);
      this.stmts.update.run({
        id: proposalNumber(c.id),
        state: c.state,
        detail: c.detail,
        repo: c.repo,
        pr: c.pull?.number ?? null,
        backtest: c.backtest === undefined ? null : JSON.stringify(c.backtest),
        at: c.at,
      });
      if (c.pull !== undefined && c.state === "merged")
        this.stmts.endMerged.run({
          id: proposalNumber(c.id),
          detail: c.detail,
          superseded: `superseded: pull request #${c.pull.number} merged the expression of ${c.id}, not this one`,
          repo: c.repo,
          pr: c.pull.number,
          at: c.at,
        });
      if (c.pull !== undefined && c.state === "closed")
        this.stmts.endPushed.run({
          state: c.state,
          detail: c.detail,
          repo: c.repo,
          pr: c.pull.number,
          at: c.at,
        });
      const r = c.rejection;
      if (r !== undefined)
        this.stmts.reject.run(r.repo, r.expressionHash, r.reason, r.pull.number, r.pull.url, r.at);
    })();
  }
}
