/**
 * What a hook-fed run is told of the rules (`agents/enforcement/tell.ts`), over a real store and
 * generated histories of rows, fires and hook answers, with restarts between them: a fire is told to a
 * run at most once; only an active fire at a told level whose target is the run, or its harness while
 * the run was there, is ever told; and answering until nothing is left tells every such fire. The text
 * itself: whatever another agent chose for a path, branch, run or message, it stays inside its fence.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Fire } from "../../../../src/core/outcome.js";
import type { Level } from "../../../../src/core/rule-file.js";
import { StoreRunTelling } from "../../../../src/shell/agents/enforcement/tell.js";
import {
  safeJson,
  TOLD_PREAMBLE,
  toldFire,
  toldText,
} from "../../../../src/shell/agents/enforcement/told-text.js";
import { AgentRunReads } from "../../../../src/shell/store/agent-run-reads.js";
import { AgentTold } from "../../../../src/shell/store/agent-told.js";
import { promised } from "../../../../src/shell/store/async-port.js";
import { DecisionStore } from "../../../../src/shell/store/decision-store.js";
import { JournalTable } from "../../../../src/shell/store/journal-table.js";
import type { Db } from "../../../../src/shell/store/open-store.js";
import { runs } from "../../../property-runs.js";
import { tempStores } from "../../store/temp-stores.js";

const stores = tempStores("harness-tell-");
const HARNESSES = ["impl", "review"];
/** Run i is `h#s<i>` of harness i % 2: two runs of each harness. */
const RUNS = 4;
const harnessOf = (r: number) => HARNESSES[r % 2] as string;
const runOf = (r: number) => `${harnessOf(r)}#s${r}`;
const TOLD: readonly Level[] = ["annotate", "notify"];

type Op =
  | {
      readonly op: "row";
      readonly run: number;
      /** A fire on the row, its target the row's run or harness. */
      readonly fire?: { readonly target: "run" | "harness"; readonly shadow: boolean; readonly level: Level };
    }
  | { readonly op: "answer"; readonly run: number }
  | { readonly op: "restart" };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record(
      {
        op: fc.constant("row" as const),
        run: fc.nat(RUNS - 1),
        fire: fc.record({
          target: fc.constantFrom("run" as const, "harness" as const),
          shadow: fc.boolean(),
          level: fc.constantFrom<Level>("annotate", "notify", "hold", "stop"),
        }),
      },
      { requiredKeys: ["op", "run"] },
    ),
  },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("answer" as const), run: fc.nat(RUNS - 1) }) },
  { weight: 1, arbitrary: fc.constant({ op: "restart" as const }) },
);

interface Model {
  readonly fireId: string;
  readonly seq: number;
  readonly eligible: (run: number, firstSeq: number | undefined) => boolean;
}

/** As the daemon counts them: each commit that stored fires; telling skips the store while it stands. */
let fireCommits = 0;

const telling = (db: Db) =>
  new StoreRunTelling({
    told: promised(new AgentTold(db)),
    reads: promised(new AgentRunReads(db)),
    levels: () => TOLD,
    clock: () => 1,
    firesCommitted: () => fireCommits,
  });

/** The fire ids a told text holds. */
const firesIn = (text: string | undefined): string[] =>
  text === undefined
    ? []
    : (JSON.parse(text.slice(TOLD_PREAMBLE.length)).harness_memory_data.data.fires as { fire: string }[]).map(
        (f) => f.fire,
      );

describe("telling a run of the rules", () => {
  it("tells each eligible fire to a run exactly once, across restarts, and nothing else", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
        const db = stores.open(stores.storeFile()).db;
        const journal = new JournalTable(db);
        const decisions = new DecisionStore(db);
        let tell = telling(db);
        const firstSeq = new Map<number, number>();
        const model: Model[] = [];
        const told = new Map<number, string[]>(Array.from({ length: RUNS }, (_, r) => [r, []]));
        for (const [i, o] of ops.entries()) {
          if (o.op === "restart") tell = telling(db);
          else if (o.op === "answer") {
            const ids = firesIn(await tell.tell(harnessOf(o.run), runOf(o.run), 4_000));
            (told.get(o.run) as string[]).push(...ids);
          } else {
            const event = { type: "tool", harness: harnessOf(o.run), run: runOf(o.run), tool: "Edit" };
            const seq = journal.append({ kind: "run_event", source: "observer", at: i, event });
            if (!firstSeq.has(o.run)) firstSeq.set(o.run, seq);
            if (o.fire === undefined) continue;
            const { target, shadow, level } = o.fire;
            const fire: Fire = {
              id: `f${i}`,
              rule: "r",
              hash: "h",
              seq,
              at: i,
              kind: "run_event",
              type: "tool",
              target: {
                kind: target,
                key: target === "run" ? runOf(o.run) : harnessOf(o.run),
                harness: harnessOf(o.run),
                run: runOf(o.run),
              },
              declaredLevel: level,
              effectiveLevel: level,
              mode: shadow ? "shadow" : "active",
              action: shadow ? "none" : level,
              actions: [],
              message: `${runOf(o.run)} did it`,
              primitives: [],
            };
            decisions.commit({ cursor: seq, ops: [], fires: [fire], suppressed: new Map() });
            fireCommits++;
            const firer = o.run;
            model.push({
              fireId: fire.id,
              seq,
              eligible: (run, first) =>
                !shadow &&
                TOLD.includes(level) &&
                (target === "run"
                  ? run === firer
                  : harnessOf(run) === harnessOf(firer) && first !== undefined && first <= seq),
            });
          }
        }
        // Drain: answer every run until it is told nothing more.
        for (let r = 0; r < RUNS; r++)
          for (;;) {
            const ids = firesIn(await tell.tell(harnessOf(r), runOf(r), 4_000));
            if (ids.length === 0) break;
            (told.get(r) as string[]).push(...ids);
          }
        for (let r = 0; r < RUNS; r++) {
          const ids = told.get(r) as string[];
          expect(new Set(ids).size, `run ${r} told a fire twice`).toBe(ids.length);
          const wanted = model.filter((m) => m.eligible(r, firstSeq.get(r))).map((m) => m.fireId);
          expect([...ids].sort(), `run ${r}`).toEqual([...wanted].sort());
        }
      }),
      { numRuns: runs(60) },
    );
  });

  it("fences whatever text another agent chose: it never escapes, and reads back as it was", () => {
    const text = fc.string({ unit: "binary", maxLength: 300 });
    fc.assert(
      fc.property(
        fc.record({
          path: text,
          branch: text,
          other: text,
          message: text,
          max: fc.integer({ min: 1_000, max: 4_000 }),
        }),
        ({ path, branch, other, message, max }) => {
          const run = "impl#s1";
          const event = JSON.stringify({ runs: [run, other], path, branch, repo: "r" });
          const fire = toldFire(run, {
            fireId: "f1",
            seq: 1,
            rule: "same-file-collision",
            level: "annotate",
            message,
            row: { kind: "graph_event", type: "collision_started", event },
          });
          const told = toldText(run, [fire], max);
          expect(told).toBeDefined();
          const out = told?.text as string;
          expect(out.length).toBeLessThanOrEqual(max);
          expect(out.startsWith(TOLD_PREAMBLE)).toBe(true);
          const fenced = out.slice(TOLD_PREAMBLE.length);
          // One line of JSON, with nothing raw a terminal or a markup reader would act on.
          expect(fenced).not.toMatch(/[<>&\p{Cc}\p{Cf}\u2028\u2029]/u);
          const data = JSON.parse(fenced).harness_memory_data;
          expect(data.trust).toBe("untrusted");
          // The fence holds exactly one fire, whose fields are prefixes of what was given.
          const [f, ...rest] = data.data.fires;
          expect(rest).toEqual([]);
          const prefixOf = (got: string, given: string) =>
            expect(given.startsWith(got.endsWith("…") && got !== given ? got.slice(0, -1) : got)).toBe(true);
          prefixOf(f.message, message);
          if (path !== "") prefixOf(f.path, path);
          if (branch !== "") prefixOf(f.branch, branch);
          // Within bounds, a fire is told whole.
          if (safeJson(fire).length < max / 2) expect(f).toEqual(JSON.parse(safeJson(fire)));
        },
      ),
      { numRuns: runs(300) },
    );
  });
});
