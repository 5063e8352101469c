/**
 * JournalQueryService (read tier): the journal rows and windowed counts the MCP gateway's
 * query_journal and count_journal tools read, for the operator's clients, through the same
 * `JournalQueries`, in the daemon's journal query workers. A read caller is the operator's: it sees
 * every harness's rows.
 */
import type { ServiceImpl } from "@connectrpc/connect";
import type { Term } from "../journal-query/journal-queries.js";
import type { JournalReads } from "../journal-query/journal-query-pool.js";
import type { JournalQueryService } from "./gen/harness/v1/journal_query_pb.js";
import type { SelectorTerm } from "./gen/harness/v1/rules_pb.js";
import { serve } from "./status.js";

const termsOf = (terms: readonly SelectorTerm[]): Term[] =>
  terms.map((t) => [t.field, t.value.case === "flag" ? t.value.value : (t.value.value ?? "")]);

const termOut = ([field, value]: readonly [string, string | boolean]) => ({
  field,
  value: typeof value === "boolean" ? { case: "flag" as const, value } : { case: "text" as const, value },
});

export function journalQueryService(queries: JournalReads): ServiceImpl<typeof JournalQueryService> {
  return {
    queryJournal: (req) =>
      serve("QueryJournal", async () => {
        const answer = await queries.query({
          kind: req.kind,
          type: req.type,
          fields: termsOf(req.fields),
          sinceMs: Number(req.sinceMs),
          untilMs: Number(req.untilMs),
          afterSeq: Number(req.afterSeq),
          limit: req.limit,
          newest: req.newest,
        });
        return {
          rows: answer.rows.map((r) => ({
            seq: BigInt(r.seq),
            atMs: BigInt(r.at),
            kind: r.kind,
            type: r.type,
            source: r.source,
            fields: Object.entries(r.columns).map(termOut),
            paths: [...r.paths],
          })),
          truncated: answer.truncated,
          nextAfterSeq: BigInt(answer.nextAfterSeq),
        };
      }),
    countJournal: (req) =>
      serve("CountJournal", async () => {
        const answer = await queries.count({
          fn: req.fn,
          field: req.field,
          selector: termsOf(req.selector),
          within: req.within,
        });
        return {
          number: answer.number,
          truth: answer.truth,
          nowMs: BigInt(answer.nowMs),
          lastSeq: BigInt(answer.lastSeq),
          rowsRead: answer.rowsRead,
        };
      }),
  };
}
