import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import {
  type Db,
  type OpenedStore,
  openStore,
  openStoreReadOnly,
} from "../../../src/shell/store/open-store.js";
import { JournalPruner, PRUNE_BATCH_ROWS, RetentionError } from "../../../src/shell/store/retention.js";

const DAY = 86_400_000;
const RETENTION = 45 * DAY;
const NOW = Date.UTC(2025, 5, 1);

const dirs: string[] = [];
const opened: OpenedStore[] = [];
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const setup = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "harness-retention-"));
  dirs.push(d);
  const store = openStore(path.join(d, "harness.db"), "test");
  opened.push(store);
  return {
    store,
    db: store.db,
    journal: new JournalTable(store.db),
    pruner: new JournalPruner(store.db, RETENTION),
  };
};

const TWO_PATHS = ["src/a.ts", "src/b.ts"];

/** Appends one tool row per `at`, in one transaction; returns their seqs. */
const append = (db: Db, journal: JournalTable, ats: readonly number[], paths = TWO_PATHS): number[] =>
  db.transaction(() =>
    ats.map((at) =>
      journal.append({
        kind: "run_event",
        source: "observer",
        at,
        event: { type: "tool", harness: "impl", run: "impl#1", action: "edit", digest: "d1", paths },
      }),
    ),
  )();

const times = (n: number, at: number): number[] => Array.from({ length: n }, () => at);

const setCursor = (db: Db, seq: number) =>
  db.prepare("UPDATE evaluator SET cursor = ? WHERE id = 1").run(seq);

const seqs = (db: Db): number[] =>
  (db.prepare("SELECT seq FROM rule_journal ORDER BY seq").all() as { seq: number }[]).map((r) => r.seq);

const pathSeqs = (db: Db): number[] =>
  (db.prepare("SELECT DISTINCT seq FROM rule_journal_paths ORDER BY seq").all() as { seq: number }[]).map(
    (r) => r.seq,
  );

const count = (db: Db, table: "rule_journal" | "rule_journal_paths"): number =>
  (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

const pragma = (db: Db, name: string): number => db.pragma(name, { simple: true }) as number;

describe("JournalPruner", () => {
  it("deletes rows older than the retention and keeps the rest, the one at the cutoff included", () => {
    const { db, journal, pruner } = setup();
    const ats = [NOW - 50 * DAY, NOW - 50 * DAY, NOW - 46 * DAY, NOW - RETENTION, NOW - 10 * DAY, NOW - DAY];
    const written = append(db, journal, ats);
    setCursor(db, written[5] as number);

    expect(pruner.pruneBatch(NOW)).toEqual({ deleted: 3, done: true });
    expect(seqs(db)).toEqual(written.slice(3));
    expect(pruner.oldestRetainedAt()).toBe(NOW - RETENTION);
    expect(pruner.pruneBatch(NOW)).toEqual({ deleted: 0, done: true });
  });

  it("takes the deleted rows' paths with them (ON DELETE CASCADE with foreign_keys=ON)", () => {
    const { db, journal, pruner } = setup();
    expect(pragma(db, "foreign_keys")).toBe(1);
    const written = append(db, journal, [NOW - 60 * DAY, NOW - 50 * DAY, NOW - DAY]);
    setCursor(db, written[2] as number);
    expect(count(db, "rule_journal_paths")).toBe(6);

    pruner.pruneBatch(NOW);

    expect(pathSeqs(db)).toEqual([written[2]]);
    expect(count(db, "rule_journal_paths")).toBe(2);
    expect(db.pragma("foreign_key_check")).toEqual([]);
  });

  it("deletes at most 1,000 rows a batch, each batch committed on its own", () => {
    const { store, db, journal, pruner } = setup();
    const written = append(db, journal, [...times(2_500, NOW - 50 * DAY), NOW]);
    setCursor(db, written[2_500] as number);
    const reader = openStoreReadOnly(store.path);
    opened.push(reader);

    const remaining: number[] = [];
    const batches = [];
    for (;;) {
      const batch = pruner.pruneBatch(NOW);
      batches.push(batch);
      // A second connection sees each batch as soon as it returns: it committed by itself.
      remaining.push(count(reader.db, "rule_journal"));
      if (batch.done) break;
    }

    expect(PRUNE_BATCH_ROWS).toBe(1_000);
    expect(batches).toEqual([
      { deleted: 1_000, done: false },
      { deleted: 1_000, done: false },
      { deleted: 500, done: true },
    ]);
    expect(remaining).toEqual([1_501, 501, 1]);
    expect(db.inTransaction).toBe(false);
  });

  it("pruneAll runs the batches, then vacuums", () => {
    const { db, journal, pruner } = setup();
    const written = append(db, journal, [...times(2_500, NOW - 50 * DAY), NOW]);
    setCursor(db, written[2_500] as number);

    const summary = pruner.pruneAll(NOW);

    expect(summary).toMatchObject({ deleted: 2_500, batches: 3 });
    expect(summary.pagesFreed).toBeGreaterThan(0);
    expect(pragma(db, "freelist_count")).toBe(0);
    expect(seqs(db)).toEqual([written[2_500]]);
  });

  it("never deletes a row after the evaluator cursor, however old; catches up as the cursor moves", () => {
    const { db, journal, pruner } = setup();
    // The daemon stopped 60 days ago, having evaluated row 3; rows 4..6 were admitted but not evaluated.
    const written = append(db, journal, [
      ...times(2, NOW - 80 * DAY),
      NOW - 70 * DAY,
      NOW - 60 * DAY,
      NOW - 59 * DAY,
      NOW - 55 * DAY,
    ]);
    setCursor(db, written[2] as number);

    expect(pruner.pruneAll(NOW).deleted).toBe(2);
    expect(seqs(db)).toEqual(written.slice(2));

    // Evaluated up to row 6: rows 4 and 5, within the 7-day window lookback before it, stay for the
    // window rebuild at the next start, although they are older than the retention.
    setCursor(db, written[5] as number);
    expect(pruner.pruneAll(NOW).deleted).toBe(1);
    expect(seqs(db)).toEqual(written.slice(3));

    // Caught up with new rows: everything past the retention goes.
    const fresh = append(db, journal, [NOW - DAY, NOW]);
    setCursor(db, fresh[1] as number);
    expect(pruner.pruneAll(NOW).deleted).toBe(3);
    expect(seqs(db)).toEqual(fresh);
  });

  it("keeps the rows after the cursor without relying on at being in seq order", () => {
    const { db, journal, pruner } = setup();
    // The writer keeps at non-decreasing; this journal breaks that on purpose, so only the seq bound holds.
    const written = append(db, journal, [NOW - 90 * DAY, NOW - 80 * DAY, NOW - 100 * DAY, NOW - 100 * DAY]);
    setCursor(db, written[1] as number);

    expect(pruner.pruneAll(NOW).deleted).toBe(1);
    expect(seqs(db)).toEqual(written.slice(1));
  });

  it("deletes nothing before the evaluator has evaluated anything", () => {
    const { db, journal, pruner } = setup();
    append(db, journal, times(10, NOW - 100 * DAY));

    expect(pruner.pruneAll(NOW)).toEqual({ deleted: 0, batches: 1, pagesFreed: 0 });
    expect(count(db, "rule_journal")).toBe(10);
  });

  it("incremental vacuum returns the freed pages, a step at a time, and the file shrinks", () => {
    const { store, db, journal, pruner } = setup();
    const paths = Array.from({ length: 16 }, (_, i) => `src/module-${i}/component-${i}.ts`);
    const written = append(db, journal, [...times(5_000, NOW - 50 * DAY), NOW], paths);
    setCursor(db, written[5_000] as number);
    db.pragma("wal_checkpoint(TRUNCATE)");
    const sizeBefore = fs.statSync(store.path).size;
    const pagesBefore = pragma(db, "page_count");

    for (let b = pruner.pruneBatch(NOW); !b.done; b = pruner.pruneBatch(NOW));
    const free = pragma(db, "freelist_count");
    expect(free).toBeGreaterThan(pagesBefore / 2);

    expect(pruner.vacuumStep(100)).toBe(100);
    expect(pragma(db, "freelist_count")).toBe(free - 100);
    // Truncating the file can drop pointer-map pages too, which are not on the freelist.
    expect(pragma(db, "page_count")).toBeLessThanOrEqual(pagesBefore - 100);

    let freed = 100;
    for (let n = pruner.vacuumStep(); n > 0; n = pruner.vacuumStep()) freed += n;
    expect(freed).toBe(free);
    expect(pragma(db, "freelist_count")).toBe(0);
    expect(pragma(db, "page_count")).toBeLessThanOrEqual(pagesBefore - free);
    db.pragma("wal_checkpoint(TRUNCATE)");
    expect(fs.statSync(store.path).size).toBeLessThan(sizeBefore / 2);
    expect(pragma(db, "integrity_check")).toBe("ok");
  });

  it("handles an empty journal", () => {
    const { pruner } = setup();
    expect(pruner.oldestRetainedAt()).toBeUndefined();
    expect(pruner.pruneBatch(NOW)).toEqual({ deleted: 0, done: true });
    expect(pruner.vacuumStep()).toBe(0);
    expect(pruner.pruneAll(NOW)).toEqual({ deleted: 0, batches: 1, pagesFreed: 0 });
  });

  it("refuses a retention under 37d, a bad vacuum step and a cursor on a missing row", () => {
    const { store, db, pruner } = setup();
    expect(() => new JournalPruner(db, 36 * DAY)).toThrow(RetentionError);
    expect(() => new JournalPruner(db, 36 * DAY)).toThrow(/below the minimum/);
    expect(() => pruner.vacuumStep(0)).toThrow(/positive integer/);
    expect(() => pruner.vacuumStep(1.5)).toThrow(RetentionError);
    expect(() => pruner.pruneBatch(Number.NaN)).toThrow(RetentionError);
    setCursor(db, 42);
    expect(() => pruner.pruneBatch(NOW)).toThrow(
      `store ${store.path}: journal retention: the evaluator cursor`,
    );
  });
});
