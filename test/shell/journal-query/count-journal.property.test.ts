/**
 * count_journal agrees with a rule's primitive on the same rows (SPEC-0029 REQ-15, REQ-5): over
 * generated journals in a real store, the answer `JournalQueries.count` gives for a selector and
 * window is the number a rule's `count`, `distinct` or `exists` sees when the rule is evaluated on the
 * last committed row through the window index the live evaluator reads.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { COST_LIMIT } from "../../../src/core/compile-rule.js";
import { WINDOW } from "../../../src/core/environments.js";
import type { JournalRow } from "../../../src/core/journal.js";
import { loadRuleFile } from "../../../src/core/load-rule.js";
import { indexedWindows, selectorShapes } from "../../../src/core/window-index.js";
import { JournalQueries, type Term } from "../../../src/shell/journal-query/journal-queries.js";
import { JournalTable } from "../../../src/shell/store/journal-table.js";
import { type OpenedStore, openStore } from "../../../src/shell/store/open-store.js";
import { Stores } from "../../../src/shell/store/stores.js";
import { runs } from "../../property-runs.js";

const queriesOn = (store: OpenedStore): JournalQueries => {
  const stores = new Stores(store);
  return new JournalQueries(stores.journalQueries, stores.journal);
};

const root = fs.mkdtempSync(path.join(os.tmpdir(), "harness-count-journal-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
let stores = 0;

const START = Date.UTC(2026, 10, 1);
const row = fc.record({
  gapMs: fc.integer({ min: 0, max: 20 * 60_000 }),
  type: fc.constantFrom("closed", "tool"),
  harness: fc.constantFrom("nightly", "triage", ""),
  outcome: fc.constantFrom("failed", "ok", ""),
  is_error: fc.boolean(),
  paths: fc.subarray(["a.go", "b.go", "c.go"]),
});
const selector = fc
  .record(
    {
      type: fc.constantFrom("closed", "tool"),
      harness: fc.constantFrom("nightly", "triage", ""),
      outcome: fc.constantFrom("failed", "ok", ""),
      is_error: fc.boolean(),
      path: fc.constantFrom("a.go", "b.go"),
    },
    { requiredKeys: [] },
  )
  .map((s) => Object.entries(s) as Term[]);
const call = fc.record({
  fn: fc.constantFrom("count", "distinct", "exists"),
  field: fc.constantFrom("harness", "outcome", "path", "type"),
  selector,
  within: fc.constantFrom("1m", "10m", "1h", "3h", "24h"),
});

/** The rule text whose primitive is the same call, and what it says when its answer is `expected`. */
function ruleFor(c: { fn: string; field: string; selector: Term[]; within: string }, answer: string): string {
  const sel = `{${c.selector.map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(", ")}}`;
  const w = `duration(${JSON.stringify(c.within)})`;
  const primitive =
    c.fn === "distinct" ? `distinct(${JSON.stringify(c.field)}, ${sel}, ${w})` : `${c.fn}(${sel}, ${w})`;
  return [
    'name = "probe"',
    'description = "the primitive under test"',
    'on = "run_event"',
    `when = ${JSON.stringify(`${primitive} == ${answer}`)}`,
    'level = "notify"',
    'target = "fleet"',
    'message = "probe"',
    "",
  ].join("\n");
}

describe("count_journal", () => {
  it(
    "agrees with a rule's primitive on the same rows, evaluated on the last committed row",
    () => {
      fc.assert(
        fc.property(fc.array(row, { minLength: 1, maxLength: 40 }), call, (rows, c) => {
          const store = openStore(path.join(root, `s${stores++}.db`), "test");
          try {
            const journal = new JournalTable(store.db);
            let at = START;
            const written: JournalRow[] = [];
            store.db.transaction(() => {
              for (const r of rows) {
                at += r.gapMs;
                const event = {
                  type: r.type,
                  at,
                  ...(r.harness === "" ? {} : { harness: r.harness }),
                  ...(r.outcome === "" ? {} : { outcome: r.outcome }),
                  is_error: r.is_error,
                  paths: r.paths,
                };
                const seq = journal.append({ kind: "run_event", source: "observer", at, event });
                written.push({ seq, at, kind: "run_event", event });
              }
            })();
            const answer = queriesOn(store).count(c);
            const last = written.at(-1) as JournalRow;
            expect(answer.lastSeq).toBe(last.seq);
            expect(answer.nowMs).toBe(last.at);
            const said = c.fn === "exists" ? String(answer.truth) : String(answer.number);
            const load = loadRuleFile("rules/probe.toml", ruleFor(c, said));
            if (!load.ok) throw new Error(load.problem.message);
            const window = indexedWindows(written, selectorShapes([load.rule]))(last);
            const r = load.rule.program.evaluate(
              { event: last.event, now: last.at, [WINDOW]: window },
              COST_LIMIT,
            );
            expect(r).toMatchObject({ kind: "value", value: true });
          } finally {
            store.close();
          }
        }),
        { numRuns: runs(80) },
      );
      // Each case opens a real store: the soak's many cases need time in proportion.
    },
    60_000 * (runs(80) / 80),
  );

  it("refuses a selector or window a rule could not write, with the compiler's reason", () => {
    const store = openStore(path.join(root, `s${stores++}.db`), "test");
    try {
      const q = queriesOn(store);
      expect(() => q.count({ selector: [["type", "closed"]], within: "8d" })).toThrow(
        /CEL durations have no "d" unit, so write duration\("192h"\)/,
      );
      expect(() => q.count({ selector: [["type", "closed"]], within: "200h" })).toThrow(/from 1m to 7d/);
      expect(() => q.count({ selector: [["summary", "x"]], within: "1h" })).toThrow(/not an indexed field/);
      expect(() => q.count({ selector: [["is_error", "yes"]], within: "1h" })).toThrow(/true or false/);
      expect(() => q.count({ fn: "distinct", field: "note", selector: [], within: "1h" })).toThrow(
        /indexed field/,
      );
    } finally {
      store.close();
    }
  });
});
