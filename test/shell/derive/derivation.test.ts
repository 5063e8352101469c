/**
 * The derivation loop over a real store: rows that derive nothing commit nothing, their cursors go with
 * the next derivation or `saveCursors`, and a crash before then derives from them again, to the same
 * nothing, so no derived row is lost or repeated.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { JournalRow } from "../../../src/core/journal.js";
import { Derivation } from "../../../src/shell/derive/derivation.js";
import type { Deriver } from "../../../src/shell/derive/deriver.js";
import { DerivedCursors } from "../../../src/shell/store/derived-cursors.js";
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import { openStore } from "../../../src/shell/store/open-store.js";
import { journalRows } from "../../support/store-reads.js";
import { testWriter } from "../journal/test-writer.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** Derives a `turn-end` mark from every third `edit` tool row of a run: its state is a count per run. */
function everyThirdEdit(): Deriver {
  let edits = new Map<string, number>();
  return {
    name: "every-third-edit",
    kinds: ["run_event"],
    reset: () => {
      edits = new Map();
    },
    derive: (row: JournalRow) => {
      const e = row.event as { type?: string; action?: string; run?: string; harness?: string };
      if (e.type !== "tool" || e.action !== "edit") return undefined;
      const n = (edits.get(e.run as string) ?? 0) + 1;
      edits.set(e.run as string, n);
      if (n % 3 !== 0) return undefined;
      return {
        rows: [
          {
            source: "observer",
            kind: "run_event",
            event: { type: "mark", mark: "turn-end", harness: e.harness as string, run: e.run as string },
          },
        ],
      };
    },
    enabled: () => true,
  };
}

describe("Derivation", () => {
  it("commits nothing for rows that derive nothing, and a crash before their cursor is stored repeats no derived row", () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), "harness-derive-"));
    dirs.push(d);
    const file = path.join(d, "harness.db");
    const open = () => {
      const opened = openStore(file, "test");
      const journal = new JournalTable(opened.db);
      const writer = testWriter(opened.db, journal, {
        clock: () => Date.parse("2026-11-01T00:00:00Z"),
      });
      const cursors = new DerivedCursors(opened.db);
      const derivation = new Derivation({
        journal,
        cursors,
        append: (rows, also) => writer.appendNow(rows, (seqs) => also?.(seqs)),
        derivers: [everyThirdEdit()],
      });
      derivation.start();
      const edit = () => {
        writer.offer({
          source: "observer",
          kind: "run_event",
          event: { type: "tool", harness: "impl", run: "impl#1", action: "edit" },
        });
        writer.flush();
      };
      const marks = () => journalRows(opened, { type: "mark" }).map((r) => r.seq);
      return {
        opened,
        derivation,
        cursors,
        edit,
        marks,
        close: () => {
          writer.close();
          opened.close();
        },
      };
    };

    let s = open();
    const stored = () => s.cursors.get("every-third-edit");
    expect(stored()).toBe(0);
    s.edit();
    s.edit();
    expect(s.derivation.step()).toBe(2);
    expect([s.derivation.cursorsUnsaved, stored()]).toEqual([true, 0]);
    // A crash: the two edits are read again and counted once each.
    s.close();
    s = open();
    expect(s.derivation.step()).toBe(2);
    s.edit();
    expect(s.derivation.step()).toBe(1);
    // The third edit derived a mark (seq 4), which committed with the cursor after the third edit.
    expect([s.marks(), s.derivation.cursorsUnsaved, stored()]).toEqual([[4], false, 3]);
    expect(s.derivation.step()).toBe(1);
    expect([s.derivation.cursorsUnsaved, stored()]).toEqual([true, 3]);
    s.derivation.saveCursors();
    expect([s.derivation.cursorsUnsaved, stored()]).toEqual([false, 4]);
    s.edit();
    s.edit();
    s.derivation.step();
    s.close();
    s = open();
    s.edit();
    while (s.derivation.step() > 0);
    expect(s.marks()).toEqual([4, 8]);
    s.close();
  });
});

describe("Derivation: after the commit", () => {
  it("a deriver is told its rows' seqs once they committed, never for a commit that failed nor for a replay", () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), "harness-derive-"));
    dirs.push(d);
    const opened = openStore(path.join(d, "harness.db"), "test");
    const journal = new JournalTable(opened.db);
    const writer = testWriter(opened.db, journal, { clock: () => Date.parse("2026-11-01T00:00:00Z") });
    const told: number[][] = [];
    const inner = everyThirdEdit();
    const telling: Deriver = {
      ...inner,
      derive: (row, replay) => {
        const derived = inner.derive(row, replay);
        return derived === undefined ? undefined : { ...derived, committed: (seqs) => told.push([...seqs]) };
      },
    };
    let failNext = false;
    const derivation = new Derivation({
      journal,
      cursors: new DerivedCursors(opened.db),
      append: (rows, also) => {
        if (failNext) {
          failNext = false;
          throw new Error("disk full");
        }
        return writer.appendNow(rows, (seqs) => also?.(seqs));
      },
      derivers: [telling],
    });
    derivation.start();
    const edits = (n: number) => {
      for (let i = 0; i < n; i++)
        writer.offer({
          source: "observer",
          kind: "run_event",
          event: { type: "tool", harness: "impl", run: "impl#1", action: "edit" },
        });
      writer.flush();
    };
    edits(3);
    failNext = true;
    expect(() => derivation.step()).toThrow(/the commit failed: disk full/);
    expect(told).toEqual([]);
    // The retry rebuilds the state by replaying the journal, and derives the mark again: told once.
    while (derivation.step() > 0);
    expect(told).toEqual([[4]]);
    expect(journalRows(opened, { type: "mark" }).map((r) => r.seq)).toEqual([4]);
    writer.close();
    opened.close();
  });
});
