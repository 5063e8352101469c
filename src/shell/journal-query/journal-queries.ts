/**
 * What a rule miner reads of the journal besides the rule views (SPEC-0029 REQ-15): rows by kind, type,
 * indexed fields and time (`query`), and one REQ-5 primitive evaluated as a rule's would be on the last
 * committed row (`count`). Both serve the MCP gateway's tools and JournalQueryService alike.
 *
 * `count` writes the primitive call a rule would write, compiles it with the core's environment for
 * the selector's kind and the core's REQ-5 validator (so a selector or window a rule could not use is
 * refused with the compiler's reason), and evaluates the program over the core's window reader, with
 * `now` the last committed row's `at` and the window ending at that row: the numbers a rule evaluated on
 * that row would see, by the same code.
 */
import { compile, type Program, parseDuration, T } from "../../cel/index.js";
import { COST_LIMIT } from "../../core/compile-rule.js";
import { ENVIRONMENTS, PRIMITIVE_NAMES, WINDOW } from "../../core/environments.js";
import { indexRow, type JournalRow } from "../../core/journal.js";
import { type EventKind, isEventKind } from "../../core/kinds.js";
import { primitiveRules } from "../../core/primitive-rules.js";
import { isIndexedField, scanReader } from "../../core/window.js";
import { InvalidArgumentError } from "../errors.js";
import type {
  IndexedColumn,
  JournalFilter,
  JournalIdsRow,
  JournalQueryReads,
} from "../store/journal-query-reads.js";
import type { JournalTable } from "../store/journal-table.js";
import { INDEXED_COLUMNS } from "../store/schema.js";

/** Rows one query returns unless the caller asks for fewer, and the most it may ask for. */
export const DEFAULT_QUERY_ROWS = 100;
export const MAX_QUERY_ROWS = 1_000;
/**
 * The most rows of the selector's kind one count reads from its window: count saturates at 10,000, so
 * this leaves room for selectors the store cannot narrow (a path, is_error, an empty value).
 */
export const MAX_COUNT_ROWS = 50_000;
/** The longest selector value or window text a count may carry: longer than any identifier the journal holds. */
const MAX_TERM_CHARS = 1_100;

export type Term = readonly [field: string, value: string | boolean];

export interface QueryRequest {
  readonly kind?: string;
  readonly type?: string;
  readonly fields?: readonly Term[];
  readonly sinceMs?: number;
  readonly untilMs?: number;
  readonly afterSeq?: number;
  readonly limit?: number;
  /** The last `limit` matching rows rather than the first, still in seq order. */
  readonly newest?: boolean;
}

export interface QueryAnswer {
  readonly rows: readonly JournalIdsRow[];
  readonly truncated: boolean;
  readonly nextAfterSeq: number;
}

export interface CountRequest {
  /** count, distinct or exists; count when absent. */
  readonly fn?: string;
  /** distinct's field. */
  readonly field?: string;
  readonly selector: readonly Term[];
  /** As in `duration("…")`. */
  readonly within: string;
}

export interface CountAnswer {
  readonly fn: (typeof PRIMITIVE_NAMES)[number];
  readonly number: number;
  readonly truth: boolean;
  readonly nowMs: number;
  readonly lastSeq: number;
  readonly rowsRead: number;
}

/** Only rows of this harness, whatever the caller asked: a caller that is not a rule miner. */
export interface Scope {
  readonly harness: string;
}

/** A query checked and put as the store's filter: what either backend reads (`limit + 1` rows). */
export interface QueryPlan {
  readonly filter: JournalFilter;
  readonly limit: number;
  readonly newest: boolean;
  readonly afterSeq: number;
}

/** A count checked and compiled: the window's rows a backend reads, and the program that counts them. */
export interface CountPlan {
  readonly fn: CountAnswer["fn"];
  readonly kind: EventKind;
  /** The selector's string columns the store narrows the window's rows by. */
  readonly columns: Readonly<Partial<Record<IndexedColumn | "type", string>>>;
  readonly program: Program;
  readonly withinMs: number;
}

/** Checks `req` as `query` does, before any read; the filter with the caller's scope forced in. */
export function planQuery(req: QueryRequest, scope?: Scope): QueryPlan {
  const limit = req.limit === undefined || req.limit === 0 ? DEFAULT_QUERY_ROWS : req.limit;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_QUERY_ROWS)
    throw new InvalidArgumentError("limit", `limit ${limit} is not from 1 to ${MAX_QUERY_ROWS}`);
  if (req.kind !== undefined && req.kind !== "" && !isEventKind(req.kind))
    throw new InvalidArgumentError(req.kind.slice(0, 32), `kind ${quoted(req.kind)} is not an event kind`);
  checkLength("type", req.type ?? "");
  const fields = scoped(req.fields ?? [], scope);
  const columns: Partial<Record<IndexedColumn, string | boolean>> = {};
  let path: string | undefined;
  let type = req.type;
  for (const [field, value] of fields) {
    checkTerm(field, value);
    if (field === "kind") throw new InvalidArgumentError(field, "give the row kind as kind, not as a field");
    if (field === "path") path = value as string;
    else if (field === "type") type = value as string;
    else columns[field as IndexedColumn] = value;
  }
  return {
    filter: {
      ...(req.kind === undefined ? {} : { kind: req.kind }),
      ...(type === undefined ? {} : { type }),
      columns,
      ...(path === undefined ? {} : { path }),
      sinceMs: nonNegative("since", req.sinceMs ?? 0),
      untilMs: nonNegative("until", req.untilMs ?? 0),
      afterSeq: nonNegative("after_seq", req.afterSeq ?? 0),
    },
    limit,
    newest: req.newest === true,
    afterSeq: req.afterSeq ?? 0,
  };
}

/** The answer from the `limit + 1` rows the plan read: one more than the limit says there were more. */
export function queryAnswer(plan: QueryPlan, rows: readonly JournalIdsRow[]): QueryAnswer {
  const { limit } = plan;
  const kept = plan.newest ? rows.slice(-limit) : rows.slice(0, limit);
  return {
    rows: kept,
    truncated: rows.length > limit,
    nextAfterSeq: kept.at(-1)?.seq ?? plan.afterSeq,
  };
}

/** Checks and compiles `req` as `count` does, before any read. */
export function planCount(req: CountRequest, scope?: Scope): CountPlan {
  const fn = req.fn === undefined || req.fn === "" ? "count" : req.fn;
  if (!(PRIMITIVE_NAMES as readonly string[]).includes(fn))
    throw new InvalidArgumentError(fn.slice(0, 32), `fn ${quoted(fn)} is not count, distinct or exists`);
  const primitive = fn as CountAnswer["fn"];
  checkLength("within", req.within);
  const selector = scoped(req.selector, scope);
  let kind: EventKind = "run_event";
  const columns: Partial<Record<IndexedColumn | "type", string>> = {};
  for (const [field, value] of selector) {
    checkTerm(field, value);
    if (field === "kind") {
      if (typeof value !== "string" || !isEventKind(value))
        throw new InvalidArgumentError(field, `kind ${quoted(String(value))} is not an event kind`);
      kind = value;
    } else if (
      typeof value === "string" &&
      (field === "type" || (INDEXED_COLUMNS as readonly string[]).includes(field))
    )
      columns[field as IndexedColumn | "type"] = value;
  }
  // The call a rule would write; every value is a JSON string or bool literal, which CEL reads alike.
  const sel = `{${selector.map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(", ")}}`;
  const window = `duration(${JSON.stringify(req.within)})`;
  const text =
    primitive === "distinct"
      ? `distinct(${JSON.stringify(req.field ?? "")}, ${sel}, ${window})`
      : `${primitive}(${sel}, ${window})`;
  const compiled = compile(text, ENVIRONMENTS[kind], {
    description: "count_journal",
    resultType: primitive === "exists" ? T.bool : T.int,
    validators: [primitiveRules],
  });
  if (!compiled.ok)
    throw new InvalidArgumentError(
      "selector",
      `${primitive} cannot be written as a rule would write it: ${compiled.errors.map((e) => e.message).join("; ")}`,
    );
  const within = parseDuration(req.within);
  if (!("nanos" in within)) throw new InvalidArgumentError("within", within.message);
  return {
    fn: primitive,
    kind,
    columns,
    program: compiled.program,
    withinMs: Number(within.nanos / 1_000_000n),
  };
}

/**
 * Refuses a window over the bound, from its count read with no event (`windowCount`), before a row of
 * it is decoded.
 */
export function checkWindowCount(plan: CountPlan, counted: number): void {
  if (counted > MAX_COUNT_ROWS)
    throw new InvalidArgumentError(
      "selector",
      `the window holds more than ${MAX_COUNT_ROWS.toLocaleString("en-US")} ${plan.kind} rows the store cannot tell apart for this selector; narrow it (a harness, a type) or shorten the window`,
    );
}

/** The count over the window's rows, with `now` the last row's `at` and the window ending at it. */
export function countAnswer(
  plan: CountPlan,
  last: { readonly seq: number; readonly at: number },
  rows: readonly JournalRow[],
): CountAnswer {
  const reader = scanReader(rows.map(indexRow), last.seq, last.at);
  const result = plan.program.evaluate({ event: { type: "" }, now: last.at, [WINDOW]: reader }, COST_LIMIT);
  if (result.kind !== "value")
    throw new Error(
      `count_journal: ${result.kind === "error" ? result.error.message : "the cost limit was exceeded"}`,
    );
  const value = result.value;
  const number = typeof value === "bigint" ? Number(value) : 0;
  return {
    fn: plan.fn,
    number,
    truth: typeof value === "boolean" ? value : number > 0,
    nowMs: last.at,
    lastSeq: last.seq,
    rowsRead: rows.length,
  };
}

/** The queries over SQLite's journal; `pg-journal-queries.ts` runs the same plans on PostgreSQL. */
export class JournalQueries {
  constructor(
    private readonly reads: JournalQueryReads,
    /** The journal's last row: where a count's window ends. */
    private readonly journal: Pick<JournalTable, "last">,
  ) {}

  query(req: QueryRequest, scope?: Scope): QueryAnswer {
    const plan = planQuery(req, scope);
    return queryAnswer(plan, this.reads.rows(plan.filter, plan.limit + 1, plan.newest));
  }

  count(req: CountRequest, scope?: Scope): CountAnswer {
    const plan = planCount(req, scope);
    const last = this.journal.last();
    const afterAt = last.at - plan.withinMs;
    checkWindowCount(
      plan,
      this.reads.windowCount(plan.kind, plan.columns, afterAt, last.seq, MAX_COUNT_ROWS),
    );
    return countAnswer(
      plan,
      last,
      this.reads.windowRows(plan.kind, plan.columns, afterAt, last.seq, MAX_COUNT_ROWS),
    );
  }
}

const quoted = (s: string): string => JSON.stringify(s.length > 32 ? `${s.slice(0, 32)}…` : s);

function checkLength(field: string, value: string): void {
  if (value.length > MAX_TERM_CHARS)
    throw new InvalidArgumentError(
      field,
      `${field} is ${value.length} characters long; at most ${MAX_TERM_CHARS}`,
    );
}

function checkTerm(field: string, value: string | boolean): void {
  if (!isIndexedField(field))
    throw new InvalidArgumentError(
      field.slice(0, 32),
      `${quoted(field)} is not an indexed field (kind, type, harness, run, repo, branch, path, tool, action, is_error, digest, outcome, cause_digest, edge, predicate, status, scope)`,
    );
  if ((field === "is_error") !== (typeof value === "boolean"))
    throw new InvalidArgumentError(
      field,
      field === "is_error" ? "is_error takes true or false" : `${field} takes a string`,
    );
  if (typeof value === "string") checkLength(field, value);
}

function nonNegative(field: string, n: number): number {
  if (!Number.isSafeInteger(n) || n < 0)
    throw new InvalidArgumentError(field, `${field} ${n} is not a time or seq the journal can hold`);
  return n;
}

/** The terms with the caller's harness forced in, for a scoped caller. */
function scoped(terms: readonly Term[], scope: Scope | undefined): readonly Term[] {
  if (scope === undefined) return terms;
  for (const [field, value] of terms)
    if (field === "harness" && value !== scope.harness)
      throw new InvalidArgumentError(
        "harness",
        `you may read only your own harness's rows (${scope.harness}), not ${quoted(String(value))}`,
      );
  return terms.some(([f]) => f === "harness") ? terms : [...terms, ["harness", scope.harness]];
}
