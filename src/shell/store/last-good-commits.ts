/**
 * The last good commit of each policy repo (SPEC-0029 REQ-2), in the store's `policy_last_good`: the
 * commit the daemon last loaded rules from while the clone was clean on its branch. Only the daemon
 * writes it; it survives restarts, so a daemon started beside a dirty clone serves that commit.
 */
import type { Db } from "./open-store.js";

export interface LastGood {
  readonly repo: string;
  readonly branch: string;
  readonly commit: string;
  /** The daemon's clock when it was loaded, ms. */
  readonly loadedAt: number;
}

/** A `policy_last_good` row as both backends read it. */
export interface LastGoodRow {
  repo: string;
  branch: string;
  commit_oid: string;
  loaded_at: number;
}

export const toLastGood = (row: LastGoodRow): LastGood => ({
  repo: row.repo,
  branch: row.branch,
  commit: row.commit_oid,
  loadedAt: row.loaded_at,
});

export class LastGoodCommits {
  private readonly select;
  private readonly upsert;

  constructor(db: Db) {
    this.select = db.prepare<[string], LastGoodRow>(
      "SELECT repo, branch, commit_oid, loaded_at FROM policy_last_good WHERE repo = ?",
    );
    this.upsert = db.prepare<[string, string, string, number]>(
      `INSERT INTO policy_last_good (repo, branch, commit_oid, loaded_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (repo) DO UPDATE SET branch = excluded.branch, commit_oid = excluded.commit_oid,
         loaded_at = excluded.loaded_at`,
    );
  }

  get(repo: string): LastGood | undefined {
    const row = this.select.get(repo);
    return row === undefined ? undefined : toLastGood(row);
  }

  record(good: LastGood): void {
    this.upsert.run(good.repo, good.branch, good.commit, good.loadedAt);
  }
}
