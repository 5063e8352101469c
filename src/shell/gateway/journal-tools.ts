/**
 * The gateway's journal tools (SPEC-0029 REQ-15): query_journal (rows by kind, type, indexed fields
 * and time, identifiers only, at most 1,000 a call) and count_journal (a REQ-5 primitive evaluated as a
 * rule's would be on the last committed row). Both call `JournalQueries`, the code JournalQueryService
 * serves, in the daemon's journal query workers (`journal-query-pool.ts`), keyed by the session so one
 * session cannot take every worker. A rule miner reads the whole journal; any other caller only its own
 * harness's rows.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { EVENT_KINDS } from "../../core/kinds.js";
import { MAX_QUERY_ROWS, type Term } from "../journal-query/journal-queries.js";
import { sinceMsOf } from "./rule-tools.js";
import type { SessionContext } from "./session-context.js";
import { dataResult, READ_ANNOTATIONS, ToolInputError, withinTotal, wrappedOutput } from "./tool-results.js";
import { TIME } from "./tool-shapes.js";

const FIELDS =
  "kind, type, harness, run, repo, branch, path, tool, action, is_error, digest, outcome, cause_digest, edge, predicate, status, scope";
const terms = z
  .record(z.string().max(64), z.union([z.string().max(1100), z.boolean()]))
  .refine((r) => Object.keys(r).length <= 20, "at most 20 fields");

const ROW = z
  .object({
    seq: z.number().int().min(1).describe("The row's seq: evidence id seq:<n>."),
    at: TIME.describe("The row's admission time."),
    kind: z.string(),
    type: z.string(),
    source: z.string(),
    paths: z.array(z.string()).optional(),
  })
  .catchall(z.union([z.string(), z.boolean()]))
  .describe(
    `The row's identifiers: besides seq, at, kind, type, source and paths, its indexed fields that are set (${FIELDS}).`,
  );

const QUERY_JOURNAL = z.object({
  rows: z.array(ROW),
  truncated: z.boolean(),
  next_after_seq: z.number().int().min(0).describe("The after_seq that continues this answer."),
  next_cursor: z.string().optional().describe("Present when truncated: pass it as cursor for the rest."),
});

const COUNT_JOURNAL = z.object({
  fn: z.enum(["count", "distinct", "exists"]),
  number: z.number().int().min(0).optional().describe("count's and distinct's answer."),
  exists: z.boolean().optional().describe("exists's answer."),
  now: TIME.describe("The last committed row's time: the `now` of the evaluation."),
  last_seq: z.number().int().min(0),
  rows_read: z.number().int().min(0),
});

/** query_journal's cursor is the seq to continue after, as a string like every cursor. */
function afterOf(cursor: string | undefined, afterSeq: number | undefined): number {
  if (cursor === undefined || cursor === "") return afterSeq ?? 0;
  if (!/^\d{1,15}$/.test(cursor))
    throw new ToolInputError(
      `cursor ${JSON.stringify(cursor.slice(0, 64))} is not a next_cursor query_journal gave; leave cursor out to start again`,
    );
  return Number(cursor);
}

const toTerms = (r: Record<string, string | boolean> | undefined): Term[] => Object.entries(r ?? {});

export function registerJournalTools(server: McpServer, session: SessionContext): void {
  const { journal } = session.deps;
  const scope = session.miner ? undefined : { harness: session.caller.harness };

  server.registerTool(
    "query_journal",
    {
      annotations: READ_ANNOTATIONS,
      title: "Query the journal",
      description: `Journal rows in seq order: each row's seq (evidence id seq:<n>), admission time, kind, type, source, indexed fields and paths; never any other field. Filter by kind, type, indexed fields (${FIELDS}; equality, all must hold) and time. At most ${MAX_QUERY_ROWS} rows a call: when truncated, pass next_cursor as cursor for the rest. seq is a number, at an RFC 3339 time.`,
      inputSchema: {
        kind: z
          .enum(EVENT_KINDS)
          .optional()
          .describe("run_event, attempt_event, graph_event, fact_event or tick; every kind when left out."),
        type: z
          .string()
          .max(256)
          .optional()
          .describe('The row type, e.g. "closed", "tool", "loop_stopped", "edge_added".'),
        fields: terms
          .optional()
          .describe(
            'Equality on indexed fields, e.g. {"harness": "nightly", "outcome": "failed"}; is_error takes true or false.',
          ),
        since: z.string().max(64).optional().describe("Only rows admitted at or after this RFC 3339 time."),
        until: z.string().max(64).optional().describe("Only rows admitted at or before this RFC 3339 time."),
        after_seq: z
          .number()
          .int()
          .min(0)
          .optional()
          .describe("Only rows after this seq (the last answer's next_after_seq); cursor does the same."),
        limit: z
          .number()
          .int()
          .min(1)
          .max(MAX_QUERY_ROWS)
          .optional()
          .describe("At most this many rows (default 100)."),
        cursor: z
          .string()
          .max(64)
          .optional()
          .describe(
            "The next_cursor of the previous answer, to continue it (with the same other arguments).",
          ),
      },
      outputSchema: wrappedOutput("query_journal", QUERY_JOURNAL),
    },
    (args) =>
      session.guard("query_journal", async () => {
        const answer = await journal.query(
          {
            ...(args.kind === undefined ? {} : { kind: args.kind }),
            ...(args.type === undefined ? {} : { type: args.type }),
            fields: toTerms(args.fields),
            sinceMs: sinceMsOf(args.since),
            untilMs: sinceMsOf(args.until),
            afterSeq: afterOf(args.cursor, args.after_seq),
            ...(args.limit === undefined ? {} : { limit: args.limit }),
          },
          scope,
          session,
        );
        const rows = answer.rows.map((r) => ({
          seq: r.seq,
          at: new Date(r.at).toISOString(),
          kind: r.kind,
          type: r.type,
          source: r.source,
          ...r.columns,
          ...(r.paths.length === 0 ? {} : { paths: r.paths }),
        }));
        const { kept, truncated } = withinTotal(rows);
        const next = kept.at(-1)?.seq ?? answer.nextAfterSeq;
        const more = answer.truncated || truncated;
        return dataResult("query_journal", {
          rows: kept,
          truncated: more,
          next_after_seq: next,
          ...(more ? { next_cursor: String(next) } : {}),
        });
      }),
  );

  server.registerTool(
    "count_journal",
    {
      annotations: READ_ANNOTATIONS,
      title: "Count journal rows as a rule would",
      description: `What a rule's primitive count(selector, duration(within)), distinct(field, selector, duration(within)) or exists(selector, duration(within)) would answer if the rule were evaluated on the last committed row: now is that row's time, and the window is (now - within, now]. The selector is the rule's map literal as JSON: kind (run_event when left out) and equality on indexed fields (${FIELDS}). count saturates at 10,000, distinct at 1,000.`,
      inputSchema: {
        fn: z.enum(["count", "distinct", "exists"]).default("count").describe("count, distinct or exists."),
        field: z.string().max(64).optional().describe("distinct's field: an indexed field."),
        selector: terms.describe(
          'The selector, e.g. {"kind": "run_event", "type": "closed", "outcome": "failed"}.',
        ),
        within: z.string().max(32).describe('The window, from "1m" to "168h" (7 days), e.g. "1h", "24h".'),
      },
      outputSchema: wrappedOutput("count_journal", COUNT_JOURNAL),
    },
    (args) =>
      session.guard("count_journal", async () => {
        const answer = await journal.count(
          {
            fn: args.fn,
            ...(args.field === undefined ? {} : { field: args.field }),
            selector: toTerms(args.selector),
            within: args.within,
          },
          scope,
          session,
        );
        return dataResult("count_journal", {
          fn: answer.fn,
          ...(answer.fn === "exists" ? { exists: answer.truth } : { number: answer.number }),
          now: new Date(answer.nowMs).toISOString(),
          last_seq: answer.lastSeq,
          rows_read: answer.rowsRead,
        });
      }),
  );
}
