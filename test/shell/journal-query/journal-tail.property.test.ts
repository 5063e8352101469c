/**
 * The journal's tail (`harness journal tail`, QueryJournal with `newest`): over generated journals in a
 * real store, the last `limit` rows matching a filter are the end of what the forward query returns for
 * that filter, in seq order; and a follower that pages forward from the tail's last seq, the journal
 * growing between its reads, sees every later matching row exactly once, in order.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { tailLine } from "../../../src/shell/cli/commands/journal-tail.js";
import { JournalQueries, type Term } from "../../../src/shell/journal-query/journal-queries.js";
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import { openStore } from "../../../src/shell/store/open-store.js";
import { Stores } from "../../../src/shell/store/stores.js";
import { runs } from "../../property-runs.js";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "harness-journal-tail-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
let stores = 0;

const row = fc.record({
  type: fc.constantFrom("opened", "tool", "closed"),
  harness: fc.constantFrom("impl", "triage"),
});

describe("journal tail", () => {
  it(
    "the newest rows are the end of the forward query, and following from them misses and repeats nothing",
    () => {
      fc.assert(
        fc.property(
          fc.array(row, { maxLength: 30 }),
          fc.array(row, { maxLength: 30 }),
          fc.integer({ min: 1, max: 12 }),
          fc.option(fc.constantFrom("impl", "triage"), { nil: undefined }),
          (before, after, limit, harness) => {
            const store = openStore(path.join(root, `s${stores++}.db`), "test");
            try {
              const journal = new JournalTable(store.db);
              const stores_ = new Stores(store);
              const queries = new JournalQueries(stores_.journalQueries, stores_.journal);
              let at = Date.UTC(2026, 11, 1);
              const write = (rows: { type: string; harness: string }[]) =>
                store.db.transaction(() => {
                  for (const r of rows) {
                    at += 1_000;
                    journal.append({ kind: "run_event", source: "observer", at, event: { ...r, at } });
                  }
                })();
              const fields: Term[] = harness === undefined ? [] : [["harness", harness]];
              const all = () => queries.query({ fields, limit: 1_000 }).rows.map((r) => r.seq);
              write(before);
              const tail = queries.query({ fields, limit, newest: true });
              expect(tail.rows.map((r) => r.seq)).toEqual(all().slice(-limit));
              expect(tail.truncated).toBe(all().length > limit);
              // Follow in pages of `limit`, with the later rows written in two parts between reads.
              const seen = tail.rows.map((r) => r.seq);
              let next = tail.nextAfterSeq;
              const follow = () => {
                for (;;) {
                  const page = queries.query({ fields, afterSeq: next, limit });
                  seen.push(...page.rows.map((r) => r.seq));
                  next = page.nextAfterSeq;
                  if (!page.truncated) return;
                }
              };
              write(after.slice(0, after.length >> 1));
              follow();
              write(after.slice(after.length >> 1));
              follow();
              expect(seen).toEqual(all().slice(-seen.length));
              expect(seen.length).toBe(
                Math.min(limit, before.filter((r) => harness === undefined || r.harness === harness).length) +
                  after.filter((r) => harness === undefined || r.harness === harness).length,
              );
            } finally {
              store.close();
            }
          },
        ),
        { numRuns: runs(25) },
      );
    },
    60_000 * (runs(25) / 60),
  );

  it("a line escapes every producer-supplied field for the terminal", () => {
    const text = (field: string, value: string) => ({ field, value: { case: "text" as const, value } });
    const line = tailLine({
      seq: 7n,
      atMs: BigInt(Date.UTC(2026, 11, 4, 12)),
      kind: "run_event",
      type: "tool",
      source: "observer",
      fields: [
        text("harness", "impl\u001b]0;pwned\u0007"),
        text("run", "impl#s\u202e1"),
        text("tool", "Bash\r"),
        { field: "is_error", value: { case: "flag" as const, value: true } },
      ],
      paths: ["a\u0000.ts", "b.ts", "c.ts", "d.ts"],
    } as unknown as Parameters<typeof tailLine>[0]);
    expect(line).toBe(
      "7  2026-12-04T12:00:00Z  run_event/tool  impl\\u{1b}]0;pwned\\u{7}  impl#s\\u{202e}1  tool=Bash\\u{d} is_error a\\u{0}.ts b.ts c.ts (+1 paths)",
    );
  });
});
