/**
 * The gateway's journal queries (query_journal, count_journal: `journal-queries.ts`) over the journal on
 * PostgreSQL (issue 34 item 3): the same checks, plans and answers as on SQLite, the same bounds (the
 * row cap, a window counted before it is read), the reads asynchronous. Not yet wired into the gateway:
 * the daemon has no PostgreSQL mode so far.
 */
import type { PgJournalQueryReads } from "../store/pg/pg-journal-query-reads.js";
import {
  type CountAnswer,
  type CountRequest,
  checkWindowCount,
  countAnswer,
  MAX_COUNT_ROWS,
  planCount,
  planQuery,
  type QueryAnswer,
  type QueryRequest,
  queryAnswer,
  type Scope,
} from "./journal-queries.js";

export class PgJournalQueries {
  constructor(
    private readonly reads: PgJournalQueryReads,
    /** The journal's last row: where a count's window ends (`PgJournal.last`). */
    private readonly journal: { last(): Promise<{ seq: number; at: number }> },
  ) {}

  async query(req: QueryRequest, scope?: Scope): Promise<QueryAnswer> {
    const plan = planQuery(req, scope);
    return queryAnswer(plan, await this.reads.rows(plan.filter, plan.limit + 1, plan.newest));
  }

  async count(req: CountRequest, scope?: Scope): Promise<CountAnswer> {
    const plan = planCount(req, scope);
    const last = await this.journal.last();
    const afterAt = last.at - plan.withinMs;
    const { kind, columns } = plan;
    checkWindowCount(plan, await this.reads.windowCount(kind, columns, afterAt, last.seq, MAX_COUNT_ROWS));
    return countAnswer(
      plan,
      last,
      await this.reads.windowRows(kind, columns, afterAt, last.seq, MAX_COUNT_ROWS),
    );
  }
}
