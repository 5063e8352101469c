/**
 * The gateway's journal queries answer alike on both backends (issue 34 item 3): query_journal's rows
 * (by kind, type, indexed fields, path, time, after a seq, newest, capped) and count_journal's REQ-5
 * primitives, with their refusals, over one journal committed to SQLite and to PostgreSQL, for a set of
 * chosen requests and for any request fast-check makes from the journal's own values.
 */

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CountRequest,
  JournalQueries,
  MAX_QUERY_ROWS,
  type QueryRequest,
  type Scope,
  type Term,
} from "../../../src/shell/journal-query/journal-queries.js";
import { PgJournalQueries } from "../../../src/shell/journal-query/pg-journal-queries.js";
import { JournalCommits } from "../../../src/shell/store/journal-commits.js";
import { JournalQueryReads } from "../../../src/shell/store/journal-query-reads.js";
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import { type OpenedStore, openStore } from "../../../src/shell/store/open-store.js";
import type { OpenedPgStore } from "../../../src/shell/store/pg/open-pg-store.js";
import { PgJournal, type PgNewRow } from "../../../src/shell/store/pg/pg-journal.js";
import { PgJournalQueryReads } from "../../../src/shell/store/pg/pg-journal-query-reads.js";
import { runs } from "../../property-runs.js";
import { openFreshPgStore } from "../store/pg/pg-store.js";
import { batchesOf, fleetRows, sameJournal } from "../store/pg/same-journal.js";

type Outcome = { ok: true; value: unknown } | { ok: false; error: string };

const outcome = async (run: () => unknown): Promise<Outcome> => {
  try {
    return { ok: true, value: await run() };
  } catch (e) {
    return { ok: false, error: `${(e as Error).name}: ${(e as Error).message}` };
  }
};

const HARNESSES = ["impl", "review", "nightly", "worker"];
const PATHS = ["internal/ledger/writer.go", "internal/ledger/reader.go", "cmd/harness/main.go", "go.mod"];
/** A row's paths in neither sorted order nor its reverse. */
const UNSORTED = [PATHS[1], PATHS[3], PATHS[0]] as string[];

describe("the journal queries on SQLite and PostgreSQL", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "harness-pg-queries-"));
  let sqliteStore: OpenedStore;
  let pgStore: OpenedPgStore;
  let sqlite: JournalQueries;
  let pg: PgJournalQueries;
  let ats: number[];
  let rows: number;

  beforeAll(async () => {
    sqliteStore = openStore(path.join(dir, "harness.db"), "test");
    pgStore = await openFreshPgStore("journal_queries");
    // The fleet's rows carry one path each; a few carry several, out of order, so the order of a row's
    // paths is compared too.
    const manyPaths = [3, 1, 2].map(
      (n): PgNewRow => ({
        kind: "run_event",
        source: "observer",
        event: {
          type: "tool",
          harness: "impl",
          run: "impl#x",
          tool: "Edit",
          paths: UNSORTED.slice(0, n),
        },
      }),
    );
    const fleet = [...fleetRows(4, 5), ...manyPaths];
    rows = fleet.length;
    const journal = new PgJournal(pgStore.pool);
    ats = await sameJournal(journal, new JournalCommits(sqliteStore.db), batchesOf(fleet, [40, 3, 90, 17]));
    const table = new JournalTable(sqliteStore.db);
    sqlite = new JournalQueries(new JournalQueryReads(sqliteStore.db), table);
    pg = new PgJournalQueries(new PgJournalQueryReads(pgStore.pool), journal);
  });
  afterAll(async () => {
    sqliteStore?.close();
    await pgStore?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const sameQuery = async (req: QueryRequest, scope?: Scope) => {
    const a = await outcome(() => sqlite.query(req, scope));
    expect(await outcome(() => pg.query(req, scope)), JSON.stringify({ req, scope })).toEqual(a);
    return a;
  };
  const sameCount = async (req: CountRequest, scope?: Scope) => {
    const a = await outcome(() => sqlite.count(req, scope));
    expect(await outcome(() => pg.count(req, scope)), JSON.stringify({ req, scope })).toEqual(a);
    return a;
  };

  it("answer query_journal alike, rows, caps and refusals", async () => {
    const mid = ats[Math.floor(ats.length / 2)] as number;
    const requests: QueryRequest[] = [
      {},
      { limit: MAX_QUERY_ROWS },
      { kind: "run_event", type: "tool", fields: [["is_error", true]] },
      { kind: "run_event", fields: [["is_error", false]], newest: true, limit: 7 },
      { fields: [["path", "go.mod"]], limit: 50 },
      {
        kind: "graph_event",
        fields: [
          ["harness", "impl"],
          ["edge", "edited"],
        ],
      },
      { kind: "run_event", type: "closed", fields: [["cause_digest", ""]] },
      {
        kind: "run_event",
        fields: [
          ["type", "closed"],
          ["outcome", "budget_exceeded"],
        ],
      },
      { sinceMs: mid, limit: 20 },
      { untilMs: mid, newest: true, limit: 20 },
      { afterSeq: 100, limit: 3 },
      { afterSeq: rows + 10 },
      { kind: "tick", limit: 1000 },
      { limit: 1001 },
      { kind: "nope" },
      { fields: [["kind", "run_event"]] },
      { fields: [["nope", "x"]] },
      { fields: [["is_error", "yes"]] },
      { sinceMs: -1 },
    ];
    const answered = [];
    for (const req of requests) answered.push(await sameQuery(req));
    expect(await sameQuery({ fields: [["path", UNSORTED[2] as string]], newest: true, limit: 3 })).toEqual({
      ok: true,
      value: expect.objectContaining({
        rows: expect.arrayContaining([expect.objectContaining({ paths: UNSORTED })]),
      }),
    });
    for (const req of requests.slice(0, 6)) await sameQuery(req, { harness: "review" });
    await sameQuery({ fields: [["harness", "impl"]] }, { harness: "review" });
    // The set covers truncated answers, empty ones, rows with paths and refusals.
    const values = answered.flatMap((a) =>
      a.ok ? [a.value as { rows: { paths: string[] }[]; truncated: boolean }] : [],
    );
    expect(values.some((v) => v.truncated)).toBe(true);
    expect(values.some((v) => v.rows.length === 0)).toBe(true);
    expect(values.some((v) => v.rows.some((r) => r.paths.length > 0))).toBe(true);
    expect(answered.some((a) => !a.ok)).toBe(true);
  });

  it("give the runs closed with an outcome alike", async () => {
    const sqliteReads = new JournalQueryReads(sqliteStore.db);
    const pgReads = new PgJournalQueryReads(pgStore.pool);
    for (const [outcome, limit] of [
      ["failed", 5],
      ["budget_exceeded", 100],
      ["nope", 5],
    ] as const)
      expect(await pgReads.runsClosedWith(outcome, limit)).toEqual(
        sqliteReads.runsClosedWith(outcome, limit),
      );
    expect(sqliteReads.runsClosedWith("failed", 5)).toHaveLength(5);
  });

  it("answer count_journal alike, each primitive and its refusals", async () => {
    const requests: CountRequest[] = [
      {
        selector: [
          ["type", "tool"],
          ["is_error", true],
        ],
        within: "1h",
      },
      {
        fn: "distinct",
        field: "run",
        selector: [
          ["type", "closed"],
          ["outcome", "failed"],
        ],
        within: "24h",
      },
      {
        fn: "distinct",
        field: "path",
        selector: [
          ["kind", "graph_event"],
          ["edge", "edited"],
        ],
        within: "1h",
      },
      {
        fn: "exists",
        selector: [
          ["kind", "graph_event"],
          ["type", "collision_started"],
        ],
        within: "10m",
      },
      { fn: "exists", selector: [["harness", "nobody"]], within: "10m" },
      { selector: [["path", "go.mod"]], within: "1h" },
      { selector: [["kind", "tick"]], within: "1h" },
      { fn: "sum", selector: [], within: "1h" },
      { selector: [["kind", "nope"]], within: "1h" },
      { selector: [], within: "forever" },
    ];
    const answered = [];
    for (const req of requests) answered.push(await sameCount(req));
    for (const req of requests.slice(0, 4)) await sameCount(req, { harness: "nightly" });
    expect(answered.some((a) => a.ok && (a.value as { number: number }).number > 1)).toBe(true);
    expect(answered.some((a) => !a.ok)).toBe(true);
  });

  it("answer any request made of the journal's own values alike", async () => {
    const term: fc.Arbitrary<Term> = fc.oneof(
      fc.constantFrom<Term>(["type", "tool"], ["type", "closed"], ["type", "edge_added"], ["tool", "Bash"]),
      fc.constantFrom<Term>(
        ["action", "verify"],
        ["outcome", "failed"],
        ["digest", "go-test"],
        ["edge", "edited"],
      ),
      fc.constantFrom(...HARNESSES).map((h): Term => ["harness", h]),
      fc.constantFrom(...PATHS).map((p): Term => ["path", p]),
      fc.boolean().map((b): Term => ["is_error", b]),
      fc.constantFrom<Term>(["run", ""], ["cause_digest", ""]),
    );
    const at = fc.oneof(fc.constant(0), fc.constantFrom(...ats));
    const scope = fc.option(
      fc.constantFrom(...HARNESSES).map((harness) => ({ harness })),
      { nil: undefined },
    );
    const query: fc.Arbitrary<QueryRequest> = fc.record(
      {
        kind: fc.constantFrom("run_event", "graph_event", "tick", ""),
        type: fc.constantFrom("tool", "closed", ""),
        fields: fc.array(term, { maxLength: 3 }),
        sinceMs: at,
        untilMs: at,
        afterSeq: fc.integer({ min: 0, max: rows + 5 }),
        limit: fc.integer({ min: 0, max: 60 }),
        newest: fc.boolean(),
      },
      { requiredKeys: [] },
    );
    const count: fc.Arbitrary<CountRequest> = fc.record({
      fn: fc.constantFrom("count", "distinct", "exists", ""),
      field: fc.constantFrom("run", "harness", "path", "tool"),
      selector: fc.array(
        fc.oneof(term, fc.constantFrom<Term>(["kind", "run_event"], ["kind", "graph_event"])),
        { maxLength: 3 },
      ),
      within: fc.constantFrom("1s", "10m", "1h", "24h"),
    });
    await fc.assert(
      fc.asyncProperty(query, count, scope, async (q, c, s) => {
        await sameQuery(q, s);
        await sameCount(c, s);
      }),
      { numRuns: runs(150) },
    );
  });
});
