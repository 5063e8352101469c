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
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import { openStore } from "../../../src/shell/store/open-store.js";
import { SqliteStoreDoor } from "../../../src/shell/store/sqlite-store-door.js";
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
  it("commits nothing for rows that derive nothing, and a crash before their cursor is stored repeats no derived row", async () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), "harness-derive-"));
    dirs.push(d);
    const file = path.join(d, "harness.db");
    const open = async () => {
      const opened = openStore(file, "test");
      const journal = new JournalTable(opened.db);
      const writer = testWriter(opened.db, journal, {
        clock: () => Date.parse("2026-11-01T00:00:00Z"),
      });
      const door = new SqliteStoreDoor(opened);
      const cursors = door.stores.cursors;
      const derivation = new Derivation({
        journal: door.journal,
        cursors: door.cursors,
        append: (rows, writes, options) => writer.appendNow(rows, writes ?? [], options),
        derivers: [everyThirdEdit()],
      });
      await derivation.start();
      const edit = async () => {
        writer.offer({
          source: "observer",
          kind: "run_event",
          event: { type: "tool", harness: "impl", run: "impl#1", action: "edit" },
        });
        await writer.flush();
      };
      const marks = () => journalRows(opened, { type: "mark" }).map((r) => r.seq);
      return {
        opened,
        derivation,
        cursors,
        edit,
        marks,
        close: async () => {
          await writer.close();
          opened.close();
        },
      };
    };

    let s = await open();
    const stored = () => s.cursors.get("every-third-edit");
    expect(stored()).toBe(0);
    await s.edit();
    await s.edit();
    expect(await s.derivation.step()).toBe(2);
    expect([s.derivation.cursorsUnsaved, stored()]).toEqual([true, 0]);
    // A crash: the two edits are read again and counted once each.
    await s.close();
    s = await open();
    expect(await s.derivation.step()).toBe(2);
    await s.edit();
    expect(await s.derivation.step()).toBe(1);
    // The third edit derived a mark (seq 4), which committed with the cursor after the third edit.
    expect([s.marks(), s.derivation.cursorsUnsaved, stored()]).toEqual([[4], false, 3]);
    expect(await s.derivation.step()).toBe(1);
    expect([s.derivation.cursorsUnsaved, stored()]).toEqual([true, 3]);
    await s.derivation.saveCursors();
    expect([s.derivation.cursorsUnsaved, stored()]).toEqual([false, 4]);
    await s.edit();
    await s.edit();
    await s.derivation.step();
    await s.close();
    s = await open();
    await s.edit();
    while ((await s.derivation.step()) > 0);
    expect(s.marks()).toEqual([4, 8]);
    await s.close();
  });
});

describe("Derivation: after the commit", () => {
  it("a deriver is told its rows' seqs once they committed, never for a commit that failed nor for a replay", async () => {
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
    const door = new SqliteStoreDoor(opened);
    const derivation = new Derivation({
      journal: door.journal,
      cursors: door.cursors,
      append: (rows, writes) => {
        if (failNext) {
          failNext = false;
          throw new Error("disk full");
        }
        return writer.appendNow(rows, writes ?? []);
      },
      derivers: [telling],
    });
    await derivation.start();
    const edits = async (n: number) => {
      for (let i = 0; i < n; i++)
        writer.offer({
          source: "observer",
          kind: "run_event",
          event: { type: "tool", harness: "impl", run: "impl#1", action: "edit" },
        });
      await writer.flush();
    };
    await edits(3);
    failNext = true;
    await expect(derivation.step()).rejects.toThrow(/the commit failed: disk full/);
    expect(told).toEqual([]);
    // The retry rebuilds the state by replaying the journal, and derives the mark again: told once.
    while ((await derivation.step()) > 0);
    expect(told).toEqual([[4]]);
    expect(journalRows(opened, { type: "mark" }).map((r) => r.seq)).toEqual([4]);
    await writer.close();
    opened.close();
  });
});
