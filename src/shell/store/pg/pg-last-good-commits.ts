/** The policy repos' last good commits on PostgreSQL (`../last-good-commits.ts`): each call one statement. */
import type pg from "pg";
import type { AsyncPort } from "../async-port.js";
import { type LastGood, type LastGoodCommits, type LastGoodRow, toLastGood } from "../last-good-commits.js";

export class PgLastGoodCommits implements AsyncPort<LastGoodCommits> {
  constructor(private readonly pool: pg.Pool) {}

  async get(repo: string): Promise<LastGood | undefined> {
    const r = await this.pool.query<LastGoodRow>(
      "SELECT repo, branch, commit_oid, loaded_at FROM policy_last_good WHERE repo = $1",
      [repo],
    );
    const row = r.rows[0];
    return row === undefined ? undefined : toLastGood(row);
  }

  async record(good: LastGood): Promise<void> {
    await this.pool.query(
      `INSERT INTO policy_last_good (repo, branch, commit_oid, loaded_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (repo) DO UPDATE SET branch = excluded.branch, commit_oid = excluded.commit_oid,
         loaded_at = excluded.loaded_at`,
      [good.repo, good.branch, good.commit, good.loadedAt],
    );
  }
}
