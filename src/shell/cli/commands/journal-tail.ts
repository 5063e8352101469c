/**
 * `harness journal tail [--harness NAME] [-n N] [--follow] [--json]` (JournalQueryService.QueryJournal,
 * read tier): the journal's last N rows (default 20), one line each, oldest first; with `--follow`, then
 * every row admitted after them, as it commits, until interrupted. Each line is the row's seq, admission
 * time, kind/type, harness, run and what the row is about (tool, action, outcome, paths): identifiers
 * only, every one of them escaped for the terminal, since producers and agents wrote them. `--json`
 * prints one object per row. Following asks for the rows after the last one printed, a page of at most
 * 1,000 at a time, so memory stays bounded however fast rows arrive.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { journalQueryClient } from "../../rpc/client.js";
import type { JournalRowIds, QueryJournalRequestSchema } from "../../rpc/gen/harness/v1/journal_query_pb.js";
import type { SelectorTerm } from "../../rpc/gen/harness/v1/rules_pb.js";
import { failed } from "../client.js";
import { type Common, EXIT, type Io, isoOr } from "../io.js";
import { printable } from "../render/printable.js";
import { clientTarget, readToken } from "../target.js";

/** Rows one tail shows unless asked, and the most it may ask for (QueryJournal's page). */
export const DEFAULT_TAIL_ROWS = 20;
const MAX_TAIL_ROWS = 1_000;
/** How long a follower waits before asking again when the journal had nothing new. */
const FOLLOW_POLL_MS = 200;
/** Paths a line shows before saying how many more there are. */
const LINE_PATHS = 3;

export interface TailOptions extends Common {
  readonly harness?: string | undefined;
  readonly lines?: string | number | undefined;
  readonly follow?: boolean | undefined;
  /** How long a follower waits between empty reads; the default unless a test asks. */
  readonly pollMs?: number;
}

type Request = MessageInitShape<typeof QueryJournalRequestSchema>;

const text = (t: SelectorTerm | undefined): string =>
  t === undefined ? "" : t.value.case === "flag" ? String(t.value.value) : (t.value.value ?? "");

/** One row as a line: seq, time, kind/type, harness, run, then what it is about. */
export function tailLine(r: JournalRowIds): string {
  const field = (name: string) => text(r.fields.find((f) => f.field === name));
  const about: string[] = [];
  for (const name of ["tool", "action", "outcome", "edge", "predicate", "status"]) {
    const v = field(name);
    if (v !== "") about.push(`${name}=${v}`);
  }
  if (field("is_error") === "true") about.push("is_error");
  const paths = r.paths.slice(0, LINE_PATHS).join(" ");
  if (paths !== "")
    about.push(r.paths.length > LINE_PATHS ? `${paths} (+${r.paths.length - LINE_PATHS} paths)` : paths);
  return printable(
    [
      String(r.seq),
      isoOr(r.atMs, "?"),
      `${r.kind}/${r.type}`,
      field("harness") || "-",
      field("run") || "-",
      about.join(" "),
    ]
      .join("  ")
      .trimEnd(),
  );
}

/** One row as `--json` prints it. */
export function tailJson(r: JournalRowIds) {
  return {
    seq: Number(r.seq),
    at: isoOr(r.atMs, ""),
    kind: r.kind,
    type: r.type,
    source: r.source,
    fields: Object.fromEntries(r.fields.map((f) => [f.field, f.value.value ?? null])),
    paths: r.paths,
  };
}

function linesOf(lines: string | number | undefined): number | undefined {
  if (lines === undefined) return DEFAULT_TAIL_ROWS;
  const n = Number(lines);
  return Number.isInteger(n) && n >= 1 && n <= MAX_TAIL_ROWS ? n : undefined;
}

/** Prints the last rows, then, when following, every later row until `stop` aborts. */
export async function runJournalTail(options: TailOptions, io: Io, stop: AbortSignal): Promise<number> {
  const limit = linesOf(options.lines);
  if (limit === undefined) {
    io.err(`harness journal tail: --lines must be a whole number from 1 to ${MAX_TAIL_ROWS}`);
    return EXIT.usage;
  }
  const target = await clientTarget({ ...options, env: io.env });
  const read = await readToken(target, "journal tail");
  if ("error" in read) {
    io.err(read.error);
    return EXIT.error;
  }
  const client = journalQueryClient(target.rpc, read.token);
  const fields: Request["fields"] =
    options.harness === undefined
      ? []
      : [{ field: "harness", value: { case: "text", value: options.harness } }];
  const print = (rows: readonly JournalRowIds[]) => {
    for (const r of rows) io.out(options.json === true ? JSON.stringify(tailJson(r)) : tailLine(r));
  };
  try {
    const last = await client.queryJournal({ fields, limit, newest: true });
    print(last.rows);
    if (options.follow !== true) return EXIT.ok;
    io.err(`harness journal tail: following ${target.where}; Ctrl-C stops`);
    let after = last.nextAfterSeq;
    while (!stop.aborted) {
      const page = await client.queryJournal(
        { fields, afterSeq: after, limit: MAX_TAIL_ROWS },
        { signal: stop },
      );
      print(page.rows);
      after = page.nextAfterSeq;
      if (!page.truncated) await pause(options.pollMs ?? FOLLOW_POLL_MS, stop);
    }
    return EXIT.ok;
  } catch (e) {
    if (stop.aborted) return EXIT.ok;
    return failed("journal tail", target.where, e, io);
  }
}

const pause = (ms: number, stop: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const done = () => {
      clearTimeout(t);
      stop.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    stop.addEventListener("abort", done, { once: true });
  });
