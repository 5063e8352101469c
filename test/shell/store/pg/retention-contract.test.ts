/**
 * PgJournalPruner prunes as JournalPruner does: over the same journal (the same rows, seqs and `at`s,
 * their paths, the same evaluator cursor) each batch deletes the same rows, their paths with them,
 * leaving fires, actions and annotations alone; the same retentions and cursors are refused; the
 * journal's head is never touched, so the next append gets the seq SQLite's would. PostgreSQL frees no
 * pages (`vacuumStep` answers 0): the one answer that differs.
 *
 * The rows' `at` on PostgreSQL is the database's (decision 0019): the test commits them through
 * PgJournal, then sets each row's `at` to the one chosen, which SQLite's rows are appended with.
 */
import fc from "fast-check";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JournalTable } from "../../../../src/shell/store/journal-table.js";
import type { Db } from "../../../../src/shell/store/open-store.js";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgJournal, type PgNewRow } from "../../../../src/shell/store/pg/pg-journal.js";
import { PgJournalPruner } from "../../../../src/shell/store/pg/pg-retention.js";
import { JournalPruner, RetentionError } from "../../../../src/shell/store/retention.js";
import { runs } from "../../../property-runs.js";
import { tempStores } from "../temp-stores.js";
import { openFreshPgStore } from "./pg-store.js";

const DAY = 86_400_000;
const RETENTION = 45 * DAY;
const NOW = Date.UTC(2025, 5, 1);

/** Row `i`: a tool row with no, one or two paths, some of them errors. */
const row = (i: number): PgNewRow => ({
  kind: "run_event",
  source: "observer",
  event: {
    type: "tool",
    harness: "impl",
    run: `impl#${i % 3}`,
    action: "edit",
    is_error: i % 5 === 0,
    ...(i % 3 === 0 ? {} : { paths: [`src/${i}.ts`, ...(i % 3 === 2 ? [`test/${i}.ts`] : [])] }),
  },
});

interface Both {
  readonly sqlite: Db;
  readonly pool: pg.Pool;
}

/** Appends one row per `at` on both, with those `at`s; the seqs. */
async function appendBoth(both: Both, pgJournal: PgJournal, ats: readonly number[]): Promise<number[]> {
  if (ats.length === 0) return [];
  const rows = ats.map((_, i) => row(i));
  const { results } = await pgJournal.commit([{ rows }]);
  const seqs = results[0]?.kind === "committed" ? [...results[0].seqs] : [];
  await both.pool.query(
    "UPDATE rule_journal SET at = c.at FROM unnest($1::bigint[], $2::bigint[]) AS c(seq, at) WHERE rule_journal.seq = c.seq",
    [seqs, ats],
  );
  const journal = new JournalTable(both.sqlite);
  const sqliteSeqs = both.sqlite.transaction(() =>
    rows.map((r, i) => journal.append({ ...r, at: ats[i] as number })),
  )();
  expect(sqliteSeqs).toEqual(seqs);
  return seqs;
}

/** Fires, an action and an annotation of rows `seqs`: what pruning leaves alone. */
const DECISIONS = (seqs: readonly number[]): string[] =>
  seqs.flatMap((seq) => [
    `INSERT INTO rule_fires (fire_id, seq, at, rule, hash, kind, type, declared_level, effective_level, mode, action, message, primitives)
     VALUES ('f${seq}', ${seq}, ${NOW - 60 * DAY}, 'r', 'h', 'run_event', 'tool', 'notify', 'notify', 'active', 'notify', 'm', '[]')`,
    `INSERT INTO rule_actions (fire_id, action, state, updated_at) VALUES ('f${seq}', 'notify', 'pending', 1)`,
    `INSERT INTO rule_annotations (fire_id, node, rule, message, at) VALUES ('f${seq}', 'src/a.ts', 'r', 'm', 1)`,
  ]);

async function decideBoth(both: Both, seqs: readonly number[]): Promise<void> {
  for (const sql of DECISIONS(seqs)) {
    both.sqlite.prepare(sql).run();
    await both.pool.query(sql);
  }
}

async function setCursorBoth(both: Both, cursor: number): Promise<void> {
  both.sqlite.prepare("UPDATE evaluator SET cursor = ? WHERE id = 1").run(cursor);
  await both.pool.query("UPDATE evaluator SET cursor = $1 WHERE id = 1", [cursor]);
}

/** Every table pruning could touch, in key order; SQLite's 0/1 `is_error` as PostgreSQL's boolean. */
const TABLES = [
  "SELECT * FROM rule_journal ORDER BY seq",
  "SELECT seq, ord, path FROM rule_journal_paths ORDER BY seq, ord",
  "SELECT * FROM rule_fires ORDER BY fire_id",
  "SELECT * FROM rule_actions ORDER BY fire_id, action",
  "SELECT * FROM rule_annotations ORDER BY fire_id",
  "SELECT * FROM evaluator",
];
const sqliteTables = (db: Db): unknown[][] =>
  TABLES.map((sql) =>
    (db.prepare(sql).all() as Record<string, unknown>[]).map((r) =>
      "is_error" in r && r.is_error !== null ? { ...r, is_error: r.is_error === 1 } : r,
    ),
  );
const pgTables = (pool: pg.Pool): Promise<unknown[][]> =>
  Promise.all(TABLES.map(async (sql) => (await pool.query(sql)).rows));

type Answer = { readonly value: unknown } | { readonly refused: string };

/** A call's answer, or its refusal's message without the store's name (each backend names its own). */
async function answer(call: () => unknown): Promise<Answer> {
  try {
    return { value: await call() };
  } catch (e) {
    if (!(e instanceof RetentionError)) throw e;
    return { refused: e.message.slice(`store ${e.store}: `.length) };
  }
}

describe("PgJournalPruner against JournalPruner", () => {
  const stores = tempStores("harness-retention-contract-");
  let pgStore: OpenedPgStore;
  let pgJournal: PgJournal;

  beforeAll(async () => {
    pgStore = await openFreshPgStore("retention_contract", 2);
    pgJournal = new PgJournal(pgStore.pool);
  });
  afterAll(async () => {
    await pgStore?.close();
  });

  /** Empty journals on both, the head and cursor back at 0, no decisions. */
  async function freshBoth(): Promise<Both> {
    const sqlite = stores.open(stores.storeFile()).db;
    await pgStore.pool.query(
      "TRUNCATE rule_journal, rule_journal_paths, rule_fires, rule_actions, rule_annotations; UPDATE journal_head SET seq = 0, at = 0; UPDATE evaluator SET cursor = 0",
    );
    return { sqlite, pool: pgStore.pool };
  }

  it("prunes the same journal batch by batch alike, paths with their rows, decisions kept, the head untouched", async () => {
    const both = await freshBoth();
    // The oldest rows' `at` going back as seq goes on, so a batch's (at, seq) order is not seq order.
    const ats = [
      ...Array.from({ length: 2_300 }, (_, i) => NOW - 50 * DAY - (i % 1_150) * 60_000),
      ...Array.from({ length: 200 }, () => NOW - 46 * DAY),
      NOW - RETENTION,
      NOW - 10 * DAY,
      NOW - DAY,
    ];
    const seqs = await appendBoth(both, pgJournal, ats);
    await setCursorBoth(both, seqs[2_502] as number);
    await decideBoth(both, [1, 2, 2_400]);
    const head = (await both.pool.query("SELECT seq, at FROM journal_head")).rows;
    const sqlite = new JournalPruner(both.sqlite, RETENTION);
    const postgres = new PgJournalPruner(pgStore, RETENTION);
    expect(await pgTables(both.pool)).toEqual(sqliteTables(both.sqlite));

    const batches: unknown[] = [];
    for (;;) {
      const batch = sqlite.pruneBatch(NOW);
      expect(await postgres.pruneBatch(NOW)).toEqual(batch);
      expect(await pgTables(both.pool)).toEqual(sqliteTables(both.sqlite));
      batches.push(batch);
      if (batch.done) break;
    }
    expect(batches).toEqual([
      { deleted: 1_000, done: false },
      { deleted: 1_000, done: false },
      { deleted: 500, done: true },
    ]);
    expect(await postgres.oldestRetainedAt()).toBe(sqlite.oldestRetainedAt());
    expect(await postgres.oldestRetainedAt()).toBe(NOW - RETENTION);
    // Decisions of pruned rows stay, on both.
    expect((await both.pool.query("SELECT fire_id FROM rule_fires ORDER BY fire_id")).rows).toHaveLength(3);

    // The head is as the appends left it, and the next append gets the seq SQLite gives.
    expect((await both.pool.query("SELECT seq, at FROM journal_head")).rows).toEqual(head);
    const next = await appendBoth(both, pgJournal, [NOW]);
    expect(next).toEqual([(seqs.at(-1) as number) + 1]);

    // PostgreSQL frees no pages; the rest of pruneAll's summary is SQLite's.
    const pgAll = await postgres.pruneAll(NOW);
    const sqliteAll = sqlite.pruneAll(NOW);
    expect(pgAll).toEqual({ ...sqliteAll, pagesFreed: 0 });
    expect(await postgres.vacuumStep()).toBe(0);
    for (const pages of [0, -1, 1.5])
      expect(await answer(() => postgres.vacuumStep(pages))).toEqual(
        await answer(() => sqlite.vacuumStep(pages)),
      );
  });

  it("a time between two milliseconds bounds alike: the row of the millisecond before it goes, the one after stays", async () => {
    const both = await freshBoth();
    const bound = NOW - RETENTION;
    const seqs = await appendBoth(both, pgJournal, [bound - 1, bound, bound + 1, NOW]);
    await setCursorBoth(both, seqs[3] as number);
    const sqlite = new JournalPruner(both.sqlite, RETENTION);
    const postgres = new PgJournalPruner(pgStore, RETENTION);
    const batch = sqlite.pruneBatch(NOW + 0.5);
    expect(batch).toEqual({ deleted: 2, done: true });
    expect(await postgres.pruneBatch(NOW + 0.5)).toEqual(batch);
    expect(await pgTables(both.pool)).toEqual(sqliteTables(both.sqlite));
  });

  it("over any small journal, cursor and time: the same answers and tables, and the same refusals", async () => {
    await fc.assert(
      fc.asyncProperty(
        // Rows' ages in days, many near the retentions' bounds, each a millisecond either way or not.
        fc.array(
          fc.tuple(
            fc.oneof(fc.integer({ min: 0, max: 90 }), fc.integer({ min: 34, max: 48 })),
            fc.integer({ min: -1, max: 1 }),
          ),
          { maxLength: 40 },
        ),
        fc.nat(),
        // `now` a whole number of days from NOW, or half a millisecond past one.
        fc.tuple(fc.integer({ min: -3, max: 3 }), fc.constantFrom(0, 0.5)),
        fc.constantFrom(RETENTION, 37 * DAY, 30 * DAY),
        async (ages, cursorIndex, [shiftDays, fraction], retention) => {
          const both = await freshBoth();
          // Journals out of `at` order too, as a SQLite store written before the writer kept `at`
          // non-decreasing may hold: both take a batch in (at, seq) order.
          const seqs = await appendBoth(
            both,
            pgJournal,
            ages.map(([d, ms]) => NOW - d * DAY + ms),
          );
          await decideBoth(both, seqs.slice(0, 2));
          // Mostly a row's seq; 0 (nothing evaluated) or past the last row (refused by both) now and then.
          await setCursorBoth(both, cursorIndex % (seqs.length + 2));
          const now = NOW + shiftDays * DAY + fraction;
          // The constructor refuses a retention below the minimum on both.
          const made = await answer(() => new PgJournalPruner(pgStore, retention).retentionMs);
          expect(made).toEqual(await answer(() => new JournalPruner(both.sqlite, retention).retentionMs));
          if (!("value" in made)) return;
          const sqlite = new JournalPruner(both.sqlite, retention);
          const postgres = new PgJournalPruner(pgStore, retention);
          const fromSqlite = await answer(() => sqlite.pruneBatch(now));
          expect(await answer(() => postgres.pruneBatch(now))).toEqual(fromSqlite);
          expect(await postgres.oldestRetainedAt()).toBe(sqlite.oldestRetainedAt());
          expect(await pgTables(both.pool)).toEqual(sqliteTables(both.sqlite));
        },
      ),
      { numRuns: runs(40) },
    );
  });
});
