/**
 * SQLite's `ProposalStore` (`../proposal-store.ts`) on PostgreSQL: rule proposals, the pull requests
 * opened for them and the hashes rejected, read through SQLite's own mappers. A proposal's number is the
 * `rule_proposals.id` identity, as SQLite's rowid; `untrusted` is a BOOLEAN here. A checked change is
 * written in one transaction on one pooled client, as SQLite writes it in one.
 */
import type pg from "pg";
import type { AsyncPort } from "../async-port.js";
import {
  COLUMNS,
  FROM,
  type NewProposal,
  type Proposal,
  type ProposalChange,
  type ProposalRow,
  type ProposalState,
  type ProposalStore,
  type PullRequest,
  type PullState,
  proposalId,
  proposalNumber,
  proposalOf,
  type Rejection,
  type RejectionRow,
  rejectionOf,
  UNPROPOSED,
} from "../proposal-store.js";
import { inTransaction } from "./pg-client.js";

type PgProposalRow = Omit<ProposalRow, "untrusted"> & { untrusted: boolean };

const toProposal = (row: PgProposalRow): Proposal => proposalOf({ ...row, untrusted: row.untrusted ? 1 : 0 });

export class PgProposalStore implements AsyncPort<ProposalStore> {
  constructor(private readonly pool: pg.Pool) {}

  /** Stores a proposal as `stored` and untrusted; returns its id. */
  async insert(p: NewProposal): Promise<string> {
    const r = await this.pool.query<{ id: number }>(
      `INSERT INTO rule_proposals (name, file_text, on_kind, level, content_hash, expression_hash, rationale,
         evidence, run, untrusted, state, state_detail, backtest, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, true, 'stored', '', $10, $11, $11)
       RETURNING id`,
      [
        p.name,
        p.fileText,
        p.on,
        p.level,
        p.contentHash,
        p.expressionHash,
        p.rationale,
        JSON.stringify(p.evidence),
        p.run,
        JSON.stringify(p.backtest),
        p.at,
      ],
    );
    return proposalId((r.rows[0] as { id: number }).id);
  }

  /** Proposals a run has stored, whatever became of them. */
  async countByRun(run: string): Promise<number> {
    const r = await this.pool.query<{ n: number }>(
      "SELECT COUNT(*) AS n FROM rule_proposals WHERE run = $1",
      [run],
    );
    return (r.rows[0] as { n: number }).n;
  }

  /** Proposals stored and not yet proposed. */
  async backlog(): Promise<number> {
    const r = await this.pool.query<{ n: number }>(
      "SELECT COUNT(*) AS n FROM rule_proposals WHERE state = ANY($1::text[])",
      [UNPROPOSED],
    );
    return (r.rows[0] as { n: number }).n;
  }

  async get(id: string): Promise<Proposal | undefined> {
    const n = proposalNumber(id);
    if (n === undefined) return undefined;
    const r = await this.pool.query<PgProposalRow>(`SELECT ${COLUMNS} FROM ${FROM} WHERE p.id = $1`, [n]);
    const row = r.rows[0];
    return row === undefined ? undefined : toProposal(row);
  }

  /** Oldest first, after the given id's number, optionally in one state. */
  async list(
    filter: { readonly state?: ProposalState; readonly after: number },
    limit: number,
  ): Promise<Proposal[]> {
    const params: (string | number | null)[] = [filter.after];
    const where = ["p.id > $1"];
    if (filter.state !== undefined) {
      params.push(filter.state);
      where.push(`p.state = $${params.length}`);
    }
    // SQLite reads a negative LIMIT as none; PostgreSQL refuses one, and reads LIMIT NULL as none.
    params.push(limit < 0 ? null : limit);
    const r = await this.pool.query<PgProposalRow>(
      `SELECT ${COLUMNS} FROM ${FROM} WHERE ${where.join(" AND ")} ORDER BY p.id LIMIT $${params.length}`,
      params,
    );
    return r.rows.map(toProposal);
  }

  async rejection(repo: string, expressionHash: string): Promise<Rejection | undefined> {
    const r = await this.pool.query<RejectionRow>(
      "SELECT repo, expression_hash, reason, pr_number, pr_url, rejected_at FROM rule_proposal_rejections WHERE repo = $1 AND expression_hash = $2",
      [repo, expressionHash],
    );
    const row = r.rows[0];
    return row === undefined ? undefined : rejectionOf(row);
  }

  async pull(
    repo: string,
    number: number,
  ): Promise<(PullRequest & { readonly state: PullState }) | undefined> {
    const r = await this.pool.query<PullRequest & { state: PullState }>(
      "SELECT number, url, state FROM rule_proposal_pulls WHERE repo = $1 AND number = $2",
      [repo, number],
    );
    return r.rows[0];
  }

  /** Pull requests recorded opened on a repo after `at`: what max_proposals_per_week counts. */
  async pullsOpenedAfter(repo: string, at: number): Promise<number> {
    const r = await this.pool.query<{ n: number }>(
      "SELECT COUNT(*) AS n FROM rule_proposal_pulls WHERE repo = $1 AND opened_at > $2",
      [repo, at],
    );
    return (r.rows[0] as { n: number }).n;
  }

  /** Writes a checked change in one transaction: the proposal, its pull request, and any rejection. */
  record(c: ProposalChange): Promise<void> {
    const id = proposalNumber(c.id) ?? null;
    return inTransaction(this.pool, "BEGIN", async (client) => {
      if (c.pull !== undefined && c.pullState !== undefined)
        await client.query(
          `INSERT INTO rule_proposal_pulls (repo, number, url, state, opened_at) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (repo, number) DO UPDATE SET url = excluded.url, state = excluded.state`,
          [c.repo, c.pull.number, c.pull.url, c.pullState, c.at],
        );
      await client.query(
        `UPDATE rule_proposals SET state = $1, state_detail = $2, policy_repo = $3, pr_number = $4,
           backtest = COALESCE($5, backtest), updated_at = $6 WHERE id = $7`,
        [
          c.state,
          c.detail,
          c.repo,
          c.pull?.number ?? null,
          c.backtest === undefined ? null : JSON.stringify(c.backtest),
          c.at,
          id,
        ],
      );
      // As SQLite's endMerged: the others pushed to a merged pull request with the named proposal's hash
      // are merged too, those with another superseded (closed, their hash not rejected).
      if (c.pull !== undefined && c.state === "merged")
        await client.query(
          `UPDATE rule_proposals SET
             state = CASE WHEN expression_hash = h.hash THEN 'merged' ELSE 'closed' END,
             state_detail = CASE WHEN expression_hash = h.hash THEN $1 ELSE $2 END,
             updated_at = $3
           FROM (SELECT expression_hash AS hash FROM rule_proposals WHERE id = $4) AS h
           WHERE policy_repo = $5 AND pr_number = $6 AND state = 'opened'`,
          [
            c.detail,
            `superseded: pull request #${c.pull.number} merged the expression of ${c.id}, not this one`,
            c.at,
            id,
            c.repo,
            c.pull.number,
          ],
        );
      // A pull request closed unmerged ends every proposal that was pushed to it, not only the one named.
      if (c.pull !== undefined && c.state === "closed")
        await client.query(
          `UPDATE rule_proposals SET state = $1, state_detail = $2, updated_at = $3
           WHERE policy_repo = $4 AND pr_number = $5 AND state = 'opened'`,
          [c.state, c.detail, c.at, c.repo, c.pull.number],
        );
      const r = c.rejection;
      if (r !== undefined)
        await client.query(
          `INSERT INTO rule_proposal_rejections (repo, expression_hash, reason, pr_number, pr_url, rejected_at)
           VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (repo, expression_hash) DO UPDATE SET reason = excluded.reason,
             pr_number = excluded.pr_number, pr_url = excluded.pr_url, rejected_at = excluded.rejected_at`,
          [r.repo, r.expressionHash, r.reason, r.pull.number, r.pull.url, r.at],
        );
    });
  }
}
