/**
 * The journal's reads agree on both backends: the same batches appended to SQLite's JournalTable (with
 * the `at` PostgreSQL gave each batch) and to PgJournal read back the same through every read the two
 * share, page boundaries included.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventFields, JournalRow } from "../../../../src/core/journal.js";
import type { EventKind } from "../../../../src/core/kinds.js";
import { type Decodable, JournalTable } from "../../../../src/shell/store/journal-table.js";
import type { OpenedPgStore } from "../../../../src/shell/store/pg/open-pg-store.js";
import { PgJournal, type PgNewRow } from "../../../../src/shell/store/pg/pg-journal.js";
import { tempStores } from "../temp-stores.js";
import { openFreshPgStore } from "./pg-store.js";

/** Row `i` of the fixture: tool rows (some errors, some with paths), graph and fact rows, ticks. */
function fixtureRow(i: number): PgNewRow {
  const event = (kind: EventKind, fields: EventFields): PgNewRow => ({
    kind,
    source:
      kind === "tick"
        ? "tick"
        : kind === "graph_event"
          ? "graph"
          : kind === "fact_event"
            ? "facts"
            : "observer",
    event: fields,
  });
  switch (i % 4) {
    case 0:
      return event("run_event", {
        type: "tool",
        harness: `h${i % 3}`,
        run: `r${i % 5}`,
        tool: i % 2 === 0 ? "Bash" : "Edit",
        is_error: i % 3 === 0,
        ...(i % 8 === 0 ? { paths: [`src/${i}.ts`, `test/${i}.ts`] } : {}),
      });
    case 1:
      return event("graph_event", {
        type: "edge",
        edge: "imports",
        from: `a${i}`,
        to: `b${i}`,
        path: `src/${i}.ts`,
      });
    case 2:
      return event("fact_event", { type: "fact", predicate: "owner", subject: `s${i}`, value: i });
    default:
      return event("tick", { type: "tick" });
  }
}

const collect = async <T>(rows: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const r of rows) out.push(r);
  return out;
};

describe("the journal's reads on SQLite and PostgreSQL", () => {
  const stores = tempStores("harness-journal-contract-");
  let pgStore: OpenedPgStore;
  let pg: PgJournal;
  let sqlite: JournalTable;
  const ats: number[] = [];

  beforeAll(async () => {
    pgStore = await openFreshPgStore("journal_contract");
    pg = new PgJournal(pgStore.pool);
  });
  afterAll(async () => {
    await pgStore?.close();
  });

  it("gives the same rows through every read the two share", async () => {
    const sqliteStore = stores.open(stores.storeFile());
    sqlite = new JournalTable(sqliteStore.db);
    let i = 0;
    for (const size of [1, 3, 7, 2, 11, 5, 1, 9, 4, 6]) {
      const rows = Array.from({ length: size }, () => fixtureRow(i++));
      const { at } = await pg.commit([{ rows }]);
      ats.push(at);
      sqliteStore.db.transaction(() => {
        for (const row of rows) sqlite.append({ ...row, at });
      })();
    }
    expect(await pg.rowsAfter(0, 1_000)).toEqual(sqlite.rowsAfter(0, 1_000));
    expect(await pg.rowsAfter(13, 7)).toEqual(sqlite.rowsAfter(13, 7));
    expect(await collect(pg.rowsInRange(5, 40, 7))).toEqual([...sqlite.rowsInRange(5, 40, 7)]);
    const mid = ats[3] as number;
    expect(await collect(pg.rowsBetween(mid, 3, 45, 4))).toEqual(
      [...sqlite.pagesBetween(mid, 3, 45, 4)].flat(),
    );
    expect(await pg.last()).toEqual(sqlite.last());
    for (const at of [0, mid, ats.at(-1) as number])
      expect(await pg.firstAdmittedAfter(at)).toEqual(sqlite.firstAdmittedAfter(at));
    for (const seq of [1, 20, 49, 50]) expect(await pg.atOf(seq)).toEqual(sqlite.atOf(seq));

    const decodable: Decodable = new Map<EventKind, ReadonlySet<string> | "any">([
      ["run_event", new Set(["tool"])],
      ["graph_event", "any"],
    ]);
    const readsEvent = (kind: EventKind, _type: string, values: readonly (string | boolean | undefined)[]) =>
      values[1] === true || kind === "graph_event";
    const typed = async (columns: Parameters<JournalTable["rowsInRangeTyped"]>[3], d?: Decodable) => {
      const fromPg: JournalRow[] = await collect(pg.rowsInRangeTyped(2, 47, readsEvent, columns, d, 6));
      expect(fromPg).toEqual([...sqlite.rowsInRangeTyped(2, 47, readsEvent, columns, d, 6)]);
      return fromPg;
    };
    const decoded = await typed(["harness", "is_error", "tool"], decodable);
    // Some rows decoded, some not: the comparison covers both shapes.
    expect(decoded.some((r) => "from" in r.event)).toBe(true);
    expect(decoded.some((r) => r.kind === "fact_event" && !("value" in r.event))).toBe(true);
    await typed(["harness", "is_error", "tool"]);
    await typed([], new Map());
  });
});
