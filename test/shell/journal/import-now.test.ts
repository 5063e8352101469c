/**
 * The writer's import path (`harness journal import`): a row keeps the admission time it carries, one
 * whose time is earlier than the row before it is refused while the others commit, and a row carrying
 * none is stamped by the writer's clock, never earlier than the row before it.
 */
import { describe, expect, it } from "vitest";
import type { ImportedOffer } from "../../../src/shell/journal/journal-writer.js";
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import { tempStores } from "../store/temp-stores.js";
import { testWriter } from "./test-writer.js";

const { storeFile, open } = tempStores("harness-import-now-");

const row = (session: string, admittedAt?: number): ImportedOffer => ({
  source: "observer",
  kind: "run_event",
  event: { type: "mark", mark: "user-message", session },
  ...(admittedAt === undefined ? {} : { admittedAt }),
});

describe("rows imported through the journal writer", () => {
  it("keep their carried times, a decreasing one refused, the others stamped by the clock but never backwards", async () => {
    const db = open(storeFile()).db;
    const journal = new JournalTable(db);
    let clock = 500;
    const writer = testWriter(db, journal, { clock: () => clock });
    const results = await writer.importNow([row("a", 1_000), row("b", 900), row("c"), row("d", 2_000)]);
    expect(results.map((r) => r.kind)).toEqual(["committed", "refused", "committed", "committed"]);
    clock = 3_000;
    expect((await writer.importNow([row("e"), row("f", 2_500)])).map((r) => r.kind)).toEqual([
      "committed",
      "refused",
    ]);
    expect(journal.rowsAfter(0, 10).map((r) => [r.event.session, r.at])).toEqual([
      ["a", 1_000],
      ["c", 1_000],
      ["d", 2_000],
      ["e", 3_000],
    ]);
  });

  it("start from the last row already in the journal: a carried time before it is refused", async () => {
    const file = storeFile();
    const first = open(file);
    await testWriter(first.db, new JournalTable(first.db), { clock: () => 0 }).importNow([row("a", 5_000)]);
    first.close();
    const db = open(file).db;
    const writer = testWriter(db, new JournalTable(db), { clock: () => 0 });
    expect(await writer.importNow([row("b", 4_999), row("c")])).toEqual([
      { kind: "refused" },
      { kind: "committed", seq: 2 },
    ]);
    expect(new JournalTable(db).atOf(2)).toBe(5_000);
  });
});
