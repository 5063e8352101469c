/**
 * The file-edge projector over generated edit and close sequences of hook-fed runs: collisions
 * start and end consistently with the edges held, every edge added is ended once its run closes, and a
 * projector rebuilt by replaying a prefix derives exactly what an uninterrupted one derives after it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { JournalRow } from "../../../src/core/journal.js";
import { fileNode, runNode } from "../../../src/core/targets.js";
import type { DerivedRow } from "../../../src/shell/derive/deriver.js";
import { FileEdgeProjector } from "../../../src/shell/graph/file-edges.js";
import { runs } from "../../property-runs.js";

const REPO = "forge.example/org/reduit";
const FILES = ["a.go", "b.go", "dir/c d.go", "e%.go"];
/** Run i belongs to harness i % 3: runs 0 and 3 are two sessions of one harness, which collide too. */
const RUNS = 6;
const harnessOf = (r: number) => `h${r % 3}`;
const runOf = (r: number) => `${harnessOf(r)}#s${r}`;

type Op =
  | { readonly op: "edit"; readonly run: number; readonly files: readonly number[] }
  | { readonly op: "close"; readonly run: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant("edit" as const),
      run: fc.nat(RUNS - 1),
      files: fc.uniqueArray(fc.nat(FILES.length - 1), { minLength: 1, maxLength: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("close" as const), run: fc.nat(RUNS - 1) }) },
);

function rowsOf(ops: readonly Op[]): JournalRow[] {
  return ops.map((o, i) => {
    const base = { harness: harnessOf(o.run), run: runOf(o.run), adapter: "claude-code", hook_fed: true };
    const event =
      o.op === "close"
        ? { type: "closed", ...base, outcome: "success" }
        : {
            type: "tool",
            ...base,
            action: "edit",
            tool: "Edit",
            repo: REPO,
            paths: o.files.map((f) => FILES[f] as string),
          };
    return { seq: i + 1, at: 1_000 * (i + 1), kind: "run_event", event };
  });
}

const derive = (p: FileEdgeProjector, rows: readonly JournalRow[]): DerivedRow[][] =>
  rows.map((r) => [...(p.derive(r)?.rows ?? [])]);

describe("the file-edge projector", () => {
  it("starts and ends collisions exactly when two runs hold, or stop holding, edited edges on a file, whatever their harnesses", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const rows = rowsOf(ops);
        const out = derive(new FileEdgeProjector(() => true), rows);
        // The model: which runs hold an open edge on each file, and which runs have closed.
        const holders = new Map<string, Set<number>>(FILES.map((f) => [f, new Set()]));
        const closed = new Set<number>();
        const open = new Set<string>();
        ops.forEach((o, i) => {
          const derived = out[i] as DerivedRow[];
          for (const d of derived) expect(d.source).toBe("graph");
          if (o.op === "close") {
            const ends = derived.filter((d) => d.event.type === "edge_ended").map((d) => d.event.path);
            const held = FILES.filter((f) => holders.get(f)?.has(o.run) === true);
            expect(new Set(ends)).toEqual(new Set(held));
            expect(ends).toHaveLength(held.length);
            for (const f of held) holders.get(f)?.delete(o.run);
            closed.add(o.run);
          } else if (!closed.has(o.run)) {
            const added = derived.filter((d) => d.event.type === "edge_added");
            const fresh = o.files
              .map((f) => FILES[f] as string)
              .filter((f) => holders.get(f)?.has(o.run) !== true);
            expect(added.map((d) => d.event.path)).toEqual(fresh);
            for (const d of added) {
              expect(d.event.from).toBe(runNode(runOf(o.run)));
              expect(d.event.to).toBe(fileNode(REPO, d.event.path as string));
            }
            for (const f of fresh) holders.get(f)?.add(o.run);
          } else expect(derived, "a closed run's late edit derives nothing").toEqual([]);
          for (const d of derived) {
            const f = d.event.path as string;
            if (d.event.type === "collision_started") {
              expect(open.has(f), `${f} started twice`).toBe(false);
              open.add(f);
              expect(d.event.run).toBe(runOf(o.run));
            } else if (d.event.type === "collision_ended") {
              expect(open.has(f), `${f} ended before it started`).toBe(true);
              open.delete(f);
            }
            if (d.event.type.startsWith("collision_")) {
              const hs = [...(holders.get(f) as Set<number>)];
              expect(d.event.runs).toEqual(hs.map(runOf).sort());
              expect(d.event.harnesses).toEqual([...new Set(hs.map(harnessOf))].sort());
              expect(d.event.scope).toBe("file");
            }
          }
          // After every row: a collision is open on a file exactly when two or more runs hold it.
          for (const f of FILES)
            expect(open.has(f), `${f} after row ${i + 1}`).toBe((holders.get(f) as Set<number>).size >= 2);
        });
      }),
      { numRuns: runs(200) },
    );
  });

  it("rebuilt by replaying a prefix, derives exactly what an uninterrupted projector derives after it", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), fc.nat(40), (ops, cut) => {
        const rows = rowsOf(ops);
        const k = Math.min(cut, rows.length);
        const whole = derive(new FileEdgeProjector(() => true), rows);
        const rebuilt = new FileEdgeProjector(() => true);
        // State from another history first: reset must forget it.
        for (const r of rowsOf([
          { op: "edit", run: 0, files: [0] },
          { op: "edit", run: 1, files: [0] },
        ]))
          rebuilt.derive(r);
        rebuilt.reset();
        for (const r of rows.slice(0, k)) rebuilt.derive(r);
        expect(derive(rebuilt, rows.slice(k))).toEqual(whole.slice(k));
      }),
      { numRuns: runs(200) },
    );
  });
});
